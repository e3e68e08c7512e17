func.func @f(%x: tensor<8192x8192xf32> {genesis.name = "x", genesis.role = "input"},
             %w: tensor<8192xf32> {genesis.name = "w", genesis.role = "input"},
             %b: tensor<8192xf32> {genesis.name = "b", genesis.role = "input"}) -> (tensor<8192x8192xf32> {genesis.name = "y"}) {
  %0 = genesis.layer_norm %x weight %w : tensor<8192xf32> bias %b : tensor<8192xf32> eps 1.0e-05 : tensor<8192x8192xf32>
  return %0 : tensor<8192x8192xf32>
}
