// RUN: genesis-opt %s --split-input-file --genesis-fused-attention=compute-type=bf16 | FileCheck %s
// RUN: genesis-opt %s --split-input-file --genesis-fused-attention=compute-type=f16 | FileCheck %s --check-prefix=F16
// RUN: genesis-opt %s --split-input-file --genesis-fused-attention | FileCheck %s --check-prefix=NONE
// RUN: not genesis-opt %s --split-input-file --genesis-fused-attention=compute-type=f8 2>&1 | FileCheck %s --check-prefix=BAD

// An f32 attention and its gradient: operands cast to 16 bits once (the
// gradient reuses them), the fused gradient reads the fused result and its
// log-sum-exp, and every result goes back to f32.
// CHECK-LABEL: func.func @train(
// CHECK-DAG: %[[Q:.+]] = genesis.cast %arg0 : tensor<2x4x16x64xf32> to tensor<2x4x16x64xbf16>
// CHECK-DAG: %[[K:.+]] = genesis.cast %arg1 : tensor<2x2x16x64xf32> to tensor<2x2x16x64xbf16>
// CHECK-DAG: %[[V:.+]] = genesis.cast %arg2 : tensor<2x2x16x64xf32> to tensor<2x2x16x64xbf16>
// CHECK: %[[O:.+]], %[[L:.+]] = genesis.fused_attention %[[Q]], %[[K]], %[[V]] causal scale 1.250000e-01 : {{.+}} -> (tensor<2x4x16x64xbf16>, tensor<2x4x16xf32>)
// CHECK: %[[O32:.+]] = genesis.cast %[[O]] : tensor<2x4x16x64xbf16> to tensor<2x4x16x64xf32>
// CHECK: %[[G:.+]] = genesis.cast %arg3 : tensor<2x4x16x64xf32> to tensor<2x4x16x64xbf16>
// CHECK: %[[DQ:[^,]+]], %[[DK:[^,]+]], %[[DV:[^ ]+]] = genesis.fused_attention_grad %[[Q]], %[[K]], %[[V]], %[[O]], %[[G]], %[[L]] causal scale 1.250000e-01
// CHECK-DAG: genesis.cast %[[DQ]] : tensor<2x4x16x64xbf16> to tensor<2x4x16x64xf32>
// CHECK-DAG: genesis.cast %[[DK]] : tensor<2x2x16x64xbf16> to tensor<2x2x16x64xf32>
// CHECK-DAG: genesis.cast %[[DV]] : tensor<2x2x16x64xbf16> to tensor<2x2x16x64xf32>
// CHECK-NOT: genesis.attention
// F16: genesis.fused_attention {{.+}} -> (tensor<2x4x16x64xf16>, tensor<2x4x16xf32>)
// NONE-LABEL: func.func @train(
// NONE-NOT: fused_attention
// BAD: error: genesis-fused-attention: compute-type must be bf16, f16 or empty, not 'f8'
func.func @train(%q: tensor<2x4x16x64xf32>, %k: tensor<2x2x16x64xf32>, %v: tensor<2x2x16x64xf32>, %g: tensor<2x4x16x64xf32>) -> (tensor<2x4x16x64xf32>, tensor<2x4x16x64xf32>, tensor<2x2x16x64xf32>, tensor<2x2x16x64xf32>) {
  %o = genesis.attention %q, %k, %v causal scale 0.125 : (tensor<2x4x16x64xf32>, tensor<2x2x16x64xf32>, tensor<2x2x16x64xf32>) -> tensor<2x4x16x64xf32>
  %dq, %dk, %dv = genesis.attention_grad %q, %k, %v, %o, %g causal scale 0.125 : (tensor<2x4x16x64xf32>, tensor<2x2x16x64xf32>, tensor<2x2x16x64xf32>, tensor<2x4x16x64xf32>, tensor<2x4x16x64xf32>) -> (tensor<2x4x16x64xf32>, tensor<2x2x16x64xf32>, tensor<2x2x16x64xf32>)
  return %o, %dq, %dk, %dv : tensor<2x4x16x64xf32>, tensor<2x4x16x64xf32>, tensor<2x2x16x64xf32>, tensor<2x2x16x64xf32>
}

// -----

// Attention already in bf16 is taken without casts, even with no
// compute-type; a masked one, a head dimension that is not a multiple of 8,
// and one above 128 stay for genesis-decompose-attention.
// CHECK-LABEL: func.func @kept(
// CHECK: genesis.fused_attention %arg0, %arg0, %arg0 scale
// CHECK: genesis.attention %arg1, %arg1, %arg1 mask
// CHECK: genesis.attention %arg2, %arg2, %arg2 scale
// CHECK: genesis.attention %arg3, %arg3, %arg3 scale
// NONE-LABEL: func.func @kept(
// NONE: genesis.fused_attention %arg0, %arg0, %arg0 scale
// NONE-COUNT-3: genesis.attention
func.func @kept(%a: tensor<1x2x8x64xbf16>, %b: tensor<1x2x8x64xf32>, %c: tensor<1x2x8x12xf32>, %d: tensor<1x2x8x256xf32>, %m: tensor<1x2x8x8xf32>) -> (tensor<1x2x8x64xbf16>, tensor<1x2x8x64xf32>, tensor<1x2x8x12xf32>, tensor<1x2x8x256xf32>) {
  %0 = genesis.attention %a, %a, %a scale 0.125 : (tensor<1x2x8x64xbf16>, tensor<1x2x8x64xbf16>, tensor<1x2x8x64xbf16>) -> tensor<1x2x8x64xbf16>
  %1 = genesis.attention %b, %b, %b mask %m scale 0.125 : (tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>, tensor<1x2x8x8xf32>) -> tensor<1x2x8x64xf32>
  %2 = genesis.attention %c, %c, %c scale 0.125 : (tensor<1x2x8x12xf32>, tensor<1x2x8x12xf32>, tensor<1x2x8x12xf32>) -> tensor<1x2x8x12xf32>
  %3 = genesis.attention %d, %d, %d scale 0.125 : (tensor<1x2x8x256xf32>, tensor<1x2x8x256xf32>, tensor<1x2x8x256xf32>) -> tensor<1x2x8x256xf32>
  return %0, %1, %2, %3 : tensor<1x2x8x64xbf16>, tensor<1x2x8x64xf32>, tensor<1x2x8x12xf32>, tensor<1x2x8x256xf32>
}
