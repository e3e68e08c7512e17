// RUN: genesis-opt %s --split-input-file --genesis-merge-row-fusions | FileCheck %s

// softmax's backward as genesis-fuse leaves it: a row sum, then the
// elementwise rest that reads it. The sum is used only by the consumer, so
// the two merge into one row fusion yielding dx alone.
// CHECK-LABEL: func.func @softmax_backward(
// CHECK: %[[F:.+]] = genesis.fusion %arg1, %arg0 : (tensor<4x96xf32>, tensor<4x96xf32>) -> tensor<4x96xf32> {
// CHECK: genesis.reduce_sum
// CHECK: genesis.broadcast_in_dim
// CHECK: genesis.yield %{{.+}} : tensor<4x96xf32>
// CHECK-NOT: genesis.fusion
// CHECK: return %[[F]]
func.func @softmax_backward(%y: tensor<4x96xf32>, %g: tensor<4x96xf32>) -> tensor<4x96xf32> {
  %0 = genesis.fusion %g, %y : (tensor<4x96xf32>, tensor<4x96xf32>) -> tensor<4x1xf32> {
  ^bb0(%a: tensor<4x96xf32>, %b: tensor<4x96xf32>):
    %1 = genesis.mul %a, %b : tensor<4x96xf32>
    %2 = genesis.reduce_sum %1 dims [1] keepdim : tensor<4x96xf32>
    genesis.yield %2 : tensor<4x1xf32>
  }
  %1 = genesis.fusion %g, %0, %y : (tensor<4x96xf32>, tensor<4x1xf32>, tensor<4x96xf32>) -> tensor<4x96xf32> {
  ^bb0(%a: tensor<4x96xf32>, %s: tensor<4x1xf32>, %b: tensor<4x96xf32>):
    %2 = genesis.broadcast_in_dim %s, [0, 1] : tensor<4x1xf32> -> tensor<4x96xf32>
    %3 = genesis.sub %a, %2 : tensor<4x96xf32>
    %4 = genesis.mul %b, %3 : tensor<4x96xf32>
    genesis.yield %4 : tensor<4x96xf32>
  }
  return %1 : tensor<4x96xf32>
}

// -----

// A producer whose result is also returned keeps that result: the merge
// drops nothing but saves the consumer's second pass over x, so it is taken
// for rows of at most 4096 elements; the merged fusion yields the sum too.
// CHECK-LABEL: func.func @sum_used_elsewhere(
// CHECK: %[[F:.+]]:2 = genesis.fusion %arg0 : (tensor<4x96xf32>) -> (tensor<4x1xf32>, tensor<4x96xf32>) {
// CHECK: genesis.reduce_sum
// CHECK: genesis.sub
// CHECK: genesis.yield
// CHECK-NOT: genesis.fusion
// CHECK: return %[[F]]#0, %[[F]]#1
func.func @sum_used_elsewhere(%x: tensor<4x96xf32>) -> (tensor<4x1xf32>, tensor<4x96xf32>) {
  %0 = genesis.fusion %x : (tensor<4x96xf32>) -> tensor<4x1xf32> {
  ^bb0(%a: tensor<4x96xf32>):
    %1 = genesis.reduce_sum %a dims [1] keepdim : tensor<4x96xf32>
    genesis.yield %1 : tensor<4x1xf32>
  }
  %1 = genesis.fusion %x, %0 : (tensor<4x96xf32>, tensor<4x1xf32>) -> tensor<4x96xf32> {
  ^bb0(%a: tensor<4x96xf32>, %s: tensor<4x1xf32>):
    %2 = genesis.broadcast_in_dim %s, [0, 1] : tensor<4x1xf32> -> tensor<4x96xf32>
    %3 = genesis.sub %a, %2 : tensor<4x96xf32>
    genesis.yield %3 : tensor<4x96xf32>
  }
  return %0, %1 : tensor<4x1xf32>, tensor<4x96xf32>
}

// -----

// The same over rows of 8192 elements: a merge that drops nothing is not
// taken (the row kernel would hold more than 4 elements a thread).
// CHECK-LABEL: func.func @wide_sum_used_elsewhere(
// CHECK-COUNT-2: genesis.fusion
func.func @wide_sum_used_elsewhere(%x: tensor<4x8192xf32>) -> (tensor<4x1xf32>, tensor<4x8192xf32>) {
  %0 = genesis.fusion %x : (tensor<4x8192xf32>) -> tensor<4x1xf32> {
  ^bb0(%a: tensor<4x8192xf32>):
    %1 = genesis.reduce_sum %a dims [1] keepdim : tensor<4x8192xf32>
    genesis.yield %1 : tensor<4x1xf32>
  }
  %1 = genesis.fusion %x, %0 : (tensor<4x8192xf32>, tensor<4x1xf32>) -> tensor<4x8192xf32> {
  ^bb0(%a: tensor<4x8192xf32>, %s: tensor<4x1xf32>):
    %2 = genesis.broadcast_in_dim %s, [0, 1] : tensor<4x1xf32> -> tensor<4x8192xf32>
    %3 = genesis.sub %a, %2 : tensor<4x8192xf32>
    genesis.yield %3 : tensor<4x8192xf32>
  }
  return %0, %1 : tensor<4x1xf32>, tensor<4x8192xf32>
}

// -----

// A column sum is no row reduction: nothing merges.
// CHECK-LABEL: func.func @column_sum(
// CHECK-COUNT-2: genesis.fusion
func.func @column_sum(%x: tensor<4x96xf32>) -> tensor<4x96xf32> {
  %0 = genesis.fusion %x : (tensor<4x96xf32>) -> tensor<96xf32> {
  ^bb0(%a: tensor<4x96xf32>):
    %1 = genesis.reduce_sum %a dims [0] : tensor<4x96xf32>
    genesis.yield %1 : tensor<96xf32>
  }
  %1 = genesis.fusion %x, %0 : (tensor<4x96xf32>, tensor<96xf32>) -> tensor<4x96xf32> {
  ^bb0(%a: tensor<4x96xf32>, %s: tensor<96xf32>):
    %2 = genesis.broadcast_in_dim %s, [1] : tensor<96xf32> -> tensor<4x96xf32>
    %3 = genesis.sub %a, %2 : tensor<4x96xf32>
    genesis.yield %3 : tensor<4x96xf32>
  }
  return %1 : tensor<4x96xf32>
}

// -----

// The same with rows of 65537 elements, wider than a block per row holds
// (kMaxBlockRowColumns = 65536): nothing merges, so the row sum stays a
// reduction fusion, whose code does not grow with the row.
// CHECK-LABEL: func.func @wide_rows(
// CHECK: genesis.fusion %arg1, %arg0 : (tensor<2x65537xf32>, tensor<2x65537xf32>) -> tensor<2x1xf32>
// CHECK: genesis.fusion %arg1, %{{.+}}, %arg0 : (tensor<2x65537xf32>, tensor<2x1xf32>, tensor<2x65537xf32>) -> tensor<2x65537xf32>
func.func @wide_rows(%y: tensor<2x65537xf32>, %g: tensor<2x65537xf32>) -> tensor<2x65537xf32> {
  %0 = genesis.fusion %g, %y : (tensor<2x65537xf32>, tensor<2x65537xf32>) -> tensor<2x1xf32> {
  ^bb0(%a: tensor<2x65537xf32>, %b: tensor<2x65537xf32>):
    %1 = genesis.mul %a, %b : tensor<2x65537xf32>
    %2 = genesis.reduce_sum %1 dims [1] keepdim : tensor<2x65537xf32>
    genesis.yield %2 : tensor<2x1xf32>
  }
  %1 = genesis.fusion %g, %0, %y : (tensor<2x65537xf32>, tensor<2x1xf32>, tensor<2x65537xf32>) -> tensor<2x65537xf32> {
  ^bb0(%a: tensor<2x65537xf32>, %s: tensor<2x1xf32>, %b: tensor<2x65537xf32>):
    %2 = genesis.broadcast_in_dim %s, [0, 1] : tensor<2x1xf32> -> tensor<2x65537xf32>
    %3 = genesis.sub %a, %2 : tensor<2x65537xf32>
    %4 = genesis.mul %b, %3 : tensor<2x65537xf32>
    genesis.yield %4 : tensor<2x65537xf32>
  }
  return %1 : tensor<2x65537xf32>
}
