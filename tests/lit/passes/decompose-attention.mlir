// RUN: genesis-opt %s --split-input-file --genesis-decompose-attention | FileCheck %s

// GQA (4 query heads, 2 key/value heads), causal, S < T: the queries of a
// key/value head become the rows of one batched GEMM.
// CHECK-LABEL: func.func @forward(
// CHECK-NOT: genesis.attention
// CHECK-DAG: %[[Q:.+]] = genesis.reshape %arg0 : tensor<2x4x3x8xf32> -> tensor<4x6x8xf32>
// CHECK-DAG: %[[K:.+]] = genesis.reshape %arg1 : tensor<2x2x5x8xf32> -> tensor<4x5x8xf32>
// CHECK: genesis.matmul %[[Q]], %[[K]] transpose_rhs
// CHECK: genesis.iota dim 0 : tensor<3x5xi64>
// CHECK: genesis.compare le
// CHECK: genesis.reduce_max {{.+}} dims [3] keepdim
// CHECK: genesis.exp
// CHECK: genesis.reduce_sum {{.+}} dims [3] keepdim
// CHECK: genesis.div
// CHECK: genesis.matmul {{.+}} : tensor<4x6x5xf32>, tensor<4x5x6xf32>
// CHECK: genesis.reshape {{.+}} : tensor<4x6x6xf32> -> tensor<2x4x3x6xf32>
func.func @forward(%q: tensor<2x4x3x8xf32>, %k: tensor<2x2x5x8xf32>, %v: tensor<2x2x5x6xf32>) -> tensor<2x4x3x6xf32> {
  %0 = genesis.attention %q, %k, %v causal scale 0.35 : (tensor<2x4x3x8xf32>, tensor<2x2x5x8xf32>, tensor<2x2x5x6xf32>) -> tensor<2x4x3x6xf32>
  return %0 : tensor<2x4x3x6xf32>
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
