//===- LowerToCuda.cpp - Fusion regions and ops to GPU kernels ------------===//
//
// Implements genesis-lower-cuda; Passes.td states the algorithm. The
// emitters are XLA's kinds: a loop emitter for elementwise and broadcast
// groups, a row-reduction emitter (a warp, or a block, per row), a
// column-reduction emitter (a tile of columns per block, the rows split
// across the block's warps) and, for everything else, the CPU op kernels run
// one outer iteration per thread.
//
//===----------------------------------------------------------------------===//

#include "dialect/IR/GenesisOps.h"
#include "passes/Conversion/CpuKernels.h"
#include "passes/Conversion/CudaEmitters.h"
#include "passes/Conversion/CudaKernels.h"
#include "passes/Conversion/ElementEmitter.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

namespace genesis {
#define GEN_PASS_DEF_GENESISLOWERCUDA
#include "passes/Passes.h.inc"
} // namespace genesis

using namespace mlir;
using namespace genesis;
using namespace genesis::cuda;

namespace {

//===----------------------------------------------------------------------===//
// Loop emitter
//===----------------------------------------------------------------------===//

/// Loop fusion: a grid-stride loop over the elements, `width` consecutive
/// elements per iteration. Inputs of the result's shape and 32-bit type are
/// read, and 32-bit results written, as one 16-byte vector per iteration;
/// broadcast inputs are read element by element through the index map.
FailureOr<GpuKernel> emitLoopFusion(FusionOp fusion, StringRef name,
                                    OpBuilder &moduleBuilder) {
  Location loc = fusion.getLoc();
  auto yield = cast<YieldOp>(fusion.getBody().front().getTerminator());
  auto resultType = cast<RankedTensorType>(fusion.getResultTypes()[0]);
  ArrayRef<int64_t> shape = resultType.getShape();
  for (Type type : fusion.getResultTypes())
    if (cast<RankedTensorType>(type).getShape() != shape)
      return fusion.emitError("genesis-lower-cuda: the results of a loop "
                              "fusion must share one shape");
  int64_t n = numel(shape);
  int64_t width = n % 4 == 0 ? 4 : 1;
  // Lanes differ only in the last index when the last extent is a multiple
  // of the width: one delinearisation per iteration.
  bool lastDimLanes = !shape.empty() && shape.back() % width == 0;

  GpuKernel kernel =
      createGpuKernel(moduleBuilder, loc, name, fusion.getInputs().getTypes(),
                      fusion.getResultTypes());
  int64_t iterations = n / width;
  int64_t block = 256;
  int64_t grid = std::min(ceilDiv(iterations, block), kMaxGridBlocks);
  setLaunch(kernel, grid, block);

  OpBuilder b = OpBuilder::atBlockBegin(&kernel.function.getBody().front());
  IndexMath im{b, loc};
  Value start = im.globalId(block);
  Value stride = im.c(grid * block);
  Block &body = fusion.getBody().front();
  SmallVector<bool> vectorInput;
  SmallVector<Value> flatInputs;
  for (auto [i, input] : llvm::enumerate(kernel.inputs)) {
    auto type = cast<MemRefType>(input.getType());
    bool vectorised = width > 1 && type.getShape() == shape &&
                      type.getElementType().isIntOrFloat() &&
                      is32Bit(type.getElementType());
    vectorInput.push_back(vectorised);
    flatInputs.push_back(vectorised ? flatten(b, loc, input) : Value());
  }
  SmallVector<Value> flatOutputs;
  for (Value output : kernel.outputs) {
    Type element = cast<MemRefType>(output.getType()).getElementType();
    flatOutputs.push_back(
        width > 1 && is32Bit(element) ? flatten(b, loc, output) : Value());
  }

  LogicalResult status = success();
  scf::ForOp::create(
      b, loc, start, im.c(iterations), stride, ValueRange(),
      [&](OpBuilder &lb, Location, Value iteration, ValueRange) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(lb.getInsertionBlock(), lb.getInsertionPoint());
        Value base = im.mul(iteration, im.c(width));
        SmallVector<Value> baseIndex;
        if (lastDimLanes)
          baseIndex = im.delinearize(base, shape);
        // The vector of each vectorised input, loaded on first use.
        DenseMap<unsigned, SmallVector<Value>> lanes;
        int64_t lane = 0;
        ElementEmitter emitter(b, loc, kernel.inputs, "genesis-lower-cuda");
        emitter.argumentLoader = [&](BlockArgument argument,
                                     ValueRange index) -> FailureOr<Value> {
          unsigned k = argument.getArgNumber();
          if (!vectorInput[k])
            return memref::LoadOp::create(b, loc, kernel.inputs[k], index)
                .getResult();
          auto &loaded = lanes[k];
          if (loaded.empty()) {
            Type element =
                cast<MemRefType>(kernel.inputs[k].getType()).getElementType();
            Value vector = vector::LoadOp::create(
                b, loc, VectorType::get({width}, element), flatInputs[k],
                ValueRange{base}, /*nontemporal=*/false, llvm::Align(16));
            for (int64_t l = 0; l < width; ++l)
              loaded.push_back(vector::ExtractOp::create(b, loc, vector,
                                                         ArrayRef<int64_t>{l}));
          }
          return loaded[lane];
        };
        SmallVector<SmallVector<Value>> results(kernel.outputs.size());
        SmallVector<SmallVector<Value>> laneIndices;
        for (lane = 0; lane < width; ++lane) {
          SmallVector<Value> index;
          if (lastDimLanes) {
            index = baseIndex;
            if (lane > 0)
              index.back() = im.add(index.back(), im.c(lane));
          } else {
            index =
                im.delinearize(lane ? im.add(base, im.c(lane)) : base, shape);
          }
          emitter.beginElement(index);
          for (auto [r, value] : llvm::enumerate(yield.getValues())) {
            FailureOr<Value> scalar = emitter.at(value, index);
            if (failed(scalar)) {
              status = failure();
              scf::YieldOp::create(lb, loc);
              return;
            }
            results[r].push_back(*scalar);
          }
          laneIndices.push_back(index);
        }
        for (auto [r, output] : llvm::enumerate(kernel.outputs)) {
          if (flatOutputs[r]) {
            Value vector = vector::FromElementsOp::create(
                b, loc, VectorType::get({width}, results[r][0].getType()),
                results[r]);
            vector::StoreOp::create(b, loc, vector, flatOutputs[r],
                                    ValueRange{base}, /*nontemporal=*/false,
                                    llvm::Align(16));
            continue;
          }
          for (int64_t l = 0; l < width; ++l)
            memref::StoreOp::create(b, loc, results[r][l], output,
                                    laneIndices[l]);
        }
        scf::YieldOp::create(lb, loc);
      });
  (void)body;
  gpu::ReturnOp::create(b, loc);
  if (failed(status)) {
    kernel.function.erase();
    return failure();
  }
  return kernel;
}

//===----------------------------------------------------------------------===//
// Reduction emitters
//===----------------------------------------------------------------------===//

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

/// A reduction fusion: a reduce_sum/max/min of a fused operand, plus side
/// results of the operand's shape that nothing computes from the reduction
/// (XLA's multi-output fusion: the kernel stores them at each operand
/// element it visits, and it visits each once). The reduced dimensions
/// trailing the kept ones make a row reduction (a warp per row, or a block
/// when there are few rows); leading ones a column reduction; others a
/// thread per kept element looping over the rest.
FailureOr<GpuKernel> emitReductionFusion(FusionOp fusion, Operation *root,
                                         StringRef name,
                                         OpBuilder &moduleBuilder) {
  Location loc = fusion.getLoc();
  MLIRContext *context = fusion.getContext();
  auto yield = cast<YieldOp>(fusion.getBody().front().getTerminator());
  Value operand = root->getOperand(0);
  auto operandType = cast<RankedTensorType>(operand.getType());
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
  bool leading =
      !kept.empty() && !reduced.empty() && reduced.back() < kept.front();
  Reducer reducer{root, element};
  enum class Kind {
    Row,
    Column,
    PerElement
  } kind = trailing  ? Kind::Row
           : leading ? Kind::Column
                     : Kind::PerElement;

  // Row: a warp per row, or a block of 1024 threads per row when the rows
  // are too few to fill the machine. Column: tiles of 32 columns, the rows
  // split across `rowGroups` warps, combined through shared memory.
  int64_t block = 256, rowsPerBlock = 1, rowGroups = 1;
  bool blockPerRow = false;
  SmallVector<Type> workgroup;
  if (kind == Kind::Row) {
    blockPerRow = keptCount < 132 * 16 && reducedCount >= 4096;
    if (blockPerRow) {
      block = 1024;
      workgroup.push_back(workgroupBuffer(context, kWarp, element));
    } else {
      rowsPerBlock = block / kWarp;
    }
  } else if (kind == Kind::Column) {
    rowGroups = reducedCount >= 256 ? 32 : 8;
    block = kWarp * rowGroups;
    workgroup.push_back(workgroupBuffer(context, block, element));
  }
  GpuKernel kernel =
      createGpuKernel(moduleBuilder, loc, name, fusion.getInputs().getTypes(),
                      fusion.getResultTypes(), workgroup);
  OpBuilder b = OpBuilder::atBlockBegin(&kernel.function.getBody().front());
  IndexMath im{b, loc};
  ElementEmitter emitter(b, loc, kernel.inputs, "genesis-lower-cuda");
  Value output;
  SmallVector<std::pair<Value, Value>> sides; // (body value, output memref)
  for (auto [value, memref] : llvm::zip(yield.getValues(), kernel.outputs)) {
    if (value == root->getResult(0))
      output = memref;
    else
      sides.emplace_back(value, memref);
  }
  // Lanes past the kept range (column kind) visit a clamped element again
  // and must not store it.
  Value sideValid;
  LogicalResult status = success();
  auto valueAt = [&](ValueRange keptIndex, ValueRange reducedIndex) -> Value {
    SmallVector<Value> full =
        mergeIndex(kept, reduced, keptIndex, reducedIndex);
    emitter.beginElement(full);
    FailureOr<Value> x = emitter.at(operand, full);
    SmallVector<Value> sideScalars;
    for (auto [value, memref] : sides) {
      FailureOr<Value> scalar = emitter.at(value, full);
      if (failed(scalar))
        status = failure();
      else
        sideScalars.push_back(*scalar);
    }
    if (failed(x) || failed(status)) {
      status = failure();
      return reducer.identity(b, loc);
    }
    auto storeSides = [&] {
      for (auto [scalar, side] : llvm::zip(sideScalars, sides))
        memref::StoreOp::create(b, loc, scalar, side.second, full);
    };
    if (!sideValid) {
      storeSides();
    } else if (!sides.empty()) {
      auto branch = scf::IfOp::create(b, loc, sideValid, /*withElse=*/false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&branch.getThenRegion().front());
      storeSides();
    }
    return *x;
  };
  // Accumulates `operand` over reduced positions [first, count) by `step`
  // for the kept position `keptIndex`.
  auto accumulate = [&](ValueRange keptIndex, Value first, int64_t step) {
    auto loop = scf::ForOp::create(
        b, loc, first, im.c(reducedCount), im.c(step),
        ValueRange{reducer.identity(b, loc)},
        [&](OpBuilder &lb, Location, Value r, ValueRange carried) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(lb.getInsertionBlock(), lb.getInsertionPoint());
          Value x = valueAt(keptIndex, im.delinearize(r, reducedShape));
          scf::YieldOp::create(lb, loc, reducer.combine(b, loc, carried[0], x));
        });
    return loop.getResult(0);
  };
  auto store = [&](Value total, ValueRange keptIndex) {
    memref::StoreOp::create(b, loc, total, output,
                            resultIndex(im, root, rank, kept, keptIndex));
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
      Value total =
          reducer.warpReduce(b, loc, accumulate(keptIndex, lane, kWarp));
      ifThen(
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane, zero),
          [&] { store(total, keptIndex); });
    });
  } else if (kind == Kind::Row) {
    setLaunch(kernel, keptCount, block);
    Value thread = im.threadId();
    Value lane = im.rem(thread, kWarp), warp = im.div(thread, kWarp);
    Value row = im.blockId();
    SmallVector<Value> keptIndex = im.delinearize(row, keptShape);
    Value partial =
        reducer.warpReduce(b, loc, accumulate(keptIndex, thread, block));
    Value shared = kernel.workgroup[0];
    ifThen(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane, zero),
           [&] { memref::StoreOp::create(b, loc, partial, shared, warp); });
    gpu::BarrierOp::create(b, loc);
    ifThen(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, warp, zero),
           [&] {
             Value mine = memref::LoadOp::create(b, loc, shared, lane);
             Value total = reducer.warpReduce(b, loc, mine);
             ifThen(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                          lane, zero),
                    [&] { store(total, keptIndex); });
           });
  } else if (kind == Kind::Column) {
    setLaunch(kernel, ceilDiv(keptCount, kWarp), block);
    Value thread = im.threadId();
    Value lane = im.rem(thread, kWarp), group = im.div(thread, kWarp);
    Value column = im.add(im.mul(im.blockId(), im.c(kWarp)), lane);
    Value inRange = im.lt(column, im.c(keptCount));
    // Out-of-range lanes clamp to column 0 and contribute nothing: every
    // thread must reach the barrier.
    Value safeColumn =
        arith::SelectOp::create(b, loc, inRange, column, im.c(0));
    sideValid = inRange;
    SmallVector<Value> keptIndex = im.delinearize(safeColumn, keptShape);
    Value partial = accumulate(keptIndex, group, rowGroups);
    Value shared = kernel.workgroup[0];
    memref::StoreOp::create(b, loc, partial, shared, thread);
    gpu::BarrierOp::create(b, loc);
    ifThen(arith::AndIOp::create(b, loc, inRange,
                                 arith::CmpIOp::create(b, loc,
                                                       arith::CmpIPredicate::eq,
                                                       group, zero)),
           [&] {
             // Combined in group order: a fixed order, so deterministic.
             Value total = memref::LoadOp::create(b, loc, shared, lane);
             for (int64_t g = 1; g < rowGroups; ++g)
               total = reducer.combine(
                   b, loc, total,
                   memref::LoadOp::create(b, loc, shared,
                                          im.add(lane, im.c(g * kWarp))));
             store(total, keptIndex);
           });
  } else {
    setLaunch(kernel, ceilDiv(keptCount, 256), 256);
    Value position = im.globalId(256);
    ifThen(im.lt(position, im.c(keptCount)), [&] {
      SmallVector<Value> keptIndex = im.delinearize(position, keptShape);
      store(accumulate(keptIndex, im.c(0), 1), keptIndex);
    });
  }
  gpu::ReturnOp::create(b, loc);
  if (failed(status)) {
    kernel.function.erase();
    return failure();
  }
  return kernel;
}

//===----------------------------------------------------------------------===//
// Row fusions: row reductions and the elementwise ops around them
//===----------------------------------------------------------------------===//

SmallVector<Value> blockAllReduceEach(OpBuilder &b, Location loc,
                                      ArrayRef<Value> partials,
                                      ArrayRef<Value> shareds,
                                      ArrayRef<bool> maxes, int64_t warps);

/// Threads of a block per row of `columns` elements: a multiple of 32 up
/// to 1024 giving each thread at least 4 elements when the row allows, so
/// that short rows (attention's 1024 keys) do not spend a block's barriers
/// on one element per thread.
int64_t rowBlockThreads(int64_t columns) {
  return std::clamp<int64_t>(ceilDiv(ceilDiv(columns, 4), kWarp) * kWarp, kWarp,
                             1024);
}

/// Whether `shape` is per row of `rowShape` ([rows..., C]): [rows...] or
/// [rows..., 1].
bool isPerRow(ArrayRef<int64_t> shape, ArrayRef<int64_t> rowShape) {
  ArrayRef<int64_t> rows = rowShape.drop_back();
  return shape == rows || (shape.size() == rowShape.size() &&
                           shape.drop_back() == rows && shape.back() == 1);
}

/// Whether `broadcast` spreads a per-row value along the last dimension of
/// `rowShape`, keeping each row's leading indices.
bool isRowBroadcast(BroadcastInDimOp broadcast, ArrayRef<int64_t> rowShape) {
  ArrayRef<int64_t> from = broadcast.getOperand().getType().getShape();
  if (broadcast.getType().getShape() != rowShape || !isPerRow(from, rowShape))
    return false;
  for (auto [d, target] : llvm::enumerate(broadcast.getBroadcastDimensions()))
    if (static_cast<int64_t>(d) != target)
      return false;
  return true;
}

/// The row shape [rows..., C] of a fusion body that a block per row can
/// compute: it has a reduction; every reduction is an f32 sum or max over
/// the last dimension of an operand of that shape (no reduce_min); a value
/// computed from a reduction reaches the row only through elementwise ops
/// and broadcasts
/// along the last dimension (the block's one reduced scalar then serves all
/// of its columns); every yielded value has the row shape or is per row.
std::optional<SmallVector<int64_t>> rowFusionShape(Block &body) {
  std::optional<SmallVector<int64_t>> rowShape;
  llvm::DenseSet<Value> fromReduction;
  for (Operation &op : body.without_terminator()) {
    // The row kernel combines sums and maxima only.
    if (isa<ReduceMinOp>(op))
      return std::nullopt;
    bool derived = llvm::any_of(op.getOperands(), [&](Value operand) {
      return fromReduction.contains(operand);
    });
    if (isa<ReduceSumOp, ReduceMaxOp>(op)) {
      auto operand = cast<RankedTensorType>(op.getOperand(0).getType());
      ArrayRef<int64_t> dims = isa<ReduceSumOp>(op)
                                   ? cast<ReduceSumOp>(op).getDims()
                                   : cast<ReduceMaxOp>(op).getDims();
      if (operand.getRank() == 0 || !operand.getElementType().isF32() ||
          dims.size() != 1 || dims[0] != operand.getRank() - 1 ||
          (rowShape && operand.getShape() != ArrayRef<int64_t>(*rowShape)))
        return std::nullopt;
      rowShape = SmallVector<int64_t>(operand.getShape());
      fromReduction.insert(op.getResult(0));
      continue;
    }
    if (!derived)
      continue;
    auto broadcast = dyn_cast<BroadcastInDimOp>(op);
    if (broadcast ? !rowShape || !isRowBroadcast(broadcast, *rowShape)
                  : !op.hasTrait<mlir::OpTrait::Elementwise>())
      return std::nullopt;
    fromReduction.insert(op.getResult(0));
  }
  if (!rowShape)
    return std::nullopt;
  for (Value value : body.getTerminator()->getOperands()) {
    ArrayRef<int64_t> shape =
        cast<RankedTensorType>(value.getType()).getShape();
    if (shape != ArrayRef<int64_t>(*rowShape) && !isPerRow(shape, *rowShape))
      return std::nullopt;
  }
  return rowShape;
}

/// Merges `producer` into `consumer`, one of its users, when the merged
/// body is a row fusion (rowFusionShape) and at least one of the
/// producer's results is then no longer written to memory (all its users
/// were in `consumer`). The merged fusion takes the producer's place, so
/// the consumer's other inputs must be defined before the producer. It
/// yields the producer's results still used elsewhere, then the
/// consumer's.
bool mergeRowFusionPair(FusionOp producer, FusionOp consumer) {
  Operation *consumerOp = consumer;
  SmallVector<Value> kept;
  bool dropsOne = false;
  for (Value result : producer.getResults()) {
    bool onlyConsumer = llvm::all_of(
        result.getUsers(), [&](Operation *user) { return user == consumerOp; });
    if (onlyConsumer && !result.use_empty())
      dropsOne = true;
    else
      kept.push_back(result);
  }
  if (!dropsOne)
    return false;
  for (Value input : consumer.getInputs()) {
    Operation *definer = input.getDefiningOp();
    if (definer && definer != producer.getOperation() &&
        !definer->isBeforeInBlock(producer))
      return false;
  }

  // Inputs of both, each once; the consumer's block arguments that were
  // producer results map to the producer's yielded values.
  SmallVector<Value> inputs;
  auto *body = new Block();
  IRMapping mapping;
  llvm::DenseMap<Value, BlockArgument> argumentOf;
  auto bindInput = [&](Value value, BlockArgument argument) {
    auto [it, inserted] = argumentOf.try_emplace(value);
    if (inserted) {
      inputs.push_back(value);
      it->second = body->addArgument(argument.getType(), argument.getLoc());
    }
    mapping.map(argument, it->second);
  };
  Block &producerBody = producer.getBody().front();
  Block &consumerBody = consumer.getBody().front();
  auto producerYield = cast<YieldOp>(producerBody.getTerminator());
  for (auto [value, argument] :
       llvm::zip(producer.getInputs(), producerBody.getArguments()))
    bindInput(value, argument);
  for (auto [value, argument] :
       llvm::zip(consumer.getInputs(), consumerBody.getArguments()))
    if (auto result = dyn_cast<OpResult>(value);
        !result || result.getOwner() != producer.getOperation())
      bindInput(value, argument);
  OpBuilder bodyBuilder(producer->getContext());
  bodyBuilder.setInsertionPointToEnd(body);
  for (Operation &op : producerBody.without_terminator())
    bodyBuilder.clone(op, mapping);
  for (auto [value, argument] :
       llvm::zip(consumer.getInputs(), consumerBody.getArguments()))
    if (auto result = dyn_cast<OpResult>(value);
        result && result.getOwner() == producer.getOperation())
      mapping.map(
          argument,
          mapping.lookup(producerYield.getValues()[result.getResultNumber()]));
  for (Operation &op : consumerBody.without_terminator())
    bodyBuilder.clone(op, mapping);
  SmallVector<Value> yields;
  SmallVector<Type> resultTypes;
  for (Value result : kept) {
    yields.push_back(mapping.lookup(
        producerYield.getValues()[cast<OpResult>(result).getResultNumber()]));
    resultTypes.push_back(result.getType());
  }
  for (auto [value, type] :
       llvm::zip(consumerBody.getTerminator()->getOperands(),
                 consumer.getResultTypes())) {
    yields.push_back(mapping.lookup(value));
    resultTypes.push_back(type);
  }
  YieldOp::create(bodyBuilder, consumer.getLoc(), yields);
  if (!rowFusionShape(*body)) {
    body->dropAllDefinedValueUses();
    delete body;
    return false;
  }

  OpBuilder builder(producer);
  auto merged = FusionOp::create(
      builder, builder.getFusedLoc({producer.getLoc(), consumer.getLoc()}),
      resultTypes, inputs);
  merged.getBody().push_back(body);
  for (auto [result, replacement] : llvm::zip(kept, merged.getResults()))
    result.replaceAllUsesWith(replacement);
  consumer.replaceAllUsesWith(merged.getResults().drop_front(kept.size()));
  consumer.erase();
  producer.erase();
  return true;
}

/// Merges row fusions pairwise (mergeRowFusionPair) until none merge: a
/// chain of row reductions and the elementwise ops between them (softmax's
/// backward y * (g - rowsum(g * y)); rms_norm's and layer_norm's backward,
/// whose second reduction uses the first) becomes one fusion, which reads
/// each row once and writes only the values used outside. XLA calls the
/// pattern a reduction epilogue fusion.
void mergeRowFusions(func::FuncOp function) {
  bool merged = true;
  while (merged) {
    merged = false;
    SmallVector<FusionOp> fusions;
    function.walk([&](FusionOp fusion) { fusions.push_back(fusion); });
    for (FusionOp consumer : fusions) {
      for (Value input : consumer.getInputs())
        if (auto producer = input.getDefiningOp<FusionOp>();
            producer && mergeRowFusionPair(producer, consumer)) {
          merged = true;
          break;
        }
      if (merged)
        break;
    }
  }
}

/// A row fusion (rowFusionShape): a block per row of T threads (a multiple
/// of 32, at most 1024), thread t taking columns t, t + T, ... . The
/// reductions run in stages by dependency depth (a stage's reductions need
/// only earlier stages' results); each stage computes its reductions'
/// operands at the thread's columns and combines them in one
/// blockAllReduceEach (one barrier, a shared array per reduction). Every
/// scalar loaded or computed is kept for the next stage and for the yielded
/// values, so a row is read from memory once and each result written once. Sums
/// accumulate in f64: a row of thousands of terms then agrees with the
/// evaluator's f64 sum to f32 rounding, though the results may cancel against
/// it (softmax's backward: g - rowsum(g * y)). Per-row results are stored by
/// thread 0.
FailureOr<GpuKernel> emitRowFusion(FusionOp fusion, ArrayRef<int64_t> rowType,
                                   StringRef name, OpBuilder &moduleBuilder) {
  Location loc = fusion.getLoc();
  MLIRContext *context = fusion.getContext();
  Block &body = fusion.getBody().front();
  auto yield = cast<YieldOp>(body.getTerminator());
  SmallVector<Operation *> reductions;
  for (Operation &op : body)
    if (isa<ReduceSumOp, ReduceMaxOp>(op))
      reductions.push_back(&op);
  Type element = Float32Type::get(context);
  Type wide = Float64Type::get(context);
  int64_t columns = rowType.back();
  SmallVector<int64_t> rowShape(rowType.drop_back());
  int64_t rows = numel(rowShape);
  int64_t threads = rowBlockThreads(columns);
  int64_t perThread = ceilDiv(columns, threads), warps = threads / kWarp;
  SmallVector<Type> workgroup;
  for (Operation *reduction : reductions)
    workgroup.push_back(workgroupBuffer(
        context, warps, isa<ReduceMaxOp>(reduction) ? element : wide));
  GpuKernel kernel =
      createGpuKernel(moduleBuilder, loc, name, fusion.getInputs().getTypes(),
                      fusion.getResultTypes(), workgroup);
  setLaunch(kernel, rows, threads);
  // A full SM of blocks (2048 threads, so 32 registers a thread; at most 32
  // blocks) keeps other rows' loads in flight while a block waits at its
  // reductions' barriers; asked for while the row elements a thread holds
  // fit in about half of those registers (the computed values are
  // recomputed or spilled: measured fastest on layer_norm's backward).
  int64_t rowInputs = llvm::count_if(body.getArguments(), [&](BlockArgument a) {
    return cast<RankedTensorType>(a.getType()).getShape() == rowType;
  });
  if (rowInputs * perThread <= 16)
    kernel.function->setAttr(
        NVVM::NVVMDialect::getMinctasmAttrName(),
        IntegerAttr::get(IntegerType::get(context, 32),
                         std::min<int64_t>(32, 2048 / threads)));
  OpBuilder b = OpBuilder::atBlockBegin(&kernel.function.getBody().front());
  IndexMath im{b, loc};
  ElementEmitter emitter(b, loc, kernel.inputs, "genesis-lower-cuda");
  Value thread = im.threadId();
  SmallVector<Value> rowIndex = im.delinearize(im.blockId(), rowShape);
  SmallVector<SmallVector<Value>> indices;
  SmallVector<Value> inside;
  for (int64_t k = 0; k < perThread; ++k) {
    Value c = im.add(thread, im.c(k * threads));
    Value in = im.lt(c, im.c(columns));
    // Columns past the row compute at column 0 (always valid), masked out.
    SmallVector<Value> index(rowIndex);
    index.push_back(arith::SelectOp::create(b, loc, in, c, im.c(0)));
    indices.push_back(index);
    inside.push_back(in);
  }
  auto fail = [&] {
    kernel.function.erase();
    return failure();
  };
  // A reduction's stage: how many block reductions must precede it. The
  // reductions of one stage share one barrier.
  llvm::DenseMap<Value, int64_t> depth;
  SmallVector<SmallVector<Operation *>> stages;
  for (Operation &op : body.without_terminator()) {
    int64_t deepest = 0;
    for (Value operand : op.getOperands())
      deepest = std::max(deepest, depth.lookup(operand));
    if (isa<ReduceSumOp, ReduceMaxOp>(op)) {
      if (static_cast<int64_t>(stages.size()) <= deepest)
        stages.resize(deepest + 1);
      stages[deepest].push_back(&op);
      ++deepest;
    }
    depth[op.getResult(0)] = deepest;
  }
  SmallVector<llvm::DenseMap<Value, Value>> saved(perThread);
  for (ArrayRef<Operation *> stage : stages) {
    SmallVector<Value> partials, identities, shareds;
    SmallVector<bool> maxes;
    for (Operation *reduction : stage) {
      bool max = isa<ReduceMaxOp>(reduction);
      Type accumulator = max ? element : wide;
      identities.push_back(arith::ConstantOp::create(
          b, loc, accumulator,
          b.getFloatAttr(accumulator, max ? -INFINITY : 0.0)));
      partials.push_back(identities.back());
      maxes.push_back(max);
      shareds.push_back(kernel.workgroup[llvm::find(reductions, reduction) -
                                         reductions.begin()]);
    }
    for (int64_t k = 0; k < perThread; ++k) {
      emitter.resumeElement(saved[k], indices[k]);
      for (auto [i, reduction] : llvm::enumerate(stage)) {
        FailureOr<Value> x = emitter.at(reduction->getOperand(0), indices[k]);
        if (failed(x))
          return fail();
        Value term =
            maxes[i] ? *x : arith::ExtFOp::create(b, loc, wide, *x).getResult();
        partials[i] = combineMaxOrSum(
            b, loc, partials[i],
            arith::SelectOp::create(b, loc, inside[k], term, identities[i]),
            maxes[i]);
      }
      saved[k] = emitter.saveElement();
    }
    SmallVector<Value> totals =
        blockAllReduceEach(b, loc, partials, shareds, maxes, warps);
    for (auto [reduction, total, max] : llvm::zip(stage, totals, maxes))
      emitter.given[reduction->getResult(0)] =
          max ? total
              : arith::TruncFOp::create(b, loc, element, total).getResult();
  }
  auto storeIf = [&](Value condition, ArrayRef<Value> scalars,
                     ArrayRef<Value> outputs, ValueRange index) {
    auto store = scf::IfOp::create(b, loc, condition, /*withElse=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&store.getThenRegion().front());
    for (auto [scalar, output] : llvm::zip(scalars, outputs))
      memref::StoreOp::create(
          b, loc, scalar, output,
          index.take_front(cast<MemRefType>(output.getType()).getRank()));
  };
  SmallVector<Value> rowValues, rowOutputs, perRowValues, perRowOutputs;
  for (auto [value, output] : llvm::zip(yield.getValues(), kernel.outputs)) {
    bool full = cast<RankedTensorType>(value.getType()).getShape() == rowType;
    (full ? rowValues : perRowValues).push_back(value);
    (full ? rowOutputs : perRowOutputs).push_back(output);
  }
  for (int64_t k = 0; k < perThread && !rowValues.empty(); ++k) {
    emitter.resumeElement(saved[k], indices[k]);
    SmallVector<Value> scalars;
    for (Value value : rowValues) {
      FailureOr<Value> scalar = emitter.at(value, indices[k]);
      if (failed(scalar))
        return fail();
      scalars.push_back(*scalar);
    }
    storeIf(inside[k], scalars, rowOutputs, indices[k]);
  }
  if (!perRowValues.empty()) {
    // [rows...] or [rows..., 1]: the row's index, then 0 if kept.
    SmallVector<Value> index(rowIndex);
    index.push_back(im.c(0));
    SmallVector<Value> scalars;
    for (Value value : perRowValues) {
      auto rank = cast<RankedTensorType>(value.getType()).getRank();
      FailureOr<Value> scalar =
          emitter.at(value, ValueRange(index).take_front(rank));
      if (failed(scalar))
        return fail();
      scalars.push_back(*scalar);
    }
    storeIf(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, thread,
                                  im.c(0)),
            scalars, perRowOutputs, index);
  }
  gpu::ReturnOp::create(b, loc);
  return kernel;
}

//===----------------------------------------------------------------------===//
// Row ops: softmax, log_softmax, layer_norm, rms_norm over the last dimension
//===----------------------------------------------------------------------===//

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
  for (auto [partial, max] : llvm::zip(partials, maxes))
    warpTotals.push_back(warpButterfly(b, loc, partial, [&](Value p, Value q) {
      return combineMaxOrSum(b, loc, p, q, max);
    }));
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

/// f32 ops normalising over the last dimension, which the row emitter takes.
bool hasGpuRowKernel(Operation *op) {
  auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!type || !type.getElementType().isF32() || type.getRank() == 0)
    return false;
  if (auto softmax = dyn_cast<SoftmaxOp>(op))
    return softmax.getDim() == type.getRank() - 1;
  if (auto softmax = dyn_cast<LogSoftmaxOp>(op))
    return softmax.getDim() == type.getRank() - 1;
  return isa<LayerNormOp, RmsNormOp>(op);
}

/// A block per row, the row held in registers: thread t keeps elements t,
/// t + T, ... (T threads, a multiple of 32 up to 1024, so loads coalesce),
/// reads the row from memory once and writes the result once. The row's
/// statistics (max and sum of exponentials; mean and variance) are block
/// reductions: a warp butterfly, then the warp totals through shared memory,
/// added by every thread in warp order (deterministic). Computes in f32.
FailureOr<GpuKernel> emitRowKernel(Operation *op, StringRef name,
                                   OpBuilder &moduleBuilder) {
  Location loc = op->getLoc();
  MLIRContext *context = op->getContext();
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  Type f32 = type.getElementType();
  int64_t columns = type.getShape().back();
  int64_t rows = type.getNumElements() / std::max<int64_t>(columns, 1);
  int64_t threads = rowBlockThreads(columns);
  int64_t perThread = ceilDiv(columns, threads);
  int64_t warps = threads / kWarp;
  // One buffer per reduction, so no barrier is needed between them.
  SmallVector<Type> workgroup(2, workgroupBuffer(context, warps, f32));
  GpuKernel kernel =
      createGpuKernel(moduleBuilder, loc, name, op->getOperandTypes(),
                      op->getResultTypes(), workgroup);
  setLaunch(kernel, rows, threads);
  OpBuilder b = OpBuilder::atBlockBegin(&kernel.function.getBody().front());
  IndexMath im{b, loc};
  Value x = flatten(b, loc, kernel.inputs[0]);
  Value y = flatten(b, loc, kernel.outputs[0]);
  Value thread = im.threadId(), row = im.blockId();
  Value rowStart = im.mul(row, im.c(columns));
  auto constant = [&](double v) -> Value {
    return arith::ConstantOp::create(b, loc, f32, b.getFloatAttr(f32, v));
  };
  auto select = [&](Value c, Value t, Value f) -> Value {
    return arith::SelectOp::create(b, loc, c, t, f);
  };
  auto blockReduce = [&](Value partial, Value shared, bool max) {
    return blockAllReduce(b, loc, partial, shared, warps, max);
  };

  // Load the row: element k of this thread is column thread + k * threads.
  SmallVector<Value> column, inside, values;
  for (int64_t k = 0; k < perThread; ++k) {
    Value c = im.add(thread, im.c(k * threads));
    Value in = im.lt(c, im.c(columns));
    // Out-of-row slots read column 0 (always valid) and are masked below.
    Value safe = select(in, c, im.c(0));
    column.push_back(safe);
    inside.push_back(in);
    values.push_back(
        memref::LoadOp::create(b, loc, x, ValueRange{im.add(rowStart, safe)}));
  }
  auto store = [&](int64_t k, Value v) {
    auto branch = scf::IfOp::create(b, loc, inside[k], /*withElse=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&branch.getThenRegion().front());
    memref::StoreOp::create(b, loc, v, y,
                            ValueRange{im.add(rowStart, column[k])});
  };
  Value count = constant(static_cast<double>(columns));

  if (isa<SoftmaxOp, LogSoftmaxOp>(op)) {
    Value localMax = constant(-INFINITY);
    for (int64_t k = 0; k < perThread; ++k)
      localMax = arith::MaximumFOp::create(
          b, loc, localMax, select(inside[k], values[k], constant(-INFINITY)));
    Value rowMax = blockReduce(localMax, kernel.workgroup[0], /*max=*/true);
    SmallVector<Value> exps;
    Value localSum = constant(0.0);
    for (int64_t k = 0; k < perThread; ++k) {
      Value e = math::ExpOp::create(
          b, loc, arith::SubFOp::create(b, loc, values[k], rowMax));
      exps.push_back(e);
      localSum = arith::AddFOp::create(b, loc, localSum,
                                       select(inside[k], e, constant(0.0)));
    }
    Value rowSum = blockReduce(localSum, kernel.workgroup[1], /*max=*/false);
    if (isa<SoftmaxOp>(op)) {
      Value inverse = arith::DivFOp::create(b, loc, constant(1.0), rowSum);
      for (int64_t k = 0; k < perThread; ++k)
        store(k, arith::MulFOp::create(b, loc, exps[k], inverse));
    } else {
      Value shift = arith::AddFOp::create(b, loc, rowMax,
                                          math::LogOp::create(b, loc, rowSum));
      for (int64_t k = 0; k < perThread; ++k)
        store(k, arith::SubFOp::create(b, loc, values[k], shift));
    }
  } else {
    bool rms = isa<RmsNormOp>(op);
    Value weight, bias;
    double epsilon;
    if (auto norm = dyn_cast<LayerNormOp>(op)) {
      epsilon = norm.getEpsilon().convertToDouble();
      unsigned next = 1;
      if (norm.getWeight())
        weight = kernel.inputs[next++];
      if (norm.getBias())
        bias = kernel.inputs[next++];
    } else {
      epsilon = cast<RmsNormOp>(op).getEpsilon().convertToDouble();
      weight = kernel.inputs[1];
    }
    Value mean = constant(0.0);
    if (!rms) {
      Value localSum = constant(0.0);
      for (int64_t k = 0; k < perThread; ++k)
        localSum = arith::AddFOp::create(
            b, loc, localSum, select(inside[k], values[k], constant(0.0)));
      mean = arith::DivFOp::create(
          b, loc, blockReduce(localSum, kernel.workgroup[0], false), count);
    }
    SmallVector<Value> centered;
    Value localSquares = constant(0.0);
    for (int64_t k = 0; k < perThread; ++k) {
      Value d = arith::SubFOp::create(b, loc, values[k], mean);
      centered.push_back(d);
      Value square = arith::MulFOp::create(b, loc, d, d);
      localSquares = arith::AddFOp::create(
          b, loc, localSquares, select(inside[k], square, constant(0.0)));
    }
    Value variance = arith::DivFOp::create(
        b, loc, blockReduce(localSquares, kernel.workgroup[1], false), count);
    Value scale = arith::DivFOp::create(
        b, loc, constant(1.0),
        math::SqrtOp::create(
            b, loc,
            arith::AddFOp::create(b, loc, variance, constant(epsilon))));
    for (int64_t k = 0; k < perThread; ++k) {
      Value v = arith::MulFOp::create(b, loc, centered[k], scale);
      if (weight)
        v = arith::MulFOp::create(
            b, loc, v, memref::LoadOp::create(b, loc, weight, column[k]));
      if (bias)
        v = arith::AddFOp::create(
            b, loc, v, memref::LoadOp::create(b, loc, bias, column[k]));
      store(k, v);
    }
  }
  gpu::ReturnOp::create(b, loc);
  return kernel;
}

//===----------------------------------------------------------------------===//
// cross_entropy and cross_entropy_grad
//===----------------------------------------------------------------------===//

/// f32 logits of rank 2: the cross-entropy emitter takes them.
bool hasGpuCrossEntropyKernel(Operation *op) {
  if (!isa<CrossEntropyOp, CrossEntropyGradOp>(op))
    return false;
  auto logits = cast<RankedTensorType>(op->getOperand(0).getType());
  return logits.getElementType().isF32() && logits.getRank() == 2;
}

/// The per-row and per-element f32 formulas of cross-entropy that both of
/// its emitters use (the CPU kernel's semantics).
struct CrossEntropyMath {
  OpBuilder &b;
  Location loc;
  int64_t classes;
  double smoothing;

  Value constant(double v) {
    return arith::ConstantOp::create(b, loc, b.getF32Type(),
                                     b.getF32FloatAttr(v));
  }
  Value select(Value c, Value t, Value f) {
    return arith::SelectOp::create(b, loc, c, t, f);
  }
  /// A row's loss from its max, sum of exponentials, sum of logits and the
  /// label's logit: (1 - s) nll + s (logsumexp - mean logit); 0 for an
  /// ignored row, NaN for a label out of range.
  Value rowLoss(Value max, Value sum, Value sumLogits, Value labelLogit,
                Value valid, Value ignored) {
    Value logSumExp =
        arith::AddFOp::create(b, loc, max, math::LogOp::create(b, loc, sum));
    Value nll = arith::SubFOp::create(b, loc, logSumExp, labelLogit);
    Value uniform = arith::SubFOp::create(
        b, loc, logSumExp,
        arith::DivFOp::create(b, loc, sumLogits,
                              constant(static_cast<double>(classes))));
    Value loss = arith::AddFOp::create(
        b, loc, arith::MulFOp::create(b, loc, constant(1 - smoothing), nll),
        arith::MulFOp::create(b, loc, constant(smoothing), uniform));
    return select(ignored, constant(0.0), select(valid, loss, constant(NAN)));
  }
  /// The gradient at `column` of probability `p`: weight (p - target), the
  /// target (1 - s) at the label plus s / C everywhere; 0 for an ignored row.
  Value gradient(Value p, Value column, Value safeLabel, Value safeWeight,
                 Value ignored) {
    Value isLabel = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                          column, safeLabel);
    Value target = arith::AddFOp::create(
        b, loc, select(isLabel, constant(1 - smoothing), constant(0.0)),
        constant(smoothing / static_cast<double>(classes)));
    Value grad = arith::MulFOp::create(
        b, loc, safeWeight, arith::SubFOp::create(b, loc, p, target));
    return select(ignored, constant(0.0), grad);
  }
};

/// Cross-entropy of wide rows (1024 classes or more) with reduction none
/// (genesis-decompose-cross-entropy leaves only those on the GPU): a block
/// per row, the row in registers as in the row emitter, so the forward reads
/// the logits once and the gradient reads them once and writes once. The
/// row's max, sum of exponentials and (with label smoothing) sum of logits
/// are block reductions.
FailureOr<GpuKernel> emitWideCrossEntropyKernel(Operation *op, StringRef name,
                                                OpBuilder &moduleBuilder) {
  Location loc = op->getLoc();
  MLIRContext *context = op->getContext();
  bool gradient = isa<CrossEntropyGradOp>(op);
  auto logitsType = cast<RankedTensorType>(op->getOperand(0).getType());
  Type f32 = logitsType.getElementType();
  int64_t rows = logitsType.getDimSize(0), classes = logitsType.getDimSize(1);
  auto ignoreAttr = op->getAttrOfType<IntegerAttr>("ignore_index");
  int64_t ignore = ignoreAttr ? ignoreAttr.getInt() : -100;
  auto smoothingAttr = op->getAttrOfType<FloatAttr>("label_smoothing");
  double smoothing = smoothingAttr ? smoothingAttr.getValueAsDouble() : 0.0;
  // 16 columns per thread: the loss reads and writes nothing else, so the
  // loads in flight per SM (resident threads x columns each) set its speed.
  int64_t threads = std::clamp<int64_t>(
      ceilDiv(ceilDiv(classes, 16), kWarp) * kWarp, kWarp, 1024);
  int64_t perThread = ceilDiv(classes, threads), warps = threads / kWarp;
  SmallVector<Type> workgroup(3, workgroupBuffer(context, warps, f32));
  GpuKernel kernel =
      createGpuKernel(moduleBuilder, loc, name, op->getOperandTypes(),
                      op->getResultTypes(), workgroup);
  setLaunch(kernel, rows, threads);
  OpBuilder b = OpBuilder::atBlockBegin(&kernel.function.getBody().front());
  IndexMath im{b, loc};
  CrossEntropyMath formulas{b, loc, classes, smoothing};
  Value logits = flatten(b, loc, kernel.inputs[0]);
  Value output = kernel.outputs[0];
  Value thread = im.threadId(), row = im.blockId();
  Value rowStart = im.mul(row, im.c(classes));
  Type i64 = b.getI64Type();
  auto constant = [&](double v) -> Value {
    return arith::ConstantOp::create(b, loc, f32, b.getFloatAttr(f32, v));
  };
  auto i64Constant = [&](int64_t v) -> Value {
    return arith::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(v));
  };
  auto select = [&](Value c, Value t, Value f) -> Value {
    return arith::SelectOp::create(b, loc, c, t, f);
  };
  Value label =
      memref::LoadOp::create(b, loc, kernel.inputs[1], ValueRange{row});
  if (label.getType() != i64)
    label = arith::ExtSIOp::create(b, loc, i64, label);
  Value ignored = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, label,
                                        i64Constant(ignore));
  Value valid = arith::AndIOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, label,
                            i64Constant(0)),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, label,
                            i64Constant(classes)));
  Value safeLabel = arith::IndexCastOp::create(
      b, loc, b.getIndexType(), select(valid, label, i64Constant(0)));
  // Issued before the row's loads and reductions, so its latency overlaps
  // them (every thread reads the same word; the loss takes thread 0's).
  Value labelLogit;
  if (!gradient)
    labelLogit = memref::LoadOp::create(
        b, loc, logits, ValueRange{im.add(rowStart, safeLabel)});
  SmallVector<Value> column, inside, values;
  Value localMax = constant(-INFINITY), localSum = constant(0.0);
  for (int64_t k = 0; k < perThread; ++k) {
    Value c = im.add(thread, im.c(k * threads));
    Value in = im.lt(c, im.c(classes));
    Value safe = select(in, c, im.c(0));
    Value x = memref::LoadOp::create(b, loc, logits,
                                     ValueRange{im.add(rowStart, safe)});
    column.push_back(safe);
    inside.push_back(in);
    values.push_back(x);
    localMax = arith::MaximumFOp::create(b, loc, localMax,
                                         select(in, x, constant(-INFINITY)));
    localSum =
        arith::AddFOp::create(b, loc, localSum, select(in, x, constant(0.0)));
  }
  Value max =
      blockAllReduce(b, loc, localMax, kernel.workgroup[0], warps, true);
  SmallVector<Value> exps;
  Value localExp = constant(0.0);
  for (int64_t k = 0; k < perThread; ++k) {
    Value e = math::ExpOp::create(
        b, loc, arith::SubFOp::create(b, loc, values[k], max));
    exps.push_back(e);
    localExp = arith::AddFOp::create(b, loc, localExp,
                                     select(inside[k], e, constant(0.0)));
  }
  Value sum =
      blockAllReduce(b, loc, localExp, kernel.workgroup[1], warps, false);
  Value nan = constant(NAN);
  if (!gradient) {
    Value sumLogits = smoothing != 0.0
                          ? blockAllReduce(b, loc, localSum,
                                           kernel.workgroup[2], warps, false)
                          : constant(0.0);
    Value rowLoss =
        formulas.rowLoss(max, sum, sumLogits, labelLogit, valid, ignored);
    auto only = scf::IfOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, thread,
                              im.c(0)),
        /*withElse=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&only.getThenRegion().front());
    memref::StoreOp::create(b, loc, rowLoss, output, ValueRange{row});
  } else {
    Value weight =
        memref::LoadOp::create(b, loc, kernel.inputs[2], ValueRange{row});
    Value safeWeight = select(valid, weight, nan);
    Value inverse = arith::DivFOp::create(b, loc, constant(1.0), sum);
    Value flatOutput = flatten(b, loc, output);
    for (int64_t k = 0; k < perThread; ++k) {
      Value p = arith::MulFOp::create(b, loc, exps[k], inverse);
      Value grad =
          formulas.gradient(p, column[k], safeLabel, safeWeight, ignored);
      auto store = scf::IfOp::create(b, loc, inside[k], /*withElse=*/false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&store.getThenRegion().front());
      memref::StoreOp::create(b, loc, grad, flatOutput,
                              ValueRange{im.add(rowStart, column[k])});
    }
  }
  gpu::ReturnOp::create(b, loc);
  return kernel;
}

/// A warp per row (lanes striding over the classes, warp butterflies for the
/// row's max, sum of exponentials and sum of logits), rows striding over the
/// grid. The gradient runs on up to 264 blocks of 8 warps, each block first
/// counting the rows that are not ignored (for the mean) by itself; a mean
/// or summed loss runs on one block of 32 warps, each warp adding its rows'
/// losses in row order and the warps added in warp order, so the result is
/// deterministic. The semantics are those of the CPU kernel: label smoothing
/// spreads over the classes, an ignored row counts 0, a label out of range
/// gives NaN. Computes in f32.
FailureOr<GpuKernel> emitCrossEntropyKernel(Operation *op, StringRef name,
                                            OpBuilder &moduleBuilder) {
  auto reductionOf = op->getAttrOfType<LossReductionAttr>("reduction");
  if (reductionOf && reductionOf.getValue() == LossReduction::none &&
      cast<RankedTensorType>(op->getOperand(0).getType()).getDimSize(1) >= 1024)
    return emitWideCrossEntropyKernel(op, name, moduleBuilder);
  Location loc = op->getLoc();
  MLIRContext *context = op->getContext();
  bool gradient = isa<CrossEntropyGradOp>(op);
  auto logitsType = cast<RankedTensorType>(op->getOperand(0).getType());
  Type f32 = logitsType.getElementType();
  int64_t rows = logitsType.getDimSize(0), classes = logitsType.getDimSize(1);
  auto reductionAttr = op->getAttrOfType<LossReductionAttr>("reduction");
  LossReduction reduction =
      reductionAttr ? reductionAttr.getValue() : LossReduction::mean;
  auto ignoreAttr = op->getAttrOfType<IntegerAttr>("ignore_index");
  int64_t ignore = ignoreAttr ? ignoreAttr.getInt() : -100;
  auto smoothingAttr = op->getAttrOfType<FloatAttr>("label_smoothing");
  double smoothing = smoothingAttr ? smoothingAttr.getValueAsDouble() : 0.0;
  bool total = !gradient && reduction != LossReduction::none;

  int64_t warps = total ? 32 : 8;
  int64_t block = warps * kWarp;
  int64_t grid = total ? 1 : std::min(ceilDiv(rows, warps), int64_t{264});
  SmallVector<Type> workgroup(2, workgroupBuffer(context, warps, f32));
  GpuKernel kernel =
      createGpuKernel(moduleBuilder, loc, name, op->getOperandTypes(),
                      op->getResultTypes(), workgroup);
  setLaunch(kernel, grid, block);
  OpBuilder b = OpBuilder::atBlockBegin(&kernel.function.getBody().front());
  IndexMath im{b, loc};
  CrossEntropyMath formulas{b, loc, classes, smoothing};
  Value logits = kernel.inputs[0], labels = kernel.inputs[1];
  Value output = kernel.outputs[0];
  Value thread = im.threadId();
  Value lane = im.rem(thread, kWarp), warp = im.div(thread, kWarp);
  Type i64 = b.getI64Type();
  auto constant = [&](double v) -> Value {
    return arith::ConstantOp::create(b, loc, f32, b.getFloatAttr(f32, v));
  };
  auto select = [&](Value c, Value t, Value f) -> Value {
    return arith::SelectOp::create(b, loc, c, t, f);
  };
  auto add = [&](Value x, Value y) -> Value {
    return arith::AddFOp::create(b, loc, x, y);
  };
  auto warpAll = [&](Value value, bool max) {
    return warpButterfly(b, loc, value, [&](Value x, Value y) {
      return combineMaxOrSum(b, loc, x, y, max);
    });
  };
  auto labelAt = [&](Value r) -> Value {
    Value label = memref::LoadOp::create(b, loc, labels, ValueRange{r});
    return label.getType() == i64
               ? label
               : arith::ExtSIOp::create(b, loc, i64, label).getResult();
  };
  auto i64Constant = [&](int64_t v) -> Value {
    return arith::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(v));
  };

  // The rows that count, for the mean.
  Value count;
  if (reduction == LossReduction::mean) {
    auto loop = scf::ForOp::create(
        b, loc, thread, im.c(rows), im.c(block), ValueRange{constant(0.0)},
        [&](OpBuilder &lb, Location, Value r, ValueRange carried) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(lb.getInsertionBlock(), lb.getInsertionPoint());
          Value kept = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                             labelAt(r), i64Constant(ignore));
          scf::YieldOp::create(
              lb, loc,
              ValueRange{
                  add(carried[0], select(kept, constant(1.0), constant(0.0)))});
        });
    count =
        blockAllReduce(b, loc, loop.getResult(0), kernel.workgroup[0], warps,
                       /*max=*/false);
  }
  Value weightScalar;
  if (gradient && reduction != LossReduction::none) {
    Value lossGrad =
        memref::LoadOp::create(b, loc, kernel.inputs[2], ValueRange());
    weightScalar =
        reduction == LossReduction::mean
            ? arith::DivFOp::create(b, loc, lossGrad, count).getResult()
            : lossGrad;
  }

  Value firstRow = im.add(im.mul(im.blockId(), im.c(warps)), warp);
  auto rowsLoop = scf::ForOp::create(
      b, loc, firstRow, im.c(rows), im.c(grid * warps),
      ValueRange{constant(0.0)},
      [&](OpBuilder &lb, Location, Value r, ValueRange carried) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(lb.getInsertionBlock(), lb.getInsertionPoint());
        Value label = labelAt(r);
        Value ignored = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                              label, i64Constant(ignore));
        Value valid = arith::AndIOp::create(
            b, loc,
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, label,
                                  i64Constant(0)),
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, label,
                                  i64Constant(classes)));
        Value safeLabel = arith::IndexCastOp::create(
            b, loc, b.getIndexType(), select(valid, label, i64Constant(0)));
        // Over the classes: max and sum of logits, then sum of exponentials.
        auto stats = scf::ForOp::create(
            b, loc, lane, im.c(classes), im.c(kWarp),
            ValueRange{constant(-INFINITY), constant(0.0)},
            [&](OpBuilder &cb, Location, Value c, ValueRange acc) {
              OpBuilder::InsertionGuard g2(b);
              b.setInsertionPoint(cb.getInsertionBlock(),
                                  cb.getInsertionPoint());
              Value x =
                  memref::LoadOp::create(b, loc, logits, ValueRange{r, c});
              scf::YieldOp::create(
                  cb, loc,
                  ValueRange{arith::MaximumFOp::create(b, loc, acc[0], x),
                             add(acc[1], x)});
            });
        Value max = warpAll(stats.getResult(0), /*max=*/true);
        Value sumLogits = warpAll(stats.getResult(1), /*max=*/false);
        auto exps = scf::ForOp::create(
            b, loc, lane, im.c(classes), im.c(kWarp), ValueRange{constant(0.0)},
            [&](OpBuilder &cb, Location, Value c, ValueRange acc) {
              OpBuilder::InsertionGuard g2(b);
              b.setInsertionPoint(cb.getInsertionBlock(),
                                  cb.getInsertionPoint());
              Value x =
                  memref::LoadOp::create(b, loc, logits, ValueRange{r, c});
              Value e = math::ExpOp::create(
                  b, loc, arith::SubFOp::create(b, loc, x, max));
              scf::YieldOp::create(cb, loc, ValueRange{add(acc[0], e)});
            });
        Value sum = warpAll(exps.getResult(0), /*max=*/false);
        Value nan = constant(NAN);
        Value rowLoss = constant(0.0);
        if (!gradient) {
          rowLoss = formulas.rowLoss(
              max, sum, sumLogits,
              memref::LoadOp::create(b, loc, logits, ValueRange{r, safeLabel}),
              valid, ignored);
          if (reduction == LossReduction::none) {
            auto first = scf::IfOp::create(
                b, loc,
                arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane,
                                      im.c(0)),
                /*withElse=*/false);
            OpBuilder::InsertionGuard g2(b);
            b.setInsertionPointToStart(&first.getThenRegion().front());
            memref::StoreOp::create(b, loc, rowLoss, output, ValueRange{r});
          }
        } else {
          Value weight = reduction == LossReduction::none
                             ? memref::LoadOp::create(b, loc, kernel.inputs[2],
                                                      ValueRange{r})
                                   .getResult()
                             : weightScalar;
          Value safeWeight = select(valid, weight, nan);
          Value inverse = arith::DivFOp::create(b, loc, constant(1.0), sum);
          scf::ForOp::create(
              b, loc, lane, im.c(classes), im.c(kWarp), ValueRange(),
              [&](OpBuilder &cb, Location, Value c, ValueRange) {
                OpBuilder::InsertionGuard g2(b);
                b.setInsertionPoint(cb.getInsertionBlock(),
                                    cb.getInsertionPoint());
                Value x =
                    memref::LoadOp::create(b, loc, logits, ValueRange{r, c});
                Value p = arith::MulFOp::create(
                    b, loc,
                    math::ExpOp::create(b, loc,
                                        arith::SubFOp::create(b, loc, x, max)),
                    inverse);
                memref::StoreOp::create(
                    b, loc,
                    formulas.gradient(p, c, safeLabel, safeWeight, ignored),
                    output, ValueRange{r, c});
                scf::YieldOp::create(cb, loc);
              });
        }
        scf::YieldOp::create(lb, loc, ValueRange{add(carried[0], rowLoss)});
      });
  if (total) {
    // Each warp's lanes hold the same running total (butterflies), so the
    // block sum takes lane 0's.
    Value warpTotal = rowsLoop.getResult(0);
    auto first = scf::IfOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane, im.c(0)),
        /*withElse=*/false);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&first.getThenRegion().front());
      memref::StoreOp::create(b, loc, warpTotal, kernel.workgroup[1], warp);
    }
    gpu::BarrierOp::create(b, loc);
    Value sum = memref::LoadOp::create(b, loc, kernel.workgroup[1], im.c(0));
    for (int64_t w = 1; w < warps; ++w)
      sum = add(sum,
                memref::LoadOp::create(b, loc, kernel.workgroup[1], im.c(w)));
    if (reduction == LossReduction::mean)
      sum = arith::DivFOp::create(b, loc, sum, count);
    auto only = scf::IfOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, thread,
                              im.c(0)),
        /*withElse=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&only.getThenRegion().front());
    memref::StoreOp::create(b, loc, sum, output, ValueRange());
  }
  gpu::ReturnOp::create(b, loc);
  return kernel;
}

//===----------------------------------------------------------------------===//
// Ops outside fusions
//===----------------------------------------------------------------------===//

/// Runs the CPU op kernel of `op` (a func.func over [begin, end) of its
/// outer loop, cloned into the GPU module) with one outer iteration per
/// thread. Elementwise ops (optimizer updates, dropout) are emitted over
/// their flattened shape, so every element gets a thread.
FailureOr<GpuKernel> emitOuterLoopKernel(Operation *op, StringRef name,
                                         OpBuilder &moduleBuilder) {
  Location loc = op->getLoc();
  FailureOr<func::FuncOp> body = cpu::emitOpKernel(
      op, (name + "_body").str(), moduleBuilder, /*flattenElementwise=*/true);
  if (failed(body))
    return failure();
  int64_t extent =
      (*body)->getAttrOfType<IntegerAttr>("genesis.outer_extent").getInt();
  // Device malloc is slow and its heap small: the op kernels' scratch
  // (static, allocated once per call) lives on the thread's stack.
  SmallVector<memref::AllocOp> allocs;
  (*body).walk([&](memref::AllocOp alloc) { allocs.push_back(alloc); });
  for (memref::AllocOp alloc : allocs) {
    OpBuilder at(alloc);
    alloc.replaceAllUsesWith(
        memref::AllocaOp::create(at, alloc.getLoc(), alloc.getType())
            .getResult());
    alloc.erase();
  }
  (*body).walk([&](memref::DeallocOp dealloc) { dealloc.erase(); });
  (*body)->removeAttr("genesis.kernel");
  (*body)->removeAttr("genesis.outer_extent");
  (*body).setPrivate();
  auto argTypes = (*body).getArgumentTypes().drop_back(2);
  unsigned numInputs = op->getNumOperands();
  if (isa<DropoutOp>(op))
    numInputs = 2;
  SmallVector<Type> inputs, outputs;
  for (auto [i, type] : llvm::enumerate(argTypes)) {
    auto memref = cast<MemRefType>(type);
    (i < numInputs ? inputs : outputs)
        .push_back(
            RankedTensorType::get(memref.getShape(), memref.getElementType()));
  }
  GpuKernel kernel = createGpuKernel(moduleBuilder, loc, name, inputs, outputs);
  int64_t block = 128;
  setLaunch(kernel, ceilDiv(extent, block), block);
  OpBuilder b = OpBuilder::atBlockBegin(&kernel.function.getBody().front());
  IndexMath im{b, loc};
  Value position = im.globalId(block);
  auto branch = scf::IfOp::create(b, loc, im.lt(position, im.c(extent)),
                                  /*withElse=*/false);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&branch.getThenRegion().front());
    SmallVector<Value> arguments(kernel.inputs);
    arguments.append(kernel.outputs);
    arguments.push_back(position);
    arguments.push_back(im.add(position, im.c(1)));
    func::CallOp::create(b, loc, *body, arguments);
  }
  gpu::ReturnOp::create(b, loc);
  return kernel;
}

/// The kernel of a fusion: a loop fusion without reductions; a reduction
/// fusion for one reduction that only is yielded, beside side results of
/// its operand's shape; otherwise a row fusion.
FailureOr<GpuKernel> emitFusion(FusionOp fusion, StringRef name,
                                OpBuilder &builder) {
  Block &body = fusion.getBody().front();
  SmallVector<Operation *> reductions;
  for (Operation &op : body)
    if (isa<ReduceSumOp, ReduceMaxOp, ReduceMinOp>(op))
      reductions.push_back(&op);
  if (reductions.empty())
    return emitLoopFusion(fusion, name, builder);
  Operation *root = reductions.front();
  Value result = root->getResult(0);
  auto operandShape =
      cast<RankedTensorType>(root->getOperand(0).getType()).getShape();
  bool sidesOfOperandShape =
      llvm::all_of(body.getTerminator()->getOperands(), [&](Value value) {
        return value == result ||
               cast<RankedTensorType>(value.getType()).getShape() ==
                   operandShape;
      });
  if (reductions.size() == 1 && sidesOfOperandShape &&
      llvm::all_of(result.getUsers(),
                   [](Operation *user) { return isa<YieldOp>(user); }))
    return emitReductionFusion(fusion, root, name, builder);
  if (std::optional<SmallVector<int64_t>> rowShape = rowFusionShape(body))
    return emitRowFusion(fusion, *rowShape, name, builder);
  return fusion.emitError(
      "genesis-lower-cuda: a fusion with several reductions, or computing "
      "from a reduction, needs f32 sums or maxima over the last dimension "
      "whose results are used only along their rows");
}

struct GenesisLowerCudaPass
    : public genesis::impl::GenesisLowerCudaBase<GenesisLowerCudaPass> {
  using GenesisLowerCudaBase::GenesisLowerCudaBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *context = &getContext();
    for (auto function : module.getOps<func::FuncOp>())
      mergeRowFusions(function);
    SmallVector<std::pair<func::FuncOp, Operation *>> work;
    for (auto function : module.getOps<func::FuncOp>())
      for (Operation &op : function.getBody().getOps())
        if (isa<FusionOp>(op) || cpu::hasOpKernel(&op))
          work.emplace_back(function, &op);
    if (work.empty())
      return;
    // Index arithmetic is 32-bit in the kernels (see compileCudaKernels).
    for (auto [function, op] : work)
      for (Type type :
           llvm::concat<Type>(op->getOperandTypes(), op->getResultTypes()))
        if (auto tensor = dyn_cast<RankedTensorType>(type);
            tensor && numel(tensor.getShape()) >= (int64_t{1} << 31)) {
          op->emitError("genesis-lower-cuda: tensor ")
              << tensor << " has 2^31 or more elements; GPU kernels index "
              << "with 32 bits";
          return signalPassFailure();
        }
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                    UnitAttr::get(context));
    OpBuilder top = OpBuilder::atBlockEnd(module.getBody());
    auto gpuModule =
        gpu::GPUModuleOp::create(top, module.getLoc(), cuda::kKernelModuleName);
    OpBuilder builder = OpBuilder::atBlockEnd(gpuModule.getBody());
    llvm::StringMap<unsigned> counters;
    for (auto [function, op] : work) {
      StringRef kind = isa<FusionOp>(op) ? StringRef("fusion")
                                         : op->getName().stripDialect();
      std::string name =
          (function.getSymName() + "_" + kind +
           Twine(counters[(function.getSymName() + kind).str()]++))
              .str();
      FailureOr<GpuKernel> kernel = failure();
      if (auto fusion = dyn_cast<FusionOp>(op)) {
        kernel = emitFusion(fusion, name, builder);
      } else if (hasGpuTransposeKernel(op)) {
        kernel = emitTransposeKernel(op, name, builder);
      } else if (hasGpuGatherKernel(op)) {
        kernel = emitGatherKernel(op, name, builder);
      } else if (hasGpuCrossEntropyKernel(op)) {
        kernel = emitCrossEntropyKernel(op, name, builder);
      } else if (hasGpuRowKernel(op)) {
        kernel = emitRowKernel(op, name, builder);
      } else {
        kernel = emitOuterLoopKernel(op, name, builder);
      }
      if (failed(kernel))
        return signalPassFailure();
      op->setAttr("genesis.kernel", FlatSymbolRefAttr::get(context, name));
      cuda::setLaunchAttr(op, kernel->launch);
    }
  }
};

} // namespace
