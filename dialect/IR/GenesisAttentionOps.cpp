//===- GenesisAttentionOps.cpp - Shape rules of the attention ops ---------===//
//
// genesis.attention, its gradient and their fused forms share one shape
// rule; the fused forms add the f32 log-sum-exp [B, Hq, S] and require one
// head dimension for query, key and value (cuDNN's flash attention); the
// packed forms read all three from one token-major tensor.
//
//===----------------------------------------------------------------------===//

#include "dialect/IR/GenesisOps.h"
#include "dialect/IR/ShapeRule.h"

using namespace mlir;
using namespace genesis;

/// Shape rule of genesis.attention, shared with genesis.attention_grad and
/// the fused and decode forms. With `narrowCache`, key and value (of one
/// type) may be a 16-bit float where the query is f32.
static FailureOr<RankedTensorType>
inferAttentionType(const ShapeRule &rule, Value query, Value key, Value value,
                   Value mask, bool narrowCache = false) {
  auto q = rule.ranked(query, "query");
  auto k = rule.ranked(key, "key");
  auto v = rule.ranked(value, "value");
  if (failed(q) || failed(k) || failed(v))
    return failure();
  if (q->getRank() != 4 || k->getRank() != 4 || v->getRank() != 4) {
    (void)rule.fail("query, key and value must have rank 4 ([B, H, S, D]), "
                    "got ",
                    *q, ", ", *k, " and ", *v);
    return failure();
  }
  if (narrowCache) {
    if (k->getElementType() != v->getElementType() ||
        (k->getElementType() != q->getElementType() &&
         !isa<BFloat16Type, Float16Type>(k->getElementType()))) {
      (void)rule.fail("key and value must share an element type, the "
                      "query's or bf16 or f16; got ",
                      *k, " and ", *v);
      return failure();
    }
  } else if (q->getElementType() != k->getElementType() ||
             q->getElementType() != v->getElementType()) {
    (void)rule.fail("query, key and value must share an element type");
    return failure();
  }
  int64_t batch = q->getDimSize(0), heads = q->getDimSize(1),
          queries = q->getDimSize(2), kvHeads = k->getDimSize(1),
          keys = k->getDimSize(2);
  if (k->getDimSize(0) != batch || v->getDimSize(0) != batch ||
      v->getDimSize(1) != kvHeads || v->getDimSize(2) != keys) {
    (void)rule.fail("key ", *k, " and value ", *v,
                    " must agree on batch, heads and length with each other "
                    "and on batch with query ",
                    *q);
    return failure();
  }
  if (kvHeads == 0 || heads % kvHeads != 0) {
    (void)rule.fail("query heads (", heads,
                    ") must be a multiple of key/value heads (", kvHeads, ")");
    return failure();
  }
  if (k->getDimSize(3) != q->getDimSize(3)) {
    (void)rule.fail("query and key head dimensions differ: ", q->getDimSize(3),
                    " vs ", k->getDimSize(3));
    return failure();
  }
  if (mask) {
    auto expected = RankedTensorType::get({batch, heads, queries, keys},
                                          q->getElementType());
    if (mask.getType() != expected) {
      (void)rule.fail("mask must have type ", expected, ", got ",
                      mask.getType());
      return failure();
    }
  }
  return RankedTensorType::get({batch, heads, queries, v->getDimSize(3)},
                               q->getElementType());
}

/// Every attention op's scale multiplies scores: a NaN or infinite one makes
/// every probability NaN, so it is refused where it is written.
static LogicalResult checkScale(const ShapeRule &rule, const APFloat &scale) {
  if (!scale.isFinite())
    return rule.fail("scale must be finite, got ", scale.convertToDouble());
  return success();
}

LogicalResult AttentionOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  if (failed(
          checkScale(ShapeRule(loc, getOperationName()), adaptor.getScale())))
    return failure();
  auto type = inferAttentionType(ShapeRule(loc, getOperationName()),
                                 adaptor.getQuery(), adaptor.getKey(),
                                 adaptor.getValue(), adaptor.getMask());
  if (failed(type))
    return failure();
  types.push_back(*type);
  return success();
}

LogicalResult
DecodeAttentionOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                    Adaptor adaptor,
                                    SmallVectorImpl<Type> &types) {
  if (failed(
          checkScale(ShapeRule(loc, getOperationName()), adaptor.getScale())))
    return failure();
  auto type = inferAttentionType(ShapeRule(loc, getOperationName()),
                                 adaptor.getQuery(), adaptor.getKey(),
                                 adaptor.getValue(), adaptor.getMask(),
                                 /*narrowCache=*/true);
  if (failed(type))
    return failure();
  types.push_back(*type);
  return success();
}

LogicalResult AttentionGradOp::inferReturnTypes(MLIRContext *,
                                                std::optional<Location> loc,
                                                Adaptor adaptor,
                                                SmallVectorImpl<Type> &types) {
  if (failed(
          checkScale(ShapeRule(loc, getOperationName()), adaptor.getScale())))
    return failure();
  ShapeRule rule(loc, getOperationName());
  auto type = inferAttentionType(rule, adaptor.getQuery(), adaptor.getKey(),
                                 adaptor.getValue(), adaptor.getMask());
  if (failed(type))
    return failure();
  if (adaptor.getOut().getType() != *type ||
      adaptor.getOutGrad().getType() != *type)
    return rule.fail("out and out_grad must have the attention result type ",
                     *type, ", got ", adaptor.getOut().getType(), " and ",
                     adaptor.getOutGrad().getType());
  types.append({adaptor.getQuery().getType(), adaptor.getKey().getType(),
                adaptor.getValue().getType()});
  return success();
}

/// The fused ops' extra rules: one head dimension, and the log-sum-exp type.
static FailureOr<RankedTensorType>
inferFusedAttentionType(const ShapeRule &rule, Value query, Value key,
                        Value value, RankedTensorType &logSumExp) {
  auto type = inferAttentionType(rule, query, key, value, Value());
  if (failed(type))
    return failure();
  auto q = cast<RankedTensorType>(query.getType());
  auto v = cast<RankedTensorType>(value.getType());
  if (v.getDimSize(3) != q.getDimSize(3)) {
    (void)rule.fail("query and value head dimensions differ: ", q.getDimSize(3),
                    " vs ", v.getDimSize(3));
    return failure();
  }
  logSumExp = RankedTensorType::get(q.getShape().drop_back(),
                                    Float32Type::get(q.getContext()));
  return type;
}

/// The fused gradients' rule for what the forward saved: `out` and
/// `out_grad` of the attention's result type, `logsumexp` of its type.
static LogicalResult checkSavedOperands(const ShapeRule &rule, Value out,
                                        Value outGrad, Value savedLogSumExp,
                                        RankedTensorType resultType,
                                        RankedTensorType logSumExpType) {
  if (out.getType() != resultType || outGrad.getType() != resultType)
    return rule.fail("out and out_grad must have the attention result type ",
                     resultType, ", got ", out.getType(), " and ",
                     outGrad.getType());
  if (savedLogSumExp.getType() != logSumExpType)
    return rule.fail("logsumexp must have type ", logSumExpType, ", got ",
                     savedLogSumExp.getType());
  return success();
}

LogicalResult FusedAttentionOp::inferReturnTypes(MLIRContext *,
                                                 std::optional<Location> loc,
                                                 Adaptor adaptor,
                                                 SmallVectorImpl<Type> &types) {
  if (failed(
          checkScale(ShapeRule(loc, getOperationName()), adaptor.getScale())))
    return failure();
  RankedTensorType logSumExp;
  auto type = inferFusedAttentionType(ShapeRule(loc, getOperationName()),
                                      adaptor.getQuery(), adaptor.getKey(),
                                      adaptor.getValue(), logSumExp);
  if (failed(type))
    return failure();
  types.append({*type, logSumExp});
  return success();
}

LogicalResult FusedAttentionGradOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  if (failed(
          checkScale(ShapeRule(loc, getOperationName()), adaptor.getScale())))
    return failure();
  ShapeRule rule(loc, getOperationName());
  RankedTensorType logSumExp;
  auto type =
      inferFusedAttentionType(rule, adaptor.getQuery(), adaptor.getKey(),
                              adaptor.getValue(), logSumExp);
  if (failed(type))
    return failure();
  if (failed(checkSavedOperands(rule, adaptor.getOut(), adaptor.getOutGrad(),
                                adaptor.getLogsumexp(), *type, logSumExp)))
    return failure();
  types.append({adaptor.getQuery().getType(), adaptor.getKey().getType(),
                adaptor.getValue().getType()});
  return success();
}

/// The packed ops' rule: `qkv` is [B, S, (Hq + 2 Hkv) D] with Hq a multiple
/// of Hkv; the result is [B, S, Hq D] and the log-sum-exp f32 [B, Hq, S].
static FailureOr<RankedTensorType>
inferPackedAttentionType(const ShapeRule &rule, Value qkv, int64_t queryHeads,
                         int64_t kvHeads, RankedTensorType &logSumExp) {
  auto packed = rule.ranked(qkv, "qkv");
  if (failed(packed))
    return failure();
  if (packed->getRank() != 3) {
    (void)rule.fail("qkv must have rank 3 ([B, S, (Hq + 2 Hkv) D]), got ",
                    *packed);
    return failure();
  }
  if (queryHeads < 1 || kvHeads < 1 || queryHeads % kvHeads != 0) {
    (void)rule.fail("heads (", queryHeads,
                    ") must be a positive multiple of kv_heads (", kvHeads,
                    ")");
    return failure();
  }
  int64_t parts, width = packed->getDimSize(2);
  if (__builtin_mul_overflow(kvHeads, 2, &parts) ||
      __builtin_add_overflow(parts, queryHeads, &parts) || width == 0 ||
      width % parts != 0) {
    (void)rule.fail("qkv's last dimension (", width,
                    ") must be a positive multiple of heads + 2 kv_heads (",
                    queryHeads, " + 2 x ", kvHeads, ")");
    return failure();
  }
  int64_t batch = packed->getDimSize(0), length = packed->getDimSize(1);
  logSumExp = RankedTensorType::get({batch, queryHeads, length},
                                    Float32Type::get(qkv.getContext()));
  return packed->clone({batch, length, queryHeads * (width / parts)});
}

LogicalResult
PackedAttentionOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                    Adaptor adaptor,
                                    SmallVectorImpl<Type> &types) {
  if (failed(
          checkScale(ShapeRule(loc, getOperationName()), adaptor.getScale())))
    return failure();
  RankedTensorType logSumExp;
  auto type = inferPackedAttentionType(
      ShapeRule(loc, getOperationName()), adaptor.getQkv(),
      adaptor.getQueryHeads(), adaptor.getKvHeads(), logSumExp);
  if (failed(type))
    return failure();
  types.append({*type, logSumExp});
  return success();
}

LogicalResult PackedAttentionGradOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  if (failed(
          checkScale(ShapeRule(loc, getOperationName()), adaptor.getScale())))
    return failure();
  ShapeRule rule(loc, getOperationName());
  RankedTensorType logSumExp;
  auto type =
      inferPackedAttentionType(rule, adaptor.getQkv(), adaptor.getQueryHeads(),
                               adaptor.getKvHeads(), logSumExp);
  if (failed(type))
    return failure();
  if (failed(checkSavedOperands(rule, adaptor.getOut(), adaptor.getOutGrad(),
                                adaptor.getLogsumexp(), *type, logSumExp)))
    return failure();
  types.push_back(adaptor.getQkv().getType());
  return success();
}
