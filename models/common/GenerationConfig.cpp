//===- GenerationConfig.cpp - Hugging Face generation_config.json ---------===//

#include "models/common/GenerationConfig.h"
#include "runtime/formats/Json.h"
#include "runtime/support/Error.h"

#include <cmath>

namespace genesis::text {

namespace {

using Json = nlohmann::json;

/// transformers' GenerationConfig defaults for sampling.
constexpr double kDefaultTemperature = 1.0;
constexpr int64_t kDefaultTopK = 50;
constexpr double kDefaultTopP = 1.0;

class Reader {
public:
  Reader(const Json &root, std::string path)
      : root_(root), path_(std::move(path)) {}

  /// The key's value when present and not null.
  const Json *find(const char *key) const {
    auto it = root_.find(key);
    return it == root_.end() || it->is_null() ? nullptr : &*it;
  }

  [[noreturn]] void fail(const char *key, const std::string &problem) const {
    throw Error(path_ + ": '" + key + "' " + problem + ", got " +
                describeJson(root_.at(key)));
  }

  std::optional<int64_t> integer(const char *key) const {
    const Json *value = find(key);
    if (!value)
      return std::nullopt;
    if (!value->is_number_integer())
      fail(key, "must be an integer");
    return value->get<int64_t>();
  }

  std::optional<double> number(const char *key) const {
    const Json *value = find(key);
    if (!value)
      return std::nullopt;
    if (!value->is_number())
      fail(key, "must be a number");
    return value->get<double>();
  }

  std::optional<bool> boolean(const char *key) const {
    const Json *value = find(key);
    if (!value)
      return std::nullopt;
    if (!value->is_boolean())
      fail(key, "must be true or false");
    return value->get<bool>();
  }

private:
  const Json &root_;
  std::string path_;
};

} // namespace

SamplingOptions GenerationConfig::sampling() const {
  SamplingOptions options;
  options.repetitionPenalty = repetitionPenalty.value_or(1.0);
  if (!doSample) {
    options.temperature = 0;
    return options;
  }
  options.temperature = temperature.value_or(kDefaultTemperature);
  options.topK = topK.value_or(kDefaultTopK);
  options.topP = topP.value_or(kDefaultTopP);
  return options;
}

GenerationConfig loadGenerationConfig(const std::string &path) {
  Json root = readJsonObject(path, "generation config file '" + path + "'");
  Reader read(root, path);
  GenerationConfig config;

  if (const Json *eos = read.find("eos_token_id")) {
    Json ids = eos->is_array() ? *eos : Json::array({*eos});
    for (const Json &id : ids) {
      if (!id.is_number_integer() || id.get<int64_t>() < 0)
        read.fail("eos_token_id",
                  "must be a non-negative integer or a list of them");
      config.eosTokenIds.push_back(id.get<int64_t>());
    }
  }
  config.doSample = read.boolean("do_sample").value_or(false);
  config.temperature = read.number("temperature");
  if (config.temperature &&
      !(*config.temperature >= 0 && std::isfinite(*config.temperature)))
    read.fail("temperature", "must be a finite number of at least 0");
  config.topK = read.integer("top_k");
  if (config.topK && *config.topK < 0)
    read.fail("top_k", "must be at least 0");
  config.topP = read.number("top_p");
  if (config.topP && !(*config.topP > 0 && *config.topP <= 1))
    read.fail("top_p", "must be in (0, 1]");
  config.maxNewTokens = read.integer("max_new_tokens");
  if (config.maxNewTokens && *config.maxNewTokens < 1)
    read.fail("max_new_tokens", "must be at least 1");
  config.repetitionPenalty = read.number("repetition_penalty");
  if (config.repetitionPenalty && !(*config.repetitionPenalty > 0 &&
                                    std::isfinite(*config.repetitionPenalty)))
    read.fail("repetition_penalty", "must be a finite number above 0");

  // Settings transformers applies that change the tokens and that Genesis
  // does not implement, at values that are not their no-op defaults.
  auto differs = [&](const char *key, double neutral) {
    if (std::optional<double> value = read.number(key);
        value && *value != neutral)
      config.unsupported.push_back(std::string(key) + " " +
                                   describeJson(root.at(key)));
  };
  differs("num_beams", 1.0);
  differs("no_repeat_ngram_size", 0.0);
  differs("min_new_tokens", 0.0);
  differs("min_p", 0.0);
  differs("typical_p", 1.0);
  differs("epsilon_cutoff", 0.0);
  differs("eta_cutoff", 0.0);
  differs("encoder_repetition_penalty", 1.0);
  return config;
}

} // namespace genesis::text
