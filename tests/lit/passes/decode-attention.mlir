// RUN: genesis-opt %s --split-input-file --genesis-decode-attention | FileCheck %s

// A decode step: 14 query heads sharing 2 key/value heads read a bf16 cache
// widened. The casts go; the kernel reads the cache where it lies.
// CHECK-LABEL: func.func @decode(
// CHECK-NOT: genesis.cast
// CHECK: %[[O:.+]] = genesis.decode_attention %arg0, %arg1, %arg2 mask %arg3 scale 1.250000e-01 : (tensor<1x14x1x64xf32>, tensor<1x2x1024x64xbf16>, tensor<1x2x1024x64xbf16>, tensor<1x14x1x1024xf32>) -> tensor<1x14x1x64xf32>
// CHECK-NOT: genesis.attention
// CHECK: return %[[O]]
func.func @decode(%q: tensor<1x14x1x64xf32>, %k16: tensor<1x2x1024x64xbf16>, %v16: tensor<1x2x1024x64xbf16>, %mask: tensor<1x14x1x1024xf32>) -> tensor<1x14x1x64xf32> {
  %k = genesis.cast %k16 : tensor<1x2x1024x64xbf16> to tensor<1x2x1024x64xf32>
  %v = genesis.cast %v16 : tensor<1x2x1024x64xbf16> to tensor<1x2x1024x64xf32>
  %o = genesis.attention %q, %k, %v mask %mask scale 0.125 : (tensor<1x14x1x64xf32>, tensor<1x2x1024x64xf32>, tensor<1x2x1024x64xf32>, tensor<1x14x1x1024xf32>) -> tensor<1x14x1x64xf32>
  return %o : tensor<1x14x1x64xf32>
}

// -----

// An f32 cache, causal, a widened key whose cast has another reader, and
// value from f16: key and value stay f32 (they must share one type); the
// cast another op reads stays.
// CHECK-LABEL: func.func @mixed(
// CHECK: %[[K:.+]] = genesis.cast %arg1
// CHECK: %[[V:.+]] = genesis.cast %arg2
// CHECK: genesis.decode_attention %arg0, %[[K]], %[[V]] causal scale 5.000000e-01 : (tensor<2x4x2x16xf32>, tensor<2x2x40x16xf32>, tensor<2x2x40x16xf32>) -> tensor<2x4x2x16xf32>
func.func @mixed(%q: tensor<2x4x2x16xf32>, %k16: tensor<2x2x40x16xbf16>, %v16: tensor<2x2x40x16xf16>) -> (tensor<2x4x2x16xf32>, tensor<2x2x40x16xf32>) {
  %k = genesis.cast %k16 : tensor<2x2x40x16xbf16> to tensor<2x2x40x16xf32>
  %v = genesis.cast %v16 : tensor<2x2x40x16xf16> to tensor<2x2x40x16xf32>
  %o = genesis.attention %q, %k, %v causal scale 0.5 : (tensor<2x4x2x16xf32>, tensor<2x2x40x16xf32>, tensor<2x2x40x16xf32>) -> tensor<2x4x2x16xf32>
  return %o, %k : tensor<2x4x2x16xf32>, tensor<2x2x40x16xf32>
}

// -----

// Left for genesis-decompose-attention: a differentiated attention, more
// than 16 query rows per key/value head (a prefill), a bf16 query, and a
// cache whose scores would not fit a lane's registers (rows x keys per
// lane > 64: 16 query rows of one head, which one block holds, against 8192
// keys).
// CHECK-LABEL: func.func @left(
// CHECK-NOT: decode_attention
// CHECK-COUNT-4: genesis.attention %
// CHECK-NOT: decode_attention
func.func @left(%q: tensor<1x4x1x16xf32>, %k: tensor<1x2x64x16xf32>, %v: tensor<1x2x64x16xf32>, %g: tensor<1x4x1x16xf32>,
                %qp: tensor<1x4x9x16xf32>, %qb: tensor<1x4x1x16xbf16>, %kb: tensor<1x2x64x16xbf16>,
                %ql: tensor<1x1x16x16xf32>, %kl: tensor<1x1x8192x16xf32>) -> (tensor<1x4x1x16xf32>, tensor<1x4x9x16xf32>, tensor<1x4x1x16xbf16>, tensor<1x1x16x16xf32>) {
  %o = genesis.attention %q, %k, %v scale 0.25 : (tensor<1x4x1x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>) -> tensor<1x4x1x16xf32>
  %dq, %dk, %dv = genesis.attention_grad %q, %k, %v, %o, %g scale 0.25 : (tensor<1x4x1x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x4x1x16xf32>, tensor<1x4x1x16xf32>) -> (tensor<1x4x1x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>)
  %p = genesis.attention %qp, %k, %v causal scale 0.25 : (tensor<1x4x9x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>) -> tensor<1x4x9x16xf32>
  %b = genesis.attention %qb, %kb, %kb scale 0.25 : (tensor<1x4x1x16xbf16>, tensor<1x2x64x16xbf16>, tensor<1x2x64x16xbf16>) -> tensor<1x4x1x16xbf16>
  %l = genesis.attention %ql, %kl, %kl scale 0.25 : (tensor<1x1x16x16xf32>, tensor<1x1x8192x16xf32>, tensor<1x1x8192x16xf32>) -> tensor<1x1x16x16xf32>
  return %dq, %p, %b, %l : tensor<1x4x1x16xf32>, tensor<1x4x9x16xf32>, tensor<1x4x1x16xbf16>, tensor<1x1x16x16xf32>
}

// -----

// Also left: more queries than keys (causal queries would see no key), and
// a shape whose shared buffers would pass 48 KiB (16 query rows of one head
// of D = 256 and Dv = 128 against 256 keys: 49,664 bytes).
// CHECK-LABEL: func.func @left_by_layout(
// CHECK-NOT: decode_attention
// CHECK-COUNT-2: genesis.attention %
func.func @left_by_layout(%q: tensor<1x2x4x8xf32>, %k: tensor<1x1x2x8xf32>, %qw: tensor<1x1x16x256xf32>, %kw: tensor<1x1x256x256xf32>, %vw: tensor<1x1x256x128xf32>) -> (tensor<1x2x4x8xf32>, tensor<1x1x16x128xf32>) {
  %a = genesis.attention %q, %k, %k causal scale 0.25 : (tensor<1x2x4x8xf32>, tensor<1x1x2x8xf32>, tensor<1x1x2x8xf32>) -> tensor<1x2x4x8xf32>
  %b = genesis.attention %qw, %kw, %vw scale 0.0625 : (tensor<1x1x16x256xf32>, tensor<1x1x256x256xf32>, tensor<1x1x256x128xf32>) -> tensor<1x1x16x128xf32>
  return %a, %b : tensor<1x2x4x8xf32>, tensor<1x1x16x128xf32>
}
