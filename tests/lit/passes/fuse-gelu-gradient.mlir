// RUN: genesis-opt %s --split-input-file --genesis-fuse-gelu-gradient | FileCheck %s

// GPT-2's MLP backward under bf16 (genesis-amp's casts, the batch reshapes
// of a linear layer): the cotangent's GEMM takes the derivative as its
// epilogue, the GELU's input (the forward GEMM's bf16 result) as aux; the
// bias gradient sums the result reshaped back and widened; the next GEMM's
// narrowing cast reads it widened and narrowed (genesis-sink-widening-casts
// folds that pair); the derivative's ops are gone.
// CHECK-LABEL: func.func @mlp_backward_bf16(
// CHECK-SAME: %[[DY:[a-z0-9]+]]: tensor<128x64xbf16>, %[[W:[a-z0-9]+]]: tensor<256x64xbf16>, %[[PRE:[a-z0-9]+]]: tensor<128x256xbf16>
// CHECK-NOT: genesis.tanh
// CHECK: %[[G:.+]] = genesis.library_call dgelu %[[DY]], %[[W]] transpose_rhs aux %[[PRE]] : (tensor<128x64xbf16>, tensor<256x64xbf16>, tensor<128x256xbf16>) -> tensor<128x256xbf16>
// CHECK: %[[R:.+]] = genesis.reshape %[[G]] : tensor<128x256xbf16> -> tensor<2x64x256xbf16>
// CHECK: %[[WIDE:.+]] = genesis.cast %[[R]] : tensor<2x64x256xbf16> to tensor<2x64x256xf32>
// CHECK: genesis.cast %[[WIDE]] : tensor<2x64x256xf32> to tensor<2x64x256xbf16>
// CHECK-NOT: genesis.matmul
// CHECK-NOT: genesis.tanh
// CHECK: genesis.reduce_sum %[[WIDE]] dims [0, 1]
func.func @mlp_backward_bf16(%dy: tensor<128x64xbf16>, %w: tensor<256x64xbf16>, %pre: tensor<128x256xbf16>) -> (tensor<2x64x256xbf16>, tensor<256xf32>) {
  %p = genesis.reshape %pre : tensor<128x256xbf16> -> tensor<2x64x256xbf16>
  %x = genesis.cast %p : tensor<2x64x256xbf16> to tensor<2x64x256xf32>
  %dh = genesis.matmul %dy, %w transpose_rhs : tensor<128x64xbf16>, tensor<256x64xbf16>
  %dh3 = genesis.reshape %dh : tensor<128x256xbf16> -> tensor<2x64x256xbf16>
  %dhw = genesis.cast %dh3 : tensor<2x64x256xbf16> to tensor<2x64x256xf32>
  %c = genesis.constant dense<0.797884583> : tensor<2x64x256xf32>
  %k = genesis.constant dense<4.471500e-02> : tensor<2x64x256xf32>
  %k3 = genesis.constant dense<1.341450e-01> : tensor<2x64x256xf32>
  %one = genesis.constant dense<1.000000e+00> : tensor<2x64x256xf32>
  %half = genesis.constant dense<5.000000e-01> : tensor<2x64x256xf32>
  %x2 = genesis.mul %x, %x : tensor<2x64x256xf32>
  %x3 = genesis.mul %x2, %x : tensor<2x64x256xf32>
  %kx3 = genesis.mul %x3, %k : tensor<2x64x256xf32>
  %sum = genesis.add %x, %kx3 : tensor<2x64x256xf32>
  %inner = genesis.mul %sum, %c : tensor<2x64x256xf32>
  %t = genesis.tanh %inner : tensor<2x64x256xf32>
  %a = genesis.mul %x2, %k3 : tensor<2x64x256xf32>
  %b = genesis.add %a, %one : tensor<2x64x256xf32>
  %dinner = genesis.mul %b, %c : tensor<2x64x256xf32>
  %t2 = genesis.mul %t, %t : tensor<2x64x256xf32>
  %sech = genesis.sub %one, %t2 : tensor<2x64x256xf32>
  %e = genesis.mul %sech, %dinner : tensor<2x64x256xf32>
  %hx = genesis.mul %x, %half : tensor<2x64x256xf32>
  %f = genesis.mul %hx, %e : tensor<2x64x256xf32>
  %g = genesis.add %t, %one : tensor<2x64x256xf32>
  %h = genesis.mul %g, %half : tensor<2x64x256xf32>
  %d = genesis.add %h, %f : tensor<2x64x256xf32>
  %dx = genesis.mul %dhw, %d : tensor<2x64x256xf32>
  %narrow = genesis.cast %dx : tensor<2x64x256xf32> to tensor<2x64x256xbf16>
  %bias = genesis.reduce_sum %dx dims [0, 1] : tensor<2x64x256xf32>
  return %narrow, %bias : tensor<2x64x256xbf16>, tensor<256xf32>
}

// -----

// f16, no reshapes, the derivative's factor first; x read through its
// widening cast.
// CHECK-LABEL: func.func @f16_factor_first(
// CHECK-SAME: %[[DY:[a-z0-9]+]]: tensor<16x32xf16>, %[[W:[a-z0-9]+]]: tensor<32x64xf16>, %[[X:[a-z0-9]+]]: tensor<16x64xf16>
// CHECK-NEXT: %[[G:.+]] = genesis.library_call dgelu %[[DY]], %[[W]] aux %[[X]]
// CHECK-NEXT: %[[WIDE:.+]] = genesis.cast %[[G]] : tensor<16x64xf16> to tensor<16x64xf32>
// CHECK-NEXT: return %[[WIDE]]
func.func @f16_factor_first(%dy: tensor<16x32xf16>, %w: tensor<32x64xf16>, %x16: tensor<16x64xf16>) -> tensor<16x64xf32> {
  %x = genesis.cast %x16 : tensor<16x64xf16> to tensor<16x64xf32>
  %dh16 = genesis.matmul %dy, %w : tensor<16x32xf16>, tensor<32x64xf16>
  %dh = genesis.cast %dh16 : tensor<16x64xf16> to tensor<16x64xf32>
  %c = genesis.constant dense<0.797884583> : tensor<16x64xf32>
  %k = genesis.constant dense<4.471500e-02> : tensor<16x64xf32>
  %k3 = genesis.constant dense<1.341450e-01> : tensor<16x64xf32>
  %one = genesis.constant dense<1.000000e+00> : tensor<16x64xf32>
  %half = genesis.constant dense<5.000000e-01> : tensor<16x64xf32>
  %x2 = genesis.mul %x, %x : tensor<16x64xf32>
  %x3 = genesis.mul %x2, %x : tensor<16x64xf32>
  %kx3 = genesis.mul %x3, %k : tensor<16x64xf32>
  %sum = genesis.add %x, %kx3 : tensor<16x64xf32>
  %inner = genesis.mul %sum, %c : tensor<16x64xf32>
  %t = genesis.tanh %inner : tensor<16x64xf32>
  %a = genesis.mul %x2, %k3 : tensor<16x64xf32>
  %b = genesis.add %a, %one : tensor<16x64xf32>
  %dinner = genesis.mul %b, %c : tensor<16x64xf32>
  %t2 = genesis.mul %t, %t : tensor<16x64xf32>
  %sech = genesis.sub %one, %t2 : tensor<16x64xf32>
  %e = genesis.mul %sech, %dinner : tensor<16x64xf32>
  %hx = genesis.mul %x, %half : tensor<16x64xf32>
  %f = genesis.mul %hx, %e : tensor<16x64xf32>
  %g = genesis.add %t, %one : tensor<16x64xf32>
  %h = genesis.mul %g, %half : tensor<16x64xf32>
  %d = genesis.add %h, %f : tensor<16x64xf32>
  %dx = genesis.mul %d, %dh : tensor<16x64xf32>
  return %dx : tensor<16x64xf32>
}

// -----

// Not GELU's derivative (the tanh's sign flipped): nothing changes.
// CHECK-LABEL: func.func @other_function(
// CHECK: genesis.matmul
// CHECK-NOT: library_call
func.func @other_function(%dy: tensor<16x32xbf16>, %w: tensor<32x64xbf16>, %x16: tensor<16x64xbf16>) -> tensor<16x64xf32> {
  %x = genesis.cast %x16 : tensor<16x64xbf16> to tensor<16x64xf32>
  %dh16 = genesis.matmul %dy, %w : tensor<16x32xbf16>, tensor<32x64xbf16>
  %dh = genesis.cast %dh16 : tensor<16x64xbf16> to tensor<16x64xf32>
  %c = genesis.constant dense<0.797884583> : tensor<16x64xf32>
  %k = genesis.constant dense<4.471500e-02> : tensor<16x64xf32>
  %k3 = genesis.constant dense<1.341450e-01> : tensor<16x64xf32>
  %one = genesis.constant dense<1.000000e+00> : tensor<16x64xf32>
  %half = genesis.constant dense<5.000000e-01> : tensor<16x64xf32>
  %x2 = genesis.mul %x, %x : tensor<16x64xf32>
  %x3 = genesis.mul %x2, %x : tensor<16x64xf32>
  %kx3 = genesis.mul %x3, %k : tensor<16x64xf32>
  %sum = genesis.add %x, %kx3 : tensor<16x64xf32>
  %inner = genesis.mul %sum, %c : tensor<16x64xf32>
  %t = genesis.tanh %inner : tensor<16x64xf32>
  %a = genesis.mul %x2, %k3 : tensor<16x64xf32>
  %b = genesis.add %a, %one : tensor<16x64xf32>
  %dinner = genesis.mul %b, %c : tensor<16x64xf32>
  %t2 = genesis.mul %t, %t : tensor<16x64xf32>
  %sech = genesis.sub %one, %t2 : tensor<16x64xf32>
  %e = genesis.mul %sech, %dinner : tensor<16x64xf32>
  %hx = genesis.mul %x, %half : tensor<16x64xf32>
  %f = genesis.mul %hx, %e : tensor<16x64xf32>
  %g = genesis.sub %one, %t : tensor<16x64xf32>
  %h = genesis.mul %g, %half : tensor<16x64xf32>
  %d = genesis.add %h, %f : tensor<16x64xf32>
  %dx = genesis.mul %dh, %d : tensor<16x64xf32>
  return %dx : tensor<16x64xf32>
}

// -----

// The cotangent is read elsewhere too, or its rows hold a number of
// elements cuBLASLt's aux cannot take (60, not a multiple of 8), or the
// derivative reads a second tensor, or the GEMM is f32 (the epilogue's tanh
// is approximate): nothing changes.
// CHECK-LABEL: func.func @refused(
// CHECK-COUNT-4: genesis.matmul
// CHECK-NOT: library_call
func.func @refused(%dy: tensor<16x32xbf16>, %w: tensor<32x64xbf16>, %x16: tensor<16x64xbf16>, %v: tensor<32x60xbf16>, %u16: tensor<16x60xbf16>, %y: tensor<16x64xf32>, %dyf: tensor<16x32xf32>, %wf: tensor<32x64xf32>) -> (tensor<16x64xf32>, tensor<16x64xf32>, tensor<16x60xf32>, tensor<16x64xf32>, tensor<16x64xf32>) {
  %x = genesis.cast %x16 : tensor<16x64xbf16> to tensor<16x64xf32>
  %u = genesis.cast %u16 : tensor<16x60xbf16> to tensor<16x60xf32>
  %dh16 = genesis.matmul %dy, %w : tensor<16x32xbf16>, tensor<32x64xbf16>
  %dh = genesis.cast %dh16 : tensor<16x64xbf16> to tensor<16x64xf32>
  %ac = genesis.constant dense<0.797884583> : tensor<16x64xf32>
  %ak = genesis.constant dense<4.471500e-02> : tensor<16x64xf32>
  %ak3 = genesis.constant dense<1.341450e-01> : tensor<16x64xf32>
  %aone = genesis.constant dense<1.000000e+00> : tensor<16x64xf32>
  %ahalf = genesis.constant dense<5.000000e-01> : tensor<16x64xf32>
  %ax2 = genesis.mul %x, %x : tensor<16x64xf32>
  %ax3 = genesis.mul %ax2, %x : tensor<16x64xf32>
  %akx3 = genesis.mul %ax3, %ak : tensor<16x64xf32>
  %asum = genesis.add %x, %akx3 : tensor<16x64xf32>
  %ainner = genesis.mul %asum, %ac : tensor<16x64xf32>
  %at = genesis.tanh %ainner : tensor<16x64xf32>
  %aa = genesis.mul %ax2, %ak3 : tensor<16x64xf32>
  %ab = genesis.add %aa, %aone : tensor<16x64xf32>
  %adinner = genesis.mul %ab, %ac : tensor<16x64xf32>
  %at2 = genesis.mul %at, %at : tensor<16x64xf32>
  %asech = genesis.sub %aone, %at2 : tensor<16x64xf32>
  %ae = genesis.mul %asech, %adinner : tensor<16x64xf32>
  %ahx = genesis.mul %x, %ahalf : tensor<16x64xf32>
  %af = genesis.mul %ahx, %ae : tensor<16x64xf32>
  %ag = genesis.add %at, %aone : tensor<16x64xf32>
  %ah = genesis.mul %ag, %ahalf : tensor<16x64xf32>
  %ad = genesis.add %ah, %af : tensor<16x64xf32>
  %dx = genesis.mul %dh, %ad : tensor<16x64xf32>
  %narrow16 = genesis.matmul %dy, %v : tensor<16x32xbf16>, tensor<32x60xbf16>
  %narrow = genesis.cast %narrow16 : tensor<16x60xbf16> to tensor<16x60xf32>
  %bc = genesis.constant dense<0.797884583> : tensor<16x60xf32>
  %bk = genesis.constant dense<4.471500e-02> : tensor<16x60xf32>
  %bk3 = genesis.constant dense<1.341450e-01> : tensor<16x60xf32>
  %bone = genesis.constant dense<1.000000e+00> : tensor<16x60xf32>
  %bhalf = genesis.constant dense<5.000000e-01> : tensor<16x60xf32>
  %bx2 = genesis.mul %u, %u : tensor<16x60xf32>
  %bx3 = genesis.mul %bx2, %u : tensor<16x60xf32>
  %bkx3 = genesis.mul %bx3, %bk : tensor<16x60xf32>
  %bsum = genesis.add %u, %bkx3 : tensor<16x60xf32>
  %binner = genesis.mul %bsum, %bc : tensor<16x60xf32>
  %bt = genesis.tanh %binner : tensor<16x60xf32>
  %ba = genesis.mul %bx2, %bk3 : tensor<16x60xf32>
  %bb = genesis.add %ba, %bone : tensor<16x60xf32>
  %bdinner = genesis.mul %bb, %bc : tensor<16x60xf32>
  %bt2 = genesis.mul %bt, %bt : tensor<16x60xf32>
  %bsech = genesis.sub %bone, %bt2 : tensor<16x60xf32>
  %be = genesis.mul %bsech, %bdinner : tensor<16x60xf32>
  %bhx = genesis.mul %u, %bhalf : tensor<16x60xf32>
  %bf = genesis.mul %bhx, %be : tensor<16x60xf32>
  %bg = genesis.add %bt, %bone : tensor<16x60xf32>
  %bh = genesis.mul %bg, %bhalf : tensor<16x60xf32>
  %bd = genesis.add %bh, %bf : tensor<16x60xf32>
  %du = genesis.mul %narrow, %bd : tensor<16x60xf32>
  %dh216 = genesis.matmul %dy, %w : tensor<16x32xbf16>, tensor<32x64xbf16>
  %dh2 = genesis.cast %dh216 : tensor<16x64xbf16> to tensor<16x64xf32>
  %cc = genesis.constant dense<0.797884583> : tensor<16x64xf32>
  %ck = genesis.constant dense<4.471500e-02> : tensor<16x64xf32>
  %ck3 = genesis.constant dense<1.341450e-01> : tensor<16x64xf32>
  %cone = genesis.constant dense<1.000000e+00> : tensor<16x64xf32>
  %chalf = genesis.constant dense<5.000000e-01> : tensor<16x64xf32>
  %cx2 = genesis.mul %x, %x : tensor<16x64xf32>
  %cx3 = genesis.mul %cx2, %x : tensor<16x64xf32>
  %ckx3 = genesis.mul %cx3, %ck : tensor<16x64xf32>
  %csum = genesis.add %x, %ckx3 : tensor<16x64xf32>
  %cinner = genesis.mul %csum, %cc : tensor<16x64xf32>
  %ct = genesis.tanh %cinner : tensor<16x64xf32>
  %ca = genesis.mul %cx2, %ck3 : tensor<16x64xf32>
  %cb = genesis.add %ca, %cone : tensor<16x64xf32>
  %cdinner = genesis.mul %cb, %cc : tensor<16x64xf32>
  %ct2 = genesis.mul %ct, %ct : tensor<16x64xf32>
  %csech = genesis.sub %cone, %ct2 : tensor<16x64xf32>
  %ce = genesis.mul %csech, %cdinner : tensor<16x64xf32>
  %chx = genesis.mul %x, %chalf : tensor<16x64xf32>
  %cf = genesis.mul %chx, %ce : tensor<16x64xf32>
  %cg = genesis.add %ct, %cone : tensor<16x64xf32>
  %ch = genesis.mul %cg, %y : tensor<16x64xf32>
  %cd = genesis.add %ch, %cf : tensor<16x64xf32>
  %dy2 = genesis.mul %dh2, %cd : tensor<16x64xf32>
  %dhf = genesis.matmul %dyf, %wf : tensor<16x32xf32>, tensor<32x64xf32>
  %dxf = genesis.mul %dhf, %ad : tensor<16x64xf32>
  return %dx, %dh, %du, %dy2, %dxf : tensor<16x64xf32>, tensor<16x64xf32>, tensor<16x60xf32>, tensor<16x64xf32>, tensor<16x64xf32>
}
