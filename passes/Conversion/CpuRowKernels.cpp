//===- CpuRowKernels.cpp - CPU kernels of the transformer row ops ---------===//
//
// layer_norm, rms_norm, rope, attention, attention_grad and global_norm
// outside fusions.
// Like the other op kernels they compute in f64 and round once per stored
// value, following the reference evaluator's order of operations (so the
// only differences come from exp).
//
// Parallel ranges (genesis.outer_extent):
//   layer_norm / rms_norm: the first dimension (rows are independent; a 1-D
//     operand is one row, extent 1);
//   rope: the first dimension;
//   attention: batch * query heads (one (b, h) slice per iteration);
//   global_norm: 1 (one f64 sum over every element of every input);
//   attention_grad: batch, because key_grad and value_grad sum over the
//     query heads of a group. Its f64 scratch (O(group * S + T) doubles) is
//     allocated on the heap once per call.
//
//===----------------------------------------------------------------------===//

#include "dialect/IR/GenesisOps.h"
#include "passes/Conversion/CpuKernels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <functional>

using namespace mlir;

namespace genesis::cpu {

namespace {

using Emit = KernelMath;

using LoopBody =
    function_ref<SmallVector<Value>(OpBuilder &, Value, ValueRange)>;

/// for iv in [lo, hi) carrying `inits`; returns the final carried values.
SmallVector<Value> loop(OpBuilder &b, Location loc, Value lo, Value hi,
                        ValueRange inits, LoopBody body) {
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  auto op = scf::ForOp::create(
      b, loc, lo, hi, one, inits,
      [&](OpBuilder &inner, Location, Value iv, ValueRange carried) {
        scf::YieldOp::create(inner, loc, body(inner, iv, carried));
      });
  return SmallVector<Value>(op.getResults());
}

SmallVector<Value> loop(OpBuilder &b, Location loc, int64_t n, ValueRange inits,
                        LoopBody body) {
  return loop(b, loc, arith::ConstantIndexOp::create(b, loc, 0),
              arith::ConstantIndexOp::create(b, loc, n), inits, body);
}

/// Sum over [0, n) of term(k), in increasing k, from 0.0.
Value sumOver(OpBuilder &b, Location loc, int64_t n,
              function_ref<Value(Emit &, Value)> term) {
  Emit e{b, loc};
  return loop(b, loc, n, ValueRange{e.c(0.0)},
              [&](OpBuilder &inner, Value k, ValueRange acc) {
                Emit g{inner, loc};
                return SmallVector<Value>{g.add(acc[0], term(g, k))};
              })[0];
}

//===----------------------------------------------------------------------===//
// layer_norm, rms_norm
//===----------------------------------------------------------------------===//

LogicalResult emitNorm(Operation *op, Value weight, Value bias, bool rms,
                       double epsilon, func::FuncOp kernel) {
  Block &entry = kernel.getBody().front();
  OpBuilder b = OpBuilder::atBlockBegin(&entry);
  Location loc = op->getLoc();
  auto args = entry.getArguments();
  unsigned next = 1;
  Value x = args[0];
  Value w = weight ? args[next++] : Value();
  Value bi = bias ? args[next++] : Value();
  Value out = args[next];
  Value begin = args[args.size() - 2], end = args[args.size() - 1];
  auto type = cast<RankedTensorType>(op->getOperand(0).getType());
  if (type.getRank() == 0)
    return op->emitError("genesis-lower-cpu: normalisation of a scalar");
  int64_t channels = type.getShape().back();
  ArrayRef<int64_t> rows = type.getShape().drop_back();
  LogicalResult result = buildLoopNest(
      b, loc, rows, begin, end, [&](OpBuilder &inner, ValueRange index) {
        Emit f{inner, loc};
        SmallVector<Value> at(index);
        at.push_back(Value());
        auto xAt = [&](Emit &g, Value c) {
          at.back() = c;
          return g.load(x, at);
        };
        Value mean = f.c(0.0);
        if (!rms)
          mean = f.div(sumOver(inner, loc, channels,
                               [&](Emit &g, Value c) { return xAt(g, c); }),
                       f.c(static_cast<double>(channels)));
        Value var = sumOver(inner, loc, channels, [&](Emit &g, Value c) {
          Value d = g.sub(xAt(g, c), mean);
          return g.mul(d, d);
        });
        Value scale =
            f.div(f.c(1.0),
                  f.sqrt(f.add(f.div(var, f.c(static_cast<double>(channels))),
                               f.c(epsilon))));
        loop(inner, loc, channels, ValueRange(),
             [&](OpBuilder &body, Value c, ValueRange) {
               Emit g{body, loc};
               Value y = g.mul(g.sub(xAt(g, c), mean), scale);
               if (w)
                 y = g.mul(y, g.load(w, ValueRange{c}));
               if (bi)
                 y = g.add(y, g.load(bi, ValueRange{c}));
               at.back() = c;
               g.store(y, out, at);
               return SmallVector<Value>();
             });
        return success();
      });
  func::ReturnOp::create(b, loc);
  return result;
}

//===----------------------------------------------------------------------===//
// rope
//===----------------------------------------------------------------------===//

LogicalResult emitRope(RopeOp op, func::FuncOp kernel) {
  Block &entry = kernel.getBody().front();
  OpBuilder b = OpBuilder::atBlockBegin(&entry);
  Location loc = op->getLoc();
  auto args = entry.getArguments();
  auto type = cast<RankedTensorType>(op.getOperand().getType());
  auto table = cast<RankedTensorType>(op.getCos().getType());
  int64_t rank = type.getRank();
  if (rank < 2 || type.getShape().back() % 2 != 0 ||
      table.getShape() != type.getShape().take_back(2) ||
      cast<RankedTensorType>(op.getSin().getType()).getShape() !=
          table.getShape())
    return op->emitError("genesis-lower-cpu: rope expects [..., S, D] with D "
                         "even and [S, D] tables");
  int64_t half = type.getShape().back() / 2;
  Value begin = args[4], end = args[5];
  Emit f{b, loc};
  Value halfIndex = f.idx(half);
  LogicalResult result = buildLoopNest(
      b, loc, type.getShape(), begin, end,
      [&](OpBuilder &inner, ValueRange index) {
        Emit g{inner, loc};
        Value d = index.back();
        Value low = g.icmp(arith::CmpIPredicate::ult, d, halfIndex);
        Value partner =
            g.select(low, g.iadd(d, halfIndex),
                     arith::SubIOp::create(inner, loc, d, halfIndex));
        SmallVector<Value> at(index);
        at.back() = partner;
        Value other = g.load(args[0], at);
        Value rotated = g.select(low, g.neg(other), other);
        ValueRange t = index.take_back(2);
        g.store(g.add(g.mul(g.load(args[0], index), g.load(args[1], t)),
                      g.mul(rotated, g.load(args[2], t))),
                args[3], index);
        return success();
      });
  func::ReturnOp::create(b, loc);
  return result;
}

//===----------------------------------------------------------------------===//
// attention, attention_grad
//===----------------------------------------------------------------------===//

/// Shapes and operands shared by attention and its gradient.
struct Attention {
  Location loc;
  Value q, k, v, mask;
  int64_t batch, heads, s, d, kvHeads, t, dv, group;
  bool causal;
  double scale;

  Attention(Operation *op, ValueRange args, bool hasMask, bool causal,
            double scale)
      : loc(op->getLoc()), causal(causal), scale(scale) {
    q = args[0];
    k = args[1];
    v = args[2];
    mask = hasMask ? args[3] : Value();
    auto qs = cast<MemRefType>(q.getType()).getShape();
    auto ks = cast<MemRefType>(k.getType()).getShape();
    auto vs = cast<MemRefType>(v.getType()).getShape();
    batch = qs[0], heads = qs[1], s = qs[2], d = qs[3];
    kvHeads = ks[1], t = ks[2], dv = vs[3];
    group = kvHeads ? heads / kvHeads : 1;
  }

  /// The score of query (bi, h, i) against key (bi, kvh, j) in f64, as the
  /// evaluator forms it: (sum_c q k) * scale + mask, or -inf where causal
  /// masking hides the key.
  Value score(OpBuilder &b, Value bi, Value h, Value kvh, Value i, Value j) {
    auto compute = [&](OpBuilder &inner) {
      Emit g{inner, loc};
      Value dot = sumOver(inner, loc, d, [&](Emit &e, Value c) {
        return e.mul(e.load(q, ValueRange{bi, h, i, c}),
                     e.load(k, ValueRange{bi, kvh, j, c}));
      });
      Value sc = g.mul(dot, g.c(scale));
      if (mask)
        sc = g.add(sc, g.load(mask, ValueRange{bi, h, i, j}));
      return sc;
    };
    if (!causal)
      return compute(b);
    Emit e{b, loc};
    Value visible =
        e.icmp(arith::CmpIPredicate::sle, j, e.iadd(i, e.idx(t - s)));
    auto ifOp = scf::IfOp::create(b, loc, TypeRange{e.f64}, visible,
                                  /*withElseRegion=*/true);
    {
      OpBuilder thenB = OpBuilder::atBlockEnd(&ifOp.getThenRegion().front());
      scf::YieldOp::create(thenB, loc, compute(thenB));
      OpBuilder elseB = OpBuilder::atBlockEnd(&ifOp.getElseRegion().front());
      Emit g{elseB, loc};
      scf::YieldOp::create(elseB, loc, g.c(-INFINITY));
    }
    return ifOp.getResult(0);
  }

  /// Stores query row i's scores into `buffer` and returns their maximum,
  /// NaN if a score is NaN (arith.maximumf), -inf if every key is hidden.
  Value storeScores(OpBuilder &b, Location loc, Value buffer, Value bi, Value h,
                    Value kvh, Value i) {
    Emit e{b, loc};
    return loop(b, loc, t, ValueRange{e.c(-INFINITY)},
                [&](OpBuilder &jB, Value j, ValueRange acc) {
                  Emit g{jB, loc};
                  Value sc = score(jB, bi, h, kvh, i, j);
                  memref::StoreOp::create(jB, loc, sc, buffer, ValueRange{j});
                  return SmallVector<Value>{g.max(acc[0], sc)};
                })[0];
  }
};

Value allocF64(OpBuilder &b, Location loc, int64_t n) {
  return memref::AllocOp::create(
      b, loc, MemRefType::get({std::max<int64_t>(n, 1)}, b.getF64Type()));
}

LogicalResult emitAttention(AttentionOp op, func::FuncOp kernel) {
  Block &entry = kernel.getBody().front();
  OpBuilder b = OpBuilder::atBlockBegin(&entry);
  Location loc = op->getLoc();
  auto args = entry.getArguments();
  bool hasMask = static_cast<bool>(op.getMask());
  Attention a(op, args, hasMask, op.getCausal(),
              op.getScale().convertToDouble());
  Value out = args[hasMask ? 4 : 3];
  Value begin = args[args.size() - 2], end = args[args.size() - 1];
  Value scores = allocF64(b, loc, a.t);
  Emit f{b, loc};
  Value headCount = f.idx(a.heads), groupSize = f.idx(a.group);
  loop(b, loc, begin, end, ValueRange(),
       [&](OpBuilder &bhB, Value bh, ValueRange) {
         Emit e{bhB, loc};
         Value bi = e.idiv(bh, headCount), h = e.irem(bh, headCount);
         Value kvh = e.idiv(h, groupSize);
         loop(bhB, loc, a.s, ValueRange(),
              [&](OpBuilder &rowB, Value i, ValueRange) {
                Emit r{rowB, loc};
                Value max = a.storeScores(rowB, loc, scores, bi, h, kvh, i);
                // With max = -inf (every key hidden) every p is NaN and so
                // is sum: the row is written 0. A NaN score makes max NaN,
                // and the row NaN, as in PyTorch.
                Value sum = sumOver(rowB, loc, a.t, [&](Emit &g, Value j) {
                  Value p = g.exp(g.sub(g.load(scores, ValueRange{j}), max));
                  memref::StoreOp::create(g.b, loc, p, scores, ValueRange{j});
                  return p;
                });
                Value visible =
                    r.fcmp(arith::CmpFPredicate::UNE, max, r.c(-INFINITY));
                loop(
                    rowB, loc, a.dv, ValueRange(),
                    [&](OpBuilder &cB, Value c, ValueRange) {
                      Emit g{cB, loc};
                      Value acc = sumOver(cB, loc, a.t, [&](Emit &e2, Value j) {
                        return e2.mul(e2.load(scores, ValueRange{j}),
                                      e2.load(a.v, ValueRange{bi, kvh, j, c}));
                      });
                      g.store(g.select(visible, g.div(acc, sum), g.c(0.0)), out,
                              ValueRange{bi, h, i, c});
                      return SmallVector<Value>();
                    });
                return SmallVector<Value>();
              });
         return SmallVector<Value>();
       });
  memref::DeallocOp::create(b, loc, scores);
  func::ReturnOp::create(b, loc);
  return success();
}

/// Per batch b and key/value head kvh: first one pass per query row of the
/// group (row max, softmax total, rowsum(dO * O), and the row's query_grad);
/// then per key j the probabilities and dS of every row of the group, from
/// which key_grad[j] and value_grad[j] are summed in the evaluator's order
/// (query head, then query row).
LogicalResult emitAttentionGrad(AttentionGradOp op, func::FuncOp kernel) {
  Block &entry = kernel.getBody().front();
  OpBuilder b = OpBuilder::atBlockBegin(&entry);
  Location loc = op->getLoc();
  auto args = entry.getArguments();
  bool hasMask = static_cast<bool>(op.getMask());
  Attention a(op, args, hasMask, op.getCausal(),
              op.getScale().convertToDouble());
  unsigned base = hasMask ? 4 : 3;
  Value outGrad = args[base + 1];
  Value dq = args[base + 2], dk = args[base + 3], dvOut = args[base + 4];
  Value begin = args[args.size() - 2], end = args[args.size() - 1];
  int64_t rows = a.group * a.s;
  Value rowMax = allocF64(b, loc, rows), rowTotal = allocF64(b, loc, rows),
        rowDot = allocF64(b, loc, rows), pCol = allocF64(b, loc, rows),
        dsCol = allocF64(b, loc, rows), tmp = allocF64(b, loc, a.t);
  Emit f{b, loc};
  Value sIndex = f.idx(a.s), groupSize = f.idx(a.group);
  loop(
      b, loc, begin, end, ValueRange(),
      [&](OpBuilder &bB, Value bi, ValueRange) {
        loop(
            bB, loc, a.kvHeads, ValueRange(),
            [&](OpBuilder &kvB, Value kvh, ValueRange) {
              Emit e{kvB, loc};
              Value firstHead = e.imul(kvh, groupSize);
              // Row pass.
              loop(
                  kvB, loc, rows, ValueRange(),
                  [&](OpBuilder &rB, Value r, ValueRange) {
                    Emit g{rB, loc};
                    Value h = g.iadd(firstHead, g.idiv(r, sIndex)),
                          i = g.irem(r, sIndex);
                    Value max = a.storeScores(rB, loc, tmp, bi, h, kvh, i);
                    Value valid =
                        g.fcmp(arith::CmpFPredicate::UNE, max, g.c(-INFINITY));
                    Value total = sumOver(rB, loc, a.t, [&](Emit &x, Value j) {
                      Value p = x.exp(x.sub(x.load(tmp, ValueRange{j}), max));
                      memref::StoreOp::create(x.b, loc, p, tmp, ValueRange{j});
                      return p;
                    });
                    // rowsum(dO * O) with O recomputed in f64, c by c.
                    Value dot = sumOver(rB, loc, a.dv, [&](Emit &x, Value c) {
                      Value o = sumOver(x.b, loc, a.t, [&](Emit &y, Value j) {
                        return y.mul(y.div(y.load(tmp, ValueRange{j}), total),
                                     y.load(a.v, ValueRange{bi, kvh, j, c}));
                      });
                      return x.mul(x.load(outGrad, ValueRange{bi, h, i, c}), o);
                    });
                    memref::StoreOp::create(rB, loc, max, rowMax,
                                            ValueRange{r});
                    memref::StoreOp::create(rB, loc, total, rowTotal,
                                            ValueRange{r});
                    memref::StoreOp::create(rB, loc, dot, rowDot,
                                            ValueRange{r});
                    // dS of this row into tmp, then query_grad.
                    loop(rB, loc, a.t, ValueRange(),
                         [&](OpBuilder &jB, Value j, ValueRange) {
                           Emit x{jB, loc};
                           Value p = x.div(x.load(tmp, ValueRange{j}), total);
                           Value dp =
                               sumOver(jB, loc, a.dv, [&](Emit &y, Value c) {
                                 return y.mul(
                                     y.load(outGrad, ValueRange{bi, h, i, c}),
                                     y.load(a.v, ValueRange{bi, kvh, j, c}));
                               });
                           Value ds =
                               x.mul(x.mul(p, x.sub(dp, dot)), x.c(a.scale));
                           memref::StoreOp::create(jB, loc, ds, tmp,
                                                   ValueRange{j});
                           return SmallVector<Value>();
                         });
                    loop(rB, loc, a.d, ValueRange(),
                         [&](OpBuilder &cB, Value c, ValueRange) {
                           Emit x{cB, loc};
                           Value sum =
                               sumOver(cB, loc, a.t, [&](Emit &y, Value j) {
                                 return y.mul(
                                     y.load(tmp, ValueRange{j}),
                                     y.load(a.k, ValueRange{bi, kvh, j, c}));
                               });
                           // A row whose keys are all masked contributes
                           // nothing.
                           x.store(x.select(valid, sum, x.c(0.0)), dq,
                                   ValueRange{bi, h, i, c});
                           return SmallVector<Value>();
                         });
                    return SmallVector<Value>();
                  });
              // Key pass.
              loop(kvB, loc, a.t, ValueRange(),
                   [&](OpBuilder &jB, Value j, ValueRange) {
                     loop(
                         jB, loc, rows, ValueRange(),
                         [&](OpBuilder &rB, Value r, ValueRange) {
                           Emit g{rB, loc};
                           Value h = g.iadd(firstHead, g.idiv(r, sIndex)),
                                 i = g.irem(r, sIndex);
                           Value max = g.load(rowMax, ValueRange{r});
                           Value valid = g.fcmp(arith::CmpFPredicate::UNE, max,
                                                g.c(-INFINITY));
                           Value p = g.div(
                               g.exp(g.sub(a.score(rB, bi, h, kvh, i, j), max)),
                               g.load(rowTotal, ValueRange{r}));
                           Value dp =
                               sumOver(rB, loc, a.dv, [&](Emit &y, Value c) {
                                 return y.mul(
                                     y.load(outGrad, ValueRange{bi, h, i, c}),
                                     y.load(a.v, ValueRange{bi, kvh, j, c}));
                               });
                           Value ds = g.mul(
                               g.mul(p,
                                     g.sub(dp, g.load(rowDot, ValueRange{r}))),
                               g.c(a.scale));
                           memref::StoreOp::create(rB, loc,
                                                   g.select(valid, p, g.c(0.0)),
                                                   pCol, ValueRange{r});
                           memref::StoreOp::create(
                               rB, loc, g.select(valid, ds, g.c(0.0)), dsCol,
                               ValueRange{r});
                           return SmallVector<Value>();
                         });
                     auto columnSum = [&](OpBuilder &cB, Value weights,
                                          Value source, Value c) {
                       return sumOver(cB, loc, rows, [&](Emit &y, Value r) {
                         Value h = y.iadd(firstHead, y.idiv(r, sIndex)),
                               i = y.irem(r, sIndex);
                         return y.mul(y.load(weights, ValueRange{r}),
                                      y.load(source, ValueRange{bi, h, i, c}));
                       });
                     };
                     loop(jB, loc, a.d, ValueRange(),
                          [&](OpBuilder &cB, Value c, ValueRange) {
                            Emit x{cB, loc};
                            x.store(columnSum(cB, dsCol, a.q, c), dk,
                                    ValueRange{bi, kvh, j, c});
                            return SmallVector<Value>();
                          });
                     loop(jB, loc, a.dv, ValueRange(),
                          [&](OpBuilder &cB, Value c, ValueRange) {
                            Emit x{cB, loc};
                            x.store(columnSum(cB, pCol, outGrad, c), dvOut,
                                    ValueRange{bi, kvh, j, c});
                            return SmallVector<Value>();
                          });
                     return SmallVector<Value>();
                   });
              return SmallVector<Value>();
            });
        return SmallVector<Value>();
      });
  for (Value buffer : {rowMax, rowTotal, rowDot, pCol, dsCol, tmp})
    memref::DeallocOp::create(b, loc, buffer);
  func::ReturnOp::create(b, loc);
  return success();
}

//===----------------------------------------------------------------------===//
// global_norm
//===----------------------------------------------------------------------===//

/// Sum in f64 of x^2 over every element of every input, in operand order and
/// row-major element order (as the evaluator), then one sqrt and one
/// rounding. A single iteration of the outer range does all the work.
LogicalResult emitGlobalNorm(GlobalNormOp op, func::FuncOp kernel) {
  Block &entry = kernel.getBody().front();
  OpBuilder b = OpBuilder::atBlockBegin(&entry);
  Location loc = op->getLoc();
  auto args = entry.getArguments();
  unsigned numInputs = op.getInputs().size();
  Value out = args[numInputs];
  Value begin = args[args.size() - 2], end = args[args.size() - 1];
  loop(b, loc, begin, end, ValueRange(), [&](OpBuilder &ob, Value, ValueRange) {
    Emit o{ob, loc};
    Value sum = o.c(0.0);
    for (unsigned i = 0; i < numInputs; ++i) {
      Value x = args[i];
      ArrayRef<int64_t> shape = cast<MemRefType>(x.getType()).getShape();
      SmallVector<Value> index;
      std::function<Value(OpBuilder &, unsigned, Value)> level =
          [&](OpBuilder &lb, unsigned d, Value acc) -> Value {
        Emit g{lb, loc};
        if (d == shape.size()) {
          Value v = g.load(x, index);
          return g.add(acc, g.mul(v, v));
        }
        return loop(lb, loc, shape[d], ValueRange{acc},
                    [&](OpBuilder &inner, Value iv, ValueRange carried) {
                      index.push_back(iv);
                      Value next = level(inner, d + 1, carried[0]);
                      index.pop_back();
                      return SmallVector<Value>{next};
                    })[0];
      };
      sum = level(ob, 0, sum);
    }
    o.store(o.sqrt(sum), out, ValueRange());
    return SmallVector<Value>();
  });
  func::ReturnOp::create(b, loc);
  return success();
}

} // namespace

bool hasRowKernel(Operation *op) {
  return isa<LayerNormOp, RmsNormOp, RopeOp, AttentionOp, AttentionGradOp,
             GlobalNormOp>(op);
}

int64_t rowKernelOuterExtent(Operation *op) {
  if (isa<GlobalNormOp>(op))
    return 1;
  auto first = cast<RankedTensorType>(op->getOperand(0).getType());
  if (isa<LayerNormOp, RmsNormOp>(op))
    return first.getRank() >= 2 ? first.getDimSize(0) : 1;
  if (isa<RopeOp>(op))
    return first.getRank() >= 1 ? first.getDimSize(0) : 1;
  if (isa<AttentionOp>(op))
    return first.getDimSize(0) * first.getDimSize(1);
  return first.getDimSize(0); // attention_grad: batch
}

LogicalResult emitRowKernel(Operation *op, func::FuncOp kernel) {
  for (Type type : op->getOperandTypes())
    if (cast<RankedTensorType>(type).getNumDynamicDims())
      return op->emitError("genesis-lower-cpu: '")
             << op->getName() << "' needs static shapes";
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](LayerNormOp o) {
        return emitNorm(op, o.getWeight(), o.getBias(), /*rms=*/false,
                        o.getEpsilon().convertToDouble(), kernel);
      })
      .Case([&](RmsNormOp o) {
        return emitNorm(op, o.getWeight(), Value(), /*rms=*/true,
                        o.getEpsilon().convertToDouble(), kernel);
      })
      .Case([&](RopeOp o) { return emitRope(o, kernel); })
      .Case([&](AttentionOp o) { return emitAttention(o, kernel); })
      .Case([&](AttentionGradOp o) { return emitAttentionGrad(o, kernel); })
      .Case([&](GlobalNormOp o) { return emitGlobalNorm(o, kernel); })
      .Default([&](Operation *) { return failure(); });
}

} // namespace genesis::cpu
