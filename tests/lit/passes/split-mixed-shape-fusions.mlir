// RUN: genesis-opt %s --split-input-file --genesis-split-mixed-shape-fusions | FileCheck %s

// A multi-output fusion (a row sum beside its operand) becomes one fusion
// per result shape, in order of first appearance; each recomputes the
// producers it needs and drops what it does not.
// CHECK-LABEL: func.func @mixed(
// CHECK: %[[E:.+]] = genesis.fusion %arg0, %arg1 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK: genesis.mul
// CHECK-NEXT: genesis.exp
// CHECK-NEXT: genesis.yield
// CHECK: %[[S:.+]] = genesis.fusion %arg0, %arg1 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4xf32> {
// CHECK: genesis.mul
// CHECK-NEXT: genesis.exp
// CHECK-NEXT: genesis.reduce_sum
// CHECK-NEXT: genesis.yield
// CHECK: return %[[S]], %[[E]]
func.func @mixed(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> (tensor<4xf32>, tensor<4x8xf32>) {
  %0:2 = genesis.fusion %x, %y : (tensor<4x8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>) {
  ^bb0(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>):
    %1 = genesis.mul %a, %b : tensor<4x8xf32>
    %2 = genesis.exp %1 : tensor<4x8xf32>
    %3 = genesis.reduce_sum %2 dims [1] : tensor<4x8xf32>
    genesis.yield %2, %3 : tensor<4x8xf32>, tensor<4xf32>
  }
  return %0#1, %0#0 : tensor<4xf32>, tensor<4x8xf32>
}

// -----

// Results of one shape stay one fusion.
// CHECK-LABEL: func.func @same_shape(
// CHECK: genesis.fusion
// CHECK-NOT: genesis.fusion
func.func @same_shape(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %0:2 = genesis.fusion %x : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  ^bb0(%a: tensor<4x8xf32>):
    %1 = genesis.exp %a : tensor<4x8xf32>
    %2 = genesis.neg %1 : tensor<4x8xf32>
    genesis.yield %1, %2 : tensor<4x8xf32>, tensor<4x8xf32>
  }
  return %0#0, %0#1 : tensor<4x8xf32>, tensor<4x8xf32>
}
