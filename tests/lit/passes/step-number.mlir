// RUN: genesis-opt %s --split-input-file --genesis-step-number | FileCheck %s

// A step argument's uses see step + 1 in its own element type.
// CHECK-LABEL: func.func @uses_step(
// CHECK-SAME: %[[STEP:.+]]: tensor<i64> {genesis.name = "step", genesis.role = "step"}
// CHECK-NEXT: %[[ONE:.+]] = genesis.constant dense<1> : tensor<i64>
// CHECK-NEXT: %[[NEXT:.+]] = genesis.add %[[STEP]], %[[ONE]] : tensor<i64>
// CHECK-NEXT: %[[F:.+]] = genesis.cast %[[NEXT]] : tensor<i64> to tensor<f32>
// CHECK-NEXT: return %[[F]]
func.func @uses_step(%s: tensor<i64> {genesis.name = "step", genesis.role = "step"}) -> tensor<f32> {
  %0 = genesis.cast %s : tensor<i64> to tensor<f32>
  return %0 : tensor<f32>
}

// -----

// A float step counts in floats; other arguments and an unused step are
// left alone.
// CHECK-LABEL: func.func @float_step(
// CHECK-NEXT: %[[ONE:.+]] = genesis.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[NEXT:.+]] = genesis.add %arg0, %[[ONE]] : tensor<f32>
// CHECK-NEXT: genesis.mul %[[NEXT]], %arg1 : tensor<f32>
// CHECK-LABEL: func.func @unused_step(
// CHECK-NEXT: return %arg1
func.func @float_step(%s: tensor<f32> {genesis.name = "step", genesis.role = "step"}, %x: tensor<f32> {genesis.name = "x", genesis.role = "input"}) -> tensor<f32> {
  %0 = genesis.mul %s, %x : tensor<f32>
  return %0 : tensor<f32>
}
func.func @unused_step(%s: tensor<i64> {genesis.name = "step", genesis.role = "step"}, %x: tensor<f32> {genesis.name = "x", genesis.role = "input"}) -> tensor<f32> {
  return %x : tensor<f32>
}
