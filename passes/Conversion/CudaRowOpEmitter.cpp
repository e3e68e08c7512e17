//===- CudaRowOpEmitter.cpp - softmax and the norms, a block per row ------===//
//
// The row op emitter of genesis-lower-cuda (Passes.td states the
// algorithm): f32 softmax, log_softmax, layer_norm and rms_norm over the
// last dimension, the row held in registers.
//
//===----------------------------------------------------------------------===//

#include "dialect/IR/GenesisOps.h"
#include "passes/Analysis/RowFusion.h"
#include "passes/Conversion/CudaEmitters.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"

#include <cmath>

using namespace mlir;

namespace genesis::cuda {

/// f32 ops normalising over the last dimension, which the row emitter takes
/// when a block holds the row (wider rows run the op kernel, a thread per
/// row).
bool hasGpuRowKernel(Operation *op) {
  auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!type || !type.getElementType().isF32() || type.getRank() == 0 ||
      type.getShape().back() > kMaxBlockRowColumns)
    return false;
  if (auto softmax = dyn_cast<SoftmaxOp>(op))
    return static_cast<int64_t>(softmax.getDim()) == type.getRank() - 1;
  if (auto softmax = dyn_cast<LogSoftmaxOp>(op))
    return static_cast<int64_t>(softmax.getDim()) == type.getRank() - 1;
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

} // namespace genesis::cuda
