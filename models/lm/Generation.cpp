//===- Generation.cpp - Text generation from a compiled plan --------------===//

#include "models/lm/Generation.h"
#include "runtime/support/Error.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <map>

namespace genesis::lm {

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

HostArray scalar(int64_t value) {
  return HostArray::fromValues(DType::I64, {}, std::vector<int64_t>{value});
}

std::vector<float> logitsOf(const std::map<std::string, HostArray> &outputs) {
  const HostArray &logits = outputs.at(names::kLogits);
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
  auto expect = [&](const char *name, plan::Role role, DType dtype,
                    size_t rank) -> const std::vector<int64_t> & {
    auto it = byName.find(name);
    if (it == byName.end())
      fail(std::string("it has no tensor '") + name + "'");
    const TensorInfo &tensor = *it->second;
    if (tensor.role != role || tensor.dtype != dtype ||
        tensor.shape.size() != rank || (rank > 0 && tensor.shape[0] != 1))
      fail("'" + tensor.name + "' is a " + roleName(tensor.role) + " " +
           dtypeName(tensor.dtype) + shapeString(tensor.shape) +
           ", expected a " + roleName(role) + " " + dtypeName(dtype) +
           " of rank " + std::to_string(rank) + " and batch 1");
    return tensor.shape;
  };
  prefillLength_ = expect(names::kIds, plan::Role::Input, DType::I64, 2)[1];
  if (expect(names::kToken, plan::Role::Input, DType::I64, 2)[1] != 1)
    fail("'token' must be [1, 1]");
  expect(names::kPosition, plan::Role::Input, DType::I64, 0);
  expect(names::kLast, plan::Role::Input, DType::I64, 0);
  vocabSize_ = expect(names::kLogits, plan::Role::Output, DType::F32, 2)[1];
  greedyDecode_ = std::find(functions.begin(), functions.end(),
                            names::kDecodeGreedy) != functions.end();
  if (greedyDecode_) {
    expect(names::kSamplable, plan::Role::Input, DType::I64, 0);
    expect(names::kNext, plan::Role::Output, DType::I64, 1);
    expect(names::kBest, plan::Role::Output, DType::F32, 1);
  }

  if (caches.empty() || caches.size() % 2 != 0)
    fail("it needs one key and one value cache buffer per layer ('" +
         std::string(names::kCachePrefix) + "...'), found " +
         std::to_string(caches.size()));
  DType cacheType = caches.front()->dtype;
  for (const TensorInfo *cache : caches) {
    if (cache->dtype != cacheType || !isGenerationStorageType(cacheType) ||
        cache->shape.size() != 4 || cache->shape[0] != 1 ||
        cache->shape != caches.front()->shape)
      fail("cache buffer '" + cache->name + "' is " + dtypeName(cache->dtype) +
           shapeString(cache->shape) +
           "; every cache must be [1, Hkv, maxLength, D] of one shape and "
           "one type, f32, bf16 or f16");
    session_.bind(cache->name, HostArray(cacheType, cache->shape));
  }
  maxLength_ = caches.front()->shape[2];
}

void GenerationSession::check(const std::vector<int64_t> &tokens) const {
  if (tokens.empty())
    throw Error("generation: no tokens to run");
  for (int64_t token : tokens)
    if (token < 0 || token >= vocabSize_)
      throw Error("generation: token id " + std::to_string(token) +
                  " is outside the model's vocabulary [0, " +
                  std::to_string(vocabSize_) + ")");
  if (position_ + static_cast<int64_t>(tokens.size()) > maxLength_)
    throw Error(
        "generation: the KV cache is full: " + std::to_string(position_) +
        " tokens held + " + std::to_string(tokens.size()) +
        " new exceed the maximum " + "length " + std::to_string(maxLength_));
}

std::vector<float>
GenerationSession::prefill(const std::vector<int64_t> &tokens) {
  check(tokens);
  std::vector<float> logits;
  for (size_t first = 0; first < tokens.size();
       first += static_cast<size_t>(prefillLength_)) {
    int64_t count = std::min<int64_t>(
        prefillLength_, static_cast<int64_t>(tokens.size() - first));
    if (count == 1 && prefillLength_ > 1)
      return decode(tokens[first]);
    // Padding (id 0) fills the chunk: its keys and values land at positions
    // that later tokens overwrite before anything attends to them.
    HostArray ids(DType::I64, {1, prefillLength_});
    std::memcpy(ids.data(), tokens.data() + first, count * sizeof(int64_t));
    logits = logitsOf(
        session_.run(names::kPrefill, {{names::kIds, std::move(ids)},
                                       {names::kPosition, scalar(position_)},
                                       {names::kLast, scalar(count - 1)}}));
    position_ += count;
  }
  return logits;
}

std::vector<float> GenerationSession::decode(int64_t token) {
  check({token});
  auto logits = logitsOf(session_.run(
      names::kDecode,
      {{names::kToken,
        HostArray::fromValues(DType::I64, {1, 1}, std::vector<int64_t>{token})},
       {names::kPosition, scalar(position_)}}));
  ++position_;
  return logits;
}

int64_t GenerationSession::decodeGreedy(int64_t token, int64_t samplable) {
  check({token});
  if (!greedyDecode_)
    throw Error("plan '" + session_.planName() + "' has no function '" +
                names::kDecodeGreedy + "'");
  if (samplable < 1 || samplable > vocabSize_)
    throw Error("generation: " + std::to_string(samplable) +
                " samplable tokens, expected 1 to the vocabulary's " +
                std::to_string(vocabSize_));
  std::map<std::string, HostArray> outputs = session_.run(
      names::kDecodeGreedy,
      {{names::kToken,
        HostArray::fromValues(DType::I64, {1, 1}, std::vector<int64_t>{token})},
       {names::kPosition, scalar(position_)},
       {names::kSamplable, scalar(samplable)}});
  ++position_;
  float best = outputs.at(names::kBest).dataAs<float>()[0];
  if (std::isnan(best) || std::isinf(best))
    throw Error("sampling: the largest logit is " + std::to_string(best) +
                " (a NaN or an infinite logit, or every logit -inf)");
  return outputs.at(names::kNext).dataAs<int64_t>()[0];
}

GenerationResult generate(GenerationSession &session,
                          const std::vector<int64_t> &prompt,
                          text::Sampler &sampler,
                          const GenerateOptions &options,
                          const std::function<void(int64_t)> &onToken) {
  if (options.maxNewTokens < 1)
    throw Error("generation: the maximum of new tokens must be at least 1, "
                "got " +
                std::to_string(options.maxNewTokens));
  int64_t samplable =
      options.samplableTokens > 0
          ? std::min(options.samplableTokens, session.vocabSize())
          : session.vocabSize();
  GenerationResult result;
  result.promptTokens = static_cast<int64_t>(prompt.size());
  Clock::time_point start = Clock::now();
  std::vector<float> logits = session.prefill(prompt);
  for (int64_t token : prompt)
    sampler.observe(token);
  result.prefillSeconds = secondsSince(start);

  // Greedy decoding without a repetition penalty picks each token on the
  // device (decode_greedy): the same token the sampler picks from the
  // logits, which then never cross to the host.
  const text::SamplingOptions &sampling = sampler.options();
  bool onDevice = options.greedyOnDevice && session.decodesGreedily() &&
                  sampling.temperature == 0 && sampling.repetitionPenalty == 1;
  start = Clock::now();
  int64_t token = sampler.sample(logits.data(), samplable);
  while (true) {
    result.tokens.push_back(token);
    if (onToken)
      onToken(token);
    if (std::find(options.stopTokens.begin(), options.stopTokens.end(),
                  token) != options.stopTokens.end()) {
      result.stopReason = StopReason::StopToken;
      break;
    }
    if (static_cast<int64_t>(result.tokens.size()) == options.maxNewTokens) {
      result.stopReason = StopReason::MaxNewTokens;
      break;
    }
    if (session.position() == session.maxLength()) {
      result.stopReason = StopReason::CacheFull;
      break;
    }
    if (onDevice) {
      token = session.decodeGreedy(token, samplable);
      sampler.observe(token);
    } else {
      logits = session.decode(token);
      token = sampler.sample(logits.data(), samplable);
    }
    ++result.decodeSteps;
  }
  result.decodeSeconds = secondsSince(start);
  return result;
}

} // namespace genesis::lm
