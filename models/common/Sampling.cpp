//===- Sampling.cpp - Choosing the next token from logits -----------------===//

#include "models/common/Sampling.h"

#include "runtime/support/Error.h"
#include "runtime/support/Random.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace genesis::text {

void validate(const SamplingOptions &options) {
  if (!(options.temperature >= 0))
    throw Error("sampling: temperature must be >= 0, got " +
                std::to_string(options.temperature));
  if (options.topK < 0)
    throw Error("sampling: top_k must be >= 0 (0 keeps every token), got " +
                std::to_string(options.topK));
  if (!(options.topP > 0 && options.topP <= 1))
    throw Error("sampling: top_p must be in (0, 1], got " +
                std::to_string(options.topP));
  if (!(options.repetitionPenalty > 0 &&
        std::isfinite(options.repetitionPenalty)))
    throw Error("sampling: repetition_penalty must be a finite number > 0 "
                "(1: none), got " +
                std::to_string(options.repetitionPenalty));
}

namespace {

/// A token still in the running and its unnormalised probability.
struct Candidate {
  int64_t token;
  double weight;
};

bool moreLikely(const Candidate &a, const Candidate &b) {
  return a.weight != b.weight ? a.weight > b.weight : a.token < b.token;
}

/// The tokens left after temperature, top-k and top-p, with positive
/// weights, in an order that depends only on the inputs.
std::vector<Candidate> candidatesOf(const float *logits, int64_t vocabSize,
                                    const SamplingOptions &options) {
  validate(options);
  if (!logits || vocabSize <= 0)
    throw Error("sampling: no logits (vocabulary size " +
                std::to_string(vocabSize) + ")");
  constexpr float kInfinity = std::numeric_limits<float>::infinity();
  constexpr float kMinusInfinity = -kInfinity;
  int64_t argmax = -1;
  for (int64_t i = 0; i < vocabSize; ++i) {
    if (std::isnan(logits[i]) || logits[i] == kInfinity)
      throw Error("sampling: logits[" + std::to_string(i) + "] is " +
                  std::to_string(logits[i]));
    if (logits[i] != kMinusInfinity &&
        (argmax < 0 || logits[i] > logits[argmax]))
      argmax = i;
  }
  if (argmax < 0)
    throw Error("sampling: every logit is -inf");
  if (options.temperature == 0)
    return {{argmax, 1.0}};

  // Log-weights relative to the largest logit, so exp cannot overflow.
  std::vector<Candidate> candidates;
  for (int64_t i = 0; i < vocabSize; ++i)
    if (logits[i] != kMinusInfinity)
      candidates.push_back(
          {i, (static_cast<double>(logits[i]) - logits[argmax]) /
                  options.temperature});

  if (options.topK > 0 &&
      options.topK < static_cast<int64_t>(candidates.size())) {
    std::vector<double> values;
    values.reserve(candidates.size());
    for (const Candidate &candidate : candidates)
      values.push_back(candidate.weight);
    std::nth_element(values.begin(), values.begin() + (options.topK - 1),
                     values.end(), std::greater<>());
    double threshold = values[options.topK - 1];
    candidates.erase(std::remove_if(candidates.begin(), candidates.end(),
                                    [&](const Candidate &candidate) {
                                      return candidate.weight < threshold;
                                    }),
                     candidates.end());
  }

  for (Candidate &candidate : candidates)
    candidate.weight = std::exp(candidate.weight);
  // A probability that underflowed to 0 can never be drawn.
  candidates.erase(std::remove_if(candidates.begin(), candidates.end(),
                                  [](const Candidate &candidate) {
                                    return candidate.weight == 0;
                                  }),
                   candidates.end());

  if (options.topP < 1) {
    double total = 0;
    for (const Candidate &candidate : candidates)
      total += candidate.weight;
    // Take the most likely tokens off a heap until the mass before the next
    // one reaches top_p: the whole vocabulary is rarely needed.
    auto lessLikely = [](const Candidate &a, const Candidate &b) {
      return moreLikely(b, a);
    };
    std::make_heap(candidates.begin(), candidates.end(), lessLikely);
    std::vector<Candidate> nucleus;
    double massBefore = 0;
    for (auto end = candidates.end();
         end != candidates.begin() && massBefore < options.topP * total;
         --end) {
      std::pop_heap(candidates.begin(), end, lessLikely);
      nucleus.push_back(*(end - 1));
      massBefore += nucleus.back().weight;
    }
    candidates = std::move(nucleus);
  }
  return candidates;
}

} // namespace

std::vector<TokenProbability>
samplingDistribution(const float *logits, int64_t vocabSize,
                     const SamplingOptions &options) {
  std::vector<Candidate> candidates = candidatesOf(logits, vocabSize, options);
  std::sort(candidates.begin(), candidates.end(), moreLikely);
  double total = 0;
  for (const Candidate &candidate : candidates)
    total += candidate.weight;
  std::vector<TokenProbability> distribution;
  distribution.reserve(candidates.size());
  for (const Candidate &candidate : candidates)
    distribution.push_back({candidate.token, candidate.weight / total});
  return distribution;
}

int64_t sampleToken(const float *logits, int64_t vocabSize,
                    const SamplingOptions &options, uint64_t step) {
  std::vector<Candidate> candidates = candidatesOf(logits, vocabSize, options);
  if (candidates.size() == 1)
    return candidates.front().token;
  double total = 0;
  for (const Candidate &candidate : candidates)
    total += candidate.weight;
  Generator generator(options.seed);
  generator.set_state({options.seed, step});
  double target = generator.uniform() * total;
  double cumulative = 0;
  for (const Candidate &candidate : candidates) {
    cumulative += candidate.weight;
    if (target < cumulative)
      return candidate.token;
  }
  // Rounding can leave the target at the very top of the last interval.
  return candidates.back().token;
}

Sampler::Sampler(const SamplingOptions &options, uint64_t firstStep)
    : options_(options), step_(firstStep) {
  validate(options_);
}

void Sampler::observe(int64_t token) {
  if (token < 0)
    throw Error("sampling: token " + std::to_string(token) +
                " is not a token id");
  if (inContext_.insert(token).second)
    context_.push_back(token);
}

void Sampler::resetContext() {
  context_.clear();
  inContext_.clear();
}

int64_t Sampler::sample(const float *logits, int64_t vocabSize) {
  const float *scores = logits;
  if (options_.repetitionPenalty != 1 && !context_.empty()) {
    // transformers' RepetitionPenaltyLogitsProcessor, in f32 as its scores.
    auto penalty = static_cast<float>(options_.repetitionPenalty);
    penalized_.assign(logits, logits + vocabSize);
    for (int64_t token : context_)
      if (token < vocabSize) {
        float &x = penalized_[token];
        x = x < 0 ? x * penalty : x / penalty;
      }
    scores = penalized_.data();
  }
  int64_t token = sampleToken(scores, vocabSize, options_, step_++);
  observe(token);
  return token;
}

} // namespace genesis::text
