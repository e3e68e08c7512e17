// RUN: genesis-opt %s --split-input-file --genesis-decompose-layer-norm | FileCheck %s

// An f32 layer_norm becomes its row statistics, (x - mean) * rsqrt(var +
// eps), then the weight and the bias.
// CHECK-LABEL: func.func @affine(
// CHECK: %[[S:.+]] = genesis.reduce_sum %arg0 dims [2] keepdim
// CHECK: %[[C:.+]] = genesis.sub %arg0,
// CHECK: %[[SQ:.+]] = genesis.mul %[[C]], %[[C]]
// CHECK: genesis.reduce_sum %[[SQ]] dims [2] keepdim
// CHECK: %[[R:.+]] = genesis.rsqrt
// CHECK: %[[XHAT:.+]] = genesis.mul %[[C]], %[[R]]
// CHECK: %[[W:.+]] = genesis.broadcast_in_dim %arg1, [2]
// CHECK: %[[Y:.+]] = genesis.mul %[[XHAT]], %[[W]]
// CHECK: %[[B:.+]] = genesis.broadcast_in_dim %arg2, [2]
// CHECK: %[[OUT:.+]] = genesis.add %[[Y]], %[[B]]
// CHECK-NOT: genesis.layer_norm
// CHECK: return %[[OUT]]
func.func @affine(%x: tensor<2x3x8xf32>, %w: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<2x3x8xf32> {
  %0 = genesis.layer_norm %x weight %w : tensor<8xf32> bias %b : tensor<8xf32> eps 1.0e-05 : tensor<2x3x8xf32>
  return %0 : tensor<2x3x8xf32>
}

// -----

// Without weight and bias the result is the normalised input; a 16-bit
// layer_norm stays for the op kernel.
// CHECK-LABEL: func.func @plain_and_16_bit(
// CHECK: %[[R:.+]] = genesis.rsqrt
// CHECK: %[[XHAT:.+]] = genesis.mul %{{.+}}, %[[R]]
// CHECK: %[[H:.+]] = genesis.layer_norm %arg1 eps
// CHECK: return %[[XHAT]], %[[H]]
func.func @plain_and_16_bit(%x: tensor<4x8xf32>, %h: tensor<4x8xbf16>) -> (tensor<4x8xf32>, tensor<4x8xbf16>) {
  %0 = genesis.layer_norm %x eps 1.0e-05 : tensor<4x8xf32>
  %1 = genesis.layer_norm %h eps 1.0e-05 : tensor<4x8xbf16>
  return %0, %1 : tensor<4x8xf32>, tensor<4x8xbf16>
}

// -----

// An f32 rms_norm becomes x * rsqrt(mean(x^2) + eps) * weight; a 16-bit one
// stays for the op kernel.
// CHECK-LABEL: func.func @rms(
// CHECK: %[[SQ:.+]] = genesis.mul %arg0, %arg0
// CHECK: genesis.reduce_sum %[[SQ]] dims [1] keepdim
// CHECK: %[[R:.+]] = genesis.rsqrt
// CHECK-DAG: %[[XHAT:.+]] = genesis.mul %arg0, %[[R]]
// CHECK-DAG: %[[W:.+]] = genesis.broadcast_in_dim %arg1, [1]
// CHECK: %[[Y:.+]] = genesis.mul %[[XHAT]], %[[W]]
// CHECK: %[[H:.+]] = genesis.rms_norm %arg2, %arg3
// CHECK: return %[[Y]], %[[H]]
func.func @rms(%x: tensor<4x8xf32>, %w: tensor<8xf32>, %h: tensor<4x8xbf16>, %wh: tensor<8xbf16>) -> (tensor<4x8xf32>, tensor<4x8xbf16>) {
  %0 = genesis.rms_norm %x, %w eps 1.0e-06 : tensor<4x8xf32>, tensor<8xf32>
  %1 = genesis.rms_norm %h, %wh eps 1.0e-06 : tensor<4x8xbf16>, tensor<8xbf16>
  return %0, %1 : tensor<4x8xf32>, tensor<4x8xbf16>
}
