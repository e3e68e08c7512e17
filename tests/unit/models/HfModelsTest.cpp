//===- HfModelsTest.cpp - GPT-2 and Qwen2 against Hugging Face ------------===//
//
// tests/data/hf holds a tiny GPT2LMHeadModel (f16 weights, tied head) and a
// tiny Qwen2ForCausalLM (bf16 weights, untied head, 4 heads over 2 KV heads)
// as Hugging Face's save_pretrained wrote them, with input ids and the logits
// transformers computed in f32 (scripts/golden/hf_logits.py). Each model is
// loaded from its directory, its forward traced, and the logits checked on
// the reference evaluator and on the compiled CPU plan.
//
// Tolerance: |genesis - hf| <= 1e-4 + 1e-4 |hf| per logit. Both sides compute
// in f32 from the same weights (the half-precision values widen exactly),
// but in different orders (HF's GEMMs and softmax, the evaluator's ops
// rounded once from f64, the plan's BLAS): each op differs by a few f32 ulps
// and two layers carry that to a few 1e-6 on logits of magnitude ~4 (the
// measured worst differences are printed). A real mistake (a missing bias, a
// RoPE convention, an eps) moves logits by 1e-2 or more.
//
//===----------------------------------------------------------------------===//

#include "dialect/Evaluator/Evaluator.h"
#include "dialect/Utils/DiagnosticCapture.h"
#include "frontend/Trace.h"
#include "models/gpt2/Gpt2.h"
#include "models/qwen2/Qwen2.h"
#include "passes/Passes.h"
#include "runtime/formats/ArrayIO.h"
#include "runtime/plan/PlanFile.h"
#include "runtime/session/Session.h"

#include "../TestSupport.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <unistd.h>

using namespace genesis;
using namespace genesis::models;
using genesis::test::contains;
using genesis::test::errorFrom;
namespace fs = std::filesystem;

namespace {

const std::string kGpt2Dir = GENESIS_TEST_DATA_DIR "/hf/gpt2-tiny";
const std::string kQwen2Dir = GENESIS_TEST_DATA_DIR "/hf/qwen2-tiny";
/// Saved by transformers 5.17.0: RoPE theta 1e6 only under rope_parameters,
/// 6 heads over 3 KV heads, untied head (scripts/golden/hf_logits.py).
const std::string kQwen2V5Dir = GENESIS_TEST_DATA_DIR "/hf/qwen2-tiny-v5";

/// A fresh directory under the test temp dir, removed at the end; several
/// may be alive at once.
class ScratchDir {
public:
  ScratchDir() {
    static int count = 0;
    const auto *test = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = ::testing::TempDir() + "genesis-hf-" + test->name() + "-" +
            std::to_string(::getpid()) + "-" + std::to_string(count++);
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~ScratchDir() { fs::remove_all(path_); }
  const std::string &path() const { return path_; }
  std::string operator/(const std::string &name) const {
    return path_ + "/" + name;
  }

private:
  std::string path_;
};

/// Traces model.forward(ids) as @forward with the output "logits".
void traceForward(Trace &trace, nn::Module &model, const HostArray &ids) {
  trace.bind(model);
  Tensor input = trace.input("ids", DType::I64, ids.shape());
  trace.output("logits", model.forward(input));
  trace.finish();
}

HostArray evaluatorLogits(nn::Module &model, const HostArray &ids) {
  Trace trace("forward");
  traceForward(trace, model, ids);
  return evaluate(trace.finish(), trace.arguments({{"ids", ids}})).at(0);
}

HostArray cpuPlanLogits(nn::Module &model, const HostArray &ids) {
  Trace trace("forward");
  traceForward(trace, model, ids);
  DiagnosticCapture capture(&trace.context());
  mlir::FailureOr<std::vector<uint8_t>> bytes =
      compileCpuPlan(trace.module(), {"forward"});
  if (mlir::failed(bytes))
    throw Error(capture.firstError("compileCpuPlan failed"));
  PlanFile plan = PlanFile::fromBytes(bytes->data(), bytes->size(), "forward");
  Session session(plan);
  for (auto &[name, value] : model.state_dict())
    session.bind(name, value);
  return session.run("forward", {{"ids", ids}}).at("logits");
}

/// Checks every element within 1e-4 + 1e-4 |expected| (see the top of the
/// file) and prints the largest difference.
void expectClose(const HostArray &actual, const HostArray &expected,
                 const std::string &what) {
  ASSERT_EQ(actual.typeString(), expected.typeString()) << what;
  double worst = 0;
  int64_t outside = 0;
  for (int64_t i = 0; i < expected.numel(); ++i) {
    double a = actual.getDouble(i), b = expected.getDouble(i);
    double difference = std::fabs(a - b);
    worst = std::max(worst, difference);
    if (!(difference <= 1e-4 + 1e-4 * std::fabs(b)))
      ++outside;
  }
  std::printf("%s: largest |logit difference| %.3g over %lld logits\n",
              what.c_str(), worst, static_cast<long long>(expected.numel()));
  EXPECT_EQ(outside, 0) << what << ": largest difference " << worst;
}

bool bitIdentical(const HostArray &a, const HostArray &b) {
  return a.sameTypeAs(b) && std::memcmp(a.data(), b.data(), a.nbytes()) == 0;
}

void expectSameState(nn::Module &actual, nn::Module &expected) {
  NamedArrays a = actual.state_dict(), b = expected.state_dict();
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].first, b[i].first);
    EXPECT_TRUE(bitIdentical(a[i].second, b[i].second)) << a[i].first;
  }
}

std::set<std::string> namesIn(const std::string &safetensorsPath) {
  std::set<std::string> names;
  for (const auto &named : loadSafetensors(safetensorsPath))
    names.insert(named.first);
  return names;
}

nlohmann::json readJson(const std::string &path) {
  std::ifstream stream(path);
  return nlohmann::json::parse(stream);
}

void writeText(const std::string &path, const std::string &text) {
  std::ofstream(path) << text;
}

/// `directory`'s config.json after `edit`, in a scratch copy; returns the
/// error reading it gives.
template <typename Read, typename Edit>
std::string configError(const std::string &directory, Read read, Edit edit) {
  ScratchDir scratch;
  nlohmann::json config = readJson(directory + "/config.json");
  edit(config);
  writeText(scratch / "config.json", config.dump());
  return errorFrom([&] { read(scratch / "config.json"); });
}

/// The golden model's tensors after `edit`, written to a scratch file; the
/// error hf::loadWeights gives for it, which must leave `model` as it was.
template <typename Edit>
std::string weightsError(nn::Module &model, const std::string &goldenFile,
                         const hf::TensorNames &names, Edit edit) {
  ScratchDir scratch;
  NamedArrays tensors = loadSafetensors(goldenFile);
  edit(tensors);
  std::string path = scratch / "model.safetensors";
  saveSafetensors(path, tensors, {{"format", "pt"}});
  NamedArrays before = model.state_dict();
  std::string error = errorFrom([&] { hf::loadWeights(model, path, names); });
  EXPECT_TRUE(contains(error, "safetensors file '" + path + "'"));
  NamedArrays after = model.state_dict();
  for (size_t i = 0; i < before.size(); ++i)
    EXPECT_TRUE(bitIdentical(after[i].second, before[i].second))
        << "a failed load changed " << before[i].first;
  return error;
}

NamedArrays::iterator findTensor(NamedArrays &tensors,
                                 const std::string &name) {
  auto it =
      std::find_if(tensors.begin(), tensors.end(),
                   [&](const auto &named) { return named.first == name; });
  EXPECT_NE(it, tensors.end()) << name;
  return it;
}

//===----------------------------------------------------------------------===//
// Logits against transformers
//===----------------------------------------------------------------------===//

TEST(HfModels, Gpt2LogitsMatchTransformers) {
  std::unique_ptr<Gpt2> model = loadGpt2(kGpt2Dir);
  EXPECT_EQ(model->config.n_embd, 32);
  EXPECT_EQ(model->config.n_layer, 2);
  EXPECT_TRUE(model->config.tie_word_embeddings);
  EXPECT_EQ(model->lm_head, nullptr);
  EXPECT_FALSE(model->is_training());
  HostArray ids = loadNpy(kGpt2Dir + "/input_ids.npy");
  HostArray expected = loadNpy(kGpt2Dir + "/logits.npy");
  expectClose(evaluatorLogits(*model, ids), expected, "gpt2 evaluator");
  expectClose(cpuPlanLogits(*model, ids), expected, "gpt2 cpu plan");
}

TEST(HfModels, Qwen2LogitsMatchTransformers) {
  std::unique_ptr<Qwen2ForCausalLM> model = loadQwen2(kQwen2Dir);
  const Qwen2Config &config = model->config;
  EXPECT_EQ(config.hidden_size, 32);
  EXPECT_EQ(config.num_key_value_heads, 2);
  EXPECT_EQ(config.rope_theta, 10000.0);
  EXPECT_FALSE(config.tie_word_embeddings);
  EXPECT_NE(model->lm_head, nullptr);
  EXPECT_EQ(model->num_parameters(), config.parameter_count());
  HostArray ids = loadNpy(kQwen2Dir + "/input_ids.npy");
  HostArray expected = loadNpy(kQwen2Dir + "/logits.npy");
  expectClose(evaluatorLogits(*model, ids), expected, "qwen2 evaluator");
  expectClose(cpuPlanLogits(*model, ids), expected, "qwen2 cpu plan");
}

// A checkpoint saved by current transformers (5.x): before its
// rope_parameters were read, theta silently fell back to 10000 and the logits
// were off by about 2.6.
TEST(HfModels, Qwen2OfTransformers5LogitsMatch) {
  nlohmann::json config = readJson(kQwen2V5Dir + "/config.json");
  ASSERT_FALSE(config.contains("rope_theta")) << "5.x keeps theta nested";
  ASSERT_EQ(config["rope_parameters"]["rope_theta"], 1e6);
  std::unique_ptr<Qwen2ForCausalLM> model = loadQwen2(kQwen2V5Dir);
  EXPECT_EQ(model->config.rope_theta, 1e6);
  EXPECT_EQ(model->config.num_key_value_heads, 3);
  EXPECT_NE(model->lm_head, nullptr);
  HostArray ids = loadNpy(kQwen2V5Dir + "/input_ids.npy");
  HostArray expected = loadNpy(kQwen2V5Dir + "/logits.npy");
  expectClose(evaluatorLogits(*model, ids), expected, "qwen2 5.x evaluator");
  expectClose(cpuPlanLogits(*model, ids), expected, "qwen2 5.x cpu plan");
}

//===----------------------------------------------------------------------===//
// Saving
//===----------------------------------------------------------------------===//

// Saving writes HF's own names (those of save_pretrained's file), f32, and
// the metadata from_pretrained requires; loading that back is bit-identical.
TEST(HfModels, Gpt2SaveLoadRoundTripIsBitIdentical) {
  ScratchDir scratch;
  std::unique_ptr<Gpt2> model = loadGpt2(kGpt2Dir);
  saveGpt2(*model, scratch.path());
  EXPECT_EQ(namesIn(scratch / "model.safetensors"),
            namesIn(kGpt2Dir + "/model.safetensors"));
  std::map<std::string, std::string> metadata;
  for (const auto &[name, array] :
       loadSafetensors(scratch / "model.safetensors", &metadata))
    EXPECT_EQ(array.dtype(), DType::F32) << name;
  EXPECT_EQ(metadata, (std::map<std::string, std::string>{{"format", "pt"}}));
  EXPECT_EQ(readJson(scratch / "config.json")["architectures"][0],
            "GPT2LMHeadModel");

  std::unique_ptr<Gpt2> reloaded = loadGpt2(scratch.path());
  expectSameState(*reloaded, *model);
  EXPECT_EQ(reloaded->config.n_positions, model->config.n_positions);
  EXPECT_EQ(reloaded->config.layer_norm_epsilon,
            model->config.layer_norm_epsilon);
}

TEST(HfModels, Qwen2SaveLoadRoundTripIsBitIdentical) {
  ScratchDir scratch;
  std::unique_ptr<Qwen2ForCausalLM> model = loadQwen2(kQwen2Dir);
  saveQwen2(*model, scratch.path());
  EXPECT_EQ(namesIn(scratch / "model.safetensors"),
            namesIn(kQwen2Dir + "/model.safetensors"));
  std::unique_ptr<Qwen2ForCausalLM> reloaded = loadQwen2(scratch.path());
  expectSameState(*reloaded, *model);
  const Qwen2Config &a = reloaded->config, &b = model->config;
  EXPECT_EQ(a.vocab_size, b.vocab_size);
  EXPECT_EQ(a.intermediate_size, b.intermediate_size);
  EXPECT_EQ(a.num_attention_heads, b.num_attention_heads);
  EXPECT_EQ(a.num_key_value_heads, b.num_key_value_heads);
  EXPECT_EQ(a.max_position_embeddings, b.max_position_embeddings);
  EXPECT_EQ(a.rms_norm_eps, b.rms_norm_eps);
  EXPECT_EQ(a.rope_theta, b.rope_theta);
  EXPECT_EQ(a.tie_word_embeddings, b.tie_word_embeddings);
  EXPECT_EQ(a.attention_bias, b.attention_bias);
}

// Sharded checkpoints, as save_pretrained's max_shard_size writes them:
// shards of at most the size (a larger tensor alone), an index mapping every
// tensor, the single file removed; loading them back is bit-identical, and
// saving unsharded again removes the index.
TEST(HfModels, ShardedCheckpointsRoundTripBitIdentically) {
  ScratchDir scratch;
  std::unique_ptr<Qwen2ForCausalLM> model = loadQwen2(kQwen2Dir);
  saveQwen2(*model, scratch.path());
  uint64_t total = std::filesystem::file_size(scratch / "model.safetensors");
  const uint64_t maxShard = 20000;
  saveQwen2(*model, scratch.path(), maxShard);
  EXPECT_FALSE(std::filesystem::exists(scratch / "model.safetensors"));
  nlohmann::json index = readJson(scratch / "model.safetensors.index.json");
  std::set<std::string> shards, mapped;
  for (const auto &[name, shard] : index["weight_map"].items()) {
    shards.insert(shard.get<std::string>());
    mapped.insert(name);
  }
  EXPECT_EQ(mapped, namesIn(kQwen2Dir + "/model.safetensors"));
  ASSERT_GT(shards.size(), 2u);
  uint64_t payload = 0;
  for (const std::string &shard : shards) {
    EXPECT_TRUE(contains(
        shard, "-of-" +
                   std::string(5 - std::to_string(shards.size()).size(), '0') +
                   std::to_string(shards.size())))
        << shard;
    NamedArrays tensors = loadSafetensors(scratch / shard);
    uint64_t bytes = 0;
    for (const auto &[name, array] : tensors)
      bytes += array.nbytes();
    EXPECT_TRUE(bytes <= maxShard || tensors.size() == 1) << shard;
    payload += bytes;
  }
  EXPECT_EQ(index["metadata"]["total_size"].get<uint64_t>(), payload);
  EXPECT_LT(payload, total);
  EXPECT_EQ(hf::weightsFile(scratch.path()),
            scratch / "model.safetensors.index.json");
  std::unique_ptr<Qwen2ForCausalLM> reloaded = loadQwen2(scratch.path());
  expectSameState(*reloaded, *model);

  saveQwen2(*model, scratch.path());
  EXPECT_FALSE(
      std::filesystem::exists(scratch / "model.safetensors.index.json"));
  expectSameState(*loadQwen2(scratch.path()), *model);
}

// An index is verified before anything is trusted: each shard is a file of
// the index's directory, holds exactly the tensors mapped to it, and the
// model is left as it was.
TEST(HfModels, ShardIndexErrorsNameTheProblem) {
  ScratchDir scratch;
  std::unique_ptr<Qwen2ForCausalLM> model = loadQwen2(kQwen2Dir);
  saveQwen2(*model, scratch.path(), 20000);
  const std::string indexPath = scratch / "model.safetensors.index.json";
  const nlohmann::json index = readJson(indexPath);
  auto errorAfter = [&](auto edit) {
    nlohmann::json edited = index;
    edit(edited);
    writeText(indexPath, edited.dump());
    NamedArrays before = model->state_dict();
    std::string error = errorFrom([&] { hf::loadWeights(*model, indexPath); });
    NamedArrays after = model->state_dict();
    for (size_t i = 0; i < before.size(); ++i)
      EXPECT_TRUE(bitIdentical(after[i].second, before[i].second))
          << "a failed load changed " << before[i].first;
    return error;
  };
  const std::string first = index["weight_map"].begin().key();
  const std::string firstShard = index["weight_map"].begin().value();
  EXPECT_TRUE(contains(
      errorAfter([&](nlohmann::json &j) { j["weight_map"][first] = "../x"; }),
      "checkpoint index '" + indexPath + "': the shard '../x' of tensor '" +
          first + "' is not a file name in the index's directory"));
  EXPECT_TRUE(contains(errorAfter([&](nlohmann::json &j) {
                         j["weight_map"][first] = "missing.safetensors";
                       }),
                       "missing.safetensors"));
  // Shards are read in name order; a tensor mapped to a shard read before
  // its own is reported at that shard.
  std::map<std::string, std::vector<std::string>> tensorsOf;
  for (const auto &[name, shard] : index["weight_map"].items())
    tensorsOf[shard.get<std::string>()].push_back(name);
  const std::string earliest = tensorsOf.begin()->first;
  ASSERT_NE(earliest, firstShard);
  EXPECT_TRUE(contains(
      errorAfter([&](nlohmann::json &j) { j["weight_map"][first] = earliest; }),
      "tensor '" + first + "' is mapped to shard '" + earliest +
          "', which does not hold it"));
  // A tensor a shard holds but the map does not give it.
  auto shared =
      std::find_if(tensorsOf.begin(), tensorsOf.end(),
                   [](const auto &entry) { return entry.second.size() > 1; });
  ASSERT_NE(shared, tensorsOf.end());
  const std::string unlisted = shared->second.front();
  EXPECT_TRUE(contains(
      errorAfter([&](nlohmann::json &j) { j["weight_map"].erase(unlisted); }),
      "safetensors file '" + scratch / shared->first + "': tensor '" +
          unlisted + "' is not mapped to this shard by checkpoint index"));
  EXPECT_TRUE(contains(errorAfter([&](nlohmann::json &j) {
                         j["weight_map"]["extra"] = firstShard;
                       }),
                       "tensor 'extra' is mapped to shard '" + firstShard +
                           "', which does not hold it"));
  EXPECT_TRUE(
      contains(errorAfter([&](nlohmann::json &j) { j["weight_map"] = 3; }),
               "'weight_map' is missing or not a non-empty object"));
  EXPECT_TRUE(contains(
      errorAfter([&](nlohmann::json &j) { j["weight_map"][first] = 7; }),
      "the shard of tensor '" + first + "' is not a file name: 7"));
}

// The other head settings than the golden models': a tied Qwen2 without
// q/k/v bias, an untied GPT-2 ("lm_head.weight" carries no prefix).
TEST(HfModels, OtherHeadAndBiasSettingsRoundTrip) {
  ScratchDir scratch;
  Qwen2Config config = Qwen2Config::tiny();
  config.attention_bias = false;
  Generator generator(3);
  Qwen2ForCausalLM qwen(config, generator);
  EXPECT_EQ(qwen.lm_head, nullptr);
  EXPECT_EQ(qwen.num_parameters(), config.parameter_count());
  saveQwen2(qwen, scratch.path());
  std::set<std::string> names = namesIn(scratch / "model.safetensors");
  EXPECT_EQ(names.count("lm_head.weight"), 0u);
  EXPECT_EQ(names.count("model.layers.0.self_attn.q_proj.bias"), 0u);
  EXPECT_EQ(names.count("model.layers.0.self_attn.q_proj.weight"), 1u);
  std::unique_ptr<Qwen2ForCausalLM> qwenBack = loadQwen2(scratch.path());
  EXPECT_FALSE(qwenBack->config.attention_bias);
  EXPECT_TRUE(qwenBack->config.tie_word_embeddings);
  expectSameState(*qwenBack, qwen);

  Gpt2Config gptConfig;
  gptConfig.vocab_size = 50;
  gptConfig.n_positions = 8;
  gptConfig.n_embd = 16;
  gptConfig.n_layer = 1;
  gptConfig.n_head = 2;
  gptConfig.tie_word_embeddings = false;
  Gpt2 gpt(gptConfig, generator);
  ASSERT_NE(gpt.lm_head, nullptr);
  saveGpt2(gpt, scratch.path());
  names = namesIn(scratch / "model.safetensors");
  EXPECT_EQ(names.count("lm_head.weight"), 1u);
  EXPECT_EQ(names.count("transformer.wte.weight"), 1u);
  std::unique_ptr<Gpt2> gptBack = loadGpt2(scratch.path());
  EXPECT_FALSE(gptBack->config.tie_word_embeddings);
  expectSameState(*gptBack, gpt);
  HostArray ids =
      HostArray::fromValues<int64_t>(DType::I64, {1, 4}, {1, 7, 49, 0});
  EXPECT_TRUE(
      bitIdentical(evaluatorLogits(*gptBack, ids), evaluatorLogits(gpt, ids)));
}

//===----------------------------------------------------------------------===//
// Loading files HF and others write
//===----------------------------------------------------------------------===//

// Older GPT-2 files (OpenAI's own) name tensors without "transformer." and
// hold the causal-mask buffers; both load to the same model.
TEST(HfModels, Gpt2LoadsUnprefixedNamesAndSkipsMaskBuffers) {
  ScratchDir scratch;
  fs::copy_file(kGpt2Dir + "/config.json", scratch / "config.json");
  NamedArrays tensors = loadSafetensors(kGpt2Dir + "/model.safetensors");
  for (auto &named : tensors)
    named.first = named.first.substr(std::string("transformer.").size());
  tensors.emplace_back("h.0.attn.bias", HostArray(DType::F32, {1, 1, 32, 32}));
  tensors.emplace_back("h.0.attn.masked_bias", HostArray(DType::F32, {}));
  saveSafetensors(scratch / "model.safetensors", tensors);
  std::unique_ptr<Gpt2> unprefixed = loadGpt2(scratch.path());
  expectSameState(*unprefixed, *loadGpt2(kGpt2Dir));
}

TEST(HfModels, CorruptWeightsAreClearErrorsAndChangeNothing) {
  std::unique_ptr<Qwen2ForCausalLM> qwen = loadQwen2(kQwen2Dir);
  const std::string qwenFile = kQwen2Dir + "/model.safetensors";
  const hf::TensorNames none;
  const std::string kProj = "model.layers.1.self_attn.k_proj.weight";

  EXPECT_TRUE(contains(
      weightsError(
          *qwen, qwenFile, none,
          [&](NamedArrays &t) {
            findTensor(t, kProj)->second = HostArray(DType::BF16, {16, 31});
          }),
      "tensor '" + kProj + "' has shape [16, 31], the model expects [16, 32]"));
  EXPECT_TRUE(contains(weightsError(*qwen, qwenFile, none,
                                    [&](NamedArrays &t) {
                                      t.erase(
                                          findTensor(t, "model.norm.weight"));
                                      t.erase(findTensor(t, "lm_head.weight"));
                                    }),
                       "tensor 'model.norm.weight' is missing (and 1 more)"));
  EXPECT_TRUE(contains(
      weightsError(*qwen, qwenFile, none,
                   [&](NamedArrays &t) {
                     t.emplace_back("model.layers.0.self_attn.o_proj.bias",
                                    HostArray(DType::F32, {32}));
                   }),
      "unexpected tensor 'model.layers.0.self_attn.o_proj.bias'"));
  EXPECT_TRUE(contains(
      weightsError(*qwen, qwenFile, none,
                   [&](NamedArrays &t) {
                     findTensor(t, "model.norm.weight")->second =
                         HostArray(DType::I64, {32});
                   }),
      "tensor 'model.norm.weight' has dtype i64; expected f32, f16 or bf16"));

  std::unique_ptr<Gpt2> gpt = loadGpt2(kGpt2Dir);
  EXPECT_TRUE(contains(
      weightsError(*gpt, kGpt2Dir + "/model.safetensors", gpt2TensorNames(),
                   [&](NamedArrays &t) {
                     HostArray copy =
                         findTensor(t, "transformer.wte.weight")->second;
                     t.emplace_back("wte.weight", std::move(copy));
                   }),
      "tensors 'transformer.wte.weight' and 'wte.weight' are the same "
      "parameter"));

  // A file cut short is rejected by the safetensors reader, by name.
  ScratchDir scratch;
  fs::copy_file(kQwen2Dir + "/config.json", scratch / "config.json");
  fs::copy_file(qwenFile, scratch / "model.safetensors");
  fs::resize_file(scratch / "model.safetensors", fs::file_size(qwenFile) / 2);
  EXPECT_TRUE(
      contains(errorFrom([&] { loadQwen2(scratch.path()); }),
               "safetensors file '" + scratch / "model.safetensors" + "'"));
  fs::remove(scratch / "model.safetensors");
  EXPECT_TRUE(contains(errorFrom([&] { loadQwen2(scratch.path()); }),
                       "cannot open '" + scratch / "model.safetensors" + "'"));
}

//===----------------------------------------------------------------------===//
// config.json
//===----------------------------------------------------------------------===//

TEST(HfModels, BadQwen2ConfigsAreClearErrors) {
  auto error = [](auto edit) {
    return configError(kQwen2Dir, readQwen2Config, edit);
  };
  using Json = nlohmann::json;
  EXPECT_TRUE(contains(error([](Json &c) { c.erase("hidden_size"); }),
                       "'hidden_size' is missing (a required setting)"));
  EXPECT_TRUE(contains(error([](Json &c) { c["hidden_size"] = "32"; }),
                       "'hidden_size' must be a positive integer, got \"32\""));
  // Every RoPE variant other than the default one, in the keys of
  // transformers 4.x (rope_scaling with "type" or "rope_type") and 5.x
  // (rope_parameters), is named.
  EXPECT_TRUE(
      contains(error([](Json &c) {
                 c["rope_scaling"] = {{"type", "linear"}, {"factor", 2.0}};
               }),
               "'rope_scaling.type' is \"linear\": only the default RoPE is "
               "implemented, without scaling"));
  EXPECT_TRUE(contains(
      error([](Json &c) {
        c["rope_scaling"] = {{"rope_type", "dynamic"}, {"factor", 2.0}};
      }),
      "'rope_scaling.rope_type' is \"dynamic\""));
  EXPECT_TRUE(contains(error([](Json &c) {
                         c["rope_parameters"] = {{"rope_type", "yarn"},
                                                 {"rope_theta", 1e6},
                                                 {"factor", 4.0}};
                       }),
                       "'rope_parameters.rope_type' is \"yarn\""));
  EXPECT_TRUE(contains(error([](Json &c) {
                         c["rope_parameters"] = {
                             {"rope_type", "default"},
                             {"partial_rotary_factor", 0.5}};
                       }),
                       "'rope_parameters.partial_rotary_factor' is 0.5: this "
                       "RoPE setting is not implemented"));
  EXPECT_TRUE(contains(error([](Json &c) { c["rope_parameters"] = 3; }),
                       "'rope_parameters' must be an object or null"));
  // A theta given twice must agree; none is never silently replaced.
  EXPECT_TRUE(contains(
      error([](Json &c) {
        c["rope_theta"] = 10000.0;
        c["rope_parameters"] = {{"rope_type", "default"}, {"rope_theta", 1e6}};
      }),
      "'rope_parameters.rope_theta' is 1000000.0 but "
      "'rope_theta' is 10000.0: the file gives two RoPE "
      "thetas"));
  EXPECT_TRUE(contains(
      error([](Json &c) {
        c["rope_parameters"] = {{"rope_theta", -1}};
      }),
      "'rope_parameters.rope_theta' must be a positive number, got -1"));
  // Sliding windows: 4.x's flag (for layers from max_window_layers on) and
  // 5.x's per-layer kinds.
  EXPECT_TRUE(contains(error([](Json &c) {
                         c["use_sliding_window"] = true;
                         c["max_window_layers"] = 1;
                       }),
                       "'use_sliding_window' is true: sliding-window "
                       "attention is not implemented"));
  EXPECT_TRUE(
      contains(error([](Json &c) {
                 c["layer_types"] = {"full_attention", "sliding_attention"};
               }),
               "'layer_types[1]' is \"sliding_attention\": only "
               "\"full_attention\" is implemented"));
  EXPECT_TRUE(
      contains(error([](Json &c) { c["layer_types"] = {"full_attention"}; }),
               "'layer_types' must list one kind for each of the 2 layers"));
  // A config that is not a file, or nests too deep to print, is an error.
  EXPECT_TRUE(contains(errorFrom([] { readQwen2Config(kQwen2Dir); }),
                       "not a regular file"));
  {
    ScratchDir deep;
    writeText(deep / "config.json",
              std::string(100000, '[') + std::string(100000, ']'));
    EXPECT_TRUE(
        contains(errorFrom([&] { readQwen2Config(deep / "config.json"); }),
                 "nests JSON deeper than 128 levels"));
  }
  EXPECT_TRUE(contains(error([](Json &c) { c["hidden_act"] = "gelu"; }),
                       "'hidden_act' is \"gelu\""));
  EXPECT_TRUE(contains(error([](Json &c) { c["head_dim"] = 16; }),
                       "'head_dim' is 16: a head_dim other than"));
  EXPECT_TRUE(contains(error([](Json &c) { c["num_key_value_heads"] = 3; }),
                       "'num_key_value_heads' (3) must divide "
                       "num_attention_heads (4)"));
  EXPECT_TRUE(contains(error([](Json &c) { c["rms_norm_eps"] = 0; }),
                       "'rms_norm_eps' must be a positive number"));
  EXPECT_TRUE(contains(error([](Json &c) { c["model_type"] = "llama"; }),
                       "'model_type' is \"llama\""));
  // Errors name the file.
  EXPECT_TRUE(
      contains(error([](Json &c) { c.erase("vocab_size"); }), "config file '"));
  // An explicit head_dim equal to hidden_size / num_attention_heads is fine.
  ScratchDir scratch;
  Json config = readJson(kQwen2Dir + "/config.json");
  config["head_dim"] = 8;
  writeText(scratch / "config.json", config.dump());
  EXPECT_EQ(readQwen2Config(scratch / "config.json").head_dim(), 8);
  writeText(scratch / "config.json", "{\"vocab_size\": 256,");
  EXPECT_TRUE(contains(
      errorFrom([&] { readQwen2Config(scratch / "config.json"); }),
      "config file '" + scratch / "config.json" + "' is not valid JSON"));
}

/// The golden Qwen2 directory with its config.json rewritten by `edit`.
template <typename Edit>
void copyQwen2WithConfig(const std::string &directory, Edit edit) {
  nlohmann::json config = readJson(kQwen2Dir + "/config.json");
  edit(config);
  writeText(directory + "/config.json", config.dump());
  fs::copy_file(kQwen2Dir + "/model.safetensors",
                directory + "/model.safetensors");
}

// transformers 5.x writes RoPE's theta only under rope_parameters (and
// layer_types, dtype): the same model must come out, with the same logits.
// Before this was read, such a file silently got theta 10000.
TEST(HfModels, Qwen2ConfigOfTransformers5GivesTheSameLogits) {
  ScratchDir scratch;
  double goldenTheta = readJson(kQwen2Dir + "/config.json")["rope_theta"];
  copyQwen2WithConfig(scratch.path(), [&](nlohmann::json &c) {
    c.erase("rope_theta");
    c.erase("torch_dtype");
    c["rope_parameters"] = {{"rope_theta", goldenTheta},
                            {"rope_type", "default"}};
    c["layer_types"] = {"full_attention", "full_attention"};
    c["dtype"] = "bfloat16";
    c["transformers_version"] = "5.0.0";
  });
  std::unique_ptr<Qwen2ForCausalLM> model = loadQwen2(scratch.path());
  EXPECT_EQ(model->config.rope_theta, goldenTheta);
  HostArray ids = loadNpy(kQwen2Dir + "/input_ids.npy");
  expectClose(evaluatorLogits(*model, ids), loadNpy(kQwen2Dir + "/logits.npy"),
              "qwen2 5.x config");

  // A theta present only under rope_parameters is the one used.
  ScratchDir other;
  copyQwen2WithConfig(other.path(), [](nlohmann::json &c) {
    c.erase("rope_theta");
    c["rope_parameters"] = {{"rope_theta", 1e6}, {"rope_type", "default"}};
  });
  EXPECT_EQ(readQwen2Config(other / "config.json").rope_theta, 1e6);
  // rope_scaling with the default type (4.x) changes nothing.
  ScratchDir older;
  copyQwen2WithConfig(older.path(), [](nlohmann::json &c) {
    c["rope_theta"] = 1e6;
    c["rope_scaling"] = {{"type", "default"}};
  });
  EXPECT_EQ(readQwen2Config(older / "config.json").rope_theta, 1e6);
}

// Genesis writes theta both at the top level (read by transformers 4.x) and
// under rope_parameters (5.x), so either version reads the same model.
TEST(HfModels, Qwen2ConfigIsWrittenForTransformers4And5) {
  ScratchDir scratch;
  Qwen2Config config = Qwen2Config::tiny();
  config.rope_theta = 1e6;
  writeQwen2Config(config, scratch / "config.json");
  nlohmann::json written = readJson(scratch / "config.json");
  EXPECT_EQ(written["rope_theta"], 1e6);
  EXPECT_EQ(written["rope_parameters"]["rope_theta"], 1e6);
  EXPECT_EQ(written["rope_parameters"]["rope_type"], "default");
  EXPECT_EQ(written["layer_types"].size(), 2u);
  EXPECT_EQ(readQwen2Config(scratch / "config.json").rope_theta, 1e6);
}

TEST(HfModels, BadGpt2ConfigsAreClearErrors) {
  auto error = [](auto edit) {
    return configError(kGpt2Dir, readGpt2Config, edit);
  };
  using Json = nlohmann::json;
  EXPECT_TRUE(contains(error([](Json &c) { c.erase("n_embd"); }),
                       "'n_embd' is missing (a required setting)"));
  EXPECT_TRUE(
      contains(error([](Json &c) { c["activation_function"] = "relu"; }),
               "'activation_function' is \"relu\": the MLP uses "
               "GELU's tanh approximation"));
  EXPECT_TRUE(
      contains(error([](Json &c) { c["n_inner"] = 100; }), "'n_inner' is 100"));
  EXPECT_TRUE(contains(
      error([](Json &c) { c["scale_attn_by_inverse_layer_idx"] = true; }),
      "'scale_attn_by_inverse_layer_idx' is true"));
  EXPECT_TRUE(contains(error([](Json &c) { c["n_head"] = 5; }),
                       "'n_head' (5) must divide n_embd (32)"));
  EXPECT_TRUE(contains(error([](Json &c) { c["resid_pdrop"] = 1.5; }),
                       "'resid_pdrop' must be a probability in [0, 1)"));
  EXPECT_TRUE(contains(error([](Json &c) { c["tie_word_embeddings"] = 1; }),
                       "'tie_word_embeddings' must be true or false"));
  // A width whose 4 n_embd would overflow is refused by the size check
  // before the n_inner check computes it (found by reading config_fuzzer's
  // reach; UBSan would abort on the overflow).
  EXPECT_TRUE(contains(error([](Json &c) {
                         c["n_embd"] = int64_t{3000000000000000000};
                         c["n_head"] = 1;
                       }),
                       "n_embd 3000000000000000000"));
  // n_inner = 4 n_embd is what null means.
  ScratchDir scratch;
  Json config = readJson(kGpt2Dir + "/config.json");
  config["n_inner"] = 128;
  writeText(scratch / "config.json", config.dump());
  EXPECT_EQ(readGpt2Config(scratch / "config.json").n_embd, 32);
}

//===----------------------------------------------------------------------===//
// Qwen2.5-0.5B
//===----------------------------------------------------------------------===//

// The published config.json of Qwen/Qwen2.5-0.5B reads as
// Qwen2Config::qwen2_5_0_5b(), whose 494,032,768 parameters are:
//   embed_tokens 151936 x 896                          136,134,656
//   per layer: q 896x896+896, k and v 128x896+128 each,
//              o 896x896, gate/up/down 3 x 896x4864,
//              two norms 2 x 896                        14,912,384
//   24 layers                                          357,897,216
//   final norm                                                 896
// (lm_head is tied). The weights (2 GB in f32) are not allocated: the count
// comes from parameter_count(), which the tests above check against built
// models of other shapes.
TEST(HfModels, Qwen2_5_0_5BConfigAndParameterCount) {
  ScratchDir scratch;
  writeText(scratch / "config.json", R"({
  "architectures": ["Qwen2ForCausalLM"],
  "attention_dropout": 0.0,
  "bos_token_id": 151643,
  "eos_token_id": 151643,
  "hidden_act": "silu",
  "hidden_size": 896,
  "initializer_range": 0.02,
  "intermediate_size": 4864,
  "max_position_embeddings": 32768,
  "max_window_layers": 24,
  "model_type": "qwen2",
  "num_attention_heads": 14,
  "num_hidden_layers": 24,
  "num_key_value_heads": 2,
  "rms_norm_eps": 1e-06,
  "rope_theta": 1000000.0,
  "sliding_window": 32768,
  "tie_word_embeddings": true,
  "torch_dtype": "bfloat16",
  "transformers_version": "4.40.1",
  "use_cache": true,
  "use_sliding_window": false,
  "vocab_size": 151936
})");
  Qwen2Config read = readQwen2Config(scratch / "config.json");
  Qwen2Config expected = Qwen2Config::qwen2_5_0_5b();
  EXPECT_EQ(read.vocab_size, 151936);
  EXPECT_EQ(read.hidden_size, 896);
  EXPECT_EQ(read.intermediate_size, 4864);
  EXPECT_EQ(read.num_hidden_layers, 24);
  EXPECT_EQ(read.num_attention_heads, 14);
  EXPECT_EQ(read.num_key_value_heads, 2);
  EXPECT_EQ(read.head_dim(), 64);
  EXPECT_EQ(read.rope_theta, 1e6);
  EXPECT_EQ(read.rms_norm_eps, 1e-6);
  EXPECT_TRUE(read.tie_word_embeddings);
  EXPECT_TRUE(read.attention_bias);
  EXPECT_EQ(read.parameter_count(), expected.parameter_count());
  EXPECT_EQ(expected.parameter_count(), 494'032'768);

  // parameter_count() agrees with built models: tied or not, with or
  // without bias, and a 0.5B-shaped layer at a small vocabulary.
  for (bool tied : {false, true})
    for (bool bias : {false, true}) {
      Qwen2Config config = Qwen2Config::tiny();
      config.tie_word_embeddings = tied;
      config.attention_bias = bias;
      Generator generator(1);
      EXPECT_EQ(Qwen2ForCausalLM(config, generator).num_parameters(),
                config.parameter_count());
    }
  Qwen2Config oneLayer = expected;
  oneLayer.vocab_size = 8;
  oneLayer.num_hidden_layers = 1;
  Generator generator(1);
  Qwen2ForCausalLM layerModel(oneLayer, generator);
  EXPECT_EQ(layerModel.num_parameters(), oneLayer.parameter_count());
  EXPECT_EQ(layerModel.num_parameters(), 8 * 896 + 14'912'384 + 896);
}

} // namespace
