//===- CpuOpKernels.cpp - CPU kernels of ops outside fusions --------------===//
//
// The optimizer updates (elementwise over a parameter, several results) and
// the row-wise compound ops the training step needs (softmax, log_softmax,
// cross_entropy and its gradient) and dropout (Philox-4x32-10) get a kernel
// each. They compute in f64 and round once per stored value, following the
// reference evaluator's order of operations, so they agree with it to the
// last f32 bit in most elements. Adam and AdamW on f32 parameters are the
// exception: only their moments are computed so, and the square root and
// divisions of the parameter's update run in f32 (in f64 they made this the
// MLP step's largest kernel after the GEMMs), so the new parameter differs
// from the evaluator's by the f32 rounding of the update in some elements
// (docs/cpu-backend.md).
//
//===----------------------------------------------------------------------===//

#include "dialect/IR/GenesisOps.h"
#include "passes/Conversion/CpuKernels.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/TypeSwitch.h"

#include <functional>

using namespace mlir;

namespace genesis::cpu {

func::FuncOp createKernel(OpBuilder &moduleBuilder, Location loc,
                          StringRef name, TypeRange inputs, TypeRange outputs,
                          int64_t outerExtent) {
  SmallVector<Type> argTypes;
  for (TypeRange range : {inputs, outputs})
    for (Type type : range) {
      auto tensor = cast<RankedTensorType>(type);
      argTypes.push_back(
          MemRefType::get(tensor.getShape(), tensor.getElementType()));
    }
  argTypes.append(2, moduleBuilder.getIndexType());
  auto kernel = func::FuncOp::create(
      moduleBuilder, loc, name, moduleBuilder.getFunctionType(argTypes, {}));
  kernel->setAttr(kKernelAttrName, moduleBuilder.getUnitAttr());
  kernel->setAttr("genesis.outer_extent",
                  moduleBuilder.getI64IntegerAttr(outerExtent));
  kernel.addEntryBlock();
  return kernel;
}

LogicalResult
buildLoopNest(OpBuilder &b, Location loc, ArrayRef<int64_t> shape, Value begin,
              Value end,
              function_ref<LogicalResult(OpBuilder &, ValueRange)> body) {
  LogicalResult result = success();
  if (shape.empty()) {
    Value runs =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, begin, end);
    scf::IfOp::create(b, loc, runs, [&](OpBuilder &inner, Location) {
      result = body(inner, {});
      scf::YieldOp::create(inner, loc);
    });
    return result;
  }
  SmallVector<Value> index;
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  std::function<void(OpBuilder &, size_t)> level = [&](OpBuilder &builder,
                                                       size_t d) {
    if (d == shape.size()) {
      result = body(builder, index);
      return;
    }
    Value lower = d == 0 ? begin : zero;
    Value upper = d == 0
                      ? end
                      : arith::ConstantIndexOp::create(builder, loc, shape[d])
                            .getResult();
    scf::ForOp::create(builder, loc, lower, upper, one, ValueRange(),
                       [&](OpBuilder &inner, Location, Value iv, ValueRange) {
                         index.push_back(iv);
                         level(inner, d + 1);
                         index.pop_back();
                         scf::YieldOp::create(inner, loc);
                       });
  };
  level(b, 0);
  return result;
}

bool hasOpKernel(Operation *op) {
  return isOptimizerUpdate(op) ||
         isa<SoftmaxOp, LogSoftmaxOp, CrossEntropyOp, CrossEntropyGradOp,
             DropoutOp>(op) ||
         hasDataKernel(op) || hasRowKernel(op);
}

namespace {

using F64 = KernelMath;

bool floatOnly(Operation *op) {
  for (Type type : op->getOperandTypes())
    if (auto tensor = dyn_cast<RankedTensorType>(type);
        tensor && isa<FloatType>(tensor.getElementType()) &&
        !tensor.getElementType().isF32() && !tensor.getElementType().isF64())
      return false;
  return true;
}

/// One optimizer step per parameter element; scalars lr and step are read
/// once. Mirrors the evaluator: new state is rounded before it is used.
LogicalResult emitOptimizer(Operation *op, func::FuncOp kernel) {
  Block &entry = kernel.getBody().front();
  OpBuilder b = OpBuilder::atBlockBegin(&entry);
  Location loc = op->getLoc();
  F64 f{b, loc};
  auto args = entry.getArguments();
  unsigned numOperands = op->getNumOperands();
  Value begin = args[args.size() - 2], end = args[args.size() - 1];
  // The kernel's own parameter type: the op's, or its flattened form.
  auto paramType = cast<MemRefType>(kernel.getArgumentTypes()[0]);
  Type element = paramType.getElementType();
  auto scalar = [&](unsigned i) {
    return memref::LoadOp::create(b, loc, args[i], ValueRange()).getResult();
  };
  auto attr = [&](StringRef name) {
    auto value = op->getAttrOfType<FloatAttr>(name);
    return f.c(value ? value.getValueAsDouble() : 0.0);
  };
  LogicalResult result = success();
  llvm::TypeSwitch<Operation *>(op)
      .Case([&](SgdUpdateOp) {
        Value lr = f.widen(scalar(2)), decay = attr("weight_decay");
        result = buildLoopNest(
            b, loc, paramType.getShape(), begin, end,
            [&](OpBuilder &inner, ValueRange i) {
              F64 g{inner, loc};
              Value p = g.load(args[0], i);
              Value grad = g.add(g.load(args[1], i), g.mul(decay, p));
              g.store(g.sub(p, g.mul(lr, grad)), args[numOperands], i);
              return success();
            });
      })
      .Case([&](SgdMomentumUpdateOp update) {
        Value lr = f.widen(scalar(3));
        Value first = arith::CmpIOp::create(
            b, loc, arith::CmpIPredicate::sle, scalar(4),
            arith::ConstantOp::create(b, loc, b.getI64Type(),
                                      b.getI64IntegerAttr(1)));
        Value momentum = attr("momentum"), dampening = attr("dampening"),
              decay = attr("weight_decay");
        bool nesterov = update.getNesterov();
        result = buildLoopNest(
            b, loc, paramType.getShape(), begin, end,
            [&](OpBuilder &inner, ValueRange i) {
              F64 g{inner, loc};
              Value p = g.load(args[0], i);
              Value grad = g.add(g.load(args[1], i), g.mul(decay, p));
              Value later = g.add(g.mul(momentum, g.load(args[2], i)),
                                  g.mul(g.sub(g.c(1.0), dampening), grad));
              Value buffer = g.roundTo(
                  arith::SelectOp::create(inner, loc, first, grad, later),
                  element);
              g.store(buffer, args[numOperands + 1], i);
              Value direction =
                  nesterov ? g.add(grad, g.mul(momentum, buffer)) : buffer;
              g.store(g.sub(p, g.mul(lr, direction)), args[numOperands], i);
              return success();
            });
      })
      .Case<AdamUpdateOp, AdamWUpdateOp>([&](auto) {
        // The moments as the evaluator computes them, the parameter's update
        // in the parameter's type (see the file comment).
        bool decoupled = isa<AdamWUpdateOp>(op);
        Value lr = f.widen(scalar(4));
        Value step = arith::SIToFPOp::create(b, loc, f.f64, scalar(5));
        Value beta1 = attr("beta1"), beta2 = attr("beta2"),
              decay = attr("weight_decay");
        auto rounded = [&](Value v) { return f.narrow(v, element); };
        Value stepSize =
            rounded(f.div(lr, f.sub(f.c(1.0), f.pow(beta1, step))));
        Value rootCorrection2 =
            rounded(f.sqrt(f.sub(f.c(1.0), f.pow(beta2, step))));
        Value epsilon = rounded(attr("epsilon"));
        // AdamW's decay: p (1 - lr decay) for f64 parameters, p lr decay
        // for f32 ones (below).
        Value lrDecay = f.mul(lr, decay);
        Value shrink = f.sub(f.c(1.0), lrDecay);
        lrDecay = rounded(lrDecay);
        result = buildLoopNest(
            b, loc, paramType.getShape(), begin, end,
            [&](OpBuilder &inner, ValueRange i) {
              F64 w{inner, loc};
              // KernelMath computes in the type of its `f64` member: here the
              // parameter's.
              KernelMath g{inner, loc, element};
              Value p = g.load(args[0], i), grad = w.load(args[1], i);
              if (!decoupled)
                grad = w.add(grad, w.mul(decay, w.widen(p)));
              Value m = w.narrow(w.add(w.mul(beta1, w.load(args[2], i)),
                                       w.mul(w.sub(w.c(1.0), beta1), grad)),
                                 element);
              Value v = w.narrow(
                  w.add(w.mul(beta2, w.load(args[3], i)),
                        w.mul(w.mul(w.sub(w.c(1.0), beta2), grad), grad)),
                  element);
              Value denom = g.add(g.div(g.sqrt(v), rootCorrection2), epsilon);
              Value update = g.div(g.mul(stepSize, m), denom);
              Value next;
              if (!decoupled)
                next = g.sub(p, update);
              else if (element.isF64())
                next = g.sub(g.mul(p, shrink), update);
              else
                // p - (p lr decay + update): the bracket is small next to p, so
                // its roundings barely move the result, where rounding
                // p (1 - lr decay) to f32 would leave it an ulp from the
                // evaluator's in many elements.
                next = g.sub(p, g.add(g.mul(p, lrDecay), update));
              g.store(next, args[numOperands], i);
              g.store(m, args[numOperands + 1], i);
              g.store(v, args[numOperands + 2], i);
              return success();
            });
      });
  func::ReturnOp::create(b, loc);
  return result;
}

/// softmax / log_softmax along `dim`: for each (outer, inner) position, three
/// passes over the dimension (max, sum of exponentials, write).
LogicalResult emitSoftmax(Operation *op, int64_t dim, bool logarithm,
                          func::FuncOp kernel) {
  Block &entry = kernel.getBody().front();
  OpBuilder b = OpBuilder::atBlockBegin(&entry);
  Location loc = op->getLoc();
  auto args = entry.getArguments();
  auto type = cast<RankedTensorType>(op->getOperand(0).getType());
  SmallVector<int64_t> around(type.getShape());
  around[dim] = 1;
  Value begin = args[2], end = args[3];
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value size = arith::ConstantIndexOp::create(b, loc, type.getDimSize(dim));
  LogicalResult result = buildLoopNest(
      b, loc, around, begin, end, [&](OpBuilder &inner, ValueRange index) {
        F64 f{inner, loc};
        SmallVector<Value> at(index);
        auto reduceOver =
            [&](Value init, function_ref<Value(F64 &, Value, Value)> combine) {
              auto loop = scf::ForOp::create(
                  inner, loc, zero, size, one, ValueRange{init},
                  [&](OpBuilder &body, Location, Value k, ValueRange carried) {
                    F64 g{body, loc};
                    at[dim] = k;
                    scf::YieldOp::create(
                        body, loc, combine(g, carried[0], g.load(args[0], at)));
                  });
              return loop.getResult(0);
            };
        Value max = reduceOver(f.c(-INFINITY), [](F64 &g, Value acc, Value x) {
          return g.max(acc, x);
        });
        Value sum = reduceOver(f.c(0.0), [&](F64 &g, Value acc, Value x) {
          return g.add(acc, g.exp(g.sub(x, max)));
        });
        Value logSum = f.log(sum);
        scf::ForOp::create(inner, loc, zero, size, one, ValueRange(),
                           [&](OpBuilder &body, Location, Value k, ValueRange) {
                             F64 g{body, loc};
                             at[dim] = k;
                             Value shifted = g.sub(g.load(args[0], at), max);
                             g.store(logarithm ? g.sub(shifted, logSum)
                                               : g.div(g.exp(shifted), sum),
                                     args[1], at);
                             scf::YieldOp::create(body, loc);
                           });
        return success();
      });
  func::ReturnOp::create(b, loc);
  return result;
}

/// cross_entropy and its gradient, one row at a time. The whole kernel is
/// one range (outer extent 1) because mean and sum combine all rows. A label
/// outside [0, C) that is not ignore_index yields NaN (the evaluator reports
/// it as an error; a kernel must not read out of bounds).
LogicalResult emitCrossEntropy(Operation *op, func::FuncOp kernel) {
  Block &entry = kernel.getBody().front();
  OpBuilder b = OpBuilder::atBlockBegin(&entry);
  Location loc = op->getLoc();
  F64 f{b, loc};
  auto args = entry.getArguments();
  bool gradient = isa<CrossEntropyGradOp>(op);
  auto logitsType = cast<RankedTensorType>(op->getOperand(0).getType());
  int64_t rows = logitsType.getDimSize(0), classes = logitsType.getDimSize(1);
  auto reduction =
      op->getAttrOfType<LossReductionAttr>("reduction")
          ? op->getAttrOfType<LossReductionAttr>("reduction").getValue()
          : LossReduction::mean;
  auto ignoreAttr = op->getAttrOfType<IntegerAttr>("ignore_index");
  int64_t ignore = ignoreAttr ? ignoreAttr.getInt() : -100;
  auto smoothingAttr = op->getAttrOfType<FloatAttr>("label_smoothing");
  double smoothing = smoothingAttr ? smoothingAttr.getValueAsDouble() : 0.0;
  Value logits = args[0], labels = args[1];
  Value output = args[gradient ? 3 : 2];
  Value begin = args[args.size() - 2], end = args[args.size() - 1];
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value rowCount = arith::ConstantIndexOp::create(b, loc, rows);
  Value classCount = arith::ConstantIndexOp::create(b, loc, classes);
  Type i64 = b.getI64Type();
  auto labelAt = [&](OpBuilder &builder, Value r) -> Value {
    Value label = memref::LoadOp::create(builder, loc, labels, ValueRange{r});
    return label.getType() == i64
               ? label
               : arith::ExtSIOp::create(builder, loc, i64, label).getResult();
  };
  auto i64Constant = [&](OpBuilder &builder, int64_t v) -> Value {
    return arith::ConstantOp::create(builder, loc, i64,
                                     builder.getI64IntegerAttr(v));
  };

  // Rows that count (not ignored), for the mean.
  auto counted = scf::ForOp::create(
      b, loc, zero, rowCount, one, ValueRange{f.c(0.0)},
      [&](OpBuilder &body, Location, Value r, ValueRange carried) {
        F64 g{body, loc};
        Value kept =
            arith::CmpIOp::create(body, loc, arith::CmpIPredicate::ne,
                                  labelAt(body, r), i64Constant(body, ignore));
        scf::YieldOp::create(
            body, loc,
            ValueRange{g.add(
                carried[0],
                arith::SelectOp::create(body, loc, kept, g.c(1.0), g.c(0.0)))});
      });
  Value count = counted.getResult(0);
  Value runs =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, begin, end);
  auto once = scf::IfOp::create(b, loc, runs, /*withElseRegion=*/false);
  OpBuilder body = OpBuilder::atBlockBegin(&once.getThenRegion().front());
  F64 g{body, loc};
  Value weightScalar;
  if (gradient) {
    Value lossGrad = reduction == LossReduction::none
                         ? Value()
                         : g.load(args[2], ValueRange());
    weightScalar =
        reduction == LossReduction::mean ? g.div(lossGrad, count) : lossGrad;
  }
  auto total = scf::ForOp::create(
      body, loc, zero, rowCount, one, ValueRange{g.c(0.0)},
      [&](OpBuilder &rowBuilder, Location, Value r, ValueRange carried) {
        F64 h{rowBuilder, loc};
        Value label = labelAt(rowBuilder, r);
        Value ignored =
            arith::CmpIOp::create(rowBuilder, loc, arith::CmpIPredicate::eq,
                                  label, i64Constant(rowBuilder, ignore));
        Value valid = arith::AndIOp::create(
            rowBuilder, loc,
            arith::CmpIOp::create(rowBuilder, loc, arith::CmpIPredicate::sge,
                                  label, i64Constant(rowBuilder, 0)),
            arith::CmpIOp::create(rowBuilder, loc, arith::CmpIPredicate::slt,
                                  label, i64Constant(rowBuilder, classes)));
        // Row statistics: max, sum of exponentials, sum of logits.
        auto stats = scf::ForOp::create(
            rowBuilder, loc, zero, classCount, one,
            ValueRange{h.c(-INFINITY), h.c(0.0)},
            [&](OpBuilder &cb, Location, Value c, ValueRange acc) {
              F64 k{cb, loc};
              Value x = k.load(logits, ValueRange{r, c});
              scf::YieldOp::create(
                  cb, loc, ValueRange{k.max(acc[0], x), k.add(acc[1], x)});
            });
        Value max = stats.getResult(0), sumLogits = stats.getResult(1);
        auto sums = scf::ForOp::create(
            rowBuilder, loc, zero, classCount, one, ValueRange{h.c(0.0)},
            [&](OpBuilder &cb, Location, Value c, ValueRange acc) {
              F64 k{cb, loc};
              Value x = k.load(logits, ValueRange{r, c});
              scf::YieldOp::create(
                  cb, loc, ValueRange{k.add(acc[0], k.exp(k.sub(x, max)))});
            });
        Value sum = sums.getResult(0);
        Value nan = h.c(NAN);
        Value safeLabel = arith::IndexCastOp::create(
            rowBuilder, loc, rowBuilder.getIndexType(),
            arith::SelectOp::create(rowBuilder, loc, valid, label,
                                    i64Constant(rowBuilder, 0)));
        Value rowLoss = h.c(0.0);
        if (!gradient) {
          Value logSumExp = h.add(max, h.log(sum));
          Value nll =
              h.sub(logSumExp, h.load(logits, ValueRange{r, safeLabel}));
          Value uniform = h.sub(logSumExp, h.div(sumLogits, h.c(classes)));
          Value loss = h.add(h.mul(h.c(1 - smoothing), nll),
                             h.mul(h.c(smoothing), uniform));
          loss = arith::SelectOp::create(rowBuilder, loc, valid, loss, nan);
          rowLoss =
              arith::SelectOp::create(rowBuilder, loc, ignored, h.c(0.0), loss);
          if (reduction == LossReduction::none)
            h.store(rowLoss, output, ValueRange{r});
        } else {
          Value weight = reduction == LossReduction::none
                             ? h.load(args[2], ValueRange{r})
                             : weightScalar;
          Value safeWeight =
              arith::SelectOp::create(rowBuilder, loc, valid, weight, nan);
          scf::ForOp::create(
              rowBuilder, loc, zero, classCount, one, ValueRange(),
              [&](OpBuilder &cb, Location, Value c, ValueRange) {
                F64 k{cb, loc};
                Value p = k.div(
                    k.exp(k.sub(k.load(logits, ValueRange{r, c}), max)), sum);
                Value isLabel = arith::CmpIOp::create(
                    cb, loc, arith::CmpIPredicate::eq, c, safeLabel);
                Value target =
                    k.add(arith::SelectOp::create(cb, loc, isLabel,
                                                  k.c(1 - smoothing), k.c(0.0)),
                          k.c(smoothing / static_cast<double>(classes)));
                Value grad = k.mul(safeWeight, k.sub(p, target));
                k.store(
                    arith::SelectOp::create(cb, loc, ignored, k.c(0.0), grad),
                    output, ValueRange{r, c});
                scf::YieldOp::create(cb, loc);
              });
        }
        scf::YieldOp::create(rowBuilder, loc,
                             ValueRange{h.add(carried[0], rowLoss)});
      });
  if (!gradient && reduction != LossReduction::none)
    g.store(reduction == LossReduction::sum ? total.getResult(0)
                                            : g.div(total.getResult(0), count),
            output, ValueRange());
  func::ReturnOp::create(b, loc);
  return success();
}

/// Inverted dropout. The seed argument is the plan's rng_seed tensor,
/// i64[2] = (key, offset); element i (row-major) draws Philox-4x32-10 with
/// that key at counter offset + the op's offset + i (runtime/support/Philox.h),
/// u = (word0 >> 8) * 2^-24, and is kept, scaled by 1 / (1 - p), iff
/// u >= p -- as the evaluator does, so the masks agree exactly.
LogicalResult emitDropout(DropoutOp op, func::FuncOp kernel) {
  Block &entry = kernel.getBody().front();
  OpBuilder b = OpBuilder::atBlockBegin(&entry);
  Location loc = op->getLoc();
  F64 f{b, loc};
  auto args = entry.getArguments();
  Value x = args[0], seed = args[1], out = args[2];
  // The kernel's operand shape (the op's, or its flattened form: the
  // element's Philox counter is its row-major position either way).
  auto shape = cast<MemRefType>(kernel.getArgumentTypes()[0]).getShape();
  Type i32 = b.getI32Type(), i64 = b.getI64Type();
  auto c32 = [&](OpBuilder &ob, uint32_t v) -> Value {
    return arith::ConstantOp::create(
        ob, loc, i32, ob.getIntegerAttr(i32, static_cast<int64_t>(v)));
  };
  Value key = memref::LoadOp::create(b, loc, seed, ValueRange{f.idx(0)});
  Value base = memref::LoadOp::create(b, loc, seed, ValueRange{f.idx(1)});
  base = arith::AddIOp::create(
      b, loc, base,
      arith::ConstantOp::create(b, loc, i64,
                                b.getIntegerAttr(i64, op.getOffset())));
  Value c64v32 =
      arith::ConstantOp::create(b, loc, i64, b.getIntegerAttr(i64, 32));
  Value key0 = arith::TruncIOp::create(b, loc, i32, key);
  Value key1 = arith::TruncIOp::create(
      b, loc, i32, arith::ShRUIOp::create(b, loc, key, c64v32));
  double p = op.getProbability().convertToDouble();
  Value probability = f.c(p), scale = f.c(1.0 - p), zero = f.c(0.0);
  Value ulp = f.c(0x1.0p-24);
  Value begin = args[3], end = args[4];
  LogicalResult built = buildLoopNest(
      b, loc, shape, begin, end, [&](OpBuilder &ib, ValueRange index) {
        F64 g{ib, loc};
        Value flat = g.idx(0);
        for (auto [d, i] : llvm::enumerate(index))
          flat = g.iadd(g.imul(flat, g.idx(shape[d])), i);
        Value counter = arith::AddIOp::create(
            ib, loc, base, arith::IndexCastUIOp::create(ib, loc, i64, flat));
        Value c0 = arith::TruncIOp::create(ib, loc, i32, counter);
        Value c1 = arith::TruncIOp::create(
            ib, loc, i32, arith::ShRUIOp::create(ib, loc, counter, c64v32));
        Value c2 = c32(ib, 0), c3 = c32(ib, 0);
        Value k0 = key0, k1 = key1;
        Value mul0 = c32(ib, 0xD2511F53u), mul1 = c32(ib, 0xCD9E8D57u);
        Value weyl0 = c32(ib, 0x9E3779B9u), weyl1 = c32(ib, 0xBB67AE85u);
        auto xorOf = [&](Value a, Value bb, Value c) -> Value {
          return arith::XOrIOp::create(
              ib, loc, arith::XOrIOp::create(ib, loc, a, bb), c);
        };
        for (int round = 0; round < 10; ++round) {
          auto p0 = arith::MulUIExtendedOp::create(ib, loc, mul0, c0);
          auto p1 = arith::MulUIExtendedOp::create(ib, loc, mul1, c2);
          Value n0 = xorOf(p1.getHigh(), c1, k0);
          Value n1 = p1.getLow();
          Value n2 = xorOf(p0.getHigh(), c3, k1);
          Value n3 = p0.getLow();
          c0 = n0, c1 = n1, c2 = n2, c3 = n3;
          k0 = arith::AddIOp::create(ib, loc, k0, weyl0);
          k1 = arith::AddIOp::create(ib, loc, k1, weyl1);
        }
        Value bits = arith::ShRUIOp::create(ib, loc, c0, c32(ib, 8));
        Value u = g.mul(arith::UIToFPOp::create(ib, loc, g.f64, bits), ulp);
        Value keep = g.fcmp(arith::CmpFPredicate::OGE, u, probability);
        Value kept = g.div(g.load(x, index), scale);
        g.store(g.select(keep, kept, zero), out, index);
        return success();
      });
  func::ReturnOp::create(b, loc);
  return built;
}

} // namespace

FailureOr<func::FuncOp> emitOpKernel(Operation *op, StringRef name,
                                     OpBuilder &moduleBuilder,
                                     bool flattenElementwise) {
  // Elementwise kernels over the flattened shape: the outer loop then
  // covers every element.
  auto flat = [&](Type type) -> Type {
    auto tensor = cast<RankedTensorType>(type);
    auto first = cast<RankedTensorType>(op->getOperand(0).getType());
    // A rank-0 operand has nothing to flatten (and its scalars, an
    // optimizer's lr, share its shape).
    if (!flattenElementwise || first.getRank() == 0 ||
        tensor.getShape() != first.getShape())
      return type;
    return RankedTensorType::get({first.getNumElements()},
                                 tensor.getElementType());
  };
  auto flatAll = [&](TypeRange types) {
    return llvm::map_to_vector(types, flat);
  };
  if (auto dropout = dyn_cast<DropoutOp>(op)) {
    auto type = cast<RankedTensorType>(flat(dropout.getOperand().getType()));
    if (!type.getElementType().isF32() && !type.getElementType().isF64())
      return op->emitError("genesis-lower-cpu: 'genesis.dropout' is supported "
                           "on f32 and f64 only");
    // The seed is the plan's rng_seed tensor, i64[2] = (seed, offset).
    SmallVector<Type> inputs = {
        type, RankedTensorType::get({2}, moduleBuilder.getI64Type())};
    func::FuncOp kernel = createKernel(moduleBuilder, op->getLoc(), name,
                                       inputs, flatAll(op->getResultTypes()),
                                       type.getRank() ? type.getDimSize(0) : 1);
    if (failed(emitDropout(dropout, kernel))) {
      kernel.erase();
      return failure();
    }
    return kernel;
  }
  if (hasDataKernel(op)) {
    func::FuncOp kernel =
        createKernel(moduleBuilder, op->getLoc(), name, op->getOperandTypes(),
                     op->getResultTypes(), dataKernelOuterExtent(op));
    if (failed(emitDataKernel(op, kernel))) {
      kernel.erase();
      return failure();
    }
    return kernel;
  }
  if (!floatOnly(op))
    return op->emitError("genesis-lower-cpu: '")
           << op->getName() << "' is supported on f32 and f64 only";
  if (hasRowKernel(op)) {
    func::FuncOp kernel =
        createKernel(moduleBuilder, op->getLoc(), name, op->getOperandTypes(),
                     op->getResultTypes(), rowKernelOuterExtent(op));
    if (failed(emitRowKernel(op, kernel))) {
      kernel.erase();
      return failure();
    }
    return kernel;
  }
  bool optimizer = isOptimizerUpdate(op);
  auto firstType =
      cast<RankedTensorType>(optimizer ? flat(op->getOperand(0).getType())
                                       : op->getOperand(0).getType());
  int64_t outer = 1;
  if (optimizer)
    outer = firstType.getRank() ? firstType.getDimSize(0) : 1;
  if (auto softmax = dyn_cast<SoftmaxOp>(op))
    outer = softmax.getDim() == 0 ? 1 : firstType.getDimSize(0);
  if (auto softmax = dyn_cast<LogSoftmaxOp>(op))
    outer = softmax.getDim() == 0 ? 1 : firstType.getDimSize(0);
  SmallVector<Type> inputs(op->getOperandTypes()),
      outputs(op->getResultTypes());
  if (optimizer) {
    inputs = flatAll(inputs);
    outputs = flatAll(outputs);
  }
  func::FuncOp kernel =
      createKernel(moduleBuilder, op->getLoc(), name, inputs, outputs, outer);
  LogicalResult emitted =
      llvm::TypeSwitch<Operation *, LogicalResult>(op)
          .Case([&](SoftmaxOp s) {
            return emitSoftmax(op, s.getDim(), /*logarithm=*/false, kernel);
          })
          .Case([&](LogSoftmaxOp s) {
            return emitSoftmax(op, s.getDim(), /*logarithm=*/true, kernel);
          })
          .Case<CrossEntropyOp, CrossEntropyGradOp>(
              [&](auto) { return emitCrossEntropy(op, kernel); })
          .Default([&](Operation *) { return emitOptimizer(op, kernel); });
  if (failed(emitted)) {
    kernel.erase();
    return failure();
  }
  return kernel;
}

} // namespace genesis::cpu
