// RUN: genesis-opt %s --split-input-file --genesis-amp | FileCheck %s
// RUN: genesis-opt %s --split-input-file --genesis-amp=compute-type=f16 | FileCheck %s --check-prefix=F16
// RUN: not genesis-opt %s --split-input-file --genesis-amp=compute-type=f8 2>&1 | FileCheck %s --check-prefix=BAD

// Each f32 value feeding a GEMM is cast once (the weight %w feeds three);
// a GEMM's result goes back to f32 for its users, and a GEMM that reads
// another's result takes its 16-bit value directly. A bias added to a GEMM's
// result is cast to 16 bits and becomes the GEMM's epilogue: the sum is
// rounded once, and only in 16 bits.
// CHECK-LABEL: func.func @gemms(
// CHECK-DAG: %[[B:.+]] = genesis.cast %arg2 : tensor<256xf32> to tensor<256xbf16>
// CHECK-DAG: %[[W:.+]] = genesis.cast %arg1 : tensor<128x256xf32> to tensor<128x256xbf16>
// CHECK-DAG: %[[X:.+]] = genesis.cast %arg0 : tensor<64x128xf32> to tensor<64x128xbf16>
// CHECK: %[[S:.+]] = genesis.library_call bias %[[X]], %[[W]] bias %[[B]] : (tensor<64x128xbf16>, tensor<128x256xbf16>, tensor<256xbf16>) -> tensor<64x256xbf16>
// CHECK-NOT: genesis.add
// CHECK: %[[Q:.+]] = genesis.matmul %[[S]], %[[W]] transpose_rhs
// CHECK-NOT: genesis.cast %{{.+}} : tensor<64x128xf32> to tensor<64x128xbf16>
// CHECK: genesis.matmul %[[Q]], %[[W]] : tensor<64x128xbf16>, tensor<128x256xbf16>
// F16: genesis.matmul {{.+}} : tensor<64x128xf16>, tensor<128x256xf16>
// BAD: error: genesis-amp: compute-type must be bf16 or f16, not 'f8'
func.func @gemms(%x: tensor<64x128xf32>, %w: tensor<128x256xf32>, %b: tensor<256xf32>) -> tensor<64x256xf32> {
  %0 = genesis.matmul %x, %w : tensor<64x128xf32>, tensor<128x256xf32>
  %1 = genesis.broadcast_in_dim %b, [1] : tensor<256xf32> -> tensor<64x256xf32>
  %2 = genesis.add %0, %1 : tensor<64x256xf32>
  %3 = genesis.matmul %2, %w transpose_rhs : tensor<64x256xf32>, tensor<128x256xf32>
  %4 = genesis.matmul %3, %w : tensor<64x128xf32>, tensor<128x256xf32>
  return %4 : tensor<64x256xf32>
}

// -----

// f64 GEMMs keep their precision.
// CHECK-LABEL: func.func @f64(
// CHECK-NOT: genesis.cast
// CHECK: genesis.matmul %arg0, %arg0 : tensor<8x8xf64>, tensor<8x8xf64>
func.func @f64(%x: tensor<8x8xf64>) -> tensor<8x8xf64> {
  %0 = genesis.matmul %x, %x : tensor<8x8xf64>, tensor<8x8xf64>
  return %0 : tensor<8x8xf64>
}

// -----

// Casts move across reshapes (a reshape stops fusion): an operand is cast
// before its reshape, and a result's reshape reshapes the 16-bit product.
// CHECK-LABEL: func.func @reshapes(
// CHECK: %[[X:.+]] = genesis.cast %arg0 : tensor<2x4x8xf32> to tensor<2x4x8xbf16>
// CHECK: %[[XR:.+]] = genesis.reshape %[[X]] : tensor<2x4x8xbf16> -> tensor<8x8xbf16>
// CHECK: %[[P:.+]] = genesis.matmul %[[XR]], %{{.+}} : tensor<8x8xbf16>, tensor<8x8xbf16>
// CHECK: %[[PR:.+]] = genesis.reshape %[[P]] : tensor<8x8xbf16> -> tensor<2x4x8xbf16>
// CHECK: %[[Y:.+]] = genesis.cast %[[PR]] : tensor<2x4x8xbf16> to tensor<2x4x8xf32>
// CHECK: return %[[Y]]
func.func @reshapes(%x: tensor<2x4x8xf32>, %w: tensor<8x8xf32>) -> tensor<2x4x8xf32> {
  %0 = genesis.reshape %x : tensor<2x4x8xf32> -> tensor<8x8xf32>
  %1 = genesis.matmul %0, %w : tensor<8x8xf32>, tensor<8x8xf32>
  %2 = genesis.reshape %1 : tensor<8x8xf32> -> tensor<2x4x8xf32>
  return %2 : tensor<2x4x8xf32>
}

// -----

// The bias epilogue through a reshape that keeps the last dimension (a
// linear layer on [batch, sequence, features]); the reshape moves to the
// 16-bit result. A bias of another dimension, or a GEMM result with other
// users, stays an f32 add.
// CHECK-LABEL: func.func @linear(
// CHECK: %[[L:.+]] = genesis.library_call bias %{{.+}}, %{{.+}} bias %{{.+}} : (tensor<8x8xbf16>, tensor<8x6xbf16>, tensor<6xbf16>) -> tensor<8x6xbf16>
// CHECK: %[[R:.+]] = genesis.reshape %[[L]] : tensor<8x6xbf16> -> tensor<2x4x6xbf16>
// CHECK: %[[Y:.+]] = genesis.cast %[[R]] : tensor<2x4x6xbf16> to tensor<2x4x6xf32>
// CHECK: return %[[Y]]
func.func @linear(%x: tensor<8x8xf32>, %w: tensor<8x6xf32>, %b: tensor<6xf32>) -> tensor<2x4x6xf32> {
  %0 = genesis.matmul %x, %w : tensor<8x8xf32>, tensor<8x6xf32>
  %1 = genesis.reshape %0 : tensor<8x6xf32> -> tensor<2x4x6xf32>
  %2 = genesis.broadcast_in_dim %b, [2] : tensor<6xf32> -> tensor<2x4x6xf32>
  %3 = genesis.add %1, %2 : tensor<2x4x6xf32>
  return %3 : tensor<2x4x6xf32>
}

// CHECK-LABEL: func.func @not_a_bias(
// CHECK-NOT: genesis.library_call
// CHECK: genesis.add {{.+}} : tensor<8x6xf32>
// CHECK: genesis.add {{.+}} : tensor<8x6xf32>
func.func @not_a_bias(%x: tensor<8x8xf32>, %w: tensor<8x6xf32>, %b: tensor<8xf32>, %c: tensor<6xf32>) -> (tensor<8x6xf32>, tensor<8x6xf32>) {
  %0 = genesis.matmul %x, %w : tensor<8x8xf32>, tensor<8x6xf32>
  %1 = genesis.broadcast_in_dim %b, [0] : tensor<8xf32> -> tensor<8x6xf32>
  %2 = genesis.add %0, %1 : tensor<8x6xf32>
  %3 = genesis.matmul %x, %w : tensor<8x8xf32>, tensor<8x6xf32>
  %4 = genesis.broadcast_in_dim %c, [1] : tensor<6xf32> -> tensor<8x6xf32>
  %5 = genesis.add %3, %4 : tensor<8x6xf32>
  %6 = genesis.add %3, %5 : tensor<8x6xf32>
  return %2, %6 : tensor<8x6xf32>, tensor<8x6xf32>
}

// -----

// Cross-entropy over 1024 classes (the GPU's wide kernel) reads the 16-bit
// logits through the reshapes and genesis-pad-classes' select, rebuilt in
// 16 bits (-1e30 clamps to f16's -65504); the loss stays f32 and the
// gradient, now 16-bit, feeds the backward GEMM without a cast.
// CHECK-LABEL: func.func @classifier(
// CHECK: %[[P:.+]] = genesis.matmul {{.+}} : tensor<16x64xbf16>, tensor<1024x64xbf16>
// CHECK: %[[H:.+]] = genesis.constant dense<-1.{{[0-9]+}}e+30> : tensor<16x1024xbf16>
// CHECK: %[[S:.+]] = genesis.select %arg4, %[[P]], %[[H]] : tensor<16x1024xi1>, tensor<16x1024xbf16>
// CHECK: %[[R:.+]] = genesis.reshape %[[S]] : tensor<16x1024xbf16> -> tensor<2x8x1024xbf16>
// CHECK: %[[F:.+]] = genesis.reshape %[[R]] : tensor<2x8x1024xbf16> -> tensor<16x1024xbf16>
// CHECK: genesis.cross_entropy %[[F]], %arg2 {{.+}} : (tensor<16x1024xbf16>, tensor<16xi64>) -> tensor<16xf32>
// CHECK: %[[D:.+]] = genesis.cross_entropy_grad %[[F]], %arg2, %arg3 {{.+}} -> tensor<16x1024xbf16>
// CHECK: genesis.matmul %[[D]], %{{.+}} : tensor<16x1024xbf16>, tensor<1024x64xbf16>
// F16-LABEL: func.func @classifier(
// F16: genesis.constant dense<-6.550400e+04> : tensor<16x1024xf16>
// F16: genesis.cross_entropy_grad {{.+}} -> tensor<16x1024xf16>
func.func @classifier(%x: tensor<16x64xf32>, %w: tensor<1024x64xf32>, %y: tensor<16xi64>, %g: tensor<16xf32>, %m: tensor<16x1024xi1>) -> (tensor<16xf32>, tensor<16x64xf32>) {
  %l = genesis.matmul %x, %w transpose_rhs : tensor<16x64xf32>, tensor<1024x64xf32>
  %h = genesis.constant dense<-1.0e30> : tensor<16x1024xf32>
  %s = genesis.select %m, %l, %h : tensor<16x1024xi1>, tensor<16x1024xf32>
  %r = genesis.reshape %s : tensor<16x1024xf32> -> tensor<2x8x1024xf32>
  %f = genesis.reshape %r : tensor<2x8x1024xf32> -> tensor<16x1024xf32>
  %loss = genesis.cross_entropy %f, %y {reduction = 0 : i32} : (tensor<16x1024xf32>, tensor<16xi64>) -> tensor<16xf32>
  %d = genesis.cross_entropy_grad %f, %y, %g {reduction = 0 : i32} : (tensor<16x1024xf32>, tensor<16xi64>, tensor<16xf32>) -> tensor<16x1024xf32>
  %dx = genesis.matmul %d, %w : tensor<16x1024xf32>, tensor<1024x64xf32>
  return %loss, %dx : tensor<16xf32>, tensor<16x64xf32>
}
