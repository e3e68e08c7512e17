//===- GenerationCompiler.cpp - Compiling language models to generate -----===//

#include "models/lm/GenerationCompiler.h"
#include "dialect/Utils/DiagnosticCapture.h"
#include "models/common/HuggingFace.h"
#include "models/lm/Generation.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <optional>

namespace genesis::lm {

CausalLM::~CausalLM() = default;

namespace {

class Gpt2LM final : public CausalLM {
public:
  explicit Gpt2LM(std::unique_ptr<models::Gpt2> gpt) : gpt_(std::move(gpt)) {}
  std::string modelType() const override { return "gpt2"; }
  nn::Module &model() override { return *gpt_; }
  Tensor forward_cached(const Tensor &ids, const Tensor &position,
                        const Tensor &last,
                        std::vector<nn::KvCache> &caches) override {
    return gpt_->forward_cached(ids, position, last, caches);
  }
  int64_t numLayers() const override { return gpt_->config.n_layer; }
  int64_t numKvHeads() const override { return gpt_->config.n_head; }
  int64_t headDim() const override {
    return gpt_->config.n_embd / gpt_->config.n_head;
  }
  int64_t vocabSize() const override { return gpt_->config.vocab_size; }
  int64_t maxPositions() const override { return gpt_->config.n_positions; }

private:
  std::unique_ptr<models::Gpt2> gpt_;
};

class Qwen2LM final : public CausalLM {
public:
  explicit Qwen2LM(std::unique_ptr<models::Qwen2ForCausalLM> qwen)
      : qwen_(std::move(qwen)) {}
  std::string modelType() const override { return "qwen2"; }
  nn::Module &model() override { return *qwen_; }
  Tensor forward_cached(const Tensor &ids, const Tensor &position,
                        const Tensor &last,
                        std::vector<nn::KvCache> &caches) override {
    return qwen_->forward_cached(ids, position, last, caches);
  }
  int64_t numLayers() const override { return qwen_->config.num_hidden_layers; }
  int64_t numKvHeads() const override {
    return qwen_->config.num_key_value_heads;
  }
  int64_t headDim() const override { return qwen_->config.head_dim(); }
  int64_t vocabSize() const override { return qwen_->config.vocab_size; }
  int64_t maxPositions() const override {
    return qwen_->config.max_position_embeddings;
  }

private:
  std::unique_ptr<models::Qwen2ForCausalLM> qwen_;
};

std::unique_ptr<CausalLM> wrap(std::unique_ptr<models::Gpt2> gpt) {
  gpt->eval();
  return std::make_unique<Gpt2LM>(std::move(gpt));
}

std::unique_ptr<CausalLM> wrap(std::unique_ptr<models::Qwen2ForCausalLM> qwen) {
  qwen->eval();
  return std::make_unique<Qwen2LM>(std::move(qwen));
}

} // namespace

std::unique_ptr<CausalLM> loadCausalLM(const std::string &directory) {
  std::string configPath = directory + "/config.json";
  models::hf::ConfigFile file(configPath);
  const nlohmann::json *type = file.find("model_type");
  std::string modelType =
      type && type->is_string() ? type->get<std::string>() : "";
  if (modelType == "gpt2")
    return wrap(models::loadGpt2(directory));
  if (modelType == "qwen2")
    return wrap(models::loadQwen2(directory));
  throw Error("config file '" + configPath + "': model_type " +
              (modelType.empty() ? std::string("is missing")
                                 : "'" + modelType + "' is not supported") +
              "; generation supports 'gpt2' and 'qwen2'");
}

std::unique_ptr<CausalLM> makeCausalLM(const models::Gpt2Config &config,
                                       Generator &generator) {
  return wrap(std::make_unique<models::Gpt2>(config, generator));
}

std::unique_ptr<CausalLM> makeCausalLM(const models::Qwen2Config &config,
                                       Generator &generator) {
  return wrap(std::make_unique<models::Qwen2ForCausalLM>(config, generator));
}

std::vector<std::string> randomModelNames() {
  return {"gpt2-tiny", "qwen2-tiny", "gpt2-124m", "qwen2.5-0.5b"};
}

std::unique_ptr<CausalLM> randomCausalLM(const std::string &name,
                                         uint64_t seed) {
  Generator generator(seed);
  // Room for the byte tokenizer's 257 ids and a small BPE vocabulary.
  constexpr int64_t kTinyVocabulary = 512;
  if (name == "gpt2-tiny" || name == "gpt2-124m") {
    models::Gpt2Config config;
    if (name == "gpt2-tiny") {
      config.vocab_size = kTinyVocabulary;
      config.n_embd = 64;
      config.n_layer = 2;
      config.n_head = 4;
    }
    return makeCausalLM(config, generator);
  }
  if (name == "qwen2-tiny" || name == "qwen2.5-0.5b") {
    models::Qwen2Config config = models::Qwen2Config::qwen2_5_0_5b();
    if (name == "qwen2-tiny") {
      config = models::Qwen2Config::tiny();
      config.vocab_size = kTinyVocabulary;
      config.max_position_embeddings = 1024;
    }
    return makeCausalLM(config, generator);
  }
  std::string known;
  for (const std::string &known_name : randomModelNames())
    known += (known.empty() ? "" : ", ") + known_name;
  throw Error("unknown model configuration '" + name + "' (known: " + known +
              ")");
}

DType storedDType(CausalLM &lm) {
  std::optional<DType> stored;
  for (auto &[name, parameter] : lm.model().named_parameters()) {
    DType dtype = parameter->data().dtype();
    if (!isFloatDType(dtype))
      continue;
    if (stored && *stored != dtype)
      throw Error("generation: the " + lm.modelType() +
                  " model's parameters mix " + dtypeName(*stored) + " and " +
                  dtypeName(dtype) + " ('" + name +
                  "'); convert the model to one type (Module::to)");
    stored = dtype;
  }
  if (stored && !isGenerationStorageType(*stored))
    throw Error("generation: the " + lm.modelType() + " model's weights are " +
                dtypeName(*stored) +
                "; generation stores them as f32, bf16 "
                "or f16");
  return stored.value_or(DType::F32);
}

namespace {

/// The most ids greedyChoice numbers exactly (as f32).
constexpr int64_t kMaxGreedyVocabulary = int64_t{1} << 24;

/// Ids per chunk of greedyChoice's first maxima: a divisor of `vocab` in
/// [256, 4096] (Qwen2's 151936 = 128 x 1187, GPT-2's 50257 = 29 x 1733),
/// else 1024 with the logits padded to whole chunks.
int64_t greedyChunk(int64_t vocab) {
  for (int64_t chunk = 256; chunk <= 4096; ++chunk)
    if (vocab % chunk == 0)
      return chunk;
  return 1024;
}

/// The greedy choice among each row of `logits` [B, V] f32 restricted to ids
/// below `samplable` (a scalar): the first id of the row's largest logit
/// ([B] i64) and that logit ([B] f32), as the host sampler picks it.
/// Computed as maxima, which a GPU reduces in parallel where an argmax scans
/// a row serially: the largest logit, then the largest negated id holding
/// it (ids are exact in f32 up to 2^24), each over chunks of ids first (a
/// row per chunk; a padding's ids are never samplable), then over the
/// chunks' maxima.
std::pair<Tensor, Tensor> greedyChoice(const Tensor &logits,
                                       const Tensor &samplable) {
  Trace &trace = logits.trace();
  int64_t rows = logits.size(0), vocab = logits.size(1),
          chunk = greedyChunk(vocab);
  if (vocab > kMaxGreedyVocabulary)
    throw Error("generation: a vocabulary of " + std::to_string(vocab) +
                " ids is beyond the 2^24 the greedy choice numbers exactly "
                "in f32");
  int64_t chunks = (vocab + chunk - 1) / chunk;
  Shape chunked = {rows, chunks, chunk};
  Tensor padded = chunks * chunk == vocab
                      ? logits
                      : pad(logits, {0, 0}, {0, chunks * chunk - vocab});
  Tensor ids =
      arange(trace, chunks * chunk, DType::F32).reshape({1, chunks, chunk});
  Tensor minusInfinity = full(trace, chunked, -INFINITY);
  Tensor candidates = where(lt(ids, samplable.to(DType::F32)),
                            padded.reshape(chunked), minusInfinity);
  Tensor best = amax(amax(candidates, {2}, /*keepdim=*/true), {1},
                     /*keepdim=*/true);
  Tensor holders = where(eq(candidates, best), -ids, minusInfinity);
  Tensor first = -amax(amax(holders, {2}), {1});
  return {first.to(DType::I64), best.reshape({rows})};
}

} // namespace

GenerationTraces traceGeneration(CausalLM &lm, const GenerationShape &shape) {
  if (shape.maxLength < 1 || shape.maxLength > lm.maxPositions())
    throw Error("generation: the maximum length " +
                std::to_string(shape.maxLength) + " must be in [1, " +
                std::to_string(lm.maxPositions()) + "], the positions the " +
                lm.modelType() + " model was made for");
  if (shape.prefillLength < 1 || shape.prefillLength > shape.maxLength)
    throw Error("generation: the prefill length " +
                std::to_string(shape.prefillLength) + " must be in [1, " +
                std::to_string(shape.maxLength) + "] (the maximum length)");
  if (shape.batch < 1)
    throw Error("generation: the batch must be positive, got " +
                std::to_string(shape.batch));
  GenerationTraces traces;
  traces.caches = std::make_unique<nn::KvCacheBuffers>(
      lm.numLayers(), shape.batch, lm.numKvHeads(), shape.maxLength,
      lm.headDim(), storedDType(lm));
  bool batched = shape.batch > 1;
  // The functions bind the same parameter and cache names: the plan shares
  // those tensors, and the cache outputs update them in place. A greedy step
  // returns the next token instead of the logits. A batched plan prefills
  // one sequence (cache row `row`) at a time and decodes a token of every
  // sequence at its own position.
  auto traceStep = [&](Trace &trace, const char *idsName, int64_t tokens,
                       bool prefill, bool greedy) {
    // The model computes in f32 from weights stored in their own type.
    trace.bind_cast(lm.model(), DType::F32);
    trace.bind(*traces.caches, names::kCachePrefix);
    // A batched plan's decode runs a row per sequence. Its functions share no
    // input or output of another shape: decode's positions and logits take
    // names of their own.
    bool perRow = batched && !prefill;
    Tensor ids =
        trace.input(idsName, DType::I64, {perRow ? shape.batch : 1, tokens});
    Tensor position =
        perRow ? trace.input(names::kPositions, DType::I64, {shape.batch})
               : trace.input(names::kPosition, DType::I64, {});
    Tensor last = prefill ? trace.input(names::kLast, DType::I64, {})
                          : zeros(trace, {}, DType::I64);
    Tensor row = batched && prefill ? trace.input(names::kRow, DType::I64, {})
                                    : Tensor();
    Tensor samplable =
        greedy ? trace.input(names::kSamplable, DType::I64, {}) : Tensor();
    std::vector<nn::KvCache> caches = traces.caches->caches();
    std::vector<nn::KvCache> used = caches;
    // A batched prefill runs its sequence's cache rows, put back in their
    // place after.
    constexpr Tensor nn::KvCache::*kParts[] = {&nn::KvCache::key,
                                               &nn::KvCache::value};
    if (row.defined())
      for (nn::KvCache &cache : used)
        for (Tensor nn::KvCache::*part : kParts)
          cache.*part = index_select(cache.*part, 0, row.reshape({1}));
    Tensor logits = lm.forward_cached(ids, position, last, used);
    if (row.defined()) {
      Tensor selected =
          eq(arange(trace, shape.batch), row).reshape({shape.batch, 1, 1, 1});
      for (size_t i = 0; i < caches.size(); ++i)
        for (Tensor nn::KvCache::*part : kParts)
          caches[i].*part = where(
              selected, broadcast_to(used[i].*part, (caches[i].*part).shape()),
              caches[i].*part);
    } else {
      caches = used;
    }
    if (greedy) {
      auto [next, best] = greedyChoice(logits, samplable);
      trace.output(names::kNext, next);
      trace.output(names::kBest, best);
    } else {
      trace.output(perRow ? names::kBatchLogits : names::kLogits, logits);
    }
    nn::Module::NamedParameters buffers = traces.caches->named_buffers();
    for (size_t i = 0; i < caches.size(); ++i) {
      trace.output(names::kCachePrefix + buffers[2 * i].first, caches[i].key);
      trace.output(names::kCachePrefix + buffers[2 * i + 1].first,
                   caches[i].value);
    }
    trace.finish();
  };
  traces.prefill = std::make_unique<Trace>(names::kPrefill);
  traceStep(*traces.prefill, names::kIds, shape.prefillLength, true, false);
  traces.decode = std::make_unique<Trace>(names::kDecode, *traces.prefill);
  traceStep(*traces.decode, names::kToken, 1, false, false);
  // The greedy choice numbers ids exactly in f32: a larger vocabulary
  // decodes through decode and the host's sampler.
  if (lm.vocabSize() <= kMaxGreedyVocabulary) {
    traces.decodeGreedy =
        std::make_unique<Trace>(names::kDecodeGreedy, *traces.prefill);
    traceStep(*traces.decodeGreedy, names::kToken, 1, false, true);
  }
  return traces;
}

std::vector<uint8_t> compileGeneration(CausalLM &lm,
                                       const GenerationShape &shape,
                                       const PlanOptions &givenOptions) {
  PlanOptions options = givenOptions;
  DType stored = storedDType(lm);
  // On cuda, GEMMs read 16-bit weights as they are stored; the CPU kernels
  // compute in f32, widening each weight where it is used.
  if (stored != DType::F32 && options.target == plan::Target::Cuda &&
      options.mixedPrecision.empty())
    options.mixedPrecision = dtypeName(stored);
  GenerationTraces traces = traceGeneration(lm, shape);
  DiagnosticCapture capture(&traces.prefill->context());
  mlir::FailureOr<std::vector<uint8_t>> plan = compilePlan(
      traces.prefill->module(),
      traces.decodeGreedy
          ? std::vector<std::string>{names::kPrefill, names::kDecode,
                                     names::kDecodeGreedy}
          : std::vector<std::string>{names::kPrefill, names::kDecode},
      options);
  if (mlir::failed(plan))
    throw Error(capture.firstError("compiling the generation plan failed"));
  return std::move(*plan);
}

} // namespace genesis::lm
