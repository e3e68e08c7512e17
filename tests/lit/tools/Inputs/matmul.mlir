func.func @main(%a: tensor<2x3xf32> {genesis.name = "a", genesis.role = "input"}, %b: tensor<3x2xf32> {genesis.name = "b", genesis.role = "input"}) -> (tensor<2x2xf32> {genesis.name = "product"}) {
  %0 = genesis.matmul %a, %b : tensor<2x3xf32>, tensor<3x2xf32>
  return %0 : tensor<2x2xf32>
}
