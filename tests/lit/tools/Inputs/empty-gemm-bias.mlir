// A GEMM with an empty inner dimension and a bias: not supported, a clear error.
func.func @f(%a: tensor<3x0xf32> {genesis.name = "a", genesis.role = "input"}, %b: tensor<0x4xf32> {genesis.name = "b", genesis.role = "input"}, %c: tensor<4xf32> {genesis.name = "c", genesis.role = "input"}) -> (tensor<3x4xf32> {genesis.name = "y"}) {
  %0 = genesis.matmul %a, %b : tensor<3x0xf32>, tensor<0x4xf32>
  %1 = genesis.broadcast_in_dim %c, [1] : tensor<4xf32> -> tensor<3x4xf32>
  %2 = genesis.add %0, %1 : tensor<3x4xf32>
  return %2 : tensor<3x4xf32>
}
