// RUN: genesis-opt %s --split-input-file --genesis-merge-sibling-loops | FileCheck %s

// SwiGLU's backward: the up projection's gradient dh * silu(gate) and the
// gate's dh * up * silu'(gate) are adjacent elementwise fusions reading dh
// and gate (a reshape between them): one fusion in the first one's place,
// its inputs the first's then the second's new one, yielding both results.
// CHECK-LABEL: func.func @swiglu_backward(
// CHECK: %[[F:.+]]:2 = genesis.fusion %arg0, %arg1, %arg2 : (tensor<4x8xbf16>, tensor<4x8xbf16>, tensor<4x8xbf16>) -> (tensor<4x8xbf16>, tensor<4x8xbf16>) {
// CHECK: genesis.silu
// CHECK: genesis.sigmoid
// CHECK: genesis.yield
// CHECK-NOT: genesis.fusion
// CHECK: %[[R:.+]] = genesis.reshape %[[F]]#0
// CHECK: return %[[R]], %[[F]]#1
func.func @swiglu_backward(%dh: tensor<4x8xbf16>, %gate: tensor<4x8xbf16>, %up: tensor<4x8xbf16>) -> (tensor<32xbf16>, tensor<4x8xbf16>) {
  %0 = genesis.fusion %dh, %gate : (tensor<4x8xbf16>, tensor<4x8xbf16>) -> tensor<4x8xbf16> {
  ^bb0(%d: tensor<4x8xbf16>, %g: tensor<4x8xbf16>):
    %1 = genesis.cast %d : tensor<4x8xbf16> to tensor<4x8xf32>
    %2 = genesis.cast %g : tensor<4x8xbf16> to tensor<4x8xf32>
    %3 = genesis.silu %2 : tensor<4x8xf32>
    %4 = genesis.mul %1, %3 : tensor<4x8xf32>
    %5 = genesis.cast %4 : tensor<4x8xf32> to tensor<4x8xbf16>
    genesis.yield %5 : tensor<4x8xbf16>
  }
  %r = genesis.reshape %0 : tensor<4x8xbf16> -> tensor<32xbf16>
  %6 = genesis.fusion %dh, %up, %gate : (tensor<4x8xbf16>, tensor<4x8xbf16>, tensor<4x8xbf16>) -> tensor<4x8xbf16> {
  ^bb0(%d: tensor<4x8xbf16>, %u: tensor<4x8xbf16>, %g: tensor<4x8xbf16>):
    %1 = genesis.cast %d : tensor<4x8xbf16> to tensor<4x8xf32>
    %2 = genesis.cast %u : tensor<4x8xbf16> to tensor<4x8xf32>
    %3 = genesis.mul %1, %2 : tensor<4x8xf32>
    %4 = genesis.cast %g : tensor<4x8xbf16> to tensor<4x8xf32>
    %5 = genesis.sigmoid %4 : tensor<4x8xf32>
    %6 = genesis.mul %3, %5 : tensor<4x8xf32>
    %7 = genesis.cast %6 : tensor<4x8xf32> to tensor<4x8xbf16>
    genesis.yield %7 : tensor<4x8xbf16>
  }
  return %r, %6 : tensor<32xbf16>, tensor<4x8xbf16>
}

// -----

// Not merged: work between the two (a GEMM), a second fusion reading the
// first's result (a consumer, not a sibling), and siblings of other shapes.
// CHECK-LABEL: func.func @kept_apart(
// CHECK-COUNT-5: genesis.fusion
// CHECK-NOT: genesis.fusion
func.func @kept_apart(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>, %w: tensor<8x8xf32>, %c: tensor<8x4xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<8x4xf32>) {
  %0 = genesis.fusion %a : (tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%x: tensor<4x8xf32>):
    %1 = genesis.exp %x : tensor<4x8xf32>
    genesis.yield %1 : tensor<4x8xf32>
  }
  %m = genesis.matmul %b, %w : tensor<4x8xf32>, tensor<8x8xf32>
  %2 = genesis.fusion %a, %m : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>):
    %3 = genesis.add %x, %y : tensor<4x8xf32>
    genesis.yield %3 : tensor<4x8xf32>
  }
  %4 = genesis.fusion %a, %2 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>):
    %5 = genesis.mul %x, %y : tensor<4x8xf32>
    genesis.yield %5 : tensor<4x8xf32>
  }
  %6 = genesis.fusion %c : (tensor<8x4xf32>) -> tensor<8x4xf32> {
  ^bb0(%x: tensor<8x4xf32>):
    %7 = genesis.neg %x : tensor<8x4xf32>
    genesis.yield %7 : tensor<8x4xf32>
  }
  %8 = genesis.fusion %a, %c : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x8xf32> {
  ^bb0(%x: tensor<4x8xf32>, %y: tensor<8x4xf32>):
    %9 = genesis.transpose %y, [1, 0] : tensor<8x4xf32>
    %10 = genesis.sub %x, %9 : tensor<4x8xf32>
    genesis.yield %10 : tensor<4x8xf32>
  }
  return %0, %2, %4, %8, %6 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<8x4xf32>
}
