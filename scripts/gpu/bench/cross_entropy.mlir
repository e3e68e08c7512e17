// Mean cross-entropy of 8192 rows of 8192 logits and its gradient.
func.func @loss(%x: tensor<8192x8192xf32> {genesis.name = "x", genesis.role = "input"},
                %l: tensor<8192xi64> {genesis.name = "labels", genesis.role = "input"}) -> (tensor<f32> {genesis.name = "l"}) {
  %0 = genesis.cross_entropy %x, %l : (tensor<8192x8192xf32>, tensor<8192xi64>) -> tensor<f32>
  return %0 : tensor<f32>
}
