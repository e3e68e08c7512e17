// Integer division truncates toward zero; x / -1 wraps; x / 0 is 0 in
// compiled code (the evaluator reports it: the check skips those).
func.func @int_div(%a: tensor<64xi32> {genesis.name = "a", genesis.role = "input"}, %b: tensor<64xi32> {genesis.name = "b", genesis.role = "input"}) -> (tensor<64xi32> {genesis.name = "q"}) {
  %q = genesis.div %a, %b : tensor<64xi32>
  return %q : tensor<64xi32>
}
