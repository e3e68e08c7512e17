// Mean cross-entropy of 8192 rows of 8192 logits, and its gradient.
func.func @f(%x: tensor<8192x8192xf32> {genesis.name = "x", genesis.role = "input"},
             %l: tensor<8192xi64> {genesis.name = "labels", genesis.role = "input"},
             %s: tensor<f32> {genesis.name = "s", genesis.role = "input"}) -> (tensor<f32> {genesis.name = "loss"}, tensor<8192x8192xf32> {genesis.name = "dx"}) {
  %0 = genesis.cross_entropy %x, %l {reduction = 1 : i32} : (tensor<8192x8192xf32>, tensor<8192xi64>) -> tensor<f32>
  %1 = genesis.cross_entropy_grad %x, %l, %s {reduction = 1 : i32} : (tensor<8192x8192xf32>, tensor<8192xi64>, tensor<f32>) -> tensor<8192x8192xf32>
  return %0, %1 : tensor<f32>, tensor<8192x8192xf32>
}
