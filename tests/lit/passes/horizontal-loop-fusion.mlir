// RUN: genesis-opt %s --split-input-file --genesis-horizontal-loop-fusion | FileCheck %s

// A decode step's rope of q, key cache write and value cache write: three
// independent loops of two shapes (a constant and a reshape between them)
// become one fusion in the first's place yielding every result.
// CHECK-LABEL: func.func @decode_loops(
// CHECK: %[[F:.+]]:3 = genesis.fusion %arg0, %arg1, %arg2, %arg3, %arg4 : (tensor<1x4x1x8xf32>, tensor<1x2x1x8xbf16>, tensor<1x2x16x8xbf16>, tensor<1x2x1x8xbf16>, tensor<1x2x16x8xbf16>) -> (tensor<1x4x1x8xf32>, tensor<1x2x16x8xbf16>, tensor<1x2x16x8xbf16>)
// CHECK-NOT: genesis.fusion
// CHECK: return %[[F]]#0, %[[F]]#1, %[[F]]#2
func.func @decode_loops(%q: tensor<1x4x1x8xf32>, %k: tensor<1x2x1x8xbf16>, %kc: tensor<1x2x16x8xbf16> {genesis.name = "cache.k"}, %v: tensor<1x2x1x8xbf16>, %vc: tensor<1x2x16x8xbf16> {genesis.name = "cache.v"}) -> (tensor<1x4x1x8xf32>, tensor<1x2x16x8xbf16> {genesis.name = "cache.k"}, tensor<1x2x16x8xbf16> {genesis.name = "cache.v"}) {
  %0 = genesis.fusion %q : (tensor<1x4x1x8xf32>) -> tensor<1x4x1x8xf32> {
  ^bb0(%a: tensor<1x4x1x8xf32>):
    %1 = genesis.neg %a : tensor<1x4x1x8xf32>
    genesis.yield %1 : tensor<1x4x1x8xf32>
  }
  %c = genesis.constant dense<1.0> : tensor<2xf32>
  %r = genesis.reshape %q : tensor<1x4x1x8xf32> -> tensor<4x8xf32>
  %1 = genesis.fusion %k, %kc : (tensor<1x2x1x8xbf16>, tensor<1x2x16x8xbf16>) -> tensor<1x2x16x8xbf16> {
  ^bb0(%a: tensor<1x2x1x8xbf16>, %b: tensor<1x2x16x8xbf16>):
    %2 = genesis.broadcast_in_dim %a, [0, 1, 2, 3] : tensor<1x2x1x8xbf16> -> tensor<1x2x16x8xbf16>
    %3 = genesis.max %2, %b : tensor<1x2x16x8xbf16>
    genesis.yield %3 : tensor<1x2x16x8xbf16>
  }
  %2 = genesis.fusion %v, %vc : (tensor<1x2x1x8xbf16>, tensor<1x2x16x8xbf16>) -> tensor<1x2x16x8xbf16> {
  ^bb0(%a: tensor<1x2x1x8xbf16>, %b: tensor<1x2x16x8xbf16>):
    %3 = genesis.broadcast_in_dim %a, [0, 1, 2, 3] : tensor<1x2x1x8xbf16> -> tensor<1x2x16x8xbf16>
    %4 = genesis.max %3, %b : tensor<1x2x16x8xbf16>
    genesis.yield %4 : tensor<1x2x16x8xbf16>
  }
  return %0, %1, %2 : tensor<1x4x1x8xf32>, tensor<1x2x16x8xbf16>, tensor<1x2x16x8xbf16>
}

// -----

// Left apart: a loop reading the run's result; a loop of more than 2^20
// elements a result.
// CHECK-LABEL: func.func @dependent(
// CHECK: %[[A:.+]] = genesis.fusion %arg0
// CHECK: genesis.fusion %[[A]]
// CHECK: genesis.fusion %arg1
// CHECK: return
func.func @dependent(%x: tensor<8xf32>, %big: tensor<2097152xf32>) -> (tensor<8xf32>, tensor<2097152xf32>) {
  %0 = genesis.fusion %x : (tensor<8xf32>) -> tensor<8xf32> {
  ^bb0(%a: tensor<8xf32>):
    %1 = genesis.neg %a : tensor<8xf32>
    genesis.yield %1 : tensor<8xf32>
  }
  %1 = genesis.fusion %0 : (tensor<8xf32>) -> tensor<8xf32> {
  ^bb0(%a: tensor<8xf32>):
    %2 = genesis.exp %a : tensor<8xf32>
    genesis.yield %2 : tensor<8xf32>
  }
  %2 = genesis.fusion %big : (tensor<2097152xf32>) -> tensor<2097152xf32> {
  ^bb0(%a: tensor<2097152xf32>):
    %3 = genesis.neg %a : tensor<2097152xf32>
    genesis.yield %3 : tensor<2097152xf32>
  }
  return %1, %2 : tensor<8xf32>, tensor<2097152xf32>
}

// -----

// The update's reader comes first: merging would let the update overwrite
// the state while the reader reads it.
// CHECK-LABEL: func.func @reader_then_update(
// CHECK: genesis.fusion %arg0, %arg1 :
// CHECK: genesis.fusion %arg1 :
func.func @reader_then_update(%x: tensor<8xf32>, %s: tensor<8xf32> {genesis.name = "state"}) -> (tensor<8xf32>, tensor<8xf32> {genesis.name = "state"}) {
  %0 = genesis.fusion %x, %s : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32> {
  ^bb0(%a: tensor<8xf32>, %b: tensor<8xf32>):
    %1 = genesis.add %a, %b : tensor<8xf32>
    genesis.yield %1 : tensor<8xf32>
  }
  %1 = genesis.fusion %s : (tensor<8xf32>) -> tensor<8xf32> {
  ^bb0(%a: tensor<8xf32>):
    %2 = genesis.exp %a : tensor<8xf32>
    genesis.yield %2 : tensor<8xf32>
  }
  return %0, %1 : tensor<8xf32>, tensor<8xf32>
}

// -----

// The update comes first: merging would let the reader read the state
// while the update overwrites it.
// CHECK-LABEL: func.func @update_then_reader(
// CHECK: genesis.fusion %arg1 :
// CHECK: genesis.fusion %arg0, %arg1 :
func.func @update_then_reader(%x: tensor<8xf32>, %s: tensor<8xf32> {genesis.name = "state"}) -> (tensor<8xf32> {genesis.name = "state"}, tensor<8xf32>) {
  %0 = genesis.fusion %s : (tensor<8xf32>) -> tensor<8xf32> {
  ^bb0(%a: tensor<8xf32>):
    %1 = genesis.exp %a : tensor<8xf32>
    genesis.yield %1 : tensor<8xf32>
  }
  %1 = genesis.fusion %x, %s : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32> {
  ^bb0(%a: tensor<8xf32>, %b: tensor<8xf32>):
    %2 = genesis.add %a, %b : tensor<8xf32>
    genesis.yield %2 : tensor<8xf32>
  }
  return %0, %1 : tensor<8xf32>, tensor<8xf32>
}
