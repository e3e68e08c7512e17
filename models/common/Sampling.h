//===- Sampling.h - Choosing the next token from logits ---------*- C++ -*-===//
//
// Greedy, temperature, top-k and top-p (nucleus) sampling over one row of f32
// logits on the host, with Hugging Face's semantics and order (the repetition
// penalty, then temperature, top-k and top-p). The random number of step n is
// the n-th number of the Philox stream keyed by the seed, so a generation is
// reproducible from (seed, step) alone and no two steps share a number.
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_MODELS_COMMON_SAMPLING_H
#define GENESIS_MODELS_COMMON_SAMPLING_H

#include <cstdint>
#include <unordered_set>
#include <vector>

namespace genesis::text {

struct SamplingOptions {
  /// 0 takes the most likely token (greedy, first one on ties); otherwise the
  /// logits are divided by it before the softmax.
  double temperature = 1.0;
  /// Keeps the tokens whose logit is at least the k-th largest (so ties with
  /// the k-th are all kept); 0 keeps every token.
  int64_t topK = 0;
  /// Keeps the smallest set of most likely tokens whose probability reaches
  /// topP (at least one token); 1 keeps every token.
  double topP = 1.0;
  /// transformers' repetition_penalty (CTRL's): before anything else, the
  /// logit x of every token already in the context becomes x / penalty when
  /// x > 0, else x * penalty; 1 changes nothing. Greedy decoding applies it
  /// too. Only a Sampler, which keeps the context, applies it.
  double repetitionPenalty = 1.0;
  uint64_t seed = 0;
};

/// Throws genesis::Error naming the field if temperature < 0, topK < 0,
/// topP is outside (0, 1] or repetitionPenalty is not a finite number > 0
/// (NaN included).
void validate(const SamplingOptions &options);

struct TokenProbability {
  int64_t token;
  double probability;
};

/// The tokens `options` lets sampling choose from `logits[0, vocabSize)` and
/// their probabilities, most likely first (lower id first on ties). Logits
/// may be -inf (never chosen) but not NaN or +inf, and not all -inf.
std::vector<TokenProbability>
samplingDistribution(const float *logits, int64_t vocabSize,
                     const SamplingOptions &options);

/// Draws the token of generation step `step` from samplingDistribution,
/// using the Philox number (options.seed, step).
int64_t sampleToken(const float *logits, int64_t vocabSize,
                    const SamplingOptions &options, uint64_t step);

/// sampleToken with a step counter that advances with each token, and the
/// context the repetition penalty looks at: the tokens observed (a prompt)
/// and those sampled.
class Sampler {
public:
  /// Validates `options`; `firstStep` resumes a generation.
  explicit Sampler(const SamplingOptions &options, uint64_t firstStep = 0);

  /// Adds `token` to the context (a prompt token the model read).
  void observe(int64_t token);
  /// Empties the context (the model's cache starts over).
  void resetContext();
  /// The next token from `logits[0, vocabSize)`, after the repetition
  /// penalty of the context; it joins the context.
  int64_t sample(const float *logits, int64_t vocabSize);
  int64_t sample(const std::vector<float> &logits) {
    return sample(logits.data(), static_cast<int64_t>(logits.size()));
  }

  /// The step the next sample uses.
  uint64_t step() const { return step_; }
  const SamplingOptions &options() const { return options_; }

private:
  SamplingOptions options_;
  uint64_t step_;
  /// The context's distinct tokens, in the order they came.
  std::vector<int64_t> context_;
  std::unordered_set<int64_t> inContext_;
  std::vector<float> penalized_;
};

} // namespace genesis::text

#endif // GENESIS_MODELS_COMMON_SAMPLING_H
