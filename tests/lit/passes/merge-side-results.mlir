// RUN: genesis-opt %s --split-input-file --genesis-merge-side-results | FileCheck %s

// A layer norm's input gradient: the reduction fusion stores dx in f32 as a
// side result; the bf16 copy for the next GEMM joins it as a third result.
// CHECK-LABEL: func.func @narrowed_side_result(
// CHECK: %[[F:.+]]:3 = genesis.fusion %arg0, %arg1 : (tensor<4x8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xbf16>) {
// CHECK: genesis.reduce_sum
// CHECK: genesis.cast
// CHECK: genesis.yield
// CHECK-NOT: genesis.fusion
// CHECK: return %[[F]]#0, %[[F]]#1, %[[F]]#2
func.func @narrowed_side_result(%x: tensor<4x8xf32>, %g: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xbf16>) {
  %0:2 = genesis.fusion %x, %g : (tensor<4x8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>) {
  ^bb0(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>):
    %1 = genesis.mul %a, %b : tensor<4x8xf32>
    %2 = genesis.reduce_sum %1 dims [0] : tensor<4x8xf32>
    genesis.yield %1, %2 : tensor<4x8xf32>, tensor<8xf32>
  }
  %1 = genesis.fusion %0#0 : (tensor<4x8xf32>) -> tensor<4x8xbf16> {
  ^bb0(%a: tensor<4x8xf32>):
    %2 = genesis.cast %a : tensor<4x8xf32> to tensor<4x8xbf16>
    genesis.yield %2 : tensor<4x8xbf16>
  }
  return %0#0, %0#1, %1 : tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xbf16>
}

// -----

// Consumers that stay apart: one reading the reduction's result (a row of
// totals, not a side result), one with data movement.
// CHECK-LABEL: func.func @left_alone(
// CHECK-COUNT-3: genesis.fusion
func.func @left_alone(%x: tensor<4x8xf32>, %y: tensor<8x4xf32>) -> (tensor<4x8xf32>, tensor<8x4xf32>, tensor<4x8xf32>) {
  %0:2 = genesis.fusion %x : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>) {
  ^bb0(%a: tensor<4x8xf32>):
    %1 = genesis.exp %a : tensor<4x8xf32>
    %2 = genesis.reduce_sum %1 dims [0] : tensor<4x8xf32>
    genesis.yield %1, %2 : tensor<4x8xf32>, tensor<8xf32>
  }
  %1 = genesis.fusion %0#0, %0#1 : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: tensor<4x8xf32>, %s: tensor<8xf32>):
    %2 = genesis.broadcast_in_dim %s, [1] : tensor<8xf32> -> tensor<4x8xf32>
    %3 = genesis.div %a, %2 : tensor<4x8xf32>
    genesis.yield %3 : tensor<4x8xf32>
  }
  %2 = genesis.fusion %0#0, %y : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<8x4xf32> {
  ^bb0(%a: tensor<4x8xf32>, %b: tensor<8x4xf32>):
    %3 = genesis.transpose %a, [1, 0] : tensor<4x8xf32>
    %4 = genesis.add %3, %b : tensor<8x4xf32>
    genesis.yield %4 : tensor<8x4xf32>
  }
  return %1, %2, %0#0 : tensor<4x8xf32>, tensor<8x4xf32>, tensor<4x8xf32>
}

// -----

// Siblings: a GELU-backward-like dx (its own loop fusion, as genesis-fuse's
// rule 2b leaves it) and the bias gradient recomputing it from the same two
// tensors become one kernel, placed where the reduction was.
// CHECK-LABEL: func.func @sibling(
// CHECK: %[[F:.+]]:2 = genesis.fusion %arg0, %arg1 : (tensor<4x8xbf16>, tensor<4x8xbf16>) -> (tensor<8xf32>, tensor<4x8xbf16>) {
// CHECK: genesis.reduce_sum
// CHECK: genesis.yield
// CHECK-NOT: genesis.fusion
// CHECK: return %[[F]]#1, %[[F]]#0
func.func @sibling(%x: tensor<4x8xbf16>, %g: tensor<4x8xbf16>) -> (tensor<4x8xbf16>, tensor<8xf32>) {
  %0 = genesis.fusion %x, %g : (tensor<4x8xbf16>, tensor<4x8xbf16>) -> tensor<4x8xbf16> {
  ^bb0(%a: tensor<4x8xbf16>, %b: tensor<4x8xbf16>):
    %1 = genesis.cast %a : tensor<4x8xbf16> to tensor<4x8xf32>
    %2 = genesis.cast %b : tensor<4x8xbf16> to tensor<4x8xf32>
    %3 = genesis.tanh %1 : tensor<4x8xf32>
    %4 = genesis.mul %3, %2 : tensor<4x8xf32>
    %5 = genesis.cast %4 : tensor<4x8xf32> to tensor<4x8xbf16>
    genesis.yield %5 : tensor<4x8xbf16>
  }
  %1 = genesis.fusion %x, %g : (tensor<4x8xbf16>, tensor<4x8xbf16>) -> tensor<8xf32> {
  ^bb0(%a: tensor<4x8xbf16>, %b: tensor<4x8xbf16>):
    %2 = genesis.cast %a : tensor<4x8xbf16> to tensor<4x8xf32>
    %3 = genesis.cast %b : tensor<4x8xbf16> to tensor<4x8xf32>
    %4 = genesis.tanh %2 : tensor<4x8xf32>
    %5 = genesis.mul %4, %3 : tensor<4x8xf32>
    %6 = genesis.reduce_sum %5 dims [0] : tensor<4x8xf32>
    genesis.yield %6 : tensor<8xf32>
  }
  return %0, %1 : tensor<4x8xbf16>, tensor<8xf32>
}

// -----

// A sibling whose result is used before the reduction stays apart.
// CHECK-LABEL: func.func @sibling_used_before(
// CHECK-COUNT-3: genesis.fusion
func.func @sibling_used_before(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>) {
  %0 = genesis.fusion %x : (tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: tensor<4x8xf32>):
    %1 = genesis.exp %a : tensor<4x8xf32>
    genesis.yield %1 : tensor<4x8xf32>
  }
  %1 = genesis.fusion %0 : (tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: tensor<4x8xf32>):
    %2 = genesis.neg %a : tensor<4x8xf32>
    genesis.yield %2 : tensor<4x8xf32>
  }
  %2 = genesis.fusion %x : (tensor<4x8xf32>) -> tensor<8xf32> {
  ^bb0(%a: tensor<4x8xf32>):
    %3 = genesis.reduce_sum %a dims [0] : tensor<4x8xf32>
    genesis.yield %3 : tensor<8xf32>
  }
  return %1, %2 : tensor<4x8xf32>, tensor<8xf32>
}
