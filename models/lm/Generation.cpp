//===- Generation.cpp - Text generation from a compiled plan --------------===//

#include "models/lm/Generation.h"
#include "runtime/support/Error.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <optional>

namespace genesis::lm {

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

HostArray scalar(int64_t value) {
  return HostArray::fromValues(DType::I64, {}, std::vector<int64_t>{value});
}

/// "token id X is outside the model's vocabulary [0, V)" for the first of
/// `tokens` outside [0, vocab), or nothing.
std::optional<std::string> outsideVocabulary(const std::vector<int64_t> &tokens,
                                             int64_t vocab) {
  for (int64_t token : tokens)
    if (token < 0 || token >= vocab)
      return "token id " + std::to_string(token) +
             " is outside the model's vocabulary [0, " + std::to_string(vocab) +
             ")";
  return std::nullopt;
}

std::vector<float> logitsOf(const std::map<std::string, HostArray> &outputs,
                            const char *name) {
  const HostArray &logits = outputs.at(name);
  const float *data = logits.dataAs<float>();
  return std::vector<float>(data, data + logits.numel());
}

} // namespace

void bindParameters(Session &session, const NamedArrays &weights,
                    const std::string &source) {
  std::map<std::string, const HostArray *> byName;
  for (const auto &[name, array] : weights)
    byName[name] = &array;
  for (const TensorInfo &tensor : session.tensors()) {
    if (tensor.role != plan::Role::Parameter)
      continue;
    auto it = byName.find(tensor.name);
    if (it == byName.end())
      throw Error("'" + source + "' has no tensor '" + tensor.name +
                  "', a parameter of the plan");
    const HostArray &array = *it->second;
    bool convertible =
        isFloatDType(array.dtype()) && isFloatDType(tensor.dtype);
    if (array.shape() != tensor.shape ||
        (array.dtype() != tensor.dtype && !convertible))
      throw Error("'" + source + "' holds '" + tensor.name + "' as " +
                  array.typeString() + "; the plan's parameter is " +
                  dtypeName(tensor.dtype) + shapeString(tensor.shape));
    // As load_state_dict copies: a float tensor takes the plan's float type
    // (an f32 checkpoint feeds a bf16 plan).
    if (array.dtype() != tensor.dtype)
      session.bind(tensor.name, array.toFloatType(tensor.dtype));
    else
      session.bind(tensor.name, array);
  }
}

GenerationSession::GenerationSession(Session session)
    : session_(std::move(session)) {
  auto fail = [&](const std::string &problem) {
    throw Error("plan '" + session_.planName() +
                "' is not a generation plan: " + problem);
  };
  std::vector<std::string> functions = session_.functionNames();
  for (const char *function : {names::kPrefill, names::kDecode})
    if (std::find(functions.begin(), functions.end(), function) ==
        functions.end())
      fail(std::string("it has no function '") + function + "'");

  std::map<std::string, const TensorInfo *> byName;
  std::vector<const TensorInfo *> caches;
  for (const TensorInfo &tensor : session_.tensors()) {
    byName[tensor.name] = &tensor;
    if (tensor.role == plan::Role::Buffer &&
        tensor.name.rfind(names::kCachePrefix, 0) == 0)
      caches.push_back(&tensor);
  }
  if (caches.empty() || caches.size() % 2 != 0)
    fail("it needs one key and one value cache buffer per layer ('" +
         std::string(names::kCachePrefix) + "...'), found " +
         std::to_string(caches.size()));
  DType cacheType = caches.front()->dtype;
  for (const TensorInfo *cache : caches)
    if (cache->dtype != cacheType || !isGenerationStorageType(cacheType) ||
        cache->shape.size() != 4 || cache->shape[0] < 1 ||
        cache->shape != caches.front()->shape)
      fail("cache buffer '" + cache->name + "' is " + dtypeName(cache->dtype) +
           shapeString(cache->shape) +
           "; every cache must be [B, Hkv, maxLength, D] of one shape and "
           "one type, f32, bf16 or f16");
  int64_t batch = caches.front()->shape[0];
  maxLength_ = caches.front()->shape[2];
  if (maxLength_ < 1)
    fail("its caches hold no positions");

  // `rows`: the leading dimension expected (1 or the batch).
  auto expect = [&](const char *name, plan::Role role, DType dtype, size_t rank,
                    int64_t rows) -> const std::vector<int64_t> & {
    auto it = byName.find(name);
    if (it == byName.end())
      fail(std::string("it has no tensor '") + name + "'");
    const TensorInfo &tensor = *it->second;
    if (tensor.role != role || tensor.dtype != dtype ||
        tensor.shape.size() != rank || (rank > 0 && tensor.shape[0] != rows))
      fail("'" + tensor.name + "' is a " + roleName(tensor.role) + " " +
           dtypeName(tensor.dtype) + shapeString(tensor.shape) +
           ", expected a " + roleName(role) + " " + dtypeName(dtype) +
           " of rank " + std::to_string(rank) +
           (rank > 0 ? " and " + std::to_string(rows) + " rows" : ""));
    return tensor.shape;
  };
  prefillLength_ = expect(names::kIds, plan::Role::Input, DType::I64, 2, 1)[1];
  if (prefillLength_ < 1 || prefillLength_ > maxLength_)
    fail("'ids' holds " + std::to_string(prefillLength_) +
         " tokens; a prefill runs 1 to the cache's " +
         std::to_string(maxLength_));
  if (expect(names::kToken, plan::Role::Input, DType::I64, 2, batch)[1] != 1)
    fail("'token' must hold one token a sequence");
  expect(names::kPosition, plan::Role::Input, DType::I64, 0, 1);
  expect(names::kLast, plan::Role::Input, DType::I64, 0, 1);
  vocabSize_ = expect(names::kLogits, plan::Role::Output, DType::F32, 2, 1)[1];
  if (vocabSize_ < 1)
    fail("'logits' holds no vocabulary");
  if (batch > 1) {
    expect(names::kRow, plan::Role::Input, DType::I64, 0, 1);
    expect(names::kPositions, plan::Role::Input, DType::I64, 1, batch);
    if (expect(names::kBatchLogits, plan::Role::Output, DType::F32, 2,
               batch)[1] != vocabSize_)
      fail("'batch_logits' and 'logits' differ in their vocabulary");
  }
  greedyDecode_ = std::find(functions.begin(), functions.end(),
                            names::kDecodeGreedy) != functions.end();
  if (greedyDecode_) {
    expect(names::kSamplable, plan::Role::Input, DType::I64, 0, 1);
    expect(names::kNext, plan::Role::Output, DType::I64, 1, batch);
    expect(names::kBest, plan::Role::Output, DType::F32, 1, batch);
  }
  for (const TensorInfo *cache : caches)
    session_.bind(cache->name, HostArray(cacheType, cache->shape));
  positions_.assign(batch, 0);
}

int64_t GenerationSession::position(int64_t row) const {
  checkRow(row);
  return positions_[row];
}

void GenerationSession::reset(int64_t row) {
  checkRow(row);
  positions_[row] = 0;
}

void GenerationSession::checkRow(int64_t row) const {
  if (row < 0 || row >= batch())
    throw Error("generation: sequence " + std::to_string(row) +
                " is outside the plan's batch of " + std::to_string(batch()));
}

void GenerationSession::check(int64_t row,
                              const std::vector<int64_t> &tokens) const {
  checkRow(row);
  if (tokens.empty())
    throw Error("generation: no tokens to run");
  if (std::optional<std::string> bad = outsideVocabulary(tokens, vocabSize_))
    throw Error("generation: " + *bad);
  if (positions_[row] + static_cast<int64_t>(tokens.size()) > maxLength_)
    throw Error("generation: the KV cache is full" +
                (batch() > 1 ? " in sequence " + std::to_string(row) : "") +
                ": " + std::to_string(positions_[row]) + " tokens held + " +
                std::to_string(tokens.size()) +
                " new exceed the maximum length " + std::to_string(maxLength_));
}

std::vector<float>
GenerationSession::prefill(int64_t row, const std::vector<int64_t> &tokens) {
  check(row, tokens);
  std::vector<float> logits;
  for (size_t first = 0; first < tokens.size();
       first += static_cast<size_t>(prefillLength_)) {
    int64_t count = std::min<int64_t>(
        prefillLength_, static_cast<int64_t>(tokens.size() - first));
    // A batched plan's decode runs every sequence: prefill pads instead.
    if (count == 1 && prefillLength_ > 1 && batch() == 1)
      return decode(tokens[first]);
    // Padding (id 0) fills the chunk: its keys and values land at positions
    // that later tokens overwrite before anything attends to them.
    HostArray ids(DType::I64, {1, prefillLength_});
    std::memcpy(ids.data(), tokens.data() + first, count * sizeof(int64_t));
    std::map<std::string, HostArray> inputs = {
        {names::kIds, std::move(ids)},
        {names::kPosition, scalar(positions_[row])},
        {names::kLast, scalar(count - 1)}};
    if (batch() > 1)
      inputs.emplace(names::kRow, scalar(row));
    logits = logitsOf(session_.run(names::kPrefill, inputs), names::kLogits);
    positions_[row] += count;
  }
  return logits;
}

void GenerationSession::checkBatchOfOne(const char *call) const {
  if (batch() != 1)
    throw Error(std::string("generation: ") + call +
                " runs a plan of batch 1; this one decodes " +
                std::to_string(batch()) + " sequences together");
}

std::vector<float> GenerationSession::decode(int64_t token) {
  checkBatchOfOne("decode(token)");
  return decode(std::vector<int64_t>{token}, {true});
}

int64_t GenerationSession::decodeGreedy(int64_t token, int64_t samplable) {
  checkBatchOfOne("decodeGreedy(token, samplable)");
  return decodeGreedy(std::vector<int64_t>{token}, {true}, samplable)[0];
}

std::map<std::string, HostArray>
GenerationSession::decodeInputs(const std::vector<int64_t> &tokens,
                                const std::vector<bool> &active) const {
  if (static_cast<int64_t>(tokens.size()) != batch() ||
      static_cast<int64_t>(active.size()) != batch())
    throw Error("generation: " + std::to_string(tokens.size()) +
                " tokens and " + std::to_string(active.size()) +
                " activity flags for a plan of " + std::to_string(batch()) +
                " sequences");
  std::vector<int64_t> fed(tokens.size(), 0), at(tokens.size());
  for (int64_t row = 0; row < batch(); ++row) {
    // An inactive row runs token 0 where it stands (its cache row's next
    // position, which a new conversation overwrites before reading).
    at[row] = std::min(positions_[row], maxLength_ - 1);
    if (active[row]) {
      check(row, {tokens[row]});
      fed[row] = tokens[row];
    }
  }
  std::map<std::string, HostArray> inputs = {
      {names::kToken, HostArray::fromValues(DType::I64, {batch(), 1}, fed)}};
  if (batch() == 1)
    inputs.emplace(names::kPosition, scalar(at[0]));
  else
    inputs.emplace(names::kPositions,
                   HostArray::fromValues(DType::I64, {batch()}, at));
  return inputs;
}

void GenerationSession::advance(const std::vector<bool> &active) {
  for (int64_t row = 0; row < batch(); ++row)
    positions_[row] += active[row] ? 1 : 0;
}

std::vector<float> GenerationSession::decode(const std::vector<int64_t> &tokens,
                                             const std::vector<bool> &active) {
  std::map<std::string, HostArray> inputs = decodeInputs(tokens, active);
  std::vector<float> logits =
      logitsOf(session_.run(names::kDecode, inputs),
               batch() == 1 ? names::kLogits : names::kBatchLogits);
  advance(active);
  return logits;
}

std::vector<int64_t>
GenerationSession::decodeGreedy(const std::vector<int64_t> &tokens,
                                const std::vector<bool> &active,
                                int64_t samplable) {
  std::map<std::string, HostArray> inputs = decodeInputs(tokens, active);
  if (!greedyDecode_)
    throw Error("plan '" + session_.planName() + "' has no function '" +
                names::kDecodeGreedy + "'");
  if (samplable < 1 || samplable > vocabSize_)
    throw Error("generation: " + std::to_string(samplable) +
                " samplable tokens, expected 1 to the vocabulary's " +
                std::to_string(vocabSize_));
  inputs.emplace(names::kSamplable, scalar(samplable));
  std::map<std::string, HostArray> outputs =
      session_.run(names::kDecodeGreedy, inputs);
  advance(active);
  const float *best = outputs.at(names::kBest).dataAs<float>();
  const int64_t *next = outputs.at(names::kNext).dataAs<int64_t>();
  for (int64_t row = 0; row < batch(); ++row)
    if (active[row] && (std::isnan(best[row]) || std::isinf(best[row])))
      throw Error("sampling: the largest logit" +
                  (batch() > 1 ? " of sequence " + std::to_string(row) : "") +
                  " is " + std::to_string(best[row]) +
                  " (a NaN or an infinite logit, or every logit -inf)");
  return std::vector<int64_t>(next, next + batch());
}

namespace {

/// The samplable ids for `options`.
int64_t samplableIds(const GenerationSession &session,
                     const GenerateOptions &options) {
  if (options.maxNewTokens < 1)
    throw Error("generation: the maximum of new tokens must be at least 1, "
                "got " +
                std::to_string(options.maxNewTokens));
  return options.samplableTokens > 0
             ? std::min(options.samplableTokens, session.vocabSize())
             : session.vocabSize();
}

/// The decode loop of generate and generateBatch: sequences 0 .. n - 1
/// (n = samplers.size()) have their prompts in the cache and `tokens`
/// sampled after them; each step records every going sequence's token,
/// stops those that are done, and decodes the rest together.
void decodeSequences(GenerationSession &session,
                     const std::vector<text::Sampler *> &samplers,
                     std::vector<int64_t> tokens, int64_t samplable,
                     const GenerateOptions &options,
                     const std::function<void(int64_t, int64_t)> &onToken,
                     std::vector<GenerationResult> &results) {
  int64_t count = static_cast<int64_t>(samplers.size());
  // Greedy decoding without a repetition penalty picks each token on the
  // device (decode_greedy): the same token the sampler picks from the
  // logits, which then never cross to the host.
  const text::SamplingOptions &sampling = samplers.front()->options();
  bool onDevice = options.greedyOnDevice && session.decodesGreedily() &&
                  sampling.temperature == 0 && sampling.repetitionPenalty == 1;
  std::vector<bool> active(session.batch(), false);
  std::fill(active.begin(), active.begin() + count, true);
  std::vector<int64_t> fed(session.batch(), 0);
  while (true) {
    bool going = false;
    for (int64_t row = 0; row < count; ++row) {
      if (!active[row])
        continue;
      GenerationResult &result = results[row];
      int64_t token = tokens[row];
      result.tokens.push_back(token);
      if (onToken)
        onToken(row, token);
      if (std::find(options.stopTokens.begin(), options.stopTokens.end(),
                    token) != options.stopTokens.end())
        result.stopReason = StopReason::StopToken;
      else if (static_cast<int64_t>(result.tokens.size()) ==
               options.maxNewTokens)
        result.stopReason = StopReason::MaxNewTokens;
      else if (session.position(row) == session.maxLength())
        result.stopReason = StopReason::CacheFull;
      else {
        fed[row] = token;
        going = true;
        continue;
      }
      active[row] = false;
    }
    if (!going)
      break;
    if (onDevice) {
      std::vector<int64_t> next = session.decodeGreedy(fed, active, samplable);
      for (int64_t row = 0; row < count; ++row)
        if (active[row]) {
          samplers[row]->observe(next[row]);
          tokens[row] = next[row];
        }
    } else {
      std::vector<float> logits = session.decode(fed, active);
      for (int64_t row = 0; row < count; ++row)
        if (active[row])
          tokens[row] = samplers[row]->sample(
              logits.data() + row * session.vocabSize(), samplable);
    }
    for (int64_t row = 0; row < count; ++row)
      results[row].decodeSteps += active[row] ? 1 : 0;
  }
}

} // namespace

GenerationResult generate(GenerationSession &session,
                          const std::vector<int64_t> &prompt,
                          text::Sampler &sampler,
                          const GenerateOptions &options,
                          const std::function<void(int64_t)> &onToken) {
  int64_t samplable = samplableIds(session, options);
  std::vector<GenerationResult> results(1);
  GenerationResult &result = results[0];
  result.promptTokens = static_cast<int64_t>(prompt.size());
  Clock::time_point start = Clock::now();
  std::vector<float> logits = session.prefill(prompt);
  for (int64_t token : prompt)
    sampler.observe(token);
  result.prefillSeconds = secondsSince(start);

  start = Clock::now();
  int64_t token = sampler.sample(logits.data(), samplable);
  decodeSequences(
      session, {&sampler}, {token}, samplable, options,
      [&](int64_t, int64_t next) {
        if (onToken)
          onToken(next);
      },
      results);
  result.decodeSeconds = secondsSince(start);
  return result;
}

std::vector<GenerationResult>
generateBatch(GenerationSession &session,
              const std::vector<std::vector<int64_t>> &prompts,
              const text::SamplingOptions &sampling,
              const GenerateOptions &options,
              const std::function<void(int64_t, int64_t)> &onToken) {
  int64_t samplable = samplableIds(session, options);
  if (prompts.empty() || static_cast<int64_t>(prompts.size()) > session.batch())
    throw Error("generation: " + std::to_string(prompts.size()) +
                " prompts for a plan of batch " +
                std::to_string(session.batch()) + " (1 to the batch)");
  // Every prompt is checked before any runs: an error leaves no sequence
  // half prefilled.
  for (size_t row = 0; row < prompts.size(); ++row) {
    std::string prompt = "generation: prompt " + std::to_string(row);
    if (prompts[row].empty())
      throw Error(prompt + " has no tokens");
    if (std::optional<std::string> bad =
            outsideVocabulary(prompts[row], session.vocabSize()))
      throw Error(prompt + ": " + *bad);
    if (static_cast<int64_t>(prompts[row].size()) > session.maxLength())
      throw Error(prompt + " has " + std::to_string(prompts[row].size()) +
                  " tokens, more than the KV cache's " +
                  std::to_string(session.maxLength()) + " positions");
  }
  std::vector<text::Sampler> samplers;
  std::vector<text::Sampler *> pointers;
  for (size_t row = 0; row < prompts.size(); ++row) {
    text::SamplingOptions own = sampling;
    own.seed += row;
    samplers.emplace_back(own);
  }
  for (text::Sampler &sampler : samplers)
    pointers.push_back(&sampler);

  session.reset();
  std::vector<GenerationResult> results(prompts.size());
  std::vector<std::vector<float>> logits(prompts.size());
  for (size_t row = 0; row < prompts.size(); ++row) {
    Clock::time_point start = Clock::now();
    logits[row] = session.prefill(static_cast<int64_t>(row), prompts[row]);
    for (int64_t token : prompts[row])
      samplers[row].observe(token);
    results[row].promptTokens = static_cast<int64_t>(prompts[row].size());
    results[row].prefillSeconds = secondsSince(start);
  }
  Clock::time_point start = Clock::now();
  std::vector<int64_t> tokens;
  for (size_t row = 0; row < prompts.size(); ++row)
    tokens.push_back(samplers[row].sample(logits[row].data(), samplable));
  decodeSequences(session, pointers, tokens, samplable, options, onToken,
                  results);
  double seconds = secondsSince(start);
  for (GenerationResult &result : results)
    result.decodeSeconds = seconds;
  return results;
}

} // namespace genesis::lm
