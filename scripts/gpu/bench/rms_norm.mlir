func.func @f(%x: tensor<8192x8192xf32> {genesis.name = "x", genesis.role = "input"},
             %w: tensor<8192xf32> {genesis.name = "w", genesis.role = "input"}) -> (tensor<8192x8192xf32> {genesis.name = "y"}) {
  %0 = genesis.rms_norm %x, %w eps 1.0e-06 : tensor<8192x8192xf32>, tensor<8192xf32>
  return %0 : tensor<8192x8192xf32>
}
