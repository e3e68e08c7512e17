// RUN: genesis-opt %s --split-input-file --genesis-decompose-attention | FileCheck %s

// GQA (4 query heads, 2 key/value heads), causal, S < T: the queries of a
// key/value head (2 x 9 = 18 rows, above 16) become the rows of one batched
// GEMM.
// CHECK-LABEL: func.func @forward(
// CHECK-NOT: genesis.attention
// CHECK-DAG: %[[Q:.+]] = genesis.reshape %arg0 : tensor<2x4x9x8xf32> -> tensor<4x18x8xf32>
// CHECK-DAG: %[[K:.+]] = genesis.reshape %arg1 : tensor<2x2x11x8xf32> -> tensor<4x11x8xf32>
// CHECK: genesis.matmul %[[Q]], %[[K]] transpose_rhs
// CHECK: genesis.iota dim 0 : tensor<9x11xi64>
// CHECK: genesis.compare le
// CHECK: genesis.reduce_max {{.+}} dims [3] keepdim
// CHECK: genesis.exp
// CHECK: genesis.reduce_sum {{.+}} dims [3] keepdim
// CHECK: genesis.div
// CHECK: genesis.matmul {{.+}} : tensor<4x18x11xf32>, tensor<4x11x6xf32>
// CHECK: genesis.reshape {{.+}} : tensor<4x18x6xf32> -> tensor<2x4x9x6xf32>
func.func @forward(%q: tensor<2x4x9x8xf32>, %k: tensor<2x2x11x8xf32>, %v: tensor<2x2x11x6xf32>) -> tensor<2x4x9x6xf32> {
  %0 = genesis.attention %q, %k, %v causal scale 0.35 : (tensor<2x4x9x8xf32>, tensor<2x2x11x8xf32>, tensor<2x2x11x6xf32>) -> tensor<2x4x9x6xf32>
  return %0 : tensor<2x4x9x6xf32>
}

// -----

// A decode step (one query, 3 query heads per key/value head: 3 rows, at
// most 16): both products are row reductions of broadcast products, one
// warp per output on the GPU, instead of GEMMs of one tile per batch.
// CHECK-LABEL: func.func @few_query_rows(
// CHECK-NOT: genesis.matmul
// CHECK-DAG: %[[Q:.+]] = genesis.reshape %arg0 : tensor<1x6x1x8xf32> -> tensor<2x3x8xf32>
// CHECK-DAG: %[[K:.+]] = genesis.reshape %arg1 : tensor<1x2x10x8xf32> -> tensor<2x10x8xf32>
// CHECK-DAG: %[[QB:.+]] = genesis.broadcast_in_dim %[[Q]], [0, 1, 3] : tensor<2x3x8xf32> -> tensor<2x3x10x8xf32>
// CHECK-DAG: %[[KB:.+]] = genesis.broadcast_in_dim %[[K]], [0, 2, 3] : tensor<2x10x8xf32> -> tensor<2x3x10x8xf32>
// CHECK: %[[QK:.+]] = genesis.mul %[[QB]], %[[KB]]
// CHECK: genesis.reduce_sum %[[QK]] dims [3] : tensor<2x3x10x8xf32>
// CHECK: genesis.div
// CHECK: %[[VT:.+]] = genesis.transpose {{.+}}, [0, 2, 1] : tensor<2x10x4xf32>
// CHECK-DAG: %[[PB:.+]] = genesis.broadcast_in_dim {{.+}}, [0, 1, 3] : tensor<2x3x10xf32> -> tensor<2x3x4x10xf32>
// CHECK-DAG: %[[VB:.+]] = genesis.broadcast_in_dim %[[VT]], [0, 2, 3] : tensor<2x4x10xf32> -> tensor<2x3x4x10xf32>
// CHECK: %[[PV:.+]] = genesis.mul %[[PB]], %[[VB]]
// CHECK: %[[O:.+]] = genesis.reduce_sum %[[PV]] dims [3] : tensor<2x3x4x10xf32>
// CHECK: genesis.reshape %[[O]] : tensor<2x3x4xf32> -> tensor<1x6x1x4xf32>
func.func @few_query_rows(%q: tensor<1x6x1x8xf32>, %k: tensor<1x2x10x8xf32>, %v: tensor<1x2x10x4xf32>) -> tensor<1x6x1x4xf32> {
  %0 = genesis.attention %q, %k, %v scale 0.35 : (tensor<1x6x1x8xf32>, tensor<1x2x10x8xf32>, tensor<1x2x10x4xf32>) -> tensor<1x6x1x4xf32>
  return %0 : tensor<1x6x1x4xf32>
}

// -----

// The gradient: dV = P^T dO and dK = scale dS^T Q sum over the group inside
// transposed-lhs GEMMs.
// CHECK-LABEL: func.func @backward(
// CHECK-NOT: genesis.attention_grad
// CHECK: genesis.matmul {{.+}} transpose_lhs : tensor<2x8x4xf32>, tensor<2x8x4xf32>
// CHECK: genesis.matmul {{.+}} transpose_rhs : tensor<2x8x4xf32>, tensor<2x4x4xf32>
// CHECK: genesis.reduce_sum {{.+}} dims [3] keepdim
// CHECK: genesis.matmul {{.+}} transpose_lhs : tensor<2x8x4xf32>, tensor<2x8x4xf32>
func.func @backward(%q: tensor<1x4x4x4xf32>, %k: tensor<1x2x4x4xf32>, %v: tensor<1x2x4x4xf32>, %o: tensor<1x4x4x4xf32>, %g: tensor<1x4x4x4xf32>) -> (tensor<1x4x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) {
  %0:3 = genesis.attention_grad %q, %k, %v, %o, %g causal scale 0.5 : (tensor<1x4x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>) -> (tensor<1x4x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>)
  return %0#0, %0#1, %0#2 : tensor<1x4x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
}
