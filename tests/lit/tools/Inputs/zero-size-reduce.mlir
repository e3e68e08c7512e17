// A sum over an empty dimension: zeros, as in PyTorch (the canonicalizer
// makes it a constant, so no kernel loops over the empty dimension).
func.func @f(%a: tensor<3x0xf32> {genesis.name = "a", genesis.role = "input"}) -> (tensor<3xf32> {genesis.name = "s"}) {
  %0 = genesis.reduce_sum %a dims [1] : tensor<3x0xf32>
  return %0 : tensor<3xf32>
}
