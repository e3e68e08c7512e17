//===- GenesisGradients.cpp - Vector-Jacobian products of genesis ops -----===//
//
// The VJP of every differentiable op, in the order of GenesisOps.td. `g` is
// the cotangent of the op's (first) result; each function fills one cotangent
// per operand. Backward ops carry the location "backward:<op>" wrapped around
// the forward op's location, so errors and profiles point at the user's line.
//
// Formulas follow PyTorch's derivatives.yaml where the mathematics leaves a
// choice: relu'(0) = 0; max/min split the gradient evenly on ties; reduce_max
// spreads it evenly over tied maxima; pow's exponent gradient is 0 where the
// base is 0 and the exponent non-negative.
//
//===----------------------------------------------------------------------===//

#include "dialect/IR/GenesisExpansions.h"
#include "dialect/IR/GenesisOps.h"
#include "dialect/IR/Provenance.h"
#include "runtime/support/Gelu.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

#include <cmath>
#include <numeric>

using namespace mlir;
using namespace genesis;

namespace {

/// Builds the arithmetic of a VJP at one location.
struct Emitter {
  OpBuilder &b;
  Location loc;

  Emitter(OpBuilder &builder, Operation *forward)
      : b(builder), loc(NameLoc::get(builder.getStringAttr(
                                         kBackwardLocationPrefix +
                                         forward->getName().getStringRef()),
                                     forward->getLoc())) {}
  Emitter(OpBuilder &builder, Location location) : b(builder), loc(location) {}

  RankedTensorType typeOf(Value v) const {
    return cast<RankedTensorType>(v.getType());
  }
  Value splat(Type like, double value) {
    auto type = cast<RankedTensorType>(like);
    Attribute scalar = b.getFloatAttr(type.getElementType(), value);
    return ConstantOp::create(
        b, loc, cast<ElementsAttr>(DenseElementsAttr::get(type, scalar)));
  }
  Value add(Value x, Value y) { return AddOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return SubOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return MulOp::create(b, loc, x, y); }
  Value div(Value x, Value y) { return DivOp::create(b, loc, x, y); }
  Value neg(Value x) { return NegOp::create(b, loc, x); }
  Value and_(Value x, Value y) { return AndOp::create(b, loc, x, y); }
  Value scale(Value x, double factor) {
    return mul(x, splat(x.getType(), factor));
  }
  Value compare(CompareDirection direction, Value x, Value y) {
    return CompareOp::create(b, loc, direction, x, y);
  }
  Value select(Value condition, Value onTrue, Value onFalse) {
    return SelectOp::create(b, loc, condition, onTrue, onFalse);
  }
  /// `g` where `condition` holds, else 0.
  Value where(Value condition, Value g) {
    return select(condition, g, splat(g.getType(), 0.0));
  }
  Value convert(Value x, Type to) { return CastOp::create(b, loc, to, x); }
  Value reshape(Value x, Type to) {
    return x.getType() == to ? x : ReshapeOp::create(b, loc, to, x);
  }
  Value sum(Value x, ArrayRef<int64_t> dims, bool keepdim) {
    return ReduceSumOp::create(b, loc, x, dims, keepdim);
  }
  /// A keepdim-shaped tensor repeated along its size-1 dimensions to `full`.
  Value expand(Value kept, Type full) {
    if (kept.getType() == full)
      return kept;
    SmallVector<int64_t> dims(typeOf(kept).getRank());
    std::iota(dims.begin(), dims.end(), 0);
    return BroadcastInDimOp::create(b, loc, full, kept, dims);
  }
  /// Sum along `dims` (keepdim) repeated back to the shape of `x`.
  Value sumExpanded(Value x, ArrayRef<int64_t> dims) {
    return expand(sum(x, dims, /*keepdim=*/true), x.getType());
  }
  /// The cotangent of a reduction result, reshaped to keepdim form and
  /// repeated over the reduced dimensions of `operandType`.
  Value unreduce(Value g, RankedTensorType operandType,
                 ArrayRef<int64_t> dims) {
    SmallVector<int64_t> kept(operandType.getShape());
    for (int64_t d : dims)
      kept[d] = 1;
    return expand(reshape(g, operandType.clone(kept)), operandType);
  }
  /// The same row-wise statistic (keepdim) over the last dimension.
  Value meanLast(Value x) {
    int64_t last = typeOf(x).getRank() - 1;
    return scale(sumExpanded(x, {last}),
                 1.0 / static_cast<double>(typeOf(x).getShape().back()));
  }
  /// Sum over every dimension but the last: the gradient of a per-channel
  /// weight broadcast over rows.
  Value sumRows(Value x) {
    SmallVector<int64_t> dims(typeOf(x).getRank() - 1);
    std::iota(dims.begin(), dims.end(), 0);
    return sum(x, dims, /*keepdim=*/false);
  }
  /// A [S, D] table repeated over the leading dimensions of `full`.
  Value expandTable(Value table, Type full) {
    int64_t rank = cast<RankedTensorType>(full).getRank();
    return BroadcastInDimOp::create(b, loc, full, table,
                                    ArrayRef<int64_t>{rank - 2, rank - 1});
  }
  /// A per-channel [C] vector repeated over the rows of `full`.
  Value expandTable1D(Value vector, Type full) {
    int64_t rank = cast<RankedTensorType>(full).getRank();
    return BroadcastInDimOp::create(b, loc, full, vector,
                                    ArrayRef<int64_t>{rank - 1});
  }
  /// rotate_half(x) = concat(-x[..., D/2:], x[..., :D/2]).
  Value rotateHalf(Value x) {
    RankedTensorType type = typeOf(x);
    int64_t rank = type.getRank(), half = type.getShape().back() / 2;
    SmallVector<int64_t> start(rank, 0), limit(type.getShape()),
        stride(rank, 1);
    limit.back() = half;
    Value first = SliceOp::create(b, loc, x, start, limit, stride);
    start.back() = half;
    limit.back() = 2 * half;
    Value second = SliceOp::create(b, loc, x, start, limit, stride);
    return ConcatOp::create(b, loc, ValueRange{neg(second), first},
                            static_cast<uint64_t>(rank - 1));
  }
  Value zerosLike(Value x) { return splat(x.getType(), 0.0); }
};

/// layer_norm's centred input x - mean(x) and r = 1/sqrt(var + eps), each
/// row's statistics over the last dimension. The VJP and expandLayerNorm
/// build them alike, so CSE shares them between forward and backward.
std::pair<Value, Value> layerNormStatistics(Emitter &e, Value x,
                                            double epsilon) {
  Value centered = e.sub(x, e.meanLast(x));
  Value variance = e.meanLast(e.mul(centered, centered));
  Value r = RsqrtOp::create(e.b, e.loc,
                            e.add(variance, e.splat(x.getType(), epsilon)));
  return {centered, r};
}

bool isFloatTensor(Value v) {
  return isa<FloatType>(cast<ShapedType>(v.getType()).getElementType());
}

/// Operand cotangents of a matmul-shaped product C = op(A) op(B).
void matmulVjp(Emitter &e, Value g, Value a, Value b, bool transposeA,
               bool transposeB, SmallVectorImpl<Value> &grads) {
  // dop(A) = dC op(B)^T and dop(B) = op(A)^T dC, transposed back when the
  // operand itself was used transposed.
  grads[0] = transposeA
                 ? MatmulOp::create(e.b, e.loc, b, g, transposeB, true)
                 : MatmulOp::create(e.b, e.loc, g, b, false, !transposeB);
  grads[1] = transposeB
                 ? MatmulOp::create(e.b, e.loc, g, a, true, transposeA)
                 : MatmulOp::create(e.b, e.loc, a, g, !transposeA, false);
}

} // namespace

#define GENESIS_VJP(OP)                                                        \
  void OP::buildVjp(OpBuilder &builder, ArrayRef<Value> resultGrads,           \
                    SmallVectorImpl<Value> &grads)

//===----------------------------------------------------------------------===//
// Elementwise unary
//===----------------------------------------------------------------------===//

GENESIS_VJP(NegOp) { grads[0] = Emitter(builder, *this).neg(resultGrads[0]); }

GENESIS_VJP(AbsOp) {
  Emitter e(builder, *this);
  grads[0] =
      e.mul(resultGrads[0], SignOp::create(builder, e.loc, getOperand()));
}

GENESIS_VJP(ExpOp) {
  grads[0] = Emitter(builder, *this).mul(resultGrads[0], getResult());
}

GENESIS_VJP(LogOp) {
  grads[0] = Emitter(builder, *this).div(resultGrads[0], getOperand());
}

GENESIS_VJP(SqrtOp) {
  Emitter e(builder, *this);
  grads[0] = e.div(e.scale(resultGrads[0], 0.5), getResult());
}

GENESIS_VJP(RsqrtOp) {
  // d(x^-1/2) = -1/2 x^-3/2 = -1/2 y^3.
  Emitter e(builder, *this);
  Value y = getResult();
  grads[0] = e.mul(e.scale(resultGrads[0], -0.5), e.mul(y, e.mul(y, y)));
}

GENESIS_VJP(TanhOp) {
  Emitter e(builder, *this);
  Value y = getResult();
  grads[0] =
      e.mul(resultGrads[0], e.sub(e.splat(y.getType(), 1.0), e.mul(y, y)));
}

GENESIS_VJP(SigmoidOp) {
  Emitter e(builder, *this);
  Value y = getResult();
  grads[0] =
      e.mul(resultGrads[0], e.mul(y, e.sub(e.splat(y.getType(), 1.0), y)));
}

GENESIS_VJP(ReluOp) {
  Emitter e(builder, *this);
  Value x = getOperand();
  grads[0] = e.where(e.compare(CompareDirection::gt, x, e.zerosLike(x)),
                     resultGrads[0]);
}

GENESIS_VJP(ErfOp) {
  Emitter e(builder, *this);
  Value x = getOperand();
  Value gaussian = ExpOp::create(builder, e.loc, e.neg(e.mul(x, x)));
  grads[0] = e.mul(resultGrads[0], e.scale(gaussian, 2.0 / std::sqrt(M_PI)));
}

GENESIS_VJP(GeluOp) {
  Emitter e(builder, *this);
  Value x = getOperand(), one = e.splat(x.getType(), 1.0), derivative;
  if (getApproximate() == GeluApproximation::tanh) {
    // y = x/2 (1 + t), t = tanh(c (x + k x^3)):
    // y' = (1 + t)/2 + x/2 (1 - t^2) c (1 + 3k x^2).
    const double c = kGeluTanhScale, k = kGeluTanhCubic;
    Value x2 = e.mul(x, x);
    Value inner = e.scale(e.add(x, e.scale(e.mul(x2, x), k)), c);
    Value t = TanhOp::create(builder, e.loc, inner);
    Value dInner = e.scale(e.add(one, e.scale(x2, 3 * k)), c);
    derivative =
        e.add(e.scale(e.add(one, t), 0.5),
              e.mul(e.scale(x, 0.5), e.mul(e.sub(one, e.mul(t, t)), dInner)));
  } else {
    // y = x Phi(x): y' = Phi(x) + x phi(x).
    Value cdf = e.scale(
        e.add(one, ErfOp::create(builder, e.loc, e.scale(x, M_SQRT1_2))), 0.5);
    Value pdf =
        e.scale(ExpOp::create(builder, e.loc, e.scale(e.mul(x, x), -0.5)),
                1.0 / std::sqrt(2.0 * M_PI));
    derivative = e.add(cdf, e.mul(x, pdf));
  }
  grads[0] = e.mul(resultGrads[0], derivative);
}

GENESIS_VJP(SiluOp) {
  // y = x s(x): y' = s (1 + x (1 - s)).
  Emitter e(builder, *this);
  Value x = getOperand(), one = e.splat(x.getType(), 1.0);
  Value s = SigmoidOp::create(builder, e.loc, x);
  grads[0] =
      e.mul(resultGrads[0], e.mul(s, e.add(one, e.mul(x, e.sub(one, s)))));
}

GENESIS_VJP(SinOp) {
  Emitter e(builder, *this);
  grads[0] = e.mul(resultGrads[0], CosOp::create(builder, e.loc, getOperand()));
}

GENESIS_VJP(CosOp) {
  Emitter e(builder, *this);
  grads[0] =
      e.neg(e.mul(resultGrads[0], SinOp::create(builder, e.loc, getOperand())));
}

//===----------------------------------------------------------------------===//
// Elementwise binary
//===----------------------------------------------------------------------===//

GENESIS_VJP(AddOp) { grads[0] = grads[1] = resultGrads[0]; }

GENESIS_VJP(SubOp) {
  grads[0] = resultGrads[0];
  grads[1] = Emitter(builder, *this).neg(resultGrads[0]);
}

GENESIS_VJP(MulOp) {
  Emitter e(builder, *this);
  grads[0] = e.mul(resultGrads[0], getRhs());
  grads[1] = e.mul(resultGrads[0], getLhs());
}

GENESIS_VJP(DivOp) {
  // d(a/b) = da/b - a/b^2 db = (da - y db)/b.
  Emitter e(builder, *this);
  Value gOverB = e.div(resultGrads[0], getRhs());
  grads[0] = gOverB;
  grads[1] = e.neg(e.mul(gOverB, getResult()));
}

GENESIS_VJP(PowOp) {
  Emitter e(builder, *this);
  Value a = getLhs(), p = getRhs(), g = resultGrads[0];
  Value zero = e.zerosLike(a), one = e.splat(a.getType(), 1.0);
  grads[0] =
      e.mul(g, e.mul(p, PowOp::create(builder, e.loc, a, e.sub(p, one))));
  Value logA = LogOp::create(builder, e.loc, a);
  Value masked = e.and_(e.compare(CompareDirection::eq, a, zero),
                        e.compare(CompareDirection::ge, p, zero));
  grads[1] = e.select(masked, zero, e.mul(g, e.mul(getResult(), logA)));
}

/// Gradient share of `mine` in max/min: 1 when it wins, 1/2 on a tie.
static Value extremumShare(Emitter &e, CompareDirection wins, Value mine,
                           Value other) {
  Value one = e.splat(mine.getType(), 1.0), half = e.splat(mine.getType(), 0.5);
  return e.select(e.compare(wins, mine, other), one,
                  e.select(e.compare(CompareDirection::eq, mine, other), half,
                           e.zerosLike(mine)));
}

GENESIS_VJP(MaxOp) {
  Emitter e(builder, *this);
  grads[0] = e.mul(resultGrads[0],
                   extremumShare(e, CompareDirection::gt, getLhs(), getRhs()));
  grads[1] = e.mul(resultGrads[0],
                   extremumShare(e, CompareDirection::gt, getRhs(), getLhs()));
}

GENESIS_VJP(MinOp) {
  Emitter e(builder, *this);
  grads[0] = e.mul(resultGrads[0],
                   extremumShare(e, CompareDirection::lt, getLhs(), getRhs()));
  grads[1] = e.mul(resultGrads[0],
                   extremumShare(e, CompareDirection::lt, getRhs(), getLhs()));
}

GENESIS_VJP(SelectOp) {
  Emitter e(builder, *this);
  Value g = resultGrads[0], zero = e.zerosLike(g);
  grads[1] = e.select(getCondition(), g, zero);
  grads[2] = e.select(getCondition(), zero, g);
}

GENESIS_VJP(CastOp) {
  if (isFloatTensor(getOperand()) && isFloatTensor(getResult()))
    grads[0] =
        Emitter(builder, *this).convert(resultGrads[0], getOperand().getType());
}

//===----------------------------------------------------------------------===//
// Shape ops
//===----------------------------------------------------------------------===//

GENESIS_VJP(ReshapeOp) {
  grads[0] =
      Emitter(builder, *this).reshape(resultGrads[0], getOperand().getType());
}

GENESIS_VJP(TransposeOp) {
  SmallVector<int64_t> inverse(getPermutation().size());
  for (auto [i, p] : llvm::enumerate(getPermutation()))
    inverse[p] = static_cast<int64_t>(i);
  Emitter e(builder, *this);
  grads[0] = TransposeOp::create(builder, e.loc, resultGrads[0], inverse);
}

GENESIS_VJP(SliceOp) {
  // Scatter the cotangent back: pad it with zeros before, between (stride)
  // and after the taken elements.
  RankedTensorType from = getOperand().getType(), to = getType();
  SmallVector<int64_t> low, high, interior;
  for (int64_t d = 0; d < from.getRank(); ++d) {
    int64_t taken = to.getDimSize(d), start = getStart()[d],
            stride = getStride()[d];
    int64_t lastTaken = taken == 0 ? start - 1 : start + (taken - 1) * stride;
    low.push_back(taken == 0 ? from.getDimSize(d) : start);
    high.push_back(taken == 0 ? 0 : from.getDimSize(d) - 1 - lastTaken);
    interior.push_back(stride - 1);
  }
  Emitter e(builder, *this);
  grads[0] = PadOp::create(builder, e.loc, resultGrads[0], low, high, interior);
}

GENESIS_VJP(PadOp) {
  RankedTensorType from = getOperand().getType();
  SmallVector<int64_t> start(getLow()), limit, stride;
  for (int64_t d = 0; d < from.getRank(); ++d) {
    int64_t step = getInterior()[d] + 1;
    limit.push_back(start[d] + (from.getDimSize(d) - 1) * step + 1);
    stride.push_back(step);
    if (from.getDimSize(d) == 0)
      limit.back() = start[d];
  }
  Emitter e(builder, *this);
  grads[0] =
      SliceOp::create(builder, e.loc, resultGrads[0], start, limit, stride);
}

GENESIS_VJP(ConcatOp) {
  Emitter e(builder, *this);
  RankedTensorType type = getType();
  int64_t dim = getDim(), offset = 0;
  for (auto [i, input] : llvm::enumerate(getInputs())) {
    SmallVector<int64_t> start(type.getRank(), 0), limit(type.getShape()),
        stride(type.getRank(), 1);
    int64_t size = cast<RankedTensorType>(input.getType()).getDimSize(dim);
    start[dim] = offset;
    limit[dim] = offset + size;
    offset += size;
    grads[i] =
        SliceOp::create(builder, e.loc, resultGrads[0], start, limit, stride);
  }
}

GENESIS_VJP(BroadcastInDimOp) {
  // Sum over the result dimensions the operand was repeated along, then
  // restore the operand's shape (its size-1 dimensions).
  RankedTensorType from = getOperand().getType(), to = getType();
  ArrayRef<int64_t> mapped = getBroadcastDimensions();
  SmallVector<int64_t> repeated;
  for (int64_t d = 0; d < to.getRank(); ++d) {
    auto it = llvm::find(mapped, d);
    if (it == mapped.end() ||
        from.getDimSize(it - mapped.begin()) != to.getDimSize(d))
      repeated.push_back(d);
  }
  Emitter e(builder, *this);
  grads[0] =
      e.reshape(e.sum(resultGrads[0], repeated, /*keepdim=*/false), from);
}

GENESIS_VJP(TakeOp) {
  // Rows gathered several times receive the sum of their cotangents.
  Emitter e(builder, *this);
  grads[0] = ScatterAddOp::create(builder, e.loc, e.zerosLike(getOperand()),
                                  getIndices(), resultGrads[0], getAxis());
}

GENESIS_VJP(ScatterAddOp) {
  Emitter e(builder, *this);
  grads[0] = resultGrads[0];
  grads[2] =
      TakeOp::create(builder, e.loc, resultGrads[0], getIndices(), getAxis());
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

GENESIS_VJP(ReduceSumOp) {
  grads[0] = Emitter(builder, *this)
                 .unreduce(resultGrads[0], getOperand().getType(), getDims());
}

/// reduce_max/min: the cotangent goes to the extremal elements, split evenly
/// among ties.
static void extremumReduceVjp(Operation *op, OpBuilder &builder, Value g,
                              ArrayRef<int64_t> dims,
                              SmallVectorImpl<Value> &grads) {
  Emitter e(builder, op);
  Value x = op->getOperand(0), y = op->getResult(0);
  auto type = cast<RankedTensorType>(x.getType());
  Value hit = e.convert(
      e.compare(CompareDirection::eq, x, e.unreduce(y, type, dims)), type);
  Value count = e.sumExpanded(hit, dims);
  grads[0] = e.div(e.mul(e.unreduce(g, type, dims), hit), count);
}

GENESIS_VJP(ReduceMaxOp) {
  extremumReduceVjp(*this, builder, resultGrads[0], getDims(), grads);
}

GENESIS_VJP(ReduceMinOp) {
  extremumReduceVjp(*this, builder, resultGrads[0], getDims(), grads);
}

//===----------------------------------------------------------------------===//
// Compound ops
//===----------------------------------------------------------------------===//

GENESIS_VJP(MatmulOp) {
  Emitter e(builder, *this);
  matmulVjp(e, resultGrads[0], getLhs(), getRhs(), getTransposeLhs(),
            getTransposeRhs(), grads);
}

GENESIS_VJP(SoftmaxOp) {
  // dx = y (g - sum(g y)).
  Emitter e(builder, *this);
  Value y = getResult(), g = resultGrads[0];
  int64_t dim = getDim();
  grads[0] = e.mul(y, e.sub(g, e.sumExpanded(e.mul(g, y), {dim})));
}

GENESIS_VJP(LogSoftmaxOp) {
  // dx = g - softmax(x) sum(g) with softmax(x) = exp(y).
  Emitter e(builder, *this);
  Value g = resultGrads[0];
  int64_t dim = getDim();
  grads[0] = e.sub(g, e.mul(ExpOp::create(builder, e.loc, getResult()),
                            e.sumExpanded(g, {dim})));
}

GENESIS_VJP(LayerNormOp) {
  // xhat = (x - mean) r, r = 1/sqrt(var + eps); with h = g w:
  // dx = r (h - mean(h) - xhat mean(h xhat)), dw = sum(g xhat), db = sum(g).
  Emitter e(builder, *this);
  Value x = getOperand(), g = resultGrads[0];
  auto [centered, r] =
      layerNormStatistics(e, x, getEpsilon().convertToDouble());
  Value xhat = e.mul(centered, r);
  Value h =
      getWeight() ? e.mul(g, e.expandTable1D(getWeight(), x.getType())) : g;
  grads[0] = e.mul(r, e.sub(e.sub(h, e.meanLast(h)),
                            e.mul(xhat, e.meanLast(e.mul(h, xhat)))));
  if (getWeight())
    grads[1] = e.sumRows(e.mul(g, xhat));
  if (getBias())
    grads[getWeight() ? 2 : 1] = e.sumRows(g);
}

namespace {
/// 1/sqrt(mean(x^2) + eps) along the last dimension, broadcast to x's shape.
Value rmsNormInverse(Emitter &e, Value x, double epsilon) {
  return RsqrtOp::create(
      e.b, e.loc,
      e.add(e.meanLast(e.mul(x, x)), e.splat(x.getType(), epsilon)));
}
} // namespace

GENESIS_VJP(RmsNormOp) {
  // xhat = x r, r = 1/sqrt(mean(x^2) + eps); with h = g w:
  // dx = r (h - xhat mean(h xhat)), dw = sum(g xhat).
  Emitter e(builder, *this);
  Value x = getOperand(), g = resultGrads[0];
  Value r = rmsNormInverse(e, x, getEpsilon().convertToDouble());
  Value xhat = e.mul(x, r);
  Value h = e.mul(g, e.expandTable1D(getWeight(), x.getType()));
  grads[0] = e.mul(r, e.sub(h, e.mul(xhat, e.meanLast(e.mul(h, xhat)))));
  grads[1] = e.sumRows(e.mul(g, xhat));
}

GENESIS_VJP(RopeOp) {
  // y = x cos + R(x) sin with R^T = -R: dx = g cos - R(g sin).
  Emitter e(builder, *this);
  Value x = getOperand(), g = resultGrads[0];
  Value cos = e.expandTable(getCos(), x.getType()),
        sin = e.expandTable(getSin(), x.getType());
  grads[0] = e.sub(e.mul(g, cos), e.rotateHalf(e.mul(g, sin)));
  auto sumToTable = [&](Value full) {
    int64_t rank = e.typeOf(full).getRank();
    SmallVector<int64_t> leading(rank - 2);
    std::iota(leading.begin(), leading.end(), 0);
    return e.sum(full, leading, /*keepdim=*/false);
  };
  grads[1] = sumToTable(e.mul(g, x));
  grads[2] = sumToTable(e.mul(g, e.rotateHalf(x)));
}

GENESIS_VJP(AttentionOp) {
  // One op recomputes the probabilities and returns dq, dk, dv (summing the
  // query heads that share a key/value head). The additive mask gets no
  // cotangent here: genesis-autodiff decomposes an attention whose mask
  // depends on a differentiated argument before it differentiates.
  Emitter e(builder, *this);
  auto backward = AttentionGradOp::create(
      builder, e.loc, getQuery(), getKey(), getValue(), getMask(), getResult(),
      resultGrads[0], getCausalAttr(), getScaleAttr());
  grads[0] = backward.getQueryGrad();
  grads[1] = backward.getKeyGrad();
  grads[2] = backward.getValueGrad();
}

GENESIS_VJP(CrossEntropyOp) {
  Emitter e(builder, *this);
  grads[0] = CrossEntropyGradOp::create(
      builder, e.loc, getLogits(), getLabels(), resultGrads[0],
      getIgnoreIndexAttr(), getLabelSmoothingAttr(), getReductionAttr());
}

GENESIS_VJP(DropoutOp) {
  // The counter-based mask is recomputed from the same seed and offset.
  Emitter e(builder, *this);
  grads[0] = DropoutOp::create(builder, e.loc, resultGrads[0], getSeed(),
                               getProbabilityAttr(), getOffsetAttr());
}

GENESIS_VJP(GlobalNormOp) {
  // d||x|| / dx = x / ||x||, and 0 where ||x|| = 0 (the subgradient
  // PyTorch's norm takes there, instead of 0/0).
  Emitter e(builder, *this);
  Value norm = getResult();
  Value zero = e.splat(norm.getType(), 0.0);
  Value isZero = e.compare(CompareDirection::eq, norm, zero);
  Value factor = e.select(isZero, zero, e.div(resultGrads[0], norm));
  for (auto [i, input] : llvm::enumerate(getInputs())) {
    Value perElement = BroadcastInDimOp::create(
        builder, e.loc,
        e.typeOf(input).clone(e.typeOf(factor).getElementType()), factor,
        ArrayRef<int64_t>{});
    grads[i] = e.mul(input, e.convert(perElement, input.getType()));
  }
}

GENESIS_VJP(AllReduceOp) {
  Emitter e(builder, *this);
  grads[0] = AllReduceOp::create(builder, e.loc, getKind(), resultGrads[0]);
}

Value genesis::expandLayerNorm(OpBuilder &builder, LayerNormOp norm) {
  Emitter e(builder, norm.getLoc());
  Value x = norm.getOperand();
  auto [centered, r] =
      layerNormStatistics(e, x, norm.getEpsilon().convertToDouble());
  Value y = e.mul(centered, r);
  if (norm.getWeight())
    y = e.mul(y, e.expandTable1D(norm.getWeight(), x.getType()));
  if (norm.getBias())
    y = e.add(y, e.expandTable1D(norm.getBias(), x.getType()));
  return y;
}

Value genesis::expandRmsNorm(OpBuilder &builder, RmsNormOp norm) {
  Emitter e(builder, norm.getLoc());
  Value x = norm.getOperand();
  Value r = rmsNormInverse(e, x, norm.getEpsilon().convertToDouble());
  return e.mul(e.mul(x, r), e.expandTable1D(norm.getWeight(), x.getType()));
}
