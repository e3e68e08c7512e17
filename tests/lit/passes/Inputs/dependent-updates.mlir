// A hand-written group whose second update reads the first's result: no
// optimizer group (its blocks would run the updates in no order).
func.func @dependent_updates(%p: tensor<8xf32>, %g: tensor<8xf32>, %lr: tensor<f32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %r:2 = genesis.fusion %p, %g, %lr : (tensor<8xf32>, tensor<8xf32>, tensor<f32>) -> (tensor<8xf32>, tensor<8xf32>) {
  ^bb0(%a: tensor<8xf32>, %b: tensor<8xf32>, %l: tensor<f32>):
    %0 = genesis.sgd_update %a, %b, %l : (tensor<8xf32>, tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
    %1 = genesis.sgd_update %0, %b, %l : (tensor<8xf32>, tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
    genesis.yield %0, %1 : tensor<8xf32>, tensor<8xf32>
  }
  return %r#0, %r#1 : tensor<8xf32>, tensor<8xf32>
}
