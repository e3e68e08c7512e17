//===- CpuDataKernels.cpp - CPU kernels of data-movement ops --------------===//
//
// Kernels of the ops that only move data, when they run outside fusions:
// transpose, slice, pad, concat, broadcast_in_dim, take, scatter_add, iota
// and argmax. Copying ops loop over the result and load the element it
// comes from, so they are type-agnostic and exact.
//
// take and scatter_add clamp an index outside [0, n) into it (the evaluator
// reports such an index as an error; a kernel must not touch memory out of
// bounds). scatter_add runs the index positions in order, one range per
// position of the dimensions before `axis` (outer extent 1 when axis is 0),
// so repeated indices sum deterministically; f32 sums accumulate in an f64
// scratch and round once at the end, as the evaluator does.
//
//===----------------------------------------------------------------------===//

#include "dialect/IR/GenesisOps.h"
#include "passes/Conversion/CpuKernels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/TypeSwitch.h"

#include <functional>

using namespace mlir;

namespace genesis::cpu {

bool hasDataKernel(Operation *op) {
  return isa<TransposeOp, SliceOp, PadOp, ConcatOp, BroadcastInDimOp, TakeOp,
             ScatterAddOp, IotaOp, ArgmaxOp>(op);
}

namespace {

RankedTensorType tensorOf(Value v) {
  return cast<RankedTensorType>(v.getType());
}

int64_t leading(ArrayRef<int64_t> shape) {
  return shape.empty() ? 1 : shape[0];
}

/// The operand shape with `dim` set to 1: the positions argmax reduces to.
SmallVector<int64_t> around(ArgmaxOp op) {
  SmallVector<int64_t> shape(op.getOperand().getType().getShape());
  shape[op.getDim()] = 1;
  return shape;
}

bool isPlainNumeric(Type t) {
  return t.isF32() || t.isF64() || t.isInteger(32) || t.isInteger(64);
}

struct Idx {
  OpBuilder &b;
  Location loc;
  Value c(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubIOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  Value cmp(arith::CmpIPredicate p, Value x, Value y) {
    return arith::CmpIOp::create(b, loc, p, x, y);
  }
  Value select(Value cond, Value x, Value y) {
    return arith::SelectOp::create(b, loc, cond, x, y);
  }
  /// An integer index value clamped into [0, bound).
  Value clampedIndex(Value integer, int64_t bound) {
    Value i = arith::IndexCastOp::create(b, loc, b.getIndexType(), integer);
    i = arith::MaxSIOp::create(b, loc, i, c(0));
    return arith::MinSIOp::create(b, loc, i, c(bound - 1));
  }
};

/// Loads `memref[index]` when `cond`, else yields `otherwise()`.
Value loadIf(OpBuilder &b, Location loc, Value cond,
             function_ref<Value(OpBuilder &)> then,
             function_ref<Value(OpBuilder &)> otherwise, Type type) {
  auto ifOp = scf::IfOp::create(b, loc, TypeRange{type}, cond,
                                /*withElseRegion=*/true);
  OpBuilder thenB = OpBuilder::atBlockBegin(&ifOp.getThenRegion().front());
  scf::YieldOp::create(thenB, loc, then(thenB));
  OpBuilder elseB = OpBuilder::atBlockBegin(&ifOp.getElseRegion().front());
  scf::YieldOp::create(elseB, loc, otherwise(elseB));
  return ifOp.getResult(0);
}

/// Loops over the result, storing `element(index)` at each position.
LogicalResult copyKernel(OpBuilder &b, Location loc, Value result, Value begin,
                         Value end,
                         function_ref<Value(OpBuilder &, ValueRange)> element) {
  auto shape = cast<MemRefType>(result.getType()).getShape();
  return buildLoopNest(b, loc, shape, begin, end,
                       [&](OpBuilder &inner, ValueRange index) {
                         memref::StoreOp::create(
                             inner, loc, element(inner, index), result, index);
                         return success();
                       });
}

LogicalResult emitScatterAdd(ScatterAddOp op, func::FuncOp kernel) {
  Block &entry = kernel.getBody().front();
  OpBuilder b = OpBuilder::atBlockBegin(&entry);
  Location loc = op.getLoc();
  auto args = entry.getArguments();
  Value operand = args[0], indices = args[1], updates = args[2],
        result = args[3];
  Value begin = args[4], end = args[5];
  RankedTensorType type = op.getOperand().getType();
  Type element = type.getElementType();
  int64_t axis = op.getAxis(), rows = type.getDimSize(axis);
  ArrayRef<int64_t> shape = type.getShape();
  ArrayRef<int64_t> indexShape = op.getIndices().getType().getShape();
  SmallVector<int64_t> outerShape(shape.take_front(axis));
  SmallVector<int64_t> slabShape(shape.drop_front(axis));
  SmallVector<int64_t> innerShape(shape.drop_front(axis + 1));
  // f32 sums go through an f64 scratch slab; f64 and integers (wrapping)
  // accumulate in place with the same result.
  bool widened = element.isF32();
  Type f64 = b.getF64Type();
  Value scratch;
  if (widened)
    scratch = memref::AllocOp::create(b, loc, MemRefType::get(slabShape, f64));
  // The dimensions before `axis` run over [begin, end); with none, the
  // whole kernel is one range.
  Value runBegin = begin, runEnd = end;
  auto body = [&](OpBuilder &ob, ValueRange outer) -> LogicalResult {
    auto full = [&](ValueRange slab) {
      SmallVector<Value> index(outer);
      index.append(slab.begin(), slab.end());
      return index;
    };
    Value slabBegin = arith::ConstantIndexOp::create(ob, loc, 0);
    Value slabEnd = arith::ConstantIndexOp::create(ob, loc, slabShape[0]);
    // 1. Start from the operand.
    if (failed(buildLoopNest(
            ob, loc, slabShape, slabBegin, slabEnd,
            [&](OpBuilder &ib, ValueRange slab) {
              Value x = memref::LoadOp::create(ib, loc, operand, full(slab));
              if (widened)
                memref::StoreOp::create(ib, loc,
                                        arith::ExtFOp::create(ib, loc, f64, x),
                                        scratch, slab);
              else
                memref::StoreOp::create(ib, loc, x, result, full(slab));
              return success();
            })))
      return failure();
    // 2. Index positions in row-major order, then the inner dimensions.
    SmallVector<int64_t> positions(indexShape);
    positions.append(innerShape.begin(), innerShape.end());
    Value posBegin = arith::ConstantIndexOp::create(ob, loc, 0);
    Value posEnd = arith::ConstantIndexOp::create(ob, loc, leading(positions));
    if (failed(buildLoopNest(
            ob, loc, positions, posBegin, posEnd,
            [&](OpBuilder &ib, ValueRange pos) {
              Idx x{ib, loc};
              ValueRange p = pos.take_front(indexShape.size());
              ValueRange inner = pos.drop_front(indexShape.size());
              Value row = x.clampedIndex(
                  memref::LoadOp::create(ib, loc, indices, p), rows);
              SmallVector<Value> slab{row};
              slab.append(inner.begin(), inner.end());
              SmallVector<Value> from(outer);
              from.append(pos.begin(), pos.end());
              Value u = memref::LoadOp::create(ib, loc, updates, from);
              if (widened) {
                Value acc = memref::LoadOp::create(ib, loc, scratch, slab);
                Value sum = arith::AddFOp::create(
                    ib, loc, acc, arith::ExtFOp::create(ib, loc, f64, u));
                memref::StoreOp::create(ib, loc, sum, scratch, slab);
              } else {
                Value acc = memref::LoadOp::create(ib, loc, result, full(slab));
                Value sum =
                    isa<FloatType>(element)
                        ? arith::AddFOp::create(ib, loc, acc, u).getResult()
                        : arith::AddIOp::create(ib, loc, acc, u).getResult();
                memref::StoreOp::create(ib, loc, sum, result, full(slab));
              }
              return success();
            })))
      return failure();
    // 3. Round the f64 sums once.
    if (widened &&
        failed(buildLoopNest(ob, loc, slabShape, slabBegin, slabEnd,
                             [&](OpBuilder &ib, ValueRange slab) {
                               Value v = memref::LoadOp::create(ib, loc,
                                                                scratch, slab);
                               memref::StoreOp::create(
                                   ib, loc,
                                   arith::TruncFOp::create(ib, loc, element, v),
                                   result, full(slab));
                               return success();
                             })))
      return failure();
    return success();
  };
  LogicalResult status =
      buildLoopNest(b, loc, outerShape, runBegin, runEnd, body);
  if (widened)
    memref::DeallocOp::create(b, loc, scratch);
  func::ReturnOp::create(b, loc);
  return status;
}

LogicalResult emitArgmax(ArgmaxOp op, func::FuncOp kernel) {
  Block &entry = kernel.getBody().front();
  OpBuilder b = OpBuilder::atBlockBegin(&entry);
  Location loc = op.getLoc();
  auto args = entry.getArguments();
  Value operand = args[0], result = args[1], begin = args[2], end = args[3];
  RankedTensorType type = op.getOperand().getType();
  Type element = type.getElementType();
  bool floating = isa<FloatType>(element);
  int64_t dim = op.getDim();
  Type i64 = b.getI64Type();
  LogicalResult status = buildLoopNest(
      b, loc, around(op), begin, end, [&](OpBuilder &ib, ValueRange index) {
        Idx x{ib, loc};
        SmallVector<Value> at(index);
        at[dim] = x.c(0);
        Value first = memref::LoadOp::create(ib, loc, operand, at);
        auto loop = scf::ForOp::create(
            ib, loc, x.c(1), x.c(type.getDimSize(dim)), x.c(1),
            ValueRange{x.c(0), first},
            [&](OpBuilder &lb, Location, Value k, ValueRange carried) {
              SmallVector<Value> here(at);
              here[dim] = k;
              Value v = memref::LoadOp::create(lb, loc, operand, here);
              Value best = carried[1];
              Value better;
              if (floating) {
                // Once the best is NaN it stays; a NaN beats any number.
                Value ordered = arith::CmpFOp::create(
                    lb, loc, arith::CmpFPredicate::ORD, best, best);
                Value above = arith::CmpFOp::create(
                    lb, loc, arith::CmpFPredicate::UGT, v, best);
                better = arith::AndIOp::create(lb, loc, ordered, above);
              } else {
                better = arith::CmpIOp::create(
                    lb, loc, arith::CmpIPredicate::sgt, v, best);
              }
              scf::YieldOp::create(
                  lb, loc,
                  ValueRange{
                      arith::SelectOp::create(lb, loc, better, k, carried[0]),
                      arith::SelectOp::create(lb, loc, better, v, best)});
            });
        SmallVector<Value> out;
        for (auto [d, v] : llvm::enumerate(at))
          if (static_cast<int64_t>(d) != dim || op.getKeepdim())
            out.push_back(v);
        memref::StoreOp::create(
            ib, loc,
            arith::IndexCastOp::create(ib, loc, i64, loop.getResult(0)), result,
            out);
        return success();
      });
  func::ReturnOp::create(b, loc);
  return status;
}

} // namespace

int64_t dataKernelOuterExtent(Operation *op) {
  if (auto scatter = dyn_cast<ScatterAddOp>(op))
    return scatter.getAxis() == 0
               ? 1
               : scatter.getOperand().getType().getDimSize(0);
  if (auto argmax = dyn_cast<ArgmaxOp>(op))
    return leading(around(argmax));
  return leading(tensorOf(op->getResult(0)).getShape());
}

LogicalResult emitDataKernel(Operation *op, func::FuncOp kernel) {
  Location loc = op->getLoc();
  if (isa<TakeOp, ScatterAddOp, IotaOp, ArgmaxOp>(op)) {
    Type element =
        tensorOf(isa<TakeOp>(op)                   ? op->getResult(0)
                 : isa<ArgmaxOp, ScatterAddOp>(op) ? op->getOperand(0)
                                                   : op->getResult(0))
            .getElementType();
    if (!isPlainNumeric(element) && !isa<TakeOp>(op))
      return op->emitError("genesis-lower-cpu: '")
             << op->getName() << "' is supported on f32, f64, i32 and i64 only";
  }
  if (auto scatter = dyn_cast<ScatterAddOp>(op))
    return emitScatterAdd(scatter, kernel);
  if (auto argmax = dyn_cast<ArgmaxOp>(op))
    return emitArgmax(argmax, kernel);

  Block &entry = kernel.getBody().front();
  OpBuilder b = OpBuilder::atBlockBegin(&entry);
  auto args = entry.getArguments();
  unsigned numOperands = op->getNumOperands();
  Value result = args[numOperands];
  Value begin = args[args.size() - 2], end = args[args.size() - 1];
  Type element = tensorOf(op->getResult(0)).getElementType();

  LogicalResult status =
      llvm::TypeSwitch<Operation *, LogicalResult>(op)
          .Case([&](TransposeOp t) {
            ArrayRef<int64_t> permutation = t.getPermutation();
            return copyKernel(b, loc, result, begin, end,
                              [&](OpBuilder &ib, ValueRange j) -> Value {
                                SmallVector<Value> k(j.size());
                                for (size_t i = 0; i < j.size(); ++i)
                                  k[permutation[i]] = j[i];
                                return memref::LoadOp::create(ib, loc, args[0],
                                                              k);
                              });
          })
          .Case([&](SliceOp s) {
            return copyKernel(
                b, loc, result, begin, end,
                [&](OpBuilder &ib, ValueRange j) -> Value {
                  Idx x{ib, loc};
                  SmallVector<Value> k;
                  for (size_t d = 0; d < j.size(); ++d)
                    k.push_back(x.add(x.c(s.getStart()[d]),
                                      x.mul(j[d], x.c(s.getStride()[d]))));
                  return memref::LoadOp::create(ib, loc, args[0], k);
                });
          })
          .Case([&](PadOp p) {
            ArrayRef<int64_t> inShape = p.getOperand().getType().getShape();
            return copyKernel(
                b, loc, result, begin, end,
                [&](OpBuilder &ib, ValueRange j) -> Value {
                  Idx x{ib, loc};
                  Value inside =
                      arith::ConstantOp::create(ib, loc, ib.getBoolAttr(true));
                  SmallVector<Value> k;
                  for (size_t d = 0; d < j.size(); ++d) {
                    int64_t step = p.getInterior()[d] + 1, n = inShape[d];
                    Value t = x.sub(j[d], x.c(p.getLow()[d]));
                    Value ok = x.cmp(arith::CmpIPredicate::sge, t, x.c(0));
                    ok = arith::AndIOp::create(ib, loc, ok,
                                               x.cmp(arith::CmpIPredicate::slt,
                                                     t,
                                                     x.c((n - 1) * step + 1)));
                    Value i = t;
                    if (step != 1) {
                      ok = arith::AndIOp::create(
                          ib, loc, ok,
                          x.cmp(arith::CmpIPredicate::eq,
                                arith::RemSIOp::create(ib, loc, t, x.c(step)),
                                x.c(0)));
                      i = arith::DivSIOp::create(ib, loc, t, x.c(step));
                    }
                    inside = arith::AndIOp::create(ib, loc, inside, ok);
                    k.push_back(i);
                  }
                  if (j.empty())
                    return memref::LoadOp::create(ib, loc, args[0],
                                                  ValueRange());
                  return loadIf(
                      ib, loc, inside,
                      [&](OpBuilder &tb) -> Value {
                        return memref::LoadOp::create(tb, loc, args[0], k);
                      },
                      [&](OpBuilder &eb) -> Value {
                        return arith::ConstantOp::create(
                            eb, loc, cast<TypedAttr>(eb.getZeroAttr(element)));
                      },
                      element);
                });
          })
          .Case([&](ConcatOp c) {
            int64_t dim = c.getDim();
            return copyKernel(
                b, loc, result, begin, end,
                [&](OpBuilder &ib, ValueRange j) -> Value {
                  std::function<Value(OpBuilder &, unsigned, int64_t)> from =
                      [&](OpBuilder &fb, unsigned i, int64_t offset) -> Value {
                    Idx x{fb, loc};
                    SmallVector<Value> k(j);
                    k[dim] = x.sub(j[dim], x.c(offset));
                    if (i + 1 == numOperands)
                      return memref::LoadOp::create(fb, loc, args[i], k);
                    int64_t size = tensorOf(c.getInputs()[i]).getDimSize(dim);
                    return loadIf(
                        fb, loc,
                        x.cmp(arith::CmpIPredicate::slt, j[dim],
                              x.c(offset + size)),
                        [&](OpBuilder &tb) -> Value {
                          return memref::LoadOp::create(tb, loc, args[i], k);
                        },
                        [&](OpBuilder &eb) {
                          return from(eb, i + 1, offset + size);
                        },
                        element);
                  };
                  return from(ib, 0, 0);
                });
          })
          .Case([&](BroadcastInDimOp br) {
            RankedTensorType from = br.getOperand().getType();
            return copyKernel(
                b, loc, result, begin, end,
                [&](OpBuilder &ib, ValueRange j) -> Value {
                  Idx x{ib, loc};
                  SmallVector<Value> k;
                  for (auto [i, d] :
                       llvm::enumerate(br.getBroadcastDimensions()))
                    k.push_back(from.getDimSize(i) == 1 ? x.c(0) : j[d]);
                  return memref::LoadOp::create(ib, loc, args[0], k);
                });
          })
          .Case([&](TakeOp t) {
            int64_t axis = t.getAxis();
            int64_t bound = t.getOperand().getType().getDimSize(axis);
            int64_t indexRank = t.getIndices().getType().getRank();
            return copyKernel(
                b, loc, result, begin, end,
                [&](OpBuilder &ib, ValueRange j) -> Value {
                  Idx x{ib, loc};
                  Value row = x.clampedIndex(
                      memref::LoadOp::create(ib, loc, args[1],
                                             j.slice(axis, indexRank)),
                      bound);
                  SmallVector<Value> k(j.take_front(axis));
                  k.push_back(row);
                  for (Value v : j.drop_front(axis + indexRank))
                    k.push_back(v);
                  return memref::LoadOp::create(ib, loc, args[0], k);
                });
          })
          .Case([&](IotaOp iota) {
            int64_t dim = iota.getDim();
            return copyKernel(
                b, loc, result, begin, end,
                [&](OpBuilder &ib, ValueRange j) -> Value {
                  if (!isa<FloatType>(element))
                    return arith::IndexCastOp::create(ib, loc, element, j[dim]);
                  Value i = arith::IndexCastOp::create(ib, loc, ib.getI64Type(),
                                                       j[dim]);
                  return arith::SIToFPOp::create(ib, loc, element, i);
                });
          })
          .Default([&](Operation *) {
            return op->emitError("genesis-lower-cpu: no data kernel for '")
                   << op->getName() << "'";
          });
  func::ReturnOp::create(b, loc);
  return status;
}

} // namespace genesis::cpu
