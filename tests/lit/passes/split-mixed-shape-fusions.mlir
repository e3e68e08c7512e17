// RUN: genesis-opt %s --split-input-file --genesis-split-mixed-shape-fusions | FileCheck %s
// RUN: genesis-opt %s --split-input-file --genesis-split-mixed-shape-fusions="gpu-profitable=true" | FileCheck %s --check-prefix=CUDA

// A multi-output fusion (a row sum beside its operand) becomes one fusion
// per result shape, in order of first appearance; each recomputes the
// producers it needs and drops what it does not.
// CHECK-LABEL: func.func @mixed(
// CHECK: %[[E:.+]] = genesis.fusion %arg0, %arg1 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK: genesis.mul
// CHECK-NEXT: genesis.exp
// CHECK-NEXT: genesis.yield
// CHECK: %[[S:.+]] = genesis.fusion %arg0, %arg1 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4xf32> {
// CHECK: genesis.mul
// CHECK-NEXT: genesis.exp
// CHECK-NEXT: genesis.reduce_sum
// CHECK-NEXT: genesis.yield
// CHECK: return %[[S]], %[[E]]
// The CUDA pipeline's setting keeps it whole: no side result feeds a fusion.
// CUDA-LABEL: func.func @mixed(
// CUDA: genesis.fusion
// CUDA-NOT: genesis.fusion
// CUDA: return
func.func @mixed(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> (tensor<4xf32>, tensor<4x8xf32>) {
  %0:2 = genesis.fusion %x, %y : (tensor<4x8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>) {
  ^bb0(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>):
    %1 = genesis.mul %a, %b : tensor<4x8xf32>
    %2 = genesis.exp %1 : tensor<4x8xf32>
    %3 = genesis.reduce_sum %2 dims [1] : tensor<4x8xf32>
    genesis.yield %2, %3 : tensor<4x8xf32>, tensor<4xf32>
  }
  return %0#1, %0#0 : tensor<4xf32>, tensor<4x8xf32>
}

// -----

// Results of one shape stay one fusion.
// CHECK-LABEL: func.func @same_shape(
// CHECK: genesis.fusion
// CHECK-NOT: genesis.fusion
func.func @same_shape(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %0:2 = genesis.fusion %x : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  ^bb0(%a: tensor<4x8xf32>):
    %1 = genesis.exp %a : tensor<4x8xf32>
    %2 = genesis.neg %1 : tensor<4x8xf32>
    genesis.yield %1, %2 : tensor<4x8xf32>, tensor<4x8xf32>
  }
  return %0#0, %0#1 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// A column reduction keeping 8 elements (under 512) is split in both
// settings.
// CHECK-LABEL: func.func @column(
// CHECK-COUNT-2: genesis.fusion
// CUDA-LABEL: func.func @column(
// CUDA-COUNT-2: genesis.fusion
func.func @column(%x: tensor<64x8xf32>) -> (tensor<8xf32>, tensor<64x8xf32>) {
  %0:2 = genesis.fusion %x : (tensor<64x8xf32>) -> (tensor<64x8xf32>, tensor<8xf32>) {
  ^bb0(%a: tensor<64x8xf32>):
    %1 = genesis.relu %a : tensor<64x8xf32>
    %2 = genesis.reduce_sum %1 dims [0] : tensor<64x8xf32>
    genesis.yield %1, %2 : tensor<64x8xf32>, tensor<8xf32>
  }
  return %0#1, %0#0 : tensor<8xf32>, tensor<64x8xf32>
}

// -----

// A column reduction keeping 512 elements whose side result feeds a GEMM
// (a bias gradient beside the activation's gradient) stays whole on the GPU.
// CHECK-LABEL: func.func @wide_column(
// CHECK-COUNT-2: genesis.fusion
// CUDA-LABEL: func.func @wide_column(
// CUDA: genesis.fusion
// CUDA-NOT: genesis.fusion
func.func @wide_column(%x: tensor<64x512xf32>, %w: tensor<512x4xf32>) -> (tensor<512xf32>, tensor<64x4xf32>) {
  %0:2 = genesis.fusion %x : (tensor<64x512xf32>) -> (tensor<64x512xf32>, tensor<512xf32>) {
  ^bb0(%a: tensor<64x512xf32>):
    %1 = genesis.relu %a : tensor<64x512xf32>
    %2 = genesis.reduce_sum %1 dims [0] : tensor<64x512xf32>
    genesis.yield %1, %2 : tensor<64x512xf32>, tensor<512xf32>
  }
  %3 = genesis.matmul %0#0, %w : tensor<64x512xf32>, tensor<512x4xf32>
  return %0#1, %3 : tensor<512xf32>, tensor<64x4xf32>
}

// -----

// A side result that feeds another fusion (a chain genesis-merge-row-fusions
// makes one row fusion): split on the GPU when the rows are longer than 4096,
// kept whole when they are not.
// CHECK-LABEL: func.func @feeds_fusion(
// CHECK-COUNT-6: genesis.fusion
// CUDA-LABEL: func.func @feeds_fusion(
// CUDA-COUNT-5: genesis.fusion
// CUDA-NOT: genesis.fusion
func.func @feeds_fusion(%x: tensor<4x8192xf32>, %y: tensor<4x8xf32>) -> (tensor<4x8192xf32>, tensor<4x8xf32>) {
  %0:2 = genesis.fusion %x : (tensor<4x8192xf32>) -> (tensor<4x8192xf32>, tensor<4x1xf32>) {
  ^bb0(%a: tensor<4x8192xf32>):
    %1 = genesis.exp %a : tensor<4x8192xf32>
    %2 = genesis.reduce_sum %1 dims [1] keepdim : tensor<4x8192xf32>
    genesis.yield %1, %2 : tensor<4x8192xf32>, tensor<4x1xf32>
  }
  %3 = genesis.fusion %0#0, %0#1 : (tensor<4x8192xf32>, tensor<4x1xf32>) -> tensor<4x8192xf32> {
  ^bb0(%e: tensor<4x8192xf32>, %s: tensor<4x1xf32>):
    %4 = genesis.broadcast_in_dim %s, [0, 1] : tensor<4x1xf32> -> tensor<4x8192xf32>
    %5 = genesis.div %e, %4 : tensor<4x8192xf32>
    genesis.yield %5 : tensor<4x8192xf32>
  }
  %6:2 = genesis.fusion %y : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x1xf32>) {
  ^bb0(%a: tensor<4x8xf32>):
    %7 = genesis.exp %a : tensor<4x8xf32>
    %8 = genesis.reduce_sum %7 dims [1] keepdim : tensor<4x8xf32>
    genesis.yield %7, %8 : tensor<4x8xf32>, tensor<4x1xf32>
  }
  %9 = genesis.fusion %6#0, %6#1 : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32> {
  ^bb0(%e: tensor<4x8xf32>, %s: tensor<4x1xf32>):
    %10 = genesis.broadcast_in_dim %s, [0, 1] : tensor<4x1xf32> -> tensor<4x8xf32>
    %11 = genesis.div %e, %10 : tensor<4x8xf32>
    genesis.yield %11 : tensor<4x8xf32>
  }
  return %3, %9 : tensor<4x8192xf32>, tensor<4x8xf32>
}
