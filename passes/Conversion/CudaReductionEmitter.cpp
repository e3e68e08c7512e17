//===- CudaReductionEmitter.cpp - Reduction fusions -----------------------===//
//
// The reduction emitter of genesis-lower-cuda (Passes.td states the
// algorithm): row reductions (a warp or a block per row), column reductions
// (a tile of columns per block) and the rest (a thread per kept element),
// each storing the side results of a multi-output fusion.
//
//===----------------------------------------------------------------------===//

#include "dialect/IR/GenesisOps.h"
#include "passes/Conversion/CudaEmitters.h"
#include "passes/Conversion/ElementEmitter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"

#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;

namespace genesis::cuda {

namespace {

/// The combining function of a reduction and its identity.
struct Reducer {
  Operation *root;
  Type element;

  Value identity(OpBuilder &b, Location loc) const {
    double init = isa<ReduceSumOp>(root)   ? 0.0
                  : isa<ReduceMaxOp>(root) ? -INFINITY
                                           : INFINITY;
    return arith::ConstantOp::create(b, loc, element,
                                     b.getFloatAttr(element, init));
  }
  Value combine(OpBuilder &b, Location loc, Value x, Value y) const {
    if (isa<ReduceSumOp>(root))
      return arith::AddFOp::create(b, loc, x, y);
    if (isa<ReduceMaxOp>(root))
      return arith::MaximumFOp::create(b, loc, x, y);
    return arith::MinimumFOp::create(b, loc, x, y);
  }
  /// Combines `value` across the 32 lanes of each warp (butterfly: every
  /// lane ends with the total).
  Value warpReduce(OpBuilder &b, Location loc, Value value) const {
    return warpButterfly(
        b, loc, value, [&](Value x, Value y) { return combine(b, loc, x, y); });
  }
};

/// The reduced operand's index for a kept index and a reduced index.
SmallVector<Value> mergeIndex(ArrayRef<int64_t> kept, ArrayRef<int64_t> reduced,
                              ValueRange keptIndex, ValueRange reducedIndex) {
  SmallVector<Value> full(kept.size() + reduced.size());
  for (auto [i, d] : llvm::enumerate(kept))
    full[d] = keptIndex[i];
  for (auto [i, d] : llvm::enumerate(reduced))
    full[d] = reducedIndex[i];
  return full;
}

/// The result index of the reduction for a kept index.
SmallVector<Value> resultIndex(IndexMath &im, Operation *root, int64_t rank,
                               ArrayRef<int64_t> kept, ValueRange keptIndex) {
  if (!root->hasAttr("keepdim"))
    return SmallVector<Value>(keptIndex.begin(), keptIndex.end());
  SmallVector<Value> index(rank, im.c(0));
  for (auto [i, d] : llvm::enumerate(kept))
    index[d] = keptIndex[i];
  return index;
}

} // namespace

/// A reduction fusion: reduce_sum/max/min ops (the roots) of fused operands
/// of one shape over the same dimensions, plus side results of that shape
/// that nothing computes from a reduction (XLA's multi-output fusion: the
/// kernel stores them at each operand element it visits, visits each once
/// and carries one accumulator per root). The reduced dimensions
/// trailing the kept ones make a row reduction (a warp per row, or a block
/// when there are few rows); a contiguous run of reduced dimensions before
/// kept ones a column reduction (a tile of columns per block, per index of
/// the kept dimensions before the run); others a
/// thread per kept element looping over the rest.
FailureOr<GpuKernel> emitReductionFusion(FusionOp fusion,
                                         ArrayRef<Operation *> roots,
                                         StringRef name,
                                         OpBuilder &moduleBuilder) {
  Operation *root = roots.front();
  Location loc = fusion.getLoc();
  MLIRContext *context = fusion.getContext();
  auto yield = cast<YieldOp>(fusion.getBody().front().getTerminator());
  auto operandType = cast<RankedTensorType>(root->getOperand(0).getType());
  Type element = operandType.getElementType();
  if (!isa<FloatType>(element))
    return fusion.emitError("genesis-lower-cuda: integer reductions are not "
                            "supported in GPU kernels yet");
  ArrayRef<int64_t> dims =
      llvm::TypeSwitch<Operation *, ArrayRef<int64_t>>(root)
          .Case<ReduceSumOp, ReduceMaxOp, ReduceMinOp>(
              [](auto reduce) { return reduce.getDims(); });
  int64_t rank = operandType.getRank();
  SmallVector<int64_t> kept, reduced, keptShape, reducedShape;
  for (int64_t d = 0; d < rank; ++d) {
    bool isReduced = llvm::is_contained(dims, d);
    (isReduced ? reduced : kept).push_back(d);
    (isReduced ? reducedShape : keptShape).push_back(operandType.getDimSize(d));
  }
  int64_t keptCount = numel(keptShape), reducedCount = numel(reducedShape);
  bool trailing =
      kept.empty() || reduced.empty() || kept.back() < reduced.front();
  // Column: the reduced dimensions are contiguous and columns (kept
  // dimensions) follow them; kept dimensions before them (genesis-split-
  // column-reductions' partials) index independent column reductions.
  bool column = !trailing && !reduced.empty() &&
                reduced.back() - reduced.front() + 1 ==
                    static_cast<int64_t>(reduced.size()) &&
                kept.back() > reduced.back();
  int64_t columnCount = 1;
  for (int64_t d : kept)
    if (d > reduced.back())
      columnCount *= operandType.getDimSize(d);
  int64_t outerCount = columnCount == 0 ? 0 : keptCount / columnCount;
  SmallVector<Reducer> reducers;
  for (Operation *each : roots)
    reducers.push_back(Reducer{each, element});
  int64_t rootCount = static_cast<int64_t>(roots.size());
  enum class Kind {
    Row,
    Column,
    PerElement
  } kind = trailing ? Kind::Row
           : column ? Kind::Column
                    : Kind::PerElement;

  // Row: a warp per row, or a block of 1024 threads per row when the rows
  // are too few to fill the machine. Column: a block per tile of `tile`
  // columns (32, a warp's coalesced row segment) and outer index, the rows
  // split across `rowGroups` groups of `tile` threads (enough to fill every
  // SM's 2048 threads, 8 to 32), combined through shared memory in group
  // order. When 32-column tiles would leave most SMs idle (a LayerNorm
  // weight gradient not split by genesis-split-column-reductions: 768
  // columns, 24 blocks, over 16384 rows), tiles of 8 columns (one 32-byte
  // sector of f32 per row) and 128 row groups: 4x the blocks.
  int64_t block = 256, rowsPerBlock = 1, rowGroups = 1, tile = kWarp;
  // Column: consecutive columns per thread, read and stored as one vector
  // per input and side result wherever the element walk keeps them
  // consecutive (ElementEmitter::laneWidth). Row (a warp per row):
  // consecutive elements of the row per lane, read the same way.
  int64_t lanes = 1;
  bool blockPerRow = false;
  SmallVector<Type> workgroup;
  constexpr int64_t kVectorLanes = 4;
  auto vectorFriendly = [](Type type) {
    Type element = getElementTypeOrSelf(type);
    return element.isIntOrFloat() && (element.getIntOrFloatBitWidth() == 16 ||
                                      element.getIntOrFloatBitWidth() == 32);
  };
  if (kind == Kind::Row) {
    blockPerRow = keptCount < kSmCount * 16 && reducedCount >= 4096;
    if (blockPerRow) {
      block = 1024;
      workgroup.push_back(workgroupBuffer(context, kWarp * rootCount, element));
    } else {
      rowsPerBlock = block / kWarp;
      // 4 consecutive elements a lane when every lane has whole groups of
      // them (a LayerNorm backward's row sums over 768 elements: 24 a lane).
      if (operandType.getRank() > 0 &&
          operandType.getShape().back() % kVectorLanes == 0 &&
          reducedCount % (kWarp * kVectorLanes) == 0 &&
          llvm::all_of(fusion.getInputs().getTypes(), vectorFriendly) &&
          llvm::all_of(fusion.getResultTypes(), vectorFriendly))
        lanes = kVectorLanes;
    }
  } else if (kind == Kind::Column) {
    // 16-byte vectors of 16-bit inputs: 8 lanes when every input is 16-bit.
    bool narrowInputs =
        llvm::all_of(fusion.getInputs().getTypes(), [](Type type) {
          Type element = getElementTypeOrSelf(type);
          return element.isIntOrFloat() &&
                 element.getIntOrFloatBitWidth() == 16;
        });
    for (int64_t candidate :
         {narrowInputs ? 2 * kVectorLanes : kVectorLanes, kVectorLanes}) {
      bool lanesFit =
          operandType.getShape().back() % candidate == 0 &&
          columnCount % candidate == 0 &&
          llvm::all_of(fusion.getInputs().getTypes(), vectorFriendly) &&
          llvm::all_of(fusion.getResultTypes(), vectorFriendly);
      // From half a block per SM (66 tiles): GPT-2's 768-column LayerNorm
      // partials (96 tiles of 128) ran 0.27 ms a step faster with lanes.
      if (lanesFit && outerCount * ceilDiv(columnCount, kWarp * candidate) >=
                          kSmCount / 2) {
        lanes = candidate;
        break;
      }
    }
    int64_t tiles = outerCount * ceilDiv(columnCount, kWarp * lanes);
    bool fewTiles = tiles < kSmCount && reducedCount >= 4096;
    tile = fewTiles ? 8 : kWarp;
    rowGroups = fewTiles ? 128 : 8;
    if (!fewTiles && reducedCount >= 256)
      while (rowGroups < 32 &&
             tiles * kWarp * rowGroups * 2 <= kSmCount * kThreadsPerSm)
        rowGroups *= 2;
    block = tile * rowGroups;
    workgroup.push_back(workgroupBuffer(context, block * lanes, element));
  }
  GpuKernel kernel =
      createGpuKernel(moduleBuilder, loc, name, fusion.getInputs().getTypes(),
                      fusion.getResultTypes(), workgroup);
  OpBuilder b = OpBuilder::atBlockBegin(&kernel.function.getBody().front());
  IndexMath im{b, loc};
  ElementEmitter emitter(b, loc, kernel.inputs, "genesis-lower-cuda");
  auto identities = [&] {
    SmallVector<Value> values;
    for (const Reducer &reducer : reducers)
      values.push_back(reducer.identity(b, loc));
    return values;
  };
  emitter.laneWidth = lanes;
  SmallVector<Value> flatInputs;
  for (Value input : kernel.inputs) {
    auto type = cast<MemRefType>(input.getType());
    bool vectorised = lanes > 1 && type.getRank() > 0 &&
                      type.getShape().back() % lanes == 0 &&
                      type.getElementType().isIntOrFloat() &&
                      type.getElementType().getIntOrFloatBitWidth() >= 16;
    flatInputs.push_back(vectorised ? flatten(b, loc, input) : Value());
  }
  LaneLoads laneLoads(kernel.inputs, flatInputs, lanes);
  if (lanes > 1)
    emitter.argumentLoader = [&](BlockArgument argument, ValueRange index,
                                 bool contiguous) {
      return laneLoads.load(b, loc, argument.getArgNumber(), index, contiguous);
    };
  SmallVector<Value> outputs(rootCount);
  SmallVector<std::pair<Value, Value>> sides; // (body value, output memref)
  for (auto [value, memref] : llvm::zip(yield.getValues(), kernel.outputs)) {
    auto it = llvm::find_if(
        roots, [&](Operation *each) { return each->getResult(0) == value; });
    if (it != roots.end())
      outputs[std::distance(roots.begin(), it)] = memref;
    else
      sides.emplace_back(value, memref);
  }
  // Lanes past the kept range (column kind) visit a clamped element again
  // and must not store it.
  Value sideValid;
  // The column kind's lanes return their side results to be stored as one
  // vector.
  bool collectSides = false;
  SmallVector<Value> collectedSides;
  LogicalResult status = success();
  // The roots' operands at an element (one per root), its side results
  // stored or collected.
  auto valueAt = [&](ValueRange keptIndex,
                     ValueRange reducedIndex) -> SmallVector<Value> {
    SmallVector<Value> full =
        mergeIndex(kept, reduced, keptIndex, reducedIndex);
    emitter.beginElement(full);
    SmallVector<Value> xs;
    for (Operation *each : roots) {
      FailureOr<Value> x = emitter.at(each->getOperand(0), full);
      if (failed(x))
        status = failure();
      else
        xs.push_back(*x);
    }
    SmallVector<Value> sideScalars;
    for (auto [value, memref] : sides) {
      FailureOr<Value> scalar = emitter.at(value, full);
      if (failed(scalar))
        status = failure();
      else
        sideScalars.push_back(*scalar);
    }
    if (failed(status))
      return identities();
    auto storeSides = [&] {
      for (auto [scalar, side] : llvm::zip(sideScalars, sides))
        memref::StoreOp::create(b, loc, scalar, side.second, full);
    };
    if (collectSides) {
      collectedSides = sideScalars;
    } else if (!sideValid) {
      storeSides();
    } else if (!sides.empty()) {
      auto branch = scf::IfOp::create(b, loc, sideValid, /*withElse=*/false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&branch.getThenRegion().front());
      storeSides();
    }
    return xs;
  };
  // Accumulates the roots' operands over reduced positions [first, count) by
  // `step` for the kept position `keptIndex`, `width` consecutive positions
  // a step (a lane group read through laneLoads when more than one).
  auto accumulate = [&](ValueRange keptIndex, Value first, int64_t step,
                        int64_t width = 1) -> SmallVector<Value> {
    auto loop = scf::ForOp::create(
        b, loc, first, im.c(reducedCount), im.c(step), identities(),
        [&](OpBuilder &lb, Location, Value r, ValueRange carried) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(lb.getInsertionBlock(), lb.getInsertionPoint());
          SmallVector<Value> next(carried);
          for (int64_t l = 0; l < width; ++l) {
            if (width > 1)
              laneLoads.beginLane(l);
            SmallVector<Value> xs =
                valueAt(keptIndex, im.delinearize(l ? im.add(r, im.c(l)) : r,
                                                  reducedShape));
            for (auto [k, reducer] : llvm::enumerate(reducers))
              next[k] = reducer.combine(b, loc, next[k], xs[k]);
          }
          if (width > 1)
            laneLoads.beginLane(0);
          scf::YieldOp::create(lb, loc, next);
        });
    return SmallVector<Value>(loop.getResults());
  };
  auto store = [&](int64_t k, Value total, ValueRange keptIndex) {
    memref::StoreOp::create(b, loc, total, outputs[k],
                            resultIndex(im, roots[k], rank, kept, keptIndex));
  };
  auto ifThen = [&](Value condition, function_ref<void()> then) {
    auto branch = scf::IfOp::create(b, loc, condition, /*withElse=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&branch.getThenRegion().front());
    then();
  };
  Value zero = im.c(0);

  if (kind == Kind::Row && !blockPerRow) {
    setLaunch(kernel, ceilDiv(keptCount, rowsPerBlock), block);
    Value thread = im.threadId();
    Value lane = im.rem(thread, kWarp);
    Value row =
        im.add(im.mul(im.blockId(), im.c(rowsPerBlock)), im.div(thread, kWarp));
    ifThen(im.lt(row, im.c(keptCount)), [&] {
      SmallVector<Value> keptIndex = im.delinearize(row, keptShape);
      // Lane j takes elements [lanes (j + 32 i), lanes (j + 32 i + 1)).
      SmallVector<Value> sums =
          accumulate(keptIndex, lanes == 1 ? lane : im.mul(lane, im.c(lanes)),
                     kWarp * lanes, lanes);
      SmallVector<Value> totals;
      for (auto [k, reducer] : llvm::enumerate(reducers))
        totals.push_back(reducer.warpReduce(b, loc, sums[k]));
      ifThen(
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane, zero),
          [&] {
            for (auto [k, total] : llvm::enumerate(totals))
              store(k, total, keptIndex);
          });
    });
  } else if (kind == Kind::Row) {
    setLaunch(kernel, keptCount, block);
    Value thread = im.threadId();
    Value lane = im.rem(thread, kWarp), warp = im.div(thread, kWarp);
    Value row = im.blockId();
    SmallVector<Value> keptIndex = im.delinearize(row, keptShape);
    SmallVector<Value> sums = accumulate(keptIndex, thread, block);
    SmallVector<Value> partials;
    for (auto [k, reducer] : llvm::enumerate(reducers))
      partials.push_back(reducer.warpReduce(b, loc, sums[k]));
    // Root k's warp partials at [32 k, 32 k + 32).
    Value shared = kernel.workgroup[0];
    ifThen(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane, zero),
           [&] {
             for (auto [k, partial] : llvm::enumerate(partials))
               memref::StoreOp::create(
                   b, loc, partial, shared,
                   im.add(warp, im.c(static_cast<int64_t>(k) * kWarp)));
           });
    gpu::BarrierOp::create(b, loc);
    ifThen(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, warp, zero),
           [&] {
             for (auto [k, reducer] : llvm::enumerate(reducers)) {
               Value mine = memref::LoadOp::create(
                   b, loc, shared,
                   im.add(lane, im.c(static_cast<int64_t>(k) * kWarp)));
               Value total = reducer.warpReduce(b, loc, mine);
               ifThen(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                            lane, zero),
                      [&] { store(k, total, keptIndex); });
             }
           });
  } else if (kind == Kind::Column) {
    int64_t tileColumns = tile * lanes;
    int64_t tilesPerOuter = ceilDiv(columnCount, tileColumns);
    setLaunch(kernel, outerCount * tilesPerOuter, block);
    Value thread = im.threadId();
    Value lane = im.rem(thread, tile), group = im.div(thread, tile);
    Value outer = im.div(im.blockId(), tilesPerOuter);
    Value column =
        im.add(im.mul(im.rem(im.blockId(), tilesPerOuter), im.c(tileColumns)),
               im.mul(lane, im.c(lanes)));
    // columnCount is a multiple of the lanes: a group is wholly in range or
    // out of it. Out-of-range threads clamp to column 0 and contribute
    // nothing: every thread must reach the barrier.
    Value inRange = im.lt(column, im.c(columnCount));
    Value safeColumn =
        arith::SelectOp::create(b, loc, inRange, column, im.c(0));
    sideValid = inRange;
    SmallVector<SmallVector<Value>> keptIndices;
    keptIndices.push_back(im.delinearize(
        im.add(im.mul(outer, im.c(columnCount)), safeColumn), keptShape));
    for (int64_t l = 1; l < lanes; ++l) {
      SmallVector<Value> next = keptIndices.front();
      next.back() = im.add(next.back(), im.c(l));
      keptIndices.push_back(next);
    }
    SmallVector<Value> flatSides;
    if (lanes > 1)
      for (auto &side : sides)
        flatSides.push_back(flatten(b, loc, side.second));
    // partials[k * lanes + l]: root k's sum at lane l.
    SmallVector<Value> partials;
    if (lanes == 1) {
      partials = accumulate(keptIndices.front(), group, rowGroups);
    } else {
      // The lanes' sums in one loop; each row's side results stored as one
      // vector per side.
      SmallVector<Value> initial;
      for (const Reducer &reducer : reducers)
        initial.append(lanes, reducer.identity(b, loc));
      auto loop = scf::ForOp::create(
          b, loc, group, im.c(reducedCount), im.c(rowGroups), initial,
          [&](OpBuilder &lb, Location, Value r, ValueRange carried) {
            OpBuilder::InsertionGuard guard(b);
            b.setInsertionPoint(lb.getInsertionBlock(), lb.getInsertionPoint());
            SmallVector<Value> reducedIndex = im.delinearize(r, reducedShape);
            collectSides = true;
            SmallVector<SmallVector<Value>> sideLanes(sides.size());
            SmallVector<Value> sums(carried);
            SmallVector<Value> firstIndex;
            for (int64_t l = 0; l < lanes; ++l) {
              laneLoads.beginLane(l);
              SmallVector<Value> xs = valueAt(keptIndices[l], reducedIndex);
              for (auto [s, scalar] : llvm::enumerate(collectedSides))
                sideLanes[s].push_back(scalar);
              if (l == 0)
                firstIndex =
                    mergeIndex(kept, reduced, keptIndices[0], reducedIndex);
              for (auto [k, reducer] : llvm::enumerate(reducers)) {
                Value &sum = sums[k * lanes + l];
                sum = reducer.combine(b, loc, sum, xs[k]);
              }
            }
            collectSides = false;
            laneLoads.beginLane(0);
            if (!sides.empty()) {
              auto branch =
                  scf::IfOp::create(b, loc, inRange, /*withElse=*/false);
              OpBuilder::InsertionGuard inner(b);
              b.setInsertionPointToStart(&branch.getThenRegion().front());
              for (auto [scalars, side, flat] :
                   llvm::zip(sideLanes, sides, flatSides)) {
                Type sideType = scalars.front().getType();
                Value vector = vector::FromElementsOp::create(
                    b, loc, VectorType::get({lanes}, sideType), scalars);
                vector::StoreOp::create(
                    b, loc, vector, flat,
                    ValueRange{linearIndex(b, loc, side.second, firstIndex)},
                    /*nontemporal=*/false, laneAlignment(sideType, lanes));
              }
            }
            scf::YieldOp::create(lb, loc, sums);
          });
      partials.assign(loop.getResults().begin(), loop.getResults().end());
    }
    // One root at a time through the shared buffer.
    Value shared = kernel.workgroup[0];
    for (auto [k, reducer] : llvm::enumerate(reducers)) {
      if (k > 0)
        gpu::BarrierOp::create(b, loc);
      for (int64_t l = 0; l < lanes; ++l)
        memref::StoreOp::create(b, loc, partials[k * lanes + l], shared,
                                im.add(im.mul(thread, im.c(lanes)), im.c(l)));
      gpu::BarrierOp::create(b, loc);
      ifThen(arith::AndIOp::create(
                 b, loc, inRange,
                 arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, group,
                                       zero)),
             [&] {
               // Combined in group order: a fixed order, so deterministic.
               for (int64_t l = 0; l < lanes; ++l) {
                 auto at = [&](int64_t g) {
                   return memref::LoadOp::create(
                       b, loc, shared,
                       im.add(im.mul(im.add(lane, im.c(g * tile)), im.c(lanes)),
                              im.c(l)));
                 };
                 Value total = at(0);
                 for (int64_t g = 1; g < rowGroups; ++g)
                   total = reducer.combine(b, loc, total, at(g));
                 store(k, total, keptIndices[l]);
               }
             });
    }
  } else {
    setLaunch(kernel, ceilDiv(keptCount, 256), 256);
    Value position = im.globalId(256);
    ifThen(im.lt(position, im.c(keptCount)), [&] {
      SmallVector<Value> keptIndex = im.delinearize(position, keptShape);
      for (auto [k, total] : llvm::enumerate(accumulate(keptIndex, im.c(0), 1)))
        store(k, total, keptIndex);
    });
  }
  gpu::ReturnOp::create(b, loc);
  if (failed(status)) {
    kernel.function.erase();
    return failure();
  }
  return kernel;
}

} // namespace genesis::cuda
