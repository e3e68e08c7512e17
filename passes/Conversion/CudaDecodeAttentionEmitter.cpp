//===- CudaDecodeAttentionEmitter.cpp - decode attention in one block -----===//
//
// The decode attention emitter of genesis-lower-cuda: genesis.decode_attention
// (a decode step's few query rows per key/value head against a KV cache,
// f32 or 16-bit) as one kernel, flash-decoding inside a block.
//
//===----------------------------------------------------------------------===//

#include "dialect/IR/GenesisOps.h"
#include "passes/Analysis/DecodeAttentionLayout.h"
#include "passes/Conversion/CudaEmitters.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"

#include <cmath>

using namespace mlir;

namespace genesis::cuda {

bool isDecodeAttention(Operation *op) { return isa<DecodeAttentionOp>(op); }

namespace {

/// Lanes of one vector load of a key row: up to 16 bytes, dividing D.
int64_t keyVectorWidth(Type element, int64_t depth) {
  int64_t width = 16 / (element.getIntOrFloatBitWidth() / 8);
  while (depth % width != 0)
    width /= 2;
  return width;
}

} // namespace

/// Block (b, kv, p) of B * Hkv * P computes rows [p * R / P, (p + 1) * R / P)
/// of the R = Hq / Hkv * S query rows of key/value head kv (GQA: each key
/// and value is loaded once for the block's rows), in W warps
/// (DecodeAttentionLayout: P = rowBlocks, R / P = blockRows):
/// 1. the block's query rows go to shared memory;
/// 2. lane l of warp w scores its keys j = (w * K + i) * 32 + l (i < K)
///    against every row, reading the mask first and loading a key only if
///    some row sees it (a decode step's cache is mostly empty positions),
///    the scores kept in registers;
/// 3. each row's maximum and sum of exponentials are block reductions
///    (warp butterflies, warp totals in shared memory, added in warp order:
///    deterministic), so every probability is final, with no rescaling;
/// 4. each warp walks its 32 * K keys in order; the owner lane's
///    probabilities reach the warp by shuffles, a key no row sees is
///    skipped by the whole warp, and lane l accumulates output columns
///    l, l + 32, ... of every row from the value row (coalesced);
/// 5. the warps' partial outputs are added in warp order through shared
///    memory and divided by the row's sum (0 for a row that sees no key).
/// 16-bit keys and values are widened as they are loaded; all arithmetic
/// is f32.
FailureOr<GpuKernel> emitDecodeAttention(Operation *op, StringRef name,
                                         OpBuilder &moduleBuilder) {
  auto attention = cast<DecodeAttentionOp>(op);
  Location loc = op->getLoc();
  MLIRContext *context = op->getContext();
  auto queryType = cast<RankedTensorType>(attention.getQuery().getType());
  auto keyType = cast<RankedTensorType>(attention.getKey().getType());
  auto valueType = cast<RankedTensorType>(attention.getValue().getType());
  std::optional<DecodeAttentionLayout> layout = decodeAttentionLayout(
      queryType.getShape(), keyType.getShape(), valueType.getShape());
  if (!layout)
    return op->emitError("genesis-lower-cuda: no decode attention layout "
                         "fits query ")
           << queryType << " and cache " << keyType;
  const int64_t rows = layout->blockRows, warps = layout->warps,
                perLane = layout->keysPerLane, depth = layout->depth,
                valueDepth = layout->valueDepth, keys = layout->keys,
                queries = layout->queries,
                group = layout->heads / layout->kvHeads;
  const int64_t threads = warps * kWarp;
  const int64_t columnsPerLane = ceilDiv(valueDepth, kWarp);
  Type f32 = Float32Type::get(context);
  Type cacheElement = keyType.getElementType();

  // Shared memory: queries, partial outputs, each row's inverse sum, then
  // a slot per warp for each row's maximum and each row's sum.
  SmallVector<Type> workgroup = {
      workgroupBuffer(context, rows * depth, f32),
      workgroupBuffer(context, warps * rows * valueDepth, f32),
      workgroupBuffer(context, rows, f32)};
  for (int64_t k = 0; k < 2 * rows; ++k)
    workgroup.push_back(workgroupBuffer(context, warps, f32));
  GpuKernel kernel =
      createGpuKernel(moduleBuilder, loc, name, op->getOperandTypes(),
                      op->getResultTypes(), workgroup);
  setLaunch(kernel, layout->batch * layout->kvHeads * layout->rowBlocks,
            threads);
  OpBuilder b = OpBuilder::atBlockBegin(&kernel.function.getBody().front());
  IndexMath im{b, loc};
  Value query = flatten(b, loc, kernel.inputs[0]);
  Value key = flatten(b, loc, kernel.inputs[1]);
  Value value = flatten(b, loc, kernel.inputs[2]);
  Value mask =
      attention.getMask() ? flatten(b, loc, kernel.inputs[3]) : Value();
  Value out = flatten(b, loc, kernel.outputs[0]);
  Value queryShared = kernel.workgroup[0], partials = kernel.workgroup[1],
        inverseSums = kernel.workgroup[2];
  ArrayRef<Value> maxSlots = ArrayRef<Value>(kernel.workgroup).slice(3, rows);
  ArrayRef<Value> sumSlots =
      ArrayRef<Value>(kernel.workgroup).slice(3 + rows, rows);

  auto constant = [&](double v) -> Value {
    return arith::ConstantOp::create(b, loc, f32, b.getFloatAttr(f32, v));
  };
  auto select = [&](Value c, Value t, Value f) -> Value {
    return arith::SelectOp::create(b, loc, c, t, f);
  };
  auto widen = [&](Value x) -> Value {
    return x.getType() == f32 ? x : arith::ExtFOp::create(b, loc, f32, x);
  };
  auto i32 = [&](int64_t v) -> Value {
    return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v);
  };
  Value minusInfinity = constant(-INFINITY);

  Value thread = im.threadId(), block = im.blockId();
  Value lane = im.rem(thread, kWarp), warp = im.div(thread, kWarp);
  // Block = (batch * Hkv + kvHead) * rowBlocks + part, so the cache rows of
  // this head start at (block / rowBlocks) * T.
  Value headBlock = im.div(block, layout->rowBlocks);
  Value part = im.rem(block, layout->rowBlocks);
  Value kvHead = im.rem(headBlock, layout->kvHeads);
  Value batch = im.div(headBlock, layout->kvHeads);
  Value cacheRow = im.mul(headBlock, im.c(keys));
  // Row r of the block is row part * blockRows + r of the group: query r % S
  // (blockRows is a multiple of S) of head kvHead * group + part * blockRows
  // / S + r / S; its position in [B, Hq, S].
  auto queryRow = [&](Value r) {
    Value head = im.add(
        im.add(im.mul(kvHead, im.c(group)), im.mul(part, im.c(rows / queries))),
        im.div(r, queries));
    return im.add(
        im.mul(im.add(im.mul(batch, im.c(layout->heads)), head), im.c(queries)),
        im.rem(r, queries));
  };
  // for (i = begin; i < end; i += step) with the body built at `b`.
  auto forEach = [&](Value begin, int64_t end, int64_t step,
                     function_ref<void(Value)> body) {
    auto loop = scf::ForOp::create(b, loc, begin, im.c(end), im.c(step));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    body(loop.getInductionVar());
  };

  // 1. The group's query rows.
  forEach(thread, rows * depth, threads, [&](Value index) {
    Value r = im.div(index, depth), d = im.rem(index, depth);
    Value q = memref::LoadOp::create(
        b, loc, query, ValueRange{im.add(im.mul(queryRow(r), im.c(depth)), d)});
    memref::StoreOp::create(b, loc, q, queryShared, ValueRange{index});
  });
  gpu::BarrierOp::create(b, loc);

  // 2. Scores of this lane's keys. A warp skips a group of 32 keys that no
  // row sees (a decode step's cache is mostly empty positions); otherwise
  // every lane loads its key row whole (clamped into the cache), the loads
  // issued together, and scores it against every row.
  SmallVector<Value> maskRowStart;
  for (int64_t r = 0; r < rows; ++r)
    maskRowStart.push_back(im.mul(queryRow(im.c(r)), im.c(keys)));
  int64_t width = keyVectorWidth(cacheElement, depth);
  auto keyVector = VectorType::get({width}, cacheElement);
  auto keyOf = [&](int64_t i, Value laneOrOwner) {
    return im.add(im.mul(im.add(im.c(i * warps), warp), im.c(kWarp)),
                  laneOrOwner);
  };
  auto warpAny = [&](Value flag) {
    Value bits = arith::ExtUIOp::create(b, loc, b.getI32Type(), flag);
    Value total = warpButterfly(b, loc, bits, [&](Value x, Value y) {
      return arith::OrIOp::create(b, loc, x, y).getResult();
    });
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, total,
                                 i32(0))
        .getResult();
  };
  Value scale = constant(attention.getScale().convertToDouble());
  SmallVector<SmallVector<Value>> scores; // [i][r]
  SmallVector<Value> groupSeen;           // [i]: the warp's group of keys
  for (int64_t i = 0; i < perLane; ++i) {
    Value j = keyOf(i, lane);
    Value inCache = im.lt(j, im.c(keys));
    Value safeKey = select(inCache, j, im.c(0));
    SmallVector<Value> additive, visible;
    Value any = arith::ConstantIntOp::create(b, loc, b.getI1Type(), 0);
    for (int64_t r = 0; r < rows; ++r) {
      Value m =
          mask ? memref::LoadOp::create(
                     b, loc, mask, ValueRange{im.add(maskRowStart[r], safeKey)})
                     .getResult()
               : constant(0.0);
      Value seen = inCache;
      if (attention.getCausal())
        // Query s sees keys j <= s + T - S (aligned to the cache's end).
        seen = arith::AndIOp::create(
            b, loc, seen,
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, j,
                                  im.c(r % queries + keys - queries)));
      // A -inf mask hides the key whatever the cache holds there; NaN
      // counts as seen, so that it reaches the output as the evaluator's
      // does.
      seen = arith::AndIOp::create(
          b, loc, seen,
          arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, m,
                                minusInfinity));
      additive.push_back(m);
      visible.push_back(seen);
      any = arith::OrIOp::create(b, loc, any, seen);
    }
    Value group = warpAny(any);
    groupSeen.push_back(group);
    SmallVector<Type> rowTypes(rows, f32);
    auto ifSeen = scf::IfOp::create(b, loc, rowTypes, group, /*withElse=*/true);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifSeen.thenBlock());
      Value rowStart = im.mul(im.add(cacheRow, safeKey), im.c(depth));
      SmallVector<Value> keyValues;
      for (int64_t first = 0; first < depth; first += width) {
        Value loaded = vector::LoadOp::create(
            b, loc, keyVector, key, ValueRange{im.add(rowStart, im.c(first))},
            /*nontemporal=*/false, laneAlignment(cacheElement, width));
        for (int64_t e = 0; e < width; ++e)
          keyValues.push_back(widen(
              vector::ExtractOp::create(b, loc, loaded, ArrayRef<int64_t>{e})));
      }
      SmallVector<Value> rowScores;
      for (int64_t r = 0; r < rows; ++r) {
        Value sum = constant(0.0);
        for (int64_t d = 0; d < depth; ++d) {
          Value q = memref::LoadOp::create(b, loc, queryShared,
                                           ValueRange{im.c(r * depth + d)});
          sum = math::FmaOp::create(b, loc, q, keyValues[d], sum);
        }
        Value score = arith::AddFOp::create(
            b, loc, arith::MulFOp::create(b, loc, sum, scale), additive[r]);
        rowScores.push_back(select(visible[r], score, minusInfinity));
      }
      scf::YieldOp::create(b, loc, rowScores);
      b.setInsertionPointToStart(ifSeen.elseBlock());
      scf::YieldOp::create(b, loc, SmallVector<Value>(rows, minusInfinity));
    }
    scores.emplace_back(ifSeen.getResults().begin(), ifSeen.getResults().end());
  }

  // 3. Each row's maximum, then its sum of exponentials.
  SmallVector<Value> laneMax(rows, minusInfinity);
  for (int64_t i = 0; i < perLane; ++i)
    for (int64_t r = 0; r < rows; ++r)
      laneMax[r] = arith::MaximumFOp::create(b, loc, laneMax[r], scores[i][r]);
  SmallVector<Value> rowMax = blockAllReduceEach(
      b, loc, laneMax, maxSlots, SmallVector<bool>(rows, true), warps);
  SmallVector<Value> laneSum(rows, constant(0.0));
  SmallVector<SmallVector<Value>> probabilities(perLane);
  for (int64_t r = 0; r < rows; ++r) {
    // A row that sees no key: every exponential is exp(-inf) = 0.
    Value shift =
        select(arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                     rowMax[r], minusInfinity),
               constant(0.0), rowMax[r]);
    for (int64_t i = 0; i < perLane; ++i) {
      Value p = math::ExpOp::create(
          b, loc, arith::SubFOp::create(b, loc, scores[i][r], shift));
      probabilities[i].push_back(p);
      laneSum[r] = arith::AddFOp::create(b, loc, laneSum[r], p);
    }
  }
  SmallVector<Value> rowSum = blockAllReduceEach(
      b, loc, laneSum, sumSlots, SmallVector<bool>(rows, false), warps);
  {
    auto first = scf::IfOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, thread,
                              im.c(0)),
        /*withElse=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(first.thenBlock());
    for (int64_t r = 0; r < rows; ++r) {
      Value positive = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT,
                                             rowSum[r], constant(0.0));
      Value inverse = select(
          positive, arith::DivFOp::create(b, loc, constant(1.0), rowSum[r]),
          constant(0.0));
      memref::StoreOp::create(b, loc, inverse, inverseSums,
                              ValueRange{im.c(r)});
    }
  }

  // 4. This warp's keys times their values: for each group of 32 keys some
  // row sees, every key in order, its probabilities shuffled from its lane,
  // the value rows' loads independent of them.
  SmallVector<Value> column, columnInside;
  for (int64_t t = 0; t < columnsPerLane; ++t) {
    Value d = im.add(lane, im.c(t * kWarp));
    Value inside = im.lt(d, im.c(valueDepth));
    column.push_back(select(inside, d, im.c(0)));
    columnInside.push_back(inside);
  }
  SmallVector<Value> accumulators(rows * columnsPerLane, constant(0.0));
  Value warpWidth = i32(kWarp);
  for (int64_t i = 0; i < perLane; ++i) {
    SmallVector<Type> types(accumulators.size(), f32);
    auto ifSeen =
        scf::IfOp::create(b, loc, types, groupSeen[i], /*withElse=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifSeen.thenBlock());
    SmallVector<Value> updated(accumulators);
    for (int64_t owner = 0; owner < kWarp; ++owner) {
      Value j = keyOf(i, im.c(owner));
      Value safeKey = select(im.lt(j, im.c(keys)), j, im.c(0));
      Value valueRow = im.mul(im.add(cacheRow, safeKey), im.c(valueDepth));
      SmallVector<Value> v;
      for (int64_t t = 0; t < columnsPerLane; ++t)
        v.push_back(widen(memref::LoadOp::create(
            b, loc, value, ValueRange{im.add(valueRow, column[t])})));
      for (int64_t r = 0; r < rows; ++r) {
        Value p =
            gpu::ShuffleOp::create(b, loc, probabilities[i][r], i32(owner),
                                   warpWidth, gpu::ShuffleMode::IDX)
                .getShuffleResult();
        for (int64_t t = 0; t < columnsPerLane; ++t) {
          // A hidden key (probability 0) adds nothing, even where its
          // value row holds NaN or infinity (a stale or unwritten row).
          Value &acc = updated[r * columnsPerLane + t];
          Value hidden = arith::CmpFOp::create(
              b, loc, arith::CmpFPredicate::OEQ, p, constant(0.0));
          acc = select(hidden, acc, math::FmaOp::create(b, loc, p, v[t], acc));
        }
      }
    }
    scf::YieldOp::create(b, loc, updated);
    b.setInsertionPointToStart(ifSeen.elseBlock());
    scf::YieldOp::create(b, loc, accumulators);
    b.setInsertionPointAfter(ifSeen);
    accumulators.assign(ifSeen.getResults().begin(), ifSeen.getResults().end());
  }

  // 5. The warps' partial outputs, added in warp order.
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t t = 0; t < columnsPerLane; ++t) {
      Value at = im.add(
          im.mul(im.add(im.mul(warp, im.c(rows)), im.c(r)), im.c(valueDepth)),
          column[t]);
      auto inside =
          scf::IfOp::create(b, loc, columnInside[t], /*withElse=*/false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(inside.thenBlock());
      memref::StoreOp::create(b, loc, accumulators[r * columnsPerLane + t],
                              partials, ValueRange{at});
    }
  gpu::BarrierOp::create(b, loc);
  forEach(thread, rows * valueDepth, threads, [&](Value index) {
    Value total = memref::LoadOp::create(b, loc, partials, ValueRange{index});
    for (int64_t w = 1; w < warps; ++w)
      total = arith::AddFOp::create(
          b, loc, total,
          memref::LoadOp::create(
              b, loc, partials,
              ValueRange{im.add(index, im.c(w * rows * valueDepth))}));
    Value r = im.div(index, valueDepth), d = im.rem(index, valueDepth);
    Value inverse = memref::LoadOp::create(b, loc, inverseSums, ValueRange{r});
    memref::StoreOp::create(
        b, loc, arith::MulFOp::create(b, loc, total, inverse), out,
        ValueRange{im.add(im.mul(queryRow(r), im.c(valueDepth)), d)});
  });
  gpu::ReturnOp::create(b, loc);
  return kernel;
}

} // namespace genesis::cuda
