//===- GenerationConfigTest.cpp - generation_config.json ------------------===//

#include "models/common/GenerationConfig.h"
#include "runtime/support/Error.h"
#include "tests/unit/TestSupport.h"

#include <gtest/gtest.h>

using namespace genesis;
using namespace genesis::text;

namespace {

std::string writeConfig(const std::string &text) {
  return test::writeTempFile("genesis-generation-config", text);
}

std::string errorOf(const std::string &text) {
  try {
    loadGenerationConfig(writeConfig(text));
  } catch (const Error &error) {
    return error.what();
  }
  return "";
}

// Qwen2.5-0.5B-Instruct's generation_config.json as the Hub ships it.
TEST(GenerationConfig, QwenInstructSamplesAndStopsAtBothEnds) {
  GenerationConfig config = loadGenerationConfig(writeConfig(R"({
    "bos_token_id": 151643, "pad_token_id": 151643, "do_sample": true,
    "eos_token_id": [151645, 151643], "repetition_penalty": 1.1,
    "temperature": 0.7, "top_p": 0.8, "top_k": 20,
    "transformers_version": "4.37.0"})"));
  EXPECT_EQ(config.eosTokenIds, (std::vector<int64_t>{151645, 151643}));
  SamplingOptions sampling = config.sampling();
  EXPECT_EQ(sampling.temperature, 0.7);
  EXPECT_EQ(sampling.topK, 20);
  EXPECT_EQ(sampling.topP, 0.8);
  EXPECT_EQ(sampling.repetitionPenalty, 1.1);
  EXPECT_TRUE(config.unsupported.empty());
  // transformers applies the penalty when decoding greedily too; settings
  // Genesis does not apply are listed.
  GenerationConfig greedy = loadGenerationConfig(writeConfig(
      R"({"repetition_penalty": 1.3, "num_beams": 4, "no_repeat_ngram_size": 3})"));
  EXPECT_EQ(greedy.sampling().temperature, 0.0);
  EXPECT_EQ(greedy.sampling().repetitionPenalty, 1.3);
  EXPECT_EQ(greedy.unsupported, (std::vector<std::string>{
                                    "num_beams 4", "no_repeat_ngram_size 3"}));
}

// GPT-2's: one eos id, no do_sample (transformers decodes greedily), and
// transformers' sampling defaults when do_sample is set without values.
TEST(GenerationConfig, DefaultsAreTransformers) {
  GenerationConfig gpt2 = loadGenerationConfig(writeConfig(
      R"({"bos_token_id": 50256, "eos_token_id": 50256, "max_new_tokens": 7})"));
  EXPECT_EQ(gpt2.eosTokenIds, (std::vector<int64_t>{50256}));
  EXPECT_EQ(gpt2.sampling().temperature, 0.0);
  EXPECT_EQ(gpt2.maxNewTokens, 7);
  EXPECT_TRUE(gpt2.unsupported.empty());
  GenerationConfig sampled = loadGenerationConfig(
      writeConfig(R"({"do_sample": true, "top_k": null})"));
  EXPECT_EQ(sampled.sampling().temperature, 1.0);
  EXPECT_EQ(sampled.sampling().topK, 50);
  EXPECT_EQ(sampled.sampling().topP, 1.0);
  EXPECT_TRUE(sampled.eosTokenIds.empty());
}

TEST(GenerationConfig, BadValuesNameTheFileAndKey) {
  EXPECT_NE(errorOf(R"([1, 2])").find("is not a JSON object"),
            std::string::npos);
  EXPECT_NE(errorOf(R"({"eos_token_id": "x"})")
                .find("'eos_token_id' must be a non-negative integer"),
            std::string::npos);
  EXPECT_NE(errorOf(R"({"eos_token_id": [1, -2]})").find("'eos_token_id'"),
            std::string::npos);
  EXPECT_NE(errorOf(R"({"do_sample": 1})").find("'do_sample' must be true"),
            std::string::npos);
  EXPECT_NE(errorOf(R"({"temperature": -1})").find("'temperature'"),
            std::string::npos);
  EXPECT_NE(errorOf(R"({"top_p": 0})").find("'top_p' must be in (0, 1]"),
            std::string::npos);
  EXPECT_NE(errorOf(R"({"top_k": -3})").find("'top_k' must be at least 0"),
            std::string::npos);
  EXPECT_NE(errorOf(R"({"max_new_tokens": 0})").find("'max_new_tokens'"),
            std::string::npos);
  EXPECT_NE(errorOf(R"({"repetition_penalty": 0})")
                .find("'repetition_penalty' must be a finite number above 0"),
            std::string::npos);
  EXPECT_NE(errorOf("{\"eos_token_id\": ").find("is not valid JSON"),
            std::string::npos);
  std::string missing = "/nonexistent/generation_config.json";
  EXPECT_THROW(loadGenerationConfig(missing), Error);
}

} // namespace
