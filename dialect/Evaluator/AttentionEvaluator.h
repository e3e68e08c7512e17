//===- AttentionEvaluator.h - Reference attention in f64 --------*- C++ -*-===//
//
// The evaluator's attention and its gradient, for genesis.attention,
// genesis.attention_grad and their fused forms: plain loops in double over
// row-major [B, H, S, D] arrays, the oracle the GPU steps are checked
// against.
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_DIALECT_EVALUATOR_ATTENTIONEVALUATOR_H
#define GENESIS_DIALECT_EVALUATOR_ATTENTIONEVALUATOR_H

#include "runtime/support/HostArray.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace genesis {

/// Every element of `array` as a double (the evaluator's working type).
std::vector<double> toDoubles(const HostArray &array);

/// Maximum and minimum that propagate NaN, as PyTorch's do.
inline double nanMax(double a, double b) {
  return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b);
}
inline double nanMin(double a, double b) {
  return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b);
}

struct AttentionInputs {
  const HostArray &query;
  const HostArray &key;
  const HostArray &value;
  /// Additive [B, Hq, S, T], or null.
  const HostArray *mask;
  bool causal;
  double scale;
};

/// Writes the attention result into `out` and, when given, each query row's
/// log-sum-exp of its scaled, masked scores into `logSumExp` ([B, Hq, S];
/// minus infinity for a row that sees no key, whose output is 0).
void evaluateAttention(const AttentionInputs &inputs, HostArray &out,
                       HostArray *logSumExp);

/// Writes the cotangents of query, key and value given that of the result.
void evaluateAttentionGrad(const AttentionInputs &inputs,
                           const HostArray &outGrad, HostArray &queryGrad,
                           HostArray &keyGrad, HostArray &valueGrad);

/// genesis.packed_attention: query, key and value are the parts of each
/// token's row of `qkv`, [B, S, (Hq + 2 Hkv) D]; `out` is [B, S, Hq D].
/// The same values as evaluateAttention of the unpacked heads.
void evaluatePackedAttention(const HostArray &qkv, int64_t queryHeads,
                             int64_t kvHeads, bool causal, double scale,
                             HostArray &out, HostArray &logSumExp);

/// genesis.packed_attention_grad: writes the cotangent of `qkv` given that
/// of the result, `outGrad` [B, S, Hq D].
void evaluatePackedAttentionGrad(const HostArray &qkv, const HostArray &outGrad,
                                 int64_t queryHeads, int64_t kvHeads,
                                 bool causal, double scale, HostArray &qkvGrad);

} // namespace genesis

#endif // GENESIS_DIALECT_EVALUATOR_ATTENTIONEVALUATOR_H
