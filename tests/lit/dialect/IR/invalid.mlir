// RUN: genesis-opt %s --split-input-file --verify-diagnostics

// Every error the genesis dialect reports. Ops whose custom syntax leaves the
// result type to inference report shape errors while parsing; ops written with
// a result type (functional-type or the generic form) report them from the
// verifier, followed by MLIR's "failed to infer returned types".

//===----------------------------------------------------------------------===//
// ODS constraints (checked before any genesis shape rule)
//===----------------------------------------------------------------------===//

func.func @dynamic_shape(%a: tensor<?xf32>) {
  // expected-error @+1 {{'genesis.exp' op operand #0 must be statically shaped tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values, but got 'tensor<?xf32>'}}
  %0 = "genesis.exp"(%a) : (tensor<?xf32>) -> tensor<?xf32>
  return
}

// -----

func.func @unranked(%a: tensor<*xf32>) {
  // expected-error @+1 {{'genesis.neg' op operand #0 must be statically shaped tensor of}}
  %0 = "genesis.neg"(%a) : (tensor<*xf32>) -> tensor<*xf32>
  return
}

// -----

func.func @f8_element_type(%a: tensor<4xf8E4M3FN>) {
  // expected-error @+1 {{'genesis.add' op operand #0 must be statically shaped tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float or 32-bit signless integer or 64-bit signless integer values, but got 'tensor<4xf8E4M3FN>'}}
  %0 = genesis.add %a, %a : tensor<4xf8E4M3FN>
  return
}

// -----

func.func @i8_constant() {
  // expected-error @+1 {{'genesis.constant' op result #0 must be statically shaped tensor of}}
  %0 = genesis.constant dense<1> : tensor<4xi8>
  return
}

// -----

func.func @exp_of_integer(%a: tensor<4xi32>) {
  // expected-error @+1 {{'genesis.exp' op operand #0 must be statically shaped tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values, but got 'tensor<4xi32>'}}
  %0 = genesis.exp %a : tensor<4xi32>
  return
}

// -----

func.func @neg_of_bool(%a: tensor<4xi1>) {
  // expected-error @+1 {{'genesis.neg' op operand #0 must be statically shaped tensor of}}
  %0 = genesis.neg %a : tensor<4xi1>
  return
}

// -----

func.func @erf_of_integer(%a: tensor<4xi64>) {
  // expected-error @+1 {{'genesis.erf' op operand #0 must be statically shaped tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values, but got 'tensor<4xi64>'}}
  %0 = genesis.erf %a : tensor<4xi64>
  return
}

// -----

func.func @not_of_float(%a: tensor<4xf32>) {
  // expected-error @+1 {{'genesis.not' op operand #0 must be statically shaped tensor of 1-bit signless integer values, but got 'tensor<4xf32>'}}
  %0 = genesis.not %a : tensor<4xf32>
  return
}

// -----

func.func @matmul_of_integers(%a: tensor<2x2xi32>) {
  // expected-error @+1 {{'genesis.matmul' op operand #0 must be statically shaped tensor of}}
  %0 = genesis.matmul %a, %a : tensor<2x2xi32>, tensor<2x2xi32>
  return
}

// -----

func.func @iota_of_bool() {
  // expected-error @+1 {{'genesis.iota' op result #0 must be statically shaped tensor of}}
  %0 = genesis.iota dim 0 : tensor<4xi1>
  return
}

// -----

func.func @argmax_result_not_i64(%a: tensor<4x8xf32>) {
  // expected-error @+1 {{'genesis.argmax' op result #0 must be statically shaped tensor of 64-bit signless integer values, but got 'tensor<4xi32>'}}
  %0 = "genesis.argmax"(%a) <{dim = 1 : i64}> : (tensor<4x8xf32>) -> tensor<4xi32>
  return
}

// -----

func.func @lr_not_scalar(%p: tensor<4xf32>, %lr: tensor<1xf32>) {
  // expected-error @+1 {{'genesis.sgd_update' op operand #2 must be 0D tensor of 32-bit float values, but got 'tensor<1xf32>'}}
  %0 = genesis.sgd_update %p, %p, %lr : (tensor<4xf32>, tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @seed_not_i64(%a: tensor<4xf32>, %seed: tensor<i32>) {
  // expected-error @+1 {{'genesis.dropout' op operand #1 must be 0D tensor of 64-bit signless integer values, but got 'tensor<i32>'}}
  %0 = genesis.dropout %a, %seed {offset = 0 : i64, probability = 5.000000e-01 : f64} : (tensor<4xf32>, tensor<i32>) -> tensor<4xf32>
  return
}

// -----

func.func @labels_not_integer(%l: tensor<4x3xf32>, %y: tensor<4xf32>) {
  // expected-error @+1 {{'genesis.cross_entropy' op operand #1 must be statically shaped tensor of 32-bit signless integer or 64-bit signless integer values, but got 'tensor<4xf32>'}}
  %0 = genesis.cross_entropy %l, %y : (tensor<4x3xf32>, tensor<4xf32>) -> tensor<f32>
  return
}

// -----

func.func @missing_attribute(%a: tensor<4xf32>) {
  // expected-error @+1 {{'genesis.softmax' op requires attribute 'dim'}}
  %0 = "genesis.softmax"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @unknown_direction(%a: tensor<4xf32>) {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'direction' [eq, ne, lt, le, gt, ge]}}
  %0 = genesis.compare lg, %a, %a : tensor<4xf32>
  return
}

// -----

func.func @direction_out_of_range(%a: tensor<4xf32>) {
  // expected-error @+1 {{invalid properties {direction = 7 : i32} for op genesis.compare}}
  %0 = "genesis.compare"(%a, %a) <{direction = 7 : i32}> : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  return
}

// -----

func.func @unknown_epilogue(%a: tensor<2x2xf32>) {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'epilogue' [none, bias, relu, bias_relu, gelu, bias_gelu, dgelu]}}
  %0 = genesis.library_call silu %a, %a : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return
}

// -----

func.func @yield_outside_fusion(%a: tensor<4xf32>) {
  // expected-error @+1 {{'genesis.yield' op expects parent op 'genesis.fusion'}}
  genesis.yield %a : tensor<4xf32>
}

// -----

// A result type that disagrees with the shape rule, in the generic form.
func.func @inferred_type_mismatch(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{'genesis.transpose' op inferred type(s) 'tensor<3x2xf32>' are incompatible with return type(s) of operation 'tensor<2x3xf32>'}}
  // expected-error @+1 {{'genesis.transpose' op failed to infer returned types}}
  %0 = "genesis.transpose"(%a) <{permutation = array<i64: 1, 0>}> : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @constant_type_mismatch() {
  // expected-error @+2 {{'genesis.constant' op inferred type(s) 'tensor<2xf32>' are incompatible with return type(s) of operation 'tensor<3xf32>'}}
  // expected-error @+1 {{'genesis.constant' op failed to infer returned types}}
  %0 = "genesis.constant"() <{value = dense<1.0> : tensor<2xf32>}> : () -> tensor<3xf32>
  return
}

// -----

// Elementwise ops check shapes through MLIR's Elementwise trait in the generic
// form, before the genesis shape rule runs.
func.func @elementwise_trait(%a: tensor<2xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{'genesis.add' op all non-scalar operands/results must have the same shape and base type}}
  %0 = "genesis.add"(%a, %b) : (tensor<2xf32>, tensor<3xf32>) -> tensor<2xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// "<name> must be a statically shaped ranked tensor": reachable when the
// parser infers the result type of custom syntax before the op is verified.
//===----------------------------------------------------------------------===//

func.func @ranked_operand(%a: tensor<?x3xf32>) {
  // expected-error @+1 {{'genesis.softmax' op operand must be a statically shaped ranked tensor, got 'tensor<?x3xf32>'}}
  %0 = genesis.softmax %a dim 0 : tensor<?x3xf32>
  return
}

// -----

func.func @ranked_lhs(%a: tensor<?x3xf32>, %b: tensor<3x4xf32>) {
  // expected-error @+1 {{'genesis.matmul' op lhs must be a statically shaped ranked tensor, got 'tensor<?x3xf32>'}}
  %0 = genesis.matmul %a, %b : tensor<?x3xf32>, tensor<3x4xf32>
  return
}

// -----

func.func @ranked_rhs(%a: tensor<2x3xf32>, %b: tensor<3x?xf32>) {
  // expected-error @+1 {{'genesis.matmul' op rhs must be a statically shaped ranked tensor, got 'tensor<3x?xf32>'}}
  %0 = genesis.matmul %a, %b : tensor<2x3xf32>, tensor<3x?xf32>
  return
}

// -----

func.func @ranked_compare_lhs(%a: tensor<?xf32>) {
  // expected-error @+1 {{'genesis.compare' op lhs must be a statically shaped ranked tensor, got 'tensor<?xf32>'}}
  %0 = genesis.compare eq, %a, %a : tensor<?xf32>
  return
}

// -----

func.func @ranked_indices(%t: tensor<10x4xf32>, %i: tensor<?xi64>) {
  // expected-error @+1 {{'genesis.take' op indices must be a statically shaped ranked tensor, got 'tensor<?xi64>'}}
  %0 = genesis.take %t, %i axis 0 : tensor<10x4xf32>, tensor<?xi64>
  return
}

// -----

func.func @ranked_scatter_operand(%t: tensor<?x4xf32>, %i: tensor<2xi64>, %u: tensor<2x4xf32>) {
  // expected-error @+1 {{'genesis.scatter_add' op operand must be a statically shaped ranked tensor, got 'tensor<?x4xf32>'}}
  %0 = genesis.scatter_add %t, %i, %u axis 0 : tensor<?x4xf32>, tensor<2xi64>, tensor<2x4xf32>
  return
}

// -----

func.func @ranked_condition(%c: tensor<?xi1>, %a: tensor<2xf32>) {
  // expected-error @+1 {{'genesis.select' op condition must be a statically shaped ranked tensor, got 'tensor<?xi1>'}}
  %0 = genesis.select %c, %a, %a : tensor<?xi1>, tensor<2xf32>
  return
}

// -----

func.func @ranked_on_true(%c: tensor<2xi1>, %a: tensor<?xf32>) {
  // expected-error @+1 {{'genesis.select' op on_true must be a statically shaped ranked tensor, got 'tensor<?xf32>'}}
  %0 = genesis.select %c, %a, %a : tensor<2xi1>, tensor<?xf32>
  return
}

// -----

func.func @ranked_concat_input(%a: tensor<?xf32>, %b: tensor<2xf32>) {
  // expected-error @+1 {{'genesis.concat' op input #0 must be a statically shaped ranked tensor, got 'tensor<?xf32>'}}
  %0 = genesis.concat %a, %b dim 0 : tensor<?xf32>, tensor<2xf32>
  return
}

// -----

func.func @ranked_reduce(%a: tensor<4x?xf32>) {
  // expected-error @+1 {{'genesis.reduce_sum' op operand must be a statically shaped ranked tensor, got 'tensor<4x?xf32>'}}
  %0 = genesis.reduce_sum %a dims [0] : tensor<4x?xf32>
  return
}

// -----

func.func @ranked_argmax(%a: tensor<4x?xf32>) {
  // expected-error @+1 {{'genesis.argmax' op operand must be a statically shaped ranked tensor, got 'tensor<4x?xf32>'}}
  %0 = genesis.argmax %a dim 0 : tensor<4x?xf32>
  return
}

// -----

func.func @ranked_transpose(%a: tensor<?x2xf32>) {
  // expected-error @+1 {{'genesis.transpose' op operand must be a statically shaped ranked tensor, got 'tensor<?x2xf32>'}}
  %0 = genesis.transpose %a, [1, 0] : tensor<?x2xf32>
  return
}

// -----

func.func @ranked_slice(%a: tensor<?xf32>) {
  // expected-error @+1 {{'genesis.slice' op operand must be a statically shaped ranked tensor, got 'tensor<?xf32>'}}
  %0 = genesis.slice %a start [0] limit [1] stride [1] : tensor<?xf32>
  return
}

// -----

func.func @ranked_layer_norm(%a: tensor<?x4xf32>) {
  // expected-error @+1 {{'genesis.layer_norm' op operand must be a statically shaped ranked tensor, got 'tensor<?x4xf32>'}}
  %0 = genesis.layer_norm %a eps 1.0e-05 : tensor<?x4xf32>
  return
}

// -----

func.func @ranked_rms_norm(%a: tensor<?x4xf32>, %w: tensor<4xf32>) {
  // expected-error @+1 {{'genesis.rms_norm' op operand must be a statically shaped ranked tensor, got 'tensor<?x4xf32>'}}
  %0 = genesis.rms_norm %a, %w eps 1.0e-05 : tensor<?x4xf32>, tensor<4xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// constant
//===----------------------------------------------------------------------===//

func.func @constant_not_tensor() {
  // expected-error @+1 {{'genesis.constant' op value must be a ranked tensor, got 'vector<4xf32>'}}
  %0 = genesis.constant dense<1.0> : vector<4xf32>
  return
}

// -----

func.func @constant_not_tensor_generic() {
  // expected-error @+2 {{'genesis.constant' op value must be a ranked tensor, got 'vector<4xf32>'}}
  // expected-error @+1 {{'genesis.constant' op failed to infer returned types}}
  %0 = "genesis.constant"() <{value = dense<1.0> : vector<4xf32>}> : () -> tensor<4xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Binary elementwise ops, compare, select
//===----------------------------------------------------------------------===//

func.func @add_type_mismatch(%a: tensor<2xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{'genesis.add' op lhs and rhs (broadcast explicitly with genesis.broadcast_in_dim) must have the same type, got 'tensor<2xf32>' and 'tensor<3xf32>'}}
  %0 = genesis.add %a, %b : tensor<2xf32>, tensor<3xf32>
  return
}

// -----

func.func @sub_element_type_mismatch(%a: tensor<2xf32>, %b: tensor<2xf16>) {
  // expected-error @+1 {{'genesis.sub' op lhs and rhs (broadcast explicitly with genesis.broadcast_in_dim) must have the same type, got 'tensor<2xf32>' and 'tensor<2xf16>'}}
  %0 = genesis.sub %a, %b : tensor<2xf32>, tensor<2xf16>
  return
}

// -----

func.func @mul_no_implicit_broadcast(%a: tensor<4x3xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{'genesis.mul' op lhs and rhs (broadcast explicitly with genesis.broadcast_in_dim) must have the same type, got 'tensor<4x3xf32>' and 'tensor<3xf32>'}}
  %0 = genesis.mul %a, %b : tensor<4x3xf32>, tensor<3xf32>
  return
}

// -----

func.func @div_type_mismatch(%a: tensor<2xi32>, %b: tensor<2xi64>) {
  // expected-error @+1 {{'genesis.div' op lhs and rhs (broadcast explicitly with genesis.broadcast_in_dim) must have the same type}}
  %0 = genesis.div %a, %b : tensor<2xi32>, tensor<2xi64>
  return
}

// -----

func.func @pow_type_mismatch(%a: tensor<2xf32>, %b: tensor<2xbf16>) {
  // expected-error @+1 {{'genesis.pow' op lhs and rhs (broadcast explicitly with genesis.broadcast_in_dim) must have the same type}}
  %0 = genesis.pow %a, %b : tensor<2xf32>, tensor<2xbf16>
  return
}

// -----

func.func @max_type_mismatch(%a: tensor<2xf32>, %b: tensor<1xf32>) {
  // expected-error @+1 {{'genesis.max' op lhs and rhs (broadcast explicitly with genesis.broadcast_in_dim) must have the same type}}
  %0 = genesis.max %a, %b : tensor<2xf32>, tensor<1xf32>
  return
}

// -----

func.func @min_type_mismatch(%a: tensor<2xf64>, %b: tensor<2xf32>) {
  // expected-error @+1 {{'genesis.min' op lhs and rhs (broadcast explicitly with genesis.broadcast_in_dim) must have the same type}}
  %0 = genesis.min %a, %b : tensor<2xf64>, tensor<2xf32>
  return
}

// -----

func.func @and_type_mismatch(%a: tensor<2xi1>, %b: tensor<3xi1>) {
  // expected-error @+1 {{'genesis.and' op lhs and rhs (broadcast explicitly with genesis.broadcast_in_dim) must have the same type}}
  %0 = genesis.and %a, %b : tensor<2xi1>, tensor<3xi1>
  return
}

// -----

func.func @or_type_mismatch(%a: tensor<2xi1>, %b: tensor<2x1xi1>) {
  // expected-error @+1 {{'genesis.or' op lhs and rhs (broadcast explicitly with genesis.broadcast_in_dim) must have the same type}}
  %0 = genesis.or %a, %b : tensor<2xi1>, tensor<2x1xi1>
  return
}

// -----

// In the generic form a same-shape mismatch passes the Elementwise trait and
// reaches the shape rule in the verifier.
func.func @add_type_mismatch_generic(%a: tensor<2xf32>, %b: tensor<2xf16>) {
  // expected-error @+2 {{'genesis.add' op lhs and rhs (broadcast explicitly with genesis.broadcast_in_dim) must have the same type, got 'tensor<2xf32>' and 'tensor<2xf16>'}}
  // expected-error @+1 {{'genesis.add' op failed to infer returned types}}
  %0 = "genesis.add"(%a, %b) : (tensor<2xf32>, tensor<2xf16>) -> tensor<2xf32>
  return
}

// -----

func.func @compare_type_mismatch(%a: tensor<2xf32>, %b: tensor<2xi32>) {
  // expected-error @+1 {{'genesis.compare' op lhs and rhs must have the same type, got 'tensor<2xf32>' and 'tensor<2xi32>'}}
  %0 = genesis.compare ge, %a, %b : tensor<2xf32>, tensor<2xi32>
  return
}

// -----

func.func @select_value_types(%c: tensor<2xi1>, %a: tensor<2xf32>, %b: tensor<2xf16>) {
  // expected-error @+1 {{'genesis.select' op on_true and on_false must have the same type, got 'tensor<2xf32>' and 'tensor<2xf16>'}}
  %0 = genesis.select %c, %a, %b : tensor<2xi1>, tensor<2xf32>, tensor<2xf16>
  return
}

// -----

func.func @select_condition_shape(%c: tensor<3xi1>, %a: tensor<2xf32>) {
  // expected-error @+1 {{'genesis.select' op condition 'tensor<3xi1>' must have the shape of the values 'tensor<2xf32>'}}
  %0 = genesis.select %c, %a, %a : tensor<3xi1>, tensor<2xf32>
  return
}

// -----

func.func @select_condition_not_bool(%c: tensor<2xi32>, %a: tensor<2xf32>) {
  // expected-error @+1 {{'genesis.select' op operand #0 must be statically shaped tensor of 1-bit signless integer values, but got 'tensor<2xi32>'}}
  %0 = genesis.select %c, %a, %a : tensor<2xi32>, tensor<2xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// cast
//===----------------------------------------------------------------------===//

// CastOp::verify's "operand and result shapes must match" cannot fire: the
// Elementwise trait rejects a shape change first.
func.func @cast_shape(%a: tensor<2xf32>) {
  // expected-error @+1 {{'genesis.cast' op all non-scalar operands/results must have the same shape and base type}}
  %0 = genesis.cast %a : tensor<2xf32> to tensor<3xf16>
  return
}

// -----

//===----------------------------------------------------------------------===//
// reshape
//===----------------------------------------------------------------------===//

func.func @reshape_element_type(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'genesis.reshape' op element type must be preserved, got 'tensor<2x3xf32>' -> 'tensor<6xf16>'}}
  %0 = genesis.reshape %a : tensor<2x3xf32> -> tensor<6xf16>
  return
}

// -----

func.func @reshape_element_count(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'genesis.reshape' op element count must be preserved, got 'tensor<2x3xf32>' (6 elements) -> 'tensor<7xf32>' (7 elements)}}
  %0 = genesis.reshape %a : tensor<2x3xf32> -> tensor<7xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// transpose
//===----------------------------------------------------------------------===//

func.func @transpose_repeated(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'genesis.transpose' op permutation [1, 1] is not a permutation of [0, 2)}}
  %0 = genesis.transpose %a, [1, 1] : tensor<2x3xf32>
  return
}

// -----

func.func @transpose_too_short(%a: tensor<2x3x4xf32>) {
  // expected-error @+1 {{'genesis.transpose' op permutation [1, 0] is not a permutation of [0, 3)}}
  %0 = genesis.transpose %a, [1, 0] : tensor<2x3x4xf32>
  return
}

// -----

func.func @transpose_out_of_range(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'genesis.transpose' op permutation [0, 2] is not a permutation of [0, 2)}}
  %0 = genesis.transpose %a, [0, 2] : tensor<2x3xf32>
  return
}

// -----

func.func @transpose_negative(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{'genesis.transpose' op permutation [-1, 0] is not a permutation of [0, 2)}}
  // expected-error @+1 {{'genesis.transpose' op failed to infer returned types}}
  %0 = "genesis.transpose"(%a) <{permutation = array<i64: -1, 0>}> : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// slice
//===----------------------------------------------------------------------===//

func.func @slice_entries(%a: tensor<4x8xf32>) {
  // expected-error @+1 {{'genesis.slice' op start, limit and stride need one entry per dimension of the rank-2 operand}}
  %0 = genesis.slice %a start [0, 0] limit [4, 8] stride [1] : tensor<4x8xf32>
  return
}

// -----

func.func @slice_limit_above_size(%a: tensor<4x8xf32>) {
  // expected-error @+1 {{'genesis.slice' op dimension 1 needs 0 <= start (0) <= limit (9) <= size (8)}}
  %0 = genesis.slice %a start [0, 0] limit [4, 9] stride [1, 1] : tensor<4x8xf32>
  return
}

// -----

func.func @slice_start_above_limit(%a: tensor<4x8xf32>) {
  // expected-error @+1 {{'genesis.slice' op dimension 0 needs 0 <= start (3) <= limit (2) <= size (4)}}
  %0 = genesis.slice %a start [3, 0] limit [2, 8] stride [1, 1] : tensor<4x8xf32>
  return
}

// -----

func.func @slice_negative_start(%a: tensor<4xf32>) {
  // expected-error @+1 {{'genesis.slice' op dimension 0 needs 0 <= start (-1) <= limit (2) <= size (4)}}
  %0 = genesis.slice %a start [-1] limit [2] stride [1] : tensor<4xf32>
  return
}

// -----

func.func @slice_stride(%a: tensor<4x8xf32>) {
  // expected-error @+1 {{'genesis.slice' op stride of dimension 1 must be >= 1, got 0}}
  %0 = genesis.slice %a start [0, 0] limit [4, 8] stride [1, 0] : tensor<4x8xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// pad
//===----------------------------------------------------------------------===//

func.func @pad_entries(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'genesis.pad' op low, high and interior need one entry per dimension of the rank-2 operand}}
  %0 = genesis.pad %a low [1, 0] high [0] interior [0, 0] : tensor<2x3xf32>
  return
}

// -----

func.func @pad_negative_low(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'genesis.pad' op padding of dimension 1 must be non-negative}}
  %0 = genesis.pad %a low [0, -1] high [0, 0] interior [0, 0] : tensor<2x3xf32>
  return
}

// -----

func.func @pad_negative_interior(%a: tensor<4xi32>) {
  // expected-error @+1 {{'genesis.pad' op padding of dimension 0 must be non-negative}}
  %0 = genesis.pad %a low [0] high [0] interior [-1] : tensor<4xi32>
  return
}

// -----

func.func @pad_of_bool(%a: tensor<4xi1>) {
  // expected-error @+1 {{'genesis.pad' op operand #0 must be statically shaped tensor of}}
  %0 = genesis.pad %a low [1] high [1] interior [0] : tensor<4xi1>
  return
}

// -----

func.func @ranked_pad(%a: tensor<?xf32>) {
  // expected-error @+1 {{'genesis.pad' op operand must be a statically shaped ranked tensor, got 'tensor<?xf32>'}}
  %0 = genesis.pad %a low [1] high [1] interior [0] : tensor<?xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// concat
//===----------------------------------------------------------------------===//

func.func @concat_no_input() {
  // expected-error @+2 {{'genesis.concat' op needs at least one input}}
  // expected-error @+1 {{'genesis.concat' op failed to infer returned types}}
  %0 = "genesis.concat"() <{dim = 0 : i64}> : () -> tensor<2xf32>
  return
}

// -----

func.func @concat_dim(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'genesis.concat' op dim 2 is out of range for rank 2}}
  %0 = genesis.concat %a, %a dim 2 : tensor<2x3xf32>, tensor<2x3xf32>
  return
}

// -----

func.func @concat_mismatch(%a: tensor<2x3xf32>, %b: tensor<3x3xf32>) {
  // expected-error @+1 {{'genesis.concat' op input #2 of type 'tensor<3x3xf32>' does not match input #0 of type 'tensor<2x3xf32>' outside dimension 1}}
  %0 = genesis.concat %a, %a, %b dim 1 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<3x3xf32>
  return
}

// -----

func.func @concat_element_type(%a: tensor<2xf32>, %b: tensor<2xf16>) {
  // expected-error @+1 {{'genesis.concat' op input #1 of type 'tensor<2xf16>' does not match input #0 of type 'tensor<2xf32>' outside dimension 0}}
  %0 = genesis.concat %a, %b dim 0 : tensor<2xf32>, tensor<2xf16>
  return
}

// -----

func.func @concat_rank(%a: tensor<2xf32>, %b: tensor<2x1xf32>) {
  // expected-error @+1 {{'genesis.concat' op input #1 of type 'tensor<2x1xf32>' does not match input #0 of type 'tensor<2xf32>' outside dimension 0}}
  %0 = genesis.concat %a, %b dim 0 : tensor<2xf32>, tensor<2x1xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// broadcast_in_dim
//===----------------------------------------------------------------------===//

func.func @broadcast_element_type(%a: tensor<4xf32>) {
  // expected-error @+1 {{'genesis.broadcast_in_dim' op element type must be preserved, got 'tensor<4xf32>' -> 'tensor<2x4xf16>'}}
  %0 = genesis.broadcast_in_dim %a, [1] : tensor<4xf32> -> tensor<2x4xf16>
  return
}

// -----

func.func @broadcast_dimensions_count(%a: tensor<4xf32>) {
  // expected-error @+1 {{'genesis.broadcast_in_dim' op broadcast_dimensions needs one entry per operand dimension (1), got 2}}
  %0 = genesis.broadcast_in_dim %a, [0, 1] : tensor<4xf32> -> tensor<4x4xf32>
  return
}

// -----

func.func @broadcast_dimensions_not_increasing(%a: tensor<4x4xf32>) {
  // expected-error @+1 {{'genesis.broadcast_in_dim' op broadcast_dimensions must be strictly increasing and below the result rank 3}}
  %0 = genesis.broadcast_in_dim %a, [2, 1] : tensor<4x4xf32> -> tensor<4x4x4xf32>
  return
}

// -----

func.func @broadcast_dimensions_out_of_range(%a: tensor<4xf32>) {
  // expected-error @+1 {{'genesis.broadcast_in_dim' op broadcast_dimensions must be strictly increasing and below the result rank 2}}
  %0 = genesis.broadcast_in_dim %a, [2] : tensor<4xf32> -> tensor<2x4xf32>
  return
}

// -----

func.func @broadcast_size(%a: tensor<3xf32>) {
  // expected-error @+1 {{'genesis.broadcast_in_dim' op operand dimension 0 (size 3) cannot broadcast to result dimension 1 (size 4)}}
  %0 = genesis.broadcast_in_dim %a, [1] : tensor<3xf32> -> tensor<2x4xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// iota
//===----------------------------------------------------------------------===//

func.func @iota_dim() {
  // expected-error @+1 {{'genesis.iota' op dim 2 is out of range for rank 2}}
  %0 = genesis.iota dim 2 : tensor<2x3xi64>
  return
}

// -----

func.func @iota_negative_dim() {
  // expected-error @+1 {{'genesis.iota' op dim -1 is out of range for rank 1}}
  %0 = genesis.iota dim -1 : tensor<4xf32>
  return
}

// -----

func.func @iota_scalar() {
  // expected-error @+1 {{'genesis.iota' op dim 0 is out of range for rank 0}}
  %0 = genesis.iota dim 0 : tensor<i32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// take, scatter_add
//===----------------------------------------------------------------------===//

func.func @take_axis(%t: tensor<10x4xf32>, %i: tensor<3xi64>) {
  // expected-error @+1 {{'genesis.take' op axis 2 is out of range for rank 2}}
  %0 = genesis.take %t, %i axis 2 : tensor<10x4xf32>, tensor<3xi64>
  return
}

// -----

func.func @scatter_add_axis(%t: tensor<10x4xf32>, %i: tensor<3xi64>, %u: tensor<3x4xf32>) {
  // expected-error @+1 {{'genesis.scatter_add' op axis -1 is out of range for rank 2}}
  %0 = genesis.scatter_add %t, %i, %u axis -1 : tensor<10x4xf32>, tensor<3xi64>, tensor<3x4xf32>
  return
}

// -----

func.func @scatter_add_updates(%t: tensor<10x4xf32>, %i: tensor<3xi64>, %u: tensor<4x3xf32>) {
  // expected-error @+1 {{'genesis.scatter_add' op updates must have type 'tensor<3x4xf32>' (what genesis.take gives for these operands), got 'tensor<4x3xf32>'}}
  %0 = genesis.scatter_add %t, %i, %u axis 0 : tensor<10x4xf32>, tensor<3xi64>, tensor<4x3xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

func.func @reduce_dims_order(%a: tensor<2x3x4xf32>) {
  // expected-error @+1 {{'genesis.reduce_sum' op dims [2, 0] must be strictly increasing and each below the rank 3}}
  %0 = genesis.reduce_sum %a dims [2, 0] : tensor<2x3x4xf32>
  return
}

// -----

func.func @reduce_dims_repeated(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'genesis.reduce_max' op dims [1, 1] must be strictly increasing and each below the rank 2}}
  %0 = genesis.reduce_max %a dims [1, 1] : tensor<2x3xf32>
  return
}

// -----

func.func @reduce_dims_range(%a: tensor<2x3xi32>) {
  // expected-error @+1 {{'genesis.reduce_min' op dims [2] must be strictly increasing and each below the rank 2}}
  %0 = genesis.reduce_min %a dims [2] keepdim : tensor<2x3xi32>
  return
}

// -----

func.func @argmax_dim(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'genesis.argmax' op dim 2 is out of range for rank 2}}
  %0 = genesis.argmax %a dim 2 : tensor<2x3xf32>
  return
}

// -----

func.func @take_from_empty_axis(%t: tensor<0x3xf32>, %i: tensor<2xi64>) {
  // expected-error @+1 {{'genesis.take' op axis 0 of the operand 'tensor<0x3xf32>' is empty, so no index of 'tensor<2xi64>' can be in range}}
  %0 = genesis.take %t, %i axis 0 : tensor<0x3xf32>, tensor<2xi64>
  return
}

// -----

func.func @argmax_empty_dim(%a: tensor<3x0xf32>) {
  // expected-error @+1 {{'genesis.argmax' op cannot reduce dimension 1 of 'tensor<3x0xf32>': it is empty, and max, min and argmax of no elements are undefined}}
  %0 = genesis.argmax %a dim 1 : tensor<3x0xf32>
  return
}

// -----

func.func @reduce_max_empty_dim(%a: tensor<0x4xf32>) {
  // expected-error @+1 {{'genesis.reduce_max' op cannot reduce dimension 0 of 'tensor<0x4xf32>': it is empty}}
  %0 = genesis.reduce_max %a dims [0] : tensor<0x4xf32>
  return
}

// -----

func.func @softmax_dim(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'genesis.softmax' op dim 3 is out of range for rank 2}}
  %0 = genesis.softmax %a dim 3 : tensor<2x3xf32>
  return
}

// -----

func.func @softmax_dim_generic(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{'genesis.softmax' op dim 3 is out of range for rank 2}}
  // expected-error @+1 {{'genesis.softmax' op failed to infer returned types}}
  %0 = "genesis.softmax"(%a) <{dim = 3 : i64}> : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @log_softmax_dim(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'genesis.log_softmax' op dim -1 is out of range for rank 2}}
  %0 = genesis.log_softmax %a dim -1 : tensor<2x3xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// matmul (and the same shape rule in library_call)
//===----------------------------------------------------------------------===//

func.func @matmul_rank(%a: tensor<3xf32>, %b: tensor<3x4xf32>) {
  // expected-error @+1 {{'genesis.matmul' op operands must have equal rank >= 2, got 'tensor<3xf32>' and 'tensor<3x4xf32>'}}
  %0 = genesis.matmul %a, %b : tensor<3xf32>, tensor<3x4xf32>
  return
}

// -----

func.func @matmul_unequal_rank(%a: tensor<2x2x3xf32>, %b: tensor<3x4xf32>) {
  // expected-error @+1 {{'genesis.matmul' op operands must have equal rank >= 2, got 'tensor<2x2x3xf32>' and 'tensor<3x4xf32>'}}
  %0 = genesis.matmul %a, %b : tensor<2x2x3xf32>, tensor<3x4xf32>
  return
}

// -----

func.func @matmul_element_type(%a: tensor<2x3xf32>, %b: tensor<3x4xbf16>) {
  // expected-error @+1 {{'genesis.matmul' op operands must have the same element type, got 'tensor<2x3xf32>' and 'tensor<3x4xbf16>'}}
  %0 = genesis.matmul %a, %b : tensor<2x3xf32>, tensor<3x4xbf16>
  return
}

// -----

func.func @matmul_batch(%a: tensor<2x2x3xf32>, %b: tensor<1x3x4xf32>) {
  // expected-error @+1 {{'genesis.matmul' op batch dimensions must match (broadcast explicitly), got 'tensor<2x2x3xf32>' and 'tensor<1x3x4xf32>'}}
  %0 = genesis.matmul %a, %b : tensor<2x2x3xf32>, tensor<1x3x4xf32>
  return
}

// -----

func.func @matmul_contraction(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) {
  // expected-error @+1 {{'genesis.matmul' op contraction dimensions differ: lhs 'tensor<2x3xf32>' has K = 3, rhs 'tensor<4x5xf32>' has K = 4}}
  %0 = genesis.matmul %a, %b : tensor<2x3xf32>, tensor<4x5xf32>
  return
}

// -----

func.func @matmul_contraction_transposed(%a: tensor<2x3xf32>, %b: tensor<4x3xf32>) {
  // expected-error @+1 {{'genesis.matmul' op contraction dimensions differ: lhs 'tensor<2x3xf32>' (transposed) has K = 2, rhs 'tensor<4x3xf32>' (transposed) has K = 3}}
  %0 = genesis.matmul %a, %b transpose_lhs transpose_rhs : tensor<2x3xf32>, tensor<4x3xf32>
  return
}

// -----

func.func @library_call_contraction(%a: tensor<2x3xf32>, %b: tensor<2x4xf32>) {
  // expected-error @+2 {{'genesis.library_call' op contraction dimensions differ: lhs 'tensor<2x3xf32>' has K = 3, rhs 'tensor<2x4xf32>' (transposed) has K = 4}}
  // expected-error @+1 {{'genesis.library_call' op failed to infer returned types}}
  %0 = genesis.library_call relu %a, %b transpose_rhs : (tensor<2x3xf32>, tensor<2x4xf32>) -> tensor<2x2xf32>
  return
}

// -----

func.func @dgelu_without_aux(%a: tensor<2x8xf32>, %b: tensor<8x8xf32>) {
  // expected-error @+2 {{'genesis.library_call' op epilogue 'dgelu' needs aux operand}}
  // expected-error @+1 {{'genesis.library_call' op failed to infer returned types}}
  %0 = genesis.library_call dgelu %a, %b : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  return
}

// -----

func.func @aux_without_dgelu(%a: tensor<2x8xf32>, %b: tensor<8x8xf32>) {
  // expected-error @+2 {{'genesis.library_call' op epilogue 'gelu' takes no aux operand}}
  // expected-error @+1 {{'genesis.library_call' op failed to infer returned types}}
  %0 = genesis.library_call gelu %a, %b aux %a : (tensor<2x8xf32>, tensor<8x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  return
}

// -----

func.func @dgelu_aux_type(%a: tensor<2x8xf32>, %b: tensor<8x8xf32>, %x: tensor<16xf32>) {
  // expected-error @+2 {{'genesis.library_call' op aux operand of type 'tensor<16xf32>' differs from the result type 'tensor<2x8xf32>'}}
  // expected-error @+1 {{'genesis.library_call' op failed to infer returned types}}
  %0 = genesis.library_call dgelu %a, %b aux %x : (tensor<2x8xf32>, tensor<8x8xf32>, tensor<16xf32>) -> tensor<2x8xf32>
  return
}

// -----

func.func @dgelu_batched(%a: tensor<2x2x8xf32>, %b: tensor<2x8x8xf32>) {
  // expected-error @+2 {{'genesis.library_call' op epilogue 'dgelu' takes rank-2 operands (one GEMM)}}
  // expected-error @+1 {{'genesis.library_call' op failed to infer returned types}}
  %0 = genesis.library_call dgelu %a, %b aux %a : (tensor<2x2x8xf32>, tensor<2x8x8xf32>, tensor<2x2x8xf32>) -> tensor<2x2x8xf32>
  return
}

// -----

func.func @library_call_rank(%a: tensor<3xf32>, %b: tensor<3xf32>) {
  // expected-error @+2 {{'genesis.library_call' op operands must have equal rank >= 2, got 'tensor<3xf32>' and 'tensor<3xf32>'}}
  // expected-error @+1 {{'genesis.library_call' op failed to infer returned types}}
  %0 = genesis.library_call none %a, %b : (tensor<3xf32>, tensor<3xf32>) -> tensor<f32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// library_call bias
//===----------------------------------------------------------------------===//

func.func @library_call_needs_bias(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) {
  // expected-error @+2 {{'genesis.library_call' op epilogue 'bias_relu' needs bias operand}}
  // expected-error @+1 {{'genesis.library_call' op failed to infer returned types}}
  %0 = genesis.library_call bias_relu %a, %b : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @library_call_takes_no_bias(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>, %bias: tensor<4xf32>) {
  // expected-error @+2 {{'genesis.library_call' op epilogue 'gelu' takes no bias operand}}
  // expected-error @+1 {{'genesis.library_call' op failed to infer returned types}}
  %0 = genesis.library_call gelu %a, %b bias %bias : (tensor<2x3xf32>, tensor<3x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @library_call_bias_type(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>, %bias: tensor<2xf32>) {
  // expected-error @+2 {{'genesis.library_call' op bias must have type 'tensor<4xf32>', got 'tensor<2xf32>'}}
  // expected-error @+1 {{'genesis.library_call' op failed to infer returned types}}
  %0 = genesis.library_call bias %a, %b bias %bias : (tensor<2x3xf32>, tensor<3x4xf32>, tensor<2xf32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @library_call_bias_element_type(%a: tensor<2x3xbf16>, %b: tensor<3x4xbf16>, %bias: tensor<4xf32>) {
  // expected-error @+2 {{'genesis.library_call' op bias must have type 'tensor<4xbf16>', got 'tensor<4xf32>'}}
  // expected-error @+1 {{'genesis.library_call' op failed to infer returned types}}
  %0 = genesis.library_call bias_gelu %a, %b bias %bias : (tensor<2x3xbf16>, tensor<3x4xbf16>, tensor<4xf32>) -> tensor<2x4xbf16>
  return
}

// -----

//===----------------------------------------------------------------------===//
// layer_norm, rms_norm
//===----------------------------------------------------------------------===//

func.func @layer_norm_rank(%a: tensor<f32>) {
  // expected-error @+1 {{'genesis.layer_norm' op operand must have rank >= 1}}
  %0 = genesis.layer_norm %a eps 1.0e-05 : tensor<f32>
  return
}

// -----

func.func @layer_norm_weight_size(%a: tensor<4x16xf32>, %w: tensor<4xf32>) {
  // expected-error @+1 {{'genesis.layer_norm' op weight must have type 'tensor<16xf32>', got 'tensor<4xf32>'}}
  %0 = genesis.layer_norm %a weight %w : tensor<4xf32> eps 1.0e-05 : tensor<4x16xf32>
  return
}

// -----

func.func @layer_norm_weight_type(%a: tensor<4x16xf32>, %w: tensor<16xf16>) {
  // expected-error @+1 {{'genesis.layer_norm' op weight must have type 'tensor<16xf32>', got 'tensor<16xf16>'}}
  %0 = genesis.layer_norm %a weight %w : tensor<16xf16> eps 1.0e-05 : tensor<4x16xf32>
  return
}

// -----

func.func @layer_norm_weight_rank(%a: tensor<4x16xf32>, %w: tensor<1x16xf32>) {
  // expected-error @+1 {{'genesis.layer_norm' op weight must have type 'tensor<16xf32>', got 'tensor<1x16xf32>'}}
  %0 = genesis.layer_norm %a weight %w : tensor<1x16xf32> eps 1.0e-05 : tensor<4x16xf32>
  return
}

// -----

func.func @layer_norm_bias(%a: tensor<4x16xf32>, %w: tensor<16xf32>, %b: tensor<4x16xf32>) {
  // expected-error @+1 {{'genesis.layer_norm' op bias must have type 'tensor<16xf32>', got 'tensor<4x16xf32>'}}
  %0 = genesis.layer_norm %a weight %w : tensor<16xf32> bias %b : tensor<4x16xf32> eps 1.0e-05 : tensor<4x16xf32>
  return
}

// -----

func.func @layer_norm_bias_only(%a: tensor<4x16xbf16>, %b: tensor<16xf32>) {
  // expected-error @+1 {{'genesis.layer_norm' op bias must have type 'tensor<16xbf16>', got 'tensor<16xf32>'}}
  %0 = genesis.layer_norm %a bias %b : tensor<16xf32> eps 1.0e-05 : tensor<4x16xbf16>
  return
}

// -----

func.func @rms_norm_rank(%a: tensor<f32>, %w: tensor<1xf32>) {
  // expected-error @+1 {{'genesis.rms_norm' op operand must have rank >= 1}}
  %0 = genesis.rms_norm %a, %w eps 1.0e-05 : tensor<f32>, tensor<1xf32>
  return
}

// -----

func.func @rms_norm_weight_type(%a: tensor<4x16xf32>, %w: tensor<16xbf16>) {
  // expected-error @+1 {{'genesis.rms_norm' op weight must have type 'tensor<16xf32>', got 'tensor<16xbf16>'}}
  %0 = genesis.rms_norm %a, %w eps 1.0e-05 : tensor<4x16xf32>, tensor<16xbf16>
  return
}

// -----

func.func @rms_norm_weight_rank(%a: tensor<4x16xf32>, %w: tensor<4x16xf32>) {
  // expected-error @+1 {{'genesis.rms_norm' op weight must have type 'tensor<16xf32>', got 'tensor<4x16xf32>'}}
  %0 = genesis.rms_norm %a, %w eps 1.0e-05 : tensor<4x16xf32>, tensor<4x16xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// rope
//===----------------------------------------------------------------------===//

func.func @rope_odd_head_dim(%x: tensor<2x8x5xf32>, %t: tensor<8x5xf32>) {
  // expected-error @+2 {{'genesis.rope' op operand must be [..., S, D] with D even, got 'tensor<2x8x5xf32>'}}
  // expected-error @+1 {{'genesis.rope' op failed to infer returned types}}
  %0 = genesis.rope %x, %t, %t : (tensor<2x8x5xf32>, tensor<8x5xf32>, tensor<8x5xf32>) -> tensor<2x8x5xf32>
  return
}

// -----

func.func @rope_rank(%x: tensor<8xf32>, %t: tensor<8xf32>) {
  // expected-error @+2 {{'genesis.rope' op operand must be [..., S, D] with D even, got 'tensor<8xf32>'}}
  // expected-error @+1 {{'genesis.rope' op failed to infer returned types}}
  %0 = genesis.rope %x, %t, %t : (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return
}

// -----

func.func @rope_tables(%x: tensor<2x8x4xf32>, %c: tensor<8x4xf32>, %s: tensor<4x4xf32>) {
  // expected-error @+2 {{'genesis.rope' op cos and sin must both have type 'tensor<8x4xf32>', got 'tensor<8x4xf32>' and 'tensor<4x4xf32>'}}
  // expected-error @+1 {{'genesis.rope' op failed to infer returned types}}
  %0 = genesis.rope %x, %c, %s : (tensor<2x8x4xf32>, tensor<8x4xf32>, tensor<4x4xf32>) -> tensor<2x8x4xf32>
  return
}

// -----

func.func @rope_table_element_type(%x: tensor<2x8x4xbf16>, %t: tensor<8x4xf32>) {
  // expected-error @+2 {{'genesis.rope' op cos and sin must both have type 'tensor<8x4xbf16>', got 'tensor<8x4xf32>' and 'tensor<8x4xf32>'}}
  // expected-error @+1 {{'genesis.rope' op failed to infer returned types}}
  %0 = genesis.rope %x, %t, %t : (tensor<2x8x4xbf16>, tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<2x8x4xbf16>
  return
}

// -----

//===----------------------------------------------------------------------===//
// attention
//===----------------------------------------------------------------------===//

func.func @decode_attention_cache_types(%q: tensor<1x4x1x16xf32>, %k: tensor<1x2x9x16xbf16>, %v: tensor<1x2x9x16xf16>) {
  // expected-error @+2 {{'genesis.decode_attention' op key and value must share an element type, the query's or bf16 or f16; got 'tensor<1x2x9x16xbf16>' and 'tensor<1x2x9x16xf16>'}}
  // expected-error @+1 {{'genesis.decode_attention' op failed to infer returned types}}
  %0 = genesis.decode_attention %q, %k, %v scale 1.0 : (tensor<1x4x1x16xf32>, tensor<1x2x9x16xbf16>, tensor<1x2x9x16xf16>) -> tensor<1x4x1x16xf32>
  return
}

// -----

func.func @decode_attention_f64_cache(%q: tensor<1x4x1x16xf32>, %k: tensor<1x2x9x16xf64>) {
  // expected-error @+2 {{'genesis.decode_attention' op key and value must share an element type, the query's or bf16 or f16; got 'tensor<1x2x9x16xf64>' and 'tensor<1x2x9x16xf64>'}}
  // expected-error @+1 {{'genesis.decode_attention' op failed to infer returned types}}
  %0 = genesis.decode_attention %q, %k, %k scale 1.0 : (tensor<1x4x1x16xf32>, tensor<1x2x9x16xf64>, tensor<1x2x9x16xf64>) -> tensor<1x4x1x16xf32>
  return
}

// -----

func.func @decode_attention_bf16_query(%q: tensor<1x4x1x16xbf16>) {
  // expected-error @+1 {{'genesis.decode_attention' op operand #0 must be statically shaped tensor of 32-bit float values}}
  %0 = genesis.decode_attention %q, %q, %q scale 1.0 : (tensor<1x4x1x16xbf16>, tensor<1x4x1x16xbf16>, tensor<1x4x1x16xbf16>) -> tensor<1x4x1x16xbf16>
  return
}

// -----

func.func @fused_attention_value_depth(%q: tensor<1x4x8x64xbf16>, %v: tensor<1x4x8x32xbf16>) {
  // expected-error @+2 {{'genesis.fused_attention' op query and value head dimensions differ: 64 vs 32}}
  // expected-error @+1 {{'genesis.fused_attention' op failed to infer returned types}}
  %0:2 = genesis.fused_attention %q, %q, %v scale 1.0 : (tensor<1x4x8x64xbf16>, tensor<1x4x8x64xbf16>, tensor<1x4x8x32xbf16>) -> (tensor<1x4x8x32xbf16>, tensor<1x4x8xf32>)
  return
}

// -----

func.func @fused_attention_f32(%q: tensor<1x4x8x64xf32>) {
  // expected-error @+1 {{'genesis.fused_attention' op operand #0 must be statically shaped tensor of 16-bit float or bfloat16 type values}}
  %0:2 = genesis.fused_attention %q, %q, %q scale 1.0 : (tensor<1x4x8x64xf32>, tensor<1x4x8x64xf32>, tensor<1x4x8x64xf32>) -> (tensor<1x4x8x64xf32>, tensor<1x4x8xf32>)
  return
}

// -----

func.func @fused_attention_grad_logsumexp(%q: tensor<1x4x8x64xbf16>, %l: tensor<1x4x8x1xf32>) {
  // expected-error @+2 {{'genesis.fused_attention_grad' op logsumexp must have type 'tensor<1x4x8xf32>', got 'tensor<1x4x8x1xf32>'}}
  // expected-error @+1 {{'genesis.fused_attention_grad' op failed to infer returned types}}
  %0:3 = genesis.fused_attention_grad %q, %q, %q, %q, %q, %l scale 1.0 : (tensor<1x4x8x64xbf16>, tensor<1x4x8x64xbf16>, tensor<1x4x8x64xbf16>, tensor<1x4x8x64xbf16>, tensor<1x4x8x64xbf16>, tensor<1x4x8x1xf32>) -> (tensor<1x4x8x64xbf16>, tensor<1x4x8x64xbf16>, tensor<1x4x8x64xbf16>)
  return
}

// -----

func.func @cross_entropy_with_grad_cotangents(%x: tensor<4x1024xbf16>, %y: tensor<4xi64>, %w: tensor<4xbf16>) {
  // expected-error @+2 {{'genesis.cross_entropy_with_grad' op loss_grad must have the loss type 'tensor<4xf32>', got 'tensor<4xbf16>'}}
  // expected-error @+1 {{'genesis.cross_entropy_with_grad' op failed to infer returned types}}
  %0:2 = genesis.cross_entropy_with_grad %x, %y, %w : (tensor<4x1024xbf16>, tensor<4xi64>, tensor<4xbf16>) -> (tensor<4xf32>, tensor<4x1024xbf16>)
  return
}

// -----

func.func @packed_attention_width(%p: tensor<1x8x100xbf16>) {
  // expected-error @+2 {{'genesis.packed_attention' op qkv's last dimension (100) must be a positive multiple of heads + 2 kv_heads (4 + 2 x 2)}}
  // expected-error @+1 {{'genesis.packed_attention' op failed to infer returned types}}
  %0:2 = genesis.packed_attention %p heads 4 kv_heads 2 scale 1.0 : (tensor<1x8x100xbf16>) -> (tensor<1x8x48xbf16>, tensor<1x4x8xf32>)
  return
}

// -----

func.func @packed_attention_heads(%p: tensor<1x8x96xbf16>) {
  // expected-error @+2 {{'genesis.packed_attention' op heads (3) must be a positive multiple of kv_heads (2)}}
  // expected-error @+1 {{'genesis.packed_attention' op failed to infer returned types}}
  %0:2 = genesis.packed_attention %p heads 3 kv_heads 2 scale 1.0 : (tensor<1x8x96xbf16>) -> (tensor<1x8x32xbf16>, tensor<1x3x8xf32>)
  return
}

// -----

func.func @packed_attention_rank(%p: tensor<8x96xbf16>) {
  // expected-error @+2 {{'genesis.packed_attention' op qkv must have rank 3 ([B, S, (Hq + 2 Hkv) D]), got 'tensor<8x96xbf16>'}}
  // expected-error @+1 {{'genesis.packed_attention' op failed to infer returned types}}
  %0:2 = genesis.packed_attention %p heads 1 kv_heads 1 scale 1.0 : (tensor<8x96xbf16>) -> (tensor<8x32xbf16>, tensor<1x8xf32>)
  return
}

// -----

func.func @packed_attention_grad_out(%p: tensor<1x8x96xbf16>, %o: tensor<1x8x64xbf16>, %l: tensor<1x1x8xf32>) {
  // expected-error @+2 {{'genesis.packed_attention_grad' op out and out_grad must have the attention result type 'tensor<1x8x32xbf16>', got 'tensor<1x8x64xbf16>' and 'tensor<1x8x64xbf16>'}}
  // expected-error @+1 {{'genesis.packed_attention_grad' op failed to infer returned types}}
  %0 = genesis.packed_attention_grad %p, %o, %o, %l heads 1 kv_heads 1 scale 1.0 : (tensor<1x8x96xbf16>, tensor<1x8x64xbf16>, tensor<1x8x64xbf16>, tensor<1x1x8xf32>) -> tensor<1x8x96xbf16>
  return
}

// -----

func.func @attention_rank(%q: tensor<4x8x64xf32>, %k: tensor<1x4x8x64xf32>) {
  // expected-error @+2 {{'genesis.attention' op query, key and value must have rank 4 ([B, H, S, D]), got 'tensor<4x8x64xf32>', 'tensor<1x4x8x64xf32>' and 'tensor<1x4x8x64xf32>'}}
  // expected-error @+1 {{'genesis.attention' op failed to infer returned types}}
  %0 = genesis.attention %q, %k, %k scale 1.0 : (tensor<4x8x64xf32>, tensor<1x4x8x64xf32>, tensor<1x4x8x64xf32>) -> tensor<4x8x64xf32>
  return
}

// -----

func.func @attention_element_type(%q: tensor<1x4x8x64xf32>, %k: tensor<1x4x8x64xf16>) {
  // expected-error @+2 {{'genesis.attention' op query, key and value must share an element type}}
  // expected-error @+1 {{'genesis.attention' op failed to infer returned types}}
  %0 = genesis.attention %q, %k, %k scale 1.0 : (tensor<1x4x8x64xf32>, tensor<1x4x8x64xf16>, tensor<1x4x8x64xf16>) -> tensor<1x4x8x64xf32>
  return
}

// -----

func.func @attention_key_value_length(%q: tensor<1x4x8x64xf32>, %k: tensor<1x4x8x64xf32>, %v: tensor<1x4x6x64xf32>) {
  // expected-error @+2 {{'genesis.attention' op key 'tensor<1x4x8x64xf32>' and value 'tensor<1x4x6x64xf32>' must agree on batch, heads and length with each other and on batch with query 'tensor<1x4x8x64xf32>'}}
  // expected-error @+1 {{'genesis.attention' op failed to infer returned types}}
  %0 = genesis.attention %q, %k, %v scale 1.0 : (tensor<1x4x8x64xf32>, tensor<1x4x8x64xf32>, tensor<1x4x6x64xf32>) -> tensor<1x4x8x64xf32>
  return
}

// -----

func.func @attention_batch(%q: tensor<2x4x8x64xf32>, %k: tensor<1x4x8x64xf32>) {
  // expected-error @+2 {{'genesis.attention' op key 'tensor<1x4x8x64xf32>' and value 'tensor<1x4x8x64xf32>' must agree on batch, heads and length with each other and on batch with query 'tensor<2x4x8x64xf32>'}}
  // expected-error @+1 {{'genesis.attention' op failed to infer returned types}}
  %0 = genesis.attention %q, %k, %k scale 1.0 : (tensor<2x4x8x64xf32>, tensor<1x4x8x64xf32>, tensor<1x4x8x64xf32>) -> tensor<2x4x8x64xf32>
  return
}

// -----

func.func @attention_heads(%q: tensor<1x4x8x64xf32>, %k: tensor<1x3x8x64xf32>) {
  // expected-error @+2 {{'genesis.attention' op query heads (4) must be a multiple of key/value heads (3)}}
  // expected-error @+1 {{'genesis.attention' op failed to infer returned types}}
  %0 = genesis.attention %q, %k, %k scale 1.0 : (tensor<1x4x8x64xf32>, tensor<1x3x8x64xf32>, tensor<1x3x8x64xf32>) -> tensor<1x4x8x64xf32>
  return
}

// -----

func.func @attention_zero_kv_heads(%q: tensor<1x0x8x64xf32>, %k: tensor<1x0x8x64xf32>) {
  // expected-error @+2 {{'genesis.attention' op query heads (0) must be a multiple of key/value heads (0)}}
  // expected-error @+1 {{'genesis.attention' op failed to infer returned types}}
  %0 = genesis.attention %q, %k, %k scale 1.0 : (tensor<1x0x8x64xf32>, tensor<1x0x8x64xf32>, tensor<1x0x8x64xf32>) -> tensor<1x0x8x64xf32>
  return
}

// -----

func.func @attention_head_dim(%q: tensor<1x4x8x64xf32>, %k: tensor<1x2x8x32xf32>) {
  // expected-error @+2 {{'genesis.attention' op query and key head dimensions differ: 64 vs 32}}
  // expected-error @+1 {{'genesis.attention' op failed to infer returned types}}
  %0 = genesis.attention %q, %k, %k scale 1.0 : (tensor<1x4x8x64xf32>, tensor<1x2x8x32xf32>, tensor<1x2x8x32xf32>) -> tensor<1x4x8x32xf32>
  return
}

// -----

func.func @attention_mask(%q: tensor<1x4x8x64xf32>, %k: tensor<1x2x6x64xf32>, %m: tensor<1x4x8x8xf32>) {
  // expected-error @+2 {{'genesis.attention' op mask must have type 'tensor<1x4x8x6xf32>', got 'tensor<1x4x8x8xf32>'}}
  // expected-error @+1 {{'genesis.attention' op failed to infer returned types}}
  %0 = genesis.attention %q, %k, %k mask %m causal scale 1.0 : (tensor<1x4x8x64xf32>, tensor<1x2x6x64xf32>, tensor<1x2x6x64xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x64xf32>
  return
}

// -----

func.func @attention_mask_element_type(%q: tensor<1x4x8x64xbf16>, %k: tensor<1x4x8x64xbf16>, %m: tensor<1x4x8x8xf32>) {
  // expected-error @+2 {{'genesis.attention' op mask must have type 'tensor<1x4x8x8xbf16>', got 'tensor<1x4x8x8xf32>'}}
  // expected-error @+1 {{'genesis.attention' op failed to infer returned types}}
  %0 = genesis.attention %q, %k, %k mask %m scale 1.0 : (tensor<1x4x8x64xbf16>, tensor<1x4x8x64xbf16>, tensor<1x4x8x64xbf16>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x64xbf16>
  return
}

// -----

//===----------------------------------------------------------------------===//
// attention_grad (shares attention's shape rule)
//===----------------------------------------------------------------------===//

func.func @attention_grad_heads(%q: tensor<1x4x8x16xf32>, %k: tensor<1x3x8x16xf32>, %o: tensor<1x4x8x16xf32>) {
  // expected-error @+2 {{'genesis.attention_grad' op query heads (4) must be a multiple of key/value heads (3)}}
  // expected-error @+1 {{'genesis.attention_grad' op failed to infer returned types}}
  %0:3 = genesis.attention_grad %q, %k, %k, %o, %o scale 1.0 : (tensor<1x4x8x16xf32>, tensor<1x3x8x16xf32>, tensor<1x3x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>) -> (tensor<1x4x8x16xf32>, tensor<1x3x8x16xf32>, tensor<1x3x8x16xf32>)
  return
}

// -----

func.func @attention_grad_out(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x8xf32>, %o: tensor<1x4x8x8xf32>, %g: tensor<1x4x8x16xf32>) {
  // expected-error @+2 {{'genesis.attention_grad' op out and out_grad must have the attention result type 'tensor<1x4x8x8xf32>', got 'tensor<1x4x8x8xf32>' and 'tensor<1x4x8x16xf32>'}}
  // expected-error @+1 {{'genesis.attention_grad' op failed to infer returned types}}
  %0:3 = genesis.attention_grad %q, %k, %v, %o, %g causal scale 1.0 : (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x8xf32>, tensor<1x4x8x8xf32>, tensor<1x4x8x16xf32>) -> (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x8xf32>)
  return
}

// -----

//===----------------------------------------------------------------------===//
// cross_entropy
//===----------------------------------------------------------------------===//

func.func @cross_entropy_shapes(%l: tensor<4x3xf32>, %y: tensor<5xi64>) {
  // expected-error @+2 {{'genesis.cross_entropy' op logits must be [N, C] and labels [N], got 'tensor<4x3xf32>' and 'tensor<5xi64>'}}
  // expected-error @+1 {{'genesis.cross_entropy' op failed to infer returned types}}
  %0 = genesis.cross_entropy %l, %y : (tensor<4x3xf32>, tensor<5xi64>) -> tensor<f32>
  return
}

// -----

func.func @cross_entropy_logits_rank(%l: tensor<2x4x3xf32>, %y: tensor<2x4xi64>) {
  // expected-error @+2 {{'genesis.cross_entropy' op logits must be [N, C] and labels [N], got 'tensor<2x4x3xf32>' and 'tensor<2x4xi64>'}}
  // expected-error @+1 {{'genesis.cross_entropy' op failed to infer returned types}}
  %0 = genesis.cross_entropy %l, %y : (tensor<2x4x3xf32>, tensor<2x4xi64>) -> tensor<f32>
  return
}

// -----

func.func @cross_entropy_label_smoothing(%l: tensor<4x3xf32>, %y: tensor<4xi64>) {
  // expected-error @+2 {{'genesis.cross_entropy' op label_smoothing must be in [0, 1], got 1.500000e+00}}
  // expected-error @+1 {{'genesis.cross_entropy' op failed to infer returned types}}
  %0 = genesis.cross_entropy %l, %y {label_smoothing = 1.5 : f64} : (tensor<4x3xf32>, tensor<4xi64>) -> tensor<f32>
  return
}

// -----

func.func @cross_entropy_negative_label_smoothing(%l: tensor<4x3xf32>, %y: tensor<4xi64>) {
  // expected-error @+2 {{'genesis.cross_entropy' op label_smoothing must be in [0, 1], got -1.000000e-01}}
  // expected-error @+1 {{'genesis.cross_entropy' op failed to infer returned types}}
  %0 = genesis.cross_entropy %l, %y {label_smoothing = -0.1 : f64} : (tensor<4x3xf32>, tensor<4xi64>) -> tensor<f32>
  return
}

// -----

// reduction = none gives one loss per row, not a scalar.
func.func @cross_entropy_reduction_none_type(%l: tensor<4x3xf32>, %y: tensor<4xi64>) {
  // expected-error @+2 {{'genesis.cross_entropy' op inferred type(s) 'tensor<4xf32>' are incompatible with return type(s) of operation 'tensor<f32>'}}
  // expected-error @+1 {{'genesis.cross_entropy' op failed to infer returned types}}
  %0 = genesis.cross_entropy %l, %y {reduction = 0 : i32} : (tensor<4x3xf32>, tensor<4xi64>) -> tensor<f32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// cross_entropy_grad (shares cross_entropy's shape rule)
//===----------------------------------------------------------------------===//

func.func @cross_entropy_grad_shapes(%l: tensor<4x3xf32>, %y: tensor<3xi64>, %g: tensor<f32>) {
  // expected-error @+2 {{'genesis.cross_entropy_grad' op logits must be [N, C] and labels [N], got 'tensor<4x3xf32>' and 'tensor<3xi64>'}}
  // expected-error @+1 {{'genesis.cross_entropy_grad' op failed to infer returned types}}
  %0 = genesis.cross_entropy_grad %l, %y, %g : (tensor<4x3xf32>, tensor<3xi64>, tensor<f32>) -> tensor<4x3xf32>
  return
}

// -----

func.func @cross_entropy_grad_label_smoothing(%l: tensor<4x3xf32>, %y: tensor<4xi64>, %g: tensor<f32>) {
  // expected-error @+2 {{'genesis.cross_entropy_grad' op label_smoothing must be in [0, 1], got 2.000000e+00}}
  // expected-error @+1 {{'genesis.cross_entropy_grad' op failed to infer returned types}}
  %0 = genesis.cross_entropy_grad %l, %y, %g {label_smoothing = 2.0 : f64} : (tensor<4x3xf32>, tensor<4xi64>, tensor<f32>) -> tensor<4x3xf32>
  return
}

// -----

// With reduction = none the cotangent of the loss has one entry per row.
func.func @cross_entropy_grad_loss_grad(%l: tensor<4x3xf32>, %y: tensor<4xi64>, %g: tensor<f32>) {
  // expected-error @+2 {{'genesis.cross_entropy_grad' op loss_grad must have the loss type 'tensor<4xf32>', got 'tensor<f32>'}}
  // expected-error @+1 {{'genesis.cross_entropy_grad' op failed to infer returned types}}
  %0 = genesis.cross_entropy_grad %l, %y, %g {reduction = 0 : i32} : (tensor<4x3xf32>, tensor<4xi64>, tensor<f32>) -> tensor<4x3xf32>
  return
}

// -----

func.func @cross_entropy_grad_loss_grad_element_type(%l: tensor<4x3xbf16>, %y: tensor<4xi64>, %g: tensor<bf16>) {
  // expected-error @+2 {{'genesis.cross_entropy_grad' op loss_grad must have the loss type 'tensor<f32>', got 'tensor<bf16>'}}
  // expected-error @+1 {{'genesis.cross_entropy_grad' op failed to infer returned types}}
  %0 = genesis.cross_entropy_grad %l, %y, %g : (tensor<4x3xbf16>, tensor<4xi64>, tensor<bf16>) -> tensor<4x3xbf16>
  return
}

// -----

//===----------------------------------------------------------------------===//
// dropout
//===----------------------------------------------------------------------===//

func.func @dropout_probability_one(%a: tensor<4xf32>, %s: tensor<i64>) {
  // expected-error @+2 {{'genesis.dropout' op probability must be in [0, 1), got 1.000000e+00}}
  // expected-error @+1 {{'genesis.dropout' op failed to infer returned types}}
  %0 = genesis.dropout %a, %s {offset = 0 : i64, probability = 1.0 : f64} : (tensor<4xf32>, tensor<i64>) -> tensor<4xf32>
  return
}

// -----

func.func @dropout_probability_negative(%a: tensor<4xf32>, %s: tensor<i64>) {
  // expected-error @+2 {{'genesis.dropout' op probability must be in [0, 1), got -5.000000e-01}}
  // expected-error @+1 {{'genesis.dropout' op failed to infer returned types}}
  %0 = genesis.dropout %a, %s {offset = 0 : i64, probability = -0.5 : f64} : (tensor<4xf32>, tensor<i64>) -> tensor<4xf32>
  return
}

// -----

func.func @dropout_offset(%a: tensor<4xf32>, %s: tensor<i64>) {
  // expected-error @+2 {{'genesis.dropout' op offset must be >= 0, got -4}}
  // expected-error @+1 {{'genesis.dropout' op failed to infer returned types}}
  %0 = genesis.dropout %a, %s {offset = -4 : i64, probability = 0.5 : f64} : (tensor<4xf32>, tensor<i64>) -> tensor<4xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Optimizer ops
//===----------------------------------------------------------------------===//

func.func @sgd_grad_type(%p: tensor<4xf32>, %g: tensor<4xbf16>, %lr: tensor<f32>) {
  // expected-error @+2 {{'genesis.sgd_update' op param and grad must have the same type, got 'tensor<4xf32>' and 'tensor<4xbf16>'}}
  // expected-error @+1 {{'genesis.sgd_update' op failed to infer returned types}}
  %0 = genesis.sgd_update %p, %g, %lr : (tensor<4xf32>, tensor<4xbf16>, tensor<f32>) -> tensor<4xf32>
  return
}

// -----

func.func @sgd_momentum_grad_type(%p: tensor<4xf32>, %g: tensor<2x2xf32>, %lr: tensor<f32>, %t: tensor<i64>) {
  // expected-error @+2 {{'genesis.sgd_momentum_update' op param and grad must have the same type, got 'tensor<4xf32>' and 'tensor<2x2xf32>'}}
  // expected-error @+1 {{'genesis.sgd_momentum_update' op failed to infer returned types}}
  %0:2 = genesis.sgd_momentum_update %p, %g, %p, %lr, %t {momentum = 0.9 : f64} : (tensor<4xf32>, tensor<2x2xf32>, tensor<4xf32>, tensor<f32>, tensor<i64>) -> (tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

func.func @sgd_momentum_buffer_type(%p: tensor<4xf32>, %b: tensor<4xf16>, %lr: tensor<f32>, %t: tensor<i64>) {
  // expected-error @+2 {{'genesis.sgd_momentum_update' op param and momentum_buffer must have the same type, got 'tensor<4xf32>' and 'tensor<4xf16>'}}
  // expected-error @+1 {{'genesis.sgd_momentum_update' op failed to infer returned types}}
  %0:2 = genesis.sgd_momentum_update %p, %p, %b, %lr, %t {momentum = 0.9 : f64} : (tensor<4xf32>, tensor<4xf32>, tensor<4xf16>, tensor<f32>, tensor<i64>) -> (tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

func.func @sgd_momentum_zero(%p: tensor<4xf32>, %lr: tensor<f32>, %t: tensor<i64>) {
  // expected-error @+2 {{'genesis.sgd_momentum_update' op momentum must be > 0 (use genesis.sgd_update without momentum)}}
  // expected-error @+1 {{'genesis.sgd_momentum_update' op failed to infer returned types}}
  %0:2 = genesis.sgd_momentum_update %p, %p, %p, %lr, %t {momentum = 0.0 : f64} : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<f32>, tensor<i64>) -> (tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

func.func @sgd_momentum_nesterov_dampening(%p: tensor<4xf32>, %lr: tensor<f32>, %t: tensor<i64>) {
  // expected-error @+2 {{'genesis.sgd_momentum_update' op nesterov momentum requires zero dampening}}
  // expected-error @+1 {{'genesis.sgd_momentum_update' op failed to infer returned types}}
  %0:2 = genesis.sgd_momentum_update %p, %p, %p, %lr, %t {dampening = 0.1 : f64, momentum = 0.9 : f64, nesterov} : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<f32>, tensor<i64>) -> (tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

func.func @sgd_momentum_missing(%p: tensor<4xf32>, %lr: tensor<f32>, %t: tensor<i64>) {
  // expected-error @+1 {{'genesis.sgd_momentum_update' op requires attribute 'momentum'}}
  %0:2 = genesis.sgd_momentum_update %p, %p, %p, %lr, %t : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<f32>, tensor<i64>) -> (tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

func.func @adam_grad_type(%p: tensor<4xf32>, %g: tensor<4xf64>, %lr: tensor<f32>, %t: tensor<i64>) {
  // expected-error @+2 {{'genesis.adam_update' op param and grad must have the same type, got 'tensor<4xf32>' and 'tensor<4xf64>'}}
  // expected-error @+1 {{'genesis.adam_update' op failed to infer returned types}}
  %0:3 = genesis.adam_update %p, %g, %p, %p, %lr, %t : (tensor<4xf32>, tensor<4xf64>, tensor<4xf32>, tensor<4xf32>, tensor<f32>, tensor<i64>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

func.func @adam_exp_avg_type(%p: tensor<4xf32>, %m: tensor<8xf32>, %lr: tensor<f32>, %t: tensor<i64>) {
  // expected-error @+2 {{'genesis.adam_update' op param and exp_avg must have the same type, got 'tensor<4xf32>' and 'tensor<8xf32>'}}
  // expected-error @+1 {{'genesis.adam_update' op failed to infer returned types}}
  %0:3 = genesis.adam_update %p, %p, %m, %p, %lr, %t : (tensor<4xf32>, tensor<4xf32>, tensor<8xf32>, tensor<4xf32>, tensor<f32>, tensor<i64>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

func.func @adamw_exp_avg_sq_type(%p: tensor<4xf32>, %v: tensor<4xbf16>, %lr: tensor<f32>, %t: tensor<i64>) {
  // expected-error @+2 {{'genesis.adamw_update' op param and exp_avg_sq must have the same type, got 'tensor<4xf32>' and 'tensor<4xbf16>'}}
  // expected-error @+1 {{'genesis.adamw_update' op failed to infer returned types}}
  %0:3 = genesis.adamw_update %p, %p, %p, %v, %lr, %t : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xbf16>, tensor<f32>, tensor<i64>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

func.func @adam_beta1(%p: tensor<4xf32>, %lr: tensor<f32>, %t: tensor<i64>) {
  // expected-error @+2 {{'genesis.adam_update' op beta1 must be in [0, 1), got 1.000000e+00}}
  // expected-error @+1 {{'genesis.adam_update' op failed to infer returned types}}
  %0:3 = genesis.adam_update %p, %p, %p, %p, %lr, %t {beta1 = 1.0 : f64} : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<f32>, tensor<i64>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

func.func @adamw_beta2(%p: tensor<4xf32>, %lr: tensor<f32>, %t: tensor<i64>) {
  // expected-error @+2 {{'genesis.adamw_update' op beta2 must be in [0, 1), got -1.000000e-03}}
  // expected-error @+1 {{'genesis.adamw_update' op failed to infer returned types}}
  %0:3 = genesis.adamw_update %p, %p, %p, %p, %lr, %t {beta2 = -0.001 : f64} : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<f32>, tensor<i64>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

func.func @adam_epsilon(%p: tensor<4xf32>, %lr: tensor<f32>, %t: tensor<i64>) {
  // expected-error @+2 {{'genesis.adam_update' op epsilon must be >= 0}}
  // expected-error @+1 {{'genesis.adam_update' op failed to infer returned types}}
  %0:3 = genesis.adam_update %p, %p, %p, %p, %lr, %t {epsilon = -1.0e-08 : f64} : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<f32>, tensor<i64>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

func.func @adamw_epsilon(%p: tensor<4xf32>, %lr: tensor<f32>, %t: tensor<i64>) {
  // expected-error @+2 {{'genesis.adamw_update' op epsilon must be >= 0}}
  // expected-error @+1 {{'genesis.adamw_update' op failed to infer returned types}}
  %0:3 = genesis.adamw_update %p, %p, %p, %p, %lr, %t {epsilon = -1.0 : f64} : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<f32>, tensor<i64>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

func.func @global_norm_no_input() {
  // expected-error @+2 {{'genesis.global_norm' op needs at least one input}}
  // expected-error @+1 {{'genesis.global_norm' op failed to infer returned types}}
  %0 = "genesis.global_norm"() : () -> tensor<f32>
  return
}

// -----

func.func @global_norm_of_integers(%a: tensor<4xi32>) {
  // expected-error @+1 {{'genesis.global_norm' op operand #0 must be variadic of statically shaped tensor of}}
  %0 = genesis.global_norm %a : tensor<4xi32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// all_reduce
//===----------------------------------------------------------------------===//

func.func @all_reduce_of_bool(%a: tensor<4xi1>) {
  // expected-error @+1 {{'genesis.all_reduce' op operand #0 must be statically shaped tensor of}}
  %0 = genesis.all_reduce sum, %a : tensor<4xi1>
  return
}

// -----

//===----------------------------------------------------------------------===//
// fusion
//===----------------------------------------------------------------------===//

func.func @fusion_arguments(%a: tensor<4xf32>) {
  // expected-error @+1 {{'genesis.fusion' op body arguments must match the input types}}
  %0 = genesis.fusion %a : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf16>):
    %1 = genesis.cast %x : tensor<4xf16> to tensor<4xf32>
    genesis.yield %1 : tensor<4xf32>
  }
  return
}

// -----

func.func @fusion_argument_count(%a: tensor<4xf32>) {
  // expected-error @+1 {{'genesis.fusion' op body arguments must match the input types}}
  %0 = genesis.fusion %a : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>, %y: tensor<4xf32>):
    genesis.yield %x : tensor<4xf32>
  }
  return
}

// -----

func.func @fusion_terminator(%a: tensor<4xf32>) {
  // expected-error @+1 {{'genesis.fusion' op body must end with genesis.yield}}
  %0 = genesis.fusion %a : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    llvm.unreachable
  }
  return
}

// -----

func.func @fusion_yield_types(%a: tensor<4xf32>) {
  // expected-error @+1 {{'genesis.fusion' op yielded types must match the result types}}
  %0 = genesis.fusion %a : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    %1 = genesis.compare gt, %x, %x : tensor<4xf32>
    genesis.yield %1 : tensor<4xi1>
  }
  return
}

// -----

func.func @fusion_yield_count(%a: tensor<4xf32>) {
  // expected-error @+1 {{'genesis.fusion' op yielded types must match the result types}}
  %0:2 = genesis.fusion %a : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  ^bb0(%x: tensor<4xf32>):
    genesis.yield %x : tensor<4xf32>
  }
  return
}

// -----

func.func @fusion_not_isolated(%a: tensor<4xf32>) {
  // expected-note @+1 {{required by region isolation constraints}}
  %0 = genesis.fusion : () -> tensor<4xf32> {
    // expected-error @+1 {{'genesis.exp' op using value defined outside the region}}
    %1 = genesis.exp %a : tensor<4xf32>
    genesis.yield %1 : tensor<4xf32>
  }
  return
}

// -----

func.func @pad_overflow(%x: tensor<2xf32>) {
  // expected-error @+1 {{'genesis.pad' op padded size of dimension 0 overflows int64}}
  %0 = genesis.pad %x low [9223372036854775807] high [1] interior [0] : tensor<2xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// genesis.name and genesis.role on function arguments and results
//===----------------------------------------------------------------------===//

// Two arguments with one name would be bound to one value by plans and
// evaluated as two by the evaluator: refused.
// expected-error @+1 {{'func.func' op arguments #0 and #1 have the same genesis.name 'x'; names bind values and must be unique}}
func.func @duplicate_argument_names(%a: tensor<2xf32> {genesis.name = "x"}, %b: tensor<2xf32> {genesis.name = "x"}) -> tensor<2xf32> {
  %0 = genesis.sub %a, %b : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// expected-error @+1 {{'func.func' op results #0 and #1 have the same genesis.name 'y'}}
func.func @duplicate_result_names(%a: tensor<2xf32>) -> (tensor<2xf32> {genesis.name = "y"}, tensor<2xf32> {genesis.name = "y"}) {
  return %a, %a : tensor<2xf32>, tensor<2xf32>
}

// -----

// expected-error @+1 {{'func.func' op argument #0: genesis.name must be a non-empty string}}
func.func @empty_name(%a: tensor<2xf32> {genesis.name = ""}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op argument #0: genesis.name must be a non-empty string}}
func.func @name_not_a_string(%a: tensor<2xf32> {genesis.name = 3 : i64}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op argument #0: genesis.role "weights" is not one of parameter, optimizer_state, input, lr, step, buffer, rng_seed}}
func.func @unknown_role(%a: tensor<2xf32> {genesis.name = "w", genesis.role = "weights"}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op result #0: genesis.role is for arguments}}
func.func @role_on_result(%a: tensor<2xf32>) -> (tensor<2xf32> {genesis.role = "input"}) {
  return %a : tensor<2xf32>
}

// -----

//===----------------------------------------------------------------------===//
// genesis.kernel and genesis.launch on ops
//===----------------------------------------------------------------------===//

func.func @launch_block_too_large(%a: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{#genesis.launch block [1024, 2, 1] exceeds CUDA's 1024 threads ([1024, 1024, 64])}}
  %0 = genesis.exp %a {genesis.launch = #genesis.launch<grid = [1, 1, 1], block = [1024, 2, 1], shared = 0>} : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @launch_not_3d(%a: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{#genesis.launch needs 3 grid and 3 block sizes (x, y, z), got 1 and 3}}
  %0 = genesis.exp %a {genesis.launch = #genesis.launch<grid = [4], block = [32, 1, 1], shared = 0>} : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @launch_zero_size(%a: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{#genesis.launch sizes must be at least 1, got 0}}
  %0 = genesis.exp %a {genesis.launch = #genesis.launch<grid = [0, 1, 1], block = [32, 1, 1], shared = 0>} : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @launch_grid_y(%a: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{#genesis.launch grid [1, 65536, 1] exceeds CUDA's [2^31 - 1, 65535, 65535]}}
  %0 = genesis.exp %a {genesis.launch = #genesis.launch<grid = [1, 65536, 1], block = [32, 1, 1], shared = 0>} : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @launch_shared(%a: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{#genesis.launch shared memory 300000 B is outside [0, 227 KiB]}}
  %0 = genesis.exp %a {genesis.launch = #genesis.launch<grid = [1, 1, 1], block = [32, 1, 1], shared = 300000>} : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @launch_untyped(%a: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'genesis.exp' op genesis.launch must be a #genesis.launch, got array<i64: 1, 32, 0>}}
  %0 = genesis.exp %a {genesis.launch = array<i64: 1, 32, 0>} : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @kernel_not_a_symbol(%a: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'genesis.exp' op genesis.kernel must name a kernel symbol (@name), got "k"}}
  %0 = genesis.exp %a {genesis.kernel = "k"} : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @attention_scale_inf(%q: tensor<1x2x8x16xf32>) {
  // expected-error @+2 {{'genesis.attention' op scale must be finite, got}}
  // expected-error @+1 {{'genesis.attention' op failed to infer returned types}}
  %0 = genesis.attention %q, %q, %q scale 0x7FF0000000000000 : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  return
}

// -----

func.func @packed_attention_scale_nan(%qkv: tensor<1x8x96xbf16>) {
  // expected-error @+2 {{'genesis.packed_attention' op scale must be finite, got}}
  // expected-error @+1 {{'genesis.packed_attention' op failed to infer returned types}}
  %0:2 = genesis.packed_attention %qkv heads 2 kv_heads 2 scale 0x7FF8000000000000 : (tensor<1x8x96xbf16>) -> (tensor<1x8x32xbf16>, tensor<1x2x8xf32>)
  return
}
