//===- CudaGemvEmitter.cpp - GEMMs of a few rows as matrix-vector kernels -===//
//
// The matrix-vector emitter of genesis-lower-cuda: a genesis.library_call of
// a few lhs rows (a decode step's token) against a weight stored [N, K],
// which cuBLASLt runs far below the bandwidth of reading the weight once.
//
//===----------------------------------------------------------------------===//

#include "dialect/IR/GenesisOps.h"
#include "passes/Conversion/CudaEmitters.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"

using namespace mlir;

namespace genesis::cuda {

namespace {

/// Warps per block; each computes one output column.
constexpr int64_t kGemvWarps = 8;

/// Lanes of one vector load along K: up to 16 bytes, dividing K.
int64_t gemvVectorWidth(Type element, int64_t depth) {
  int64_t width = 16 / (element.getIntOrFloatBitWidth() / 8);
  while (depth % width != 0)
    width /= 2;
  return width;
}

} // namespace

/// A GEMM whose lhs [M, K] has at most kMaxGemvRows rows against a weight
/// [N, K] (transpose_rhs), in f32, bf16 or f16, with no epilogue or a bias
/// and ReLU, K at most 64 vectors a lane (16384 16-bit values): a read of
/// the weight that cuBLASLt's tiles spread over too few SMs.
bool isGemv(Operation *op) {
  auto call = dyn_cast<LibraryCallOp>(op);
  if (!call || call.getTransposeLhs() || !call.getTransposeRhs())
    return false;
  auto lhs = cast<RankedTensorType>(call.getLhs().getType());
  auto rhs = cast<RankedTensorType>(call.getRhs().getType());
  auto result = cast<RankedTensorType>(call.getResult().getType());
  GemmEpilogue epilogue = call.getEpilogue();
  auto supported = [](Type t) { return t.isF32() || t.isBF16() || t.isF16(); };
  if (lhs.getRank() != 2 || !supported(lhs.getElementType()) ||
      !supported(rhs.getElementType()))
    return false;
  // A lane's loads are unrolled: at most 64 vectors of the weight row.
  int64_t depth = lhs.getDimSize(1);
  int64_t width = std::min(gemvVectorWidth(lhs.getElementType(), depth),
                           gemvVectorWidth(rhs.getElementType(), depth));
  if (ceilDiv(depth / std::max<int64_t>(width, 1), kWarp) > 64)
    return false;
  return lhs.getRank() == 2 && rhs.getRank() == 2 &&
         lhs.getDimSize(0) <= kMaxGemvRows && lhs.getDimSize(0) > 0 &&
         lhs.getDimSize(1) > 0 && rhs.getDimSize(0) > 0 &&
         supported(lhs.getElementType()) && supported(rhs.getElementType()) &&
         supported(result.getElementType()) &&
         (epilogue == GemmEpilogue::none || epilogue == GemmEpilogue::bias ||
          epilogue == GemmEpilogue::relu ||
          epilogue == GemmEpilogue::bias_relu);
}

/// Warp w of block b computes output column n = 8b + w for every lhs row:
/// lane l reads the weight row's vectors l, l + 32, ... (16 bytes each,
/// coalesced across the warp; all of a lane's loads are unrolled, so they
/// are in flight together) and the matching lhs vectors, accumulates in
/// f32, and a butterfly of shuffles sums the lanes (a fixed order:
/// deterministic). Lane 0 applies alpha, the bias and ReLU, rounds to the
/// result type and stores.
FailureOr<GpuKernel> emitGemv(Operation *op, StringRef name,
                              OpBuilder &moduleBuilder) {
  auto call = cast<LibraryCallOp>(op);
  Location loc = op->getLoc();
  auto lhsType = cast<RankedTensorType>(call.getLhs().getType());
  auto rhsType = cast<RankedTensorType>(call.getRhs().getType());
  auto resultType = cast<RankedTensorType>(call.getResult().getType());
  const int64_t rows = lhsType.getDimSize(0), depth = lhsType.getDimSize(1),
                columns = rhsType.getDimSize(0);
  Type lhsElement = lhsType.getElementType();
  Type rhsElement = rhsType.getElementType();
  int64_t width = std::min(gemvVectorWidth(lhsElement, depth),
                           gemvVectorWidth(rhsElement, depth));
  int64_t vectors = depth / width;
  int64_t perLane = ceilDiv(vectors, kWarp);

  GpuKernel kernel = createGpuKernel(
      moduleBuilder, loc, name, op->getOperandTypes(), op->getResultTypes());
  setLaunch(kernel, ceilDiv(columns, kGemvWarps), kGemvWarps * kWarp);
  OpBuilder b = OpBuilder::atBlockBegin(&kernel.function.getBody().front());
  IndexMath im{b, loc};
  Type f32 = b.getF32Type();
  Value lhs = flatten(b, loc, kernel.inputs[0]);
  Value rhs = flatten(b, loc, kernel.inputs[1]);
  Value bias = call.getBias() ? kernel.inputs[2] : Value();
  Value out = flatten(b, loc, kernel.outputs[0]);
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

  Value thread = im.threadId();
  Value lane = im.rem(thread, kWarp);
  Value column =
      im.add(im.mul(im.blockId(), im.c(kGemvWarps)), im.div(thread, kWarp));
  // Warps past the last column compute column 0 and do not store.
  Value inside = im.lt(column, im.c(columns));
  Value safeColumn = arith::SelectOp::create(b, loc, inside, column, im.c(0));
  Value weightRow = im.mul(safeColumn, im.c(depth));
  SmallVector<Value> sums(rows, constant(0.0));
  for (int64_t i = 0; i < perLane; ++i) {
    Value vector = im.add(im.c(i * kWarp), lane);
    Value valid = im.lt(vector, im.c(vectors));
    Value k = im.mul(arith::SelectOp::create(b, loc, valid, vector, im.c(0)),
                     im.c(width));
    SmallVector<Value> weight =
        loadVector(rhs, rhsElement, im.add(weightRow, k));
    for (int64_t m = 0; m < rows; ++m) {
      SmallVector<Value> x =
          loadVector(lhs, lhsElement, im.add(im.c(m * depth), k));
      Value dot = constant(0.0);
      for (int64_t e = 0; e < width; ++e)
        dot = math::FmaOp::create(b, loc, x[e], weight[e], dot);
      sums[m] = arith::AddFOp::create(
          b, loc, sums[m],
          arith::SelectOp::create(b, loc, valid, dot, constant(0.0)));
    }
  }
  for (Value &sum : sums)
    sum = warpButterfly(b, loc, sum, [&](Value x, Value y) {
      return arith::AddFOp::create(b, loc, x, y).getResult();
    });
  Value store = arith::AndIOp::create(
      b, loc, inside,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane, im.c(0)));
  auto branch = scf::IfOp::create(b, loc, store, /*withElse=*/false);
  b.setInsertionPointToStart(&branch.getThenRegion().front());
  Type resultElement = resultType.getElementType();
  GemmEpilogue epilogue = call.getEpilogue();
  bool relu =
      epilogue == GemmEpilogue::relu || epilogue == GemmEpilogue::bias_relu;
  double alpha = call.getAlpha().convertToDouble();
  for (int64_t m = 0; m < rows; ++m) {
    Value y = sums[m];
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
    memref::StoreOp::create(b, loc, y, out,
                            ValueRange{im.add(im.c(m * columns), column)});
  }
  b.setInsertionPointAfter(branch);
  gpu::ReturnOp::create(b, loc);
  return kernel;
}

} // namespace genesis::cuda
