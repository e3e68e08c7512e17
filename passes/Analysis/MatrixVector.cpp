//===- MatrixVector.cpp - GEMMs that run as matrix-vector kernels ---------===//

#include "passes/Analysis/MatrixVector.h"
#include "passes/Analysis/RowFusion.h"
#include "passes/Passes.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <map>

using namespace mlir;

namespace genesis {

namespace {

/// The 32 lanes of a warp.
constexpr int64_t kLanes = 32;

bool isGemvElement(Type type) {
  return type.isF32() || type.isBF16() || type.isF16();
}

} // namespace

int64_t gemvVectorWidth(Type element, int64_t depth) {
  int64_t width = 16 / (element.getIntOrFloatBitWidth() / 8);
  while (depth % width != 0)
    width /= 2;
  return width;
}

int64_t gemvLoadsPerLane(LibraryCallOp call) {
  auto lhs = cast<RankedTensorType>(call.getLhs().getType());
  auto rhs = cast<RankedTensorType>(call.getRhs().getType());
  int64_t depth = lhs.getDimSize(1);
  int64_t width = std::min(gemvVectorWidth(lhs.getElementType(), depth),
                           gemvVectorWidth(rhs.getElementType(), depth));
  return (depth / width + kLanes - 1) / kLanes;
}

bool isMatrixVectorProduct(Operation *op) {
  auto call = dyn_cast<LibraryCallOp>(op);
  if (!call || call.getTransposeLhs() || !call.getTransposeRhs())
    return false;
  auto lhs = cast<RankedTensorType>(call.getLhs().getType());
  auto rhs = cast<RankedTensorType>(call.getRhs().getType());
  auto result = cast<RankedTensorType>(call.getResult().getType());
  if (lhs.getRank() != 2 || rhs.getRank() != 2 ||
      !isGemvElement(lhs.getElementType()) ||
      !isGemvElement(rhs.getElementType()) ||
      !isGemvElement(result.getElementType()))
    return false;
  int64_t rows = lhs.getDimSize(0), depth = lhs.getDimSize(1);
  if (rows <= 0 || rows > kMaxGemvRows || depth <= 0 || rhs.getDimSize(0) <= 0)
    return false;
  // A lane's loads are unrolled.
  if (gemvLoadsPerLane(call) > kMaxGemvLoadsPerLane)
    return false;
  GemmEpilogue epilogue = call.getEpilogue();
  return epilogue == GemmEpilogue::none || epilogue == GemmEpilogue::bias ||
         epilogue == GemmEpilogue::relu || epilogue == GemmEpilogue::bias_relu;
}

std::optional<GemvPrologue> gemvPrologue(FusionOp fusion, unsigned result,
                                         RankedTensorType lhsType) {
  Block &body = fusion.getBody().front();
  if (llvm::any_of(
          body, [](Operation &op) { return isa<LibraryCallOp, FusionOp>(op); }))
    return std::nullopt;
  auto resultType = cast<RankedTensorType>(fusion->getResult(result).getType());
  int64_t bytes = lhsType.getNumElements() *
                  (lhsType.getElementType().getIntOrFloatBitWidth() / 8);
  if (resultType.getNumElements() != lhsType.getNumElements() ||
      resultType.getElementType() != lhsType.getElementType() ||
      bytes > kMaxGemvPrologueBytes)
    return std::nullopt;
  GemvPrologue prologue;
  prologue.fusion = fusion;
  prologue.lhsResult = result;
  if (std::optional<SmallVector<int64_t>> row = rowFusionShape(body)) {
    int64_t rows = 1;
    for (int64_t extent : ArrayRef<int64_t>(*row).drop_back())
      rows *= extent;
    if (resultType.getShape() != ArrayRef<int64_t>(*row) || rows > kMaxGemvRows)
      return std::nullopt;
    prologue.rowShape = *row;
    prologue.reduces = true;
    return prologue;
  }
  if (!isElementwiseFusion(fusion, resultType.getShape()))
    return std::nullopt;
  prologue.rowShape = llvm::to_vector(resultType.getShape());
  return prologue;
}

std::optional<MatrixVectorFusion> matrixVectorFusion(FusionOp fusion) {
  Block &body = fusion.getBody().front();
  SmallVector<LibraryCallOp> calls;
  Value lhs;
  for (Operation &op : body.without_terminator()) {
    auto call = dyn_cast<LibraryCallOp>(op);
    if (!call)
      continue;
    if (!isMatrixVectorProduct(call) || (lhs && call.getLhs() != lhs) ||
        llvm::any_of(call->getOperands().drop_front(),
                     [](Value v) { return !isa<BlockArgument>(v); }))
      return std::nullopt;
    lhs = call.getLhs();
    calls.push_back(call);
  }
  if (calls.empty() || static_cast<int64_t>(calls.size()) > kMaxGemvFusionCalls)
    return std::nullopt;
  MatrixVectorFusion result;
  auto lhsType = cast<RankedTensorType>(lhs.getType());
  // The lhs: a body argument, or a nested fusion's result (or its reshape).
  Operation *lhsReshape = nullptr;
  if (!isa<BlockArgument>(lhs)) {
    lhsReshape = lhs.getDefiningOp<ReshapeOp>();
    auto source =
        dyn_cast<OpResult>(lhsReshape ? lhsReshape->getOperand(0) : lhs);
    auto nested = source ? dyn_cast<FusionOp>(source.getOwner()) : FusionOp();
    if (!nested || llvm::any_of(nested.getInputs(),
                                [](Value v) { return !isa<BlockArgument>(v); }))
      return std::nullopt;
    result.prologue = gemvPrologue(nested, source.getResultNumber(), lhsType);
    if (!result.prologue ||
        (lhsReshape && llvm::any_of(lhsReshape->getUsers(), [](Operation *u) {
           return !isa<LibraryCallOp>(u);
         })))
      return std::nullopt;
  }
  FusionOp prologueFusion =
      result.prologue ? result.prologue->fusion : FusionOp();
  int64_t rows = cast<RankedTensorType>(lhs.getType()).getDimSize(0);

  // Every other op computes element by element; for each value, the GEMMs
  // it reads (through other values).
  llvm::DenseMap<Value, llvm::SmallDenseSet<Operation *, 4>> reads;
  for (LibraryCallOp call : calls)
    reads[call.getResult()].insert(call);
  for (Operation &op : body.without_terminator()) {
    if (isa<LibraryCallOp>(op) || &op == prologueFusion.getOperation() ||
        &op == lhsReshape)
      continue;
    if (prologueFusion && llvm::any_of(op.getOperands(), [&](Value v) {
          return v.getDefiningOp() == prologueFusion.getOperation();
        }))
      return std::nullopt;
    bool elementwise =
        op.hasTrait<mlir::OpTrait::Elementwise>() ||
        isa<ReshapeOp, BroadcastInDimOp>(op) ||
        (isa<ConstantOp>(op) && cast<ConstantOp>(op).getValue().isSplat());
    if (!elementwise)
      return std::nullopt;
    llvm::SmallDenseSet<Operation *, 4> read;
    for (Value operand : op.getOperands())
      if (auto it = reads.find(operand); it != reads.end())
        read.insert(it->second.begin(), it->second.end());
    if (read.empty())
      continue;
    // Element i of the value is element i of each GEMM result it reads:
    // as many elements (a broadcast's dimensions increase, so a broadcast
    // to as many elements only adds unit dimensions).
    int64_t columns =
        cast<RankedTensorType>(cast<LibraryCallOp>(*read.begin()).getType())
            .getDimSize(1);
    for (Operation *call : read)
      if (cast<RankedTensorType>(call->getResult(0).getType()).getDimSize(1) !=
          columns)
        return std::nullopt;
    for (Value operand : op.getOperands())
      if (reads.count(operand) &&
          cast<RankedTensorType>(operand.getType()).getNumElements() !=
              rows * columns)
        return std::nullopt;
    for (Value result : op.getResults()) {
      if (cast<RankedTensorType>(result.getType()).getNumElements() !=
          rows * columns)
        return std::nullopt;
      reads[result] = read;
    }
  }

  // The epilogue's GEMMs: one segment with every epilogue yield.
  auto yield = cast<YieldOp>(body.getTerminator());
  GemvSegment epilogue;
  llvm::SmallDenseSet<Operation *, 8> inEpilogue;
  for (auto [index, value] : llvm::enumerate(yield.getValues())) {
    if (value.getDefiningOp<LibraryCallOp>())
      continue;
    if (prologueFusion && value.getDefiningOp() == prologueFusion) {
      result.prologue->yields.push_back(index);
      continue;
    }
    auto it = reads.find(value);
    if (it == reads.end())
      return std::nullopt; // Computes nothing from a GEMM.
    inEpilogue.insert(it->second.begin(), it->second.end());
    epilogue.epilogueYields.push_back(index);
  }
  SmallVector<GemvSegment> &segments = result.segments;
  if (!inEpilogue.empty()) {
    for (LibraryCallOp call : calls)
      if (inEpilogue.contains(call))
        epilogue.calls.push_back(call);
    epilogue.columns =
        cast<RankedTensorType>(epilogue.calls.front().getType()).getDimSize(1);
    for (LibraryCallOp call : epilogue.calls)
      if (cast<RankedTensorType>(call.getType()).getDimSize(1) !=
          epilogue.columns)
        return std::nullopt;
    segments.push_back(std::move(epilogue));
  }
  std::map<int64_t, GemvSegment> byColumns;
  for (LibraryCallOp call : calls) {
    if (inEpilogue.contains(call))
      continue;
    int64_t columns = cast<RankedTensorType>(call.getType()).getDimSize(1);
    GemvSegment &segment = byColumns[columns];
    segment.columns = columns;
    segment.calls.push_back(call);
  }
  for (auto &[columns, segment] : byColumns)
    segments.push_back(std::move(segment));
  for (const GemvSegment &segment : segments) {
    int64_t loads = 0;
    for (LibraryCallOp call : segment.calls)
      loads += gemvLoadsPerLane(call);
    if (loads > kMaxGemvLoadsPerLane)
      return std::nullopt;
  }
  return result;
}

} // namespace genesis
