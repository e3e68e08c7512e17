// RUN: genesis-opt %s --split-input-file --genesis-pad-classes=min-classes=512 | FileCheck %s
// RUN: genesis-opt %s --split-input-file --genesis-pad-classes="multiple=8 min-classes=8" | FileCheck %s --check-prefix=SMALL
// RUN: not genesis-opt %s --split-input-file --genesis-pad-classes=multiple=0 2>&1 | FileCheck %s --check-prefix=BAD

// 1000 classes become 1024: the weight is padded with zero rows, the logits
// of the 24 padded classes get a bias of -1e30 (an iota compared with 1000
// selects it), and the reshape and the loss take 1024 classes. The
// parameter keeps its shape.
// CHECK-LABEL: func.func @lm_head(
// CHECK-SAME: %[[W:[a-z0-9]+]]: tensor<1000x64xf32>
// CHECK: %[[WP:.+]] = genesis.pad %[[W]] low [0, 0] high [24, 0] interior [0, 0] : tensor<1000x64xf32>
// CHECK: %[[L:.+]] = genesis.matmul %{{.+}}, %[[WP]] transpose_rhs : tensor<16x64xf32>, tensor<1024x64xf32>
// CHECK: %[[I:.+]] = genesis.iota dim 0 : tensor<1024xi64>
// CHECK: %[[C:.+]] = genesis.constant dense<1000> : tensor<1024xi64>
// CHECK: %[[R:.+]] = genesis.compare lt, %[[I]], %[[C]]
// CHECK-DAG: %[[Z:.+]] = genesis.constant dense<0.000000e+00> : tensor<1024xf32>
// CHECK-DAG: %[[H:.+]] = genesis.constant dense<-1.000000e+30> : tensor<1024xf32>
// CHECK: %[[M:.+]] = genesis.select %[[R]], %[[Z]], %[[H]] : tensor<1024xi1>, tensor<1024xf32>
// CHECK: %[[B:.+]] = genesis.broadcast_in_dim %[[M]], [1] : tensor<1024xf32> -> tensor<16x1024xf32>
// CHECK: %[[S:.+]] = genesis.add %[[L]], %[[B]] : tensor<16x1024xf32>
// CHECK: %[[E:.+]] = genesis.reshape %[[S]] : tensor<16x1024xf32> -> tensor<2x8x1024xf32>
// CHECK: %[[F:.+]] = genesis.reshape %[[E]] : tensor<2x8x1024xf32> -> tensor<16x1024xf32>
// CHECK: genesis.cross_entropy %[[F]], %{{.+}} : (tensor<16x1024xf32>, tensor<16xi64>)
// BAD: error: genesis-pad-classes: multiple must be positive, not 0
// SMALL-LABEL: func.func @lm_head(
// SMALL-NOT: genesis.pad
func.func @lm_head(%x: tensor<16x64xf32>, %w: tensor<1000x64xf32>, %y: tensor<16xi64>) -> tensor<f32> {
  %0 = genesis.matmul %x, %w transpose_rhs : tensor<16x64xf32>, tensor<1000x64xf32>
  %1 = genesis.reshape %0 : tensor<16x1000xf32> -> tensor<2x8x1000xf32>
  %2 = genesis.reshape %1 : tensor<2x8x1000xf32> -> tensor<16x1000xf32>
  %3 = genesis.cross_entropy %2, %y : (tensor<16x1000xf32>, tensor<16xi64>) -> tensor<f32>
  return %3 : tensor<f32>
}

// -----

// Left alone: logits used elsewhere too, label smoothing, a class count
// already aligned, and one below min-classes.
// CHECK-LABEL: func.func @kept(
// CHECK-NOT: genesis.pad
// With multiple=8 and min-classes=8, only the 100 classes are padded (to 104).
// SMALL-LABEL: func.func @kept(
// SMALL: genesis.pad %{{.+}} low [0, 0] high [4, 0] interior [0, 0] : tensor<100x64xf32>
// SMALL-NOT: genesis.pad
func.func @kept(%x: tensor<16x64xf32>, %w: tensor<1000x64xf32>, %a: tensor<1024x64xf32>, %s: tensor<100x64xf32>, %y: tensor<16xi64>) -> (tensor<f32>, tensor<16x1000xf32>, tensor<f32>, tensor<f32>, tensor<f32>) {
  %0 = genesis.matmul %x, %w transpose_rhs : tensor<16x64xf32>, tensor<1000x64xf32>
  %1 = genesis.cross_entropy %0, %y : (tensor<16x1000xf32>, tensor<16xi64>) -> tensor<f32>
  %2 = genesis.matmul %x, %w transpose_rhs : tensor<16x64xf32>, tensor<1000x64xf32>
  %3 = genesis.cross_entropy %2, %y {label_smoothing = 1.000000e-01 : f64} : (tensor<16x1000xf32>, tensor<16xi64>) -> tensor<f32>
  %4 = genesis.matmul %x, %a transpose_rhs : tensor<16x64xf32>, tensor<1024x64xf32>
  %5 = genesis.cross_entropy %4, %y : (tensor<16x1024xf32>, tensor<16xi64>) -> tensor<f32>
  %6 = genesis.matmul %x, %s transpose_rhs : tensor<16x64xf32>, tensor<100x64xf32>
  %7 = genesis.cross_entropy %6, %y : (tensor<16x100xf32>, tensor<16xi64>) -> tensor<f32>
  return %1, %0, %3, %5, %7 : tensor<f32>, tensor<16x1000xf32>, tensor<f32>, tensor<f32>, tensor<f32>
}
