// RUN: genesis-opt %s --split-input-file --genesis-widen-16bit | FileCheck %s

// bf16 and f16 arithmetic is computed in f32 and rounded once; ops that only
// move values (cast, broadcast, transpose) and integer operands stay as they
// are, and a 16-bit cross-entropy keeps its f32 loss.
// CHECK-LABEL: func.func @widen
// CHECK: %[[XT:.+]] = genesis.transpose %arg0, [1, 0] : tensor<2x3xbf16>
// CHECK: %[[XW:.+]] = genesis.cast %[[XT]] : tensor<3x2xbf16> to tensor<3x2xf32>
// CHECK: %[[E:.+]] = genesis.exp %[[XW]] : tensor<3x2xf32>
// CHECK: %[[EN:.+]] = genesis.cast %[[E]] : tensor<3x2xf32> to tensor<3x2xbf16>
// CHECK: %[[LW:.+]] = genesis.cast %arg1 : tensor<4x5xf16> to tensor<4x5xf32>
// CHECK: %[[L:.+]] = genesis.cross_entropy %[[LW]], %arg2 : (tensor<4x5xf32>, tensor<4xi64>) -> tensor<f32>
// CHECK: return %[[EN]], %[[L]]
func.func @widen(%x: tensor<2x3xbf16>, %logits: tensor<4x5xf16>, %labels: tensor<4xi64>) -> (tensor<3x2xbf16>, tensor<f32>) {
  %t = genesis.transpose %x, [1, 0] : tensor<2x3xbf16>
  %e = genesis.exp %t : tensor<3x2xbf16>
  %l = genesis.cross_entropy %logits, %labels : (tensor<4x5xf16>, tensor<4xi64>) -> tensor<f32>
  return %e, %l : tensor<3x2xbf16>, tensor<f32>
}

// -----

// f32 and f64 code is left alone.
// CHECK-LABEL: func.func @wide
// CHECK-NEXT: genesis.exp %arg0 : tensor<4xf32>
// CHECK-NEXT: return
func.func @wide(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = genesis.exp %x : tensor<4xf32>
  return %e : tensor<4xf32>
}
