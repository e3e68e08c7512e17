// Round trip of every genesis op: parse the custom syntax, print it, parse the
// printed text again and print it once more (the second print must match the
// CHECK lines too), across the element types each op allows. The second RUN
// line goes through the generic form: generic print -> parse -> custom print.
//
// RUN: genesis-opt %s --split-input-file | genesis-opt --split-input-file | FileCheck %s
// RUN: genesis-opt %s --split-input-file --mlir-print-op-generic | genesis-opt --split-input-file | FileCheck %s

// Splat and non-splat constants of every element type; -0.0 stays -0.0.
// CHECK-LABEL: func.func @constant(
// CHECK-SAME:  ) -> (tensor<2x3xf32>, tensor<4xi64>, tensor<i1>, tensor<2xbf16>, tensor<f64>, tensor<3xi32>, tensor<2xf16>) {
// CHECK-NEXT:    %0 = genesis.constant dense<1.000000e+00> : tensor<2x3xf32>
// CHECK-NEXT:    %1 = genesis.constant dense<[0, 1, 2, 3]> : tensor<4xi64>
// CHECK-NEXT:    %2 = genesis.constant dense<true> : tensor<i1>
// CHECK-NEXT:    %3 = genesis.constant dense<[1.500000e+00, -2.000000e+00]> : tensor<2xbf16>
// CHECK-NEXT:    %4 = genesis.constant dense<5.000000e-01> : tensor<f64>
// CHECK-NEXT:    %5 = genesis.constant dense<-7> : tensor<3xi32>
// CHECK-NEXT:    %6 = genesis.constant dense<[0.000000e+00, -0.000000e+00]> : tensor<2xf16>
// CHECK-NEXT:    return %0, %1, %2, %3, %4, %5, %6 : tensor<2x3xf32>, tensor<4xi64>, tensor<i1>, tensor<2xbf16>, tensor<f64>, tensor<3xi32>, tensor<2xf16>
func.func @constant() -> (tensor<2x3xf32>, tensor<4xi64>, tensor<i1>, tensor<2xbf16>, tensor<f64>, tensor<3xi32>, tensor<2xf16>) {
  %0 = genesis.constant dense<1.0> : tensor<2x3xf32>
  %1 = genesis.constant dense<[0, 1, 2, 3]> : tensor<4xi64>
  %2 = genesis.constant dense<true> : tensor<i1>
  %3 = genesis.constant dense<[1.5, -2.0]> : tensor<2xbf16>
  %4 = genesis.constant dense<0.5> : tensor<f64>
  %5 = genesis.constant dense<-7> : tensor<3xi32>
  %6 = genesis.constant dense<[0.0, -0.0]> : tensor<2xf16>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<2x3xf32>, tensor<4xi64>, tensor<i1>, tensor<2xbf16>, tensor<f64>, tensor<3xi32>, tensor<2xf16>
}

// -----

// gelu's default approximation (erf) is not printed.
// CHECK-LABEL: func.func @unary_float(
// CHECK-SAME:  %arg0: tensor<2x3xf32>, %arg1: tensor<4xf16>, %arg2: tensor<4xbf16>, %arg3: tensor<f64>) -> (tensor<2x3xf32>, tensor<4xf16>, tensor<4xbf16>, tensor<f64>, tensor<2x3xf32>, tensor<4xf16>, tensor<4xbf16>, tensor<f64>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<4xbf16>, tensor<4xf16>) {
// CHECK-NEXT:    %0 = genesis.exp %arg0 : tensor<2x3xf32>
// CHECK-NEXT:    %1 = genesis.log %arg1 : tensor<4xf16>
// CHECK-NEXT:    %2 = genesis.sqrt %arg2 : tensor<4xbf16>
// CHECK-NEXT:    %3 = genesis.rsqrt %arg3 : tensor<f64>
// CHECK-NEXT:    %4 = genesis.tanh %arg0 : tensor<2x3xf32>
// CHECK-NEXT:    %5 = genesis.sigmoid %arg1 : tensor<4xf16>
// CHECK-NEXT:    %6 = genesis.silu %arg2 : tensor<4xbf16>
// CHECK-NEXT:    %7 = genesis.sin %arg3 : tensor<f64>
// CHECK-NEXT:    %8 = genesis.cos %arg0 : tensor<2x3xf32>
// CHECK-NEXT:    %9 = genesis.gelu %arg0 : tensor<2x3xf32>
// CHECK-NEXT:    %10 = genesis.gelu %arg2 approximate = tanh : tensor<4xbf16>
// CHECK-NEXT:    %11 = genesis.gelu %arg1 : tensor<4xf16>
// CHECK-NEXT:    return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11 : tensor<2x3xf32>, tensor<4xf16>, tensor<4xbf16>, tensor<f64>, tensor<2x3xf32>, tensor<4xf16>, tensor<4xbf16>, tensor<f64>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<4xbf16>, tensor<4xf16>
func.func @unary_float(%f32: tensor<2x3xf32>, %f16: tensor<4xf16>, %bf16: tensor<4xbf16>, %f64: tensor<f64>) -> (tensor<2x3xf32>, tensor<4xf16>, tensor<4xbf16>, tensor<f64>, tensor<2x3xf32>, tensor<4xf16>, tensor<4xbf16>, tensor<f64>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<4xbf16>, tensor<4xf16>) {
  %0 = genesis.exp %f32 : tensor<2x3xf32>
  %1 = genesis.log %f16 : tensor<4xf16>
  %2 = genesis.sqrt %bf16 : tensor<4xbf16>
  %3 = genesis.rsqrt %f64 : tensor<f64>
  %4 = genesis.tanh %f32 : tensor<2x3xf32>
  %5 = genesis.sigmoid %f16 : tensor<4xf16>
  %6 = genesis.silu %bf16 : tensor<4xbf16>
  %7 = genesis.sin %f64 : tensor<f64>
  %8 = genesis.cos %f32 : tensor<2x3xf32>
  %9 = genesis.gelu %f32 : tensor<2x3xf32>
  %10 = genesis.gelu %bf16 approximate = tanh : tensor<4xbf16>
  %11 = genesis.gelu %f16 approximate = erf : tensor<4xf16>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11 : tensor<2x3xf32>, tensor<4xf16>, tensor<4xbf16>, tensor<f64>, tensor<2x3xf32>, tensor<4xf16>, tensor<4xbf16>, tensor<f64>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<4xbf16>, tensor<4xf16>
}

// -----

// CHECK-LABEL: func.func @unary_numeric(
// CHECK-SAME:  %arg0: tensor<2x3xf32>, %arg1: tensor<5xi32>, %arg2: tensor<i64>, %arg3: tensor<4xf16>) -> (tensor<2x3xf32>, tensor<5xi32>, tensor<i64>, tensor<4xf16>, tensor<2x3xf32>, tensor<5xi32>, tensor<2x3xf32>, tensor<i64>) {
// CHECK-NEXT:    %0 = genesis.neg %arg0 : tensor<2x3xf32>
// CHECK-NEXT:    %1 = genesis.neg %arg1 : tensor<5xi32>
// CHECK-NEXT:    %2 = genesis.abs %arg2 : tensor<i64>
// CHECK-NEXT:    %3 = genesis.abs %arg3 : tensor<4xf16>
// CHECK-NEXT:    %4 = genesis.sign %arg0 : tensor<2x3xf32>
// CHECK-NEXT:    %5 = genesis.sign %arg1 : tensor<5xi32>
// CHECK-NEXT:    %6 = genesis.relu %arg0 : tensor<2x3xf32>
// CHECK-NEXT:    %7 = genesis.relu %arg2 : tensor<i64>
// CHECK-NEXT:    return %0, %1, %2, %3, %4, %5, %6, %7 : tensor<2x3xf32>, tensor<5xi32>, tensor<i64>, tensor<4xf16>, tensor<2x3xf32>, tensor<5xi32>, tensor<2x3xf32>, tensor<i64>
func.func @unary_numeric(%f32: tensor<2x3xf32>, %i32: tensor<5xi32>, %i64: tensor<i64>, %f16: tensor<4xf16>) -> (tensor<2x3xf32>, tensor<5xi32>, tensor<i64>, tensor<4xf16>, tensor<2x3xf32>, tensor<5xi32>, tensor<2x3xf32>, tensor<i64>) {
  %0 = genesis.neg %f32 : tensor<2x3xf32>
  %1 = genesis.neg %i32 : tensor<5xi32>
  %2 = genesis.abs %i64 : tensor<i64>
  %3 = genesis.abs %f16 : tensor<4xf16>
  %4 = genesis.sign %f32 : tensor<2x3xf32>
  %5 = genesis.sign %i32 : tensor<5xi32>
  %6 = genesis.relu %f32 : tensor<2x3xf32>
  %7 = genesis.relu %i64 : tensor<i64>
  return %0, %1, %2, %3, %4, %5, %6, %7 : tensor<2x3xf32>, tensor<5xi32>, tensor<i64>, tensor<4xf16>, tensor<2x3xf32>, tensor<5xi32>, tensor<2x3xf32>, tensor<i64>
}

// -----

// CHECK-LABEL: func.func @erf_stop_gradient(
// CHECK-SAME:  %arg0: tensor<4xf32>, %arg1: tensor<2x2xbf16>, %arg2: tensor<3xi64>, %arg3: tensor<i1>) -> (tensor<4xf32>, tensor<2x2xbf16>, tensor<4xf32>, tensor<3xi64>, tensor<i1>) {
// CHECK-NEXT:    %0 = genesis.erf %arg0 : tensor<4xf32>
// CHECK-NEXT:    %1 = genesis.erf %arg1 : tensor<2x2xbf16>
// CHECK-NEXT:    %2 = genesis.stop_gradient %arg0 : tensor<4xf32>
// CHECK-NEXT:    %3 = genesis.stop_gradient %arg2 : tensor<3xi64>
// CHECK-NEXT:    %4 = genesis.stop_gradient %arg3 : tensor<i1>
// CHECK-NEXT:    return %0, %1, %2, %3, %4 : tensor<4xf32>, tensor<2x2xbf16>, tensor<4xf32>, tensor<3xi64>, tensor<i1>
func.func @erf_stop_gradient(%a: tensor<4xf32>, %b: tensor<2x2xbf16>, %i: tensor<3xi64>, %p: tensor<i1>) -> (tensor<4xf32>, tensor<2x2xbf16>, tensor<4xf32>, tensor<3xi64>, tensor<i1>) {
  %0 = genesis.erf %a : tensor<4xf32>
  %1 = genesis.erf %b : tensor<2x2xbf16>
  %2 = genesis.stop_gradient %a : tensor<4xf32>
  %3 = genesis.stop_gradient %i : tensor<3xi64>
  %4 = genesis.stop_gradient %p : tensor<i1>
  return %0, %1, %2, %3, %4 : tensor<4xf32>, tensor<2x2xbf16>, tensor<4xf32>, tensor<3xi64>, tensor<i1>
}

// -----

// CHECK-LABEL: func.func @not(
// CHECK-SAME:  %arg0: tensor<2x2xi1>) -> tensor<2x2xi1> {
// CHECK-NEXT:    %0 = genesis.not %arg0 : tensor<2x2xi1>
// CHECK-NEXT:    return %0 : tensor<2x2xi1>
func.func @not(%a: tensor<2x2xi1>) -> tensor<2x2xi1> {
  %0 = genesis.not %a : tensor<2x2xi1>
  return %0 : tensor<2x2xi1>
}

// -----

// CHECK-LABEL: func.func @binary(
// CHECK-SAME:  %arg0: tensor<2x3xf32>, %arg1: tensor<2x3xf32>, %arg2: tensor<4xi32>, %arg3: tensor<4xi32>, %arg4: tensor<8xbf16>, %arg5: tensor<f64>, %arg6: tensor<3xi64>, %arg7: tensor<2xf16>) -> (tensor<2x3xf32>, tensor<4xi32>, tensor<8xbf16>, tensor<3xi64>, tensor<f64>, tensor<4xi32>, tensor<2x3xf32>, tensor<3xi64>, tensor<2xf16>, tensor<2x3xf32>, tensor<4xi32>, tensor<8xbf16>, tensor<3xi64>) {
// CHECK-NEXT:    %0 = genesis.add %arg0, %arg1 : tensor<2x3xf32>
// CHECK-NEXT:    %1 = genesis.add %arg2, %arg3 : tensor<4xi32>
// CHECK-NEXT:    %2 = genesis.sub %arg4, %arg4 : tensor<8xbf16>
// CHECK-NEXT:    %3 = genesis.sub %arg6, %arg6 : tensor<3xi64>
// CHECK-NEXT:    %4 = genesis.mul %arg5, %arg5 : tensor<f64>
// CHECK-NEXT:    %5 = genesis.mul %arg2, %arg3 : tensor<4xi32>
// CHECK-NEXT:    %6 = genesis.div %arg0, %arg1 : tensor<2x3xf32>
// CHECK-NEXT:    %7 = genesis.div %arg6, %arg6 : tensor<3xi64>
// CHECK-NEXT:    %8 = genesis.pow %arg7, %arg7 : tensor<2xf16>
// CHECK-NEXT:    %9 = genesis.max %arg0, %arg1 : tensor<2x3xf32>
// CHECK-NEXT:    %10 = genesis.max %arg2, %arg3 : tensor<4xi32>
// CHECK-NEXT:    %11 = genesis.min %arg4, %arg4 : tensor<8xbf16>
// CHECK-NEXT:    %12 = genesis.min %arg6, %arg6 : tensor<3xi64>
// CHECK-NEXT:    return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12 : tensor<2x3xf32>, tensor<4xi32>, tensor<8xbf16>, tensor<3xi64>, tensor<f64>, tensor<4xi32>, tensor<2x3xf32>, tensor<3xi64>, tensor<2xf16>, tensor<2x3xf32>, tensor<4xi32>, tensor<8xbf16>, tensor<3xi64>
func.func @binary(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>, %i: tensor<4xi32>, %j: tensor<4xi32>,
                  %h: tensor<8xbf16>, %d: tensor<f64>, %l: tensor<3xi64>, %e: tensor<2xf16>) -> (tensor<2x3xf32>, tensor<4xi32>, tensor<8xbf16>, tensor<3xi64>, tensor<f64>, tensor<4xi32>, tensor<2x3xf32>, tensor<3xi64>, tensor<2xf16>, tensor<2x3xf32>, tensor<4xi32>, tensor<8xbf16>, tensor<3xi64>) {
  %0 = genesis.add %a, %b : tensor<2x3xf32>
  %1 = genesis.add %i, %j : tensor<4xi32>
  %2 = genesis.sub %h, %h : tensor<8xbf16>
  %3 = genesis.sub %l, %l : tensor<3xi64>
  %4 = genesis.mul %d, %d : tensor<f64>
  %5 = genesis.mul %i, %j : tensor<4xi32>
  %6 = genesis.div %a, %b : tensor<2x3xf32>
  %7 = genesis.div %l, %l : tensor<3xi64>
  %8 = genesis.pow %e, %e : tensor<2xf16>
  %9 = genesis.max %a, %b : tensor<2x3xf32>
  %10 = genesis.max %i, %j : tensor<4xi32>
  %11 = genesis.min %h, %h : tensor<8xbf16>
  %12 = genesis.min %l, %l : tensor<3xi64>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12 : tensor<2x3xf32>, tensor<4xi32>, tensor<8xbf16>, tensor<3xi64>, tensor<f64>, tensor<4xi32>, tensor<2x3xf32>, tensor<3xi64>, tensor<2xf16>, tensor<2x3xf32>, tensor<4xi32>, tensor<8xbf16>, tensor<3xi64>
}

// -----

// CHECK-LABEL: func.func @logical(
// CHECK-SAME:  %arg0: tensor<3xi1>, %arg1: tensor<3xi1>) -> (tensor<3xi1>, tensor<3xi1>) {
// CHECK-NEXT:    %0 = genesis.and %arg0, %arg1 : tensor<3xi1>
// CHECK-NEXT:    %1 = genesis.or %arg0, %arg1 : tensor<3xi1>
// CHECK-NEXT:    return %0, %1 : tensor<3xi1>, tensor<3xi1>
func.func @logical(%a: tensor<3xi1>, %b: tensor<3xi1>) -> (tensor<3xi1>, tensor<3xi1>) {
  %0 = genesis.and %a, %b : tensor<3xi1>
  %1 = genesis.or %a, %b : tensor<3xi1>
  return %0, %1 : tensor<3xi1>, tensor<3xi1>
}

// -----

// CHECK-LABEL: func.func @compare(
// CHECK-SAME:  %arg0: tensor<2x3xf32>, %arg1: tensor<2x3xf32>, %arg2: tensor<4xi64>, %arg3: tensor<i1>, %arg4: tensor<2xbf16>) -> (tensor<2x3xi1>, tensor<4xi1>, tensor<2xi1>, tensor<2x3xi1>, tensor<4xi1>, tensor<i1>) {
// CHECK-NEXT:    %0 = genesis.compare eq, %arg0, %arg1 : tensor<2x3xf32>
// CHECK-NEXT:    %1 = genesis.compare ne, %arg2, %arg2 : tensor<4xi64>
// CHECK-NEXT:    %2 = genesis.compare lt, %arg4, %arg4 : tensor<2xbf16>
// CHECK-NEXT:    %3 = genesis.compare le, %arg0, %arg1 : tensor<2x3xf32>
// CHECK-NEXT:    %4 = genesis.compare gt, %arg2, %arg2 : tensor<4xi64>
// CHECK-NEXT:    %5 = genesis.compare ge, %arg3, %arg3 : tensor<i1>
// CHECK-NEXT:    return %0, %1, %2, %3, %4, %5 : tensor<2x3xi1>, tensor<4xi1>, tensor<2xi1>, tensor<2x3xi1>, tensor<4xi1>, tensor<i1>
func.func @compare(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>, %i: tensor<4xi64>, %p: tensor<i1>, %h: tensor<2xbf16>) -> (tensor<2x3xi1>, tensor<4xi1>, tensor<2xi1>, tensor<2x3xi1>, tensor<4xi1>, tensor<i1>) {
  %0 = genesis.compare eq, %a, %b : tensor<2x3xf32>
  %1 = genesis.compare ne, %i, %i : tensor<4xi64>
  %2 = genesis.compare lt, %h, %h : tensor<2xbf16>
  %3 = genesis.compare le, %a, %b : tensor<2x3xf32>
  %4 = genesis.compare gt, %i, %i : tensor<4xi64>
  %5 = genesis.compare ge, %p, %p : tensor<i1>
  return %0, %1, %2, %3, %4, %5 : tensor<2x3xi1>, tensor<4xi1>, tensor<2xi1>, tensor<2x3xi1>, tensor<4xi1>, tensor<i1>
}

// -----

// CHECK-LABEL: func.func @select(
// CHECK-SAME:  %arg0: tensor<2x3xi1>, %arg1: tensor<2x3xf32>, %arg2: tensor<2x3xf32>, %arg3: tensor<i1>, %arg4: tensor<i32>) -> (tensor<2x3xf32>, tensor<i32>) {
// CHECK-NEXT:    %0 = genesis.select %arg0, %arg1, %arg2 : tensor<2x3xi1>, tensor<2x3xf32>
// CHECK-NEXT:    %1 = genesis.select %arg3, %arg4, %arg4 : tensor<i1>, tensor<i32>
// CHECK-NEXT:    return %0, %1 : tensor<2x3xf32>, tensor<i32>
func.func @select(%c: tensor<2x3xi1>, %a: tensor<2x3xf32>, %b: tensor<2x3xf32>, %s: tensor<i1>, %i: tensor<i32>) -> (tensor<2x3xf32>, tensor<i32>) {
  %0 = genesis.select %c, %a, %b : tensor<2x3xi1>, tensor<2x3xf32>
  %1 = genesis.select %s, %i, %i : tensor<i1>, tensor<i32>
  return %0, %1 : tensor<2x3xf32>, tensor<i32>
}

// -----

// CHECK-LABEL: func.func @cast(
// CHECK-SAME:  %arg0: tensor<4xf32>, %arg1: tensor<4xi64>, %arg2: tensor<4xi1>) -> (tensor<4xbf16>, tensor<4xi32>, tensor<4xf64>, tensor<4xi1>, tensor<4xf16>) {
// CHECK-NEXT:    %0 = genesis.cast %arg0 : tensor<4xf32> to tensor<4xbf16>
// CHECK-NEXT:    %1 = genesis.cast %arg0 : tensor<4xf32> to tensor<4xi32>
// CHECK-NEXT:    %2 = genesis.cast %arg1 : tensor<4xi64> to tensor<4xf64>
// CHECK-NEXT:    %3 = genesis.cast %arg1 : tensor<4xi64> to tensor<4xi1>
// CHECK-NEXT:    %4 = genesis.cast %arg2 : tensor<4xi1> to tensor<4xf16>
// CHECK-NEXT:    return %0, %1, %2, %3, %4 : tensor<4xbf16>, tensor<4xi32>, tensor<4xf64>, tensor<4xi1>, tensor<4xf16>
func.func @cast(%a: tensor<4xf32>, %i: tensor<4xi64>, %p: tensor<4xi1>) -> (tensor<4xbf16>, tensor<4xi32>, tensor<4xf64>, tensor<4xi1>, tensor<4xf16>) {
  %0 = genesis.cast %a : tensor<4xf32> to tensor<4xbf16>
  %1 = genesis.cast %a : tensor<4xf32> to tensor<4xi32>
  %2 = genesis.cast %i : tensor<4xi64> to tensor<4xf64>
  %3 = genesis.cast %i : tensor<4xi64> to tensor<4xi1>
  %4 = genesis.cast %p : tensor<4xi1> to tensor<4xf16>
  return %0, %1, %2, %3, %4 : tensor<4xbf16>, tensor<4xi32>, tensor<4xf64>, tensor<4xi1>, tensor<4xf16>
}

// -----

// CHECK-LABEL: func.func @shape(
// CHECK-SAME:  %arg0: tensor<2x3x4xf32>, %arg1: tensor<8xi64>, %arg2: tensor<2x5x4xf32>) -> (tensor<6x4xf32>, tensor<2x2x2xi64>, tensor<4x2x3xf32>, tensor<2x2x2xf32>, tensor<3xi64>, tensor<2x8x4xf32>, tensor<8xi64>, tensor<24xi64>) {
// CHECK-NEXT:    %0 = genesis.reshape %arg0 : tensor<2x3x4xf32> -> tensor<6x4xf32>
// CHECK-NEXT:    %1 = genesis.reshape %arg1 : tensor<8xi64> -> tensor<2x2x2xi64>
// CHECK-NEXT:    %2 = genesis.transpose %arg0, [2, 0, 1] : tensor<2x3x4xf32>
// CHECK-NEXT:    %3 = genesis.slice %arg0 start [0, 1, 0] limit [2, 3, 4] stride [1, 1, 2] : tensor<2x3x4xf32>
// CHECK-NEXT:    %4 = genesis.slice %arg1 start [1] limit [8] stride [3] : tensor<8xi64>
// CHECK-NEXT:    %5 = genesis.concat %arg0, %arg2 dim 1 : tensor<2x3x4xf32>, tensor<2x5x4xf32>
// CHECK-NEXT:    %6 = genesis.concat %arg1 dim 0 : tensor<8xi64>
// CHECK-NEXT:    %7 = genesis.concat %arg1, %arg1, %arg1 dim 0 : tensor<8xi64>, tensor<8xi64>, tensor<8xi64>
// CHECK-NEXT:    return %0, %1, %2, %3, %4, %5, %6, %7 : tensor<6x4xf32>, tensor<2x2x2xi64>, tensor<4x2x3xf32>, tensor<2x2x2xf32>, tensor<3xi64>, tensor<2x8x4xf32>, tensor<8xi64>, tensor<24xi64>
func.func @shape(%a: tensor<2x3x4xf32>, %v: tensor<8xi64>, %b: tensor<2x5x4xf32>) -> (tensor<6x4xf32>, tensor<2x2x2xi64>, tensor<4x2x3xf32>, tensor<2x2x2xf32>, tensor<3xi64>, tensor<2x8x4xf32>, tensor<8xi64>, tensor<24xi64>) {
  %0 = genesis.reshape %a : tensor<2x3x4xf32> -> tensor<6x4xf32>
  %1 = genesis.reshape %v : tensor<8xi64> -> tensor<2x2x2xi64>
  %2 = genesis.transpose %a, [2, 0, 1] : tensor<2x3x4xf32>
  %3 = genesis.slice %a start [0, 1, 0] limit [2, 3, 4] stride [1, 1, 2] : tensor<2x3x4xf32>
  %4 = genesis.slice %v start [1] limit [8] stride [3] : tensor<8xi64>
  %5 = genesis.concat %a, %b dim 1 : tensor<2x3x4xf32>, tensor<2x5x4xf32>
  %6 = genesis.concat %v dim 0 : tensor<8xi64>
  %7 = genesis.concat %v, %v, %v dim 0 : tensor<8xi64>, tensor<8xi64>, tensor<8xi64>
  return %0, %1, %2, %3, %4, %5, %6, %7 : tensor<6x4xf32>, tensor<2x2x2xi64>, tensor<4x2x3xf32>, tensor<2x2x2xf32>, tensor<3xi64>, tensor<2x8x4xf32>, tensor<8xi64>, tensor<24xi64>
}

// -----

// Empty slices, a stride past the end, and a stride near INT64_MAX (whose
// result size must not overflow).
// CHECK-LABEL: func.func @slice_strides(
// CHECK-SAME:  %arg0: tensor<4xf32>) -> (tensor<1xf32>, tensor<1xf32>, tensor<0xf32>) {
// CHECK-NEXT:    %0 = genesis.slice %arg0 start [0] limit [2] stride [9223372036854775807] : tensor<4xf32>
// CHECK-NEXT:    %1 = genesis.slice %arg0 start [3] limit [4] stride [5] : tensor<4xf32>
// CHECK-NEXT:    %2 = genesis.slice %arg0 start [2] limit [2] stride [1] : tensor<4xf32>
// CHECK-NEXT:    return %0, %1, %2 : tensor<1xf32>, tensor<1xf32>, tensor<0xf32>
func.func @slice_strides(%a: tensor<4xf32>) -> (tensor<1xf32>, tensor<1xf32>, tensor<0xf32>) {
  %0 = genesis.slice %a start [0] limit [2] stride [9223372036854775807] : tensor<4xf32>
  %1 = genesis.slice %a start [3] limit [4] stride [5] : tensor<4xf32>
  %2 = genesis.slice %a start [2] limit [2] stride [1] : tensor<4xf32>
  return %0, %1, %2 : tensor<1xf32>, tensor<1xf32>, tensor<0xf32>
}

// -----

// Result size along d: low + high + n + max(n - 1, 0) * interior.
// CHECK-LABEL: func.func @pad(
// CHECK-SAME:  %arg0: tensor<2x3xf32>, %arg1: tensor<4xi32>, %arg2: tensor<0xf16>) -> (tensor<3x7xf32>, tensor<4xi32>, tensor<3xf16>) {
// CHECK-NEXT:    %0 = genesis.pad %arg0 low [1, 0] high [0, 2] interior [0, 1] : tensor<2x3xf32>
// CHECK-NEXT:    %1 = genesis.pad %arg1 low [0] high [0] interior [0] : tensor<4xi32>
// CHECK-NEXT:    %2 = genesis.pad %arg2 low [1] high [2] interior [3] : tensor<0xf16>
// CHECK-NEXT:    return %0, %1, %2 : tensor<3x7xf32>, tensor<4xi32>, tensor<3xf16>
func.func @pad(%a: tensor<2x3xf32>, %i: tensor<4xi32>, %z: tensor<0xf16>) -> (tensor<3x7xf32>, tensor<4xi32>, tensor<3xf16>) {
  %0 = genesis.pad %a low [1, 0] high [0, 2] interior [0, 1] : tensor<2x3xf32>
  %1 = genesis.pad %i low [0] high [0] interior [0] : tensor<4xi32>
  %2 = genesis.pad %z low [1] high [2] interior [3] : tensor<0xf16>
  return %0, %1, %2 : tensor<3x7xf32>, tensor<4xi32>, tensor<3xf16>
}

// -----

// CHECK-LABEL: func.func @broadcast_in_dim(
// CHECK-SAME:  %arg0: tensor<8xf32>, %arg1: tensor<i1>, %arg2: tensor<1x3xbf16>) -> (tensor<4x8xf32>, tensor<2x2xi1>, tensor<5x2x3xbf16>) {
// CHECK-NEXT:    %0 = genesis.broadcast_in_dim %arg0, [1] : tensor<8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %1 = genesis.broadcast_in_dim %arg1, [] : tensor<i1> -> tensor<2x2xi1>
// CHECK-NEXT:    %2 = genesis.broadcast_in_dim %arg2, [0, 2] : tensor<1x3xbf16> -> tensor<5x2x3xbf16>
// CHECK-NEXT:    return %0, %1, %2 : tensor<4x8xf32>, tensor<2x2xi1>, tensor<5x2x3xbf16>
func.func @broadcast_in_dim(%a: tensor<8xf32>, %s: tensor<i1>, %b: tensor<1x3xbf16>) -> (tensor<4x8xf32>, tensor<2x2xi1>, tensor<5x2x3xbf16>) {
  %0 = genesis.broadcast_in_dim %a, [1] : tensor<8xf32> -> tensor<4x8xf32>
  %1 = genesis.broadcast_in_dim %s, [] : tensor<i1> -> tensor<2x2xi1>
  %2 = genesis.broadcast_in_dim %b, [0, 2] : tensor<1x3xbf16> -> tensor<5x2x3xbf16>
  return %0, %1, %2 : tensor<4x8xf32>, tensor<2x2xi1>, tensor<5x2x3xbf16>
}

// -----

// CHECK-LABEL: func.func @iota(
// CHECK-SAME:  ) -> (tensor<16xi64>, tensor<2x3xf32>, tensor<4x2xi32>) {
// CHECK-NEXT:    %0 = genesis.iota dim 0 : tensor<16xi64>
// CHECK-NEXT:    %1 = genesis.iota dim 1 : tensor<2x3xf32>
// CHECK-NEXT:    %2 = genesis.iota dim 0 : tensor<4x2xi32>
// CHECK-NEXT:    return %0, %1, %2 : tensor<16xi64>, tensor<2x3xf32>, tensor<4x2xi32>
func.func @iota() -> (tensor<16xi64>, tensor<2x3xf32>, tensor<4x2xi32>) {
  %0 = genesis.iota dim 0 : tensor<16xi64>
  %1 = genesis.iota dim 1 : tensor<2x3xf32>
  %2 = genesis.iota dim 0 : tensor<4x2xi32>
  return %0, %1, %2 : tensor<16xi64>, tensor<2x3xf32>, tensor<4x2xi32>
}

// -----

// CHECK-LABEL: func.func @take_scatter(
// CHECK-SAME:  %arg0: tensor<100x16xf32>, %arg1: tensor<4x8xi64>, %arg2: tensor<4x8x16xf32>, %arg3: tensor<3x5xi32>, %arg4: tensor<2xi32>, %arg5: tensor<3x2xi32>) -> (tensor<4x8x16xf32>, tensor<3x2xi32>, tensor<100x16xf32>, tensor<3x5xi32>) {
// CHECK-NEXT:    %0 = genesis.take %arg0, %arg1 axis 0 : tensor<100x16xf32>, tensor<4x8xi64>
// CHECK-NEXT:    %1 = genesis.take %arg3, %arg4 axis 1 : tensor<3x5xi32>, tensor<2xi32>
// CHECK-NEXT:    %2 = genesis.scatter_add %arg0, %arg1, %arg2 axis 0 : tensor<100x16xf32>, tensor<4x8xi64>, tensor<4x8x16xf32>
// CHECK-NEXT:    %3 = genesis.scatter_add %arg3, %arg4, %arg5 axis 1 : tensor<3x5xi32>, tensor<2xi32>, tensor<3x2xi32>
// CHECK-NEXT:    return %0, %1, %2, %3 : tensor<4x8x16xf32>, tensor<3x2xi32>, tensor<100x16xf32>, tensor<3x5xi32>
func.func @take_scatter(%table: tensor<100x16xf32>, %ids: tensor<4x8xi64>, %rows: tensor<4x8x16xf32>,
                        %m: tensor<3x5xi32>, %idx: tensor<2xi32>, %up: tensor<3x2xi32>) -> (tensor<4x8x16xf32>, tensor<3x2xi32>, tensor<100x16xf32>, tensor<3x5xi32>) {
  %0 = genesis.take %table, %ids axis 0 : tensor<100x16xf32>, tensor<4x8xi64>
  %1 = genesis.take %m, %idx axis 1 : tensor<3x5xi32>, tensor<2xi32>
  %2 = genesis.scatter_add %table, %ids, %rows axis 0 : tensor<100x16xf32>, tensor<4x8xi64>, tensor<4x8x16xf32>
  %3 = genesis.scatter_add %m, %idx, %up axis 1 : tensor<3x5xi32>, tensor<2xi32>, tensor<3x2xi32>
  return %0, %1, %2, %3 : tensor<4x8x16xf32>, tensor<3x2xi32>, tensor<100x16xf32>, tensor<3x5xi32>
}

// -----

// Reductions with and without keepdim, including reducing no dimension.
// CHECK-LABEL: func.func @reduce(
// CHECK-SAME:  %arg0: tensor<4x8x2xf32>, %arg1: tensor<3x5xi64>, %arg2: tensor<6xf16>) -> (tensor<4x2xf32>, tensor<1x8x1xf32>, tensor<3x1xi64>, tensor<f16>, tensor<i64>, tensor<4x8x2xf32>, tensor<4x2xi64>, tensor<1x5xi64>) {
// CHECK-NEXT:    %0 = genesis.reduce_sum %arg0 dims [1] : tensor<4x8x2xf32>
// CHECK-NEXT:    %1 = genesis.reduce_sum %arg0 dims [0, 2] keepdim : tensor<4x8x2xf32>
// CHECK-NEXT:    %2 = genesis.reduce_max %arg1 dims [1] keepdim : tensor<3x5xi64>
// CHECK-NEXT:    %3 = genesis.reduce_max %arg2 dims [0] : tensor<6xf16>
// CHECK-NEXT:    %4 = genesis.reduce_min %arg1 dims [0, 1] : tensor<3x5xi64>
// CHECK-NEXT:    %5 = genesis.reduce_min %arg0 dims [] : tensor<4x8x2xf32>
// CHECK-NEXT:    %6 = genesis.argmax %arg0 dim 1 : tensor<4x8x2xf32>
// CHECK-NEXT:    %7 = genesis.argmax %arg1 dim 0 keepdim : tensor<3x5xi64>
// CHECK-NEXT:    return %0, %1, %2, %3, %4, %5, %6, %7 : tensor<4x2xf32>, tensor<1x8x1xf32>, tensor<3x1xi64>, tensor<f16>, tensor<i64>, tensor<4x8x2xf32>, tensor<4x2xi64>, tensor<1x5xi64>
func.func @reduce(%a: tensor<4x8x2xf32>, %i: tensor<3x5xi64>, %h: tensor<6xf16>) -> (tensor<4x2xf32>, tensor<1x8x1xf32>, tensor<3x1xi64>, tensor<f16>, tensor<i64>, tensor<4x8x2xf32>, tensor<4x2xi64>, tensor<1x5xi64>) {
  %0 = genesis.reduce_sum %a dims [1] : tensor<4x8x2xf32>
  %1 = genesis.reduce_sum %a dims [0, 2] keepdim : tensor<4x8x2xf32>
  %2 = genesis.reduce_max %i dims [1] keepdim : tensor<3x5xi64>
  %3 = genesis.reduce_max %h dims [0] : tensor<6xf16>
  %4 = genesis.reduce_min %i dims [0, 1] : tensor<3x5xi64>
  %5 = genesis.reduce_min %a dims [] : tensor<4x8x2xf32>
  %6 = genesis.argmax %a dim 1 : tensor<4x8x2xf32>
  %7 = genesis.argmax %i dim 0 keepdim : tensor<3x5xi64>
  return %0, %1, %2, %3, %4, %5, %6, %7 : tensor<4x2xf32>, tensor<1x8x1xf32>, tensor<3x1xi64>, tensor<f16>, tensor<i64>, tensor<4x8x2xf32>, tensor<4x2xi64>, tensor<1x5xi64>
}

// -----

// CHECK-LABEL: func.func @matmul(
// CHECK-SAME:  %arg0: tensor<64x784xf32>, %arg1: tensor<256x784xf32>, %arg2: tensor<2x3x4xbf16>, %arg3: tensor<2x4x5xbf16>, %arg4: tensor<4x3xf64>, %arg5: tensor<4x5xf64>, %arg6: tensor<5x3xf16>, %arg7: tensor<4x5xf16>) -> (tensor<64x256xf32>, tensor<2x3x5xbf16>, tensor<3x5xf64>, tensor<3x4xf16>) {
// CHECK-NEXT:    %0 = genesis.matmul %arg0, %arg1 transpose_rhs : tensor<64x784xf32>, tensor<256x784xf32>
// CHECK-NEXT:    %1 = genesis.matmul %arg2, %arg3 : tensor<2x3x4xbf16>, tensor<2x4x5xbf16>
// CHECK-NEXT:    %2 = genesis.matmul %arg4, %arg5 transpose_lhs : tensor<4x3xf64>, tensor<4x5xf64>
// CHECK-NEXT:    %3 = genesis.matmul %arg6, %arg7 transpose_lhs transpose_rhs : tensor<5x3xf16>, tensor<4x5xf16>
// CHECK-NEXT:    return %0, %1, %2, %3 : tensor<64x256xf32>, tensor<2x3x5xbf16>, tensor<3x5xf64>, tensor<3x4xf16>
func.func @matmul(%a: tensor<64x784xf32>, %w: tensor<256x784xf32>, %b: tensor<2x3x4xbf16>, %c: tensor<2x4x5xbf16>,
                  %t: tensor<4x3xf64>, %u: tensor<4x5xf64>, %x: tensor<5x3xf16>, %y: tensor<4x5xf16>) -> (tensor<64x256xf32>, tensor<2x3x5xbf16>, tensor<3x5xf64>, tensor<3x4xf16>) {
  %0 = genesis.matmul %a, %w transpose_rhs : tensor<64x784xf32>, tensor<256x784xf32>
  %1 = genesis.matmul %b, %c : tensor<2x3x4xbf16>, tensor<2x4x5xbf16>
  %2 = genesis.matmul %t, %u transpose_lhs : tensor<4x3xf64>, tensor<4x5xf64>
  %3 = genesis.matmul %x, %y transpose_lhs transpose_rhs : tensor<5x3xf16>, tensor<4x5xf16>
  return %0, %1, %2, %3 : tensor<64x256xf32>, tensor<2x3x5xbf16>, tensor<3x5xf64>, tensor<3x4xf16>
}

// -----

// CHECK-LABEL: func.func @softmax(
// CHECK-SAME:  %arg0: tensor<4x10xf32>, %arg1: tensor<2x3x4xbf16>) -> (tensor<4x10xf32>, tensor<4x10xf32>, tensor<2x3x4xbf16>, tensor<2x3x4xbf16>) {
// CHECK-NEXT:    %0 = genesis.softmax %arg0 dim 1 : tensor<4x10xf32>
// CHECK-NEXT:    %1 = genesis.log_softmax %arg0 dim 0 : tensor<4x10xf32>
// CHECK-NEXT:    %2 = genesis.softmax %arg1 dim 2 : tensor<2x3x4xbf16>
// CHECK-NEXT:    %3 = genesis.log_softmax %arg1 dim 1 : tensor<2x3x4xbf16>
// CHECK-NEXT:    return %0, %1, %2, %3 : tensor<4x10xf32>, tensor<4x10xf32>, tensor<2x3x4xbf16>, tensor<2x3x4xbf16>
func.func @softmax(%a: tensor<4x10xf32>, %b: tensor<2x3x4xbf16>) -> (tensor<4x10xf32>, tensor<4x10xf32>, tensor<2x3x4xbf16>, tensor<2x3x4xbf16>) {
  %0 = genesis.softmax %a dim 1 : tensor<4x10xf32>
  %1 = genesis.log_softmax %a dim 0 : tensor<4x10xf32>
  %2 = genesis.softmax %b dim 2 : tensor<2x3x4xbf16>
  %3 = genesis.log_softmax %b dim 1 : tensor<2x3x4xbf16>
  return %0, %1, %2, %3 : tensor<4x10xf32>, tensor<4x10xf32>, tensor<2x3x4xbf16>, tensor<2x3x4xbf16>
}

// -----

// CHECK-LABEL: func.func @norms(
// CHECK-SAME:  %arg0: tensor<4x16xf32>, %arg1: tensor<16xf32>, %arg2: tensor<16xf32>, %arg3: tensor<16xf16>, %arg4: tensor<16xf16>) -> (tensor<4x16xf32>, tensor<4x16xf32>, tensor<16xf16>, tensor<4x16xf32>, tensor<16xf16>) {
// CHECK-NEXT:    %0 = genesis.layer_norm %arg0 weight %arg1 : tensor<16xf32> bias %arg2 : tensor<16xf32> eps 1.000000e-05 : tensor<4x16xf32>
// CHECK-NEXT:    %1 = genesis.layer_norm %arg0 weight %arg1 : tensor<16xf32> eps 1.000000e-05 : tensor<4x16xf32>
// CHECK-NEXT:    %2 = genesis.layer_norm %arg3 eps 9.9999999999999995E-7 : tensor<16xf16>
// CHECK-NEXT:    %3 = genesis.rms_norm %arg0, %arg1 eps 9.9999999999999995E-7 : tensor<4x16xf32>, tensor<16xf32>
// CHECK-NEXT:    %4 = genesis.rms_norm %arg3, %arg4 eps 9.9999999999999995E-7 : tensor<16xf16>, tensor<16xf16>
// CHECK-NEXT:    return %0, %1, %2, %3, %4 : tensor<4x16xf32>, tensor<4x16xf32>, tensor<16xf16>, tensor<4x16xf32>, tensor<16xf16>
func.func @norms(%x: tensor<4x16xf32>, %w: tensor<16xf32>, %b: tensor<16xf32>, %h: tensor<16xf16>, %wh: tensor<16xf16>) -> (tensor<4x16xf32>, tensor<4x16xf32>, tensor<16xf16>, tensor<4x16xf32>, tensor<16xf16>) {
  %0 = genesis.layer_norm %x weight %w : tensor<16xf32> bias %b : tensor<16xf32> eps 1.0e-05 : tensor<4x16xf32>
  %1 = genesis.layer_norm %x weight %w : tensor<16xf32> eps 1.0e-05 : tensor<4x16xf32>
  %2 = genesis.layer_norm %h eps 1.0e-06 : tensor<16xf16>
  %3 = genesis.rms_norm %x, %w eps 1.0e-06 : tensor<4x16xf32>, tensor<16xf32>
  %4 = genesis.rms_norm %h, %wh eps 9.9999999999999995e-07 : tensor<16xf16>, tensor<16xf16>
  return %0, %1, %2, %3, %4 : tensor<4x16xf32>, tensor<4x16xf32>, tensor<16xf16>, tensor<4x16xf32>, tensor<16xf16>
}

// -----

// CHECK-LABEL: func.func @rope(
// CHECK-SAME:  %arg0: tensor<2x4x8x64xf32>, %arg1: tensor<8x64xf32>, %arg2: tensor<8x64xf32>, %arg3: tensor<8x4xbf16>) -> (tensor<2x4x8x64xf32>, tensor<8x4xbf16>) {
// CHECK-NEXT:    %0 = genesis.rope %arg0, %arg1, %arg2 : (tensor<2x4x8x64xf32>, tensor<8x64xf32>, tensor<8x64xf32>) -> tensor<2x4x8x64xf32>
// CHECK-NEXT:    %1 = genesis.rope %arg3, %arg3, %arg3 : (tensor<8x4xbf16>, tensor<8x4xbf16>, tensor<8x4xbf16>) -> tensor<8x4xbf16>
// CHECK-NEXT:    return %0, %1 : tensor<2x4x8x64xf32>, tensor<8x4xbf16>
func.func @rope(%x: tensor<2x4x8x64xf32>, %cos: tensor<8x64xf32>, %sin: tensor<8x64xf32>, %y: tensor<8x4xbf16>) -> (tensor<2x4x8x64xf32>, tensor<8x4xbf16>) {
  %0 = genesis.rope %x, %cos, %sin : (tensor<2x4x8x64xf32>, tensor<8x64xf32>, tensor<8x64xf32>) -> tensor<2x4x8x64xf32>
  %1 = genesis.rope %y, %y, %y : (tensor<8x4xbf16>, tensor<8x4xbf16>, tensor<8x4xbf16>) -> tensor<8x4xbf16>
  return %0, %1 : tensor<2x4x8x64xf32>, tensor<8x4xbf16>
}

// -----

// CHECK-LABEL: func.func @attention(
// CHECK-SAME:  %arg0: tensor<1x4x8x64xf32>, %arg1: tensor<1x2x8x64xf32>, %arg2: tensor<1x2x8x32xf32>, %arg3: tensor<1x4x8x8xf32>, %arg4: tensor<2x2x1x16xf16>, %arg5: tensor<2x2x5x16xf16>) -> (tensor<1x4x8x32xf32>, tensor<1x4x8x32xf32>, tensor<1x4x8x32xf32>, tensor<2x2x1x16xf16>) {
// CHECK-NEXT:    %0 = genesis.attention %arg0, %arg1, %arg2 causal scale 1.250000e-01 : (tensor<1x4x8x64xf32>, tensor<1x2x8x64xf32>, tensor<1x2x8x32xf32>) -> tensor<1x4x8x32xf32>
// CHECK-NEXT:    %1 = genesis.attention %arg0, %arg1, %arg2 mask %arg3 scale 1.000000e+00 : (tensor<1x4x8x64xf32>, tensor<1x2x8x64xf32>, tensor<1x2x8x32xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x32xf32>
// CHECK-NEXT:    %2 = genesis.attention %arg0, %arg1, %arg2 mask %arg3 causal scale 5.000000e-01 : (tensor<1x4x8x64xf32>, tensor<1x2x8x64xf32>, tensor<1x2x8x32xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x32xf32>
// CHECK-NEXT:    %3 = genesis.attention %arg4, %arg5, %arg5 scale 2.500000e-01 : (tensor<2x2x1x16xf16>, tensor<2x2x5x16xf16>, tensor<2x2x5x16xf16>) -> tensor<2x2x1x16xf16>
// CHECK-NEXT:    return %0, %1, %2, %3 : tensor<1x4x8x32xf32>, tensor<1x4x8x32xf32>, tensor<1x4x8x32xf32>, tensor<2x2x1x16xf16>
func.func @attention(%q: tensor<1x4x8x64xf32>, %k: tensor<1x2x8x64xf32>, %v: tensor<1x2x8x32xf32>, %m: tensor<1x4x8x8xf32>,
                     %qh: tensor<2x2x1x16xf16>, %kh: tensor<2x2x5x16xf16>) -> (tensor<1x4x8x32xf32>, tensor<1x4x8x32xf32>, tensor<1x4x8x32xf32>, tensor<2x2x1x16xf16>) {
  %0 = genesis.attention %q, %k, %v causal scale 0.125 : (tensor<1x4x8x64xf32>, tensor<1x2x8x64xf32>, tensor<1x2x8x32xf32>) -> tensor<1x4x8x32xf32>
  %1 = genesis.attention %q, %k, %v mask %m scale 1.0 : (tensor<1x4x8x64xf32>, tensor<1x2x8x64xf32>, tensor<1x2x8x32xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x32xf32>
  %2 = genesis.attention %q, %k, %v mask %m causal scale 0.5 : (tensor<1x4x8x64xf32>, tensor<1x2x8x64xf32>, tensor<1x2x8x32xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x32xf32>
  %3 = genesis.attention %qh, %kh, %kh scale 2.500000e-01 : (tensor<2x2x1x16xf16>, tensor<2x2x5x16xf16>, tensor<2x2x5x16xf16>) -> tensor<2x2x1x16xf16>
  return %0, %1, %2, %3 : tensor<1x4x8x32xf32>, tensor<1x4x8x32xf32>, tensor<1x4x8x32xf32>, tensor<2x2x1x16xf16>
}

// -----

// Attention on a packed projection: rows of 4 query heads, 2 key heads and
// 2 value heads of 16; the result token-major.
// CHECK-LABEL: func.func @packed_attention(
// CHECK-NEXT:    %result, %logsumexp = genesis.packed_attention %arg0 heads 4 kv_heads 2 causal scale 2.500000e-01 : (tensor<2x8x128xbf16>) -> (tensor<2x8x64xbf16>, tensor<2x4x8xf32>)
// CHECK-NEXT:    %0 = genesis.packed_attention_grad %arg0, %result, %arg1, %logsumexp heads 4 kv_heads 2 causal scale 2.500000e-01 : (tensor<2x8x128xbf16>, tensor<2x8x64xbf16>, tensor<2x8x64xbf16>, tensor<2x4x8xf32>) -> tensor<2x8x128xbf16>
// CHECK-NEXT:    %result_0, %logsumexp_1 = genesis.packed_attention %arg2 heads 1 kv_heads 1 scale 1.000000e+00 : (tensor<1x3x24xf16>) -> (tensor<1x3x8xf16>, tensor<1x1x3xf32>)
func.func @packed_attention(%qkv: tensor<2x8x128xbf16>, %g: tensor<2x8x64xbf16>, %h: tensor<1x3x24xf16>) -> (tensor<2x8x128xbf16>, tensor<1x3x8xf16>) {
  %o, %l = genesis.packed_attention %qkv heads 4 kv_heads 2 causal scale 0.25 : (tensor<2x8x128xbf16>) -> (tensor<2x8x64xbf16>, tensor<2x4x8xf32>)
  %d = genesis.packed_attention_grad %qkv, %o, %g, %l heads 4 kv_heads 2 causal scale 0.25 : (tensor<2x8x128xbf16>, tensor<2x8x64xbf16>, tensor<2x8x64xbf16>, tensor<2x4x8xf32>) -> tensor<2x8x128xbf16>
  %o2, %l2 = genesis.packed_attention %h heads 1 kv_heads 1 scale 1.0 : (tensor<1x3x24xf16>) -> (tensor<1x3x8xf16>, tensor<1x1x3xf32>)
  return %d, %o2 : tensor<2x8x128xbf16>, tensor<1x3x8xf16>
}

// -----

// A per-row loss and its gradient together; the loss is f32 for bf16 logits.
// CHECK-LABEL: func.func @cross_entropy_with_grad(
// CHECK-NEXT:    %loss, %logits_grad = genesis.cross_entropy_with_grad %arg0, %arg1, %arg2 {ignore_index = 0 : i64, label_smoothing = 5.000000e-02 : f64} : (tensor<4x1024xbf16>, tensor<4xi32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4x1024xbf16>)
func.func @cross_entropy_with_grad(%x: tensor<4x1024xbf16>, %y: tensor<4xi32>, %w: tensor<4xf32>) -> (tensor<4xf32>, tensor<4x1024xbf16>) {
  %0:2 = genesis.cross_entropy_with_grad %x, %y, %w {ignore_index = 0 : i64, label_smoothing = 0.05 : f64} : (tensor<4x1024xbf16>, tensor<4xi32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4x1024xbf16>)
  return %0#0, %0#1 : tensor<4xf32>, tensor<4x1024xbf16>
}

// -----

// A decode step's attention reads a 16-bit cache widened (or an f32 one).
// CHECK-LABEL: func.func @decode_attention(
// CHECK-NEXT:    %0 = genesis.decode_attention %arg0, %arg1, %arg1 mask %arg2 scale 1.250000e-01 : (tensor<1x4x1x16xf32>, tensor<1x2x9x16xbf16>, tensor<1x2x9x16xbf16>, tensor<1x4x1x9xf32>) -> tensor<1x4x1x16xf32>
// CHECK-NEXT:    %1 = genesis.decode_attention %arg0, %arg3, %arg3 causal scale 2.500000e-01 : (tensor<1x4x1x16xf32>, tensor<1x2x9x16xf32>, tensor<1x2x9x16xf32>) -> tensor<1x4x1x16xf32>
// CHECK-NEXT:    return %0, %1
func.func @decode_attention(%q: tensor<1x4x1x16xf32>, %k: tensor<1x2x9x16xbf16>, %m: tensor<1x4x1x9xf32>, %kf: tensor<1x2x9x16xf32>) -> (tensor<1x4x1x16xf32>, tensor<1x4x1x16xf32>) {
  %0 = genesis.decode_attention %q, %k, %k mask %m scale 0.125 : (tensor<1x4x1x16xf32>, tensor<1x2x9x16xbf16>, tensor<1x2x9x16xbf16>, tensor<1x4x1x9xf32>) -> tensor<1x4x1x16xf32>
  %1 = genesis.decode_attention %q, %kf, %kf causal scale 0.25 : (tensor<1x4x1x16xf32>, tensor<1x2x9x16xf32>, tensor<1x2x9x16xf32>) -> tensor<1x4x1x16xf32>
  return %0, %1 : tensor<1x4x1x16xf32>, tensor<1x4x1x16xf32>
}

// -----

// CHECK-LABEL: func.func @attention_grad(
// CHECK-SAME:  %arg0: tensor<1x4x8x16xf32>, %arg1: tensor<1x2x6x16xf32>, %arg2: tensor<1x2x6x8xf32>, %arg3: tensor<1x4x8x8xf32>, %arg4: tensor<1x4x8x6xf32>) -> (tensor<1x4x8x16xf32>, tensor<1x2x6x16xf32>, tensor<1x2x6x8xf32>, tensor<1x4x8x16xf32>, tensor<1x2x6x16xf32>, tensor<1x2x6x8xf32>) {
// CHECK-NEXT:    %query_grad, %key_grad, %value_grad = genesis.attention_grad %arg0, %arg1, %arg2, %arg3, %arg3 causal scale 2.500000e-01 : (tensor<1x4x8x16xf32>, tensor<1x2x6x16xf32>, tensor<1x2x6x8xf32>, tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> (tensor<1x4x8x16xf32>, tensor<1x2x6x16xf32>, tensor<1x2x6x8xf32>)
// CHECK-NEXT:    %query_grad_0, %key_grad_1, %value_grad_2 = genesis.attention_grad %arg0, %arg1, %arg2 mask %arg4, %arg3, %arg3 scale 2.500000e-01 : (tensor<1x4x8x16xf32>, tensor<1x2x6x16xf32>, tensor<1x2x6x8xf32>, tensor<1x4x8x6xf32>, tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> (tensor<1x4x8x16xf32>, tensor<1x2x6x16xf32>, tensor<1x2x6x8xf32>)
// CHECK-NEXT:    return %query_grad, %key_grad, %value_grad, %query_grad_0, %key_grad_1, %value_grad_2 : tensor<1x4x8x16xf32>, tensor<1x2x6x16xf32>, tensor<1x2x6x8xf32>, tensor<1x4x8x16xf32>, tensor<1x2x6x16xf32>, tensor<1x2x6x8xf32>
func.func @attention_grad(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x6x16xf32>, %v: tensor<1x2x6x8xf32>, %o: tensor<1x4x8x8xf32>, %m: tensor<1x4x8x6xf32>) -> (tensor<1x4x8x16xf32>, tensor<1x2x6x16xf32>, tensor<1x2x6x8xf32>, tensor<1x4x8x16xf32>, tensor<1x2x6x16xf32>, tensor<1x2x6x8xf32>) {
  %0:3 = genesis.attention_grad %q, %k, %v, %o, %o causal scale 0.25 : (tensor<1x4x8x16xf32>, tensor<1x2x6x16xf32>, tensor<1x2x6x8xf32>, tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> (tensor<1x4x8x16xf32>, tensor<1x2x6x16xf32>, tensor<1x2x6x8xf32>)
  %1:3 = genesis.attention_grad %q, %k, %v mask %m, %o, %o scale 0.25 : (tensor<1x4x8x16xf32>, tensor<1x2x6x16xf32>, tensor<1x2x6x8xf32>, tensor<1x4x8x6xf32>, tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> (tensor<1x4x8x16xf32>, tensor<1x2x6x16xf32>, tensor<1x2x6x8xf32>)
  return %0#0, %0#1, %0#2, %1#0, %1#1, %1#2 : tensor<1x4x8x16xf32>, tensor<1x2x6x16xf32>, tensor<1x2x6x8xf32>, tensor<1x4x8x16xf32>, tensor<1x2x6x16xf32>, tensor<1x2x6x8xf32>
}

// -----

// The enum attribute `reduction` is an i32 in the attribute dictionary:
// 0 = none, 1 = mean (the default, not printed), 2 = sum.
// CHECK-LABEL: func.func @cross_entropy(
// CHECK-SAME:  %arg0: tensor<64x10xf32>, %arg1: tensor<64xi64>, %arg2: tensor<64xi32>, %arg3: tensor<64x10xbf16>) -> (tensor<f32>, tensor<64xf32>, tensor<f32>) {
// CHECK-NEXT:    %0 = genesis.cross_entropy %arg0, %arg1 : (tensor<64x10xf32>, tensor<64xi64>) -> tensor<f32>
// CHECK-NEXT:    %1 = genesis.cross_entropy %arg0, %arg2 {ignore_index = 0 : i64, label_smoothing = 1.000000e-01 : f64, reduction = 0 : i32} : (tensor<64x10xf32>, tensor<64xi32>) -> tensor<64xf32>
// CHECK-NEXT:    %2 = genesis.cross_entropy %arg3, %arg1 {reduction = 2 : i32} : (tensor<64x10xbf16>, tensor<64xi64>) -> tensor<f32>
// CHECK-NEXT:    return %0, %1, %2 : tensor<f32>, tensor<64xf32>, tensor<f32>
// 16-bit logits give an f32 loss (autocast's rule).
func.func @cross_entropy(%logits: tensor<64x10xf32>, %labels: tensor<64xi64>, %l32: tensor<64xi32>, %lh: tensor<64x10xbf16>) -> (tensor<f32>, tensor<64xf32>, tensor<f32>) {
  %0 = genesis.cross_entropy %logits, %labels : (tensor<64x10xf32>, tensor<64xi64>) -> tensor<f32>
  %1 = genesis.cross_entropy %logits, %l32 {ignore_index = 0 : i64, label_smoothing = 1.000000e-01 : f64, reduction = 0 : i32} : (tensor<64x10xf32>, tensor<64xi32>) -> tensor<64xf32>
  %2 = genesis.cross_entropy %lh, %labels {reduction = 2 : i32} : (tensor<64x10xbf16>, tensor<64xi64>) -> tensor<f32>
  return %0, %1, %2 : tensor<f32>, tensor<64xf32>, tensor<f32>
}

// -----

// CHECK-LABEL: func.func @cross_entropy_grad(
// CHECK-SAME:  %arg0: tensor<4x3xf32>, %arg1: tensor<4xi64>, %arg2: tensor<f32>, %arg3: tensor<4xf32>, %arg4: tensor<4x3xf16>, %arg5: tensor<4xi32>, %arg6: tensor<f32>) -> (tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf16>) {
// CHECK-NEXT:    %0 = genesis.cross_entropy_grad %arg0, %arg1, %arg2 : (tensor<4x3xf32>, tensor<4xi64>, tensor<f32>) -> tensor<4x3xf32>
// CHECK-NEXT:    %1 = genesis.cross_entropy_grad %arg0, %arg1, %arg3 {ignore_index = 0 : i64, label_smoothing = 1.000000e-01 : f64, reduction = 0 : i32} : (tensor<4x3xf32>, tensor<4xi64>, tensor<4xf32>) -> tensor<4x3xf32>
// CHECK-NEXT:    %2 = genesis.cross_entropy_grad %arg4, %arg5, %arg6 {reduction = 2 : i32} : (tensor<4x3xf16>, tensor<4xi32>, tensor<f32>) -> tensor<4x3xf16>
// CHECK-NEXT:    return %0, %1, %2 : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf16>
func.func @cross_entropy_grad(%l: tensor<4x3xf32>, %y: tensor<4xi64>, %g: tensor<f32>, %gn: tensor<4xf32>, %lh: tensor<4x3xf16>, %yi: tensor<4xi32>, %gh: tensor<f32>) -> (tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf16>) {
  %0 = genesis.cross_entropy_grad %l, %y, %g : (tensor<4x3xf32>, tensor<4xi64>, tensor<f32>) -> tensor<4x3xf32>
  %1 = genesis.cross_entropy_grad %l, %y, %gn {ignore_index = 0 : i64, label_smoothing = 1.000000e-01 : f64, reduction = 0 : i32} : (tensor<4x3xf32>, tensor<4xi64>, tensor<4xf32>) -> tensor<4x3xf32>
  %2 = genesis.cross_entropy_grad %lh, %yi, %gh {reduction = 2 : i32} : (tensor<4x3xf16>, tensor<4xi32>, tensor<f32>) -> tensor<4x3xf16>
  return %0, %1, %2 : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf16>
}

// -----

// CHECK-LABEL: func.func @dropout(
// CHECK-SAME:  %arg0: tensor<4x8xf32>, %arg1: tensor<i64>, %arg2: tensor<16xf16>) -> (tensor<4x8xf32>, tensor<16xf16>) {
// CHECK-NEXT:    %0 = genesis.dropout %arg0, %arg1 {offset = 0 : i64, probability = 1.000000e-01 : f64} : (tensor<4x8xf32>, tensor<i64>) -> tensor<4x8xf32>
// CHECK-NEXT:    %1 = genesis.dropout %arg2, %arg1 {offset = 32 : i64, probability = 0.000000e+00 : f64} : (tensor<16xf16>, tensor<i64>) -> tensor<16xf16>
// CHECK-NEXT:    return %0, %1 : tensor<4x8xf32>, tensor<16xf16>
func.func @dropout(%x: tensor<4x8xf32>, %seed: tensor<i64>, %h: tensor<16xf16>) -> (tensor<4x8xf32>, tensor<16xf16>) {
  %0 = genesis.dropout %x, %seed {offset = 0 : i64, probability = 1.000000e-01 : f64} : (tensor<4x8xf32>, tensor<i64>) -> tensor<4x8xf32>
  %1 = genesis.dropout %h, %seed {offset = 32 : i64, probability = 0.000000e+00 : f64} : (tensor<16xf16>, tensor<i64>) -> tensor<16xf16>
  return %0, %1 : tensor<4x8xf32>, tensor<16xf16>
}

// -----

// The multi-result ops print their results with the names of the ODS results.
// CHECK-LABEL: func.func @optimizers(
// CHECK-SAME:  %arg0: tensor<4x8xf32>, %arg1: tensor<4x8xf32>, %arg2: tensor<4x8xf32>, %arg3: tensor<4x8xf32>, %arg4: tensor<4x8xf32>, %arg5: tensor<f32>, %arg6: tensor<i64>, %arg7: tensor<8xbf16>) -> (tensor<4x8xf32>, tensor<8xbf16>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xbf16>, tensor<8xbf16>, tensor<8xbf16>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<f32>, tensor<f32>) {
// CHECK-NEXT:    %0 = genesis.sgd_update %arg0, %arg1, %arg5 : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %1 = genesis.sgd_update %arg7, %arg7, %arg5 {weight_decay = 1.000000e-02 : f64} : (tensor<8xbf16>, tensor<8xbf16>, tensor<f32>) -> tensor<8xbf16>
// CHECK-NEXT:    %new_param, %new_momentum_buffer = genesis.sgd_momentum_update %arg0, %arg1, %arg2, %arg5, %arg6 {momentum = 9.000000e-01 : f64} : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<f32>, tensor<i64>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
// CHECK-NEXT:    %new_param_0, %new_momentum_buffer_1 = genesis.sgd_momentum_update %arg0, %arg1, %arg2, %arg5, %arg6 {dampening = 1.000000e-01 : f64, momentum = 5.000000e-01 : f64, weight_decay = 1.000000e-04 : f64} : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<f32>, tensor<i64>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
// CHECK-NEXT:    %new_param_2, %new_momentum_buffer_3 = genesis.sgd_momentum_update %arg0, %arg1, %arg2, %arg5, %arg6 {momentum = 9.000000e-01 : f64, nesterov} : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<f32>, tensor<i64>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
// CHECK-NEXT:    %new_param_4, %new_exp_avg, %new_exp_avg_sq = genesis.adam_update %arg0, %arg1, %arg3, %arg4, %arg5, %arg6 : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<f32>, tensor<i64>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>)
// CHECK-NEXT:    %new_param_5, %new_exp_avg_6, %new_exp_avg_sq_7 = genesis.adam_update %arg7, %arg7, %arg7, %arg7, %arg5, %arg6 {beta1 = 8.000000e-01 : f64, beta2 = 0.98999999999999999 : f64, epsilon = 0.000000e+00 : f64, weight_decay = 1.000000e-02 : f64} : (tensor<8xbf16>, tensor<8xbf16>, tensor<8xbf16>, tensor<8xbf16>, tensor<f32>, tensor<i64>) -> (tensor<8xbf16>, tensor<8xbf16>, tensor<8xbf16>)
// CHECK-NEXT:    %new_param_8, %new_exp_avg_9, %new_exp_avg_sq_10 = genesis.adamw_update %arg0, %arg1, %arg3, %arg4, %arg5, %arg6 {weight_decay = 1.000000e-02 : f64} : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<f32>, tensor<i64>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>)
// CHECK-NEXT:    %2 = genesis.global_norm %arg0, %arg7 : tensor<4x8xf32>, tensor<8xbf16>
// CHECK-NEXT:    %3 = genesis.global_norm %arg5 : tensor<f32>
// CHECK-NEXT:    return %0, %1, %new_param, %new_momentum_buffer, %new_param_0, %new_momentum_buffer_1, %new_param_2, %new_momentum_buffer_3, %new_param_4, %new_exp_avg, %new_exp_avg_sq, %new_param_5, %new_exp_avg_6, %new_exp_avg_sq_7, %new_param_8, %new_exp_avg_9, %new_exp_avg_sq_10, %2, %3 : tensor<4x8xf32>, tensor<8xbf16>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xbf16>, tensor<8xbf16>, tensor<8xbf16>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<f32>, tensor<f32>
func.func @optimizers(%p: tensor<4x8xf32>, %g: tensor<4x8xf32>, %buf: tensor<4x8xf32>, %m: tensor<4x8xf32>, %v: tensor<4x8xf32>,
                      %lr: tensor<f32>, %step: tensor<i64>, %ph: tensor<8xbf16>) -> (tensor<4x8xf32>, tensor<8xbf16>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xbf16>, tensor<8xbf16>, tensor<8xbf16>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<f32>, tensor<f32>) {
  %0 = genesis.sgd_update %p, %g, %lr : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %1 = genesis.sgd_update %ph, %ph, %lr {weight_decay = 1.000000e-02 : f64} : (tensor<8xbf16>, tensor<8xbf16>, tensor<f32>) -> tensor<8xbf16>
  %2:2 = genesis.sgd_momentum_update %p, %g, %buf, %lr, %step {momentum = 9.000000e-01 : f64} : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<f32>, tensor<i64>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  %3:2 = genesis.sgd_momentum_update %p, %g, %buf, %lr, %step {dampening = 1.000000e-01 : f64, momentum = 5.000000e-01 : f64, weight_decay = 1.000000e-04 : f64} : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<f32>, tensor<i64>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  %4:2 = genesis.sgd_momentum_update %p, %g, %buf, %lr, %step {momentum = 9.000000e-01 : f64, nesterov} : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<f32>, tensor<i64>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  %5:3 = genesis.adam_update %p, %g, %m, %v, %lr, %step : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<f32>, tensor<i64>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>)
  %6:3 = genesis.adam_update %ph, %ph, %ph, %ph, %lr, %step {beta1 = 8.000000e-01 : f64, beta2 = 9.900000e-01 : f64, epsilon = 0.000000e+00 : f64, weight_decay = 1.000000e-02 : f64} : (tensor<8xbf16>, tensor<8xbf16>, tensor<8xbf16>, tensor<8xbf16>, tensor<f32>, tensor<i64>) -> (tensor<8xbf16>, tensor<8xbf16>, tensor<8xbf16>)
  %7:3 = genesis.adamw_update %p, %g, %m, %v, %lr, %step {weight_decay = 1.000000e-02 : f64} : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<f32>, tensor<i64>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>)
  %8 = genesis.global_norm %p, %ph : tensor<4x8xf32>, tensor<8xbf16>
  %9 = genesis.global_norm %lr : tensor<f32>
  return %0, %1, %2#0, %2#1, %3#0, %3#1, %4#0, %4#1, %5#0, %5#1, %5#2, %6#0, %6#1, %6#2, %7#0, %7#1, %7#2, %8, %9 : tensor<4x8xf32>, tensor<8xbf16>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xbf16>, tensor<8xbf16>, tensor<8xbf16>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<f32>, tensor<f32>
}

// -----

// CHECK-LABEL: func.func @all_reduce(
// CHECK-SAME:  %arg0: tensor<4x8xf32>, %arg1: tensor<3xi64>) -> (tensor<4x8xf32>, tensor<3xi64>) {
// CHECK-NEXT:    %0 = genesis.all_reduce sum, %arg0 : tensor<4x8xf32>
// CHECK-NEXT:    %1 = genesis.all_reduce mean, %arg1 : tensor<3xi64>
// CHECK-NEXT:    return %0, %1 : tensor<4x8xf32>, tensor<3xi64>
func.func @all_reduce(%a: tensor<4x8xf32>, %i: tensor<3xi64>) -> (tensor<4x8xf32>, tensor<3xi64>) {
  %0 = genesis.all_reduce sum, %a : tensor<4x8xf32>
  %1 = genesis.all_reduce mean, %i : tensor<3xi64>
  return %0, %1 : tensor<4x8xf32>, tensor<3xi64>
}

// -----

// CHECK-LABEL: func.func @fusion(
// CHECK-SAME:  %arg0: tensor<4xf32>, %arg1: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xi1>) {
// CHECK-NEXT:    %0:2 = genesis.fusion %arg0, %arg1 : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xi1>) {
// CHECK-NEXT:    ^bb0(%arg2: tensor<4xf32>, %arg3: tensor<4xf32>):
// CHECK-NEXT:    %1 = genesis.add %arg2, %arg3 : tensor<4xf32>
// CHECK-NEXT:    %2 = genesis.relu %1 : tensor<4xf32>
// CHECK-NEXT:    %3 = genesis.compare gt, %arg2, %arg3 : tensor<4xf32>
// CHECK-NEXT:    genesis.yield %2, %3 : tensor<4xf32>, tensor<4xi1>
// CHECK-NEXT:    }
// CHECK-NEXT:    return %0#0, %0#1 : tensor<4xf32>, tensor<4xi1>
func.func @fusion(%a: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xi1>) {
  %0:2 = genesis.fusion %a, %b : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xi1>) {
  ^bb0(%x: tensor<4xf32>, %y: tensor<4xf32>):
    %s = genesis.add %x, %y : tensor<4xf32>
    %r = genesis.relu %s : tensor<4xf32>
    %c = genesis.compare gt, %x, %y : tensor<4xf32>
    genesis.yield %r, %c : tensor<4xf32>, tensor<4xi1>
  }
  return %0#0, %0#1 : tensor<4xf32>, tensor<4xi1>
}

// -----

// A fusion with no inputs and no results.
// CHECK-LABEL: func.func @fusion_empty(
// CHECK-SAME:  ) {
// CHECK-NEXT:    genesis.fusion  : () -> () {
// CHECK-NEXT:    genesis.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    return
func.func @fusion_empty() {
  genesis.fusion : () -> () {
    genesis.yield
  }
  return
}

// -----

// Every epilogue; bias is present exactly for bias, bias_relu and bias_gelu.
// CHECK-LABEL: func.func @library_call(
// CHECK-SAME:  %arg0: tensor<64x784xf32>, %arg1: tensor<256x784xf32>, %arg2: tensor<256xf32>, %arg3: tensor<8x4xbf16>, %arg4: tensor<4x16xbf16>, %arg5: tensor<16xbf16>, %arg6: tensor<3x8x4xf16>, %arg7: tensor<3x16x8xf16>) -> (tensor<8x16xbf16>, tensor<64x256xf32>, tensor<8x16xbf16>, tensor<64x256xf32>, tensor<3x4x16xf16>, tensor<8x16xbf16>) {
// CHECK-NEXT:    %0 = genesis.library_call none %arg3, %arg4 : (tensor<8x4xbf16>, tensor<4x16xbf16>) -> tensor<8x16xbf16>
// CHECK-NEXT:    %1 = genesis.library_call bias %arg0, %arg1 transpose_rhs bias %arg2 : (tensor<64x784xf32>, tensor<256x784xf32>, tensor<256xf32>) -> tensor<64x256xf32>
// CHECK-NEXT:    %2 = genesis.library_call relu %arg3, %arg4 {alpha = 5.000000e-01 : f64} : (tensor<8x4xbf16>, tensor<4x16xbf16>) -> tensor<8x16xbf16>
// CHECK-NEXT:    %3 = genesis.library_call bias_relu %arg0, %arg1 transpose_rhs bias %arg2 : (tensor<64x784xf32>, tensor<256x784xf32>, tensor<256xf32>) -> tensor<64x256xf32>
// CHECK-NEXT:    %4 = genesis.library_call gelu %arg6, %arg7 transpose_lhs transpose_rhs : (tensor<3x8x4xf16>, tensor<3x16x8xf16>) -> tensor<3x4x16xf16>
// CHECK-NEXT:    %5 = genesis.library_call bias_gelu %arg3, %arg4 bias %arg5 {alpha = 2.000000e+00 : f64} : (tensor<8x4xbf16>, tensor<4x16xbf16>, tensor<16xbf16>) -> tensor<8x16xbf16>
// CHECK-NEXT:    return %0, %1, %2, %3, %4, %5 : tensor<8x16xbf16>, tensor<64x256xf32>, tensor<8x16xbf16>, tensor<64x256xf32>, tensor<3x4x16xf16>, tensor<8x16xbf16>
func.func @library_call(%x: tensor<64x784xf32>, %w: tensor<256x784xf32>, %b: tensor<256xf32>,
                        %l: tensor<8x4xbf16>, %r: tensor<4x16xbf16>, %bb: tensor<16xbf16>, %t: tensor<3x8x4xf16>, %u: tensor<3x16x8xf16>) -> (tensor<8x16xbf16>, tensor<64x256xf32>, tensor<8x16xbf16>, tensor<64x256xf32>, tensor<3x4x16xf16>, tensor<8x16xbf16>) {
  %0 = genesis.library_call none %l, %r : (tensor<8x4xbf16>, tensor<4x16xbf16>) -> tensor<8x16xbf16>
  %1 = genesis.library_call bias %x, %w transpose_rhs bias %b : (tensor<64x784xf32>, tensor<256x784xf32>, tensor<256xf32>) -> tensor<64x256xf32>
  %2 = genesis.library_call relu %l, %r {alpha = 5.000000e-01 : f64} : (tensor<8x4xbf16>, tensor<4x16xbf16>) -> tensor<8x16xbf16>
  %3 = genesis.library_call bias_relu %x, %w transpose_rhs bias %b : (tensor<64x784xf32>, tensor<256x784xf32>, tensor<256xf32>) -> tensor<64x256xf32>
  %4 = genesis.library_call gelu %t, %u transpose_lhs transpose_rhs : (tensor<3x8x4xf16>, tensor<3x16x8xf16>) -> tensor<3x4x16xf16>
  %5 = genesis.library_call bias_gelu %l, %r bias %bb {alpha = 2.000000e+00 : f64} : (tensor<8x4xbf16>, tensor<4x16xbf16>, tensor<16xbf16>) -> tensor<8x16xbf16>
  return %0, %1, %2, %3, %4, %5 : tensor<8x16xbf16>, tensor<64x256xf32>, tensor<8x16xbf16>, tensor<64x256xf32>, tensor<3x4x16xf16>, tensor<8x16xbf16>
}

// -----

// dgelu takes the GELU's input as aux, of the result's type.
// CHECK-LABEL: func.func @library_call_dgelu(
// CHECK-NEXT:    %0 = genesis.library_call dgelu %arg0, %arg1 transpose_rhs aux %arg2 : (tensor<8x4xbf16>, tensor<16x4xbf16>, tensor<8x16xbf16>) -> tensor<8x16xbf16>
func.func @library_call_dgelu(%dy: tensor<8x4xbf16>, %w: tensor<16x4xbf16>, %x: tensor<8x16xbf16>) -> tensor<8x16xbf16> {
  %0 = genesis.library_call dgelu %dy, %w transpose_rhs aux %x : (tensor<8x4xbf16>, tensor<16x4xbf16>, tensor<8x16xbf16>) -> tensor<8x16xbf16>
  return %0 : tensor<8x16xbf16>
}

// -----

// The kernel and launch attributes genesis-lower-cuda records round-trip;
// a 3-D grid and block with dynamic shared memory is a valid launch.
// CHECK-LABEL: func.func @kernel_and_launch(
// CHECK: genesis.exp %{{.+}} {genesis.kernel = @k, genesis.launch = #genesis.launch<grid = [8, 4, 2], block = [32, 8, 4], shared = 4096>} : tensor<2xf32>
func.func @kernel_and_launch(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = genesis.exp %a {genesis.kernel = @k, genesis.launch = #genesis.launch<grid = [8, 4, 2], block = [32, 8, 4], shared = 4096>} : tensor<2xf32>
  return %0 : tensor<2xf32>
}
