//===- DecomposeAttention.cpp - attention as batched GEMMs and row ops ----===//
//
// Implements genesis-decompose-attention; Passes.td states the algorithm.
//
//===----------------------------------------------------------------------===//

#include "dialect/IR/GenesisOps.h"
#include "dialect/IR/Provenance.h"
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"

#include "llvm/Support/Debug.h"
#include <cmath>

#define DEBUG_TYPE "genesis-decompose-attention"

namespace genesis {
#define GEN_PASS_DEF_GENESISDECOMPOSEATTENTION
#include "passes/Passes.h.inc"
} // namespace genesis

using namespace mlir;
using namespace genesis;

namespace {

/// Builds the decomposition at one op's place.
struct Decomposer {
  OpBuilder &b;
  Location loc;
  Type element;
  int64_t batch, heads, kvHeads, queries, keys, depth, valueDepth;

  RankedTensorType tensor(ArrayRef<int64_t> shape, Type type = {}) {
    return RankedTensorType::get(shape, type ? type : element);
  }
  Value reshape(Value x, ArrayRef<int64_t> shape) {
    auto from = cast<RankedTensorType>(x.getType());
    return ReshapeOp::create(b, loc, tensor(shape, from.getElementType()), x);
  }
  Value splat(RankedTensorType type, double value) {
    Type e = type.getElementType();
    Attribute scalar =
        isa<FloatType>(e)
            ? Attribute(b.getFloatAttr(e, value))
            : Attribute(b.getIntegerAttr(e, static_cast<int64_t>(value)));
    return ConstantOp::create(b, loc, DenseElementsAttr::get(type, scalar));
  }
  Value like(Value x, double value) {
    return splat(cast<RankedTensorType>(x.getType()), value);
  }
  /// [B, H, S, 1] broadcast along the last dimension to [B, H, S, T].
  Value widen(Value x, int64_t last) {
    auto from = cast<RankedTensorType>(x.getType());
    SmallVector<int64_t> shape(from.getShape());
    shape.back() = last;
    return BroadcastInDimOp::create(b, loc, tensor(shape), x,
                                    ArrayRef<int64_t>{0, 1, 2, 3});
  }
  /// Query rows of one key/value head are contiguous ([B, Hq, S, D] is
  /// [B, Hkv, group, S, D]), so GQA is a batched GEMM over B * Hkv.
  Value groupedQueries(Value x, int64_t width) {
    return reshape(x, {batch * kvHeads, heads / kvHeads * queries, width});
  }
  Value perKvHead(Value x, int64_t rows, int64_t width) {
    return reshape(x, {batch * kvHeads, rows, width});
  }

  /// Whether a key/value head has so few query rows (a decode step's one
  /// query per head of its group) that its products run as row reductions:
  /// cuBLASLt gives a [7, 1024] x [1024, 64] GEMM one tile per batch, and
  /// Qwen2.5-0.5B's decode step spent 26 us in each.
  bool fewQueryRows() const {
    return heads / kvHeads * queries <= kMaxRowsForReductions;
  }
  static constexpr int64_t kMaxRowsForReductions = 16;

  /// [N, M, K] x [N, L, K]^T -> [N, M, L] as a row reduction over K of the
  /// broadcast product: one warp per output.
  Value productOverLastDim(Value a, Value c) {
    auto at = cast<RankedTensorType>(a.getType());
    auto ct = cast<RankedTensorType>(c.getType());
    int64_t n = at.getDimSize(0), m = at.getDimSize(1), k = at.getDimSize(2),
            l = ct.getDimSize(1);
    RankedTensorType wide = tensor({n, m, l, k});
    Value product = MulOp::create(
        b, loc,
        BroadcastInDimOp::create(b, loc, wide, a, ArrayRef<int64_t>{0, 1, 3}),
        BroadcastInDimOp::create(b, loc, wide, c, ArrayRef<int64_t>{0, 2, 3}));
    return ReduceSumOp::create(b, loc, product, ArrayRef<int64_t>{3}, false);
  }

  /// `a` [N, M, K] times `c` [N, K, L] (batched): a GEMM, or with few query
  /// rows the row reduction of `a` against `c` transposed.
  Value timesPerKvHead(Value a, Value c) {
    if (!fewQueryRows())
      return MatmulOp::create(b, loc, a, c, false, false);
    auto ct = cast<RankedTensorType>(c.getType());
    Value transposed = TransposeOp::create(
        b, loc,
        tensor({ct.getDimSize(0), ct.getDimSize(2), ct.getDimSize(1)},
               ct.getElementType()),
        c, ArrayRef<int64_t>{0, 2, 1});
    return productOverLastDim(a, transposed);
  }

  /// softmax(scale q k^T + mask, causal) as [B, Hq, S, T]; rows that see no
  /// key are all zero (the evaluator's rule).
  Value probabilities(Value q, Value k, Value mask, bool causal, double scale) {
    Value scores =
        fewQueryRows()
            ? productOverLastDim(groupedQueries(q, depth),
                                 perKvHead(k, keys, depth))
            : MatmulOp::create(b, loc, groupedQueries(q, depth),
                               perKvHead(k, keys, depth), false, true);
    // Scaled after the reshape: the scale then fuses with the mask and the
    // softmax (and with genesis-amp, so does the GEMM result's cast).
    scores = reshape(scores, {batch, heads, queries, keys});
    scores = MulOp::create(b, loc, scores, like(scores, scale));
    if (mask)
      scores = AddOp::create(b, loc, scores, mask);
    if (causal) {
      // Query i sees keys j <= i + T - S.
      RankedTensorType grid = tensor({queries, keys}, b.getI64Type());
      Value row = IotaOp::create(b, loc, grid, 0);
      Value column = IotaOp::create(b, loc, grid, 1);
      Value limit = AddOp::create(
          b, loc, row, splat(grid, static_cast<double>(keys - queries)));
      Value visible =
          CompareOp::create(b, loc, CompareDirection::le, column, limit);
      visible = BroadcastInDimOp::create(
          b, loc, tensor({batch, heads, queries, keys}, b.getI1Type()), visible,
          ArrayRef<int64_t>{2, 3});
      scores =
          SelectOp::create(b, loc, visible, scores, like(scores, -INFINITY));
    }
    Value max = ReduceMaxOp::create(b, loc, scores, ArrayRef<int64_t>{3}, true);
    Value empty = CompareOp::create(b, loc, CompareDirection::eq, max,
                                    like(max, -INFINITY));
    max = SelectOp::create(b, loc, empty, like(max, 0.0), max);
    Value exps =
        ExpOp::create(b, loc, SubOp::create(b, loc, scores, widen(max, keys)));
    Value sum = ReduceSumOp::create(b, loc, exps, ArrayRef<int64_t>{3}, true);
    Value positive =
        CompareOp::create(b, loc, CompareDirection::gt, sum, like(sum, 0.0));
    sum = SelectOp::create(b, loc, positive, sum, like(sum, 1.0));
    return DivOp::create(b, loc, exps, widen(sum, keys));
  }
};

Decomposer decomposerFor(OpBuilder &b, Operation *op, Value q, Value k,
                         Value v) {
  auto qt = cast<RankedTensorType>(q.getType());
  auto kt = cast<RankedTensorType>(k.getType());
  auto vt = cast<RankedTensorType>(v.getType());
  return Decomposer{b,
                    memberLocation(op),
                    qt.getElementType(),
                    qt.getDimSize(0),
                    qt.getDimSize(1),
                    kt.getDimSize(1),
                    qt.getDimSize(2),
                    kt.getDimSize(2),
                    qt.getDimSize(3),
                    vt.getDimSize(3)};
}

} // namespace

void genesis::decomposeAttention(AttentionOp op) {
  OpBuilder b(op);
  Decomposer d =
      decomposerFor(b, op, op.getQuery(), op.getKey(), op.getValue());
  Value p = d.probabilities(op.getQuery(), op.getKey(), op.getMask(),
                            op.getCausal(), op.getScale().convertToDouble());
  Value out =
      d.timesPerKvHead(d.groupedQueries(p, d.keys),
                       d.perKvHead(op.getValue(), d.keys, d.valueDepth));
  op.getResult().replaceAllUsesWith(
      d.reshape(out, {d.batch, d.heads, d.queries, d.valueDepth}));
  op.erase();
}

namespace {

/// dV = P^T dO, dS = P (dP - rowsum(P dP)) with dP = dO V^T,
/// dQ = scale dS K, dK = scale dS^T Q: the grouped layout sums dK and dV
/// over the query heads of each key/value head inside the GEMMs.
void decompose(AttentionGradOp op) {
  OpBuilder b(op);
  Location loc = memberLocation(op);
  Decomposer d =
      decomposerFor(b, op, op.getQuery(), op.getKey(), op.getValue());
  double scale = op.getScale().convertToDouble();
  Value p = d.probabilities(op.getQuery(), op.getKey(), op.getMask(),
                            op.getCausal(), scale);
  Value groupedP = d.groupedQueries(p, d.keys);
  Value groupedGrad = d.groupedQueries(op.getOutGrad(), d.valueDepth);
  Value valueGrad =
      MatmulOp::create(b, loc, groupedP, groupedGrad, true, false);
  Value pGrad = MatmulOp::create(
      b, loc, groupedGrad, d.perKvHead(op.getValue(), d.keys, d.valueDepth),
      false, true);
  pGrad = d.reshape(pGrad, {d.batch, d.heads, d.queries, d.keys});
  // rowsum(dO * O) with O recomputed, as the evaluator does: it equals
  // rowsum(P * dP), which needs no further GEMM.
  Value rowDot = ReduceSumOp::create(b, loc, MulOp::create(b, loc, p, pGrad),
                                     ArrayRef<int64_t>{3}, true);
  Value scoreGrad = MulOp::create(
      b, loc, p, SubOp::create(b, loc, pGrad, d.widen(rowDot, d.keys)));
  Value groupedScoreGrad = d.groupedQueries(scoreGrad, d.keys);
  Value queryGrad =
      MatmulOp::create(b, loc, groupedScoreGrad,
                       d.perKvHead(op.getKey(), d.keys, d.depth), false, false);
  queryGrad = MulOp::create(b, loc, queryGrad, d.like(queryGrad, scale));
  Value keyGrad =
      MatmulOp::create(b, loc, groupedScoreGrad,
                       d.groupedQueries(op.getQuery(), d.depth), true, false);
  keyGrad = MulOp::create(b, loc, keyGrad, d.like(keyGrad, scale));
  op.getQueryGrad().replaceAllUsesWith(
      d.reshape(queryGrad, {d.batch, d.heads, d.queries, d.depth}));
  op.getKeyGrad().replaceAllUsesWith(
      d.reshape(keyGrad, {d.batch, d.kvHeads, d.keys, d.depth}));
  op.getValueGrad().replaceAllUsesWith(
      d.reshape(valueGrad, {d.batch, d.kvHeads, d.keys, d.valueDepth}));
  op.erase();
}

struct GenesisDecomposeAttentionPass
    : public genesis::impl::GenesisDecomposeAttentionBase<
          GenesisDecomposeAttentionPass> {
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (isa<AttentionOp, AttentionGradOp>(op))
        ops.push_back(op);
    });
    LLVM_DEBUG(llvm::dbgs() << ops.size() << " attention ops\n");
    for (Operation *op : ops) {
      if (auto attention = dyn_cast<AttentionOp>(op))
        decomposeAttention(attention);
      else
        decompose(cast<AttentionGradOp>(op));
    }
  }
};

} // namespace
