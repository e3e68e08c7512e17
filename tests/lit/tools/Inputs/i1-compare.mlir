// i1 orders false < true, as in PyTorch (the kernels once compared signed,
// where true is -1).
func.func @order(%a: tensor<4xi1> {genesis.name = "a", genesis.role = "input"}, %b: tensor<4xi1> {genesis.name = "b", genesis.role = "input"}) -> (tensor<4xi1> {genesis.name = "lt"}, tensor<4xi1> {genesis.name = "ge"}) {
  %lt = genesis.compare lt, %a, %b : tensor<4xi1>
  %ge = genesis.compare ge, %a, %b : tensor<4xi1>
  return %lt, %ge : tensor<4xi1>, tensor<4xi1>
}
