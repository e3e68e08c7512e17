// RUN: genesis-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(genesis-merge-row-fusions),genesis-lower-cuda)" | FileCheck %s
// (genesis-merge-row-fusions first, as genesis-cuda-pipeline runs them: the
// row fusion cases below are merged fusions.)

// A loop fusion: a grid-stride loop, 4 elements per iteration; the input of
// the result's shape is read, and the result written, as one 16-byte vector;
// so is the bias broadcast along the rows (its 4 lanes are consecutive).
// CHECK-LABEL: func.func @f(
// CHECK: genesis.fusion %{{.+}}, %{{.+}} {genesis.kernel = @f_fusion0, genesis.launch = #genesis.launch<grid = [8, 1, 1], block = [256, 1, 1], shared = 0>}
// CHECK: gpu.module @genesis_kernels
// CHECK: gpu.func @f_fusion0(%[[A:[a-z0-9]+]]: memref<64x128xf32>, %[[B:[a-z0-9]+]]: memref<128xf32>, %[[OUT:[a-z0-9]+]]: memref<64x128xf32>) kernel
// CHECK-SAME: known_block_size = array<i32: 256, 1, 1>
// CHECK: %[[FLAT:.+]] = memref.collapse_shape %[[A]]
// CHECK: scf.for
// CHECK: vector.load %[[FLAT]][%{{.+}}] {alignment = 16 : i64} : memref<8192xf32>, vector<4xf32>
// CHECK: vector.load %[[B]][%{{.+}}] {alignment = 16 : i64} : memref<128xf32>, vector<4xf32>
// CHECK: math.tanh
// CHECK: vector.store %{{.+}}, %{{.+}}[%{{.+}}] {alignment = 16 : i64} : memref<8192xf32>, vector<4xf32>
func.func @f(%a: tensor<64x128xf32>, %b: tensor<128xf32>) -> tensor<64x128xf32> {
  %r = genesis.fusion %a, %b : (tensor<64x128xf32>, tensor<128xf32>) -> tensor<64x128xf32> {
  ^bb0(%x: tensor<64x128xf32>, %y: tensor<128xf32>):
    %0 = genesis.broadcast_in_dim %y, [1] : tensor<128xf32> -> tensor<64x128xf32>
    %1 = genesis.mul %x, %0 : tensor<64x128xf32>
    %2 = genesis.tanh %1 : tensor<64x128xf32>
    genesis.yield %2 : tensor<64x128xf32>
  }
  return %r : tensor<64x128xf32>
}

// -----

// A horizontal loop fusion (genesis-horizontal-loop-fusion): results of two
// shapes, each computed by its own grid-stride loop over its own range of
// blocks: [4, 64] (64 iterations of 4, one block) in block 0, [2, 1024, 64]
// (32768 iterations of 4: 128 blocks) in blocks 1-128.
// CHECK-LABEL: func.func @horizontal(
// CHECK: genesis.launch = #genesis.launch<grid = [129, 1, 1], block = [256, 1, 1], shared = 0>
// CHECK: gpu.func @horizontal_fusion0(
// CHECK: %[[BLOCK:.+]] = gpu.block_id  x
// CHECK: scf.if
// CHECK: scf.for
// CHECK: math.exp
// CHECK: arith.cmpi uge, %[[BLOCK]], %c1
// CHECK: arith.cmpi ult, %[[BLOCK]], %c129
// CHECK: scf.if
// CHECK: arith.subi %[[BLOCK]], %c1
// CHECK: scf.for
// CHECK: arith.maximumf
func.func @horizontal(%q: tensor<4x64xf32>, %k: tensor<2x1x64xf32>, %c: tensor<2x1024x64xf32>) -> (tensor<4x64xf32>, tensor<2x1024x64xf32>) {
  %r:2 = genesis.fusion %q, %k, %c : (tensor<4x64xf32>, tensor<2x1x64xf32>, tensor<2x1024x64xf32>) -> (tensor<4x64xf32>, tensor<2x1024x64xf32>) {
  ^bb0(%x: tensor<4x64xf32>, %y: tensor<2x1x64xf32>, %z: tensor<2x1024x64xf32>):
    %0 = genesis.exp %x : tensor<4x64xf32>
    %1 = genesis.broadcast_in_dim %y, [0, 1, 2] : tensor<2x1x64xf32> -> tensor<2x1024x64xf32>
    %2 = genesis.max %1, %z : tensor<2x1024x64xf32>
    genesis.yield %0, %2 : tensor<4x64xf32>, tensor<2x1024x64xf32>
  }
  return %r#0, %r#1 : tensor<4x64xf32>, tensor<2x1024x64xf32>
}

// -----

// A row reduction: a warp per row, 8 rows per block, a butterfly of xor
// shuffles, lane 0 stores.
// CHECK-LABEL: func.func @rows(
// CHECK: genesis.launch = #genesis.launch<grid = [4, 1, 1], block = [256, 1, 1], shared = 0>
// CHECK: gpu.func @rows_fusion0(
// CHECK: scf.for {{.+}} iter_args
// CHECK: gpu.shuffle xor
// CHECK: gpu.shuffle xor
// CHECK: gpu.shuffle xor
// CHECK: gpu.shuffle xor
// CHECK: gpu.shuffle xor
// CHECK-NOT: gpu.shuffle
// CHECK: memref.store
func.func @rows(%a: tensor<32x100xf32>) -> tensor<32xf32> {
  %r = genesis.fusion %a : (tensor<32x100xf32>) -> tensor<32xf32> {
  ^bb0(%x: tensor<32x100xf32>):
    %0 = genesis.exp %x : tensor<32x100xf32>
    %1 = genesis.reduce_sum %0 dims [1] : tensor<32x100xf32>
    genesis.yield %1 : tensor<32xf32>
  }
  return %r : tensor<32xf32>
}

// -----

// A column reduction: 32 columns per block, partial sums through shared
// memory, combined in a fixed order after a barrier.
// CHECK-LABEL: func.func @columns(
// CHECK: genesis.launch = #genesis.launch<grid = [2, 1, 1], block = [1024, 1, 1], shared = 0>
// CHECK: gpu.func @columns_fusion0({{.+}}) workgroup(%[[SHARED:.+]] : memref<1024xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}) kernel
// CHECK: memref.store %{{.+}}, %[[SHARED]]
// CHECK: gpu.barrier
func.func @columns(%a: tensor<512x40xf32>) -> tensor<40xf32> {
  %r = genesis.fusion %a : (tensor<512x40xf32>) -> tensor<40xf32> {
  ^bb0(%x: tensor<512x40xf32>):
    %1 = genesis.reduce_sum %x dims [0] : tensor<512x40xf32>
    genesis.yield %1 : tensor<40xf32>
  }
  return %r : tensor<40xf32>
}

// -----

// An optimizer update outside fusions: the CPU op kernel over the flattened
// parameter, its element loop strided by the 128-thread block, so a thread
// updates 8 elements 128 apart (its end clamped to the 240 elements): one
// block.
// CHECK-LABEL: func.func @sgd(
// CHECK: genesis.sgd_update {{.+}}genesis.kernel = @sgd_sgd_update0, genesis.launch = #genesis.launch<grid = [1, 1, 1], block = [128, 1, 1], shared = 0>
// CHECK: func.func private @sgd_sgd_update0_body(%{{.+}}: memref<240xf32>, %{{.+}}: memref<240xf32>, %{{.+}}: memref<f32>, %{{.+}}: memref<240xf32>, %[[BEGIN:.+]]: index, %[[END:.+]]: index)
// CHECK: scf.for %{{.+}} = %[[BEGIN]] to %[[END]] step %c128
// CHECK: gpu.func @sgd_sgd_update0(
// CHECK: %[[FIRST:.+]] = arith.addi %{{.+}}, %thread_id_x
// CHECK: %[[LAST:.+]] = arith.addi %[[FIRST]], %c897
// CHECK: %[[CLAMPED:.+]] = arith.minui %[[LAST]], %c240
// CHECK: call @sgd_sgd_update0_body({{.+}}, %[[FIRST]], %[[CLAMPED]])
func.func @sgd(%p: tensor<16x15xf32>, %g: tensor<16x15xf32>, %lr: tensor<f32>) -> tensor<16x15xf32> {
  %r = genesis.sgd_update %p, %g, %lr : (tensor<16x15xf32>, tensor<16x15xf32>, tensor<f32>) -> tensor<16x15xf32>
  return %r : tensor<16x15xf32>
}

// -----

// A group of optimizer updates (genesis-group-optimizer-updates): one
// kernel of 1 + 3 blocks (240 and 3000 elements, 1024 a block), blocks
// [0, 1) running the first update's body, [1, 4) the second's from its own
// block 0, each with its operands and result; the parameters take the
// bodies' flattened types.
// CHECK-LABEL: func.func @optimizer_group(
// CHECK: genesis.fusion {{.+}}genesis.kernel = @optimizer_group_optimizer0, genesis.launch = #genesis.launch<grid = [4, 1, 1], block = [128, 1, 1], shared = 0>
// CHECK-DAG: func.func private @optimizer_group_optimizer0_body0(%{{.+}}: memref<240xf32>, %{{.+}}: memref<240xf32>, %{{.+}}: memref<f32>, %{{.+}}: memref<240xf32>, %{{.+}}: index, %{{.+}}: index)
// CHECK-DAG: func.func private @optimizer_group_optimizer0_body1(%{{.+}}: memref<3000xf32>, %{{.+}}: memref<3000xf32>, %{{.+}}: memref<f32>, %{{.+}}: memref<3000xf32>, %{{.+}}: index, %{{.+}}: index)
// CHECK: gpu.func @optimizer_group_optimizer0(%[[P:.+]]: memref<240xf32>, %[[G:.+]]: memref<240xf32>, %[[LR:.+]]: memref<f32>, %[[Q:.+]]: memref<3000xf32>, %[[H:.+]]: memref<3000xf32>, %[[NEWP:.+]]: memref<240xf32>, %[[NEWQ:.+]]: memref<3000xf32>)
// CHECK: %[[BLOCK:.+]] = gpu.block_id x
// CHECK: arith.cmpi uge, %[[BLOCK]], %c0
// CHECK: arith.cmpi ult, %[[BLOCK]], %c1
// CHECK: call @optimizer_group_optimizer0_body0(%[[P]], %[[G]], %[[LR]], %[[NEWP]],
// CHECK: arith.cmpi uge, %[[BLOCK]], %c1
// CHECK: arith.cmpi ult, %[[BLOCK]], %c4
// CHECK: %[[LOCAL:.+]] = arith.subi %[[BLOCK]], %c1
// CHECK: arith.muli %[[LOCAL]], %c1024
// CHECK: arith.minui %{{.+}}, %c3000
// CHECK: call @optimizer_group_optimizer0_body1(%[[Q]], %[[H]], %[[LR]], %[[NEWQ]],
func.func @optimizer_group(%p: tensor<16x15xf32>, %g: tensor<16x15xf32>, %lr: tensor<f32>, %q: tensor<3000xf32>, %h: tensor<3000xf32>) -> (tensor<16x15xf32>, tensor<3000xf32>) {
  %r:2 = genesis.fusion %p, %g, %lr, %q, %h : (tensor<16x15xf32>, tensor<16x15xf32>, tensor<f32>, tensor<3000xf32>, tensor<3000xf32>) -> (tensor<16x15xf32>, tensor<3000xf32>) {
  ^bb0(%a: tensor<16x15xf32>, %b: tensor<16x15xf32>, %l: tensor<f32>, %c: tensor<3000xf32>, %d: tensor<3000xf32>):
    %0 = genesis.sgd_update %a, %b, %l : (tensor<16x15xf32>, tensor<16x15xf32>, tensor<f32>) -> tensor<16x15xf32>
    %1 = genesis.sgd_update %c, %d, %l : (tensor<3000xf32>, tensor<3000xf32>, tensor<f32>) -> tensor<3000xf32>
    genesis.yield %0, %1 : tensor<16x15xf32>, tensor<3000xf32>
  }
  return %r#0, %r#1 : tensor<16x15xf32>, tensor<3000xf32>
}

// -----

// A transpose moving the innermost dimension: 32x32 tiles of (40, 70) of
// each of the 2 batch indices through a 32x33 shared tile (flat, 1056
// elements), a barrier between the coalesced reads and writes; a 1-D grid
// of 2 x 3 x 2 tiles. A transpose keeping the innermost dimension (16 f32)
// copies 16 bytes per thread: 240 threads, one block.
// CHECK-LABEL: func.func @transpose(
// CHECK: genesis.transpose %{{.+}}, [0, 2, 1] {genesis.kernel = @transpose_transpose0, genesis.launch = #genesis.launch<grid = [12, 1, 1], block = [256, 1, 1], shared = 0>}
// CHECK: genesis.transpose %{{.+}}, [0, 2, 1, 3] {genesis.kernel = @transpose_transpose1, genesis.launch = #genesis.launch<grid = [1, 1, 1], block = [256, 1, 1], shared = 0>}
// CHECK: gpu.func @transpose_transpose0(%{{.+}}: memref<2x40x70xf32>, %{{.+}}: memref<2x70x40xf32>) workgroup(%[[TILE:.+]] : memref<1056xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}) kernel
// CHECK-SAME: known_block_size = array<i32: 256, 1, 1>
// CHECK-COUNT-4: memref.store %{{.+}}, %[[TILE]]
// CHECK: gpu.barrier
// CHECK-COUNT-4: memref.load %[[TILE]]
// CHECK: gpu.func @transpose_transpose1(
// CHECK-NOT: gpu.barrier
// CHECK: vector.load %{{.+}}[%{{.+}}] {alignment = 16 : i64} : memref<960xf32>, vector<4xf32>
// CHECK: vector.store %{{.+}}, %{{.+}}[%{{.+}}] {alignment = 16 : i64} : memref<960xf32>, vector<4xf32>
// CHECK: gpu.return
func.func @transpose(%a: tensor<2x40x70xf32>, %b: tensor<2x5x6x16xf32>) -> (tensor<2x70x40xf32>, tensor<2x6x5x16xf32>) {
  %0 = genesis.transpose %a, [0, 2, 1] : tensor<2x40x70xf32>
  %1 = genesis.transpose %b, [0, 2, 1, 3] : tensor<2x5x6x16xf32>
  return %0, %1 : tensor<2x70x40xf32>, tensor<2x6x5x16xf32>
}

// -----

// Data movement outside fusions: a grid-stride loop with a thread per
// result element (256-thread blocks). A take clamps each id into
// [0, rows) in the id's own type before the index cast; a pad loads only
// inside the operand and on the interior step, else yields zero.
// CHECK-LABEL: func.func @gather(
// CHECK: genesis.slice {{.+}}genesis.kernel = @gather_slice0, genesis.launch = #genesis.launch<grid = [64, 1, 1], block = [256, 1, 1], shared = 0>
// CHECK: genesis.pad {{.+}}genesis.kernel = @gather_pad0, genesis.launch = #genesis.launch<grid = [1, 1, 1], block = [256, 1, 1], shared = 0>
// CHECK: genesis.take {{.+}}genesis.kernel = @gather_take0, genesis.launch = #genesis.launch<grid = [100, 1, 1], block = [256, 1, 1], shared = 0>
// CHECK: gpu.func @gather_slice0(
// CHECK: scf.for
// CHECK: memref.load
// CHECK: memref.store
// CHECK: gpu.func @gather_pad0(
// CHECK: scf.if %{{.+}} -> (i64)
// CHECK: memref.load
// CHECK: } else {
// CHECK: arith.constant 0 : i64
// CHECK: gpu.func @gather_take0(
// CHECK: %[[ID:.+]] = memref.load %{{.+}} : memref<400xi32>
// CHECK: %[[LOW:.+]] = arith.maxsi %[[ID]], %{{.+}} : i32
// CHECK: arith.minsi %[[LOW]], %{{.+}} : i32
// CHECK: arith.index_cast
func.func @gather(%a: tensor<16x64x96xf32>, %b: tensor<2x5xi64>, %t: tensor<1000x64xf32>, %ids: tensor<8x50xi32>) -> (tensor<16x64x16xf32>, tensor<5x7xi64>, tensor<8x50x64xf32>) {
  %0 = genesis.slice %a start [0, 0, 2] limit [16, 64, 96] stride [1, 1, 6] : tensor<16x64x96xf32>
  %1 = genesis.pad %b low [0, 2] high [1, 0] interior [2, 0] : tensor<2x5xi64>
  %2 = genesis.take %t, %ids axis 0 : tensor<1000x64xf32>, tensor<8x50xi32>
  return %0, %1, %2 : tensor<16x64x16xf32>, tensor<5x7xi64>, tensor<8x50x64xf32>
}

// -----

// scatter_add: a block per 32 result rows (16 blocks for 500 rows), each
// thread owning one of the 64 columns of each row (threads past 64 read the
// last column and store nothing), its 32 sums in f64 started from the
// operand; one round of 4096 ids: warp w loads ids [512 w, 512 w + 512),
// 16 per lane, the lanes' bits for ids in the row block ORed across the warp
// (a uniform subgroup reduce: one redux.sync), each match's slot in the
// warp's list a popcount of the bits below its lane; after a barrier every
// thread walks the 8 lists in order, 16 entries at a time, adding each to
// its row's sums through a switch on the row; no atomics.
// CHECK-LABEL: func.func @scatter(
// CHECK: genesis.scatter_add {{.+}}genesis.kernel = @scatter_scatter_add0, genesis.launch = #genesis.launch<grid = [16, 1, 1], block = [256, 1, 1], shared = 0>
// CHECK: gpu.func @scatter_scatter_add0({{.+}}) workgroup(%[[LISTS:.+]] : memref<4096xi32, #gpu.address_space<workgroup>> {{.+}}, %[[SIZES:.+]] : memref<8xi32, #gpu.address_space<workgroup>>
// CHECK-COUNT-32: arith.extf %{{.+}} : f32 to f64
// CHECK: scf.for {{.+}} iter_args({{.+}}) -> (f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64)
// CHECK: gpu.subgroup_reduce or %{{.+}} uniform : (i32) -> i32
// CHECK: llvm.intr.ctpop
// CHECK: memref.store %{{.+}}, %[[LISTS]]
// CHECK: memref.store %{{.+}}, %[[SIZES]]
// CHECK: gpu.barrier
// CHECK: memref.load %[[SIZES]]
// CHECK: scf.for {{.+}} step %c16
// CHECK: scf.index_switch
// CHECK: arith.addf %{{.+}} : f64
// CHECK: gpu.barrier
// CHECK: arith.truncf %{{.+}} : f64 to f32
// CHECK-NOT: atomic
func.func @scatter(%z: tensor<500x64xf32>, %ids: tensor<4096xi64>, %u: tensor<4096x64xf32>) -> tensor<500x64xf32> {
  %0 = genesis.scatter_add %z, %ids, %u axis 0 : tensor<500x64xf32>, tensor<4096xi64>, tensor<4096x64xf32>
  return %0 : tensor<500x64xf32>
}

// -----

// Sibling reductions (genesis-merge-sibling-reductions) of one kernel: a sum
// and a max over the same column reduction (tiles of 32 columns, 32 row
// groups of a 1024-thread block) carry one accumulator each in the row loop,
// beside the side result's store; their partials go through the shared
// buffer one root at a time (3 barriers).
// CHECK-LABEL: func.func @sibling_columns(
// CHECK: genesis.launch = #genesis.launch<grid = [8, 1, 1], block = [1024, 1, 1], shared = 0>
// CHECK: scf.for {{.+}} -> (f32, f32)
// CHECK-DAG: arith.addf
// CHECK-DAG: arith.maximumf
// CHECK-COUNT-3: gpu.barrier
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return
func.func @sibling_columns(%x: tensor<4x512x64xf32>, %dy: tensor<4x512x64xf32>) -> (tensor<4x64xf32>, tensor<4x64xf32>, tensor<4x512x64xf32>) {
  %0:3 = genesis.fusion %x, %dy : (tensor<4x512x64xf32>, tensor<4x512x64xf32>) -> (tensor<4x64xf32>, tensor<4x64xf32>, tensor<4x512x64xf32>) {
  ^bb0(%a: tensor<4x512x64xf32>, %b: tensor<4x512x64xf32>):
    %1 = genesis.mul %a, %b : tensor<4x512x64xf32>
    %2 = genesis.reduce_sum %1 dims [1] : tensor<4x512x64xf32>
    %3 = genesis.reduce_max %b dims [1] : tensor<4x512x64xf32>
    %4 = genesis.neg %b : tensor<4x512x64xf32>
    genesis.yield %2, %3, %4 : tensor<4x64xf32>, tensor<4x64xf32>, tensor<4x512x64xf32>
  }
  return %0#0, %0#1, %0#2 : tensor<4x64xf32>, tensor<4x64xf32>, tensor<4x512x64xf32>
}

// -----

// Two row sums of one fusion: a warp per row carries both, each lane taking
// 4 consecutive elements per step (one 16-byte load of the row and of the
// weight), then a butterfly each; lane 0 stores both.
// CHECK-LABEL: func.func @sibling_rows(
// CHECK: genesis.launch = #genesis.launch<grid = [8, 1, 1], block = [256, 1, 1], shared = 0>
// CHECK: scf.for {{.+}} step %c128 iter_args({{.+}}) -> (f32, f32)
// CHECK: vector.load {{.+}} : memref<16384xf32>, vector<4xf32>
// CHECK: vector.load {{.+}} : memref<256xf32>, vector<4xf32>
// CHECK-COUNT-10: gpu.shuffle xor
// CHECK: memref.store
// CHECK: memref.store
func.func @sibling_rows(%dy: tensor<64x256xf32>, %w: tensor<256xf32>) -> (tensor<64xf32>, tensor<64xf32>) {
  %0:2 = genesis.fusion %dy, %w : (tensor<64x256xf32>, tensor<256xf32>) -> (tensor<64xf32>, tensor<64xf32>) {
  ^bb0(%a: tensor<64x256xf32>, %b: tensor<256xf32>):
    %1 = genesis.broadcast_in_dim %b, [1] : tensor<256xf32> -> tensor<64x256xf32>
    %2 = genesis.mul %a, %1 : tensor<64x256xf32>
    %3 = genesis.reduce_sum %2 dims [1] : tensor<64x256xf32>
    %4 = genesis.reduce_sum %a dims [1] : tensor<64x256xf32>
    genesis.yield %3, %4 : tensor<64xf32>, tensor<64xf32>
  }
  return %0#0, %0#1 : tensor<64xf32>, tensor<64xf32>
}

// -----

// A reduction of a rank-0 tensor over no dimension (the differential
// fuzzer's): one thread, no vector lanes (the row kind's lanes look at the
// last dimension only when there is one).
// CHECK-LABEL: func.func @scalar_min(
// CHECK: genesis.launch = #genesis.launch<grid = [1, 1, 1], block = [256, 1, 1], shared = 0>
// CHECK-NOT: vector.load
// CHECK: gpu.return
func.func @scalar_min(%x: tensor<f32>) -> tensor<f32> {
  %0 = genesis.fusion %x : (tensor<f32>) -> tensor<f32> {
  ^bb0(%a: tensor<f32>):
    %1 = genesis.abs %a : tensor<f32>
    %2 = genesis.reduce_min %1 dims [] : tensor<f32>
    genesis.yield %2 : tensor<f32>
  }
  return %0 : tensor<f32>
}

// -----

// A row epilogue: the reduction fusion's only result, read back along the
// row by the loop fusion, merges with it into one fusion and one kernel (a
// block per row of 64 threads holding 4 columns each, 2 warps: the sum
// accumulates in f64, then the epilogue's stores).
// CHECK-LABEL: func.func @epilogue(
// CHECK: %[[F:.+]] = genesis.fusion %arg1, %arg0 {genesis.kernel = @epilogue_fusion0, genesis.launch = #genesis.launch<grid = [16, 1, 1], block = [64, 1, 1], shared = 0>}
// CHECK-NOT: genesis.fusion
// CHECK: gpu.func @epilogue_fusion0({{.+}}) workgroup({{.+}} : memref<2xf64, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}) kernel
// CHECK: arith.extf {{.+}} : f32 to f64
// CHECK: gpu.barrier
// CHECK: arith.truncf {{.+}} : f64 to f32
// CHECK: memref.store
func.func @epilogue(%y: tensor<16x200xf32>, %g: tensor<16x200xf32>) -> tensor<16x200xf32> {
  %r = genesis.fusion %g, %y : (tensor<16x200xf32>, tensor<16x200xf32>) -> tensor<16x1xf32> {
  ^bb0(%a: tensor<16x200xf32>, %b: tensor<16x200xf32>):
    %0 = genesis.mul %a, %b : tensor<16x200xf32>
    %1 = genesis.reduce_sum %0 dims [1] keepdim : tensor<16x200xf32>
    genesis.yield %1 : tensor<16x1xf32>
  }
  %d = genesis.fusion %g, %r, %y : (tensor<16x200xf32>, tensor<16x1xf32>, tensor<16x200xf32>) -> tensor<16x200xf32> {
  ^bb0(%a: tensor<16x200xf32>, %s: tensor<16x1xf32>, %b: tensor<16x200xf32>):
    %0 = genesis.broadcast_in_dim %s, [0, 1] : tensor<16x1xf32> -> tensor<16x200xf32>
    %1 = genesis.sub %a, %0 : tensor<16x200xf32>
    %2 = genesis.mul %b, %1 : tensor<16x200xf32>
    genesis.yield %2 : tensor<16x200xf32>
  }
  return %d : tensor<16x200xf32>
}

// -----

// A chain of row reductions (rms_norm's backward as fused): the second sum
// uses the first, the last fusion uses both, and xhat, h and the broadcast
// rsqrt are used only by the next fusion. The three fusions merge into one,
// which yields dx alone: one kernel, a block per row (32 threads of 3
// columns), one shared array per reduction.
// CHECK-LABEL: func.func @chain(
// CHECK: genesis.fusion %arg0, %arg1, %arg2 {genesis.kernel = @chain_fusion0, genesis.launch = #genesis.launch<grid = [4, 1, 1], block = [32, 1, 1], shared = 0>} : (tensor<4x96xf32>, tensor<4x96xf32>, tensor<96xf32>) -> tensor<4x96xf32>
// CHECK-NOT: genesis.fusion
// CHECK: gpu.func @chain_fusion0({{.+}}) workgroup(%{{.+}} : memref<1xf64, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.+}} : memref<1xf64, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}) kernel
// CHECK-COUNT-2: gpu.barrier
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return
func.func @chain(%x: tensor<4x96xf32>, %g: tensor<4x96xf32>, %w: tensor<96xf32>) -> tensor<4x96xf32> {
  %0 = genesis.fusion %x : (tensor<4x96xf32>) -> tensor<4x1xf32> {
  ^bb0(%a: tensor<4x96xf32>):
    %1 = genesis.mul %a, %a : tensor<4x96xf32>
    %2 = genesis.reduce_sum %1 dims [1] keepdim : tensor<4x96xf32>
    genesis.yield %2 : tensor<4x1xf32>
  }
  %1:4 = genesis.fusion %0, %x, %g, %w : (tensor<4x1xf32>, tensor<4x96xf32>, tensor<4x96xf32>, tensor<96xf32>) -> (tensor<4x96xf32>, tensor<4x96xf32>, tensor<4x96xf32>, tensor<4x1xf32>) {
  ^bb0(%s: tensor<4x1xf32>, %a: tensor<4x96xf32>, %b: tensor<4x96xf32>, %c: tensor<96xf32>):
    %2 = genesis.rsqrt %s : tensor<4x1xf32>
    %3 = genesis.broadcast_in_dim %2, [0, 1] : tensor<4x1xf32> -> tensor<4x96xf32>
    %4 = genesis.mul %a, %3 : tensor<4x96xf32>
    %5 = genesis.broadcast_in_dim %c, [1] : tensor<96xf32> -> tensor<4x96xf32>
    %6 = genesis.mul %b, %5 : tensor<4x96xf32>
    %7 = genesis.mul %6, %4 : tensor<4x96xf32>
    %8 = genesis.reduce_sum %7 dims [1] keepdim : tensor<4x96xf32>
    genesis.yield %3, %4, %6, %8 : tensor<4x96xf32>, tensor<4x96xf32>, tensor<4x96xf32>, tensor<4x1xf32>
  }
  %2 = genesis.fusion %1#3, %1#1, %1#2, %1#0 : (tensor<4x1xf32>, tensor<4x96xf32>, tensor<4x96xf32>, tensor<4x96xf32>) -> tensor<4x96xf32> {
  ^bb0(%t: tensor<4x1xf32>, %xh: tensor<4x96xf32>, %h: tensor<4x96xf32>, %rb: tensor<4x96xf32>):
    %3 = genesis.broadcast_in_dim %t, [0, 1] : tensor<4x1xf32> -> tensor<4x96xf32>
    %4 = genesis.mul %xh, %3 : tensor<4x96xf32>
    %5 = genesis.sub %h, %4 : tensor<4x96xf32>
    %6 = genesis.mul %rb, %5 : tensor<4x96xf32>
    genesis.yield %6 : tensor<4x96xf32>
  }
  return %2 : tensor<4x96xf32>
}

// -----

// A multi-output column reduction: the product is both summed over the rows
// and yielded; lanes past the 45 columns must not store it.
// CHECK-LABEL: gpu.func @multi_output_fusion0(
// CHECK-SAME: memref<70x45xf32>, %{{.+}}: memref<45xf32>)
// CHECK: scf.if
// CHECK: memref.store {{.+}} : memref<70x45xf32>
// CHECK: gpu.barrier
func.func @multi_output(%a: tensor<70x45xf32>, %b: tensor<70x45xf32>) -> (tensor<70x45xf32>, tensor<45xf32>) {
  %0:2 = genesis.fusion %a, %b : (tensor<70x45xf32>, tensor<70x45xf32>) -> (tensor<70x45xf32>, tensor<45xf32>) {
  ^bb0(%x: tensor<70x45xf32>, %y: tensor<70x45xf32>):
    %1 = genesis.mul %x, %y : tensor<70x45xf32>
    %2 = genesis.reduce_sum %1 dims [0] : tensor<70x45xf32>
    genesis.yield %1, %2 : tensor<70x45xf32>, tensor<45xf32>
  }
  return %0#0, %0#1 : tensor<70x45xf32>, tensor<45xf32>
}

// -----

// A reduce_min producer does not merge into a row fusion (the row kernel
// combines sums and maxima): both fusions keep their kernels.
// CHECK-LABEL: func.func @min_not_merged(
// CHECK: genesis.fusion %arg0 {genesis.kernel = @min_not_merged_fusion0
// CHECK: genesis.fusion %arg0, %{{.+}} {genesis.kernel = @min_not_merged_fusion1
func.func @min_not_merged(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %0 = genesis.fusion %x : (tensor<8x64xf32>) -> tensor<8x1xf32> {
  ^bb0(%a: tensor<8x64xf32>):
    %1 = genesis.reduce_min %a dims [1] keepdim : tensor<8x64xf32>
    genesis.yield %1 : tensor<8x1xf32>
  }
  %1 = genesis.fusion %x, %0 : (tensor<8x64xf32>, tensor<8x1xf32>) -> tensor<8x64xf32> {
  ^bb0(%a: tensor<8x64xf32>, %m: tensor<8x1xf32>):
    %2 = genesis.broadcast_in_dim %m, [0, 1] : tensor<8x1xf32> -> tensor<8x64xf32>
    %3 = genesis.sub %a, %2 : tensor<8x64xf32>
    genesis.yield %3 : tensor<8x64xf32>
  }
  return %1 : tensor<8x64xf32>
}

// -----

// A wide cross-entropy whose row is too long to hold in registers (131072
// bf16 classes: 128 a thread of 1024): each thread scans its vectors of 8
// with a running max, a rescaled sum of exponentials and, for the label
// smoothing, a sum of logits; three block reductions combine them.
// CHECK-LABEL: func.func @wide_loss_streamed(
// CHECK: gpu.func @wide_loss_streamed_cross_entropy0(
// CHECK: scf.for %{{.+}} = %thread_id_x to %c16384{{.*}} step %c1024{{.*}} iter_args({{.+}}) -> (f32, f32, f32)
// CHECK: vector.load %{{.+}} : memref<262144xbf16>, vector<8xbf16>
// CHECK: math.exp
// CHECK: scf.yield
// CHECK-COUNT-3: gpu.barrier
// CHECK: math.log
func.func @wide_loss_streamed(%x: tensor<2x131072xbf16>, %l: tensor<2xi64>) -> tensor<2xf32> {
  %0 = genesis.cross_entropy %x, %l {reduction = 0 : i32, label_smoothing = 0.1} : (tensor<2x131072xbf16>, tensor<2xi64>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// The gradient of a wide cross-entropy (reduction none, 2048 bf16 classes):
// a block per row of 256 threads reading the row twice in vectors of 8
// classes, first for the running max and rescaled sum of exponentials
// (combined by two block reductions), then for the gradient, stored as
// vectors; no thread holds the row.
// CHECK-LABEL: func.func @wide_loss_grad(
// CHECK: genesis.cross_entropy_grad {{.+}}genesis.kernel = @wide_loss_grad_cross_entropy_grad0, genesis.launch = #genesis.launch<grid = [4, 1, 1], block = [256, 1, 1], shared = 0>
// CHECK: gpu.func @wide_loss_grad_cross_entropy_grad0(
// CHECK: scf.for %[[S:.+]] = %thread_id_x to %c256{{.*}} step %c256{{.*}} iter_args({{.+}}) -> (f32, f32)
// CHECK: vector.load %{{.+}} : memref<8192xbf16>, vector<8xbf16>
// CHECK: arith.maximumf
// CHECK: math.exp
// CHECK: scf.yield
// CHECK: gpu.barrier
// CHECK: scf.for %{{.+}} = %thread_id_x to %c256{{.*}} step %c256
// CHECK: vector.load %{{.+}} : memref<8192xbf16>, vector<8xbf16>
// CHECK: arith.truncf %{{.+}} : f32 to bf16
// CHECK: vector.store %{{.+}} : memref<8192xbf16>, vector<8xbf16>
func.func @wide_loss_grad(%x: tensor<4x2048xbf16>, %l: tensor<4xi64>, %g: tensor<4xf32>) -> tensor<4x2048xbf16> {
  %0 = genesis.cross_entropy_grad %x, %l, %g {reduction = 0 : i32} : (tensor<4x2048xbf16>, tensor<4xi64>, tensor<4xf32>) -> tensor<4x2048xbf16>
  return %0 : tensor<4x2048xbf16>
}

// -----

// Any other op kernel (an f64 softmax): one outer iteration per thread,
// the body called over [position, position + 1) (12 rows, one block).
// CHECK-LABEL: func.func @rows(
// CHECK: genesis.softmax {{.+}}genesis.kernel = @rows_softmax0, genesis.launch = #genesis.launch<grid = [1, 1, 1], block = [128, 1, 1], shared = 0>
// CHECK: func.func private @rows_softmax0_body(%{{.+}}: memref<12x40xf64>, %{{.+}}: memref<12x40xf64>, %[[BEGIN:.+]]: index, %[[END:.+]]: index)
// CHECK: scf.for %{{.+}} = %[[BEGIN]] to %[[END]] step %c1
// CHECK: gpu.func @rows_softmax0(
// CHECK: %[[FIRST:.+]] = arith.addi %{{.+}}, %thread_id_x
// CHECK: %[[NEXT:.+]] = arith.addi %[[FIRST]], %c1
// CHECK: %[[CLAMPED:.+]] = arith.minui %[[NEXT]], %c12
// CHECK: call @rows_softmax0_body({{.+}}, %[[FIRST]], %[[CLAMPED]])
func.func @rows(%x: tensor<12x40xf64>) -> tensor<12x40xf64> {
  %0 = genesis.softmax %x dim 1 : tensor<12x40xf64>
  return %0 : tensor<12x40xf64>
}

// -----

// An f32 softmax whose row is wider than a block holds (65536 elements, 64 a
// thread) takes the op kernel, a thread per row, not the row emitter, which
// unrolls over the row: the 2^30-element row of issue 14 compiled for more
// than a minute. Compile time does not grow with the row.
// CHECK-LABEL: func.func @wide_row(
// CHECK: genesis.softmax {{.+}}genesis.kernel = @wide_row_softmax0, genesis.launch = #genesis.launch<grid = [1, 1, 1], block = [128, 1, 1], shared = 0>
// CHECK: func.func private @wide_row_softmax0_body(
func.func @wide_row(%x: tensor<1x1073741824xf32>) -> tensor<1x1073741824xf32> {
  %0 = genesis.softmax %x dim 1 : tensor<1x1073741824xf32>
  return %0 : tensor<1x1073741824xf32>
}

// -----

// A 16-bit loop fusion: 8 elements (16 bytes) per iteration. The transposed
// input keeps its last dimension, so its 8 lanes are consecutive: one vector
// load. The pad at offset 64 (a multiple of 8) also; the one at offset 3
// reads per element.
// CHECK-LABEL: func.func @moves16(
// CHECK: gpu.func @moves16_fusion0(%[[T:[a-z0-9]+]]: memref<2x3x16x64xbf16>, %[[OUT:[a-z0-9]+]]: memref<2x16x3x64xbf16>) kernel
// CHECK: vector.load %{{.+}}[%{{.+}}] {alignment = 16 : i64} : memref<6144xbf16>, vector<8xbf16>
// CHECK: vector.store %{{.+}}, %{{.+}}[%{{.+}}] {alignment = 16 : i64} : memref<6144xbf16>, vector<8xbf16>
// CHECK: gpu.func @moves16_fusion1(%[[P:[a-z0-9]+]]: memref<4x64xbf16>, %{{.+}}: memref<4x128xbf16>) kernel
// CHECK: vector.load %{{.+}}[%{{.+}}] {alignment = 16 : i64} : memref<256xbf16>, vector<8xbf16>
// CHECK: gpu.func @moves16_fusion2(
// CHECK-NOT: vector.load
// CHECK: memref.load
// CHECK: gpu.return
func.func @moves16(%a: tensor<2x3x16x64xbf16>, %p: tensor<4x64xbf16>, %q: tensor<4x61xbf16>) -> (tensor<2x16x3x64xbf16>, tensor<4x128xbf16>, tensor<4x64xbf16>) {
  %t = genesis.fusion %a : (tensor<2x3x16x64xbf16>) -> tensor<2x16x3x64xbf16> {
  ^bb0(%x: tensor<2x3x16x64xbf16>):
    %0 = genesis.transpose %x, [0, 2, 1, 3] : tensor<2x3x16x64xbf16>
    genesis.yield %0 : tensor<2x16x3x64xbf16>
  }
  %aligned = genesis.fusion %p : (tensor<4x64xbf16>) -> tensor<4x128xbf16> {
  ^bb0(%x: tensor<4x64xbf16>):
    %0 = genesis.pad %x low [0, 64] high [0, 0] interior [0, 0] : tensor<4x64xbf16>
    genesis.yield %0 : tensor<4x128xbf16>
  }
  %unaligned = genesis.fusion %q : (tensor<4x61xbf16>) -> tensor<4x64xbf16> {
  ^bb0(%x: tensor<4x61xbf16>):
    %0 = genesis.pad %x low [0, 3] high [0, 0] interior [0, 0] : tensor<4x61xbf16>
    genesis.yield %0 : tensor<4x64xbf16>
  }
  return %t, %aligned, %unaligned : tensor<2x16x3x64xbf16>, tensor<4x128xbf16>, tensor<4x64xbf16>
}

// -----

// A GEMM of one lhs row against a [999, 896] bf16 weight: the matrix-vector
// emitter. 999 columns are too few warps for HBM, so two warps share a
// column (each half of K's 112 vectors: 2 a lane; 4 columns a block, 250
// blocks), each lane's 16-byte weight and lhs loads unrolled, the lanes
// summed by a butterfly, the two halves added in order through shared
// memory after a barrier, lane 0 of the first adding the bias and rounding
// to bf16. Nine rows stay a cuBLASLt GEMM (no kernel).
// CHECK-LABEL: func.func @gemv(
// CHECK: genesis.library_call bias {{.+}}genesis.kernel = @gemv_gemv0, genesis.launch = #genesis.launch<grid = [250, 1, 1], block = [256, 1, 1], shared = 0>
// CHECK-LABEL: func.func @gemm_of_nine_rows(
// CHECK-NOT: genesis.kernel
// CHECK: return
// CHECK: gpu.func @gemv_gemv0({{.+}}) workgroup(%{{.+}} : memref<8xf32, #gpu.address_space<workgroup>>
// CHECK-COUNT-2: vector.load %{{.+}} : memref<895104xbf16>, vector<8xbf16>
// CHECK-NOT: vector.load %{{.+}} : memref<895104xbf16>
// CHECK-COUNT-5: gpu.shuffle  xor
// CHECK: gpu.barrier
// CHECK: scf.if
// CHECK: arith.truncf %{{.+}} : f32 to bf16
func.func @gemv(%x: tensor<1x896xbf16>, %w: tensor<999x896xbf16>, %b: tensor<999xbf16>) -> tensor<1x999xbf16> {
  %0 = genesis.library_call bias %x, %w transpose_rhs bias %b : (tensor<1x896xbf16>, tensor<999x896xbf16>, tensor<999xbf16>) -> tensor<1x999xbf16>
  return %0 : tensor<1x999xbf16>
}
func.func @gemm_of_nine_rows(%x: tensor<9x896xbf16>, %w: tensor<999x896xbf16>) -> tensor<9x999xbf16> {
  %0 = genesis.library_call none %x, %w transpose_rhs : (tensor<9x896xbf16>, tensor<999x896xbf16>) -> tensor<9x999xbf16>
  return %0 : tensor<9x999xbf16>
}

// -----

// Weights that no function of the module updates (a generation plan's,
// named by genesis.name) are loaded before the kernel waits for the kernels
// launched ahead of it: every weight load, then griddepcontrol.wait, then
// the lhs. The generic wait at the kernel's start is then left out
// (genesis-compile-cuda.test checks the PTX). A weight that a function
// returns updated is loaded after the wait, which the codegen puts first.
// CHECK-LABEL: gpu.func @read_only_weight_gemv0(
// CHECK-COUNT-2: vector.load %{{.+}} : memref<895104xbf16>, vector<8xbf16>
// CHECK-NOT: memref<896xbf16>
// CHECK: nvvm.griddepcontrol wait
// CHECK: vector.load %{{.+}} : memref<896xbf16>, vector<8xbf16>
// CHECK: gpu.return
// CHECK-LABEL: gpu.func @updated_weight_gemv0(
// CHECK-NOT: nvvm.griddepcontrol
// CHECK: gpu.return
func.func @read_only_weight(%x: tensor<1x896xbf16>, %w: tensor<999x896xbf16> {genesis.name = "w"}) -> tensor<1x999xbf16> {
  %0 = genesis.library_call none %x, %w transpose_rhs : (tensor<1x896xbf16>, tensor<999x896xbf16>) -> tensor<1x999xbf16>
  return %0 : tensor<1x999xbf16>
}
func.func @updated_weight(%x: tensor<1x896xbf16>, %w: tensor<999x896xbf16> {genesis.name = "u"}) -> (tensor<1x999xbf16>, tensor<999x896xbf16> {genesis.name = "u"}) {
  %0 = genesis.library_call none %x, %w transpose_rhs : (tensor<1x896xbf16>, tensor<999x896xbf16>) -> tensor<1x999xbf16>
  %1 = genesis.add %w, %w : tensor<999x896xbf16>
  return %0, %1 : tensor<1x999xbf16>, tensor<999x896xbf16>
}

// -----

// A matrix-vector fusion (genesis-fuse-matrix-vector) of three segments:
// gate and up (64 columns of K = 512, with silu(gate) * up as the
// epilogue), q (96 columns) and k, v (16 columns each). Few columns: every
// segment splits K's 64 vectors over 2 warps (one 16-byte vector a lane
// each; 4 columns a block; slices added through 8 warps x 2 rows x 2
// products of shared memory after a barrier), so the grid is 16 + 24 + 4
// blocks. Each segment runs under its block range; the epilogue's silu is
// computed from the rounded products, which are never stored.
// CHECK-LABEL: func.func @segments(
// CHECK: genesis.fusion {{.+}}genesis.kernel = @segments_gemv0, genesis.launch = #genesis.launch<grid = [44, 1, 1], block = [256, 1, 1], shared = 0>
// CHECK: gpu.func @segments_gemv0({{.+}}) workgroup(%{{.+}} : memref<32xf32, #gpu.address_space<workgroup>>
// CHECK-COUNT-3: gpu.barrier
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return
func.func @segments(%x: tensor<2x512xbf16>, %wg: tensor<64x512xbf16>, %wu: tensor<64x512xbf16>, %wq: tensor<96x512xbf16>, %bq: tensor<96xbf16>, %wk: tensor<16x512xbf16>, %wv: tensor<16x512xbf16>) -> (tensor<2x64xbf16>, tensor<2x96xbf16>, tensor<2x16xbf16>, tensor<2x16xbf16>) {
  %0:4 = genesis.fusion %x, %wg, %wu, %wq, %bq, %wk, %wv : (tensor<2x512xbf16>, tensor<64x512xbf16>, tensor<64x512xbf16>, tensor<96x512xbf16>, tensor<96xbf16>, tensor<16x512xbf16>, tensor<16x512xbf16>) -> (tensor<2x64xbf16>, tensor<2x96xbf16>, tensor<2x16xbf16>, tensor<2x16xbf16>) {
  ^bb0(%a: tensor<2x512xbf16>, %g: tensor<64x512xbf16>, %u: tensor<64x512xbf16>, %q: tensor<96x512xbf16>, %b: tensor<96xbf16>, %k: tensor<16x512xbf16>, %v: tensor<16x512xbf16>):
    %1 = genesis.library_call none %a, %g transpose_rhs : (tensor<2x512xbf16>, tensor<64x512xbf16>) -> tensor<2x64xbf16>
    %2 = genesis.library_call none %a, %u transpose_rhs : (tensor<2x512xbf16>, tensor<64x512xbf16>) -> tensor<2x64xbf16>
    %3 = genesis.library_call bias %a, %q transpose_rhs bias %b : (tensor<2x512xbf16>, tensor<96x512xbf16>, tensor<96xbf16>) -> tensor<2x96xbf16>
    %4 = genesis.library_call none %a, %k transpose_rhs : (tensor<2x512xbf16>, tensor<16x512xbf16>) -> tensor<2x16xbf16>
    %5 = genesis.library_call none %a, %v transpose_rhs : (tensor<2x512xbf16>, tensor<16x512xbf16>) -> tensor<2x16xbf16>
    %6 = genesis.cast %1 : tensor<2x64xbf16> to tensor<2x64xf32>
    %7 = genesis.silu %6 : tensor<2x64xf32>
    %8 = genesis.cast %2 : tensor<2x64xbf16> to tensor<2x64xf32>
    %9 = genesis.mul %7, %8 : tensor<2x64xf32>
    %10 = genesis.cast %9 : tensor<2x64xf32> to tensor<2x64xbf16>
    genesis.yield %10, %3, %4, %5 : tensor<2x64xbf16>, tensor<2x96xbf16>, tensor<2x16xbf16>, tensor<2x16xbf16>
  }
  return %0#0, %0#1, %0#2, %0#3 : tensor<2x64xbf16>, tensor<2x96xbf16>, tensor<2x16xbf16>, tensor<2x16xbf16>
}

// -----

// A matrix-vector fusion with a prologue (genesis-fuse-matrix-vector): the
// residual add and RMSNorm of a token's 2 rows of 512. Every block
// computes the lhs into shared memory (2 x 512 bf16), each row's sum of
// squares as a block reduction (an f64 buffer per row), the first block
// storing the residual sum; a barrier; then the product's warps read the
// lhs from shared memory (64 columns, K split over 2 warps: 16 blocks).
// CHECK-LABEL: func.func @prologue(
// CHECK: genesis.fusion {{.+}}genesis.kernel = @prologue_gemv0, genesis.launch = #genesis.launch<grid = [16, 1, 1], block = [256, 1, 1], shared = 0>
// CHECK: gpu.func @prologue_gemv0({{.+}}) workgroup(%{{.+}} : memref<16xf32, #gpu.address_space<workgroup>> {{.+}}, %[[LHS:.+]] : memref<1024xbf16, #gpu.address_space<workgroup>> {{.+}}, %{{.+}} : memref<8xf64, #gpu.address_space<workgroup>> {{.+}}, %{{.+}} : memref<8xf64, #gpu.address_space<workgroup>> {{.+}}) kernel
// CHECK: arith.extf {{.+}} : f32 to f64
// CHECK: gpu.barrier
// CHECK: memref.store {{.+}}, %[[LHS]]
// CHECK: gpu.barrier
// CHECK: memref.store {{.+}}, %[[LHS]]
// CHECK: gpu.barrier
// CHECK: vector.load %[[LHS]]
// CHECK: gpu.barrier
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return
func.func @prologue(%x: tensor<2x512xbf16>, %d: tensor<2x512xbf16>, %g: tensor<512xbf16>, %w: tensor<64x512xbf16>) -> (tensor<2x512xbf16>, tensor<2x64xbf16>) {
  %0:2 = genesis.fusion %x, %d, %g, %w : (tensor<2x512xbf16>, tensor<2x512xbf16>, tensor<512xbf16>, tensor<64x512xbf16>) -> (tensor<2x512xbf16>, tensor<2x64xbf16>) {
  ^bb0(%a: tensor<2x512xbf16>, %b: tensor<2x512xbf16>, %c: tensor<512xbf16>, %e: tensor<64x512xbf16>):
    %n:2 = genesis.fusion %a, %b, %c : (tensor<2x512xbf16>, tensor<2x512xbf16>, tensor<512xbf16>) -> (tensor<2x512xbf16>, tensor<2x512xbf16>) {
    ^bb0(%p: tensor<2x512xbf16>, %q: tensor<2x512xbf16>, %r: tensor<512xbf16>):
      %1 = genesis.cast %p : tensor<2x512xbf16> to tensor<2x512xf32>
      %2 = genesis.cast %q : tensor<2x512xbf16> to tensor<2x512xf32>
      %3 = genesis.add %1, %2 : tensor<2x512xf32>
      %4 = genesis.cast %3 : tensor<2x512xf32> to tensor<2x512xbf16>
      %5 = genesis.cast %4 : tensor<2x512xbf16> to tensor<2x512xf32>
      %6 = genesis.mul %5, %5 : tensor<2x512xf32>
      %7 = genesis.reduce_sum %6 dims [1] keepdim : tensor<2x512xf32>
      %8 = genesis.rsqrt %7 : tensor<2x1xf32>
      %9 = genesis.broadcast_in_dim %8, [0, 1] : tensor<2x1xf32> -> tensor<2x512xf32>
      %10 = genesis.mul %5, %9 : tensor<2x512xf32>
      %11 = genesis.cast %r : tensor<512xbf16> to tensor<512xf32>
      %12 = genesis.broadcast_in_dim %11, [1] : tensor<512xf32> -> tensor<2x512xf32>
      %13 = genesis.mul %10, %12 : tensor<2x512xf32>
      %14 = genesis.cast %13 : tensor<2x512xf32> to tensor<2x512xbf16>
      genesis.yield %4, %14 : tensor<2x512xbf16>, tensor<2x512xbf16>
    }
    %y = genesis.library_call none %n#1, %e transpose_rhs : (tensor<2x512xbf16>, tensor<64x512xbf16>) -> tensor<2x64xbf16>
    genesis.yield %n#0, %y : tensor<2x512xbf16>, tensor<2x64xbf16>
  }
  return %0#0, %0#1 : tensor<2x512xbf16>, tensor<2x64xbf16>
}

// -----

// A decode step's attention against a bf16 cache: 7 blocks per key/value
// head (2), one of the group's 7 query rows each, of 16 warps
// (DecodeAttentionLayout: 1024 keys, 2 a lane), the row in shared memory,
// each lane's key rows loaded as 16-byte vectors and widened, the row's
// maximum and sum as block reductions, the owner lanes' probabilities
// shuffled to the warp.
// CHECK-LABEL: func.func @decode_attention(
// CHECK: genesis.decode_attention {{.+}}genesis.kernel = @decode_attention_decode_attention0, genesis.launch = #genesis.launch<grid = [14, 1, 1], block = [512, 1, 1], shared = 0>
// CHECK: gpu.func @decode_attention_decode_attention0(
// CHECK: vector.load %{{.+}} : memref<131072xbf16>, vector<8xbf16>
// CHECK: arith.extf %{{.+}} : bf16 to f32
// CHECK: math.exp
// CHECK: gpu.shuffle  idx
func.func @decode_attention(%q: tensor<1x14x1x64xf32>, %k: tensor<1x2x1024x64xbf16>, %v: tensor<1x2x1024x64xbf16>, %m: tensor<1x14x1x1024xf32>) -> tensor<1x14x1x64xf32> {
  %0 = genesis.decode_attention %q, %k, %v mask %m scale 0.125 : (tensor<1x14x1x64xf32>, tensor<1x2x1024x64xbf16>, tensor<1x2x1024x64xbf16>, tensor<1x14x1x1024xf32>) -> tensor<1x14x1x64xf32>
  return %0 : tensor<1x14x1x64xf32>
}
