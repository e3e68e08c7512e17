// Index 7 is outside the 2 rows of %a.
func.func @main(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %ids = genesis.constant dense<[0, 7]> : tensor<2xi64>
  %0 = genesis.take %a, %ids axis 0 : tensor<2x3xf32>, tensor<2xi64>
  return %0 : tensor<2x3xf32>
}
