// RUN: genesis-opt %s --split-input-file --genesis-fuse-matrix-vector | FileCheck %s

// A token's q, k and v projections (one lhs, biases, a constant between
// them): one fusion in the q projection's place yielding all three.
// CHECK-LABEL: func.func @qkv(
// CHECK: %[[F:.+]]:3 = genesis.fusion %arg0, %arg1, %arg2, %arg3, %arg4, %arg5, %arg6 :
// CHECK-COUNT-3: genesis.library_call bias
// CHECK: genesis.yield
// CHECK-NOT: genesis.library_call
// CHECK: return %[[F]]#0, %[[F]]#1, %[[F]]#2
func.func @qkv(%x: tensor<1x64xbf16>, %wq: tensor<64x64xbf16>, %bq: tensor<64xbf16>, %wk: tensor<16x64xbf16>, %bk: tensor<16xbf16>, %wv: tensor<16x64xbf16>, %bv: tensor<16xbf16>) -> (tensor<1x64xbf16>, tensor<1x16xbf16>, tensor<1x16xbf16>) {
  %q = genesis.library_call bias %x, %wq transpose_rhs bias %bq : (tensor<1x64xbf16>, tensor<64x64xbf16>, tensor<64xbf16>) -> tensor<1x64xbf16>
  %c = genesis.constant dense<1.0> : tensor<2xf32>
  %k = genesis.library_call bias %x, %wk transpose_rhs bias %bk : (tensor<1x64xbf16>, tensor<16x64xbf16>, tensor<16xbf16>) -> tensor<1x16xbf16>
  %v = genesis.library_call bias %x, %wv transpose_rhs bias %bv : (tensor<1x64xbf16>, tensor<16x64xbf16>, tensor<16xbf16>) -> tensor<1x16xbf16>
  return %q, %k, %v : tensor<1x64xbf16>, tensor<1x16xbf16>, tensor<1x16xbf16>
}

// -----

// SwiGLU: the up and gate projections and silu(gate) * up, read through
// reshapes: one fusion whose only result is the epilogue's; gate and up are
// never yielded, and the reshapes go.
// CHECK-LABEL: func.func @swiglu(
// CHECK: %[[F:.+]] = genesis.fusion %arg0, %arg1, %arg2 : (tensor<2x64xbf16>, tensor<96x64xbf16>, tensor<96x64xbf16>) -> tensor<2x1x96xbf16> {
// CHECK: %[[U:.+]] = genesis.library_call none
// CHECK: %[[G:.+]] = genesis.library_call none
// CHECK-DAG: genesis.reshape %[[U]]
// CHECK-DAG: genesis.reshape %[[G]]
// CHECK: genesis.silu
// CHECK: genesis.yield
// CHECK-NOT: genesis.reshape
// CHECK: return %[[F]]
func.func @swiglu(%x: tensor<2x64xbf16>, %wu: tensor<96x64xbf16>, %wg: tensor<96x64xbf16>) -> tensor<2x1x96xbf16> {
  %u = genesis.library_call none %x, %wu transpose_rhs : (tensor<2x64xbf16>, tensor<96x64xbf16>) -> tensor<2x96xbf16>
  %g = genesis.library_call none %x, %wg transpose_rhs : (tensor<2x64xbf16>, tensor<96x64xbf16>) -> tensor<2x96xbf16>
  %u3 = genesis.reshape %u : tensor<2x96xbf16> -> tensor<2x1x96xbf16>
  %g3 = genesis.reshape %g : tensor<2x96xbf16> -> tensor<2x1x96xbf16>
  %0 = genesis.fusion %g3, %u3 : (tensor<2x1x96xbf16>, tensor<2x1x96xbf16>) -> tensor<2x1x96xbf16> {
  ^bb0(%a: tensor<2x1x96xbf16>, %b: tensor<2x1x96xbf16>):
    %1 = genesis.cast %a : tensor<2x1x96xbf16> to tensor<2x1x96xf32>
    %2 = genesis.silu %1 : tensor<2x1x96xf32>
    %3 = genesis.cast %b : tensor<2x1x96xbf16> to tensor<2x1x96xf32>
    %4 = genesis.mul %2, %3 : tensor<2x1x96xf32>
    %5 = genesis.cast %4 : tensor<2x1x96xf32> to tensor<2x1x96xbf16>
    genesis.yield %5 : tensor<2x1x96xbf16>
  }
  return %0 : tensor<2x1x96xbf16>
}

// -----

// A product whose result is also read elsewhere is yielded beside the
// epilogue's result.
// CHECK-LABEL: func.func @also_read(
// CHECK: %[[F:.+]]:2 = genesis.fusion
// CHECK: return %[[F]]#1, %[[F]]#0
func.func @also_read(%x: tensor<1x32xf32>, %w: tensor<40x32xf32>) -> (tensor<1x40xf32>, tensor<1x40xf32>) {
  %y = genesis.library_call none %x, %w transpose_rhs : (tensor<1x32xf32>, tensor<40x32xf32>) -> tensor<1x40xf32>
  %0 = genesis.fusion %y : (tensor<1x40xf32>) -> tensor<1x40xf32> {
  ^bb0(%a: tensor<1x40xf32>):
    %1 = genesis.exp %a : tensor<1x40xf32>
    genesis.yield %1 : tensor<1x40xf32>
  }
  return %0, %y : tensor<1x40xf32>, tensor<1x40xf32>
}

// -----

// Left alone: a lone product; products of different lhs; too many rows;
// a consumer that is not elementwise over M x N (a row sum). Each product
// still reads the function's arguments (a fused one would read its
// fusion's block arguments).
// CHECK-LABEL: func.func @left(
// CHECK: genesis.library_call none %arg0, %arg3
// CHECK: genesis.library_call none %arg1, %arg3
// CHECK: genesis.library_call none %arg2, %arg3
// CHECK: genesis.reduce_sum
func.func @left(%x: tensor<1x32xf32>, %z: tensor<1x32xf32>, %big: tensor<9x32xf32>, %w: tensor<40x32xf32>) -> (tensor<1x40xf32>, tensor<1x40xf32>, tensor<9x40xf32>, tensor<1xf32>) {
  %a = genesis.library_call none %x, %w transpose_rhs : (tensor<1x32xf32>, tensor<40x32xf32>) -> tensor<1x40xf32>
  %b = genesis.library_call none %z, %w transpose_rhs : (tensor<1x32xf32>, tensor<40x32xf32>) -> tensor<1x40xf32>
  %c = genesis.library_call none %big, %w transpose_rhs : (tensor<9x32xf32>, tensor<40x32xf32>) -> tensor<9x40xf32>
  %0 = genesis.fusion %b : (tensor<1x40xf32>) -> tensor<1xf32> {
  ^bb0(%e: tensor<1x40xf32>):
    %1 = genesis.reduce_sum %e dims [1] : tensor<1x40xf32>
    genesis.yield %1 : tensor<1xf32>
  }
  return %a, %b, %c, %0 : tensor<1x40xf32>, tensor<1x40xf32>, tensor<9x40xf32>, tensor<1xf32>
}

// -----

// An epilogue with a result computed from no product (the emitter computes
// every epilogue value from a warp's products) is not taken; the lone
// product stays.
// CHECK-LABEL: func.func @result_from_no_product(
// CHECK: genesis.library_call none %arg0, %arg1
// CHECK: genesis.fusion
// CHECK: genesis.neg
func.func @result_from_no_product(%x: tensor<1x32xf32>, %w: tensor<40x32xf32>, %b: tensor<1x40xf32>) -> (tensor<1x40xf32>, tensor<1x40xf32>) {
  %y = genesis.library_call none %x, %w transpose_rhs : (tensor<1x32xf32>, tensor<40x32xf32>) -> tensor<1x40xf32>
  %0:2 = genesis.fusion %y, %b : (tensor<1x40xf32>, tensor<1x40xf32>) -> (tensor<1x40xf32>, tensor<1x40xf32>) {
  ^bb0(%a: tensor<1x40xf32>, %c: tensor<1x40xf32>):
    %1 = genesis.exp %a : tensor<1x40xf32>
    %2 = genesis.neg %c : tensor<1x40xf32>
    genesis.yield %1, %2 : tensor<1x40xf32>, tensor<1x40xf32>
  }
  return %0#0, %0#1 : tensor<1x40xf32>, tensor<1x40xf32>
}

// -----

// Dead reshapes of a product (a chain, as genesis-opt may be given before
// any CSE) and the reshapes the epilogue read all go with the products.
// CHECK-LABEL: func.func @dead_reshapes(
// CHECK: %[[F:.+]] = genesis.fusion
// CHECK: genesis.yield
// CHECK-NOT: genesis.reshape
// CHECK: return %[[F]]
func.func @dead_reshapes(%x: tensor<1x32xf32>, %w: tensor<40x32xf32>, %v: tensor<40x32xf32>) -> tensor<40xf32> {
  %y = genesis.library_call none %x, %w transpose_rhs : (tensor<1x32xf32>, tensor<40x32xf32>) -> tensor<1x40xf32>
  %z = genesis.library_call none %x, %v transpose_rhs : (tensor<1x32xf32>, tensor<40x32xf32>) -> tensor<1x40xf32>
  %d1 = genesis.reshape %y : tensor<1x40xf32> -> tensor<40x1xf32>
  %d2 = genesis.reshape %d1 : tensor<40x1xf32> -> tensor<40xf32>
  %r = genesis.reshape %y : tensor<1x40xf32> -> tensor<40xf32>
  %s = genesis.reshape %z : tensor<1x40xf32> -> tensor<40xf32>
  %0 = genesis.fusion %r, %s, %r : (tensor<40xf32>, tensor<40xf32>, tensor<40xf32>) -> tensor<40xf32> {
  ^bb0(%a: tensor<40xf32>, %b: tensor<40xf32>, %c: tensor<40xf32>):
    %1 = genesis.mul %a, %b : tensor<40xf32>
    %2 = genesis.add %1, %c : tensor<40xf32>
    genesis.yield %2 : tensor<40xf32>
  }
  return %0 : tensor<40xf32>
}

// -----

// A decode layer's residual add and RMSNorm (a row fusion) computes the q,
// k and v projections' lhs: it joins nested whole as the prologue; the
// residual sum it yields is still read (returned), so the fusion yields it
// beside the products; the reshape between them goes inside.
// CHECK-LABEL: func.func @norm_prologue(
// CHECK: %[[F:.+]]:3 = genesis.fusion %arg0, %arg1, %arg2, %arg3, %arg4 : (tensor<1x1x64xbf16>, tensor<1x1x64xbf16>, tensor<64xbf16>, tensor<64x64xbf16>, tensor<16x64xbf16>) -> (tensor<1x1x64xbf16>, tensor<1x64xbf16>, tensor<1x16xbf16>)
// CHECK: %[[P:.+]]:2 = genesis.fusion %arg5, %arg6, %arg7
// CHECK: genesis.reduce_sum
// CHECK: %[[L:.+]] = genesis.reshape %[[P]]#1 : tensor<1x1x64xbf16> -> tensor<1x64xbf16>
// CHECK: genesis.library_call none %[[L]], %arg8
// CHECK: genesis.library_call none %[[L]], %arg9
// CHECK: genesis.yield %[[P]]#0,
// CHECK-NOT: genesis.fusion
// CHECK: return %[[F]]#0, %[[F]]#1, %[[F]]#2
func.func @norm_prologue(%x: tensor<1x1x64xbf16>, %d: tensor<1x1x64xbf16>, %g: tensor<64xbf16>, %wq: tensor<64x64xbf16>, %wk: tensor<16x64xbf16>) -> (tensor<1x1x64xbf16>, tensor<1x64xbf16>, tensor<1x16xbf16>) {
  %n:2 = genesis.fusion %x, %d, %g : (tensor<1x1x64xbf16>, tensor<1x1x64xbf16>, tensor<64xbf16>) -> (tensor<1x1x64xbf16>, tensor<1x1x64xbf16>) {
  ^bb0(%a: tensor<1x1x64xbf16>, %b: tensor<1x1x64xbf16>, %c: tensor<64xbf16>):
    %0 = genesis.cast %a : tensor<1x1x64xbf16> to tensor<1x1x64xf32>
    %1 = genesis.cast %b : tensor<1x1x64xbf16> to tensor<1x1x64xf32>
    %2 = genesis.add %0, %1 : tensor<1x1x64xf32>
    %3 = genesis.cast %2 : tensor<1x1x64xf32> to tensor<1x1x64xbf16>
    %4 = genesis.cast %3 : tensor<1x1x64xbf16> to tensor<1x1x64xf32>
    %5 = genesis.mul %4, %4 : tensor<1x1x64xf32>
    %6 = genesis.reduce_sum %5 dims [2] keepdim : tensor<1x1x64xf32>
    %7 = genesis.rsqrt %6 : tensor<1x1x1xf32>
    %8 = genesis.broadcast_in_dim %7, [0, 1, 2] : tensor<1x1x1xf32> -> tensor<1x1x64xf32>
    %9 = genesis.mul %4, %8 : tensor<1x1x64xf32>
    %10 = genesis.cast %c : tensor<64xbf16> to tensor<64xf32>
    %11 = genesis.broadcast_in_dim %10, [2] : tensor<64xf32> -> tensor<1x1x64xf32>
    %12 = genesis.mul %9, %11 : tensor<1x1x64xf32>
    %13 = genesis.cast %12 : tensor<1x1x64xf32> to tensor<1x1x64xbf16>
    genesis.yield %3, %13 : tensor<1x1x64xbf16>, tensor<1x1x64xbf16>
  }
  %l = genesis.reshape %n#1 : tensor<1x1x64xbf16> -> tensor<1x64xbf16>
  %q = genesis.library_call none %l, %wq transpose_rhs : (tensor<1x64xbf16>, tensor<64x64xbf16>) -> tensor<1x64xbf16>
  %k = genesis.library_call none %l, %wk transpose_rhs : (tensor<1x64xbf16>, tensor<16x64xbf16>) -> tensor<1x16xbf16>
  return %n#0, %q, %k : tensor<1x1x64xbf16>, tensor<1x64xbf16>, tensor<1x16xbf16>
}

// -----

// An elementwise prologue (attention's output cast to the weights' type)
// joins a lone product, whose fusion then yields the product only; the
// lhs's reshape, also read elsewhere, reads the fusion's result after it.
// CHECK-LABEL: func.func @cast_prologue(
// CHECK: %[[F:.+]]:2 = genesis.fusion %arg0, %arg1 : (tensor<1x2x1x32xf32>, tensor<64x64xbf16>) -> (tensor<1x2x1x32xbf16>, tensor<1x64xbf16>)
// CHECK: genesis.fusion %arg2
// CHECK: genesis.cast
// CHECK: genesis.library_call none
// CHECK: %[[R:.+]] = genesis.reshape %[[F]]#0 : tensor<1x2x1x32xbf16> -> tensor<1x64xbf16>
// CHECK: return %[[F]]#1, %[[R]]
func.func @cast_prologue(%a: tensor<1x2x1x32xf32>, %w: tensor<64x64xbf16>) -> (tensor<1x64xbf16>, tensor<1x64xbf16>) {
  %c = genesis.fusion %a : (tensor<1x2x1x32xf32>) -> tensor<1x2x1x32xbf16> {
  ^bb0(%x: tensor<1x2x1x32xf32>):
    %0 = genesis.cast %x : tensor<1x2x1x32xf32> to tensor<1x2x1x32xbf16>
    genesis.yield %0 : tensor<1x2x1x32xbf16>
  }
  %l = genesis.reshape %c : tensor<1x2x1x32xbf16> -> tensor<1x64xbf16>
  %y = genesis.library_call none %l, %w transpose_rhs : (tensor<1x64xbf16>, tensor<64x64xbf16>) -> tensor<1x64xbf16>
  return %y, %l : tensor<1x64xbf16>, tensor<1x64xbf16>
}

// -----

// Not a prologue: work between the fusion and the product; an lhs over
// kMaxGemvPrologueBytes (8 x 1600 f32, 51 KB); an epilogue reading the
// prologue's other result.
// CHECK-LABEL: func.func @no_prologue(
// CHECK: genesis.fusion %arg0
// CHECK: genesis.neg
// CHECK: genesis.library_call none
// CHECK: genesis.fusion %arg3
// CHECK: genesis.library_call none
// CHECK: %[[P:.+]]:2 = genesis.fusion %arg0
// CHECK: genesis.fusion {{.+}}%[[P]]#1
func.func @no_prologue(%x: tensor<1x64xf32>, %w: tensor<64x64xf32>, %y: tensor<1x64xf32>, %big: tensor<8x1600xf32>, %wb: tensor<16x1600xf32>) -> (tensor<1x64xf32>, tensor<1x64xf32>, tensor<8x16xf32>, tensor<1x64xf32>) {
  %0 = genesis.fusion %x : (tensor<1x64xf32>) -> tensor<1x64xf32> {
  ^bb0(%a: tensor<1x64xf32>):
    %1 = genesis.exp %a : tensor<1x64xf32>
    genesis.yield %1 : tensor<1x64xf32>
  }
  %n = genesis.neg %y : tensor<1x64xf32>
  %p = genesis.library_call none %0, %w transpose_rhs : (tensor<1x64xf32>, tensor<64x64xf32>) -> tensor<1x64xf32>
  %1 = genesis.fusion %big : (tensor<8x1600xf32>) -> tensor<8x1600xf32> {
  ^bb0(%a: tensor<8x1600xf32>):
    %2 = genesis.exp %a : tensor<8x1600xf32>
    genesis.yield %2 : tensor<8x1600xf32>
  }
  %q = genesis.library_call none %1, %wb transpose_rhs : (tensor<8x1600xf32>, tensor<16x1600xf32>) -> tensor<8x16xf32>
  %2:2 = genesis.fusion %x : (tensor<1x64xf32>) -> (tensor<1x64xf32>, tensor<1x64xf32>) {
  ^bb0(%a: tensor<1x64xf32>):
    %3 = genesis.exp %a : tensor<1x64xf32>
    %4 = genesis.neg %a : tensor<1x64xf32>
    genesis.yield %3, %4 : tensor<1x64xf32>, tensor<1x64xf32>
  }
  %r = genesis.library_call none %2#0, %w transpose_rhs : (tensor<1x64xf32>, tensor<64x64xf32>) -> tensor<1x64xf32>
  %3 = genesis.fusion %r, %2#1 : (tensor<1x64xf32>, tensor<1x64xf32>) -> tensor<1x64xf32> {
  ^bb0(%a: tensor<1x64xf32>, %b: tensor<1x64xf32>):
    %4 = genesis.add %a, %b : tensor<1x64xf32>
    genesis.yield %4 : tensor<1x64xf32>
  }
  return %p, %n, %q, %3 : tensor<1x64xf32>, tensor<1x64xf32>, tensor<8x16xf32>, tensor<1x64xf32>
}

// -----

// Not a prologue either: the product's weight is the fusion's result too
// (h times its own transpose), which the kernel's warps read from memory.
// CHECK-LABEL: func.func @weight_from_prologue(
// CHECK: %[[H:.+]] = genesis.fusion %arg0
// CHECK: genesis.library_call none %[[H]], %[[H]]
func.func @weight_from_prologue(%x: tensor<4x64xf32>) -> tensor<4x4xf32> {
  %h = genesis.fusion %x : (tensor<4x64xf32>) -> tensor<4x64xf32> {
  ^bb0(%a: tensor<4x64xf32>):
    %1 = genesis.exp %a : tensor<4x64xf32>
    genesis.yield %1 : tensor<4x64xf32>
  }
  %y = genesis.library_call none %h, %h transpose_rhs : (tensor<4x64xf32>, tensor<4x64xf32>) -> tensor<4x4xf32>
  return %y : tensor<4x4xf32>
}
