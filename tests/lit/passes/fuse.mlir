// RUN: genesis-opt %s --split-input-file --genesis-fuse | FileCheck %s

// Rule 1. Every matmul becomes a library call; a call alone is no fusion.

// CHECK-LABEL: func.func @gemm
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>, %[[W:.+]]: tensor<16x8xf32>)
// CHECK-NEXT: %[[Y:.+]] = genesis.library_call none %[[X]], %[[W]] transpose_rhs : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
// CHECK-NEXT: return %[[Y]]
func.func @gemm(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>) -> tensor<4x16xf32> {
  %0 = genesis.matmul %x, %w transpose_rhs : tensor<4x8xf32>, tensor<16x8xf32>
  return %0 : tensor<4x16xf32>
}

// -----

// The bias in either operand order, then relu.

// CHECK-LABEL: func.func @bias_relu
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>, %[[W:.+]]: tensor<8x16xf32>, %[[B:.+]]: tensor<16xf32>)
// CHECK-NEXT: %[[Y:.+]] = genesis.library_call bias_relu %[[X]], %[[W]] bias %[[B]] : (tensor<4x8xf32>, tensor<8x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
// CHECK-NEXT: return %[[Y]]
func.func @bias_relu(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %b: tensor<16xf32>) -> tensor<4x16xf32> {
  %0 = genesis.matmul %x, %w : tensor<4x8xf32>, tensor<8x16xf32>
  %1 = genesis.broadcast_in_dim %b, [1] : tensor<16xf32> -> tensor<4x16xf32>
  %2 = genesis.add %1, %0 : tensor<4x16xf32>
  %3 = genesis.relu %2 : tensor<4x16xf32>
  return %3 : tensor<4x16xf32>
}

// -----

// Scale, bias and tanh GELU of a batched GEMM; the splat constant and the
// broadcast go with the ops that used them.

// CHECK-LABEL: func.func @alpha_bias_gelu
// CHECK-SAME: (%[[X:.+]]: tensor<2x4x8xf32>, %[[W:.+]]: tensor<2x8x16xf32>, %[[B:.+]]: tensor<16xf32>)
// CHECK-NEXT: %[[Y:.+]] = genesis.library_call bias_gelu %[[X]], %[[W]] bias %[[B]] {alpha = 5.000000e-01 : f64} : (tensor<2x4x8xf32>, tensor<2x8x16xf32>, tensor<16xf32>) -> tensor<2x4x16xf32>
// CHECK-NEXT: return %[[Y]]
func.func @alpha_bias_gelu(%x: tensor<2x4x8xf32>, %w: tensor<2x8x16xf32>, %b: tensor<16xf32>) -> tensor<2x4x16xf32> {
  %0 = genesis.matmul %x, %w : tensor<2x4x8xf32>, tensor<2x8x16xf32>
  %c = genesis.constant dense<0.5> : tensor<2x4x16xf32>
  %1 = genesis.mul %c, %0 : tensor<2x4x16xf32>
  %2 = genesis.broadcast_in_dim %b, [2] : tensor<16xf32> -> tensor<2x4x16xf32>
  %3 = genesis.add %1, %2 : tensor<2x4x16xf32>
  %4 = genesis.gelu %3 approximate = tanh : tensor<2x4x16xf32>
  return %4 : tensor<2x4x16xf32>
}

// -----

// relu and tanh GELU without a bias.

// CHECK-LABEL: func.func @relu_gelu
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>, %[[W:.+]]: tensor<8x8xf32>)
// CHECK-NEXT: %[[R:.+]] = genesis.library_call relu %[[X]], %[[W]] :
// CHECK-NEXT: %[[G:.+]] = genesis.library_call gelu %[[X]], %[[W]] :
// CHECK-NEXT: return %[[R]], %[[G]]
func.func @relu_gelu(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = genesis.matmul %x, %w : tensor<4x8xf32>, tensor<8x8xf32>
  %1 = genesis.relu %0 : tensor<4x8xf32>
  %2 = genesis.matmul %x, %w : tensor<4x8xf32>, tensor<8x8xf32>
  %3 = genesis.gelu %2 approximate = tanh : tensor<4x8xf32>
  return %1, %3 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// The GEMM result has another user: no bias; the add is a loop fusion with
// the broadcast of the argument cloned in.

// CHECK-LABEL: func.func @gemm_result_shared
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>, %[[W:.+]]: tensor<8x16xf32>, %[[B:.+]]: tensor<16xf32>)
// CHECK-NEXT: %[[Y:.+]] = genesis.library_call none %[[X]], %[[W]] :
// CHECK-NEXT: %[[F:.+]] = genesis.fusion %[[Y]], %[[B]] : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32> {
// CHECK-NEXT: ^bb0(%[[A0:.+]]: tensor<4x16xf32>, %[[A1:.+]]: tensor<16xf32>):
// CHECK-NEXT: %[[BB:.+]] = genesis.broadcast_in_dim %[[A1]], [1] : tensor<16xf32> -> tensor<4x16xf32>
// CHECK-NEXT: %[[S:.+]] = genesis.add %[[A0]], %[[BB]] : tensor<4x16xf32>
// CHECK-NEXT: genesis.yield %[[S]] : tensor<4x16xf32>
// CHECK-NEXT: }
// CHECK-NEXT: return %[[Y]], %[[F]]
func.func @gemm_result_shared(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %b: tensor<16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>) {
  %0 = genesis.matmul %x, %w : tensor<4x8xf32>, tensor<8x16xf32>
  %1 = genesis.broadcast_in_dim %b, [1] : tensor<16xf32> -> tensor<4x16xf32>
  %2 = genesis.add %0, %1 : tensor<4x16xf32>
  return %0, %2 : tensor<4x16xf32>, tensor<4x16xf32>
}

// -----

// The biased value has another user (as relu's gradient does): bias only.

// CHECK-LABEL: func.func @biased_shared
// CHECK: %[[Y:.+]] = genesis.library_call bias
// CHECK-NEXT: %[[F:.+]] = genesis.fusion %[[Y]] : (tensor<4x16xf32>) -> tensor<4x16xf32> {
// CHECK-NEXT: ^bb0(%[[A0:.+]]: tensor<4x16xf32>):
// CHECK-NEXT: %[[R:.+]] = genesis.relu %[[A0]]
// CHECK-NEXT: genesis.yield %[[R]]
// CHECK-NEXT: }
// CHECK-NEXT: return %[[Y]], %[[F]]
func.func @biased_shared(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %b: tensor<16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>) {
  %0 = genesis.matmul %x, %w : tensor<4x8xf32>, tensor<8x16xf32>
  %1 = genesis.broadcast_in_dim %b, [1] : tensor<16xf32> -> tensor<4x16xf32>
  %2 = genesis.add %0, %1 : tensor<4x16xf32>
  %3 = genesis.relu %2 : tensor<4x16xf32>
  return %2, %3 : tensor<4x16xf32>, tensor<4x16xf32>
}

// -----

// A linear layer's rows put back into their batch shape before the bias
// (frontend linear on [B, T, C]): the reshape keeps the last dimension, so
// the call absorbs the bias and the relu through it and the reshape follows.
// A reshape that changes the last dimension stops absorption.

// CHECK-LABEL: func.func @bias_through_reshape
// CHECK-SAME: (%[[X:.+]]: tensor<2x8xf32>, %[[W:.+]]: tensor<16x8xf32>, %[[B:.+]]: tensor<16xf32>, %[[B2:.+]]: tensor<8xf32>)
// CHECK-NEXT: %[[Y:.+]] = genesis.library_call bias_relu %[[X]], %[[W]] transpose_rhs bias %[[B]] : (tensor<2x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<2x16xf32>
// CHECK-NEXT: %[[R:.+]] = genesis.reshape %[[Y]] : tensor<2x16xf32> -> tensor<1x2x16xf32>
// CHECK-NEXT: %[[Z:.+]] = genesis.library_call none %[[X]], %[[W]] transpose_rhs
// CHECK-NEXT: %[[RZ:.+]] = genesis.reshape %[[Z]] : tensor<2x16xf32> -> tensor<4x8xf32>
// CHECK-NEXT: genesis.fusion %[[RZ]], %[[B2]]
// CHECK: return %[[R]],
func.func @bias_through_reshape(%x: tensor<2x8xf32>, %w: tensor<16x8xf32>, %b: tensor<16xf32>, %b2: tensor<8xf32>) -> (tensor<1x2x16xf32>, tensor<4x8xf32>) {
  %0 = genesis.matmul %x, %w transpose_rhs : tensor<2x8xf32>, tensor<16x8xf32>
  %1 = genesis.reshape %0 : tensor<2x16xf32> -> tensor<1x2x16xf32>
  %2 = genesis.broadcast_in_dim %b, [2] : tensor<16xf32> -> tensor<1x2x16xf32>
  %3 = genesis.add %1, %2 : tensor<1x2x16xf32>
  %4 = genesis.relu %3 : tensor<1x2x16xf32>
  %5 = genesis.matmul %x, %w transpose_rhs : tensor<2x8xf32>, tensor<16x8xf32>
  %6 = genesis.reshape %5 : tensor<2x16xf32> -> tensor<4x8xf32>
  %7 = genesis.broadcast_in_dim %b2, [1] : tensor<8xf32> -> tensor<4x8xf32>
  %8 = genesis.add %6, %7 : tensor<4x8xf32>
  return %4, %8 : tensor<1x2x16xf32>, tensor<4x8xf32>
}

// -----

// No epilogue: erf GELU; a bias broadcast along the rows; a non-splat
// scale; a scale after the bias; a second activation.

// CHECK-LABEL: func.func @not_epilogues
// CHECK-SAME: (%[[X:.+]]: tensor<4x4xf32>, %[[W:.+]]: tensor<4x4xf32>, %[[B:.+]]: tensor<4xf32>)
// CHECK-NEXT: %[[Y0:.+]] = genesis.library_call none %[[X]], %[[W]] :
// CHECK-NEXT: %[[F0:.+]] = genesis.fusion %[[Y0]]
// CHECK-NEXT: ^bb0(%[[A0:.+]]: tensor<4x4xf32>):
// CHECK-NEXT: %[[G:.+]] = genesis.gelu %[[A0]] : tensor<4x4xf32>
// CHECK-NEXT: genesis.yield %[[G]]
// CHECK-NEXT: }
// CHECK-NEXT: %[[Y1:.+]] = genesis.library_call none %[[X]], %[[W]] :
// CHECK-NEXT: %[[F1:.+]] = genesis.fusion %[[Y1]], %[[B]]
// CHECK-NEXT: ^bb0(%[[A0:.+]]: tensor<4x4xf32>, %[[A1:.+]]: tensor<4xf32>):
// CHECK-NEXT: %[[BB:.+]] = genesis.broadcast_in_dim %[[A1]], [0]
// CHECK-NEXT: %[[S:.+]] = genesis.add %[[A0]], %[[BB]]
// CHECK-NEXT: genesis.yield %[[S]]
// CHECK-NEXT: }
// CHECK-NEXT: %[[Y2:.+]] = genesis.library_call none %[[X]], %[[W]] :
// CHECK-NEXT: %[[K:.+]] = genesis.constant dense<{{\[\[}}1.000000e+00, 2.000000e+00
// CHECK-NEXT: %[[F2:.+]] = genesis.fusion %[[Y2]], %[[K]]
// CHECK-NEXT: ^bb0(%[[A0:.+]]: tensor<4x4xf32>, %[[A1:.+]]: tensor<4x4xf32>):
// CHECK-NEXT: %[[M:.+]] = genesis.mul %[[A0]], %[[A1]]
// CHECK-NEXT: genesis.yield %[[M]]
// CHECK-NEXT: }
// CHECK-NEXT: %[[Y3:.+]] = genesis.library_call bias %[[X]], %[[W]] bias %[[B]] :
// CHECK-NEXT: %[[F3:.+]] = genesis.fusion %[[Y3]]
// CHECK-NEXT: ^bb0(%[[A0:.+]]: tensor<4x4xf32>):
// CHECK-NEXT: %[[C:.+]] = genesis.constant dense<2.000000e+00>
// CHECK-NEXT: %[[M:.+]] = genesis.mul %[[A0]], %[[C]]
// CHECK-NEXT: genesis.yield %[[M]]
// CHECK-NEXT: }
// CHECK-NEXT: %[[Y4:.+]] = genesis.library_call relu %[[X]], %[[W]] :
// CHECK-NEXT: %[[F4:.+]] = genesis.fusion %[[Y4]]
// CHECK-NEXT: ^bb0(%[[A0:.+]]: tensor<4x4xf32>):
// CHECK-NEXT: %[[G:.+]] = genesis.gelu %[[A0]] approximate = tanh
// CHECK-NEXT: genesis.yield %[[G]]
// CHECK-NEXT: }
// CHECK-NEXT: return %[[F0]], %[[F1]], %[[F2]], %[[F3]], %[[F4]]
func.func @not_epilogues(%x: tensor<4x4xf32>, %w: tensor<4x4xf32>, %b: tensor<4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) {
  %0 = genesis.matmul %x, %w : tensor<4x4xf32>, tensor<4x4xf32>
  %1 = genesis.gelu %0 : tensor<4x4xf32>
  %2 = genesis.matmul %x, %w : tensor<4x4xf32>, tensor<4x4xf32>
  %3 = genesis.broadcast_in_dim %b, [0] : tensor<4xf32> -> tensor<4x4xf32>
  %4 = genesis.add %2, %3 : tensor<4x4xf32>
  %5 = genesis.matmul %x, %w : tensor<4x4xf32>, tensor<4x4xf32>
  %c = genesis.constant dense<[[1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 4.0]]> : tensor<4x4xf32>
  %6 = genesis.mul %5, %c : tensor<4x4xf32>
  %7 = genesis.matmul %x, %w : tensor<4x4xf32>, tensor<4x4xf32>
  %8 = genesis.broadcast_in_dim %b, [1] : tensor<4xf32> -> tensor<4x4xf32>
  %9 = genesis.add %7, %8 : tensor<4x4xf32>
  %s = genesis.constant dense<2.0> : tensor<4x4xf32>
  %10 = genesis.mul %9, %s : tensor<4x4xf32>
  %11 = genesis.matmul %x, %w : tensor<4x4xf32>, tensor<4x4xf32>
  %12 = genesis.relu %11 : tensor<4x4xf32>
  %13 = genesis.gelu %12 approximate = tanh : tensor<4x4xf32>
  return %1, %4, %6, %10, %13 : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

// Rule 2. A chain is one fusion; its inputs are deduplicated in first-use
// order and bound to the block arguments in that order.

// CHECK-LABEL: func.func @chain
// CHECK-SAME: (%[[A:.+]]: tensor<8xf32>, %[[B:.+]]: tensor<8xf32>)
// CHECK-NEXT: %[[F:.+]] = genesis.fusion %[[B]], %[[A]] : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xbf16> {
// CHECK-NEXT: ^bb0(%[[XB:.+]]: tensor<8xf32>, %[[XA:.+]]: tensor<8xf32>):
// CHECK-NEXT: %[[M:.+]] = genesis.mul %[[XB]], %[[XA]] : tensor<8xf32>
// CHECK-NEXT: %[[E:.+]] = genesis.exp %[[M]] : tensor<8xf32>
// CHECK-NEXT: %[[S:.+]] = genesis.add %[[E]], %[[XB]] : tensor<8xf32>
// CHECK-NEXT: %[[P:.+]] = genesis.compare gt, %[[S]], %[[XA]] : tensor<8xf32>
// CHECK-NEXT: %[[Q:.+]] = genesis.select %[[P]], %[[S]], %[[XA]] : tensor<8xi1>, tensor<8xf32>
// CHECK-NEXT: %[[C:.+]] = genesis.cast %[[Q]] : tensor<8xf32> to tensor<8xbf16>
// CHECK-NEXT: genesis.yield %[[C]] : tensor<8xbf16>
// CHECK-NEXT: }
// CHECK-NEXT: return %[[F]]
func.func @chain(%a: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<8xbf16> {
  %0 = genesis.mul %b, %a : tensor<8xf32>
  %1 = genesis.exp %0 : tensor<8xf32>
  %2 = genesis.add %1, %b : tensor<8xf32>
  %3 = genesis.compare gt, %2, %a : tensor<8xf32>
  %4 = genesis.select %3, %2, %a : tensor<8xi1>, tensor<8xf32>
  %5 = genesis.cast %4 : tensor<8xf32> to tensor<8xbf16>
  return %5 : tensor<8xbf16>
}

// -----

// Rule 4. One cheap op is still a kernel.

// CHECK-LABEL: func.func @single
// CHECK-SAME: (%[[A:.+]]: tensor<8xf32>, %[[B:.+]]: tensor<8xf32>)
// CHECK-NEXT: %[[F:.+]] = genesis.fusion %[[A]], %[[B]] : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32> {
// CHECK-NEXT: ^bb0(%[[XA:.+]]: tensor<8xf32>, %[[XB:.+]]: tensor<8xf32>):
// CHECK-NEXT: %[[S:.+]] = genesis.add %[[XA]], %[[XB]] : tensor<8xf32>
// CHECK-NEXT: genesis.yield %[[S]] : tensor<8xf32>
// CHECK-NEXT: }
// CHECK-NEXT: return %[[F]]
func.func @single(%a: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<8xf32> {
  %0 = genesis.add %a, %b : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// Duplication forbidden: exp has users in two groups, so it is a fusion of
// its own rather than computed twice.

// CHECK-LABEL: func.func @no_duplication
// CHECK-SAME: (%[[A:.+]]: tensor<8xf32>)
// CHECK-NEXT: %[[F0:.+]] = genesis.fusion %[[A]] : (tensor<8xf32>) -> tensor<8xf32> {
// CHECK-NEXT: ^bb0(%[[X:.+]]: tensor<8xf32>):
// CHECK-NEXT: %[[E:.+]] = genesis.exp %[[X]]
// CHECK-NEXT: genesis.yield %[[E]]
// CHECK-NEXT: }
// CHECK-NEXT: %[[F1:.+]] = genesis.fusion %[[F0]] : (tensor<8xf32>) -> tensor<8xf32> {
// CHECK-NEXT: ^bb0(%[[X:.+]]: tensor<8xf32>):
// CHECK-NEXT: %[[N:.+]] = genesis.neg %[[X]]
// CHECK-NEXT: genesis.yield %[[N]]
// CHECK-NEXT: }
// CHECK-NEXT: %[[T:.+]] = genesis.softmax %[[F1]] dim 0
// CHECK-NEXT: %[[F2:.+]] = genesis.fusion %[[F0]], %[[T]] : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32> {
// CHECK-NEXT: ^bb0(%[[X:.+]]: tensor<8xf32>, %[[Y:.+]]: tensor<8xf32>):
// CHECK-NEXT: %[[P:.+]] = genesis.abs %[[X]]
// CHECK-NEXT: %[[M:.+]] = genesis.mul %[[P]], %[[Y]]
// CHECK-NEXT: genesis.yield %[[M]]
// CHECK-NEXT: }
// CHECK-NEXT: return %[[F1]], %[[F2]]
func.func @no_duplication(%a: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %0 = genesis.exp %a : tensor<8xf32>
  %1 = genesis.neg %0 : tensor<8xf32>
  %2 = genesis.softmax %1 dim 0 : tensor<8xf32>
  %3 = genesis.abs %0 : tensor<8xf32>
  %4 = genesis.mul %3, %2 : tensor<8xf32>
  return %1, %4 : tensor<8xf32>, tensor<8xf32>
}

// -----

// Duplication allowed: a splat constant and a broadcast of an argument are
// cloned into every group that uses them; the originals stay for their
// non-fusible users.

// CHECK-LABEL: func.func @duplication
// CHECK-SAME: (%[[A:.+]]: tensor<4x8xf32>, %[[V:.+]]: tensor<8xf32>)
// CHECK-NEXT: %[[C:.+]] = genesis.constant dense<2.000000e+00> : tensor<4x8xf32>
// CHECK-NEXT: %[[BV:.+]] = genesis.broadcast_in_dim %[[V]], [1]
// CHECK-NEXT: %[[F0:.+]] = genesis.fusion %[[A]], %[[V]] : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT: ^bb0(%[[XA:.+]]: tensor<4x8xf32>, %[[XV:.+]]: tensor<8xf32>):
// CHECK-NEXT: %[[XC:.+]] = genesis.constant dense<2.000000e+00> : tensor<4x8xf32>
// CHECK-NEXT: %[[M:.+]] = genesis.mul %[[XA]], %[[XC]]
// CHECK-NEXT: %[[XBV:.+]] = genesis.broadcast_in_dim %[[XV]], [1]
// CHECK-NEXT: %[[S:.+]] = genesis.add %[[M]], %[[XBV]]
// CHECK-NEXT: genesis.yield %[[S]]
// CHECK-NEXT: }
// CHECK-NEXT: %[[SM:.+]] = genesis.softmax %[[F0]] dim 1
// CHECK-NEXT: %[[F1:.+]] = genesis.fusion %[[SM]], %[[V]] : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT: ^bb0(%[[XS:.+]]: tensor<4x8xf32>, %[[XV:.+]]: tensor<8xf32>):
// CHECK-NEXT: %[[XBV:.+]] = genesis.broadcast_in_dim %[[XV]], [1]
// CHECK-NEXT: %[[D:.+]] = genesis.sub %[[XS]], %[[XBV]]
// CHECK-NEXT: %[[XC:.+]] = genesis.constant dense<2.000000e+00> : tensor<4x8xf32>
// CHECK-NEXT: %[[Q:.+]] = genesis.div %[[D]], %[[XC]]
// CHECK-NEXT: genesis.yield %[[Q]]
// CHECK-NEXT: }
// CHECK-NEXT: %[[SV:.+]] = genesis.softmax %[[BV]] dim 1
// CHECK-NEXT: return %[[F1]], %[[SV]], %[[C]]
func.func @duplication(%a: tensor<4x8xf32>, %v: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %c = genesis.constant dense<2.0> : tensor<4x8xf32>
  %bv = genesis.broadcast_in_dim %v, [1] : tensor<8xf32> -> tensor<4x8xf32>
  %0 = genesis.mul %a, %c : tensor<4x8xf32>
  %1 = genesis.add %0, %bv : tensor<4x8xf32>
  %2 = genesis.softmax %1 dim 1 : tensor<4x8xf32>
  %3 = genesis.sub %2, %bv : tensor<4x8xf32>
  %4 = genesis.div %3, %c : tensor<4x8xf32>
  %5 = genesis.softmax %bv dim 1 : tensor<4x8xf32>
  return %4, %5, %c : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// A broadcast of a computed value fuses like an elementwise op: into the
// group of its users when they are all in one, else a group with its
// producer, never duplicated.

// CHECK-LABEL: func.func @computed_broadcast
// CHECK-SAME: (%[[A:.+]]: tensor<4x8xf32>, %[[V:.+]]: tensor<8xf32>)
// CHECK-NEXT: %[[F0:.+]] = genesis.fusion %[[V]] : (tensor<8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT: ^bb0(%[[X:.+]]: tensor<8xf32>):
// CHECK-NEXT: %[[E:.+]] = genesis.exp %[[X]]
// CHECK-NEXT: %[[B:.+]] = genesis.broadcast_in_dim %[[E]], [1]
// CHECK-NEXT: genesis.yield %[[B]]
// CHECK-NEXT: }
// CHECK-NEXT: %[[F1:.+]] = genesis.fusion %[[A]], %[[F0]]
// CHECK-NEXT: ^bb0
// CHECK-NEXT: genesis.add
// CHECK-NEXT: genesis.yield
// CHECK-NEXT: }
// CHECK-NEXT: %[[S:.+]] = genesis.softmax %[[F1]]
// CHECK-NEXT: %[[F2:.+]] = genesis.fusion %[[S]], %[[F0]]
// CHECK-NEXT: ^bb0
// CHECK-NEXT: genesis.mul
// CHECK-NEXT: genesis.yield
// CHECK-NEXT: }
// CHECK-NEXT: return %[[F1]], %[[F2]]
func.func @computed_broadcast(%a: tensor<4x8xf32>, %v: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = genesis.exp %v : tensor<8xf32>
  %1 = genesis.broadcast_in_dim %0, [1] : tensor<8xf32> -> tensor<4x8xf32>
  %2 = genesis.add %a, %1 : tensor<4x8xf32>
  %3 = genesis.softmax %2 dim 1 : tensor<4x8xf32>
  %4 = genesis.mul %3, %1 : tensor<4x8xf32>
  return %2, %4 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// A splat constant or broadcast whose users are all non-fusible stays as it
// is, as does a broadcast of a computed value alone in its group.

// CHECK-LABEL: func.func @lone
// CHECK-SAME: (%[[A:.+]]: tensor<8xf32>, %{{.+}}: tensor<4x8xf32>)
// CHECK-NEXT: %[[C:.+]] = genesis.constant dense<1.000000e+00> : tensor<4x8xf32>
// CHECK-NEXT: %[[S0:.+]] = genesis.softmax %[[C]] dim 1
// CHECK-NEXT: %[[B0:.+]] = genesis.broadcast_in_dim %[[A]], [1]
// CHECK-NEXT: %[[T:.+]] = genesis.softmax %[[B0]] dim 0
// CHECK-NEXT: %[[E:.+]] = genesis.fusion %[[A]] : (tensor<8xf32>) -> tensor<8xf32> {
// CHECK-NEXT: ^bb0
// CHECK-NEXT: genesis.exp
// CHECK-NEXT: genesis.yield
// CHECK-NEXT: }
// CHECK-NEXT: %[[B1:.+]] = genesis.broadcast_in_dim %[[E]], [1]
// CHECK-NEXT: %[[S1:.+]] = genesis.softmax %[[B1]] dim 1
// CHECK-NEXT: %[[F:.+]] = genesis.fusion %[[S0]], %[[T]], %[[S1]]
// CHECK-NEXT: ^bb0
// CHECK-NEXT: genesis.add
// CHECK-NEXT: genesis.add
// CHECK-NEXT: genesis.yield
// CHECK-NEXT: }
// CHECK-NEXT: return %[[F]], %[[C]], %[[E]]
func.func @lone(%a: tensor<8xf32>, %w: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>) {
  %c = genesis.constant dense<1.0> : tensor<4x8xf32>
  %0 = genesis.softmax %c dim 1 : tensor<4x8xf32>
  %1 = genesis.broadcast_in_dim %a, [1] : tensor<8xf32> -> tensor<4x8xf32>
  %2 = genesis.softmax %1 dim 0 : tensor<4x8xf32>
  %3 = genesis.exp %a : tensor<8xf32>
  %4 = genesis.broadcast_in_dim %3, [1] : tensor<8xf32> -> tensor<4x8xf32>
  %5 = genesis.softmax %4 dim 1 : tensor<4x8xf32>
  %6 = genesis.add %0, %2 : tensor<4x8xf32>
  %7 = genesis.add %6, %5 : tensor<4x8xf32>
  return %7, %c, %3 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>
}

// -----

// Non-fusible ops stay between the fusions; a non-splat constant is an
// input. A transpose joins the loop group of its user (rule 2).

// CHECK-LABEL: func.func @non_fusible
// CHECK-SAME: (%[[A:.+]]: tensor<2x4xf32>, %[[IDS:.+]]: tensor<3xi64>)
// CHECK-NEXT: %[[K:.+]] = genesis.constant dense<{{\[\[}}1.000000e+00
// CHECK-NEXT: %[[F0:.+]] = genesis.fusion %[[A]], %[[K]] : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32> {
// CHECK-NEXT: ^bb0(%[[X:.+]]: tensor<2x4xf32>, %[[Y:.+]]: tensor<2x4xf32>):
// CHECK-NEXT: %[[S:.+]] = genesis.add %[[X]], %[[Y]]
// CHECK-NEXT: genesis.yield %[[S]]
// CHECK-NEXT: }
// CHECK-NEXT: %[[F1:.+]] = genesis.fusion %[[F0]] : (tensor<2x4xf32>) -> tensor<4x2xf32>
// CHECK-NEXT: ^bb0
// CHECK-NEXT: genesis.transpose
// CHECK-NEXT: genesis.neg
// CHECK-NEXT: genesis.yield
// CHECK-NEXT: }
// CHECK-NEXT: %[[G:.+]] = genesis.take %[[F0]], %[[IDS]] axis 0
// CHECK-NEXT: %[[I:.+]] = genesis.iota dim 1
// CHECK-NEXT: genesis.argmax %[[G]] dim 1
// CHECK-NEXT: return %[[F1]], %[[G]], %[[I]]
func.func @non_fusible(%a: tensor<2x4xf32>, %ids: tensor<3xi64>) -> (tensor<4x2xf32>, tensor<3x4xf32>, tensor<2x4xi64>) {
  %k = genesis.constant dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]> : tensor<2x4xf32>
  %0 = genesis.add %a, %k : tensor<2x4xf32>
  %1 = genesis.transpose %0, [1, 0] : tensor<2x4xf32>
  %2 = genesis.neg %1 : tensor<4x2xf32>
  %3 = genesis.take %0, %ids axis 0 : tensor<2x4xf32>, tensor<3xi64>
  %4 = genesis.iota dim 1 : tensor<2x4xi64>
  %5 = genesis.argmax %3 dim 1 : tensor<3x4xf32>
  return %2, %3, %4 : tensor<4x2xf32>, tensor<3x4xf32>, tensor<2x4xi64>
}

// -----

// Rule 3. Softmax from primitives: each reduction roots a group of its
// producers; its consumers start a new group, into which the broadcast of
// its result is cloned; exp(x - max) also leaves the sum's group, as a
// second result.

// CHECK-LABEL: func.func @softmax
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>)
// CHECK-NEXT: %[[M:.+]] = genesis.fusion %[[X]] : (tensor<4x8xf32>) -> tensor<4xf32> {
// CHECK-NEXT: ^bb0(%[[XX:.+]]: tensor<4x8xf32>):
// CHECK-NEXT: %[[R:.+]] = genesis.reduce_max %[[XX]] dims [1]
// CHECK-NEXT: genesis.yield %[[R]] : tensor<4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: %[[EZ:.+]]:2 = genesis.fusion %[[X]], %[[M]] : (tensor<4x8xf32>, tensor<4xf32>) -> (tensor<4x8xf32>, tensor<4xf32>) {
// CHECK-NEXT: ^bb0(%[[XX:.+]]: tensor<4x8xf32>, %[[XM:.+]]: tensor<4xf32>):
// CHECK-NEXT: %[[BM:.+]] = genesis.broadcast_in_dim %[[XM]], [0]
// CHECK-NEXT: %[[S:.+]] = genesis.sub %[[XX]], %[[BM]]
// CHECK-NEXT: %[[E:.+]] = genesis.exp %[[S]]
// CHECK-NEXT: %[[Z:.+]] = genesis.reduce_sum %[[E]] dims [1]
// CHECK-NEXT: genesis.yield %[[E]], %[[Z]] : tensor<4x8xf32>, tensor<4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: %[[Y:.+]] = genesis.fusion %[[EZ]]#0, %[[EZ]]#1 : (tensor<4x8xf32>, tensor<4xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT: ^bb0(%[[XE:.+]]: tensor<4x8xf32>, %[[XZ:.+]]: tensor<4xf32>):
// CHECK-NEXT: %[[BZ:.+]] = genesis.broadcast_in_dim %[[XZ]], [0]
// CHECK-NEXT: %[[D:.+]] = genesis.div %[[XE]], %[[BZ]]
// CHECK-NEXT: genesis.yield %[[D]]
// CHECK-NEXT: }
// CHECK-NEXT: return %[[Y]]
func.func @softmax(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %m = genesis.reduce_max %x dims [1] : tensor<4x8xf32>
  %bm = genesis.broadcast_in_dim %m, [0] : tensor<4xf32> -> tensor<4x8xf32>
  %s = genesis.sub %x, %bm : tensor<4x8xf32>
  %e = genesis.exp %s : tensor<4x8xf32>
  %z = genesis.reduce_sum %e dims [1] : tensor<4x8xf32>
  %bz = genesis.broadcast_in_dim %z, [0] : tensor<4xf32> -> tensor<4x8xf32>
  %y = genesis.div %e, %bz : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// A reduction's elementwise consumer is not in its group.

// CHECK-LABEL: func.func @reduction_consumer
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>)
// CHECK-NEXT: %[[F0:.+]] = genesis.fusion %[[X]] : (tensor<4x8xf32>) -> tensor<4xf32> {
// CHECK-NEXT: ^bb0(%[[XX:.+]]: tensor<4x8xf32>):
// CHECK-NEXT: %[[M:.+]] = genesis.mul %[[XX]], %[[XX]]
// CHECK-NEXT: %[[R:.+]] = genesis.reduce_sum %[[M]] dims [1]
// CHECK-NEXT: genesis.yield %[[R]]
// CHECK-NEXT: }
// CHECK-NEXT: %[[F1:.+]] = genesis.fusion %[[F0]] : (tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT: ^bb0(%[[XR:.+]]: tensor<4xf32>):
// CHECK-NEXT: %[[Q:.+]] = genesis.sqrt %[[XR]]
// CHECK-NEXT: genesis.yield %[[Q]]
// CHECK-NEXT: }
// CHECK-NEXT: return %[[F1]]
func.func @reduction_consumer(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %0 = genesis.mul %x, %x : tensor<4x8xf32>
  %1 = genesis.reduce_sum %0 dims [1] : tensor<4x8xf32>
  %2 = genesis.sqrt %1 : tensor<4xf32>
  return %2 : tensor<4xf32>
}

// -----

// A side result must have the reduction operand's shape: exp is [8], so it
// is a fusion of its own.

// CHECK-LABEL: func.func @side_result_shape
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>, %[[V:.+]]: tensor<8xf32>)
// CHECK-NEXT: %[[E:.+]] = genesis.fusion %[[V]] : (tensor<8xf32>) -> tensor<8xf32> {
// CHECK-NEXT: ^bb0
// CHECK-NEXT: genesis.exp
// CHECK-NEXT: genesis.yield
// CHECK-NEXT: }
// CHECK-NEXT: %[[R:.+]] = genesis.fusion %[[E]], %[[X]] : (tensor<8xf32>, tensor<4x8xf32>) -> tensor<4xf32> {
// CHECK-NEXT: ^bb0(%[[XE:.+]]: tensor<8xf32>, %[[XX:.+]]: tensor<4x8xf32>):
// CHECK-NEXT: %[[B:.+]] = genesis.broadcast_in_dim %[[XE]], [1]
// CHECK-NEXT: %[[M:.+]] = genesis.mul %[[XX]], %[[B]]
// CHECK-NEXT: %[[Q:.+]] = genesis.reduce_min %[[M]] dims [1]
// CHECK-NEXT: genesis.yield %[[Q]]
// CHECK-NEXT: }
// CHECK-NEXT: return %[[E]], %[[R]]
func.func @side_result_shape(%x: tensor<4x8xf32>, %v: tensor<8xf32>) -> (tensor<8xf32>, tensor<4xf32>) {
  %0 = genesis.exp %v : tensor<8xf32>
  %1 = genesis.broadcast_in_dim %0, [1] : tensor<8xf32> -> tensor<4x8xf32>
  %2 = genesis.mul %x, %1 : tensor<4x8xf32>
  %3 = genesis.reduce_min %2 dims [1] : tensor<4x8xf32>
  return %0, %3 : tensor<8xf32>, tensor<4xf32>
}

// -----

// Multi-output: exp leaves the reduction's group as a side result, used by
// the softmax before the reduction; the block is reordered so that the
// fusion comes first.

// CHECK-LABEL: func.func @side_result_used_early
// CHECK-SAME: (%[[X:.+]]: tensor<4x4xf32>)
// CHECK-NEXT: %[[F:.+]]:2 = genesis.fusion %[[X]] : (tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4xf32>) {
// CHECK-NEXT: ^bb0(%[[XX:.+]]: tensor<4x4xf32>):
// CHECK-NEXT: %[[E:.+]] = genesis.exp %[[XX]]
// CHECK-NEXT: %[[R:.+]] = genesis.reduce_sum %[[E]] dims [1]
// CHECK-NEXT: genesis.yield %[[E]], %[[R]] : tensor<4x4xf32>, tensor<4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: %[[T:.+]] = genesis.softmax %[[F]]#0 dim 0
// CHECK-NEXT: return %[[T]], %[[F]]#1
func.func @side_result_used_early(%x: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4xf32>) {
  %0 = genesis.exp %x : tensor<4x4xf32>
  %1 = genesis.softmax %0 dim 0 : tensor<4x4xf32>
  %2 = genesis.reduce_sum %0 dims [1] : tensor<4x4xf32>
  return %1, %2 : tensor<4x4xf32>, tensor<4xf32>
}

// -----

// Cycle avoidance through an op: exp cannot be a side result of the
// reduction's group, which reads transpose(exp).

// CHECK-LABEL: func.func @cycle
// CHECK-SAME: (%[[X:.+]]: tensor<4x4xf32>)
// CHECK-NEXT: %[[E:.+]] = genesis.fusion %[[X]] : (tensor<4x4xf32>) -> tensor<4x4xf32> {
// CHECK-NEXT: ^bb0
// CHECK-NEXT: genesis.exp
// CHECK-NEXT: genesis.yield
// CHECK-NEXT: }
// CHECK-NEXT: %[[T:.+]] = genesis.transpose %[[E]], [1, 0]
// CHECK-NEXT: %[[R:.+]] = genesis.fusion %[[E]], %[[T]] : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4xf32> {
// CHECK-NEXT: ^bb0(%[[XE:.+]]: tensor<4x4xf32>, %[[XT:.+]]: tensor<4x4xf32>):
// CHECK-NEXT: %[[S:.+]] = genesis.add %[[XE]], %[[XT]]
// CHECK-NEXT: %[[Q:.+]] = genesis.reduce_sum %[[S]] dims [1]
// CHECK-NEXT: genesis.yield %[[Q]]
// CHECK-NEXT: }
// CHECK-NEXT: return %[[R]]
func.func @cycle(%x: tensor<4x4xf32>) -> tensor<4xf32> {
  %0 = genesis.exp %x : tensor<4x4xf32>
  %1 = genesis.transpose %0, [1, 0] : tensor<4x4xf32>
  %2 = genesis.add %0, %1 : tensor<4x4xf32>
  %3 = genesis.reduce_sum %2 dims [1] : tensor<4x4xf32>
  return %3 : tensor<4xf32>
}

// -----

// Cycle avoidance through a group: %v is a side result of %rk's group read
// by %rh's group. %q, used in both, is tried in %rh's group first (%h1 comes
// before %u), where it would close the cycle
// rh-group -> %u -> rk-group -> %v -> rh-group although no path of ops leads
// from %u to %rh's group; it becomes a side result of %rk's group instead.

// CHECK-LABEL: func.func @cycle_through_group
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>, %[[Y:.+]]: tensor<4x8xf32>)
// CHECK-NEXT: %[[K:.+]]:3 = genesis.fusion %[[X]], %[[Y]] : (tensor<4x8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>) {
// CHECK-NEXT: ^bb0(%[[XX:.+]]: tensor<4x8xf32>, %[[XY:.+]]: tensor<4x8xf32>):
// CHECK-NEXT: %[[Q:.+]] = genesis.exp %[[XX]]
// CHECK-NEXT: %[[V:.+]] = genesis.neg %[[XY]]
// CHECK-NEXT: %[[U:.+]] = genesis.add %[[Q]], %[[XY]]
// CHECK-NEXT: %[[U2:.+]] = genesis.add %[[U]], %[[V]]
// CHECK-NEXT: %[[RK:.+]] = genesis.reduce_sum %[[U2]] dims [1]
// CHECK-NEXT: genesis.yield %[[Q]], %[[V]], %[[RK]] : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: %[[H:.+]] = genesis.fusion %[[K]]#0, %[[X]], %[[K]]#1 : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4xf32> {
// CHECK-NEXT: ^bb0(%[[XQ:.+]]: tensor<4x8xf32>, %[[XX:.+]]: tensor<4x8xf32>, %[[XV:.+]]: tensor<4x8xf32>):
// CHECK-NEXT: %[[H1:.+]] = genesis.mul %[[XQ]], %[[XX]]
// CHECK-NEXT: %[[H2:.+]] = genesis.add %[[H1]], %[[XV]]
// CHECK-NEXT: %[[RH:.+]] = genesis.reduce_max %[[H2]] dims [1]
// CHECK-NEXT: genesis.yield %[[RH]]
// CHECK-NEXT: }
// CHECK-NEXT: return %[[K]]#2, %[[H]]
func.func @cycle_through_group(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %q = genesis.exp %x : tensor<4x8xf32>
  %v = genesis.neg %y : tensor<4x8xf32>
  %h1 = genesis.mul %q, %x : tensor<4x8xf32>
  %u = genesis.add %q, %y : tensor<4x8xf32>
  %u2 = genesis.add %u, %v : tensor<4x8xf32>
  %rk = genesis.reduce_sum %u2 dims [1] : tensor<4x8xf32>
  %h2 = genesis.add %h1, %v : tensor<4x8xf32>
  %rh = genesis.reduce_max %h2 dims [1] : tensor<4x8xf32>
  return %rk, %rh : tensor<4xf32>, tensor<4xf32>
}

// -----

// Rule 2 with data movement: a 16-bit GEMM result widened to f32, sliced,
// reshaped and transposed per head (attention's q and k) is read by one
// loop fusion per head. The widening cast is cloned into both groups (the
// f32 value is never stored), the reshape between two fused ops joins, and
// each group writes 16 bits. A reshape of a value from outside every group
// stays an alias, a lone slice or transpose keeps its own kernel, and a
// slice feeding a reduction's group stays out of it.

// CHECK-LABEL: func.func @data_movement
// CHECK: %[[P:.+]] = genesis.library_call none
// CHECK-NEXT: %[[Q:.+]] = genesis.fusion %[[P]] : (tensor<4x16xbf16>) -> tensor<2x4x4xbf16> {
// CHECK-NEXT: ^bb0
// CHECK-NEXT: genesis.cast {{.+}} to tensor<4x16xf32>
// CHECK-NEXT: genesis.slice {{.+}} start [0, 0] limit [4, 8]
// CHECK-NEXT: genesis.reshape
// CHECK-NEXT: genesis.transpose
// CHECK-NEXT: genesis.cast {{.+}} to tensor<2x4x4xbf16>
// CHECK-NEXT: genesis.yield
// CHECK-NEXT: }
// CHECK-NEXT: %[[K:.+]] = genesis.fusion %[[P]] : (tensor<4x16xbf16>) -> tensor<2x4x4xbf16> {
// CHECK: genesis.slice {{.+}} start [0, 8] limit [4, 16]
// CHECK: %[[R:.+]] = genesis.reshape %[[P]] : tensor<4x16xbf16> -> tensor<2x2x16xbf16>
// CHECK-NEXT: %[[R8:.+]] = genesis.slice %[[R]]
// CHECK-NEXT: %[[T:.+]] = genesis.transpose %arg2, [1, 0]
// CHECK-NEXT: %[[S:.+]] = genesis.slice %arg2
// CHECK-NEXT: %[[E:.+]] = genesis.fusion %[[S]] : (tensor<4x4xf32>) -> tensor<4xf32> {
// CHECK-NEXT: ^bb0
// CHECK-NEXT: genesis.exp
// CHECK-NEXT: genesis.reduce_sum
// CHECK-NEXT: genesis.yield
// CHECK-NEXT: }
// CHECK-NEXT: return %[[Q]], %[[K]], %[[R8]], %[[T]], %[[E]]
func.func @data_movement(%x: tensor<4x8xbf16>, %w: tensor<8x16xbf16>, %m: tensor<4x6xf32>) -> (tensor<2x4x4xbf16>, tensor<2x4x4xbf16>, tensor<2x2x8xbf16>, tensor<6x4xf32>, tensor<4xf32>) {
  %p = genesis.matmul %x, %w : tensor<4x8xbf16>, tensor<8x16xbf16>
  %wide = genesis.cast %p : tensor<4x16xbf16> to tensor<4x16xf32>
  %q0 = genesis.slice %wide start [0, 0] limit [4, 8] stride [1, 1] : tensor<4x16xf32>
  %q1 = genesis.reshape %q0 : tensor<4x8xf32> -> tensor<4x2x4xf32>
  %q2 = genesis.transpose %q1, [1, 0, 2] : tensor<4x2x4xf32>
  %q = genesis.cast %q2 : tensor<2x4x4xf32> to tensor<2x4x4xbf16>
  %k0 = genesis.slice %wide start [0, 8] limit [4, 16] stride [1, 1] : tensor<4x16xf32>
  %k1 = genesis.reshape %k0 : tensor<4x8xf32> -> tensor<4x2x4xf32>
  %k2 = genesis.transpose %k1, [1, 0, 2] : tensor<4x2x4xf32>
  %k = genesis.cast %k2 : tensor<2x4x4xf32> to tensor<2x4x4xbf16>
  %r = genesis.reshape %p : tensor<4x16xbf16> -> tensor<2x2x16xbf16>
  %r8 = genesis.slice %r start [0, 0, 0] limit [2, 2, 8] stride [1, 1, 1] : tensor<2x2x16xbf16>
  %t = genesis.transpose %m, [1, 0] : tensor<4x6xf32>
  %s = genesis.slice %m start [0, 0] limit [4, 4] stride [1, 1] : tensor<4x6xf32>
  %e = genesis.exp %s : tensor<4x4xf32>
  %sum = genesis.reduce_sum %e dims [1] : tensor<4x4xf32>
  return %q, %k, %r8, %t, %sum : tensor<2x4x4xbf16>, tensor<2x4x4xbf16>, tensor<2x2x8xbf16>, tensor<6x4xf32>, tensor<4xf32>
}

// -----

// Rule 2b: a cheap elementwise op whose users lie in two reduction groups
// is cloned into both (the widening casts with it), so neither kernel stores
// it for the other: each clone reads two bf16 values, no more bits than the
// f32 product stored. One that is also returned is stored anyway: it stays
// a multi-output result of the first group (rule 3).

// CHECK-LABEL: func.func @duplicated
// CHECK-NEXT: %[[R:.+]] = genesis.fusion %arg0, %arg1 : (tensor<4x8xbf16>, tensor<4x8xbf16>) -> tensor<4xf32> {
// CHECK-NEXT: ^bb0
// CHECK-NEXT: genesis.cast
// CHECK-NEXT: genesis.cast
// CHECK-NEXT: genesis.mul
// CHECK-NEXT: genesis.reduce_sum {{.+}} dims [1]
// CHECK-NEXT: genesis.yield
// CHECK-NEXT: }
// CHECK-NEXT: %[[C:.+]] = genesis.fusion %arg0, %arg1 : (tensor<4x8xbf16>, tensor<4x8xbf16>) -> tensor<8xf32> {
// CHECK-NEXT: ^bb0
// CHECK-NEXT: genesis.cast
// CHECK-NEXT: genesis.cast
// CHECK-NEXT: genesis.mul
// CHECK-NEXT: genesis.reduce_sum {{.+}} dims [0]
// CHECK-NEXT: genesis.yield
// CHECK-NEXT: }
// CHECK-NEXT: %[[S:.+]]:2 = genesis.fusion %arg2 : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>) {
// CHECK: %[[T:.+]] = genesis.fusion %[[S]]#0
// CHECK: return %[[R]], %[[C]], %[[S]]#1, %[[T]], %[[S]]#0
func.func @duplicated(%x: tensor<4x8xbf16>, %y: tensor<4x8xbf16>, %z: tensor<4x8xf32>) -> (tensor<4xf32>, tensor<8xf32>, tensor<4xf32>, tensor<8xf32>, tensor<4x8xf32>) {
  %v = genesis.cast %x : tensor<4x8xbf16> to tensor<4x8xf32>
  %w = genesis.cast %y : tensor<4x8xbf16> to tensor<4x8xf32>
  %p = genesis.mul %v, %w : tensor<4x8xf32>
  %r = genesis.reduce_sum %p dims [1] : tensor<4x8xf32>
  %c = genesis.reduce_sum %p dims [0] : tensor<4x8xf32>
  %q = genesis.exp %z : tensor<4x8xf32>
  %s = genesis.reduce_sum %q dims [1] : tensor<4x8xf32>
  %t = genesis.reduce_sum %q dims [0] : tensor<4x8xf32>
  return %r, %c, %s, %t, %q : tensor<4xf32>, tensor<8xf32>, tensor<4xf32>, tensor<8xf32>, tensor<4x8xf32>
}

// An f32 times a bf16 value read by a row and a column reduction: clones
// would read 48 bits per element where the stored f32 product costs 32, so
// the product is stored once, a multi-output result of the first group.
// CHECK-LABEL: func.func @wider_inputs_stored
// CHECK-NEXT: %[[P:.+]]:2 = genesis.fusion %arg0, %arg1 : (tensor<4x8xf32>, tensor<4x8xbf16>) -> (tensor<4x8xf32>, tensor<4xf32>) {
// CHECK: %[[C:.+]] = genesis.fusion %[[P]]#0 : (tensor<4x8xf32>) -> tensor<8xf32> {
// CHECK: return %[[P]]#1, %[[C]]
func.func @wider_inputs_stored(%x: tensor<4x8xf32>, %y: tensor<4x8xbf16>) -> (tensor<4xf32>, tensor<8xf32>) {
  %w = genesis.cast %y : tensor<4x8xbf16> to tensor<4x8xf32>
  %p = genesis.mul %x, %w : tensor<4x8xf32>
  %r = genesis.reduce_sum %p dims [1] : tensor<4x8xf32>
  %c = genesis.reduce_sum %p dims [0] : tensor<4x8xf32>
  return %r, %c : tensor<4xf32>, tensor<8xf32>
}

// Rule 2b without a column reduction: a SiLU of a bf16 value read by two
// loop groups (SwiGLU's forward product and its backward) is cloned into
// each, the widening cast with it: a clone reads 16 bits per element where
// the stored f32 SiLU would cost 32. (@no_duplication keeps an exp of an
// f32 value, which reads as many bits as it stores, in one group.)
// CHECK-LABEL: func.func @silu_recomputed
// CHECK-NEXT: %[[H:.+]] = genesis.fusion %arg0, %arg1 : (tensor<4x8xbf16>, tensor<4x8xbf16>) -> tensor<4x8xbf16> {
// CHECK: genesis.silu
// CHECK: %[[D:.+]] = genesis.fusion %arg0, %arg2 : (tensor<4x8xbf16>, tensor<4x8xbf16>) -> tensor<4x8xbf16> {
// CHECK: genesis.silu
// CHECK: return %[[H]], %[[D]]
func.func @silu_recomputed(%g: tensor<4x8xbf16>, %u: tensor<4x8xbf16>, %d: tensor<4x8xbf16>) -> (tensor<4x8xbf16>, tensor<4x8xbf16>) {
  %gw = genesis.cast %g : tensor<4x8xbf16> to tensor<4x8xf32>
  %s = genesis.silu %gw : tensor<4x8xf32>
  %uw = genesis.cast %u : tensor<4x8xbf16> to tensor<4x8xf32>
  %h = genesis.mul %s, %uw : tensor<4x8xf32>
  %hn = genesis.cast %h : tensor<4x8xf32> to tensor<4x8xbf16>
  %dw = genesis.cast %d : tensor<4x8xbf16> to tensor<4x8xf32>
  %du = genesis.mul %dw, %s : tensor<4x8xf32>
  %dun = genesis.cast %du : tensor<4x8xf32> to tensor<4x8xbf16>
  return %hn, %dun : tensor<4x8xbf16>, tensor<4x8xbf16>
}

// -----

// Rule 2b does not clone a residual stream: x1 = x + p is read by a row and
// a column reduction and by the next residual add, but clones would each
// read x and p (two values as large as x1) instead of x1, so x1 is stored
// once, as a multi-output result of the first group (rule 3).
// CHECK-LABEL: func.func @residual_stored
// CHECK-NEXT: %[[X1:.+]]:2 = genesis.fusion %arg0, %arg1 : (tensor<4x8xf32>, tensor<4x8xbf16>) -> (tensor<4x8xf32>, tensor<4xf32>) {
// CHECK: %[[C:.+]] = genesis.fusion %[[X1]]#0 : (tensor<4x8xf32>) -> tensor<8xf32> {
// CHECK: %[[R2:.+]] = genesis.fusion %[[X1]]#0, %arg2 : (tensor<4x8xf32>, tensor<4x8xbf16>) -> tensor<4xf32> {
// CHECK: return %[[X1]]#1, %[[C]], %[[R2]]
func.func @residual_stored(%x: tensor<4x8xf32>, %p: tensor<4x8xbf16>, %q: tensor<4x8xbf16>) -> (tensor<4xf32>, tensor<8xf32>, tensor<4xf32>) {
  %pw = genesis.cast %p : tensor<4x8xbf16> to tensor<4x8xf32>
  %x1 = genesis.add %x, %pw : tensor<4x8xf32>
  %r = genesis.reduce_sum %x1 dims [1] : tensor<4x8xf32>
  %c = genesis.reduce_sum %x1 dims [0] : tensor<4x8xf32>
  %qw = genesis.cast %q : tensor<4x8xbf16> to tensor<4x8xf32>
  %x2 = genesis.add %x1, %qw : tensor<4x8xf32>
  %r2 = genesis.reduce_sum %x2 dims [1] : tensor<4x8xf32>
  return %r, %c, %r2 : tensor<4xf32>, tensor<8xf32>, tensor<4xf32>
}

// -----

// A product reshaped to a scalar (matmul of two vectors) absorbs nothing
// through the reshape: a rank-0 result has no last dimension.
// CHECK-LABEL: func.func @dot_to_scalar
// CHECK: genesis.library_call none
// CHECK: genesis.reshape {{.+}} : tensor<1x1xf32> -> tensor<f32>
// CHECK: genesis.fusion
func.func @dot_to_scalar(%a: tensor<1x4xf32>, %b: tensor<4x1xf32>) -> tensor<f32> {
  %0 = genesis.matmul %a, %b : tensor<1x4xf32>, tensor<4x1xf32>
  %1 = genesis.reshape %0 : tensor<1x1xf32> -> tensor<f32>
  %c = genesis.constant dense<2.0> : tensor<f32>
  %2 = genesis.mul %1, %c : tensor<f32>
  return %2 : tensor<f32>
}
