//===- GenerationTest.cpp - Prefill and decode with a static KV cache -----===//
//
// A generation plan (models/lm) must give, at every position, the logits the
// full-sequence forward gives there: on the reference evaluator (the traced
// @prefill and @decode run one call at a time, the cache threaded between
// them) and on the compiled CPU plan (through GenerationSession, whose
// prefill chunks, pads and sends a lone token through decode). The models
// are the random tiny GPT-2 and Qwen2 (GQA for Qwen2) and
// the Hugging Face golden models of tests/data/hf. Greedy generation with
// repetition_penalty must pick transformers' tokens
// (scripts/golden/hf_generate.py).
//
// Tolerance: max |cached - full| <= 1e-5 max |full| per row. Both sides do
// the same arithmetic per row; only the GEMMs' row counts and the masked
// (exactly zero) attention weights differ.
//
//===----------------------------------------------------------------------===//

#include "models/lm/Generation.h"
#include "dialect/Evaluator/Evaluator.h"
#include "frontend/Trace.h"
#include "models/lm/GenerationCompiler.h"
#include "runtime/plan/PlanFile.h"
#include "runtime/session/Session.h"

#include "tests/unit/TestSupport.h"

#include "gtest/gtest.h"
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>

using namespace genesis;
using namespace genesis::lm;
using genesis::test::contains;
using genesis::test::errorFrom;

namespace {

const std::string kHfDir = GENESIS_TEST_DATA_DIR "/hf/";

std::unique_ptr<CausalLM> makeModel(const std::string &name) {
  if (name == "hf_gpt2")
    return loadCausalLM(kHfDir + "gpt2-tiny");
  if (name == "hf_qwen2")
    return loadCausalLM(kHfDir + "qwen2-tiny");
  std::string random = name == "gpt2" ? "gpt2-tiny" : "qwen2-tiny";
  return randomCausalLM(random, /*seed=*/7);
}

/// `count` ids spread over the vocabulary.
std::vector<int64_t> someTokens(int64_t count, int64_t vocab) {
  std::vector<int64_t> tokens;
  for (int64_t i = 0; i < count; ++i)
    tokens.push_back((37 * i + 11) % vocab);
  return tokens;
}

HostArray idsArray(const std::vector<int64_t> &tokens) {
  return HostArray::fromValues(
      DType::I64, {1, static_cast<int64_t>(tokens.size())}, tokens);
}

/// The full forward's logits [S, vocab] of `tokens`, on the evaluator.
std::vector<std::vector<float>> fullLogits(CausalLM &lm,
                                           const std::vector<int64_t> &tokens) {
  Trace trace("forward");
  trace.bind(lm.model());
  trace.output("logits", lm.model().forward(trace.input(
                             "ids", DType::I64,
                             {1, static_cast<int64_t>(tokens.size())})));
  HostArray logits =
      evaluate(trace.finish(), trace.arguments({{"ids", idsArray(tokens)}}))
          .at(0);
  int64_t vocab = logits.shape()[2];
  std::vector<std::vector<float>> rows;
  for (size_t s = 0; s < tokens.size(); ++s)
    rows.emplace_back(logits.dataAs<float>() + s * vocab,
                      logits.dataAs<float>() + (s + 1) * vocab);
  return rows;
}

void expectRowClose(const std::vector<float> &actual,
                    const std::vector<float> &expected, const std::string &what,
                    double tolerance = 1e-5) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  double scale = 0, worst = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    scale = std::max(scale, std::fabs(double(expected[i])));
    worst = std::max(worst, std::fabs(double(actual[i]) - expected[i]));
  }
  EXPECT_LE(worst, tolerance * scale) << what << ": largest difference "
                                      << worst << " for logits up to " << scale;
}

int64_t argmax(const std::vector<float> &row) {
  return std::max_element(row.begin(), row.end()) - row.begin();
}

/// Runs the traced @prefill and @decode on the evaluator, keeping the cache
/// values between calls as a plan keeps its buffers.
class EvaluatorSteps {
public:
  EvaluatorSteps(CausalLM &lm, const GenerationShape &shape)
      : traces_(traceGeneration(lm, shape)),
        prefillLength_(shape.prefillLength) {}

  /// `tokens` (at most the prefill length) padded with id 0.
  std::vector<float> prefill(std::vector<int64_t> tokens, int64_t position) {
    int64_t last = static_cast<int64_t>(tokens.size()) - 1;
    tokens.resize(prefillLength_, 0);
    return run(*traces_.prefill, {{names::kIds, idsArray(tokens)},
                                  {names::kPosition, scalar(position)},
                                  {names::kLast, scalar(last)}});
  }
  std::vector<float> decode(int64_t token, int64_t position) {
    return run(*traces_.decode, {{names::kToken, idsArray({token})},
                                 {names::kPosition, scalar(position)}});
  }

private:
  static HostArray scalar(int64_t value) {
    return HostArray::fromValues(DType::I64, {}, std::vector<int64_t>{value});
  }

  std::vector<float> run(Trace &trace,
                         const std::map<std::string, HostArray> &inputs) {
    std::vector<HostArray> results =
        evaluate(trace.finish(), trace.arguments(inputs));
    std::vector<std::string> outputNames = trace.output_names();
    std::map<std::string, nn::Parameter *> caches;
    for (auto &[name, buffer] : traces_.caches->named_buffers())
      caches[names::kCachePrefix + name] = buffer;
    std::vector<float> logits;
    for (size_t i = 0; i < results.size(); ++i) {
      if (outputNames[i] == names::kLogits)
        logits.assign(results[i].dataAs<float>(),
                      results[i].dataAs<float>() + results[i].numel());
      else
        caches.at(outputNames[i])->data() = results[i];
    }
    return logits;
  }

  GenerationTraces traces_;
  int64_t prefillLength_;
};

/// The shape every test compiles for.
const GenerationShape kShape = {/*maxLength=*/16, /*prefillLength=*/4};

/// makeModel(name)'s CPU plan for kShape, compiled once per model:
/// compiling the kernels dominates the tests' time.
const std::vector<uint8_t> &cpuPlan(const std::string &name, CausalLM &lm) {
  static std::map<std::string, std::vector<uint8_t>> plans;
  std::vector<uint8_t> &bytes = plans[name];
  if (bytes.empty())
    bytes = compileGeneration(lm, kShape, PlanOptions());
  return bytes;
}

GenerationSession cpuSession(const std::string &name, CausalLM &lm) {
  const std::vector<uint8_t> &bytes = cpuPlan(name, lm);
  Session session(PlanFile::fromBytes(bytes.data(), bytes.size(), name));
  bindParameters(session, lm.model().state_dict(), "the model");
  return GenerationSession(std::move(session));
}

class Generation : public ::testing::TestWithParam<std::string> {};

INSTANTIATE_TEST_SUITE_P(Models, Generation,
                         ::testing::Values("gpt2", "qwen2", "hf_gpt2",
                                           "hf_qwen2"),
                         [](const auto &info) { return info.param; });

//===----------------------------------------------------------------------===//
// Cached steps against the full forward
//===----------------------------------------------------------------------===//

TEST_P(Generation, EvaluatorStepsMatchFullForward) {
  std::unique_ptr<CausalLM> lm = makeModel(GetParam());
  std::vector<int64_t> tokens = someTokens(10, lm->vocabSize());
  std::vector<std::vector<float>> full = fullLogits(*lm, tokens);
  EvaluatorSteps steps(*lm, kShape);
  // A full chunk, a padded one, then one token at a time.
  expectRowClose(steps.prefill({tokens.begin(), tokens.begin() + 4}, 0),
                 full[3], "prefill [0, 4)");
  expectRowClose(steps.prefill({tokens.begin() + 4, tokens.begin() + 6}, 4),
                 full[5], "prefill [4, 6) padded");
  for (int64_t s = 6; s < 10; ++s)
    expectRowClose(steps.decode(tokens[s], s), full[s],
                   "decode " + std::to_string(s));
}

TEST_P(Generation, CpuPlanStepsMatchFullForward) {
  std::unique_ptr<CausalLM> lm = makeModel(GetParam());
  std::vector<int64_t> tokens = someTokens(10, lm->vocabSize());
  std::vector<std::vector<float>> full = fullLogits(*lm, tokens);
  GenerationSession session = cpuSession(GetParam(), *lm);
  EXPECT_EQ(session.maxLength(), 16);
  EXPECT_EQ(session.prefillLength(), 4);
  EXPECT_EQ(session.vocabSize(), lm->vocabSize());
  // Five tokens: one chunk of four and a lone token through decode.
  expectRowClose(session.prefill({tokens.begin(), tokens.begin() + 5}), full[4],
                 "prefill [0, 5)");
  // Two tokens: one padded chunk.
  expectRowClose(session.prefill({tokens.begin() + 5, tokens.begin() + 7}),
                 full[6], "prefill [5, 7)");
  for (int64_t s = 7; s < 10; ++s)
    expectRowClose(session.decode(tokens[s]), full[s],
                   "decode " + std::to_string(s));
  EXPECT_EQ(session.position(), 10);

  // A new conversation overwrites what the cache held.
  session.reset();
  expectRowClose(session.prefill({tokens.begin(), tokens.begin() + 3}), full[2],
                 "prefill [0, 3) after reset");
}

TEST_P(Generation, GreedyGenerationIsArgmaxOfFullForward) {
  std::unique_ptr<CausalLM> lm = makeModel(GetParam());
  GenerationSession session = cpuSession(GetParam(), *lm);
  std::vector<int64_t> prompt = someTokens(3, lm->vocabSize());
  text::Sampler greedy({/*temperature=*/0.0});
  GenerateOptions options;
  options.maxNewTokens = 8;
  GenerationResult result = generate(session, prompt, greedy, options);
  ASSERT_EQ(result.tokens.size(), 8u);
  EXPECT_EQ(result.stopReason, StopReason::MaxNewTokens);
  EXPECT_EQ(result.promptTokens, 3);
  EXPECT_EQ(result.decodeSteps, 7);
  EXPECT_EQ(session.position(), 3 + 7);

  // The model is causal: row i of one full forward over the whole sequence
  // is the forward recomputed on its first i + 1 tokens.
  std::vector<int64_t> sequence = prompt;
  sequence.insert(sequence.end(), result.tokens.begin(),
                  result.tokens.end() - 1);
  std::vector<std::vector<float>> full = fullLogits(*lm, sequence);
  for (size_t j = 0; j < result.tokens.size(); ++j)
    EXPECT_EQ(result.tokens[j], argmax(full[prompt.size() - 1 + j]))
        << "new token " << j;
}

// decode_greedy picks on the device what the host sampler picks from
// decode's logits: the first largest logit among the samplable ids (all of
// them, and a third, so that the largest often lies beyond), step after
// step from one state; a samplable count outside [1, vocab] is refused.
TEST_P(Generation, DeviceGreedyPicksTheSamplersToken) {
  std::unique_ptr<CausalLM> lm = makeModel(GetParam());
  std::vector<int64_t> prompt = someTokens(3, lm->vocabSize());
  for (int64_t samplable : {lm->vocabSize(), lm->vocabSize() / 3}) {
    GenerationSession host = cpuSession(GetParam(), *lm);
    GenerationSession device = cpuSession(GetParam(), *lm);
    ASSERT_TRUE(device.decodesGreedily());
    std::vector<float> logits = host.prefill(prompt);
    device.prefill(prompt);
    text::Sampler sampler({/*temperature=*/0.0});
    int64_t token = sampler.sample(logits.data(), samplable);
    for (int step = 0; step < 6; ++step) {
      int64_t picked = device.decodeGreedy(token, samplable);
      logits = host.decode(token);
      token = sampler.sample(logits.data(), samplable);
      EXPECT_EQ(picked, token)
          << "samplable " << samplable << ", step " << step;
      EXPECT_LT(picked, samplable);
    }
    EXPECT_EQ(device.position(), host.position());
    for (int64_t bad : {int64_t{0}, lm->vocabSize() + 1})
      EXPECT_THROW(device.decodeGreedy(token, bad), Error) << bad;
  }
}

// Every logit NaN (every weight NaN): the device's greedy choice is refused,
// as the host sampler refuses NaN logits, instead of naming some id.
TEST_P(Generation, DeviceGreedyRefusesNonFiniteLogits) {
  std::unique_ptr<CausalLM> lm = makeModel(GetParam());
  const std::vector<uint8_t> &bytes = cpuPlan(GetParam(), *lm);
  Session session(PlanFile::fromBytes(bytes.data(), bytes.size(), "nan"));
  NamedArrays weights = lm->model().state_dict();
  for (auto &[name, array] : weights)
    if (array.dtype() == DType::F32)
      std::fill_n(array.dataAs<float>(), array.numel(), std::nanf(""));
  bindParameters(session, weights, "the model");
  GenerationSession device(std::move(session));
  device.prefill(someTokens(3, lm->vocabSize()));
  EXPECT_TRUE(
      contains(errorFrom([&] { device.decodeGreedy(1, lm->vocabSize()); }),
               "largest logit"));
}

// A plan compiled without decode_greedy (as for a vocabulary beyond 2^24
// ids): decodeGreedy names the missing function, generate() samples on the
// host and picks the tokens of a plan that has it.
TEST(GenerationPlan, WithoutDecodeGreedyDecodesOnTheHost) {
  std::unique_ptr<CausalLM> lm = makeModel("gpt2");
  GenerationTraces traces = traceGeneration(*lm, kShape);
  mlir::FailureOr<std::vector<uint8_t>> bytes =
      compilePlan(traces.prefill->module(), {names::kPrefill, names::kDecode},
                  PlanOptions());
  ASSERT_TRUE(mlir::succeeded(bytes));
  Session session(
      PlanFile::fromBytes(bytes->data(), bytes->size(), "two functions"));
  bindParameters(session, lm->model().state_dict(), "the model");
  GenerationSession hostOnly(std::move(session));
  EXPECT_FALSE(hostOnly.decodesGreedily());
  std::vector<int64_t> prompt = someTokens(3, lm->vocabSize());
  hostOnly.prefill(prompt);
  EXPECT_TRUE(contains(
      errorFrom([&] { hostOnly.decodeGreedy(prompt.back(), lm->vocabSize()); }),
      "no function 'decode_greedy'"));
  hostOnly.reset();
  GenerationSession withGreedy = cpuSession("gpt2", *lm);
  ASSERT_TRUE(withGreedy.decodesGreedily());
  GenerateOptions options;
  options.maxNewTokens = 6;
  text::Sampler hostSampler({/*temperature=*/0.0});
  text::Sampler deviceSampler({/*temperature=*/0.0});
  EXPECT_EQ(generate(hostOnly, prompt, hostSampler, options).tokens,
            generate(withGreedy, prompt, deviceSampler, options).tokens);
}

// transformers' generate() on the Hugging Face tiny models, greedy, with
// repetition_penalty 1.3 (which changes the tokens) and 1.0: the CPU plan
// and the Sampler pick the same 12 new tokens after the same prompt.
TEST(GenerationGoldens, MatchTransformersGreedyWithRepetitionPenalty) {
  for (const std::string name : {"gpt2-tiny", "qwen2-tiny", "qwen2-tiny-v5"}) {
    SCOPED_TRACE(name);
    std::ifstream file(kHfDir + name + "/generate.json");
    nlohmann::json golden = nlohmann::json::parse(
        std::string(std::istreambuf_iterator<char>(file), {}));
    std::unique_ptr<CausalLM> lm = loadCausalLM(kHfDir + name);
    GenerationSession session = cpuSession("golden " + name, *lm);
    auto prompt = golden["prompt"].get<std::vector<int64_t>>();
    ASSERT_EQ(prompt, someTokens(3, lm->vocabSize()));
    ASSERT_EQ(golden["cases"].size(), 2u);
    for (const nlohmann::json &expected : golden["cases"]) {
      double penalty = expected["repetition_penalty"].get<double>();
      SCOPED_TRACE("repetition_penalty " + std::to_string(penalty));
      session.reset();
      text::SamplingOptions sampling;
      sampling.temperature = 0;
      sampling.repetitionPenalty = penalty;
      text::Sampler greedy(sampling);
      GenerateOptions options;
      options.maxNewTokens = 12;
      GenerationResult result = generate(session, prompt, greedy, options);
      EXPECT_EQ(result.tokens,
                expected["new_tokens"].get<std::vector<int64_t>>());
    }
  }
}

//===----------------------------------------------------------------------===//
// The plan
//===----------------------------------------------------------------------===//

/// Checks that both functions of `planFile` read every parameter of `lm` and
/// the caches (the tensor table holds each name once), and that they update
/// the caches in place: kernels write them, no step copies into them.
void expectSharedCachesUpdatedInPlace(const PlanFile &planFile, CausalLM &lm) {
  const plan::Plan &plan = planFile.plan();
  std::map<std::string, uint32_t> tensorIndex;
  for (uint32_t i = 0; i < plan.tensors()->size(); ++i) {
    EXPECT_EQ(tensorIndex.count(planFile.tensorName(i)), 0u)
        << planFile.tensorName(i) << " is in the plan twice";
    tensorIndex[planFile.tensorName(i)] = i;
  }
  std::vector<uint32_t> caches;
  for (auto &[name, index] : tensorIndex)
    if (name.rfind(names::kCachePrefix, 0) == 0) {
      EXPECT_EQ(planFile.tensorRole(index), plan::Role::Buffer) << name;
      EXPECT_EQ(planFile.tensorShape(index),
                (std::vector<int64_t>{1, lm.numKvHeads(), kShape.maxLength,
                                      lm.headDim()}))
          << name;
      caches.push_back(index);
    }
  // A key and a value cache per layer.
  EXPECT_EQ(static_cast<int64_t>(caches.size()), 2 * lm.numLayers());
  auto has = [](const flatbuffers::Vector<uint32_t> *list, uint32_t index) {
    return std::find(list->begin(), list->end(), index) != list->end();
  };
  ASSERT_EQ(plan.functions()->size(), 3u); // prefill, decode, decode_greedy
  for (const plan::Function *function : *plan.functions()) {
    std::string name = function->name()->str();
    for (auto &[parameter, _] : lm.model().named_parameters())
      EXPECT_TRUE(has(function->inputs(), tensorIndex.at(parameter)))
          << name << " does not read " << parameter;
    for (uint32_t cache : caches) {
      EXPECT_TRUE(has(function->inputs(), cache)) << name;
      EXPECT_TRUE(has(function->outputs(), cache)) << name;
    }
    for (const plan::Step *step : *function->steps()) {
      if (const plan::Copy *copy = step->kind_as_Copy()) {
        EXPECT_FALSE(std::count(caches.begin(), caches.end(), copy->dst()))
            << name << " copies into " << planFile.tensorName(copy->dst());
      }
    }
  }
}

TEST(GenerationPlan, FunctionsShareParametersAndUpdateCachesInPlace) {
  for (const char *name : {"gpt2", "qwen2"}) {
    std::unique_ptr<CausalLM> lm = makeModel(name);
    const std::vector<uint8_t> &bytes = cpuPlan(name, *lm);
    expectSharedCachesUpdatedInPlace(
        PlanFile::fromBytes(bytes.data(), bytes.size()), *lm);
  }
}

TEST(GenerationPlan, CudaPlanCompilesAndMatchesWhereAGpuIs) {
  for (const char *name : {"gpt2", "qwen2"}) {
    std::unique_ptr<CausalLM> lm = makeModel(name);
    PlanOptions options;
    options.target = plan::Target::Cuda;
    std::vector<uint8_t> bytes = compileGeneration(*lm, kShape, options);
    PlanFile planFile = PlanFile::fromBytes(bytes.data(), bytes.size());
    EXPECT_EQ(planFile.plan().header()->target(), plan::Target::Cuda);
    expectSharedCachesUpdatedInPlace(planFile, *lm);
    if (!cudaUnavailableReason().empty())
      continue;
    std::vector<int64_t> tokens = someTokens(6, lm->vocabSize());
    std::vector<std::vector<float>> full = fullLogits(*lm, tokens);
    Session session(planFile);
    bindParameters(session, lm->model().state_dict(), "the model");
    GenerationSession generation(std::move(session));
    expectRowClose(generation.prefill({tokens.begin(), tokens.begin() + 3}),
                   full[2], std::string(name) + " cuda prefill");
    for (int64_t s = 3; s < 5; ++s)
      expectRowClose(generation.decode(tokens[s]), full[s],
                     std::string(name) + " cuda decode");
    EXPECT_EQ(generation.decodeGreedy(tokens[5], lm->vocabSize()),
              argmax(full[5]))
        << name << " cuda decode_greedy";
  }
  if (!cudaUnavailableReason().empty())
    GTEST_SKIP() << "compiled; not run: no CUDA device ("
                 << cudaUnavailableReason() << ")";
}

//===----------------------------------------------------------------------===//
// 16-bit weights and KV cache
//===----------------------------------------------------------------------===//

/// Each float parameter and cache buffer of the plan is of `dtype`.
void expectStoredIn(const PlanFile &planFile, DType dtype,
                    const std::string &what) {
  int stored = 0;
  for (uint32_t i = 0; i < planFile.plan().tensors()->size(); ++i) {
    plan::Role role = planFile.tensorRole(i);
    DType type = planFile.tensorDType(i);
    if ((role == plan::Role::Parameter || role == plan::Role::Buffer) &&
        isFloatDType(type)) {
      EXPECT_EQ(type, dtype) << what << ": " << planFile.tensorName(i);
      ++stored;
    }
  }
  EXPECT_GT(stored, 0) << what;
}

// The CPU plan of a model with 16-bit weights keeps them and the cache in
// 16 bits and computes in f32, as the evaluator computes the traced steps
// in f64. Tolerance 2e-3 of the largest logit: a key or value rounded into
// the 16-bit cache can differ by one ulp of its type (2^-8 relative for
// bf16) where the f32 and f64 values straddle a rounding boundary, an
// error the attention's average dilutes.
TEST(GenerationSixteenBit, CpuPlanStepsMatchTheEvaluator) {
  for (auto [name, dtype] :
       {std::pair{"gpt2", DType::BF16}, std::pair{"hf_qwen2", DType::BF16},
        std::pair{"qwen2", DType::F16}}) {
    std::string what = std::string(name) + " " + dtypeName(dtype);
    std::unique_ptr<CausalLM> lm = makeModel(name);
    lm->model().to(dtype);
    EXPECT_EQ(storedDType(*lm), dtype) << what;
    std::vector<int64_t> tokens = someTokens(8, lm->vocabSize());
    EvaluatorSteps steps(*lm, kShape);
    std::vector<uint8_t> bytes = compileGeneration(*lm, kShape, PlanOptions());
    PlanFile planFile = PlanFile::fromBytes(bytes.data(), bytes.size(), name);
    expectStoredIn(planFile, dtype, what);
    Session session(planFile);
    bindParameters(session, lm->model().state_dict(), "the model");
    GenerationSession generation(std::move(session));
    expectRowClose(generation.prefill({tokens.begin(), tokens.begin() + 4}),
                   steps.prefill({tokens.begin(), tokens.begin() + 4}, 0),
                   what + " prefill [0, 4)", 2e-3);
    for (int64_t s = 4; s < 8; ++s)
      expectRowClose(generation.decode(tokens[s]), steps.decode(tokens[s], s),
                     what + " decode " + std::to_string(s), 2e-3);
  }
}

// f32 weights bind to a 16-bit plan rounded to its type, as
// load_state_dict copies them; a model that mixes types is refused.
TEST(GenerationSixteenBit, WeightsConvertWhenBoundAndMixedTypesAreRefused) {
  std::unique_ptr<CausalLM> lm = makeModel("qwen2");
  NamedArrays f32Weights = lm->model().state_dict();
  lm->model().to(DType::BF16);
  std::vector<uint8_t> bytes = compileGeneration(*lm, kShape, PlanOptions());
  Session fromF32(PlanFile::fromBytes(bytes.data(), bytes.size()));
  bindParameters(fromF32, f32Weights, "f32 weights");
  Session fromBf16(PlanFile::fromBytes(bytes.data(), bytes.size()));
  bindParameters(fromBf16, lm->model().state_dict(), "bf16 weights");
  std::vector<int64_t> tokens = someTokens(3, lm->vocabSize());
  GenerationSession a(std::move(fromF32)), b(std::move(fromBf16));
  EXPECT_EQ(a.prefill(tokens), b.prefill(tokens));

  lm->model().named_parameters().front().second->data() =
      f32Weights.front().second;
  EXPECT_TRUE(
      contains(errorFrom([&] { storedDType(*lm); }), "mix f32 and bf16"));

  // f64 weights are not a type generation stores.
  lm->model().to(DType::F64);
  EXPECT_TRUE(contains(errorFrom([&] { storedDType(*lm); }),
                       "weights are f64; generation stores them as f32, bf16 "
                       "or f16"));
}

/// The bf16 cuda plan of `traces`' decode, its parameters and random cache
/// contents in [-1, 1) (as a long conversation leaves them), as
/// CudaDecodeStepCases and CudaBatchedDecodeStepCases compile it.
struct CudaDecodeCase {
  std::vector<uint8_t> plan;
  NamedArrays params;
};

CudaDecodeCase compileCudaDecode(CausalLM &lm, GenerationTraces &traces,
                                 Generator &generator) {
  PlanOptions options;
  options.target = plan::Target::Cuda;
  options.mixedPrecision = "bf16";
  mlir::FailureOr<std::vector<uint8_t>> bytes =
      compilePlan(traces.prefill->module(), {names::kDecode}, options);
  if (mlir::failed(bytes))
    return {};
  CudaDecodeCase decodeCase{std::move(*bytes), lm.model().state_dict()};
  for (auto &[name, buffer] : traces.caches->named_buffers()) {
    HostArray &cache = buffer->data();
    for (int64_t i = 0; i < cache.numel(); ++i)
      cache.setDouble(i, 2 * generator.uniform() - 1);
    decodeCase.params.emplace_back(names::kCachePrefix + name, cache);
  }
  return decodeCase;
}

/// Runs decode on `inputs` on the evaluator, writes the GPU case of output
/// `output` for scripts/gpu/check_cases.py and, where a GPU is, runs the plan
/// and compares within 2e-2 of max(1, |want|).
void checkCudaDecode(const CudaDecodeCase &decodeCase, Trace &decode,
                     const std::map<std::string, HostArray> &inputs,
                     const char *output, const std::string &what) {
  std::vector<HostArray> results =
      evaluate(decode.finish(), decode.arguments(inputs));
  std::vector<std::string> outputs = decode.output_names();
  size_t index =
      std::find(outputs.begin(), outputs.end(), output) - outputs.begin();
  ASSERT_LT(index, results.size()) << what;
  const HostArray &want = results[index];
  test::writeGpuCase(decodeCase.plan, NamedArrays(inputs.begin(), inputs.end()),
                     {{output, want}}, 2e-2, decodeCase.params);
  if (!cudaUnavailableReason().empty())
    return;
  Session session(
      PlanFile::fromBytes(decodeCase.plan.data(), decodeCase.plan.size()));
  for (const auto &[name, array] : decodeCase.params)
    session.bind(name, array);
  const HostArray got = session.run(names::kDecode, inputs).at(output);
  for (int64_t i = 0; i < want.numel(); ++i)
    ASSERT_LE(std::fabs(got.getDouble(i) - want.getDouble(i)),
              2e-2 * std::max(1.0, std::fabs(want.getDouble(i))))
        << what << ", logit " << i;
}

// The decode step of a bf16 generation plan on the GPU against the
// evaluator: every cache length class (one warp's worth, a few hundred, the
// model's 1024 positions), the new token at the first, a middle and the last
// position, every cache row random (rows past the position must not count).
// Cases for scripts/gpu/check_cases.py (GENESIS_GPU_CASES_DIR); here the
// plans compile and keep bf16 weights and caches. Tolerance 2e-2 of
// max(1, |logit|): bf16 GEMMs round their inputs and outputs to 2^-8.
TEST(GenerationSixteenBit, CudaDecodeStepCases) {
  std::unique_ptr<CausalLM> lm = makeModel("qwen2");
  lm->model().to(DType::BF16);
  Generator generator(11);
  for (int64_t maxLength : {16, 200, 1024}) {
    GenerationTraces traces =
        traceGeneration(*lm, {maxLength, /*prefillLength=*/4});
    CudaDecodeCase decodeCase = compileCudaDecode(*lm, traces, generator);
    ASSERT_FALSE(decodeCase.plan.empty()) << "max length " << maxLength;
    expectStoredIn(
        PlanFile::fromBytes(decodeCase.plan.data(), decodeCase.plan.size()),
        DType::BF16, "cuda decode");
    for (int64_t position : {int64_t{0}, maxLength / 2, maxLength - 1})
      checkCudaDecode(
          decodeCase, *traces.decode,
          {{names::kToken, idsArray({(31 * position + 5) % lm->vocabSize()})},
           {names::kPosition,
            HostArray::fromValues(DType::I64, {},
                                  std::vector<int64_t>{position})}},
          names::kLogits,
          "max length " + std::to_string(maxLength) + ", position " +
              std::to_string(position));
  }
  if (!cudaUnavailableReason().empty())
    GTEST_SKIP() << "compiled; cases written for scripts/gpu/check_cases.py "
                    "(GENESIS_GPU_CASES_DIR); not run: no CUDA device ("
                 << cudaUnavailableReason() << ")";
}

//===----------------------------------------------------------------------===//
// Batched plans: several sequences, one cache row each
//===----------------------------------------------------------------------===//

/// A CPU plan of kShape for `batch` sequences.
GenerationSession batchedSession(CausalLM &lm, int64_t batch) {
  GenerationShape shape = kShape;
  shape.batch = batch;
  std::vector<uint8_t> bytes = compileGeneration(lm, shape, PlanOptions());
  Session session(PlanFile::fromBytes(bytes.data(), bytes.size(), "batched"));
  bindParameters(session, lm.model().state_dict(), "the model");
  return GenerationSession(std::move(session));
}

// Prompts of different lengths (one token: a padded prefill chunk; five: two
// chunks) decoded together give each prompt the tokens that generate() gives
// it alone in a plan of batch 1: greedy on the device and on the host, with
// a stop token that ends one sequence early while the others go on, and
// sampling with a temperature (sequence r draws with seed + r). The decode
// logits of every row agree with batch 1's (tolerance as above: the same
// arithmetic per row).
TEST(GenerationBatch, SequencesDecodedTogetherMatchOneAtATime) {
  for (std::string name : {"gpt2", "qwen2"}) {
    std::unique_ptr<CausalLM> lm = makeModel(name);
    GenerationSession batched = batchedSession(*lm, 3);
    GenerationSession single = cpuSession(name, *lm);
    ASSERT_EQ(batched.batch(), 3);
    std::vector<std::vector<int64_t>> prompts = {
        {7}, someTokens(5, lm->vocabSize()), {3, 9}};
    for (bool onDevice : {true, false})
      for (double temperature : {0.0, 0.8}) {
        GenerateOptions options;
        options.maxNewTokens = 6;
        options.greedyOnDevice = onDevice;
        text::SamplingOptions sampling{temperature, 0, 1.0, /*seed=*/11};
        std::string what = name + (onDevice ? ", device" : ", host") +
                           ", temperature " + std::to_string(temperature);
        std::vector<GenerationResult> together =
            generateBatch(batched, prompts, sampling, options);
        ASSERT_EQ(together.size(), prompts.size()) << what;
        for (size_t row = 0; row < prompts.size(); ++row) {
          text::SamplingOptions own = sampling;
          own.seed += row;
          text::Sampler sampler(own);
          single.reset();
          GenerationResult alone =
              generate(single, prompts[row], sampler, options);
          EXPECT_EQ(together[row].tokens, alone.tokens) << what << ", " << row;
          EXPECT_EQ(together[row].decodeSteps, alone.decodeSteps) << what;
          EXPECT_EQ(batched.position(static_cast<int64_t>(row)),
                    single.position())
              << what << ", row " << row;
        }
      }

    // A stop token of sequence 1 ends it; 0 and 2 go on to maxNewTokens.
    GenerateOptions options;
    options.maxNewTokens = 6;
    text::SamplingOptions greedy{0.0};
    std::vector<GenerationResult> free =
        generateBatch(batched, prompts, greedy, options);
    options.stopTokens = {free[1].tokens[1]};
    std::vector<GenerationResult> stopped =
        generateBatch(batched, prompts, greedy, options);
    for (size_t row = 0; row < prompts.size(); ++row) {
      text::Sampler sampler(greedy);
      single.reset();
      GenerationResult alone = generate(single, prompts[row], sampler, options);
      EXPECT_EQ(stopped[row].tokens, alone.tokens) << name << ", row " << row;
      EXPECT_EQ(stopped[row].stopReason, alone.stopReason) << name;
    }
    EXPECT_EQ(stopped[1].stopReason, StopReason::StopToken) << name;

    // Row logits: the three sequences' next tokens decoded together against
    // each decoded alone.
    batched.reset();
    std::vector<int64_t> next;
    for (int64_t row = 0; row < 3; ++row)
      next.push_back(argmax(batched.prefill(row, prompts[row])));
    std::vector<float> rows = batched.decode(next, {true, true, true});
    int64_t vocab = lm->vocabSize();
    for (int64_t row = 0; row < 3; ++row) {
      single.reset();
      single.prefill(prompts[row]);
      expectRowClose(
          {rows.begin() + row * vocab, rows.begin() + (row + 1) * vocab},
          single.decode(next[row]), name + " row " + std::to_string(row));
    }
  }
}

// A batched cuda decode step (bf16 weights and cache, four sequences at
// different positions, random caches) against the evaluator, tolerance
// 2e-2 of max(1, |logit|) as CudaDecodeStepCases: the cases go to
// scripts/gpu/check_cases.py, and run here where a GPU is.
TEST(GenerationBatch, CudaBatchedDecodeStepCases) {
  std::unique_ptr<CausalLM> lm = makeModel("qwen2");
  lm->model().to(DType::BF16);
  Generator generator(13);
  for (int64_t maxLength : {16, 200}) {
    GenerationTraces traces =
        traceGeneration(*lm, {maxLength, /*prefillLength=*/4, /*batch=*/4});
    CudaDecodeCase decodeCase = compileCudaDecode(*lm, traces, generator);
    ASSERT_FALSE(decodeCase.plan.empty()) << "max length " << maxLength;
    std::vector<int64_t> tokens = someTokens(4, lm->vocabSize());
    checkCudaDecode(
        decodeCase, *traces.decode,
        {{names::kToken, HostArray::fromValues(DType::I64, {4, 1}, tokens)},
         {names::kPositions,
          HostArray::fromValues(
              DType::I64, {4},
              std::vector<int64_t>{0, maxLength / 2, maxLength - 1, 3})}},
        names::kBatchLogits, "max length " + std::to_string(maxLength));
  }
  if (!cudaUnavailableReason().empty())
    GTEST_SKIP() << "compiled; cases written for scripts/gpu/check_cases.py "
                    "(GENESIS_GPU_CASES_DIR); not run: no CUDA device ("
                 << cudaUnavailableReason() << ")";
}

// Fewer prompts than rows decode in the first rows; bad batches are errors
// that name the problem, before anything runs.
TEST(GenerationBatch, FewerPromptsAndBadBatchesAreErrors) {
  std::unique_ptr<CausalLM> lm = makeModel("qwen2");
  GenerationSession batched = batchedSession(*lm, 3);
  GenerationSession single = cpuSession("qwen2", *lm);
  text::SamplingOptions greedy{0.0};
  GenerateOptions options;
  options.maxNewTokens = 4;
  std::vector<GenerationResult> two =
      generateBatch(batched, {{5, 6}, {8}}, greedy, options);
  ASSERT_EQ(two.size(), 2u);
  text::Sampler sampler(greedy);
  EXPECT_EQ(two[1].tokens, generate(single, {8}, sampler, options).tokens);
  EXPECT_EQ(batched.position(2), 0);

  EXPECT_TRUE(
      contains(errorFrom([&] {
                 generateBatch(batched, {{1}, {2}, {3}, {4}}, greedy, options);
               }),
               "4 prompts for a plan of batch 3"));
  EXPECT_TRUE(contains(errorFrom([&] {
                         generateBatch(batched, {{1}, {}}, greedy, options);
                       }),
                       "prompt 1 has no tokens"));
  // Every prompt is checked before any row is reset or prefilled.
  batched.reset();
  batched.prefill(0, {1, 2});
  EXPECT_TRUE(contains(
      errorFrom([&] {
        generateBatch(batched, {{1}, {2, lm->vocabSize()}}, greedy, options);
      }),
      "prompt 1: token id " + std::to_string(lm->vocabSize()) +
          " is outside the model's vocabulary"));
  EXPECT_TRUE(contains(errorFrom([&] {
                         generateBatch(batched,
                                       {someTokens(17, lm->vocabSize())},
                                       greedy, options);
                       }),
                       "prompt 0 has 17 tokens, more than the KV cache's 16 "
                       "positions"));
  EXPECT_EQ(batched.position(0), 2);
  EXPECT_TRUE(contains(errorFrom([&] { batched.decodeGreedy(1, 10); }),
                       "decodeGreedy(token, samplable) runs a plan of batch "
                       "1"));
  EXPECT_TRUE(contains(errorFrom([&] { batched.decode(1); }),
                       "decode(token) runs a plan of batch 1; this one "
                       "decodes 3 sequences together"));
  EXPECT_TRUE(contains(errorFrom([&] { batched.prefill(3, {1}); }),
                       "sequence 3 is outside the plan's batch of 3"));
  EXPECT_TRUE(contains(errorFrom([&] {
                         batched.decode({1, 2}, {true, true});
                       }),
                       "2 tokens and 2 activity flags for a plan of 3"));
  batched.reset();
  batched.prefill(1, someTokens(16, lm->vocabSize()));
  EXPECT_TRUE(
      contains(errorFrom([&] {
                 batched.decode({0, 1, 0}, {false, true, false});
               }),
               "the KV cache is full in sequence 1: 16 tokens held + 1 new"));
  EXPECT_TRUE(contains(errorFrom([&] {
                         traceGeneration(*lm, {16, 4, /*batch=*/0});
                       }),
                       "the batch must be positive, got 0"));
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

TEST(GenerationErrors, CacheBeyondMaxLengthIsAnError) {
  std::unique_ptr<CausalLM> lm = makeModel("gpt2");
  GenerationSession session = cpuSession("gpt2", *lm);
  std::vector<int64_t> tokens = someTokens(17, lm->vocabSize());
  EXPECT_TRUE(contains(errorFrom([&] { session.prefill(tokens); }),
                       "generation: the KV cache is full: 0 tokens held + 17 "
                       "new exceed the maximum length 16"));
  EXPECT_EQ(session.position(), 0);
  session.prefill({tokens.begin(), tokens.begin() + 15});
  session.decode(tokens[15]);
  EXPECT_TRUE(contains(errorFrom([&] { session.decode(tokens[16]); }),
                       "16 tokens held + 1 new exceed the maximum length 16"));
  EXPECT_TRUE(contains(errorFrom([&] { session.decode(-1); }),
                       "token id -1 is outside the model's vocabulary"));

  // generate stops when the cache is full instead.
  session.reset();
  text::Sampler sampler({/*temperature=*/1.0, 0, 1.0, /*seed=*/5});
  GenerateOptions options;
  options.maxNewTokens = 100;
  GenerationResult result = generate(
      session, {tokens.begin(), tokens.begin() + 12}, sampler, options);
  EXPECT_EQ(result.stopReason, StopReason::CacheFull);
  // 12 prompt tokens and 4 decoded fill the cache; one more is sampled.
  EXPECT_EQ(result.tokens.size(), 5u);
  EXPECT_EQ(session.position(), 16);
}

TEST(GenerationErrors, StopTokenEndsGeneration) {
  std::unique_ptr<CausalLM> lm = makeModel("qwen2");
  GenerationSession session = cpuSession("qwen2", *lm);
  text::Sampler greedy({0.0});
  GenerateOptions options;
  options.maxNewTokens = 6;
  GenerationResult free = generate(session, {5, 6, 7}, greedy, options);
  session.reset();
  options.stopTokens = {free.tokens[2]};
  GenerationResult stopped = generate(session, {5, 6, 7}, greedy, options);
  EXPECT_EQ(stopped.stopReason, StopReason::StopToken);
  EXPECT_EQ(stopped.tokens,
            std::vector<int64_t>(free.tokens.begin(),
                                 std::find(free.tokens.begin(),
                                           free.tokens.end(), free.tokens[2]) +
                                     1));
  options.maxNewTokens = 0;
  EXPECT_TRUE(
      contains(errorFrom([&] { generate(session, {1}, greedy, options); }),
               "the maximum of new tokens must be at least 1, got 0"));
}

TEST(GenerationErrors, ShapesOutsideTheModelAreErrors) {
  std::unique_ptr<CausalLM> lm = loadCausalLM(kHfDir + "gpt2-tiny");
  EXPECT_TRUE(contains(errorFrom([&] {
                         traceGeneration(*lm, {33, 4});
                       }),
                       "the maximum length 33 must be in [1, 32], the "
                       "positions the gpt2 model was made for"));
  EXPECT_TRUE(contains(errorFrom([&] {
                         traceGeneration(*lm, {16, 17});
                       }),
                       "the prefill length 17 must be in [1, 16]"));
  EXPECT_TRUE(contains(errorFrom([] { randomCausalLM("gpt3", 0); }),
                       "unknown model configuration 'gpt3' (known: "
                       "gpt2-tiny, qwen2-tiny, gpt2-124m, qwen2.5-0.5b)"));
  EXPECT_TRUE(contains(errorFrom([] { loadCausalLM(kHfDir); }),
                       "cannot open '" + kHfDir + "/config.json'"));
}

TEST(GenerationErrors, OtherPlansAreRefused) {
  // A plan with one parameter and a function that does nothing.
  PlanBuilder builder(PlanHeader{});
  uint32_t weight =
      builder.addTensor("wte.weight", DType::F32, {4}, plan::Role::Parameter);
  builder.addFunction("forward", {weight}, {});
  std::vector<uint8_t> bytes = builder.bytes();
  auto load = [&] {
    return Session(
        PlanFile::fromBytes(bytes.data(), bytes.size(), "forward.gplan"));
  };
  EXPECT_TRUE(contains(errorFrom([&] { GenerationSession generation(load()); }),
                       "plan 'forward.gplan' is not a generation plan: it "
                       "has no function 'prefill'"));

  // Plans of the generation functions whose shapes leave nothing to run:
  // caches of no positions, a prefill of no tokens, logits of no ids.
  auto generationPlan = [](int64_t positions, int64_t prefill, int64_t vocab) {
    PlanBuilder plan(PlanHeader{});
    std::vector<uint32_t> inputs = {
        plan.addTensor("cache.layers.0.k", DType::F32, {1, 1, positions, 4},
                       plan::Role::Buffer),
        plan.addTensor("cache.layers.0.v", DType::F32, {1, 1, positions, 4},
                       plan::Role::Buffer),
        plan.addTensor(names::kIds, DType::I64, {1, prefill},
                       plan::Role::Input),
        plan.addTensor(names::kToken, DType::I64, {1, 1}, plan::Role::Input),
        plan.addTensor(names::kPosition, DType::I64, {}, plan::Role::Input),
        plan.addTensor(names::kLast, DType::I64, {}, plan::Role::Input)};
    uint32_t logits = plan.addTensor(names::kLogits, DType::F32, {1, vocab},
                                     plan::Role::Output);
    plan.addFunction(names::kPrefill, inputs, {logits});
    plan.addFunction(names::kDecode, inputs, {logits});
    return plan.bytes();
  };
  for (auto [shape, message] :
       {std::pair{std::array<int64_t, 3>{0, 1, 8}, "its caches hold no "
                                                   "positions"},
        std::pair{std::array<int64_t, 3>{8, 0, 8},
                  "'ids' holds 0 tokens; a prefill runs 1 to the cache's 8"},
        std::pair{std::array<int64_t, 3>{8, 1, 0},
                  "'logits' holds no vocabulary"}}) {
    std::vector<uint8_t> plan = generationPlan(shape[0], shape[1], shape[2]);
    EXPECT_TRUE(contains(errorFrom([&] {
                           GenerationSession generation(
                               Session(PlanFile::fromBytes(
                                   plan.data(), plan.size(), "empty.gplan")));
                         }),
                         std::string("plan 'empty.gplan' is not a generation "
                                     "plan: ") +
                             message))
        << message;
  }

  Session session = load();
  EXPECT_TRUE(contains(
      errorFrom([&] { bindParameters(session, {}, "w.safetensors"); }),
      "'w.safetensors' has no tensor 'wte.weight', a parameter of the plan"));
  bindParameters(session, {{"wte.weight", HostArray(DType::F32, {4})}},
                 "w.safetensors");
}

} // namespace
