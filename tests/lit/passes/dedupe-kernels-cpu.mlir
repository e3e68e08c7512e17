// RUN: genesis-opt %s --pass-pipeline="builtin.module(genesis-lower-cpu,genesis-dedupe-kernels)" | FileCheck %s

// The CPU kernels: two optimizer updates of one shape share one kernel, the
// third, of another shape, keeps its own; the launching ops name the
// survivors.
// CHECK-LABEL: func.func @updates(
// CHECK: genesis.sgd_update {{.+}}genesis.kernel = @updates_sgd_update0
// CHECK: genesis.sgd_update {{.+}}genesis.kernel = @updates_sgd_update0
// CHECK: genesis.sgd_update {{.+}}genesis.kernel = @updates_sgd_update2
// CHECK-NOT: @updates_sgd_update1
// CHECK-DAG: func.func @updates_sgd_update0(
// CHECK-DAG: func.func @updates_sgd_update2(
// CHECK-NOT: @updates_sgd_update1
func.func @updates(%p: tensor<16x15xf32>, %g: tensor<16x15xf32>, %q: tensor<16x15xf32>, %h: tensor<16x15xf32>, %r: tensor<8x4xf32>, %k: tensor<8x4xf32>, %lr: tensor<f32>) -> (tensor<16x15xf32>, tensor<16x15xf32>, tensor<8x4xf32>) {
  %0 = genesis.sgd_update %p, %g, %lr : (tensor<16x15xf32>, tensor<16x15xf32>, tensor<f32>) -> tensor<16x15xf32>
  %1 = genesis.sgd_update %q, %h, %lr : (tensor<16x15xf32>, tensor<16x15xf32>, tensor<f32>) -> tensor<16x15xf32>
  %2 = genesis.sgd_update %r, %k, %lr : (tensor<8x4xf32>, tensor<8x4xf32>, tensor<f32>) -> tensor<8x4xf32>
  return %0, %1, %2 : tensor<16x15xf32>, tensor<16x15xf32>, tensor<8x4xf32>
}
