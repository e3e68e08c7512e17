//===- CudaGemvEmitter.cpp - GEMMs of a few rows as matrix-vector kernels -===//
//
// The matrix-vector emitter of genesis-lower-cuda: a genesis.library_call of
// a few lhs rows (a decode step's token) against a weight stored [N, K],
// which cuBLASLt runs far below the bandwidth of reading the weight once,
// and the matrix-vector fusions of genesis-fuse-matrix-vector: several such
// GEMMs of one lhs in one kernel, with an elementwise epilogue.
//
//===----------------------------------------------------------------------===//

#include "dialect/IR/GenesisOps.h"
#include "passes/Analysis/MatrixVector.h"
#include "passes/Conversion/CudaEmitters.h"
#include "passes/Conversion/ElementEmitter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"

using namespace mlir;

namespace genesis::cuda {

namespace {

/// What one matrix-vector kernel computes: its segments (MatrixVector.h),
/// the kernel argument of each GEMM operand, and the values stored to the
/// kernel's outputs, in order.
struct GemvKernelPlan {
  SmallVector<GemvSegment> segments;
  std::function<Value(Value)> argumentOf;
  SmallVector<Value> stored;
  /// The fusion body whose arguments the epilogue reads, if any.
  Block *body = nullptr;
  /// The fusion computing the lhs in every block, if any, and the shared
  /// buffer it computes the lhs into.
  std::optional<GemvPrologue> prologue;
  Value lhsShared;
};

/// Enough warps in flight to cover the latency of HBM on every SM (132 SMs,
/// about 32 warps each).
constexpr int64_t kGemvTargetWarps = 4096;

/// Elements of one vector load of every GEMM of `segment`.
int64_t segmentVectorWidth(GemvSegment &segment) {
  LibraryCallOp first = segment.calls.front();
  auto lhsType = cast<RankedTensorType>(first.getLhs().getType());
  int64_t depth = lhsType.getDimSize(1);
  int64_t width = gemvVectorWidth(lhsType.getElementType(), depth);
  for (LibraryCallOp call : segment.calls)
    width = std::min(
        width,
        gemvVectorWidth(
            cast<RankedTensorType>(call.getRhs().getType()).getElementType(),
            depth));
  return width;
}

/// The warps that share each column of `segment` (a power of two dividing
/// kGemvWarps): few columns of a long K (Qwen2's down projection, 896
/// columns of 4864) would otherwise run too few warps to keep HBM busy.
/// Each warp keeps at least one vector a lane.
int64_t segmentSplit(GemvSegment &segment) {
  int64_t depth =
      cast<RankedTensorType>(segment.calls.front().getLhs().getType())
          .getDimSize(1);
  int64_t vectors = depth / segmentVectorWidth(segment);
  int64_t split = 1;
  while (split < kGemvWarps && segment.columns * split < kGemvTargetWarps &&
         vectors >= 2 * split * kWarp)
    split *= 2;
  return split;
}

/// Emits segment `segment` for output column `column` of its GEMMs, this
/// warp taking slice `slice` of the `split` slices of K: lane l reads the
/// weight rows' vectors (i * split + slice) * 32 + l (16 bytes each,
/// coalesced across the warp; all of a lane's loads are unrolled, so they
/// are in flight together) and the matching lhs vectors once for every
/// GEMM, accumulates in f32, and a butterfly of shuffles sums the lanes.
/// With slices, lane 0 of each warp writes its sums to shared memory and
/// the column's first warp adds the slices' in order after a barrier (fixed
/// orders: deterministic). Lane 0 of that warp applies alpha, the bias and
/// ReLU, rounds to the result type, stores the GEMM results the kernel
/// yields and computes and stores the epilogue's values at that column.
/// Every weight load is issued before anything else of the segment;
/// `afterWeightLoads`, when given, is emitted right after them.
LogicalResult
emitSegment(OpBuilder &b, Location loc, GpuKernel &kernel,
            const GemvKernelPlan &plan, GemvSegment segment, Value column,
            Value warp, Value lane,
            function_ref<LogicalResult()> afterWeightLoads = nullptr) {
  IndexMath im{b, loc};
  Type f32 = b.getF32Type();
  LibraryCallOp first = segment.calls.front();
  auto lhsType = cast<RankedTensorType>(first.getLhs().getType());
  const int64_t rows = lhsType.getDimSize(0), depth = lhsType.getDimSize(1),
                columns = segment.columns;
  Type lhsElement = lhsType.getElementType();
  int64_t width = segmentVectorWidth(segment);
  int64_t vectors = depth / width;
  int64_t split = segmentSplit(segment);
  int64_t perLane = ceilDiv(vectors, kWarp * split);
  Value slice = im.rem(warp, split);
  auto constant = [&](double v) -> Value {
    return arith::ConstantOp::create(b, loc, f32, b.getFloatAttr(f32, v));
  };
  auto widen = [&](Value x) -> Value {
    return x.getType() == f32 ? x : arith::ExtFOp::create(b, loc, f32, x);
  };
  auto loadVector = [&](Value memref, Type element, Value at) {
    SmallVector<Value> lanes;
    if (width == 1) {
      lanes.push_back(widen(memref::LoadOp::create(b, loc, memref, at)));
      return lanes;
    }
    Value loaded = vector::LoadOp::create(
        b, loc, VectorType::get({width}, element), memref, ValueRange{at},
        /*nontemporal=*/false, laneAlignment(element, width));
    for (int64_t e = 0; e < width; ++e)
      lanes.push_back(widen(
          vector::ExtractOp::create(b, loc, loaded, ArrayRef<int64_t>{e})));
    return lanes;
  };

  // Warps past the last column compute column 0 and do not store.
  Value inside = im.lt(column, im.c(columns));
  Value safeColumn = arith::SelectOp::create(b, loc, inside, column, im.c(0));
  Value weightRow = im.mul(safeColumn, im.c(depth));
  Value lhs = plan.lhsShared ? plan.lhsShared
                             : flatten(b, loc, plan.argumentOf(first.getLhs()));
  SmallVector<Value> weights;
  for (LibraryCallOp call : segment.calls)
    weights.push_back(flatten(b, loc, plan.argumentOf(call.getRhs())));
  // loaded[i][c]: the lanes of GEMM c's weight vector i; valid[i], k[i]:
  // whether vector i lies in the row, and its first element.
  SmallVector<SmallVector<SmallVector<Value>>> loaded(perLane);
  SmallVector<Value> valids, ks;
  for (int64_t i = 0; i < perLane; ++i) {
    Value vector =
        im.add(im.mul(im.add(im.c(i * split), slice), im.c(kWarp)), lane);
    valids.push_back(im.lt(vector, im.c(vectors)));
    ks.push_back(
        im.mul(arith::SelectOp::create(b, loc, valids.back(), vector, im.c(0)),
               im.c(width)));
    for (auto [call, memref] : llvm::zip(segment.calls, weights))
      loaded[i].push_back(loadVector(
          memref,
          cast<RankedTensorType>(call.getRhs().getType()).getElementType(),
          im.add(weightRow, ks.back())));
  }
  if (afterWeightLoads && failed(afterWeightLoads()))
    return failure();
  // sums[c * rows + m]: GEMM c's column at lhs row m.
  SmallVector<Value> sums(segment.calls.size() * rows, constant(0.0));
  for (int64_t i = 0; i < perLane; ++i) {
    Value valid = valids[i], k = ks[i];
    ArrayRef<SmallVector<Value>> weight = loaded[i];
    for (int64_t m = 0; m < rows; ++m) {
      SmallVector<Value> x =
          loadVector(lhs, lhsElement, im.add(im.c(m * depth), k));
      for (size_t c = 0; c < segment.calls.size(); ++c) {
        Value dot = constant(0.0);
        for (int64_t e = 0; e < width; ++e)
          dot = math::FmaOp::create(b, loc, x[e], weight[c][e], dot);
        Value &sum = sums[c * rows + m];
        sum = arith::AddFOp::create(
            b, loc, sum,
            arith::SelectOp::create(b, loc, valid, dot, constant(0.0)));
      }
    }
  }
  for (Value &sum : sums)
    sum = warpButterfly(b, loc, sum, [&](Value x, Value y) {
      return arith::AddFOp::create(b, loc, x, y).getResult();
    });
  auto isZero = [&](Value index) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, index,
                                 im.c(0))
        .getResult();
  };
  if (split > 1) {
    // partials[warp * sums + s]: this warp's slice of sum s.
    Value partials = kernel.workgroup[0];
    int64_t count = static_cast<int64_t>(sums.size());
    auto writer = scf::IfOp::create(b, loc, isZero(lane), /*withElse=*/false);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&writer.getThenRegion().front());
      for (auto [s, sum] : llvm::enumerate(sums))
        memref::StoreOp::create(
            b, loc, sum, partials,
            ValueRange{im.add(im.mul(warp, im.c(count)),
                              im.c(static_cast<int64_t>(s)))});
    }
    gpu::BarrierOp::create(b, loc);
    // The column's first warp (slice 0) adds the slices in order; only its
    // lane 0 uses the totals.
    Value firstWarp = im.sub(warp, slice);
    for (auto [s, sum] : llvm::enumerate(sums)) {
      sum = constant(0.0);
      for (int64_t k = 0; k < split; ++k)
        sum = arith::AddFOp::create(
            b, loc, sum,
            memref::LoadOp::create(
                b, loc, partials,
                ValueRange{
                    im.add(im.mul(im.add(firstWarp, im.c(k)), im.c(count)),
                           im.c(static_cast<int64_t>(s)))}));
    }
  }
  Value store = arith::AndIOp::create(
      b, loc, arith::AndIOp::create(b, loc, inside, isZero(lane)),
      isZero(slice));
  auto branch = scf::IfOp::create(b, loc, store, /*withElse=*/false);
  b.setInsertionPointToStart(&branch.getThenRegion().front());
  // results[c * rows + m]: GEMM c's result element, rounded to its type.
  SmallVector<Value> results;
  for (auto [c, call] : llvm::enumerate(segment.calls)) {
    Type resultElement =
        cast<RankedTensorType>(call.getType()).getElementType();
    GemmEpilogue epilogue = call.getEpilogue();
    bool relu =
        epilogue == GemmEpilogue::relu || epilogue == GemmEpilogue::bias_relu;
    double alpha = call.getAlpha().convertToDouble();
    Value bias = call.getBias() ? plan.argumentOf(call.getBias()) : Value();
    for (int64_t m = 0; m < rows; ++m) {
      Value y = sums[c * rows + m];
      if (alpha != 1.0)
        y = arith::MulFOp::create(b, loc, y, constant(alpha));
      if (bias)
        y = arith::AddFOp::create(
            b, loc, y,
            widen(memref::LoadOp::create(b, loc, bias, ValueRange{column})));
      if (relu)
        y = arith::MaximumFOp::create(b, loc, y, constant(0.0));
      if (resultElement != f32)
        y = arith::TruncFOp::create(b, loc, resultElement, y);
      results.push_back(y);
      for (auto [output, value] : llvm::enumerate(plan.stored))
        if (value == call.getResult())
          memref::StoreOp::create(
              b, loc, y, flatten(b, loc, kernel.outputs[output]),
              ValueRange{im.add(im.c(m * columns), column)});
    }
  }
  if (!segment.epilogueYields.empty()) {
    ElementEmitter emitter(b, loc, kernel.inputs, "genesis-lower-cuda");
    for (int64_t m = 0; m < rows; ++m) {
      for (auto [c, call] : llvm::enumerate(segment.calls))
        emitter.given[call.getResult()] = results[c * rows + m];
      Value linear = im.add(im.c(m * columns), column);
      for (unsigned output : segment.epilogueYields) {
        Value value = plan.stored[output];
        SmallVector<Value> index = im.delinearize(
            linear, cast<RankedTensorType>(value.getType()).getShape());
        emitter.beginElement(index);
        FailureOr<Value> scalar = emitter.at(value, index);
        if (failed(scalar))
          return failure();
        memref::StoreOp::create(b, loc, *scalar,
                                flatten(b, loc, kernel.outputs[output]),
                                ValueRange{linear});
      }
    }
  }
  b.setInsertionPointAfter(branch);
  return success();
}

/// Every block computes the lhs into `plan.lhsShared` from the prologue's
/// body, its block's threads taking the lhs's elements in turn (a fusion
/// with reductions: row by row, each as the row fusion emitter computes a
/// row, through `rowShareds[row]`); the first block also stores the
/// prologue's results the fusion yields. A barrier then makes the lhs
/// visible to the block's warps.
LogicalResult emitPrologue(OpBuilder &b, Location loc, GpuKernel &kernel,
                           const GemvKernelPlan &plan, Value block,
                           Value thread,
                           ArrayRef<SmallVector<Value>> rowShareds) {
  IndexMath im{b, loc};
  const GemvPrologue &prologue = *plan.prologue;
  FusionOp fusion = prologue.fusion;
  Block &body = fusion.getBody().front();
  Operation *yield = body.getTerminator();
  SmallVector<Value> inputs;
  for (Value input : fusion.getInputs())
    inputs.push_back(plan.argumentOf(input));
  ElementEmitter emitter(b, loc, inputs, "genesis-lower-cuda");
  Value lhsValue = yield->getOperand(prologue.lhsResult);
  // (prologue body value, kernel output) of each result the fusion yields.
  SmallVector<std::pair<Value, Value>> yielded;
  for (unsigned index : prologue.yields)
    yielded.emplace_back(
        yield->getOperand(cast<OpResult>(plan.stored[index]).getResultNumber()),
        kernel.outputs[index]);
  Value firstBlock =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, block, im.c(0));
  auto storeIf = [&](Value condition, Value scalar, Value memref,
                     ValueRange index) {
    auto branch = scf::IfOp::create(b, loc, condition, /*withElse=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&branch.getThenRegion().front());
    memref::StoreOp::create(b, loc, scalar, memref, index);
  };
  // Computes the lhs and the yielded values of one element at `index`
  // (linear position `linear` in the lhs), the emitter's element begun or
  // resumed by the caller.
  auto element = [&](ValueRange index, Value linear, Value inside,
                     bool fullRowsOnly) -> LogicalResult {
    FailureOr<Value> scalar = emitter.at(lhsValue, index);
    if (failed(scalar))
      return failure();
    storeIf(inside, *scalar, plan.lhsShared, linear);
    for (auto [value, output] : yielded) {
      auto type = cast<RankedTensorType>(value.getType());
      if (fullRowsOnly &&
          type.getShape() != ArrayRef<int64_t>(prologue.rowShape))
        continue;
      FailureOr<Value> stored = emitter.at(value, index);
      if (failed(stored))
        return failure();
      storeIf(arith::AndIOp::create(b, loc, inside, firstBlock), *stored,
              output, index);
    }
    return success();
  };
  const int64_t threads = kGemvWarps * kWarp;
  ArrayRef<int64_t> shape = prologue.rowShape;
  if (!prologue.reduces) {
    int64_t count = numel(shape);
    for (int64_t k = 0; k < ceilDiv(count, threads); ++k) {
      Value linear = im.add(thread, im.c(k * threads));
      Value inside = im.lt(linear, im.c(count));
      Value safe = arith::SelectOp::create(b, loc, inside, linear, im.c(0));
      SmallVector<Value> index = im.delinearize(safe, shape);
      emitter.beginElement(index);
      if (failed(element(index, safe, inside, /*fullRowsOnly=*/false)))
        return failure();
    }
  } else {
    int64_t columns = shape.back();
    SmallVector<int64_t> rowsShape(shape.drop_back());
    for (int64_t r = 0; r < numel(rowsShape); ++r) {
      SmallVector<Value> rowIndex = im.delinearize(im.c(r), rowsShape);
      FailureOr<RowElements> row =
          emitRowReductions(b, loc, body, emitter, rowIndex, thread, threads,
                            columns, rowShareds[r]);
      if (failed(row))
        return failure();
      for (auto [k, index] : llvm::enumerate(row->indices)) {
        emitter.resumeElement(row->saved[k], index);
        Value linear = im.add(im.c(r * columns), index.back());
        if (failed(element(index, linear, row->inside[k],
                           /*fullRowsOnly=*/true)))
          return failure();
      }
      // Per-row values ([rows...] or [rows..., 1]): the first thread.
      SmallVector<Value> index(rowIndex);
      index.push_back(im.c(0));
      Value firstThread = arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::eq, thread, im.c(0));
      for (auto [value, output] : yielded) {
        auto type = cast<RankedTensorType>(value.getType());
        if (type.getShape() == shape)
          continue;
        ValueRange at = ValueRange(index).take_front(type.getRank());
        FailureOr<Value> scalar = emitter.at(value, at);
        if (failed(scalar))
          return failure();
        storeIf(arith::AndIOp::create(b, loc, firstThread, firstBlock), *scalar,
                output, at);
      }
    }
  }
  gpu::BarrierOp::create(b, loc);
  return success();
}

/// Whether `value` (an operand of `op`, or of the fusion body `body` that
/// `op` runs) is an argument of the function holding `op` that no function
/// of the module updates (a generation plan's weight; a trained one is
/// written by the optimizer, which an unordered launch of the next step
/// could overtake): nothing writes it while the plan runs.
bool isReadOnlyArgument(Operation *op, Block *body, Value value) {
  if (body) {
    auto argument = dyn_cast<BlockArgument>(value);
    if (!argument || argument.getOwner() != body)
      return false;
    value = op->getOperand(argument.getArgNumber());
  }
  auto argument = dyn_cast<BlockArgument>(value);
  auto function =
      argument ? dyn_cast<func::FuncOp>(argument.getOwner()->getParentOp())
               : func::FuncOp();
  auto name = function ? function.getArgAttrOfType<StringAttr>(
                             argument.getArgNumber(), "genesis.name")
                       : StringAttr();
  auto module = function ? function->getParentOfType<ModuleOp>() : ModuleOp();
  if (!name || !module)
    return false;
  for (func::FuncOp other : module.getOps<func::FuncOp>())
    for (unsigned r = 0; r < other.getNumResults(); ++r)
      if (other.getResultAttrOfType<StringAttr>(r, "genesis.name") == name)
        return false;
  return true;
}

/// Block b runs the segment whose blocks hold it (each segment has a block
/// per kGemvWarps / split columns, segmentSplit); its warp w computes slice
/// w % split of column (kGemvWarps / split) * (b - the segment's first
/// block) + w / split.
FailureOr<GpuKernel> emitGemvKernel(Operation *op, StringRef name,
                                    OpBuilder &moduleBuilder,
                                    GemvKernelPlan &plan) {
  Location loc = op->getLoc();
  int64_t blocks = 0, partialCount = 0;
  for (GemvSegment &segment : plan.segments) {
    int64_t split = segmentSplit(segment);
    blocks += ceilDiv(segment.columns, kGemvWarps / split);
    int64_t rows =
        cast<RankedTensorType>(segment.calls.front().getLhs().getType())
            .getDimSize(0);
    if (split > 1)
      partialCount = std::max(partialCount,
                              kGemvWarps * rows *
                                  static_cast<int64_t>(segment.calls.size()));
  }
  MLIRContext *context = op->getContext();
  SmallVector<Type> workgroup;
  if (partialCount > 0)
    workgroup.push_back(
        workgroupBuffer(context, partialCount, Float32Type::get(context)));
  // The prologue's lhs, then its reductions' buffers, row by row.
  size_t lhsBuffer = workgroup.size();
  int64_t prologueRows = 0;
  if (plan.prologue) {
    auto lhsType = cast<RankedTensorType>(
        plan.segments.front().calls.front().getLhs().getType());
    workgroup.push_back(workgroupBuffer(context, lhsType.getNumElements(),
                                        lhsType.getElementType()));
    if (plan.prologue->reduces) {
      prologueRows =
          numel(ArrayRef<int64_t>(plan.prologue->rowShape).drop_back());
      for (int64_t r = 0; r < prologueRows; ++r)
        llvm::append_range(
            workgroup,
            rowReductionBuffers(
                context, plan.prologue->fusion.getBody().front(), kGemvWarps));
    }
  }
  GpuKernel kernel =
      createGpuKernel(moduleBuilder, loc, name, op->getOperandTypes(),
                      op->getResultTypes(), workgroup);
  setLaunch(kernel, blocks, kGemvWarps * kWarp);
  OpBuilder b = OpBuilder::atBlockBegin(&kernel.function.getBody().front());
  IndexMath im{b, loc};
  if (plan.body)
    plan.argumentOf = [&kernel](Value argument) {
      return kernel.inputs[cast<BlockArgument>(argument).getArgNumber()];
    };
  else
    plan.argumentOf = [&kernel, op](Value operand) {
      auto it = llvm::find(op->getOperands(), operand);
      return kernel.inputs[std::distance(op->getOperands().begin(), it)];
    };
  Value thread = im.threadId();
  Value lane = im.rem(thread, kWarp);
  Value warp = im.div(thread, kWarp);
  Value block = im.blockId();
  SmallVector<SmallVector<Value>> rowShareds(prologueRows);
  if (plan.prologue) {
    plan.lhsShared = kernel.workgroup[lhsBuffer];
    size_t perRow =
        prologueRows == 0
            ? 0
            : (kernel.workgroup.size() - lhsBuffer - 1) / prologueRows;
    for (int64_t r = 0; r < prologueRows; ++r)
      llvm::append_range(rowShareds[r],
                         ArrayRef<Value>(kernel.workgroup)
                             .slice(lhsBuffer + 1 + r * perRow, perRow));
  }
  // What the products read of earlier kernels' results: the prologue's
  // inputs, or the lhs.
  auto prologue = [&]() -> LogicalResult {
    return plan.prologue
               ? emitPrologue(b, loc, kernel, plan, block, thread, rowShareds)
               : success();
  };
  // Weights that nothing writes while the plan runs (isReadOnlyArgument):
  // a one-segment kernel loads them before it waits for the kernels
  // launched ahead of it (programmatic dependent launch), so they stream
  // while those drain and while the prologue computes.
  bool loadsEarly =
      plan.segments.size() == 1 &&
      llvm::all_of(plan.segments.front().calls, [&](LibraryCallOp call) {
        return isReadOnlyArgument(op, plan.body, call.getRhs());
      });
  if (!loadsEarly && failed(prologue()))
    return failure();
  auto waitThenPrologue = [&]() -> LogicalResult {
    NVVM::GriddepcontrolOp::create(b, loc, NVVM::GridDepActionKind::wait);
    return prologue();
  };
  int64_t firstBlock = 0;
  for (GemvSegment &segment : plan.segments) {
    int64_t split = segmentSplit(segment);
    int64_t count = ceilDiv(segment.columns, kGemvWarps / split);
    OpBuilder::InsertionGuard guard(b);
    if (plan.segments.size() > 1) {
      Value after = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge,
                                          block, im.c(firstBlock));
      Value before = im.lt(block, im.c(firstBlock + count));
      auto mine = scf::IfOp::create(
          b, loc, arith::AndIOp::create(b, loc, after, before),
          /*withElse=*/false);
      b.setInsertionPointToStart(&mine.getThenRegion().front());
    }
    Value column = im.add(
        im.mul(im.sub(block, im.c(firstBlock)), im.c(kGemvWarps / split)),
        im.div(warp, split));
    if (failed(emitSegment(b, loc, kernel, plan, segment, column, warp, lane,
                           loadsEarly
                               ? function_ref<LogicalResult()>(waitThenPrologue)
                               : nullptr)))
      return failure();
    firstBlock += count;
  }
  gpu::ReturnOp::create(b, loc);
  return kernel;
}

} // namespace

bool isGemv(Operation *op) {
  if (auto fusion = dyn_cast<FusionOp>(op))
    return matrixVectorFusion(fusion).has_value();
  return isMatrixVectorProduct(op);
}

FailureOr<GpuKernel> emitGemv(Operation *op, StringRef name,
                              OpBuilder &moduleBuilder) {
  GemvKernelPlan plan;
  if (auto fusion = dyn_cast<FusionOp>(op)) {
    MatrixVectorFusion analysis = *matrixVectorFusion(fusion);
    plan.segments = std::move(analysis.segments);
    plan.prologue = std::move(analysis.prologue);
    plan.body = &fusion.getBody().front();
    llvm::append_range(plan.stored, plan.body->getTerminator()->getOperands());
  } else {
    auto call = cast<LibraryCallOp>(op);
    GemvSegment segment;
    segment.calls.push_back(call);
    segment.columns = cast<RankedTensorType>(call.getType()).getDimSize(1);
    plan.segments.push_back(std::move(segment));
    plan.stored.push_back(call.getResult());
  }
  return emitGemvKernel(op, name, moduleBuilder, plan);
}

} // namespace genesis::cuda
