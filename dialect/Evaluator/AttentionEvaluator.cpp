//===- AttentionEvaluator.cpp - Reference attention in f64 ----------------===//

#include "dialect/Evaluator/AttentionEvaluator.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace genesis {

std::vector<double> toDoubles(const HostArray &array) {
  std::vector<double> values(array.numel());
  for (int64_t i = 0; i < array.numel(); ++i)
    values[i] = array.getDouble(i);
  return values;
}

namespace {

/// Sizes and operands in double; query head h reads key/value head
/// h / group (grouped-query attention).
struct Problem {
  int64_t batch, heads, s, d, kvHeads, t, dv, group;
  std::vector<double> q, k, v, mask;
  bool causal;
  double scale;

  explicit Problem(const AttentionInputs &in)
      : batch(in.query.shape()[0]), heads(in.query.shape()[1]),
        s(in.query.shape()[2]), d(in.query.shape()[3]),
        kvHeads(in.key.shape()[1]), t(in.key.shape()[2]),
        dv(in.value.shape()[3]), group(heads / kvHeads), q(toDoubles(in.query)),
        k(toDoubles(in.key)), v(toDoubles(in.value)), causal(in.causal),
        scale(in.scale) {
    if (in.mask)
      mask = toDoubles(*in.mask);
  }

  /// Scores of query row `row` (of head h) against the keys at `kvBase`;
  /// minus infinity where the key is hidden. Returns the row's maximum: NaN
  /// when a score is NaN, so that NaN propagates as in PyTorch rather than
  /// reading as a row whose every key is hidden.
  double scores(int64_t row, int64_t i, int64_t kvBase,
                std::vector<double> &out) const {
    double max = -INFINITY;
    for (int64_t j = 0; j < t; ++j) {
      out[j] = -INFINITY;
      if (!causal || j <= i + t - s) {
        double score = 0;
        for (int64_t c = 0; c < d; ++c)
          score += q[row * d + c] * k[(kvBase + j) * d + c];
        out[j] = score * scale + (mask.empty() ? 0.0 : mask[row * t + j]);
      }
      max = nanMax(max, out[j]);
    }
    return max;
  }
};

} // namespace

void evaluateAttention(const AttentionInputs &inputs, HostArray &out,
                       HostArray *logSumExp) {
  Problem p(inputs);
  std::vector<double> scores(p.t), acc(p.dv);
  for (int64_t b = 0; b < p.batch; ++b)
    for (int64_t h = 0; h < p.heads; ++h) {
      int64_t kvBase = (b * p.kvHeads + h / p.group) * p.t;
      for (int64_t i = 0; i < p.s; ++i) {
        int64_t row = (b * p.heads + h) * p.s + i;
        double max = p.scores(row, i, kvBase, scores);
        std::fill(acc.begin(), acc.end(), 0.0);
        double sum = 0;
        if (max != -INFINITY) {
          for (int64_t j = 0; j < p.t; ++j) {
            double weight = std::exp(scores[j] - max);
            sum += weight;
            for (int64_t c = 0; c < p.dv; ++c)
              acc[c] += weight * p.v[(kvBase + j) * p.dv + c];
          }
        }
        bool hidden = max == -INFINITY; // every key hidden: the output is 0
        for (int64_t c = 0; c < p.dv; ++c)
          out.setDouble(row * p.dv + c, hidden ? 0.0 : acc[c] / sum);
        if (logSumExp)
          logSumExp->setDouble(row, hidden ? -INFINITY : max + std::log(sum));
      }
    }
}

void evaluateAttentionGrad(const AttentionInputs &inputs,
                           const HostArray &outGrad, HostArray &queryGrad,
                           HostArray &keyGrad, HostArray &valueGrad) {
  Problem p(inputs);
  std::vector<double> g = toDoubles(outGrad);
  std::vector<double> dq(p.q.size(), 0.0), dk(p.k.size(), 0.0),
      dv(p.v.size(), 0.0);
  std::vector<double> probs(p.t), outRow(p.dv);
  for (int64_t b = 0; b < p.batch; ++b)
    for (int64_t h = 0; h < p.heads; ++h) {
      int64_t kvBase = (b * p.kvHeads + h / p.group) * p.t;
      for (int64_t i = 0; i < p.s; ++i) {
        int64_t row = (b * p.heads + h) * p.s + i;
        double max = p.scores(row, i, kvBase, probs);
        if (max == -INFINITY)
          continue; // every key masked: the output was 0, so is its gradient
        double total = 0;
        for (int64_t j = 0; j < p.t; ++j)
          total += probs[j] = std::exp(probs[j] - max);
        std::fill(outRow.begin(), outRow.end(), 0.0);
        for (int64_t j = 0; j < p.t; ++j) {
          probs[j] /= total;
          for (int64_t c = 0; c < p.dv; ++c)
            outRow[c] += probs[j] * p.v[(kvBase + j) * p.dv + c];
        }
        double rowDot = 0;
        for (int64_t c = 0; c < p.dv; ++c)
          rowDot += g[row * p.dv + c] * outRow[c];
        for (int64_t j = 0; j < p.t; ++j) {
          double dp = 0;
          for (int64_t c = 0; c < p.dv; ++c) {
            dp += g[row * p.dv + c] * p.v[(kvBase + j) * p.dv + c];
            dv[(kvBase + j) * p.dv + c] += probs[j] * g[row * p.dv + c];
          }
          double ds = probs[j] * (dp - rowDot) * p.scale;
          for (int64_t c = 0; c < p.d; ++c) {
            dq[row * p.d + c] += ds * p.k[(kvBase + j) * p.d + c];
            dk[(kvBase + j) * p.d + c] += ds * p.q[row * p.d + c];
          }
        }
      }
    }
  HostArray *results[] = {&queryGrad, &keyGrad, &valueGrad};
  const std::vector<double> *sources[] = {&dq, &dk, &dv};
  for (int r = 0; r < 3; ++r)
    for (int64_t i = 0; i < results[r]->numel(); ++i)
      results[r]->setDouble(i, (*sources[r])[i]);
}

namespace {

/// Heads [first, first + count) of token-major `packed`, [B, S, N] whose
/// rows hold heads `headDim` wide side by side, as a row-major
/// [B, count, S, headDim] array of `packed`'s dtype.
HostArray unpackHeads(const HostArray &packed, int64_t first, int64_t count,
                      int64_t headDim) {
  int64_t batch = packed.shape()[0], length = packed.shape()[1],
          width = packed.shape()[2];
  HostArray heads(packed.dtype(), {batch, count, length, headDim});
  int64_t index = 0;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < count; ++h)
      for (int64_t i = 0; i < length; ++i)
        for (int64_t c = 0; c < headDim; ++c)
          heads.setDouble(index++, packed.getDouble((b * length + i) * width +
                                                    (first + h) * headDim + c));
  return heads;
}

/// Writes head-major `heads`, [B, count, S, D], into heads
/// [first, first + count) of token-major `packed` [B, S, N].
void packHeads(const HostArray &heads, int64_t first, HostArray &packed) {
  int64_t batch = heads.shape()[0], count = heads.shape()[1],
          length = heads.shape()[2], headDim = heads.shape()[3],
          width = packed.shape()[2];
  int64_t index = 0;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < count; ++h)
      for (int64_t i = 0; i < length; ++i)
        for (int64_t c = 0; c < headDim; ++c)
          packed.setDouble((b * length + i) * width + (first + h) * headDim + c,
                           heads.getDouble(index++));
}

} // namespace

void evaluatePackedAttention(const HostArray &qkv, int64_t queryHeads,
                             int64_t kvHeads, bool causal, double scale,
                             HostArray &out, HostArray &logSumExp) {
  int64_t headDim = qkv.shape()[2] / (queryHeads + 2 * kvHeads);
  HostArray query = unpackHeads(qkv, 0, queryHeads, headDim),
            key = unpackHeads(qkv, queryHeads, kvHeads, headDim),
            value = unpackHeads(qkv, queryHeads + kvHeads, kvHeads, headDim);
  HostArray heads(out.dtype(), query.shape());
  evaluateAttention({query, key, value, nullptr, causal, scale}, heads,
                    &logSumExp);
  packHeads(heads, 0, out);
}

void evaluatePackedAttentionGrad(const HostArray &qkv, const HostArray &outGrad,
                                 int64_t queryHeads, int64_t kvHeads,
                                 bool causal, double scale,
                                 HostArray &qkvGrad) {
  int64_t headDim = qkv.shape()[2] / (queryHeads + 2 * kvHeads);
  HostArray query = unpackHeads(qkv, 0, queryHeads, headDim),
            key = unpackHeads(qkv, queryHeads, kvHeads, headDim),
            value = unpackHeads(qkv, queryHeads + kvHeads, kvHeads, headDim);
  HostArray queryGrad(qkvGrad.dtype(), query.shape()),
      keyGrad(qkvGrad.dtype(), key.shape()),
      valueGrad(qkvGrad.dtype(), value.shape());
  evaluateAttentionGrad({query, key, value, nullptr, causal, scale},
                        unpackHeads(outGrad, 0, queryHeads, headDim), queryGrad,
                        keyGrad, valueGrad);
  packHeads(queryGrad, 0, qkvGrad);
  packHeads(keyGrad, queryHeads, qkvGrad);
  packHeads(valueGrad, queryHeads + kvHeads, qkvGrad);
}

} // namespace genesis
