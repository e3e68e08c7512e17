// RUN: not genesis-opt %s --genesis-lower-cuda 2>&1 | FileCheck %s

// The fused loss and gradient's kernel computes in f32 from f32, bf16 or
// f16 logits: f64 logits are refused by name (genesis-fuse-cross-entropy-
// gradient never forms such an op; a hand-written one meets this error).
// CHECK: lower-cuda-cross-entropy-f64.mlir:[[@LINE+2]]:{{[0-9]+}}: error: genesis-lower-cuda: cross_entropy_with_grad takes f32, bf16 or f16 logits of rank 2, not 'tensor<4x2048xf64>'
func.func @f(%x: tensor<4x2048xf64>, %y: tensor<4xi64>, %w: tensor<4xf64>) -> (tensor<4xf64>, tensor<4x2048xf64>) {
  %loss, %dx = genesis.cross_entropy_with_grad %x, %y, %w : (tensor<4x2048xf64>, tensor<4xi64>, tensor<4xf64>) -> (tensor<4xf64>, tensor<4x2048xf64>)
  return %loss, %dx : tensor<4xf64>, tensor<4x2048xf64>
}
