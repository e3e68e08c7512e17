// RUN: genesis-opt %s --canonicalize --split-input-file | FileCheck %s

// Checks each folder of the genesis dialect, and the cases next to each one
// that must not fold.

//===----------------------------------------------------------------------===//
// mul: x * 1 -> x
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @mul_one_f32(
// CHECK-SAME:  %[[X:.*]]: tensor<2x3xf32>)
// CHECK-NOT:   genesis.
// CHECK:       return %[[X]] : tensor<2x3xf32>
func.func @mul_one_f32(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %one = genesis.constant dense<1.0> : tensor<2x3xf32>
  %0 = genesis.mul %x, %one : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// mul is commutative: the constant moves to the right-hand side first.
// CHECK-LABEL: func.func @mul_one_lhs_bf16(
// CHECK-SAME:  %[[X:.*]]: tensor<4xbf16>)
// CHECK-NOT:   genesis.
// CHECK:       return %[[X]] : tensor<4xbf16>
func.func @mul_one_lhs_bf16(%x: tensor<4xbf16>) -> tensor<4xbf16> {
  %one = genesis.constant dense<1.0> : tensor<4xbf16>
  %0 = genesis.mul %one, %x : tensor<4xbf16>
  return %0 : tensor<4xbf16>
}

// -----

// CHECK-LABEL: func.func @mul_one_i32(
// CHECK-SAME:  %[[X:.*]]: tensor<5xi32>)
// CHECK-NOT:   genesis.
// CHECK:       return %[[X]] : tensor<5xi32>
func.func @mul_one_i32(%x: tensor<5xi32>) -> tensor<5xi32> {
  %one = genesis.constant dense<1> : tensor<5xi32>
  %0 = genesis.mul %x, %one : tensor<5xi32>
  return %0 : tensor<5xi32>
}

// -----

// CHECK-LABEL: func.func @mul_two_kept(
// CHECK-SAME:  %[[X:.*]]: tensor<2x3xf32>)
// CHECK:       %[[TWO:.*]] = genesis.constant dense<2.000000e+00> : tensor<2x3xf32>
// CHECK:       %[[R:.*]] = genesis.mul %[[X]], %[[TWO]] : tensor<2x3xf32>
// CHECK:       return %[[R]]
func.func @mul_two_kept(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %two = genesis.constant dense<2.0> : tensor<2x3xf32>
  %0 = genesis.mul %x, %two : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Only a splat of ones folds.
// CHECK-LABEL: func.func @mul_not_splat_kept(
// CHECK:       %[[C:.*]] = genesis.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK:       %[[R:.*]] = genesis.mul %arg0, %[[C]] : tensor<2xf32>
// CHECK:       return %[[R]]
func.func @mul_not_splat_kept(%x: tensor<2xf32>) -> tensor<2xf32> {
  %c = genesis.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %0 = genesis.mul %x, %c : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

//===----------------------------------------------------------------------===//
// div: x / 1 -> x
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @div_one_f16(
// CHECK-SAME:  %[[X:.*]]: tensor<3xf16>)
// CHECK-NOT:   genesis.
// CHECK:       return %[[X]] : tensor<3xf16>
func.func @div_one_f16(%x: tensor<3xf16>) -> tensor<3xf16> {
  %one = genesis.constant dense<1.0> : tensor<3xf16>
  %0 = genesis.div %x, %one : tensor<3xf16>
  return %0 : tensor<3xf16>
}

// -----

// CHECK-LABEL: func.func @div_one_i64(
// CHECK-SAME:  %[[X:.*]]: tensor<i64>)
// CHECK-NOT:   genesis.
// CHECK:       return %[[X]] : tensor<i64>
func.func @div_one_i64(%x: tensor<i64>) -> tensor<i64> {
  %one = genesis.constant dense<1> : tensor<i64>
  %0 = genesis.div %x, %one : tensor<i64>
  return %0 : tensor<i64>
}

// -----

// 1 / x is a reciprocal, not x; div is not commutative.
// CHECK-LABEL: func.func @one_div_kept(
// CHECK:       %[[ONE:.*]] = genesis.constant dense<1.000000e+00> : tensor<3xf32>
// CHECK:       %[[R:.*]] = genesis.div %[[ONE]], %arg0 : tensor<3xf32>
// CHECK:       return %[[R]]
func.func @one_div_kept(%x: tensor<3xf32>) -> tensor<3xf32> {
  %one = genesis.constant dense<1.0> : tensor<3xf32>
  %0 = genesis.div %one, %x : tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

//===----------------------------------------------------------------------===//
// add: x + (-0.0) -> x for floats, x + 0 -> x for integers; x + 0.0 is kept
// for floats because it maps -0.0 to +0.0.
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @add_negative_zero_f32(
// CHECK-SAME:  %[[X:.*]]: tensor<4xf32>)
// CHECK-NOT:   genesis.
// CHECK:       return %[[X]] : tensor<4xf32>
func.func @add_negative_zero_f32(%x: tensor<4xf32>) -> tensor<4xf32> {
  %zero = genesis.constant dense<-0.0> : tensor<4xf32>
  %0 = genesis.add %x, %zero : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @add_negative_zero_lhs_f64(
// CHECK-SAME:  %[[X:.*]]: tensor<2x2xf64>)
// CHECK-NOT:   genesis.
// CHECK:       return %[[X]] : tensor<2x2xf64>
func.func @add_negative_zero_lhs_f64(%x: tensor<2x2xf64>) -> tensor<2x2xf64> {
  %zero = genesis.constant dense<-0.0> : tensor<2x2xf64>
  %0 = genesis.add %zero, %x : tensor<2x2xf64>
  return %0 : tensor<2x2xf64>
}

// -----

// CHECK-LABEL: func.func @add_positive_zero_float_kept(
// CHECK-SAME:  %[[X:.*]]: tensor<4xf32>)
// CHECK:       %[[ZERO:.*]] = genesis.constant dense<0.000000e+00> : tensor<4xf32>
// CHECK:       %[[R:.*]] = genesis.add %[[X]], %[[ZERO]] : tensor<4xf32>
// CHECK:       return %[[R]]
func.func @add_positive_zero_float_kept(%x: tensor<4xf32>) -> tensor<4xf32> {
  %zero = genesis.constant dense<0.0> : tensor<4xf32>
  %0 = genesis.add %x, %zero : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @add_positive_zero_bf16_kept(
// CHECK:       %[[ZERO:.*]] = genesis.constant dense<0.000000e+00> : tensor<4xbf16>
// CHECK:       %[[R:.*]] = genesis.add %arg0, %[[ZERO]] : tensor<4xbf16>
// CHECK:       return %[[R]]
func.func @add_positive_zero_bf16_kept(%x: tensor<4xbf16>) -> tensor<4xbf16> {
  %zero = genesis.constant dense<0.0> : tensor<4xbf16>
  %0 = genesis.add %zero, %x : tensor<4xbf16>
  return %0 : tensor<4xbf16>
}

// -----

// CHECK-LABEL: func.func @add_zero_i32(
// CHECK-SAME:  %[[X:.*]]: tensor<3xi32>)
// CHECK-NOT:   genesis.
// CHECK:       return %[[X]] : tensor<3xi32>
func.func @add_zero_i32(%x: tensor<3xi32>) -> tensor<3xi32> {
  %zero = genesis.constant dense<0> : tensor<3xi32>
  %0 = genesis.add %x, %zero : tensor<3xi32>
  return %0 : tensor<3xi32>
}

// -----

// CHECK-LABEL: func.func @add_zero_lhs_i64(
// CHECK-SAME:  %[[X:.*]]: tensor<3xi64>)
// CHECK-NOT:   genesis.
// CHECK:       return %[[X]] : tensor<3xi64>
func.func @add_zero_lhs_i64(%x: tensor<3xi64>) -> tensor<3xi64> {
  %zero = genesis.constant dense<0> : tensor<3xi64>
  %0 = genesis.add %zero, %x : tensor<3xi64>
  return %0 : tensor<3xi64>
}

// -----

// CHECK-LABEL: func.func @add_one_kept(
// CHECK:       %[[ONE:.*]] = genesis.constant dense<1> : tensor<3xi32>
// CHECK:       %[[R:.*]] = genesis.add %arg0, %[[ONE]] : tensor<3xi32>
// CHECK:       return %[[R]]
func.func @add_one_kept(%x: tensor<3xi32>) -> tensor<3xi32> {
  %one = genesis.constant dense<1> : tensor<3xi32>
  %0 = genesis.add %x, %one : tensor<3xi32>
  return %0 : tensor<3xi32>
}

// -----

//===----------------------------------------------------------------------===//
// sub: x - 0 -> x (x - (+0.0) for floats; x - (-0.0) maps -0.0 to +0.0)
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @sub_zero_f32(
// CHECK-SAME:  %[[X:.*]]: tensor<4xf32>)
// CHECK-NOT:   genesis.
// CHECK:       return %[[X]] : tensor<4xf32>
func.func @sub_zero_f32(%x: tensor<4xf32>) -> tensor<4xf32> {
  %zero = genesis.constant dense<0.0> : tensor<4xf32>
  %0 = genesis.sub %x, %zero : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @sub_zero_i64(
// CHECK-SAME:  %[[X:.*]]: tensor<2xi64>)
// CHECK-NOT:   genesis.
// CHECK:       return %[[X]] : tensor<2xi64>
func.func @sub_zero_i64(%x: tensor<2xi64>) -> tensor<2xi64> {
  %zero = genesis.constant dense<0> : tensor<2xi64>
  %0 = genesis.sub %x, %zero : tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

// CHECK-LABEL: func.func @sub_negative_zero_kept(
// CHECK:       %[[ZERO:.*]] = genesis.constant dense<-0.000000e+00> : tensor<4xf32>
// CHECK:       %[[R:.*]] = genesis.sub %arg0, %[[ZERO]] : tensor<4xf32>
// CHECK:       return %[[R]]
func.func @sub_negative_zero_kept(%x: tensor<4xf32>) -> tensor<4xf32> {
  %zero = genesis.constant dense<-0.0> : tensor<4xf32>
  %0 = genesis.sub %x, %zero : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// 0 - x is a negation, not x.
// CHECK-LABEL: func.func @zero_sub_kept(
// CHECK:       %[[ZERO:.*]] = genesis.constant dense<0> : tensor<2xi32>
// CHECK:       %[[R:.*]] = genesis.sub %[[ZERO]], %arg0 : tensor<2xi32>
// CHECK:       return %[[R]]
func.func @zero_sub_kept(%x: tensor<2xi32>) -> tensor<2xi32> {
  %zero = genesis.constant dense<0> : tensor<2xi32>
  %0 = genesis.sub %zero, %x : tensor<2xi32>
  return %0 : tensor<2xi32>
}

// -----

//===----------------------------------------------------------------------===//
// neg: neg(neg(x)) -> x
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @neg_neg(
// CHECK-SAME:  %[[X:.*]]: tensor<4xf32>)
// CHECK-NOT:   genesis.
// CHECK:       return %[[X]] : tensor<4xf32>
func.func @neg_neg(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = genesis.neg %x : tensor<4xf32>
  %1 = genesis.neg %0 : tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @neg_neg_neg(
// CHECK-SAME:  %[[X:.*]]: tensor<4xi32>)
// CHECK-NEXT:  %[[R:.*]] = genesis.neg %[[X]] : tensor<4xi32>
// CHECK-NEXT:  return %[[R]] : tensor<4xi32>
func.func @neg_neg_neg(%x: tensor<4xi32>) -> tensor<4xi32> {
  %0 = genesis.neg %x : tensor<4xi32>
  %1 = genesis.neg %0 : tensor<4xi32>
  %2 = genesis.neg %1 : tensor<4xi32>
  return %2 : tensor<4xi32>
}

// -----

// CHECK-LABEL: func.func @neg_abs_kept(
// CHECK-SAME:  %[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT:  %[[A:.*]] = genesis.abs %[[X]] : tensor<4xf32>
// CHECK-NEXT:  %[[R:.*]] = genesis.neg %[[A]] : tensor<4xf32>
// CHECK-NEXT:  return %[[R]] : tensor<4xf32>
func.func @neg_abs_kept(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = genesis.abs %x : tensor<4xf32>
  %1 = genesis.neg %0 : tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

//===----------------------------------------------------------------------===//
// cast: a cast to the operand's own type folds away
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @cast_same_type(
// CHECK-SAME:  %[[X:.*]]: tensor<4xbf16>)
// CHECK-NOT:   genesis.
// CHECK:       return %[[X]] : tensor<4xbf16>
func.func @cast_same_type(%x: tensor<4xbf16>) -> tensor<4xbf16> {
  %0 = genesis.cast %x : tensor<4xbf16> to tensor<4xbf16>
  return %0 : tensor<4xbf16>
}

// -----

// A round trip through another type rounds, so it is not folded.
// CHECK-LABEL: func.func @cast_round_trip_kept(
// CHECK-SAME:  %[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT:  %[[A:.*]] = genesis.cast %[[X]] : tensor<4xf32> to tensor<4xbf16>
// CHECK-NEXT:  %[[B:.*]] = genesis.cast %[[A]] : tensor<4xbf16> to tensor<4xf32>
// CHECK-NEXT:  return %[[B]] : tensor<4xf32>
func.func @cast_round_trip_kept(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = genesis.cast %x : tensor<4xf32> to tensor<4xbf16>
  %1 = genesis.cast %0 : tensor<4xbf16> to tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

//===----------------------------------------------------------------------===//
// reshape: reshape(reshape(x)) -> reshape(x); a reshape to the same type
// folds away
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @reshape_reshape(
// CHECK-SAME:  %[[X:.*]]: tensor<2x3x4xf32>)
// CHECK-NEXT:  %[[R:.*]] = genesis.reshape %[[X]] : tensor<2x3x4xf32> -> tensor<4x6xf32>
// CHECK-NEXT:  return %[[R]] : tensor<4x6xf32>
func.func @reshape_reshape(%x: tensor<2x3x4xf32>) -> tensor<4x6xf32> {
  %0 = genesis.reshape %x : tensor<2x3x4xf32> -> tensor<24xf32>
  %1 = genesis.reshape %0 : tensor<24xf32> -> tensor<4x6xf32>
  return %1 : tensor<4x6xf32>
}

// -----

// CHECK-LABEL: func.func @reshape_chain(
// CHECK-SAME:  %[[X:.*]]: tensor<8xi64>)
// CHECK-NEXT:  %[[R:.*]] = genesis.reshape %[[X]] : tensor<8xi64> -> tensor<2x2x2xi64>
// CHECK-NEXT:  return %[[R]] : tensor<2x2x2xi64>
func.func @reshape_chain(%x: tensor<8xi64>) -> tensor<2x2x2xi64> {
  %0 = genesis.reshape %x : tensor<8xi64> -> tensor<2x4xi64>
  %1 = genesis.reshape %0 : tensor<2x4xi64> -> tensor<4x2xi64>
  %2 = genesis.reshape %1 : tensor<4x2xi64> -> tensor<2x2x2xi64>
  return %2 : tensor<2x2x2xi64>
}

// -----

// Reshaping back to the original type leaves nothing.
// CHECK-LABEL: func.func @reshape_reshape_back(
// CHECK-SAME:  %[[X:.*]]: tensor<2x3xf16>)
// CHECK-NOT:   genesis.
// CHECK:       return %[[X]] : tensor<2x3xf16>
func.func @reshape_reshape_back(%x: tensor<2x3xf16>) -> tensor<2x3xf16> {
  %0 = genesis.reshape %x : tensor<2x3xf16> -> tensor<3x2xf16>
  %1 = genesis.reshape %0 : tensor<3x2xf16> -> tensor<2x3xf16>
  return %1 : tensor<2x3xf16>
}

// -----

// The inner reshape stays while something else uses it.
// CHECK-LABEL: func.func @reshape_reshape_shared(
// CHECK-SAME:  %[[X:.*]]: tensor<2x3xf32>)
// CHECK-DAG:   %[[A:.*]] = genesis.reshape %[[X]] : tensor<2x3xf32> -> tensor<6xf32>
// CHECK-DAG:   %[[B:.*]] = genesis.reshape %[[X]] : tensor<2x3xf32> -> tensor<3x2xf32>
// CHECK:       return %[[A]], %[[B]] : tensor<6xf32>, tensor<3x2xf32>
func.func @reshape_reshape_shared(%x: tensor<2x3xf32>) -> (tensor<6xf32>, tensor<3x2xf32>) {
  %0 = genesis.reshape %x : tensor<2x3xf32> -> tensor<6xf32>
  %1 = genesis.reshape %0 : tensor<6xf32> -> tensor<3x2xf32>
  return %0, %1 : tensor<6xf32>, tensor<3x2xf32>
}

// -----

// CHECK-LABEL: func.func @reshape_same_type(
// CHECK-SAME:  %[[X:.*]]: tensor<4x4xi1>)
// CHECK-NOT:   genesis.
// CHECK:       return %[[X]] : tensor<4x4xi1>
func.func @reshape_same_type(%x: tensor<4x4xi1>) -> tensor<4x4xi1> {
  %0 = genesis.reshape %x : tensor<4x4xi1> -> tensor<4x4xi1>
  return %0 : tensor<4x4xi1>
}

// -----

//===----------------------------------------------------------------------===//
// transpose: two transposes compose; the identity permutation folds away
//===----------------------------------------------------------------------===//

// transpose(transpose(x, [1, 2, 0]), [1, 2, 0]) == transpose(x, [2, 0, 1]).
// CHECK-LABEL: func.func @transpose_transpose(
// CHECK-SAME:  %[[X:.*]]: tensor<2x3x4xf32>)
// CHECK-NEXT:  %[[R:.*]] = genesis.transpose %[[X]], [2, 0, 1] : tensor<2x3x4xf32>
// CHECK-NEXT:  return %[[R]] : tensor<4x2x3xf32>
func.func @transpose_transpose(%x: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  %0 = genesis.transpose %x, [1, 2, 0] : tensor<2x3x4xf32>
  %1 = genesis.transpose %0, [1, 2, 0] : tensor<3x4x2xf32>
  return %1 : tensor<4x2x3xf32>
}

// -----

// transpose(transpose(x, [0, 2, 1, 3]), [3, 1, 0, 2]) == transpose(x, [3, 2, 0, 1]).
// CHECK-LABEL: func.func @transpose_transpose_4d(
// CHECK-SAME:  %[[X:.*]]: tensor<2x3x4x5xi32>)
// CHECK-NEXT:  %[[R:.*]] = genesis.transpose %[[X]], [3, 2, 0, 1] : tensor<2x3x4x5xi32>
// CHECK-NEXT:  return %[[R]] : tensor<5x4x2x3xi32>
func.func @transpose_transpose_4d(%x: tensor<2x3x4x5xi32>) -> tensor<5x4x2x3xi32> {
  %0 = genesis.transpose %x, [0, 2, 1, 3] : tensor<2x3x4x5xi32>
  %1 = genesis.transpose %0, [3, 1, 0, 2] : tensor<2x4x3x5xi32>
  return %1 : tensor<5x4x2x3xi32>
}

// -----

// CHECK-LABEL: func.func @transpose_transpose_identity(
// CHECK-SAME:  %[[X:.*]]: tensor<2x3xf32>)
// CHECK-NOT:   genesis.
// CHECK:       return %[[X]] : tensor<2x3xf32>
func.func @transpose_transpose_identity(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = genesis.transpose %x, [1, 0] : tensor<2x3xf32>
  %1 = genesis.transpose %0, [1, 0] : tensor<3x2xf32>
  return %1 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @transpose_transpose_identity_3d(
// CHECK-SAME:  %[[X:.*]]: tensor<2x3x4xbf16>)
// CHECK-NOT:   genesis.
// CHECK:       return %[[X]] : tensor<2x3x4xbf16>
func.func @transpose_transpose_identity_3d(%x: tensor<2x3x4xbf16>) -> tensor<2x3x4xbf16> {
  %0 = genesis.transpose %x, [1, 2, 0] : tensor<2x3x4xbf16>
  %1 = genesis.transpose %0, [2, 0, 1] : tensor<3x4x2xbf16>
  return %1 : tensor<2x3x4xbf16>
}

// -----

// CHECK-LABEL: func.func @transpose_identity(
// CHECK-SAME:  %[[X:.*]]: tensor<2x3x4xf32>)
// CHECK-NOT:   genesis.
// CHECK:       return %[[X]] : tensor<2x3x4xf32>
func.func @transpose_identity(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = genesis.transpose %x, [0, 1, 2] : tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// -----

// A permutation of two equal dimensions keeps the type but moves elements.
// CHECK-LABEL: func.func @transpose_square_kept(
// CHECK-SAME:  %[[X:.*]]: tensor<3x3xf32>)
// CHECK-NEXT:  %[[R:.*]] = genesis.transpose %[[X]], [1, 0] : tensor<3x3xf32>
// CHECK-NEXT:  return %[[R]] : tensor<3x3xf32>
func.func @transpose_square_kept(%x: tensor<3x3xf32>) -> tensor<3x3xf32> {
  %0 = genesis.transpose %x, [1, 0] : tensor<3x3xf32>
  return %0 : tensor<3x3xf32>
}

// -----

//===----------------------------------------------------------------------===//
// slice: a slice of the whole tensor folds away
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @slice_full(
// CHECK-SAME:  %[[X:.*]]: tensor<4x8xf32>)
// CHECK-NOT:   genesis.
// CHECK:       return %[[X]] : tensor<4x8xf32>
func.func @slice_full(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = genesis.slice %x start [0, 0] limit [4, 8] stride [1, 1] : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// A stride over a dimension of size 1 still takes its one element.
// CHECK-LABEL: func.func @slice_full_strided_unit_dim(
// CHECK-SAME:  %[[X:.*]]: tensor<1x8xi64>)
// CHECK-NOT:   genesis.
// CHECK:       return %[[X]] : tensor<1x8xi64>
func.func @slice_full_strided_unit_dim(%x: tensor<1x8xi64>) -> tensor<1x8xi64> {
  %0 = genesis.slice %x start [0, 0] limit [1, 8] stride [3, 1] : tensor<1x8xi64>
  return %0 : tensor<1x8xi64>
}

// -----

// CHECK-LABEL: func.func @slice_partial_kept(
// CHECK-SAME:  %[[X:.*]]: tensor<4x8xf32>)
// CHECK-NEXT:  %[[R:.*]] = genesis.slice %[[X]] start [0, 2] limit [4, 8] stride [1, 2] : tensor<4x8xf32>
// CHECK-NEXT:  return %[[R]] : tensor<4x3xf32>
func.func @slice_partial_kept(%x: tensor<4x8xf32>) -> tensor<4x3xf32> {
  %0 = genesis.slice %x start [0, 2] limit [4, 8] stride [1, 2] : tensor<4x8xf32>
  return %0 : tensor<4x3xf32>
}

// -----

//===----------------------------------------------------------------------===//
// concat: a concat of a single input folds to it
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @concat_single(
// CHECK-SAME:  %[[X:.*]]: tensor<2x3xf32>)
// CHECK-NOT:   genesis.
// CHECK:       return %[[X]] : tensor<2x3xf32>
func.func @concat_single(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = genesis.concat %x dim 1 : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @concat_two_kept(
// CHECK-SAME:  %[[X:.*]]: tensor<2x3xf32>, %[[Y:.*]]: tensor<2x5xf32>)
// CHECK-NEXT:  %[[R:.*]] = genesis.concat %[[X]], %[[Y]] dim 1 : tensor<2x3xf32>, tensor<2x5xf32>
// CHECK-NEXT:  return %[[R]] : tensor<2x8xf32>
func.func @concat_two_kept(%x: tensor<2x3xf32>, %y: tensor<2x5xf32>) -> tensor<2x8xf32> {
  %0 = genesis.concat %x, %y dim 1 : tensor<2x3xf32>, tensor<2x5xf32>
  return %0 : tensor<2x8xf32>
}

// -----

//===----------------------------------------------------------------------===//
// broadcast_in_dim: the identity broadcast folds away
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @broadcast_identity(
// CHECK-SAME:  %[[X:.*]]: tensor<4x8xf32>)
// CHECK-NOT:   genesis.
// CHECK:       return %[[X]] : tensor<4x8xf32>
func.func @broadcast_identity(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = genesis.broadcast_in_dim %x, [0, 1] : tensor<4x8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @broadcast_identity_scalar(
// CHECK-SAME:  %[[X:.*]]: tensor<i1>)
// CHECK-NOT:   genesis.
// CHECK:       return %[[X]] : tensor<i1>
func.func @broadcast_identity_scalar(%x: tensor<i1>) -> tensor<i1> {
  %0 = genesis.broadcast_in_dim %x, [] : tensor<i1> -> tensor<i1>
  return %0 : tensor<i1>
}

// -----

// CHECK-LABEL: func.func @broadcast_expanding_kept(
// CHECK-SAME:  %[[X:.*]]: tensor<1x8xf32>)
// CHECK-NEXT:  %[[R:.*]] = genesis.broadcast_in_dim %[[X]], [0, 1] : tensor<1x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:  return %[[R]] : tensor<4x8xf32>
func.func @broadcast_expanding_kept(%x: tensor<1x8xf32>) -> tensor<4x8xf32> {
  %0 = genesis.broadcast_in_dim %x, [0, 1] : tensor<1x8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

//===----------------------------------------------------------------------===//
// Ops without a folder stay, and an unused all_reduce is kept because it
// communicates (it is not Pure), while unused pure ops are erased.
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @no_folder_kept(
// CHECK-SAME:  %[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT:  %[[R:.*]] = genesis.relu %[[X]] : tensor<4xf32>
// CHECK-NEXT:  %[[S:.*]] = genesis.reduce_sum %[[R]] dims [0] : tensor<4xf32>
// CHECK-NEXT:  return %[[S]] : tensor<f32>
func.func @no_folder_kept(%x: tensor<4xf32>) -> tensor<f32> {
  %0 = genesis.relu %x : tensor<4xf32>
  %1 = genesis.reduce_sum %0 dims [0] : tensor<4xf32>
  return %1 : tensor<f32>
}

// -----

// stop_gradient is the identity but has no folder: it must survive until
// differentiation, and it keeps neg(neg(x)) around it from folding.
// CHECK-LABEL: func.func @stop_gradient_kept(
// CHECK-SAME:  %[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT:  %[[A:.*]] = genesis.neg %[[X]] : tensor<4xf32>
// CHECK-NEXT:  %[[S:.*]] = genesis.stop_gradient %[[A]] : tensor<4xf32>
// CHECK-NEXT:  %[[B:.*]] = genesis.neg %[[S]] : tensor<4xf32>
// CHECK-NEXT:  return %[[B]] : tensor<4xf32>
func.func @stop_gradient_kept(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = genesis.neg %x : tensor<4xf32>
  %1 = genesis.stop_gradient %0 : tensor<4xf32>
  %2 = genesis.neg %1 : tensor<4xf32>
  return %2 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @dead_code(
// CHECK-SAME:  %[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT:  genesis.all_reduce sum, %[[X]] : tensor<4xf32>
// CHECK-NEXT:  return
func.func @dead_code(%x: tensor<4xf32>) {
  %0 = genesis.exp %x : tensor<4xf32>
  %1 = genesis.all_reduce sum, %x : tensor<4xf32>
  return
}

// -----

// The gradient of three slices that tile a tensor (q, k, v of one GPT-2
// projection) is a sum of padded copies; adjacent pads become one concat,
// each operand plus a kept 0.0 (so -0.0 still becomes +0.0, as in the sum).
// CHECK-LABEL: func.func @adjacent_pads
// CHECK-NOT: genesis.pad
// CHECK: %[[Z:.+]] = genesis.constant dense<0.000000e+00> : tensor<2x3xf32>
// CHECK-DAG: genesis.add %arg0, %[[Z]]
// CHECK-DAG: genesis.add %arg1, %[[Z]]
// CHECK-DAG: genesis.add %arg2, %[[Z]]
// CHECK-DAG: genesis.concat {{.+}} : tensor<2x3xf32>, tensor<2x3xf32>
// CHECK-DAG: %[[R:.+]] = genesis.concat {{.+}} : tensor<2x3xf32>, tensor<2x6xf32>
// CHECK-NOT: genesis.pad
// CHECK: return %[[R]]
func.func @adjacent_pads(%q: tensor<2x3xf32>, %k: tensor<2x3xf32>, %v: tensor<2x3xf32>) -> tensor<2x9xf32> {
  %0 = genesis.pad %q low [0, 0] high [0, 6] interior [0, 0] : tensor<2x3xf32>
  %1 = genesis.pad %k low [0, 3] high [0, 3] interior [0, 0] : tensor<2x3xf32>
  %2 = genesis.pad %v low [0, 6] high [0, 0] interior [0, 0] : tensor<2x3xf32>
  %3 = genesis.add %2, %1 : tensor<2x9xf32>
  %4 = genesis.add %3, %0 : tensor<2x9xf32>
  return %4 : tensor<2x9xf32>
}

// -----

// Pads that leave a gap, overlap, or pad two dimensions stay a sum; two
// adjacent pads inside a larger zero tensor become a pad of their concat.
// Integers need no kept zero.
// CHECK-LABEL: func.func @other_pads
// CHECK: genesis.add
// CHECK: genesis.add
// CHECK: %[[J:.+]] = genesis.concat %arg2, %arg3 dim 1 : tensor<2x3xi32>, tensor<2x3xi32>
// CHECK: genesis.pad %[[J]] low [0, 1] high [0, 2] interior [0, 0] : tensor<2x6xi32>
func.func @other_pads(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>, %i: tensor<2x3xi32>, %j: tensor<2x3xi32>) -> (tensor<2x7xf32>, tensor<3x4xf32>, tensor<2x9xi32>) {
  %0 = genesis.pad %a low [0, 0] high [0, 4] interior [0, 0] : tensor<2x3xf32>
  %1 = genesis.pad %b low [0, 4] high [0, 0] interior [0, 0] : tensor<2x3xf32>
  %2 = genesis.add %0, %1 : tensor<2x7xf32>
  %3 = genesis.pad %a low [1, 0] high [0, 1] interior [0, 0] : tensor<2x3xf32>
  %4 = genesis.pad %b low [0, 1] high [1, 0] interior [0, 0] : tensor<2x3xf32>
  %5 = genesis.add %3, %4 : tensor<3x4xf32>
  %6 = genesis.pad %i low [0, 1] high [0, 5] interior [0, 0] : tensor<2x3xi32>
  %7 = genesis.pad %j low [0, 4] high [0, 2] interior [0, 0] : tensor<2x3xi32>
  %8 = genesis.add %6, %7 : tensor<2x9xi32>
  return %2, %5, %8 : tensor<2x7xf32>, tensor<3x4xf32>, tensor<2x9xi32>
}

// -----

// A sum over an empty dimension is zeros; over non-empty dimensions of a
// tensor with an empty kept dimension it stays (its result has no elements).
// CHECK-LABEL: func.func @sum_over_empty
// CHECK-DAG: %[[Z:.+]] = genesis.constant dense<0.000000e+00> : tensor<3xf32>
// CHECK-DAG: %[[I:.+]] = genesis.constant dense<0> : tensor<2xi64>
// CHECK-DAG: %[[K:.+]] = genesis.reduce_sum %arg2 dims [1]
// CHECK: return %[[Z]], %[[I]], %[[K]]
func.func @sum_over_empty(%a: tensor<3x0xf32>, %b: tensor<0x2xi64>, %c: tensor<0x4xf32>) -> (tensor<3xf32>, tensor<2xi64>, tensor<0xf32>) {
  %0 = genesis.reduce_sum %a dims [1] : tensor<3x0xf32>
  %1 = genesis.reduce_sum %b dims [0] : tensor<0x2xi64>
  %2 = genesis.reduce_sum %c dims [1] : tensor<0x4xf32>
  return %0, %1, %2 : tensor<3xf32>, tensor<2xi64>, tensor<0xf32>
}

// -----

// A lookup in a widened table gathers first and widens the rows (here with
// the cast used elsewhere too, which stays for its other user); a take that
// gives more elements than the table has keeps the cast on the table.
// CHECK-LABEL: func.func @take_of_cast
// CHECK-SAME:  (%[[T:.+]]: tensor<100x16xbf16>, %[[I:.+]]: tensor<4xi64>, %[[J:.+]]: tensor<3x8xi64>)
// CHECK-DAG:   %[[ROWS:.+]] = genesis.take %[[T]], %[[I]] axis 0 : tensor<100x16xbf16>, tensor<4xi64>
// CHECK-DAG:   %[[WIDE_ROWS:.+]] = genesis.cast %[[ROWS]] : tensor<4x16xbf16> to tensor<4x16xf32>
// CHECK-DAG:   %[[WIDE:.+]] = genesis.cast %[[T]] : tensor<100x16xbf16> to tensor<100x16xf32>
// CHECK-DAG:   %[[EXP:.+]] = genesis.cast %{{.+}} : tensor<2x3xf16> to tensor<2x3xf32>
// CHECK-DAG:   %[[MANY:.+]] = genesis.take %[[EXP]], %[[J]] axis 1
// CHECK:       return %[[WIDE_ROWS]], %[[WIDE]], %[[MANY]]
func.func @take_of_cast(%t: tensor<100x16xbf16>, %i: tensor<4xi64>, %j: tensor<3x8xi64>) -> (tensor<4x16xf32>, tensor<100x16xf32>, tensor<2x3x8xf32>) {
  %wide = genesis.cast %t : tensor<100x16xbf16> to tensor<100x16xf32>
  %rows = genesis.take %wide, %i axis 0 : tensor<100x16xf32>, tensor<4xi64>
  %small = genesis.constant dense<1.0> : tensor<2x3xf16>
  %exp = genesis.cast %small : tensor<2x3xf16> to tensor<2x3xf32>
  %many = genesis.take %exp, %j axis 1 : tensor<2x3xf32>, tensor<3x8xi64>
  return %rows, %wide, %many : tensor<4x16xf32>, tensor<100x16xf32>, tensor<2x3x8xf32>
}

// -----

// Adjacent slices of one tensor in a concat join into one slice (the whole
// tensor when they tile it), also through a single-use inner concat along
// the same dimension; slices that are not adjacent, strided, partial along
// another dimension or of different tensors stay.
// CHECK-LABEL: func.func @concat_of_adjacent_slices
// CHECK-SAME:  (%[[X:.+]]: tensor<2x9xf32>, %[[Y:.+]]: tensor<2x9xf32>)
// CHECK-DAG:   %[[MID:.+]] = genesis.slice %[[X]] start [0, 2] limit [2, 7] stride [1, 1]
// CHECK-DAG:   %[[A:.+]] = genesis.slice %[[X]] start [0, 0] limit [2, 3] stride [1, 1]
// CHECK-DAG:   %[[B:.+]] = genesis.slice %[[X]] start [0, 4] limit [2, 9] stride [1, 1]
// CHECK-DAG:   %[[S:.+]] = genesis.slice %[[X]] start [0, 3] limit [2, 9] stride [1, 2]
// CHECK-DAG:   %[[R:.+]] = genesis.slice %[[X]] start [0, 0] limit [1, 3] stride [1, 1]
// CHECK-DAG:   %[[Q:.+]] = genesis.slice %[[X]] start [1, 3] limit [2, 9] stride [1, 1]
// CHECK-DAG:   %[[YS:.+]] = genesis.slice %[[Y]] start [0, 3] limit [2, 9] stride [1, 1]
// CHECK-DAG:   %[[GAP:.+]] = genesis.concat %[[A]], %[[B]] dim 1
// CHECK-DAG:   %[[STRIDED:.+]] = genesis.concat %[[A]], %[[S]] dim 1
// CHECK-DAG:   %[[ROWS:.+]] = genesis.concat %[[R]], %[[Q]] dim 1
// CHECK-DAG:   %[[OTHER:.+]] = genesis.concat %[[A]], %[[YS]] dim 1
// CHECK:       return %[[X]], %[[MID]], %[[GAP]], %[[STRIDED]], %[[ROWS]], %[[OTHER]]
func.func @concat_of_adjacent_slices(%x: tensor<2x9xf32>, %y: tensor<2x9xf32>) -> (tensor<2x9xf32>, tensor<2x5xf32>, tensor<2x8xf32>, tensor<2x6xf32>, tensor<1x9xf32>, tensor<2x9xf32>) {
  %a = genesis.slice %x start [0, 0] limit [2, 3] stride [1, 1] : tensor<2x9xf32>
  %b = genesis.slice %x start [0, 3] limit [2, 5] stride [1, 1] : tensor<2x9xf32>
  %c = genesis.slice %x start [0, 5] limit [2, 9] stride [1, 1] : tensor<2x9xf32>
  %bc = genesis.concat %b, %c dim 1 : tensor<2x2xf32>, tensor<2x4xf32>
  %whole = genesis.concat %a, %bc dim 1 : tensor<2x3xf32>, tensor<2x6xf32>
  %m1 = genesis.slice %x start [0, 2] limit [2, 4] stride [1, 1] : tensor<2x9xf32>
  %m2 = genesis.slice %x start [0, 4] limit [2, 7] stride [1, 1] : tensor<2x9xf32>
  %mid = genesis.concat %m1, %m2 dim 1 : tensor<2x2xf32>, tensor<2x3xf32>
  %far = genesis.slice %x start [0, 4] limit [2, 9] stride [1, 1] : tensor<2x9xf32>
  %gap = genesis.concat %a, %far dim 1 : tensor<2x3xf32>, tensor<2x5xf32>
  %s = genesis.slice %x start [0, 3] limit [2, 9] stride [1, 2] : tensor<2x9xf32>
  %strided = genesis.concat %a, %s dim 1 : tensor<2x3xf32>, tensor<2x3xf32>
  %r = genesis.slice %x start [0, 0] limit [1, 3] stride [1, 1] : tensor<2x9xf32>
  %q = genesis.slice %x start [1, 3] limit [2, 9] stride [1, 1] : tensor<2x9xf32>
  %rows = genesis.concat %r, %q dim 1 : tensor<1x3xf32>, tensor<1x6xf32>
  %ys = genesis.slice %y start [0, 3] limit [2, 9] stride [1, 1] : tensor<2x9xf32>
  %other = genesis.concat %a, %ys dim 1 : tensor<2x3xf32>, tensor<2x6xf32>
  return %whole, %mid, %gap, %strided, %rows, %other : tensor<2x9xf32>, tensor<2x5xf32>, tensor<2x8xf32>, tensor<2x6xf32>, tensor<1x9xf32>, tensor<2x9xf32>
}
