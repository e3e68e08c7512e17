// RUN: genesis-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(genesis-decompose-cross-entropy,genesis-fuse-cross-entropy-gradient))' | FileCheck %s

// A training step's mean loss and its gradient (cotangent 1): after
// genesis-decompose-cross-entropy, the per-row loss and gradient of the
// same logits become one op at the loss, the cotangents (1 / count of the
// rows that count, from the labels alone) computed before it.
// CHECK-LABEL: func.func @mean(
// CHECK: %[[COUNT:.+]] = genesis.reduce_sum
// CHECK: %[[W:.+]] = genesis.broadcast_in_dim
// CHECK: %[[LOSS:.+]], %[[GRAD:.+]] = genesis.cross_entropy_with_grad %arg0, %arg1, %[[W]] {label_smoothing = 1.000000e-01 : f64} : (tensor<8x1024xbf16>, tensor<8xi64>, tensor<8xf32>) -> (tensor<8xf32>, tensor<8x1024xbf16>)
// CHECK: genesis.reduce_sum %[[LOSS]]
// CHECK-NOT: genesis.cross_entropy
// CHECK: return {{.+}}, %[[GRAD]]
func.func @mean(%x: tensor<8x1024xbf16>, %y: tensor<8xi64>) -> (tensor<f32>, tensor<8x1024xbf16>) {
  %loss = genesis.cross_entropy %x, %y {label_smoothing = 0.1 : f64} : (tensor<8x1024xbf16>, tensor<8xi64>) -> tensor<f32>
  %one = genesis.constant dense<1.0> : tensor<f32>
  %dx = genesis.cross_entropy_grad %x, %y, %one {label_smoothing = 0.1 : f64} : (tensor<8x1024xbf16>, tensor<8xi64>, tensor<f32>) -> tensor<8x1024xbf16>
  return %loss, %dx : tensor<f32>, tensor<8x1024xbf16>
}

// -----

// Kept apart: a cotangent computed from the loss (d(loss^2) = 2 loss), rows
// of fewer than 1024 classes, and another label smoothing.
// CHECK-LABEL: func.func @kept(
// CHECK-NOT: cross_entropy_with_grad
// CHECK-COUNT-3: genesis.cross_entropy_grad
// CHECK-NOT: cross_entropy_with_grad
func.func @kept(%x: tensor<8x1024xf32>, %y: tensor<8xi64>, %n: tensor<8x1000xf32>) -> (tensor<8x1024xf32>, tensor<8x1000xf32>, tensor<8x1024xf32>) {
  %loss = genesis.cross_entropy %x, %y {reduction = 0 : i32} : (tensor<8x1024xf32>, tensor<8xi64>) -> tensor<8xf32>
  %two = genesis.constant dense<2.0> : tensor<8xf32>
  %w = genesis.mul %loss, %two : tensor<8xf32>
  %dx = genesis.cross_entropy_grad %x, %y, %w {reduction = 0 : i32} : (tensor<8x1024xf32>, tensor<8xi64>, tensor<8xf32>) -> tensor<8x1024xf32>
  %narrow = genesis.cross_entropy %n, %y {reduction = 0 : i32} : (tensor<8x1000xf32>, tensor<8xi64>) -> tensor<8xf32>
  %dn = genesis.cross_entropy_grad %n, %y, %two {reduction = 0 : i32} : (tensor<8x1000xf32>, tensor<8xi64>, tensor<8xf32>) -> tensor<8x1000xf32>
  %smooth = genesis.cross_entropy %x, %y {reduction = 0 : i32, label_smoothing = 0.1 : f64} : (tensor<8x1024xf32>, tensor<8xi64>) -> tensor<8xf32>
  %ds = genesis.cross_entropy_grad %x, %y, %two {reduction = 0 : i32, label_smoothing = 0.2 : f64} : (tensor<8x1024xf32>, tensor<8xi64>, tensor<8xf32>) -> tensor<8x1024xf32>
  return %dx, %dn, %ds : tensor<8x1024xf32>, tensor<8x1000xf32>, tensor<8x1024xf32>
}

// -----

// Kept apart: f64 logits, which the GPU's cross-entropy kernels (computing
// in f32) do not take.
// CHECK-LABEL: func.func @f64_logits(
// CHECK-NOT: cross_entropy_with_grad
// CHECK: genesis.cross_entropy_grad
func.func @f64_logits(%x: tensor<8x1024xf64>, %y: tensor<8xi64>, %w: tensor<8xf64>) -> (tensor<8xf64>, tensor<8x1024xf64>) {
  %loss = genesis.cross_entropy %x, %y {reduction = 0 : i32} : (tensor<8x1024xf64>, tensor<8xi64>) -> tensor<8xf64>
  %dx = genesis.cross_entropy_grad %x, %y, %w {reduction = 0 : i32} : (tensor<8x1024xf64>, tensor<8xi64>, tensor<8xf64>) -> tensor<8x1024xf64>
  return %loss, %dx : tensor<8xf64>, tensor<8x1024xf64>
}
