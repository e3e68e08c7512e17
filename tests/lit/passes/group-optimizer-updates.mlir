// RUN: genesis-opt %s --split-input-file --genesis-group-optimizer-updates | FileCheck %s
// RUN: not genesis-opt %S/Inputs/dependent-updates.mlir --genesis-lower-cuda 2>&1 | FileCheck %s --check-prefix=DEPENDENT

// A hand-written fusion of dependent updates is no group: the loop emitter
// refuses it with an error, no racing kernel is compiled.
// DEPENDENT: dependent-updates.mlir:6:10: error: genesis-lower-cuda: 'genesis.sgd_update' on 'tensor<8xf32>' is not supported inside a fusion kernel yet

// A layer's updates, a reshape of a gradient between two of them: one
// fusion at the last update's place, each operand once (lr and step are
// shared), yielding every result in order; the returns read it.
// CHECK-LABEL: func.func @adamw_run(
// CHECK: %[[R:.+]] = genesis.reshape %arg7
// CHECK: %[[F:.+]]:9 = genesis.fusion %arg0, %arg1, %arg2, %arg3, %arg9, %arg10, %arg4, %arg5, %arg6, %[[R]], %arg8 :
// CHECK-COUNT-3: genesis.adamw_update
// CHECK: genesis.yield
// CHECK-NOT: genesis.adamw_update
// CHECK: return %[[F]]#0, %[[F]]#1, %[[F]]#2, %[[F]]#3, %[[F]]#4, %[[F]]#5, %[[F]]#6, %[[F]]#7, %[[F]]#8
func.func @adamw_run(%p0: tensor<4x8xf32>, %g0: tensor<4x8xf32>, %m0: tensor<4x8xf32>, %v0: tensor<4x8xf32>,
                     %p1: tensor<8xf32>, %g1: tensor<8xf32>, %p2: tensor<32xf32>, %g2: tensor<4x8xf32>, %s2: tensor<32xf32>,
                     %lr: tensor<f32>, %t: tensor<i64>)
    -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>) {
  %a:3 = genesis.adamw_update %p0, %g0, %m0, %v0, %lr, %t {weight_decay = 0.01 : f64} : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<f32>, tensor<i64>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>)
  %b:3 = genesis.adamw_update %p1, %g1, %p1, %g1, %lr, %t : (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<f32>, tensor<i64>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>)
  %r = genesis.reshape %g2 : tensor<4x8xf32> -> tensor<32xf32>
  %c:3 = genesis.adamw_update %p2, %r, %s2, %s2, %lr, %t : (tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<f32>, tensor<i64>) -> (tensor<32xf32>, tensor<32xf32>, tensor<32xf32>)
  return %a#0, %a#1, %a#2, %b#0, %b#1, %b#2, %c#0, %c#1, %c#2 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>
}

// -----

// Other work ends a run (the add), and an update reading an earlier
// member's result starts a new one: no group has two members, nothing
// changes.
// CHECK-LABEL: func.func @runs_end(
// CHECK-NOT: genesis.fusion
// CHECK: genesis.sgd_update
// CHECK: genesis.add
// CHECK: genesis.sgd_update
// CHECK: genesis.sgd_update
// CHECK-NOT: genesis.fusion
func.func @runs_end(%p: tensor<8xf32>, %g: tensor<8xf32>, %q: tensor<8xf32>, %lr: tensor<f32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %0 = genesis.sgd_update %p, %g, %lr : (tensor<8xf32>, tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %s = genesis.add %g, %q : tensor<8xf32>
  %1 = genesis.sgd_update %q, %s, %lr : (tensor<8xf32>, tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %2 = genesis.sgd_update %1, %g, %lr : (tensor<8xf32>, tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  return %0, %1, %2 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}

// -----

// Seventeen independent updates: a group of 16 (kMaxGroupedUpdates) and
// the last alone.
// CHECK-LABEL: func.func @seventeen(
// CHECK: %[[F:.+]]:16 = genesis.fusion
// CHECK-COUNT-16: genesis.sgd_update
// CHECK: genesis.yield
// CHECK: %[[L:.+]] = genesis.sgd_update
// CHECK: return %[[F]]#0, {{.+}}, %[[F]]#15, %[[L]]
func.func @seventeen(%p0: tensor<8xf32>, %g0: tensor<8xf32>, %p1: tensor<8xf32>, %g1: tensor<8xf32>, %p2: tensor<8xf32>, %g2: tensor<8xf32>, %p3: tensor<8xf32>, %g3: tensor<8xf32>, %p4: tensor<8xf32>, %g4: tensor<8xf32>, %p5: tensor<8xf32>, %g5: tensor<8xf32>, %p6: tensor<8xf32>, %g6: tensor<8xf32>, %p7: tensor<8xf32>, %g7: tensor<8xf32>, %p8: tensor<8xf32>, %g8: tensor<8xf32>, %p9: tensor<8xf32>, %g9: tensor<8xf32>, %p10: tensor<8xf32>, %g10: tensor<8xf32>, %p11: tensor<8xf32>, %g11: tensor<8xf32>, %p12: tensor<8xf32>, %g12: tensor<8xf32>, %p13: tensor<8xf32>, %g13: tensor<8xf32>, %p14: tensor<8xf32>, %g14: tensor<8xf32>, %p15: tensor<8xf32>, %g15: tensor<8xf32>, %p16: tensor<8xf32>, %g16: tensor<8xf32>, %lr: tensor<f32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %0 = genesis.sgd_update %p0, %g0, %lr : (tensor<8xf32>, tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %1 = genesis.sgd_update %p1, %g1, %lr : (tensor<8xf32>, tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %2 = genesis.sgd_update %p2, %g2, %lr : (tensor<8xf32>, tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %3 = genesis.sgd_update %p3, %g3, %lr : (tensor<8xf32>, tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %4 = genesis.sgd_update %p4, %g4, %lr : (tensor<8xf32>, tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %5 = genesis.sgd_update %p5, %g5, %lr : (tensor<8xf32>, tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %6 = genesis.sgd_update %p6, %g6, %lr : (tensor<8xf32>, tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %7 = genesis.sgd_update %p7, %g7, %lr : (tensor<8xf32>, tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %8 = genesis.sgd_update %p8, %g8, %lr : (tensor<8xf32>, tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %9 = genesis.sgd_update %p9, %g9, %lr : (tensor<8xf32>, tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %10 = genesis.sgd_update %p10, %g10, %lr : (tensor<8xf32>, tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %11 = genesis.sgd_update %p11, %g11, %lr : (tensor<8xf32>, tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %12 = genesis.sgd_update %p12, %g12, %lr : (tensor<8xf32>, tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %13 = genesis.sgd_update %p13, %g13, %lr : (tensor<8xf32>, tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %14 = genesis.sgd_update %p14, %g14, %lr : (tensor<8xf32>, tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %15 = genesis.sgd_update %p15, %g15, %lr : (tensor<8xf32>, tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %16 = genesis.sgd_update %p16, %g16, %lr : (tensor<8xf32>, tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}

// -----

// An update reading a tensor an earlier one overwrites in place (its
// parameter as this one's gradient) or reuses (a gradient they share) ends
// the run: the kernel would run them in no order.
// CHECK-LABEL: func.func @shared_tensors(
// CHECK-NOT: genesis.fusion
// CHECK-COUNT-3: genesis.sgd_update
// CHECK-NOT: genesis.fusion
func.func @shared_tensors(%p: tensor<8xf32>, %g: tensor<8xf32>, %q: tensor<8xf32>, %r: tensor<8xf32>, %lr: tensor<f32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %0 = genesis.sgd_update %p, %g, %lr : (tensor<8xf32>, tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %1 = genesis.sgd_update %q, %p, %lr : (tensor<8xf32>, tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %2 = genesis.sgd_update %r, %p, %lr : (tensor<8xf32>, tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  return %0, %1, %2 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}
