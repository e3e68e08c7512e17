// RUN: genesis-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(genesis-pack-attention))' | FileCheck %s
// RUN: genesis-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(genesis-pack-attention,canonicalize))' | FileCheck %s --check-prefix=CANON

// GPT-2's layer: one projection's rows [B, S, 3 H D] sliced into q, k and
// v, made head-major, attended; the result made token-major for the output
// projection; the gradients made token-major and concatenated. The packed
// ops read and write the projection's layout, and after canonicalisation
// no slice, transpose or concat is left.
// CHECK-LABEL: func.func @gpt2(
// CHECK: %[[O:.+]], %[[L:.+]] = genesis.packed_attention %arg0 heads 2 kv_heads 2 causal scale 1.250000e-01 : (tensor<2x16x384xbf16>) -> (tensor<2x16x128xbf16>, tensor<2x2x16xf32>)
// CHECK: %[[D:.+]] = genesis.packed_attention_grad %arg0, %[[O]], %{{[0-9]+}}, %[[L]] heads 2 kv_heads 2 causal scale 1.250000e-01
// CHECK-COUNT-3: genesis.slice %[[D]]
// CHECK-NOT: fused_attention
// CANON-LABEL: func.func @gpt2(
// CANON-NEXT: %[[O:.+]], %[[L:.+]] = genesis.packed_attention %arg0 heads 2 kv_heads 2 causal scale 1.250000e-01
// CANON-NEXT: %[[D:.+]] = genesis.packed_attention_grad %arg0, %[[O]], %arg1, %[[L]] heads 2 kv_heads 2 causal
// CANON-NEXT: return %[[O]], %[[L]], %[[D]] : tensor<2x16x128xbf16>, tensor<2x2x16xf32>, tensor<2x16x384xbf16>
func.func @gpt2(%qkv: tensor<2x16x384xbf16>, %dmerged: tensor<2x16x128xbf16>) -> (tensor<2x16x128xbf16>, tensor<2x2x16xf32>, tensor<2x16x384xbf16>) {
  %qs = genesis.slice %qkv start [0, 0, 0] limit [2, 16, 128] stride [1, 1, 1] : tensor<2x16x384xbf16>
  %ks = genesis.slice %qkv start [0, 0, 128] limit [2, 16, 256] stride [1, 1, 1] : tensor<2x16x384xbf16>
  %vs = genesis.slice %qkv start [0, 0, 256] limit [2, 16, 384] stride [1, 1, 1] : tensor<2x16x384xbf16>
  %q4 = genesis.reshape %qs : tensor<2x16x128xbf16> -> tensor<2x16x2x64xbf16>
  %k4 = genesis.reshape %ks : tensor<2x16x128xbf16> -> tensor<2x16x2x64xbf16>
  %v4 = genesis.reshape %vs : tensor<2x16x128xbf16> -> tensor<2x16x2x64xbf16>
  %q = genesis.transpose %q4, [0, 2, 1, 3] : tensor<2x16x2x64xbf16>
  %k = genesis.transpose %k4, [0, 2, 1, 3] : tensor<2x16x2x64xbf16>
  %v = genesis.transpose %v4, [0, 2, 1, 3] : tensor<2x16x2x64xbf16>
  %o, %l = genesis.fused_attention %q, %k, %v causal scale 0.125 : (tensor<2x2x16x64xbf16>, tensor<2x2x16x64xbf16>, tensor<2x2x16x64xbf16>) -> (tensor<2x2x16x64xbf16>, tensor<2x2x16xf32>)
  %ot = genesis.transpose %o, [0, 2, 1, 3] : tensor<2x2x16x64xbf16>
  %merged = genesis.reshape %ot : tensor<2x16x2x64xbf16> -> tensor<2x16x128xbf16>
  %do4 = genesis.reshape %dmerged : tensor<2x16x128xbf16> -> tensor<2x16x2x64xbf16>
  %do = genesis.transpose %do4, [0, 2, 1, 3] : tensor<2x16x2x64xbf16>
  %dq, %dk, %dv = genesis.fused_attention_grad %q, %k, %v, %o, %do, %l causal scale 0.125 : (tensor<2x2x16x64xbf16>, tensor<2x2x16x64xbf16>, tensor<2x2x16x64xbf16>, tensor<2x2x16x64xbf16>, tensor<2x2x16x64xbf16>, tensor<2x2x16xf32>) -> (tensor<2x2x16x64xbf16>, tensor<2x2x16x64xbf16>, tensor<2x2x16x64xbf16>)
  %dqt = genesis.transpose %dq, [0, 2, 1, 3] : tensor<2x2x16x64xbf16>
  %dkt = genesis.transpose %dk, [0, 2, 1, 3] : tensor<2x2x16x64xbf16>
  %dvt = genesis.transpose %dv, [0, 2, 1, 3] : tensor<2x2x16x64xbf16>
  %dq3 = genesis.reshape %dqt : tensor<2x16x2x64xbf16> -> tensor<2x16x128xbf16>
  %dk3 = genesis.reshape %dkt : tensor<2x16x2x64xbf16> -> tensor<2x16x128xbf16>
  %dv3 = genesis.reshape %dvt : tensor<2x16x2x64xbf16> -> tensor<2x16x128xbf16>
  %dkv = genesis.concat %dk3, %dv3 dim 2 : tensor<2x16x128xbf16>, tensor<2x16x128xbf16>
  %dqkv = genesis.concat %dq3, %dkv dim 2 : tensor<2x16x128xbf16>, tensor<2x16x256xbf16>
  return %merged, %l, %dqkv : tensor<2x16x128xbf16>, tensor<2x2x16xf32>, tensor<2x16x384xbf16>
}

// -----

// Grouped-query heads (4 query heads, 2 key/value heads) packed the same
// way; forward only.
// CHECK-LABEL: func.func @gqa(
// CHECK: genesis.packed_attention %arg0 heads 4 kv_heads 2 scale 1.250000e-01 : (tensor<1x8x512xf16>) -> (tensor<1x8x256xf16>, tensor<1x4x8xf32>)
// CANON-LABEL: func.func @gqa(
// CANON-NEXT: %[[O:.+]], %{{.+}} = genesis.packed_attention %arg0 heads 4 kv_heads 2
// CANON-NEXT: return %[[O]]
func.func @gqa(%qkv: tensor<1x8x512xf16>) -> tensor<1x8x256xf16> {
  %qs = genesis.slice %qkv start [0, 0, 0] limit [1, 8, 256] stride [1, 1, 1] : tensor<1x8x512xf16>
  %ks = genesis.slice %qkv start [0, 0, 256] limit [1, 8, 384] stride [1, 1, 1] : tensor<1x8x512xf16>
  %vs = genesis.slice %qkv start [0, 0, 384] limit [1, 8, 512] stride [1, 1, 1] : tensor<1x8x512xf16>
  %q4 = genesis.reshape %qs : tensor<1x8x256xf16> -> tensor<1x8x4x64xf16>
  %k4 = genesis.reshape %ks : tensor<1x8x128xf16> -> tensor<1x8x2x64xf16>
  %v4 = genesis.reshape %vs : tensor<1x8x128xf16> -> tensor<1x8x2x64xf16>
  %q = genesis.transpose %q4, [0, 2, 1, 3] : tensor<1x8x4x64xf16>
  %k = genesis.transpose %k4, [0, 2, 1, 3] : tensor<1x8x2x64xf16>
  %v = genesis.transpose %v4, [0, 2, 1, 3] : tensor<1x8x2x64xf16>
  %o, %l = genesis.fused_attention %q, %k, %v scale 0.125 : (tensor<1x4x8x64xf16>, tensor<1x2x8x64xf16>, tensor<1x2x8x64xf16>) -> (tensor<1x4x8x64xf16>, tensor<1x4x8xf32>)
  %ot = genesis.transpose %o, [0, 2, 1, 3] : tensor<1x4x8x64xf16>
  %merged = genesis.reshape %ot : tensor<1x8x4x64xf16> -> tensor<1x8x256xf16>
  return %merged : tensor<1x8x256xf16>
}

// -----

// Not packed: q, k, v out of order (k first), a projection wider than the
// three parts, and q, k, v of different tensors.
// CHECK-LABEL: func.func @kept(
// CHECK-NOT: packed_attention
// CHECK-COUNT-3: genesis.fused_attention
// CHECK-NOT: packed_attention
func.func @kept(%p: tensor<1x8x384xbf16>, %wide: tensor<1x8x448xbf16>, %x: tensor<1x8x128xbf16>) -> (tensor<1x2x8x64xbf16>, tensor<1x2x8x64xbf16>, tensor<1x2x8x64xbf16>) {
  %a = genesis.slice %p start [0, 0, 0] limit [1, 8, 128] stride [1, 1, 1] : tensor<1x8x384xbf16>
  %b = genesis.slice %p start [0, 0, 128] limit [1, 8, 256] stride [1, 1, 1] : tensor<1x8x384xbf16>
  %c = genesis.slice %p start [0, 0, 256] limit [1, 8, 384] stride [1, 1, 1] : tensor<1x8x384xbf16>
  %a4 = genesis.reshape %a : tensor<1x8x128xbf16> -> tensor<1x8x2x64xbf16>
  %b4 = genesis.reshape %b : tensor<1x8x128xbf16> -> tensor<1x8x2x64xbf16>
  %c4 = genesis.reshape %c : tensor<1x8x128xbf16> -> tensor<1x8x2x64xbf16>
  %at = genesis.transpose %a4, [0, 2, 1, 3] : tensor<1x8x2x64xbf16>
  %bt = genesis.transpose %b4, [0, 2, 1, 3] : tensor<1x8x2x64xbf16>
  %ct = genesis.transpose %c4, [0, 2, 1, 3] : tensor<1x8x2x64xbf16>
  %o1, %l1 = genesis.fused_attention %bt, %at, %ct scale 0.125 : (tensor<1x2x8x64xbf16>, tensor<1x2x8x64xbf16>, tensor<1x2x8x64xbf16>) -> (tensor<1x2x8x64xbf16>, tensor<1x2x8xf32>)
  %wa = genesis.slice %wide start [0, 0, 0] limit [1, 8, 128] stride [1, 1, 1] : tensor<1x8x448xbf16>
  %wb = genesis.slice %wide start [0, 0, 128] limit [1, 8, 256] stride [1, 1, 1] : tensor<1x8x448xbf16>
  %wc = genesis.slice %wide start [0, 0, 256] limit [1, 8, 384] stride [1, 1, 1] : tensor<1x8x448xbf16>
  %wa4 = genesis.reshape %wa : tensor<1x8x128xbf16> -> tensor<1x8x2x64xbf16>
  %wb4 = genesis.reshape %wb : tensor<1x8x128xbf16> -> tensor<1x8x2x64xbf16>
  %wc4 = genesis.reshape %wc : tensor<1x8x128xbf16> -> tensor<1x8x2x64xbf16>
  %wat = genesis.transpose %wa4, [0, 2, 1, 3] : tensor<1x8x2x64xbf16>
  %wbt = genesis.transpose %wb4, [0, 2, 1, 3] : tensor<1x8x2x64xbf16>
  %wct = genesis.transpose %wc4, [0, 2, 1, 3] : tensor<1x8x2x64xbf16>
  %o2, %l2 = genesis.fused_attention %wat, %wbt, %wct scale 0.125 : (tensor<1x2x8x64xbf16>, tensor<1x2x8x64xbf16>, tensor<1x2x8x64xbf16>) -> (tensor<1x2x8x64xbf16>, tensor<1x2x8xf32>)
  %x4 = genesis.reshape %x : tensor<1x8x128xbf16> -> tensor<1x8x2x64xbf16>
  %xt = genesis.transpose %x4, [0, 2, 1, 3] : tensor<1x8x2x64xbf16>
  %o3, %l3 = genesis.fused_attention %at, %bt, %xt scale 0.125 : (tensor<1x2x8x64xbf16>, tensor<1x2x8x64xbf16>, tensor<1x2x8x64xbf16>) -> (tensor<1x2x8x64xbf16>, tensor<1x2x8xf32>)
  return %o1, %o2, %o3 : tensor<1x2x8x64xbf16>, tensor<1x2x8x64xbf16>, tensor<1x2x8x64xbf16>
}

// -----

// Not packed either: q, k and v taking every second token (stride 2), or
// only the first batch row of the projection.
// CHECK-LABEL: func.func @strided_or_partial(
// CHECK-NOT: packed_attention
// CHECK-COUNT-2: genesis.fused_attention
// CHECK-NOT: packed_attention
func.func @strided_or_partial(%p: tensor<2x16x384xbf16>) -> (tensor<2x2x8x64xbf16>, tensor<1x2x16x64xbf16>) {
  %qs = genesis.slice %p start [0, 0, 0] limit [2, 16, 128] stride [1, 2, 1] : tensor<2x16x384xbf16>
  %ks = genesis.slice %p start [0, 0, 128] limit [2, 16, 256] stride [1, 2, 1] : tensor<2x16x384xbf16>
  %vs = genesis.slice %p start [0, 0, 256] limit [2, 16, 384] stride [1, 2, 1] : tensor<2x16x384xbf16>
  %q4 = genesis.reshape %qs : tensor<2x8x128xbf16> -> tensor<2x8x2x64xbf16>
  %k4 = genesis.reshape %ks : tensor<2x8x128xbf16> -> tensor<2x8x2x64xbf16>
  %v4 = genesis.reshape %vs : tensor<2x8x128xbf16> -> tensor<2x8x2x64xbf16>
  %q = genesis.transpose %q4, [0, 2, 1, 3] : tensor<2x8x2x64xbf16>
  %k = genesis.transpose %k4, [0, 2, 1, 3] : tensor<2x8x2x64xbf16>
  %v = genesis.transpose %v4, [0, 2, 1, 3] : tensor<2x8x2x64xbf16>
  %o, %l = genesis.fused_attention %q, %k, %v causal scale 0.125 : (tensor<2x2x8x64xbf16>, tensor<2x2x8x64xbf16>, tensor<2x2x8x64xbf16>) -> (tensor<2x2x8x64xbf16>, tensor<2x2x8xf32>)
  %bq = genesis.slice %p start [0, 0, 0] limit [1, 16, 128] stride [1, 1, 1] : tensor<2x16x384xbf16>
  %bk = genesis.slice %p start [0, 0, 128] limit [1, 16, 256] stride [1, 1, 1] : tensor<2x16x384xbf16>
  %bv = genesis.slice %p start [0, 0, 256] limit [1, 16, 384] stride [1, 1, 1] : tensor<2x16x384xbf16>
  %bq4 = genesis.reshape %bq : tensor<1x16x128xbf16> -> tensor<1x16x2x64xbf16>
  %bk4 = genesis.reshape %bk : tensor<1x16x128xbf16> -> tensor<1x16x2x64xbf16>
  %bv4 = genesis.reshape %bv : tensor<1x16x128xbf16> -> tensor<1x16x2x64xbf16>
  %bqt = genesis.transpose %bq4, [0, 2, 1, 3] : tensor<1x16x2x64xbf16>
  %bkt = genesis.transpose %bk4, [0, 2, 1, 3] : tensor<1x16x2x64xbf16>
  %bvt = genesis.transpose %bv4, [0, 2, 1, 3] : tensor<1x16x2x64xbf16>
  %bo, %bl = genesis.fused_attention %bqt, %bkt, %bvt causal scale 0.125 : (tensor<1x2x16x64xbf16>, tensor<1x2x16x64xbf16>, tensor<1x2x16x64xbf16>) -> (tensor<1x2x16x64xbf16>, tensor<1x2x16xf32>)
  return %o, %bo : tensor<2x2x8x64xbf16>, tensor<1x2x16x64xbf16>
}

// -----

// A gradient of another scale is not this attention's: the forward is
// packed, the gradient stays a fused_attention_grad of the head-major q, k
// and v, reading the packed result made head-major again.
// CHECK-LABEL: func.func @other_scale_gradient(
// CHECK: %[[O:.+]], %[[L:.+]] = genesis.packed_attention %arg0 heads 2 kv_heads 2 causal scale 1.250000e-01
// CHECK: genesis.fused_attention_grad {{.*}} causal scale 2.500000e-01
// CHECK-NOT: packed_attention_grad
func.func @other_scale_gradient(%qkv: tensor<2x16x384xbf16>, %do: tensor<2x2x16x64xbf16>) -> (tensor<2x2x16x64xbf16>, tensor<2x2x16x64xbf16>, tensor<2x2x16x64xbf16>, tensor<2x2x16x64xbf16>) {
  %qs = genesis.slice %qkv start [0, 0, 0] limit [2, 16, 128] stride [1, 1, 1] : tensor<2x16x384xbf16>
  %ks = genesis.slice %qkv start [0, 0, 128] limit [2, 16, 256] stride [1, 1, 1] : tensor<2x16x384xbf16>
  %vs = genesis.slice %qkv start [0, 0, 256] limit [2, 16, 384] stride [1, 1, 1] : tensor<2x16x384xbf16>
  %q4 = genesis.reshape %qs : tensor<2x16x128xbf16> -> tensor<2x16x2x64xbf16>
  %k4 = genesis.reshape %ks : tensor<2x16x128xbf16> -> tensor<2x16x2x64xbf16>
  %v4 = genesis.reshape %vs : tensor<2x16x128xbf16> -> tensor<2x16x2x64xbf16>
  %q = genesis.transpose %q4, [0, 2, 1, 3] : tensor<2x16x2x64xbf16>
  %k = genesis.transpose %k4, [0, 2, 1, 3] : tensor<2x16x2x64xbf16>
  %v = genesis.transpose %v4, [0, 2, 1, 3] : tensor<2x16x2x64xbf16>
  %o, %l = genesis.fused_attention %q, %k, %v causal scale 0.125 : (tensor<2x2x16x64xbf16>, tensor<2x2x16x64xbf16>, tensor<2x2x16x64xbf16>) -> (tensor<2x2x16x64xbf16>, tensor<2x2x16xf32>)
  %dq, %dk, %dv = genesis.fused_attention_grad %q, %k, %v, %o, %do, %l causal scale 0.25 : (tensor<2x2x16x64xbf16>, tensor<2x2x16x64xbf16>, tensor<2x2x16x64xbf16>, tensor<2x2x16x64xbf16>, tensor<2x2x16x64xbf16>, tensor<2x2x16xf32>) -> (tensor<2x2x16x64xbf16>, tensor<2x2x16x64xbf16>, tensor<2x2x16x64xbf16>)
  return %o, %dq, %dk, %dv : tensor<2x2x16x64xbf16>, tensor<2x2x16x64xbf16>, tensor<2x2x16x64xbf16>, tensor<2x2x16x64xbf16>
}
