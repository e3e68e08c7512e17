// log(a) is -inf where a = 0; log(a) - log(a) is NaN there.
func.func @main(%a: tensor<2x3xf32> {genesis.name = "a"}) -> (tensor<2x3xf32> {genesis.name = "y"}) {
  %0 = genesis.log %a : tensor<2x3xf32>
  %1 = genesis.sub %0, %0 : tensor<2x3xf32>
  return %1 : tensor<2x3xf32>
}
