// Each function uses one op the compiled CPU path refuses; the evaluator
// runs all of them.
func.func @int_div(%a: tensor<4xi32> {genesis.name = "a", genesis.role = "input"}, %b: tensor<4xi32> {genesis.name = "b", genesis.role = "input"}) -> (tensor<4xi32> {genesis.name = "q"}) {
  %q = genesis.div %a, %b : tensor<4xi32>
  return %q : tensor<4xi32>
}
