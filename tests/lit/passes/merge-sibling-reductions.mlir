// RUN: genesis-opt %s --split-input-file --genesis-merge-sibling-reductions | FileCheck %s

// A LayerNorm weight and bias gradient's partials: two column reductions of
// the same [4, 8, 16] operands over dimension 1, both reading %dy, become
// one fusion in the first one's place; the later one's side result (the
// input gradient) comes along.
// CHECK-LABEL: func.func @columns(
// CHECK: %[[F:.+]]:3 = genesis.fusion %arg0, %arg1 : (tensor<4x8x16xf32>, tensor<4x8x16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x8x16xf32>) {
// CHECK: genesis.reduce_sum
// CHECK: genesis.reduce_sum
// CHECK: genesis.yield
// CHECK-NOT: genesis.fusion
// CHECK: return %[[F]]#0, %[[F]]#1, %[[F]]#2
func.func @columns(%x: tensor<4x8x16xf32>, %dy: tensor<4x8x16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x8x16xf32>) {
  %0 = genesis.fusion %x, %dy : (tensor<4x8x16xf32>, tensor<4x8x16xf32>) -> tensor<4x16xf32> {
  ^bb0(%a: tensor<4x8x16xf32>, %b: tensor<4x8x16xf32>):
    %1 = genesis.mul %a, %b : tensor<4x8x16xf32>
    %2 = genesis.reduce_sum %1 dims [1] : tensor<4x8x16xf32>
    genesis.yield %2 : tensor<4x16xf32>
  }
  %1:2 = genesis.fusion %dy : (tensor<4x8x16xf32>) -> (tensor<4x16xf32>, tensor<4x8x16xf32>) {
  ^bb0(%b: tensor<4x8x16xf32>):
    %2 = genesis.neg %b : tensor<4x8x16xf32>
    %3 = genesis.reduce_sum %b dims [1] : tensor<4x8x16xf32>
    genesis.yield %3, %2 : tensor<4x16xf32>, tensor<4x8x16xf32>
  }
  return %0, %1#0, %1#1 : tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x8x16xf32>
}

// -----

// Two row sums of one tensor (a LayerNorm backward's) become one fusion.
// CHECK-LABEL: func.func @rows(
// CHECK: %[[F:.+]]:2 = genesis.fusion %arg0, %arg1 : (tensor<4x8xf32>, tensor<8xf32>) -> (tensor<4xf32>, tensor<4xf32>)
// CHECK-NOT: genesis.fusion
func.func @rows(%dy: tensor<4x8xf32>, %w: tensor<8xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = genesis.fusion %dy, %w : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4x8xf32>, %b: tensor<8xf32>):
    %1 = genesis.broadcast_in_dim %b, [1] : tensor<8xf32> -> tensor<4x8xf32>
    %2 = genesis.mul %a, %1 : tensor<4x8xf32>
    %3 = genesis.reduce_sum %2 dims [1] : tensor<4x8xf32>
    genesis.yield %3 : tensor<4xf32>
  }
  %1 = genesis.fusion %dy : (tensor<4x8xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4x8xf32>):
    %2 = genesis.reduce_sum %a dims [1] : tensor<4x8xf32>
    genesis.yield %2 : tensor<4xf32>
  }
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// Second stages reading two results of one fusion (the merged partials):
// one fusion.
// CHECK-LABEL: func.func @second_stages(
// CHECK: genesis.fusion %arg0
// CHECK: %[[F:.+]]:2 = genesis.fusion %{{.+}}#0, %{{.+}}#1 : (tensor<4x16xf32>, tensor<4x16xf32>) -> (tensor<16xf32>, tensor<16xf32>)
// CHECK-NOT: genesis.fusion
func.func @second_stages(%x: tensor<4x8x16xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  %0:2 = genesis.fusion %x : (tensor<4x8x16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>) {
  ^bb0(%a: tensor<4x8x16xf32>):
    %1 = genesis.reduce_sum %a dims [1] : tensor<4x8x16xf32>
    %2 = genesis.reduce_max %a dims [1] : tensor<4x8x16xf32>
    genesis.yield %1, %2 : tensor<4x16xf32>, tensor<4x16xf32>
  }
  %1 = genesis.fusion %0#0 : (tensor<4x16xf32>) -> tensor<16xf32> {
  ^bb0(%p: tensor<4x16xf32>):
    %2 = genesis.reduce_sum %p dims [0] : tensor<4x16xf32>
    genesis.yield %2 : tensor<16xf32>
  }
  %2 = genesis.fusion %0#1 : (tensor<4x16xf32>) -> tensor<16xf32> {
  ^bb0(%p: tensor<4x16xf32>):
    %3 = genesis.reduce_max %p dims [0] : tensor<4x16xf32>
    genesis.yield %3 : tensor<16xf32>
  }
  return %1, %2 : tensor<16xf32>, tensor<16xf32>
}

// -----

// Left apart: different reduced dimensions (%0, %1); a later fusion
// reading %y beside a value computed after %2 (%3's), so the merged fusion
// could not take %2's place.
// CHECK-LABEL: func.func @left_alone(
// CHECK-COUNT-5: genesis.fusion
func.func @left_alone(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> (tensor<4xf32>, tensor<8xf32>, tensor<4xf32>, tensor<4xf32>) {
  %0 = genesis.fusion %x : (tensor<4x8xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4x8xf32>):
    %1 = genesis.reduce_sum %a dims [1] : tensor<4x8xf32>
    genesis.yield %1 : tensor<4xf32>
  }
  %1 = genesis.fusion %x : (tensor<4x8xf32>) -> tensor<8xf32> {
  ^bb0(%a: tensor<4x8xf32>):
    %2 = genesis.reduce_sum %a dims [0] : tensor<4x8xf32>
    genesis.yield %2 : tensor<8xf32>
  }
  %2 = genesis.fusion %y : (tensor<4x8xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4x8xf32>):
    %3 = genesis.reduce_max %a dims [1] : tensor<4x8xf32>
    genesis.yield %3 : tensor<4xf32>
  }
  %3 = genesis.fusion %y : (tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: tensor<4x8xf32>):
    %4 = genesis.exp %a : tensor<4x8xf32>
    genesis.yield %4 : tensor<4x8xf32>
  }
  %4 = genesis.fusion %3, %y : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4xf32> {
  ^bb0(%e: tensor<4x8xf32>, %a: tensor<4x8xf32>):
    %5 = genesis.mul %a, %e : tensor<4x8xf32>
    %6 = genesis.reduce_sum %5 dims [1] : tensor<4x8xf32>
    genesis.yield %6 : tensor<4xf32>
  }
  return %0, %1, %2, %4 : tensor<4xf32>, tensor<8xf32>, tensor<4xf32>, tensor<4xf32>
}
