// RUN: genesis-opt %s --split-input-file --genesis-decompose-cross-entropy | FileCheck %s

// mean: per-row losses, their sum, over the rows whose label is not ignored.
// CHECK-LABEL: func.func @mean(
// CHECK: %[[ROWS:.+]] = genesis.cross_entropy %arg0, %arg1 {ignore_index = -1 : i64, label_smoothing = 1.000000e-01 : f64, reduction = 0 : i32} : (tensor<6x5xf32>, tensor<6xi64>) -> tensor<6xf32>
// CHECK: %[[SUM:.+]] = genesis.reduce_sum %[[ROWS]] dims [0]
// CHECK: %[[IGNORE:.+]] = genesis.constant dense<-1> : tensor<6xi64>
// CHECK: %[[KEPT:.+]] = genesis.compare ne, %arg1, %[[IGNORE]]
// CHECK: %[[COUNT:.+]] = genesis.reduce_sum {{.+}} dims [0]
// CHECK: %[[MEAN:.+]] = genesis.div %[[SUM]], %[[COUNT]]
// CHECK: return %[[MEAN]]
func.func @mean(%x: tensor<6x5xf32>, %l: tensor<6xi64>) -> tensor<f32> {
  %0 = genesis.cross_entropy %x, %l {ignore_index = -1 : i64, label_smoothing = 0.1} : (tensor<6x5xf32>, tensor<6xi64>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// sum: no division; none: untouched.
// CHECK-LABEL: func.func @sum_and_none(
// CHECK: genesis.cross_entropy {{.+}} -> tensor<6xf32>
// CHECK-NEXT: genesis.reduce_sum
// CHECK-NOT: genesis.div
// CHECK: genesis.cross_entropy {{.+}}reduction = 0 : i32{{.+}} -> tensor<6xf32>
func.func @sum_and_none(%x: tensor<6x5xf32>, %l: tensor<6xi64>) -> (tensor<f32>, tensor<6xf32>) {
  %0 = genesis.cross_entropy %x, %l {reduction = 2 : i32} : (tensor<6x5xf32>, tensor<6xi64>) -> tensor<f32>
  %1 = genesis.cross_entropy %x, %l {reduction = 0 : i32} : (tensor<6x5xf32>, tensor<6xi64>) -> tensor<6xf32>
  return %0, %1 : tensor<f32>, tensor<6xf32>
}

// -----

// The gradient of a mean: per-row gradients, each row's cotangent the loss's
// divided by the rows that count.
// CHECK-LABEL: func.func @grad_mean(
// CHECK: %[[COUNT:.+]] = genesis.reduce_sum {{.+}} dims [0]
// CHECK: %[[W:.+]] = genesis.div %arg2, %[[COUNT]]
// CHECK: %[[ROWS:.+]] = genesis.broadcast_in_dim %[[W]], [] : tensor<f32> -> tensor<6xf32>
// CHECK: genesis.cross_entropy_grad %arg0, %arg1, %[[ROWS]] {{.+}}reduction = 0 : i32{{.+}} -> tensor<6x5xf32>
func.func @grad_mean(%x: tensor<6x5xf32>, %l: tensor<6xi64>, %s: tensor<f32>) -> tensor<6x5xf32> {
  %0 = genesis.cross_entropy_grad %x, %l, %s : (tensor<6x5xf32>, tensor<6xi64>, tensor<f32>) -> tensor<6x5xf32>
  return %0 : tensor<6x5xf32>
}
