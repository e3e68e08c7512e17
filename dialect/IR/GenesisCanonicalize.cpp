//===- GenesisCanonicalize.cpp - Canonicalization patterns ----------------===//
//
// Rewrites of genesis ops that the canonicalizer applies beside the folders
// (GenesisOps.cpp).
//
//===----------------------------------------------------------------------===//

#include "dialect/IR/GenesisOps.h"

#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace genesis;

namespace {

/// Where a zero-interior pad places its operand: the one dimension it pads
/// and the operand's range [begin, end) along it; nullopt when it pads more
/// than one dimension or has interior padding.
struct Placement {
  int64_t dim;
  int64_t begin;
  int64_t end;
};

std::optional<Placement> placementOf(PadOp pad) {
  std::optional<Placement> placement;
  auto operand = cast<RankedTensorType>(pad.getOperand().getType());
  for (int64_t d = 0; d < operand.getRank(); ++d) {
    if (pad.getInterior()[d] != 0)
      return std::nullopt;
    if (pad.getLow()[d] == 0 && pad.getHigh()[d] == 0)
      continue;
    if (placement)
      return std::nullopt;
    placement =
        Placement{d, pad.getLow()[d], pad.getLow()[d] + operand.getDimSize(d)};
  }
  return placement;
}

/// `add(pad(a), pad(b))` where the pads place `a` and `b` side by side
/// along one dimension is `pad(concat(a + 0, b + 0))`: each element of the
/// sum is one operand's element plus a padding zero, and `x + 0` is kept
/// so that -0.0 still becomes +0.0 as in the sum. The gradient of slices
/// that tile a tensor (GPT-2's q, k, v of one projection) is then one
/// concatenation instead of padded copies added together.
struct AddOfAdjacentPads : OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AddOp add,
                                PatternRewriter &rewriter) const override {
    auto lhs = add.getLhs().getDefiningOp<PadOp>();
    auto rhs = add.getRhs().getDefiningOp<PadOp>();
    if (!lhs || !rhs)
      return failure();
    std::optional<Placement> a = placementOf(lhs), b = placementOf(rhs);
    if (!a || !b || a->dim != b->dim)
      return failure();
    if (b->end == a->begin) {
      std::swap(lhs, rhs);
      std::swap(a, b);
    }
    if (a->end != b->begin)
      return failure();
    Location loc = add.getLoc();
    auto keepSign = [&](Value value) -> Value {
      auto type = cast<RankedTensorType>(value.getType());
      if (!isa<FloatType>(type.getElementType()))
        return value;
      Value zero = ConstantOp::create(
          rewriter, loc,
          DenseElementsAttr::get(
              type, rewriter.getFloatAttr(type.getElementType(), 0.0)));
      return AddOp::create(rewriter, loc, value, zero);
    };
    Value joined = ConcatOp::create(
        rewriter, loc,
        ValueRange{keepSign(lhs.getOperand()), keepSign(rhs.getOperand())},
        a->dim);
    SmallVector<int64_t> low(lhs.getLow()), high(rhs.getHigh());
    SmallVector<int64_t> interior(low.size(), 0);
    if (llvm::all_of(low, [](int64_t v) { return v == 0; }) &&
        llvm::all_of(high, [](int64_t v) { return v == 0; })) {
      rewriter.replaceOp(add, joined);
      return success();
    }
    rewriter.replaceOpWithNewOp<PadOp>(add, joined, low, high, interior);
    return success();
  }
};

/// A sum over a dimension of size 0 is the sum of nothing: a zero tensor
/// of the result's type, as in PyTorch (kernels then never loop over an
/// empty dimension to produce a non-empty result).
struct SumOverEmptyDimension : OpRewritePattern<ReduceSumOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ReduceSumOp sum,
                                PatternRewriter &rewriter) const override {
    auto operand = cast<RankedTensorType>(sum.getOperand().getType());
    if (llvm::none_of(sum.getDims(), [&](int64_t dim) {
          return operand.getDimSize(dim) == 0;
        }))
      return failure();
    auto type = cast<RankedTensorType>(sum.getType());
    Type element = type.getElementType();
    Attribute zero = isa<FloatType>(element)
                         ? Attribute(rewriter.getFloatAttr(element, 0.0))
                         : Attribute(rewriter.getIntegerAttr(element, 0));
    rewriter.replaceOpWithNewOp<ConstantOp>(sum,
                                            DenseElementsAttr::get(type, zero));
    return success();
  }
};

/// `take(cast(x), i)` is `cast(take(x, i))`: a cast converts each element
/// alone, so gathering first gives the same values. Applied where the take
/// gives no more elements than `x` has, so that an embedding lookup in a
/// 16-bit table (bound widened by Trace::bind_cast) widens the rows it
/// reads instead of the whole table.
struct TakeOfCast : OpRewritePattern<TakeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(TakeOp take,
                                PatternRewriter &rewriter) const override {
    auto castOp = take.getOperand().getDefiningOp<CastOp>();
    if (!castOp)
      return failure();
    Value source = castOp.getOperand();
    auto sourceType = cast<RankedTensorType>(source.getType());
    auto resultType = cast<RankedTensorType>(take.getType());
    if (resultType.getNumElements() > sourceType.getNumElements())
      return failure();
    Value gathered = TakeOp::create(rewriter, take.getLoc(), source,
                                    take.getIndices(), take.getAxis());
    rewriter.replaceOpWithNewOp<CastOp>(take, resultType, gathered);
    return success();
  }
};

/// The slice of `a`'s and `b`'s operand that they form side by side along
/// `dim` (unit strides, whole along every other dimension, `a` ending where
/// `b` starts), or null.
Value joinSlices(PatternRewriter &rewriter, Location loc, Value a, Value b,
                 int64_t dim) {
  auto first = a.getDefiningOp<SliceOp>(), second = b.getDefiningOp<SliceOp>();
  if (!first || !second || first.getOperand() != second.getOperand())
    return {};
  auto source = cast<RankedTensorType>(first.getOperand().getType());
  for (SliceOp slice : {first, second})
    for (int64_t d = 0; d < source.getRank(); ++d)
      if (slice.getStride()[d] != 1 ||
          (d != dim && (slice.getStart()[d] != 0 ||
                        slice.getLimit()[d] != source.getDimSize(d))))
        return {};
  if (first.getLimit()[dim] != second.getStart()[dim])
    return {};
  SmallVector<int64_t> limit(first.getLimit());
  limit[dim] = second.getLimit()[dim];
  return SliceOp::create(rewriter, loc, first.getOperand(), first.getStart(),
                         limit, first.getStride());
}

/// `concat(.., slice(x)[a, b), slice(x)[b, c), ..)` along a dimension,
/// the slices whole along every other one with unit strides, is
/// `concat(.., slice(x)[a, c), ..)`; an input that is a concat along the
/// same dimension with no other use is spliced in first. The gradient of
/// slices that tile a tensor (q, k and v of one projection, differentiated
/// by one packed attention op) is then the tensor itself (SliceOp's fold).
struct ConcatOfAdjacentSlices : OpRewritePattern<ConcatOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ConcatOp concat,
                                PatternRewriter &rewriter) const override {
    int64_t dim = static_cast<int64_t>(concat.getDim());
    bool changed = false;
    SmallVector<Value> inputs;
    for (Value input : concat.getInputs()) {
      auto inner = input.getDefiningOp<ConcatOp>();
      if (inner && inner.getDim() == concat.getDim() && inner->hasOneUse()) {
        llvm::append_range(inputs, inner.getInputs());
        changed = true;
      } else {
        inputs.push_back(input);
      }
    }
    SmallVector<Value> joined;
    for (Value input : inputs) {
      if (!joined.empty())
        if (Value slice = joinSlices(rewriter, concat.getLoc(), joined.back(),
                                     input, dim)) {
          joined.back() = slice;
          changed = true;
          continue;
        }
      joined.push_back(input);
    }
    if (!changed)
      return failure();
    if (joined.size() == 1)
      rewriter.replaceOp(concat, joined.front());
    else
      rewriter.replaceOpWithNewOp<ConcatOp>(concat, joined,
                                            concat.getDimAttr());
    return success();
  }
};

} // namespace

void TakeOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                         MLIRContext *context) {
  patterns.add<TakeOfCast>(context);
}

void ReduceSumOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                              MLIRContext *context) {
  patterns.add<SumOverEmptyDimension>(context);
}

void AddOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                        MLIRContext *context) {
  patterns.add<AddOfAdjacentPads>(context);
}

void ConcatOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                           MLIRContext *context) {
  patterns.add<ConcatOfAdjacentSlices>(context);
}
