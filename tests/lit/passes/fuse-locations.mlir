// RUN: genesis-opt %s --genesis-fuse --mlir-print-debuginfo | FileCheck %s

// A library call is located at its GEMM and the ops it absorbed, a fusion at
// the ops moved into it (not the cloned constant), each named after its op
// (memberLocation, dialect/IR/Provenance.h); the ops inside keep their own
// locations.

// CHECK-DAG: #[[MATMUL:loc[0-9]+]] = loc("matmul")
// CHECK-DAG: #[[ADD:loc[0-9]+]] = loc("add")
// CHECK-DAG: #[[RELU:loc[0-9]+]] = loc("relu")
// CHECK-DAG: #[[NAMED_MATMUL:loc[0-9]+]] = loc("genesis.matmul"(#[[MATMUL]]))
// CHECK-DAG: #[[NAMED_ADD:loc[0-9]+]] = loc("genesis.add"(#[[ADD]]))
// CHECK-DAG: #[[NAMED_RELU:loc[0-9]+]] = loc("genesis.relu"(#[[RELU]]))
// CHECK-DAG: #[[CALL:loc[0-9]+]] = loc(fused[#[[NAMED_MATMUL]], #[[NAMED_ADD]], #[[NAMED_RELU]]])
// CHECK-LABEL: func.func @locations
// CHECK: genesis.library_call bias_relu {{.*}} loc(#[[CALL]])
// CHECK: genesis.fusion
// CHECK: genesis.constant {{.*}} loc(#[[TWO:loc[0-9]+]])
// CHECK-NEXT: genesis.mul {{.*}} loc(#[[MUL:loc[0-9]+]])
// CHECK-NEXT: genesis.exp {{.*}} loc(#[[EXP:loc[0-9]+]])
// CHECK-NEXT: genesis.reduce_sum {{.*}} loc(#[[SUM:loc[0-9]+]])
// CHECK-NEXT: genesis.yield {{.*}} loc(#[[FUSION:loc[0-9]+]])
// CHECK-NEXT: } loc(#[[FUSION]])
// CHECK-DAG: #[[TWO]] = loc("two")
// CHECK-DAG: #[[MUL]] = loc("mul")
// CHECK-DAG: #[[EXP]] = loc("exp")
// CHECK-DAG: #[[SUM]] = loc("sum")
// CHECK-DAG: #[[NAMED_MUL:loc[0-9]+]] = loc("genesis.mul"(#[[MUL]]))
// CHECK-DAG: #[[NAMED_EXP:loc[0-9]+]] = loc("genesis.exp"(#[[EXP]]))
// CHECK-DAG: #[[NAMED_SUM:loc[0-9]+]] = loc("genesis.reduce_sum"(#[[SUM]]))
// CHECK-DAG: #[[FUSION]] = loc(fused[#[[NAMED_MUL]], #[[NAMED_EXP]], #[[NAMED_SUM]]])
func.func @locations(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>, %b: tensor<16xf32>) -> (tensor<4x16xf32>, tensor<4xf32>) {
  %0 = genesis.matmul %x, %w transpose_rhs : tensor<4x8xf32>, tensor<16x8xf32> loc("matmul")
  %1 = genesis.broadcast_in_dim %b, [1] : tensor<16xf32> -> tensor<4x16xf32> loc("broadcast")
  %2 = genesis.add %0, %1 : tensor<4x16xf32> loc("add")
  %3 = genesis.relu %2 : tensor<4x16xf32> loc("relu")
  %c = genesis.constant dense<2.0> : tensor<4x16xf32> loc("two")
  %4 = genesis.mul %3, %c : tensor<4x16xf32> loc("mul")
  %5 = genesis.exp %4 : tensor<4x16xf32> loc("exp")
  %6 = genesis.reduce_sum %5 dims [1] : tensor<4x16xf32> loc("sum")
  return %3, %6 : tensor<4x16xf32>, tensor<4xf32>
}
