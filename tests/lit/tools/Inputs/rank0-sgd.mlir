// A rank-0 optimizer update (its lr has the same shape) compiles for cuda:
// the op kernel is not flattened (issue 14, found by the differential fuzzer).
func.func @f(%p: tensor<f32> {genesis.name = "p", genesis.role = "input"}, %g: tensor<f32> {genesis.name = "g", genesis.role = "input"}, %lr: tensor<f32> {genesis.name = "lr", genesis.role = "input"}) -> tensor<f32> {
  %0 = genesis.sgd_update %p, %g, %lr {weight_decay = 0.0 : f64} : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
