// A linear model's squared error, the loss the train-step pipeline case
// differentiates (pipelines.test).
func.func @loss(%w: tensor<4x3xf32> {genesis.name = "w", genesis.role = "parameter"}, %b: tensor<3xf32> {genesis.name = "b", genesis.role = "parameter"}, %x: tensor<8x4xf32> {genesis.name = "x", genesis.role = "input"}, %t: tensor<8x3xf32> {genesis.name = "t", genesis.role = "input"}) -> (tensor<f32> {genesis.name = "loss"}) {
  %0 = genesis.matmul %x, %w : tensor<8x4xf32>, tensor<4x3xf32>
  %1 = genesis.broadcast_in_dim %b, [1] : tensor<3xf32> -> tensor<8x3xf32>
  %2 = genesis.add %0, %1 : tensor<8x3xf32>
  %3 = genesis.sub %2, %t : tensor<8x3xf32>
  %4 = genesis.mul %3, %3 : tensor<8x3xf32>
  %5 = genesis.reduce_sum %4 dims [0, 1] : tensor<8x3xf32>
  return %5 : tensor<f32>
}
