// A misspelt op name.
func.func @main(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = genesis.matmull %a, %a : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
