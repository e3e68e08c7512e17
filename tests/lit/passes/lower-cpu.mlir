// RUN: genesis-opt %s --split-input-file --genesis-lower-cpu | FileCheck %s

// A loop fusion: one loop nest over the result, the outer loop over the
// [begin, end) arguments; the broadcast operand is indexed by the inner
// loop only; intermediates stay in registers.
// CHECK-LABEL: func.func @f(
// CHECK: genesis.fusion %{{.+}}, %{{.+}} {genesis.kernel = @f_fusion0}
// CHECK-LABEL: func.func @f_fusion0(
// CHECK-SAME: %[[A:[a-z0-9]+]]: memref<4x8xf32>, %[[B:[a-z0-9]+]]: memref<8xf32>, %[[OUT:[a-z0-9]+]]: memref<4x8xf32>, %[[BEGIN:[a-z0-9]+]]: index, %[[END:[a-z0-9]+]]: index)
// CHECK-SAME: attributes {genesis.kernel, genesis.outer_extent = 4 : i64}
// CHECK: scf.for %[[I:[a-z0-9]+]] = %[[BEGIN]] to %[[END]]
// CHECK: scf.for %[[J:[a-z0-9]+]] =
// CHECK-NEXT: %[[X:.+]] = memref.load %[[A]][%[[I]], %[[J]]]
// CHECK-NEXT: %[[Y:.+]] = memref.load %[[B]][%[[J]]]
// CHECK-NEXT: %[[M:.+]] = arith.mulf %[[X]], %[[Y]]
// CHECK-NEXT: %[[T:.+]] = math.tanh %[[M]]
// CHECK-NEXT: %[[S:.+]] = arith.addf %[[T]], %[[M]]
// CHECK-NEXT: memref.store %[[S]], %[[OUT]][%[[I]], %[[J]]]
func.func @f(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %r = genesis.fusion %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
  ^bb0(%x: tensor<4x8xf32>, %y: tensor<8xf32>):
    %0 = genesis.broadcast_in_dim %y, [1] : tensor<8xf32> -> tensor<4x8xf32>
    %1 = genesis.mul %x, %0 : tensor<4x8xf32>
    %2 = genesis.tanh %1 : tensor<4x8xf32>
    %3 = genesis.add %2, %1 : tensor<4x8xf32>
    genesis.yield %3 : tensor<4x8xf32>
  }
  return %r : tensor<4x8xf32>
}

// -----

// A reduction root: the outer loop runs over the kept dimension, the
// reduced one carries the accumulator.
// CHECK-LABEL: func.func @g_fusion0(
// CHECK-SAME: genesis.outer_extent = 4 : i64
// CHECK: scf.for %[[I:[a-z0-9]+]] =
// CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[SUM:.+]] = scf.for %[[J:[a-z0-9]+]] = {{.+}} iter_args(%[[ACC:.+]] = %[[ZERO]]) -> (f32)
// CHECK: %[[E:.+]] = math.exp
// CHECK: %[[NEXT:.+]] = arith.addf %[[ACC]], %[[E]]
// CHECK: scf.yield %[[NEXT]]
// CHECK: memref.store %[[SUM]], %{{.+}}[%[[I]]]
func.func @g(%a: tensor<4x8xf32>) -> tensor<4xf32> {
  %s = genesis.fusion %a : (tensor<4x8xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4x8xf32>):
    %0 = genesis.exp %x : tensor<4x8xf32>
    %1 = genesis.reduce_sum %0 dims [1] : tensor<4x8xf32>
    genesis.yield %1 : tensor<4xf32>
  }
  return %s : tensor<4xf32>
}
