// RUN: genesis-opt %s --split-input-file --genesis-sink-widening-casts | FileCheck %s

// The attention gradient's pattern: widened bf16 tensors transposed,
// reshaped and joined (the canonical form of a sum of zero-padded slices)
// become the same data movement in bf16, the adds of zero dropped; the
// GEMM operand's narrowing cast disappears and the f32 reduction reads the
// widened bf16 join.
// CHECK-LABEL: func.func @joined_gradient(
// CHECK-DAG: genesis.transpose %arg0, [0, 2, 1, 3] : tensor<2x3x4x8xbf16>
// CHECK-DAG: genesis.transpose %arg1, [0, 2, 1, 3] : tensor<2x3x4x8xbf16>
// CHECK: %[[J:.+]] = genesis.concat %{{.+}}, %{{.+}} dim 2 : tensor<2x4x24xbf16>, tensor<2x4x24xbf16>
// CHECK: %[[W:.+]] = genesis.cast %[[J]] : tensor<2x4x48xbf16> to tensor<2x4x48xf32>
// CHECK: %[[S:.+]] = genesis.reduce_sum %[[W]] dims [0, 1]
// CHECK: return %[[J]], %[[S]]
func.func @joined_gradient(%q: tensor<2x3x4x8xbf16>, %k: tensor<2x3x4x8xbf16>) -> (tensor<2x4x48xbf16>, tensor<48xf32>) {
  %0 = genesis.cast %q : tensor<2x3x4x8xbf16> to tensor<2x3x4x8xf32>
  %1 = genesis.cast %k : tensor<2x3x4x8xbf16> to tensor<2x3x4x8xf32>
  %2 = genesis.transpose %0, [0, 2, 1, 3] : tensor<2x3x4x8xf32>
  %3 = genesis.transpose %1, [0, 2, 1, 3] : tensor<2x3x4x8xf32>
  %4 = genesis.reshape %2 : tensor<2x4x3x8xf32> -> tensor<2x4x24xf32>
  %5 = genesis.reshape %3 : tensor<2x4x3x8xf32> -> tensor<2x4x24xf32>
  %z = genesis.constant dense<0.0> : tensor<2x4x24xf32>
  %6 = genesis.add %4, %z : tensor<2x4x24xf32>
  %7 = genesis.add %z, %5 : tensor<2x4x24xf32>
  %8 = genesis.concat %6, %7 dim 2 : tensor<2x4x24xf32>, tensor<2x4x24xf32>
  %9 = genesis.cast %8 : tensor<2x4x48xf32> to tensor<2x4x48xbf16>
  %10 = genesis.reduce_sum %8 dims [0, 1] : tensor<2x4x48xf32>
  return %9, %10 : tensor<2x4x48xbf16>, tensor<48xf32>
}

// -----

// Left alone: an add of a non-zero constant (it rounds), a concat of
// values widened from different types, a widening from f32, and a
// narrowing to a type other than the widened value's.
// CHECK-LABEL: func.func @left_alone(
// CHECK: %[[A:.+]] = genesis.cast %arg0 : tensor<4xbf16> to tensor<4xf32>
// CHECK: genesis.add %[[A]], %{{.+}} : tensor<4xf32>
// CHECK: genesis.concat %{{.+}}, %{{.+}} dim 0 : tensor<4xf32>, tensor<4xf32>
// CHECK: genesis.transpose %{{.+}}, [1, 0] : tensor<2x2xf64>
// CHECK: genesis.cast %{{.+}} : tensor<4xf32> to tensor<4xf16>
func.func @left_alone(%a: tensor<4xbf16>, %b: tensor<4xf16>, %c: tensor<2x2xf32>) -> (tensor<4xf32>, tensor<8xf32>, tensor<2x2xf64>, tensor<4xf16>) {
  %0 = genesis.cast %a : tensor<4xbf16> to tensor<4xf32>
  %one = genesis.constant dense<1.0> : tensor<4xf32>
  %1 = genesis.add %0, %one : tensor<4xf32>
  %2 = genesis.cast %b : tensor<4xf16> to tensor<4xf32>
  %3 = genesis.concat %0, %2 dim 0 : tensor<4xf32>, tensor<4xf32>
  %4 = genesis.cast %c : tensor<2x2xf32> to tensor<2x2xf64>
  %5 = genesis.transpose %4, [1, 0] : tensor<2x2xf64>
  %6 = genesis.cast %0 : tensor<4xf32> to tensor<4xf16>
  return %1, %3, %5, %6 : tensor<4xf32>, tensor<8xf32>, tensor<2x2xf64>, tensor<4xf16>
}
