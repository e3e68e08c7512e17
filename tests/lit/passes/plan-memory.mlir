// RUN: genesis-opt %s --split-input-file --verify-diagnostics --genesis-plan-memory | FileCheck %s
// RUN: genesis-opt %s --split-input-file --genesis-plan-memory="function=diamond alignment=512" 2>/dev/null | FileCheck %s --check-prefix=ALIGN

// Every case is small enough to know the optimal arena: the most bytes live
// at once (the lower bound), reached by the plan. tensor<16xf32> is 64 bytes,
// one alignment unit.

// A chain of elementwise ops: each result overwrites its operand, which dies
// there, so the whole chain lives in one buffer. Optimum: 256 bytes.
// CHECK-LABEL: func.func @chain
// CHECK-SAME: attributes {genesis.arena_bytes = 256 : i64, genesis.temporary_bytes = 1024 : i64}
// CHECK-NEXT: genesis.exp %{{.+}} {genesis.offsets = array<i64: 0>}
// CHECK-NEXT: genesis.neg %{{.+}} {genesis.offsets = array<i64: 0>}
// CHECK-NEXT: genesis.tanh %{{.+}} {genesis.offsets = array<i64: 0>}
// CHECK-NEXT: genesis.mul %{{.+}}, %{{.+}} {genesis.offsets = array<i64: 0>}
// CHECK-NEXT: return
// ALIGN-LABEL: func.func @chain
// ALIGN-NOT: genesis.offsets
// expected-remark @below {{planned 1024 bytes of temporaries into an arena of 256 bytes}}
func.func @chain(%x: tensor<64xf32>) -> tensor<64xf32> {
  %0 = genesis.exp %x : tensor<64xf32>
  %1 = genesis.neg %0 : tensor<64xf32>
  %2 = genesis.tanh %1 : tensor<64xf32>
  %3 = genesis.mul %2, %2 : tensor<64xf32>
  return %3 : tensor<64xf32>
}

// -----

// A diamond a -> (b, c) -> d. While b is computed a is still live (c reads
// it), so b needs a second buffer; c overwrites a (its last use) and d
// overwrites b. Lower bound: a and b at op 1, 128 bytes; reached.
// CHECK-LABEL: func.func @diamond
// CHECK-SAME: attributes {genesis.arena_bytes = 128 : i64, genesis.temporary_bytes = 256 : i64}
// CHECK-NEXT: %[[A:.+]] = genesis.exp %{{.+}} {genesis.offsets = array<i64: 0>}
// CHECK-NEXT: %[[B:.+]] = genesis.neg %[[A]] {genesis.offsets = array<i64: 64>}
// CHECK-NEXT: %[[C:.+]] = genesis.tanh %[[A]] {genesis.offsets = array<i64: 0>}
// CHECK-NEXT: genesis.add %[[B]], %[[C]] {genesis.offsets = array<i64: 64>}
// With 512-byte alignment the second buffer starts at 512.
// ALIGN-LABEL: func.func @diamond
// ALIGN-SAME: attributes {genesis.arena_bytes = 576 : i64, genesis.temporary_bytes = 256 : i64}
// ALIGN: genesis.neg %{{.+}} {genesis.offsets = array<i64: 512>}
// expected-remark @below {{planned 256 bytes of temporaries into an arena of 128 bytes}}
func.func @diamond(%x: tensor<16xf32>) -> tensor<16xf32> {
  %a = genesis.exp %x : tensor<16xf32>
  %b = genesis.neg %a : tensor<16xf32>
  %c = genesis.tanh %a : tensor<16xf32>
  %d = genesis.add %b, %c : tensor<16xf32>
  return %d : tensor<16xf32>
}

// -----

// Buffers of different sizes (GEMMs never overwrite an input):
//   a  64 bytes, live [0, 1];  b  64 bytes, [1, 3];  c 128 bytes, [2, 3].
// Lower bound: b + c = 192 bytes at ops 2 and 3. Placing in program order
// (a at 0, b at 64) leaves c no gap below b and needs 256 bytes; greedy by
// size puts c at 0, a at 0 (they never meet), b at 128: 192, the optimum.
// b and c are returned and so live to the end.
// CHECK-LABEL: func.func @sizes
// CHECK-SAME: attributes {genesis.arena_bytes = 192 : i64, genesis.temporary_bytes = 256 : i64}
// CHECK-NEXT: genesis.matmul {{.+}} {genesis.offsets = array<i64: 0>}
// CHECK-NEXT: genesis.matmul {{.+}} {genesis.offsets = array<i64: 128>}
// CHECK-NEXT: genesis.matmul {{.+}} {genesis.offsets = array<i64: 0>}
// expected-remark @below {{planned 256 bytes of temporaries into an arena of 192 bytes}}
func.func @sizes(%x: tensor<4x4xf32>, %w: tensor<4x8xf32>) -> (tensor<4x4xf32>, tensor<4x8xf32>) {
  %a = genesis.matmul %x, %x : tensor<4x4xf32>, tensor<4x4xf32>
  %b = genesis.matmul %a, %x : tensor<4x4xf32>, tensor<4x4xf32>
  %c = genesis.matmul %x, %w : tensor<4x4xf32>, tensor<4x8xf32>
  return %b, %c : tensor<4x4xf32>, tensor<4x8xf32>
}

// -----

// k is live over the whole function (defined first, returned). The 256-byte
// broadcast a is placed first, k above it, then the reduction chain
// b -> c -> d (in place) above both. Lower bound: k + a + b = 384 at op 2.
// CHECK-LABEL: func.func @long_lived
// CHECK-SAME: attributes {genesis.arena_bytes = 384 : i64, genesis.temporary_bytes = 512 : i64}
// CHECK-NEXT: genesis.exp {{.+}} {genesis.offsets = array<i64: 256>}
// CHECK-NEXT: genesis.broadcast_in_dim {{.+}} {genesis.offsets = array<i64: 0>}
// CHECK-NEXT: genesis.reduce_sum {{.+}} {genesis.offsets = array<i64: 320>}
// CHECK-NEXT: genesis.mul {{.+}} {genesis.offsets = array<i64: 320>}
// CHECK-NEXT: genesis.add {{.+}} {genesis.offsets = array<i64: 320>}
// expected-remark @below {{planned 512 bytes of temporaries into an arena of 384 bytes}}
func.func @long_lived(%x: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  %k = genesis.exp %x : tensor<16xf32>
  %a = genesis.broadcast_in_dim %x, [1] : tensor<16xf32> -> tensor<4x16xf32>
  %b = genesis.reduce_sum %a dims [0] : tensor<4x16xf32>
  %c = genesis.mul %b, %k : tensor<16xf32>
  %d = genesis.add %c, %k : tensor<16xf32>
  return %d, %k : tensor<16xf32>, tensor<16xf32>
}

// -----

// Returned values: a returned temporary is planned like any other (the
// runtime copies or aliases it out); a returned argument and a splat
// constant get no buffer. The non-splat constant is a 16-byte buffer that
// the add overwrites. Optimum: 16 bytes.
// CHECK-LABEL: func.func @returns
// CHECK-SAME: attributes {genesis.arena_bytes = 16 : i64, genesis.temporary_bytes = 32 : i64}
// CHECK-NEXT: genesis.constant {genesis.offsets = array<i64: -1>} dense<2.000000e+00>
// CHECK-NEXT: genesis.constant {genesis.offsets = array<i64: 0>} dense<[1.000000e+00
// CHECK-NEXT: genesis.add {{.+}} {genesis.offsets = array<i64: 0>}
// expected-remark @below {{planned 32 bytes of temporaries into an arena of 16 bytes}}
func.func @returns(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %s = genesis.constant dense<2.0> : tensor<4xf32>
  %n = genesis.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %a = genesis.add %n, %s : tensor<4xf32>
  return %a, %x, %s : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Values inside fusion regions live in registers: only the fusion results
// get buffers. The second fusion reads the first's result, so the two
// overlap; the final neg overwrites the second. Optimum: 128 bytes.
// CHECK-LABEL: func.func @fusion
// CHECK-SAME: attributes {genesis.arena_bytes = 128 : i64, genesis.temporary_bytes = 192 : i64}
// CHECK-NEXT: genesis.fusion {{.+}} {genesis.offsets = array<i64: 0>}
// CHECK-NEXT: ^bb0
// CHECK-NEXT: genesis.add %{{[a-z0-9]+}}, %{{[a-z0-9]+}} : tensor<16xf32>
// CHECK-NEXT: genesis.exp %{{[a-z0-9]+}} : tensor<16xf32>
// CHECK-NEXT: genesis.yield
// CHECK-NEXT: }
// CHECK-NEXT: genesis.fusion {{.+}} {genesis.offsets = array<i64: 64>}
// CHECK-NEXT: ^bb0
// CHECK-NEXT: genesis.mul %{{[a-z0-9]+}}, %{{[a-z0-9]+}} : tensor<16xf32>
// CHECK-NEXT: genesis.yield
// CHECK-NEXT: }
// CHECK-NEXT: genesis.neg {{.+}} {genesis.offsets = array<i64: 64>}
// expected-remark @below {{planned 192 bytes of temporaries into an arena of 128 bytes}}
func.func @fusion(%x: tensor<16xf32>, %y: tensor<16xf32>) -> tensor<16xf32> {
  %0 = genesis.fusion %x, %y : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32> {
  ^bb0(%a: tensor<16xf32>, %b: tensor<16xf32>):
    %s = genesis.add %a, %b : tensor<16xf32>
    %e = genesis.exp %s : tensor<16xf32>
    genesis.yield %e : tensor<16xf32>
  }
  %1 = genesis.fusion %0, %x : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32> {
  ^bb0(%a: tensor<16xf32>, %b: tensor<16xf32>):
    %m = genesis.mul %a, %b : tensor<16xf32>
    genesis.yield %m : tensor<16xf32>
  }
  %2 = genesis.neg %1 : tensor<16xf32>
  return %2 : tensor<16xf32>
}

// -----

// A reshape is a pure alias: r shares a's buffer (and d then overwrites
// r, which dies there with a), and c shares b's though b is read again by
// d (their buffer's interval is the union of theirs, so nothing writes
// over b while c lives). Two buffers: 128 bytes.
// CHECK-LABEL: func.func @reshape
// CHECK-SAME: attributes {genesis.arena_bytes = 128 : i64, genesis.temporary_bytes = 320 : i64}
// CHECK-NEXT: genesis.exp {{.+}} {genesis.offsets = array<i64: 0>}
// CHECK-NEXT: genesis.reshape {{.+}} {genesis.offsets = array<i64: 0>}
// CHECK-NEXT: genesis.exp {{.+}} {genesis.offsets = array<i64: 64>}
// CHECK-NEXT: genesis.reshape {{.+}} {genesis.offsets = array<i64: 64>}
// CHECK-NEXT: genesis.add {{.+}} {genesis.offsets = array<i64: 0>}
// expected-remark @below {{planned 320 bytes of temporaries into an arena of 128 bytes}}
func.func @reshape(%x: tensor<4x4xf32>, %y: tensor<16xf32>) -> (tensor<4x4xf32>, tensor<16xf32>) {
  %a = genesis.exp %x : tensor<4x4xf32>
  %r = genesis.reshape %a : tensor<4x4xf32> -> tensor<16xf32>
  %b = genesis.exp %y : tensor<16xf32>
  %c = genesis.reshape %b : tensor<16xf32> -> tensor<4x4xf32>
  %d = genesis.add %r, %b : tensor<16xf32>
  return %c, %d : tensor<4x4xf32>, tensor<16xf32>
}

// -----

// An optimizer update writes each new value over its own old one when that
// is a temporary (q), else over the gradient (g, taken by the new first
// moment since the moment itself is an argument); the second moment's old
// value is an argument and the gradient is taken, so it gets a new buffer.
// A cast to a narrower type cannot overwrite its operand. Lower bound:
// g, q, the cast and the new second moment at op 3, 224 bytes.
// CHECK-LABEL: func.func @update
// CHECK-SAME: attributes {genesis.arena_bytes = 224 : i64, genesis.temporary_bytes = 352 : i64}
// CHECK-NEXT: genesis.neg {{.+}} {genesis.offsets = array<i64: 0>}
// CHECK-NEXT: genesis.exp {{.+}} {genesis.offsets = array<i64: 64>}
// CHECK-NEXT: genesis.cast {{.+}} {genesis.offsets = array<i64: 192>}
// CHECK-NEXT: genesis.adam_update {{.+}} {genesis.offsets = array<i64: 64, 0, 128>}
// expected-remark @below {{planned 352 bytes of temporaries into an arena of 224 bytes}}
func.func @update(%p: tensor<16xf32>, %g0: tensor<16xf32>, %m: tensor<16xf32>,
                  %v: tensor<16xf32>, %lr: tensor<f32>, %step: tensor<i64>)
    -> (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xbf16>) {
  %g = genesis.neg %g0 : tensor<16xf32>
  %q = genesis.exp %p : tensor<16xf32>
  %h = genesis.cast %q : tensor<16xf32> to tensor<16xbf16>
  %n:3 = genesis.adam_update %q, %g, %m, %v, %lr, %step : (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<f32>, tensor<i64>) -> (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>)
  return %n#0, %n#1, %n#2, %h : tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xbf16>
}

// -----

// A use inside a nested region is a use by the op that holds the region: a
// and b stay live until the execute_region, whose result needs a third
// buffer while they are read. Values inside the region get none.
// CHECK-LABEL: func.func @nested
// CHECK-SAME: attributes {genesis.arena_bytes = 192 : i64, genesis.temporary_bytes = 192 : i64}
// CHECK-NEXT: genesis.exp {{.+}} {genesis.offsets = array<i64: 0>}
// CHECK-NEXT: genesis.neg {{.+}} {genesis.offsets = array<i64: 64>}
// CHECK-NEXT: scf.execute_region -> tensor<16xf32> {
// CHECK-NEXT: genesis.add %{{[0-9]+}}, %{{[0-9]+}} : tensor<16xf32>
// CHECK-NEXT: scf.yield
// CHECK-NEXT: } {genesis.offsets = array<i64: 128>}
// expected-remark @below {{planned 192 bytes of temporaries into an arena of 192 bytes}}
func.func @nested(%x: tensor<16xf32>) -> tensor<16xf32> {
  %a = genesis.exp %x : tensor<16xf32>
  %b = genesis.neg %x : tensor<16xf32>
  %c = scf.execute_region -> tensor<16xf32> {
    %s = genesis.add %a, %b : tensor<16xf32>
    scf.yield %s : tensor<16xf32>
  }
  return %c : tensor<16xf32>
}

// -----

// cross_entropy_grad writes each row's gradient after reading the row: the
// gradient takes the logits' buffer when they die there. 256 bytes each.
// CHECK-LABEL: func.func @loss_gradient_in_place
// CHECK-SAME: attributes {genesis.arena_bytes = 256 : i64, genesis.temporary_bytes = 512 : i64}
// CHECK-NEXT: genesis.exp %{{.+}} {genesis.offsets = array<i64: 0>}
// CHECK-NEXT: genesis.cross_entropy_grad {{.+}} {genesis.offsets = array<i64: 0>}
// expected-remark @below {{planned 512 bytes of temporaries into an arena of 256 bytes}}
func.func @loss_gradient_in_place(%x: tensor<4x16xf32>, %labels: tensor<4xi64>, %g: tensor<f32>) -> tensor<4x16xf32> {
  %logits = genesis.exp %x : tensor<4x16xf32>
  %grad = genesis.cross_entropy_grad %logits, %labels, %g : (tensor<4x16xf32>, tensor<4xi64>, tensor<f32>) -> tensor<4x16xf32>
  return %grad : tensor<4x16xf32>
}

// -----

// A splat constant an op kernel reads (scatter_add's zeros) is filled at its
// first use and lives from there: it takes the bytes of %a, dead by then. A
// splat only fusions read needs none. Optimum: 192 bytes (%t, the zeros
// and %s at the scatter_add).
// CHECK-LABEL: func.func @zeros_filled_at_first_use
// CHECK-SAME: attributes {genesis.arena_bytes = 192 : i64, genesis.temporary_bytes = 320 : i64}
// CHECK-NEXT: genesis.constant {genesis.offsets = array<i64: [[A:[0-9]+]]>} dense<0.0
// CHECK-NEXT: genesis.constant {genesis.offsets = array<i64: -1>} dense<2.0
// CHECK-NEXT: genesis.exp %{{.+}} {genesis.offsets = array<i64: [[A]]>}
// CHECK-NEXT: genesis.transpose
// CHECK-NEXT: genesis.scatter_add
// CHECK-NEXT: genesis.fusion {{.+}} {genesis.offsets = array<i64: [[A]]>}
// expected-remark @below {{planned 320 bytes of temporaries into an arena of 192 bytes}}
func.func @zeros_filled_at_first_use(%x: tensor<4x4xf32>, %i: tensor<2xi64>, %u: tensor<2x4xf32>) -> tensor<4x4xf32> {
  %zeros = genesis.constant dense<0.0> : tensor<4x4xf32>
  %two = genesis.constant dense<2.0> : tensor<4x4xf32>
  %a = genesis.exp %x : tensor<4x4xf32>
  %t = genesis.transpose %a, [1, 0] : tensor<4x4xf32>
  %s = genesis.scatter_add %zeros, %i, %u axis 0 : tensor<4x4xf32>, tensor<2xi64>, tensor<2x4xf32>
  %r = genesis.fusion %t, %s, %two : (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32> {
  ^bb0(%p: tensor<4x4xf32>, %q: tensor<4x4xf32>, %c: tensor<4x4xf32>):
    %0 = genesis.add %p, %q : tensor<4x4xf32>
    %1 = genesis.mul %0, %c : tensor<4x4xf32>
    genesis.yield %1 : tensor<4x4xf32>
  }
  return %r : tensor<4x4xf32>
}

// -----

// A group of optimizer updates (genesis-group-optimizer-updates): each result
// takes its own update's gradient buffer, which dies at the group, as a lone
// update's would. Optimum: the two gradients, 512 bytes.
// CHECK-LABEL: func.func @update_group
// CHECK-SAME: attributes {genesis.arena_bytes = 512 : i64, genesis.temporary_bytes = 1024 : i64}
// CHECK-NEXT: %[[G:.+]] = genesis.mul %{{.+}} {genesis.offsets = array<i64: [[GO:[0-9]+]]>}
// CHECK-NEXT: %[[H:.+]] = genesis.add %{{.+}} {genesis.offsets = array<i64: [[HO:[0-9]+]]>}
// CHECK-NEXT: genesis.fusion %{{.+}}, %[[G]], %{{.+}}, %{{.+}}, %[[H]] {genesis.offsets = array<i64: [[GO]], [[HO]]>}
// expected-remark @below {{planned 1024 bytes of temporaries into an arena of 512 bytes}}
func.func @update_group(%p: tensor<64xf32>, %q: tensor<64xf32>, %x: tensor<64xf32>, %lr: tensor<f32>) -> (tensor<64xf32>, tensor<64xf32>) {
  %g = genesis.mul %x, %x : tensor<64xf32>
  %h = genesis.add %x, %x : tensor<64xf32>
  %r:2 = genesis.fusion %p, %g, %lr, %q, %h : (tensor<64xf32>, tensor<64xf32>, tensor<f32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>) {
  ^bb0(%a: tensor<64xf32>, %b: tensor<64xf32>, %l: tensor<f32>, %c: tensor<64xf32>, %d: tensor<64xf32>):
    %0 = genesis.sgd_update %a, %b, %l : (tensor<64xf32>, tensor<64xf32>, tensor<f32>) -> tensor<64xf32>
    %1 = genesis.sgd_update %c, %d, %l : (tensor<64xf32>, tensor<64xf32>, tensor<f32>) -> tensor<64xf32>
    genesis.yield %0, %1 : tensor<64xf32>, tensor<64xf32>
  }
  return %r#0, %r#1 : tensor<64xf32>, tensor<64xf32>
}
