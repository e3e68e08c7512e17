//===- CudaBlockReductions.cpp - Warp and block reductions ----------------===//
//
// The reductions every row-shaped GPU emitter combines its partial results
// with: a butterfly of xor shuffles within a warp, then the warp totals
// through shared memory, added by every thread in warp order (deterministic).
//
//===----------------------------------------------------------------------===//

#include "dialect/IR/GenesisOps.h"
#include "passes/Conversion/CudaEmitters.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"

#include <algorithm>

using namespace mlir;

namespace genesis::cuda {

/// Combines `value` across the 32 lanes of each warp with `combine`
/// (butterfly of xor shuffles: every lane ends with the total).
Value warpButterfly(OpBuilder &b, Location loc, Value value,
                    function_ref<Value(Value, Value)> combine) {
  Value width = arith::ConstantIntOp::create(b, loc, b.getI32Type(), kWarp);
  for (int64_t offset = kWarp / 2; offset > 0; offset /= 2) {
    Value distance =
        arith::ConstantIntOp::create(b, loc, b.getI32Type(), offset);
    Value other = gpu::ShuffleOp::create(b, loc, value, distance, width,
                                         gpu::ShuffleMode::XOR)
                      .getShuffleResult();
    value = combine(value, other);
  }
  return value;
}

/// Max or sum of f32 values as combining functions.
Value combineMaxOrSum(OpBuilder &b, Location loc, Value x, Value y, bool max) {
  return max ? arith::MaximumFOp::create(b, loc, x, y).getResult()
             : arith::AddFOp::create(b, loc, x, y).getResult();
}

/// Threads of a block per row of `columns` elements: a multiple of 32 up
/// to 1024 giving each thread at least 4 elements when the row allows, so
/// that short rows (attention's 1024 keys) do not spend a block's barriers
/// on one element per thread.
int64_t rowBlockThreads(int64_t columns) {
  return std::clamp<int64_t>(ceilDiv(ceilDiv(columns, 4), kWarp) * kWarp, kWarp,
                             1024);
}

/// Combines each of `partials` (max or sum, as `maxes` says) over a block
/// of `warps` warps: a warp butterfly, the warp totals through the matching
/// `shareds` (one slot per warp) and one barrier, then every thread combines
/// them in warp order, so all threads get the same, deterministic totals.
/// `shareds` must not be reused without a barrier.
SmallVector<Value> blockAllReduceEach(OpBuilder &b, Location loc,
                                      ArrayRef<Value> partials,
                                      ArrayRef<Value> shareds,
                                      ArrayRef<bool> maxes, int64_t warps) {
  IndexMath im{b, loc};
  Value thread = im.threadId();
  Value lane = im.rem(thread, kWarp), warp = im.div(thread, kWarp);
  SmallVector<Value> warpTotals;
  for (auto [partial, isMax] : llvm::zip(partials, maxes)) {
    bool max = isMax; // a lambda captures variables, not bindings (C++17)
    warpTotals.push_back(warpButterfly(b, loc, partial, [&](Value p, Value q) {
      return combineMaxOrSum(b, loc, p, q, max);
    }));
  }
  auto first = scf::IfOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane, im.c(0)),
      /*withElse=*/false);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&first.getThenRegion().front());
    for (auto [total, shared] : llvm::zip(warpTotals, shareds))
      memref::StoreOp::create(b, loc, total, shared, warp);
  }
  gpu::BarrierOp::create(b, loc);
  SmallVector<Value> totals;
  for (auto [shared, max] : llvm::zip(shareds, maxes)) {
    Value total = memref::LoadOp::create(b, loc, shared, im.c(0));
    for (int64_t w = 1; w < warps; ++w)
      total = combineMaxOrSum(
          b, loc, total, memref::LoadOp::create(b, loc, shared, im.c(w)), max);
    totals.push_back(total);
  }
  return totals;
}

Value blockAllReduce(OpBuilder &b, Location loc, Value partial, Value shared,
                     int64_t warps, bool max) {
  return blockAllReduceEach(b, loc, {partial}, {shared}, {max}, warps)[0];
}

} // namespace genesis::cuda
