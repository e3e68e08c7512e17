//===- CudaCrossEntropyEmitter.cpp - cross_entropy and its gradient -------===//
//
// The cross-entropy emitter of genesis-lower-cuda (Passes.td states the
// algorithm): a block per row for wide unreduced rows, else a warp per row.
//
//===----------------------------------------------------------------------===//

#include "dialect/IR/GenesisOps.h"
#include "passes/Conversion/CudaEmitters.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"

#include <algorithm>
#include <cmath>

using namespace mlir;

namespace genesis::cuda {

/// The block-per-row kernel's ops: per-row losses of kWideCrossEntropyClasses
/// classes or more, and the fused loss and gradient of any width
/// (genesis-fuse-cross-entropy-gradient forms it only for wide rows;
/// narrower hand-written ones run correctly, if not fast).
static bool isWide(Operation *op) {
  if (isa<CrossEntropyWithGradOp>(op))
    return true;
  return isPerRowLoss(op) &&
         cast<RankedTensorType>(op->getOperand(0).getType()).getDimSize(1) >=
             kWideCrossEntropyClasses;
}

bool hasGpuCrossEntropyKernel(Operation *op) {
  if (!isa<CrossEntropyOp, CrossEntropyGradOp, CrossEntropyWithGradOp>(op))
    return false;
  auto logits = cast<RankedTensorType>(op->getOperand(0).getType());
  Type element = logits.getElementType();
  // Rank-2 logits the kernels compute in f32; 16-bit ones (genesis-amp's)
  // only in the wide kernel.
  return logits.getRank() == 2 && isGpuLogitsElement(element) &&
         (element.isF32() || isWide(op));
}

namespace {

/// The per-row and per-element f32 formulas of cross-entropy (the CPU
/// kernel's semantics): the row loss both emitters use, the warp-per-row
/// kernel's gradient and the wide kernels' exponentials.
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
  /// The wide kernels' exponentials below a row's running max:
  /// exp(x - max) = 2^((x - max) log2(e)), a multiplication and the GPU's
  /// ex2.approx (math.exp2) instead of libdevice's exp (some ten
  /// instructions), which bounded those kernels by their arithmetic, not
  /// their memory; 2 ulp, as Triton's exp. (Folding max log2(e) into an FMA
  /// would round it by up to |max| 2^-25: infinite exponentials for the
  /// -1e30 of padded classes.) `base` is the max, 0 while it is -inf (every
  /// x so far -inf: 2^-inf is 0; NaN propagates).
  Value exp2Base(Value max) {
    Value none = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, max,
                                       constant(-INFINITY));
    return select(none, constant(0.0), max);
  }
  Value fastExpBelow(Value x, Value base) {
    return math::Exp2Op::create(
        b, loc,
        arith::MulFOp::create(b, loc, arith::SubFOp::create(b, loc, x, base),
                              constant(M_LOG2E)));
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

/// The op's ignore_index (default -100).
int64_t ignoreIndexOf(Operation *op) {
  auto ignore = op->getAttrOfType<IntegerAttr>("ignore_index");
  return ignore ? ignore.getInt() : -100;
}

/// The op's label_smoothing (default 0).
double labelSmoothingOf(Operation *op) {
  auto smoothing = op->getAttrOfType<FloatAttr>("label_smoothing");
  return smoothing ? smoothing.getValueAsDouble() : 0.0;
}

/// The lanes of a 16-byte vector of `stored` when every row of `classes`
/// starts 16-byte aligned (classes a multiple of it); else 1.
int64_t vectorWidth(Type stored, int64_t classes) {
  int64_t width = 16 / (stored.getIntOrFloatBitWidth() / 8);
  return classes % width == 0 ? width : 1;
}

/// The f32 values of the `vectorType.getNumElements()` classes from
/// `logits[at]`: one vector load (16-byte aligned) when there are several,
/// each lane widened from 16 bits.
SmallVector<Value> loadClasses(OpBuilder &b, Location loc, Value logits,
                               Value at, VectorType vectorType) {
  Type f32 = b.getF32Type();
  auto widen = [&](Value x) -> Value {
    return x.getType() == f32 ? x : arith::ExtFOp::create(b, loc, f32, x);
  };
  if (vectorType.getNumElements() == 1)
    return {widen(memref::LoadOp::create(b, loc, logits, ValueRange{at}))};
  Value vector =
      vector::LoadOp::create(b, loc, vectorType, logits, ValueRange{at},
                             /*nontemporal=*/false, llvm::Align(16));
  SmallVector<Value> lanes;
  for (int64_t l = 0; l < vectorType.getNumElements(); ++l)
    lanes.push_back(
        widen(vector::ExtractOp::create(b, loc, vector, ArrayRef<int64_t>{l})));
  return lanes;
}

/// Thread 0 of the block stores `value` at `memref[index]`.
void storeFromThreadZero(OpBuilder &b, Location loc, Value thread, Value value,
                         Value memref, Value index) {
  IndexMath im{b, loc};
  auto only = scf::IfOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, thread, im.c(0)),
      /*withElse=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&only.getThenRegion().front());
  memref::StoreOp::create(b, loc, value, memref, ValueRange{index});
}

/// A row's label as the formulas take it: whether the row is ignored,
/// whether the label is a class, and the label clamped to class 0 when not.
struct RowLabel {
  Value ignored, valid, safeLabel;
};

RowLabel loadRowLabel(OpBuilder &b, Location loc, Value labels, Value row,
                      int64_t ignore, int64_t classes) {
  Type i64 = b.getI64Type();
  auto i64Constant = [&](int64_t v) -> Value {
    return arith::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(v));
  };
  Value label = memref::LoadOp::create(b, loc, labels, ValueRange{row});
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
      b, loc, b.getIndexType(),
      arith::SelectOp::create(b, loc, valid, label, i64Constant(0)));
  return {ignored, valid, safeLabel};
}

/// A row's max, sum of exp(x - max) and sum of logits, each thread scanning
/// slots thread, thread + threads, ... of `width` classes (`load`) with a
/// running max and a sum rescaled whenever the max grows, then combined
/// across the block's `warps` warps through `shareds` (three, or two without
/// the sum of logits). The row is read once and no thread holds it.
struct RowScan {
  Value max, sum, sumLogits;
};

RowScan scanRow(OpBuilder &b, Location loc, CrossEntropyMath &formulas,
                llvm::function_ref<SmallVector<Value>(Value slot)> load,
                Value thread, int64_t slots, int64_t threads, int64_t warps,
                ArrayRef<Value> shareds) {
  IndexMath im{b, loc};
  bool withLogits = shareds.size() == 3;
  Value zero = formulas.constant(0.0);
  SmallVector<Value> initial = {formulas.constant(-INFINITY), zero};
  if (withLogits)
    initial.push_back(zero);
  auto scan =
      scf::ForOp::create(b, loc, thread, im.c(slots), im.c(threads), initial);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(scan.getBody());
    SmallVector<Value> lanes = load(scan.getInductionVar());
    Value before = scan.getRegionIterArg(0);
    Value max = before;
    for (Value x : lanes)
      max = arith::MaximumFOp::create(b, loc, max, x);
    Value base = formulas.exp2Base(max);
    Value sum = arith::MulFOp::create(b, loc, scan.getRegionIterArg(1),
                                      formulas.fastExpBelow(before, base));
    for (Value x : lanes)
      sum = arith::AddFOp::create(b, loc, sum, formulas.fastExpBelow(x, base));
    SmallVector<Value> next = {max, sum};
    if (withLogits) {
      Value logits = scan.getRegionIterArg(2);
      for (Value x : lanes)
        logits = arith::AddFOp::create(b, loc, logits, x);
      next.push_back(logits);
    }
    scf::YieldOp::create(b, loc, next);
  }
  Value localMax = scan.getResult(0);
  RowScan row;
  row.max = blockAllReduce(b, loc, localMax, shareds[0], warps, true);
  row.sum = blockAllReduce(
      b, loc,
      arith::MulFOp::create(
          b, loc, scan.getResult(1),
          formulas.fastExpBelow(localMax, formulas.exp2Base(row.max))),
      shareds[1], warps, false);
  row.sumLogits = withLogits ? blockAllReduce(b, loc, scan.getResult(2),
                                              shareds[2], warps, false)
                             : zero;
  return row;
}

/// Cross-entropy of wide rows (1024 classes or more) with reduction none
/// (genesis-decompose-cross-entropy leaves only those on the GPU): a block
/// per row, the row in registers as in the row emitter, so the forward reads
/// the logits once and the gradient reads them once and writes once. The
/// row's max, sum of exponentials and (with label smoothing) sum of logits
/// are block reductions.
FailureOr<GpuKernel> emitWideCrossEntropyGradKernel(Operation *op,
                                                    StringRef name,
                                                    OpBuilder &moduleBuilder);

FailureOr<GpuKernel> emitWideCrossEntropyKernel(Operation *op, StringRef name,
                                                OpBuilder &moduleBuilder) {
  if (isa<CrossEntropyGradOp, CrossEntropyWithGradOp>(op))
    return emitWideCrossEntropyGradKernel(op, name, moduleBuilder);
  Location loc = op->getLoc();
  MLIRContext *context = op->getContext();
  auto logitsType = cast<RankedTensorType>(op->getOperand(0).getType());
  // 16-bit logits are read widened: the kernel computes in f32.
  Type stored = logitsType.getElementType();
  Type f32 = Float32Type::get(context);
  int64_t rows = logitsType.getDimSize(0), classes = logitsType.getDimSize(1);
  int64_t ignore = ignoreIndexOf(op);
  double smoothing = labelSmoothingOf(op);
  // 16 columns per thread: the loss reads and writes nothing else, so the
  // loads in flight per SM (resident threads x columns each) set its speed.
  int64_t threads = std::clamp<int64_t>(
      ceilDiv(ceilDiv(classes, 16), kWarp) * kWarp, kWarp, 1024);
  // The loss reads 16-byte vectors of `width` consecutive classes when
  // every row starts 16-byte aligned (classes a multiple of the width):
  // GPT-2's [16384, 50304] bf16 loss took 0.84 ms with single classes,
  // 0.71 ms with vectors on the H100.
  int64_t width = vectorWidth(stored, classes);
  int64_t slots = classes / width;
  int64_t perThread = ceilDiv(slots, threads), warps = threads / kWarp;
  // A row of more than 64 values a thread does not fit the registers of a
  // 1024-thread block (64 each) and spilled: Qwen2's [12288, 151936] bf16
  // loss, 152 values a thread, took 8.71 ms on the H100. Such rows are
  // scanned as the gradient scans them.
  bool held = perThread * width <= 64;
  VectorType vectorType = VectorType::get({width}, stored);
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
  auto constant = [&](double v) -> Value {
    return arith::ConstantOp::create(b, loc, f32, b.getFloatAttr(f32, v));
  };
  auto select = [&](Value c, Value t, Value f) -> Value {
    return arith::SelectOp::create(b, loc, c, t, f);
  };
  auto loadLogit = [&](Value index) -> Value {
    Value x = memref::LoadOp::create(b, loc, logits, ValueRange{index});
    return stored == f32 ? x : arith::ExtFOp::create(b, loc, f32, x);
  };
  RowLabel label = loadRowLabel(b, loc, kernel.inputs[1], row, ignore, classes);
  // Issued before the row's loads and reductions, so its latency overlaps
  // them (every thread reads the same word; the loss takes thread 0's).
  Value labelLogit = loadLogit(im.add(rowStart, label.safeLabel));
  Value max, sum, sumLogits;
  if (!held) {
    SmallVector<Value> shareds(kernel.workgroup.begin(),
                               kernel.workgroup.begin() +
                                   (smoothing != 0.0 ? 3 : 2));
    RowScan scan = scanRow(
        b, loc, formulas,
        [&](Value slot) {
          return loadClasses(b, loc, logits,
                             im.add(rowStart, im.mul(slot, im.c(width))),
                             vectorType);
        },
        thread, slots, threads, warps, shareds);
    max = scan.max;
    sum = scan.sum;
    sumLogits = scan.sumLogits;
  } else {
    // inside[e] says whether the slot of the thread's e-th value lies in
    // the row.
    SmallVector<Value> inside, values;
    Value localMax = constant(-INFINITY), localSum = constant(0.0);
    for (int64_t k = 0; k < perThread; ++k) {
      Value slot = im.add(thread, im.c(k * threads));
      Value in = im.lt(slot, im.c(slots));
      Value first = im.mul(select(in, slot, im.c(0)), im.c(width));
      SmallVector<Value> lanes =
          loadClasses(b, loc, logits, im.add(rowStart, first), vectorType);
      for (Value x : lanes) {
        inside.push_back(in);
        values.push_back(x);
        localMax = arith::MaximumFOp::create(
            b, loc, localMax, select(in, x, constant(-INFINITY)));
        localSum = arith::AddFOp::create(b, loc, localSum,
                                         select(in, x, constant(0.0)));
      }
    }
    max = blockAllReduce(b, loc, localMax, kernel.workgroup[0], warps, true);
    Value localExp = constant(0.0);
    Value base = formulas.exp2Base(max);
    for (size_t k = 0; k < values.size(); ++k) {
      Value e = formulas.fastExpBelow(values[k], base);
      localExp = arith::AddFOp::create(b, loc, localExp,
                                       select(inside[k], e, constant(0.0)));
    }
    sum = blockAllReduce(b, loc, localExp, kernel.workgroup[1], warps, false);
    sumLogits = smoothing != 0.0
                    ? blockAllReduce(b, loc, localSum, kernel.workgroup[2],
                                     warps, false)
                    : constant(0.0);
  }
  Value rowLoss = formulas.rowLoss(max, sum, sumLogits, labelLogit, label.valid,
                                   label.ignored);
  storeFromThreadZero(b, loc, thread, rowLoss, output, row);
  gpu::ReturnOp::create(b, loc);
  return kernel;
}

/// The gradient of wide cross-entropy with reduction none: a block per row
/// reading the row twice in 16-byte vectors, so that no thread holds the
/// row. First each thread's running max and sum of exponentials (the sum
/// rescaled whenever the max grows), combined across the block; then
/// the gradient, weight (exp(x - max) / sum - target) as one FMA an element,
/// stored as it is computed. The
/// second read of a row mostly hits L2. (Holding GPT-2's 50,304-class row
/// in the registers of 1024 threads, as the loss does, took 3.10 ms for
/// its [16384, 50304] bf16 gradient on the H100.) The fused loss and
/// gradient also stores each row's loss from the first read's max and sum
/// (and sum of logits, with label smoothing) and the label's logit.
FailureOr<GpuKernel> emitWideCrossEntropyGradKernel(Operation *op,
                                                    StringRef name,
                                                    OpBuilder &moduleBuilder) {
  Location loc = op->getLoc();
  MLIRContext *context = op->getContext();
  auto logitsType = cast<RankedTensorType>(op->getOperand(0).getType());
  // 16-bit logits are read widened and the gradient stored narrowed: the
  // kernel computes in f32.
  Type stored = logitsType.getElementType();
  Type f32 = Float32Type::get(context);
  int64_t rows = logitsType.getDimSize(0), classes = logitsType.getDimSize(1);
  int64_t ignore = ignoreIndexOf(op);
  double smoothing = labelSmoothingOf(op);
  int64_t width = vectorWidth(stored, classes);
  int64_t slots = classes / width;
  int64_t threads =
      std::clamp<int64_t>(ceilDiv(slots, kWarp) * kWarp, kWarp, 1024);
  int64_t warps = threads / kWarp;
  VectorType vectorType = VectorType::get({width}, stored);
  bool withLoss = isa<CrossEntropyWithGradOp>(op);
  // The sum of logits only for a loss with label smoothing.
  SmallVector<Type> workgroup(withLoss && smoothing != 0.0 ? 3 : 2,
                              workgroupBuffer(context, warps, f32));
  GpuKernel kernel =
      createGpuKernel(moduleBuilder, loc, name, op->getOperandTypes(),
                      op->getResultTypes(), workgroup);
  setLaunch(kernel, rows, threads);
  OpBuilder b = OpBuilder::atBlockBegin(&kernel.function.getBody().front());
  IndexMath im{b, loc};
  CrossEntropyMath formulas{b, loc, classes, smoothing};
  Value logits = flatten(b, loc, kernel.inputs[0]);
  Value gradients = flatten(b, loc, kernel.outputs.back());
  Value thread = im.threadId(), row = im.blockId();
  Value rowStart = im.mul(row, im.c(classes));
  RowLabel label = loadRowLabel(b, loc, kernel.inputs[1], row, ignore, classes);
  Value weight =
      memref::LoadOp::create(b, loc, kernel.inputs[2], ValueRange{row});
  // Issued before the row's loads, so its latency overlaps them.
  Value labelLogit =
      withLoss ? loadClasses(b, loc, logits, im.add(rowStart, label.safeLabel),
                             VectorType::get({1}, stored))[0]
               : Value();
  // The f32 values of the slot's `width` classes.
  auto load = [&](Value slot) {
    return loadClasses(b, loc, logits,
                       im.add(rowStart, im.mul(slot, im.c(width))), vectorType);
  };
  RowScan scan = scanRow(b, loc, formulas, load, thread, slots, threads, warps,
                         kernel.workgroup);
  Value max = scan.max, sum = scan.sum;
  if (withLoss)
    storeFromThreadZero(b, loc, thread,
                        formulas.rowLoss(max, sum, scan.sumLogits, labelLogit,
                                         label.valid, label.ignored),
                        kernel.outputs[0], row);
  Value safeWeight =
      formulas.select(label.valid, weight, formulas.constant(NAN));
  // weight (p - target) = e (weight / sum) + shift, with e = exp(x - max)
  // and shift -weight s / C, less weight (1 - s) at the label: per element
  // a subtraction, a multiplication, ex2, a compare, a select, an FMA and
  // the select of 0 for an ignored row (kept exactly 0 for inf logits).
  Value scale = arith::DivFOp::create(b, loc, safeWeight, sum);
  Value shift = arith::MulFOp::create(
      b, loc, safeWeight,
      formulas.constant(-smoothing / static_cast<double>(classes)));
  Value labelShift = arith::SubFOp::create(
      b, loc, shift,
      arith::MulFOp::create(b, loc, safeWeight,
                            formulas.constant(1 - smoothing)));
  Value base = formulas.exp2Base(max);

  auto write = scf::ForOp::create(b, loc, thread, im.c(slots), im.c(threads));
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(write.getBody());
    Value slot = write.getInductionVar();
    Value first = im.mul(slot, im.c(width));
    SmallVector<Value> grads;
    for (auto [l, x] : llvm::enumerate(load(slot))) {
      Value isLabel =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                im.add(first, im.c(l)), label.safeLabel);
      Value grad =
          math::FmaOp::create(b, loc, formulas.fastExpBelow(x, base), scale,
                              formulas.select(isLabel, labelShift, shift));
      grad = formulas.select(label.ignored, formulas.constant(0.0), grad);
      if (stored != f32)
        grad = arith::TruncFOp::create(b, loc, stored, grad);
      grads.push_back(grad);
    }
    Value at = im.add(rowStart, first);
    if (width == 1) {
      memref::StoreOp::create(b, loc, grads[0], gradients, ValueRange{at});
    } else {
      Value vector = vector::FromElementsOp::create(b, loc, vectorType, grads);
      vector::StoreOp::create(b, loc, vector, gradients, ValueRange{at},
                              /*nontemporal=*/false, llvm::Align(16));
    }
  }
  gpu::ReturnOp::create(b, loc);
  return kernel;
}

} // namespace

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
  if (isWide(op))
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
  int64_t ignore = ignoreIndexOf(op);
  double smoothing = labelSmoothingOf(op);
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

} // namespace genesis::cuda
