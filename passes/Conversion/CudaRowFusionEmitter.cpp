//===- CudaRowFusionEmitter.cpp - Row fusions, a block per row ------------===//
//
// The row fusion emitter of genesis-lower-cuda (Passes.td states the
// algorithm): the fusions genesis-merge-row-fusions builds, chains of row
// reductions and the elementwise ops around them, with every scalar kept in
// registers.
//
//===----------------------------------------------------------------------===//

#include "dialect/IR/GenesisOps.h"
#include "passes/Conversion/CudaEmitters.h"
#include "passes/Conversion/ElementEmitter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"

#include <cmath>

using namespace mlir;

namespace genesis::cuda {

SmallVector<Type> rowReductionBuffers(MLIRContext *context, Block &body,
                                      int64_t warps) {
  SmallVector<Type> buffers;
  for (Operation &op : body)
    if (isa<ReduceSumOp, ReduceMaxOp>(op))
      buffers.push_back(workgroupBuffer(context, warps,
                                        isa<ReduceMaxOp>(op)
                                            ? Type(Float32Type::get(context))
                                            : Type(Float64Type::get(context))));
  return buffers;
}

FailureOr<RowElements> emitRowReductions(OpBuilder &b, Location loc,
                                         Block &body, ElementEmitter &emitter,
                                         ValueRange rowIndex, Value thread,
                                         int64_t threads, int64_t columns,
                                         ArrayRef<Value> shareds) {
  IndexMath im{b, loc};
  Type element = b.getF32Type(), wide = b.getF64Type();
  SmallVector<Operation *> reductions;
  for (Operation &op : body)
    if (isa<ReduceSumOp, ReduceMaxOp>(op))
      reductions.push_back(&op);
  int64_t perThread = ceilDiv(columns, threads), warps = threads / kWarp;
  RowElements row;
  for (int64_t k = 0; k < perThread; ++k) {
    Value c = im.add(thread, im.c(k * threads));
    Value in = im.lt(c, im.c(columns));
    // Columns past the row compute at column 0 (always valid), masked out.
    SmallVector<Value> index(rowIndex);
    index.push_back(arith::SelectOp::create(b, loc, in, c, im.c(0)));
    row.indices.push_back(index);
    row.inside.push_back(in);
  }
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
  row.saved.resize(perThread);
  for (ArrayRef<Operation *> stage : stages) {
    SmallVector<Value> partials, identities, stageShareds;
    SmallVector<bool> maxes;
    for (Operation *reduction : stage) {
      bool max = isa<ReduceMaxOp>(reduction);
      Type accumulator = max ? element : wide;
      identities.push_back(arith::ConstantOp::create(
          b, loc, accumulator,
          b.getFloatAttr(accumulator, max ? -INFINITY : 0.0)));
      partials.push_back(identities.back());
      maxes.push_back(max);
      stageShareds.push_back(
          shareds[llvm::find(reductions, reduction) - reductions.begin()]);
    }
    for (int64_t k = 0; k < perThread; ++k) {
      emitter.resumeElement(row.saved[k], row.indices[k]);
      for (auto [i, reduction] : llvm::enumerate(stage)) {
        FailureOr<Value> x =
            emitter.at(reduction->getOperand(0), row.indices[k]);
        if (failed(x))
          return failure();
        Value term =
            maxes[i] ? *x : arith::ExtFOp::create(b, loc, wide, *x).getResult();
        partials[i] = combineMaxOrSum(
            b, loc, partials[i],
            arith::SelectOp::create(b, loc, row.inside[k], term, identities[i]),
            maxes[i]);
      }
      row.saved[k] = emitter.saveElement();
    }
    SmallVector<Value> totals =
        blockAllReduceEach(b, loc, partials, stageShareds, maxes, warps);
    for (auto [reduction, total, max] : llvm::zip(stage, totals, maxes))
      emitter.given[reduction->getResult(0)] =
          max ? total
              : arith::TruncFOp::create(b, loc, element, total).getResult();
  }
  return row;
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
  int64_t columns = rowType.back();
  SmallVector<int64_t> rowShape(rowType.drop_back());
  int64_t rows = numel(rowShape);
  int64_t threads = rowBlockThreads(columns);
  int64_t perThread = ceilDiv(columns, threads), warps = threads / kWarp;
  GpuKernel kernel = createGpuKernel(
      moduleBuilder, loc, name, fusion.getInputs().getTypes(),
      fusion.getResultTypes(), rowReductionBuffers(context, body, warps));
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
  auto fail = [&] {
    kernel.function.erase();
    return failure();
  };
  FailureOr<RowElements> row =
      emitRowReductions(b, loc, body, emitter, rowIndex, thread, threads,
                        columns, kernel.workgroup);
  if (failed(row))
    return fail();
  SmallVector<SmallVector<Value>> &indices = row->indices;
  SmallVector<Value> &inside = row->inside;
  SmallVector<llvm::DenseMap<Value, Value>> &saved = row->saved;
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

} // namespace genesis::cuda
