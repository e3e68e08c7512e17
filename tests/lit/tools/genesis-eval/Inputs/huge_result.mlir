// A result larger than the machine (4 TiB): refused before allocating.
func.func @f(%a: tensor<1xf32>) -> tensor<1099511627776xf32> {
  %0 = genesis.broadcast_in_dim %a, [0] : tensor<1xf32> -> tensor<1099511627776xf32>
  return %0 : tensor<1099511627776xf32>
}
