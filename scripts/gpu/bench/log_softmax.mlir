func.func @f(%x: tensor<8192x8192xf32> {genesis.name = "x", genesis.role = "input"}) -> (tensor<8192x8192xf32> {genesis.name = "y"}) {
  %0 = genesis.log_softmax %x dim 1 : tensor<8192x8192xf32>
  return %0 : tensor<8192x8192xf32>
}
