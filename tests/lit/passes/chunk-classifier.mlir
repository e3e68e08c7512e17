// RUN: genesis-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(genesis-chunk-classifier{min-logits-bytes=0 min-chunk-rows=2}))' | FileCheck %s
// RUN: genesis-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(genesis-chunk-classifier))' | FileCheck %s --check-prefix=SMALL

// A classifier (bias epilogue), its fused loss, dX = dlogits @ W and
// dW = dlogits^T @ X over 8 rows. Logits of 8 x 1024 bf16 (16 KiB) against a
// 4 KiB weight gradient: 2 chunks of 4 rows (8 + 8 KiB live) beat 1 (16 + 4)
// and 4 (4 + 16). Each chunk's GEMM, loss and products come before the next
// chunk's GEMM; the losses and dX are concatenated, the dW partials summed
// in f32.
// CHECK-LABEL: func.func @classifier(
// CHECK: %[[X0:.+]] = genesis.slice %arg0 start [0, 0] limit [4, 2]
// CHECK: %[[L0:.+]] = genesis.library_call bias %[[X0]], %arg1 transpose_rhs bias %arg2 {{.*}} -> tensor<4x1024xbf16>
// CHECK: %[[Y0:.+]] = genesis.slice %arg3 start [0] limit [4]
// CHECK: %[[C0:.+]] = genesis.slice %arg4 start [0] limit [4]
// CHECK: %[[LOSS0:.+]], %[[G0:.+]] = genesis.cross_entropy_with_grad %[[L0]], %[[Y0]], %[[C0]] {ignore_index = 7 : i64, label_smoothing = 1.000000e-01 : f64}
// CHECK: %[[DX0:.+]] = genesis.matmul %[[G0]], %arg1 :
// CHECK: %[[DW0:.+]] = genesis.matmul %[[G0]], %[[X0]] transpose_lhs
// CHECK: %[[X1:.+]] = genesis.slice %arg0 start [4, 0] limit [8, 2]
// CHECK: genesis.library_call bias %[[X1]]
// CHECK: %[[LOSS1:.+]], %[[G1:.+]] = genesis.cross_entropy_with_grad {{.+}} {ignore_index = 7 : i64, label_smoothing = 1.000000e-01 : f64}
// CHECK: %[[DX1:.+]] = genesis.matmul %[[G1]], %arg1 :
// CHECK: %[[DW1:.+]] = genesis.matmul %[[G1]], %[[X1]] transpose_lhs
// CHECK: %[[DX:.+]] = genesis.concat %[[DX0]], %[[DX1]] dim 0
// CHECK: %[[W0:.+]] = genesis.cast %[[DW0]] : tensor<1024x2xbf16> to tensor<1024x2xf32>
// CHECK: %[[W1:.+]] = genesis.cast %[[DW1]] : tensor<1024x2xbf16> to tensor<1024x2xf32>
// CHECK: %[[SUM:.+]] = genesis.add %[[W0]], %[[W1]]
// CHECK: %[[DW:.+]] = genesis.cast %[[SUM]] : tensor<1024x2xf32> to tensor<1024x2xbf16>
// CHECK: %[[LOSS:.+]] = genesis.concat %[[LOSS0]], %[[LOSS1]] dim 0
// CHECK-NOT: genesis.cross_entropy_with_grad
// CHECK: return %[[LOSS]], %[[DX]], %[[DW]]
// Below the default 256 MiB of logits nothing changes.
// SMALL-LABEL: func.func @classifier(
// SMALL-COUNT-1: genesis.cross_entropy_with_grad
// SMALL-NOT: genesis.slice
func.func @classifier(%x: tensor<8x2xbf16>, %w: tensor<1024x2xbf16>, %b: tensor<1024xbf16>, %y: tensor<8xi64>, %c: tensor<8xf32>) -> (tensor<8xf32>, tensor<8x2xbf16>, tensor<1024x2xbf16>) {
  %logits = genesis.library_call bias %x, %w transpose_rhs bias %b : (tensor<8x2xbf16>, tensor<1024x2xbf16>, tensor<1024xbf16>) -> tensor<8x1024xbf16>
  %loss, %g = genesis.cross_entropy_with_grad %logits, %y, %c {ignore_index = 7 : i64, label_smoothing = 0.1 : f64} : (tensor<8x1024xbf16>, tensor<8xi64>, tensor<8xf32>) -> (tensor<8xf32>, tensor<8x1024xbf16>)
  %dx = genesis.matmul %g, %w : tensor<8x1024xbf16>, tensor<1024x2xbf16>
  %dw = genesis.matmul %g, %x transpose_lhs : tensor<8x1024xbf16>, tensor<8x2xbf16>
  return %loss, %dx, %dw : tensor<8xf32>, tensor<8x2xbf16>, tensor<1024x2xbf16>
}

// -----

// A plain matmul head in f32 with no weight gradient (a frozen classifier):
// the chunks are as small as min-chunk-rows allows, and f32 needs no casts.
// CHECK-LABEL: func.func @frozen(
// CHECK-COUNT-4: genesis.cross_entropy_with_grad {{.+}} -> (tensor<2xf32>, tensor<2x1024xf32>)
// CHECK: genesis.concat {{.+}} dim 0 : tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>
func.func @frozen(%x: tensor<8x2xf32>, %w: tensor<2x1024xf32>, %y: tensor<8xi64>, %c: tensor<8xf32>) -> (tensor<8xf32>, tensor<8x2xf32>) {
  %logits = genesis.matmul %x, %w : tensor<8x2xf32>, tensor<2x1024xf32>
  %loss, %g = genesis.cross_entropy_with_grad %logits, %y, %c : (tensor<8x1024xf32>, tensor<8xi64>, tensor<8xf32>) -> (tensor<8xf32>, tensor<8x1024xf32>)
  %dx = genesis.matmul %g, %w transpose_rhs : tensor<8x1024xf32>, tensor<2x1024xf32>
  return %loss, %dx : tensor<8xf32>, tensor<8x2xf32>
}

// -----

// Left whole: the logits' gradient is also returned (every chunk's gradient
// would have to stay live), and logits read twice.
// CHECK-LABEL: func.func @gradient_returned(
// CHECK-COUNT-1: genesis.cross_entropy_with_grad
// CHECK-NOT: genesis.slice
// CHECK-LABEL: func.func @logits_read_twice(
// CHECK-COUNT-1: genesis.cross_entropy_with_grad
// CHECK-NOT: genesis.slice
func.func @gradient_returned(%x: tensor<8x2xf32>, %w: tensor<2x1024xf32>, %y: tensor<8xi64>, %c: tensor<8xf32>) -> (tensor<8xf32>, tensor<8x1024xf32>) {
  %logits = genesis.matmul %x, %w : tensor<8x2xf32>, tensor<2x1024xf32>
  %loss, %g = genesis.cross_entropy_with_grad %logits, %y, %c : (tensor<8x1024xf32>, tensor<8xi64>, tensor<8xf32>) -> (tensor<8xf32>, tensor<8x1024xf32>)
  return %loss, %g : tensor<8xf32>, tensor<8x1024xf32>
}
func.func @logits_read_twice(%x: tensor<8x2xf32>, %w: tensor<2x1024xf32>, %y: tensor<8xi64>, %c: tensor<8xf32>) -> (tensor<8xf32>, tensor<8x1024xf32>) {
  %logits = genesis.matmul %x, %w : tensor<8x2xf32>, tensor<2x1024xf32>
  %loss, %g = genesis.cross_entropy_with_grad %logits, %y, %c : (tensor<8x1024xf32>, tensor<8xi64>, tensor<8xf32>) -> (tensor<8xf32>, tensor<8x1024xf32>)
  %sum = genesis.add %logits, %g : tensor<8x1024xf32>
  return %loss, %sum : tensor<8xf32>, tensor<8x1024xf32>
}
