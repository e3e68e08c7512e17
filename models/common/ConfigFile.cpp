//===- ConfigFile.cpp - Hugging Face config.json -------------------------===//

#include "models/common/ConfigFile.h"
#include "runtime/formats/AtomicFile.h"
#include "runtime/formats/Json.h"
#include "runtime/support/Error.h"
#include "runtime/support/HostArray.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>

namespace genesis::models::hf {

ConfigFile::ConfigFile(std::string path)
    : path_(std::move(path)), json_(readJsonObject(path_, where())) {}

void ConfigFile::fail(const std::string &key,
                      const std::string &problem) const {
  throw Error(where() + ": '" + key + "' " + problem);
}

void checkModelSize(
    const std::string &where, double parameters, int64_t layers,
    std::initializer_list<std::pair<const char *, int64_t>> sizes) {
  double bytes = 4 * parameters;
  auto memory = static_cast<double>(HostArray::physicalMemoryBytes());
  if (layers <= kMaxLayers && bytes <= memory)
    return;
  std::string keys;
  for (const auto &[key, value] : sizes)
    keys += std::string(keys.empty() ? "" : ", ") + key + " " +
            std::to_string(value);
  char text[160];
  if (layers > kMaxLayers)
    std::snprintf(text, sizeof(text),
                  "%lld layers, more than the %lld a model may have (",
                  static_cast<long long>(layers),
                  static_cast<long long>(kMaxLayers));
  else
    std::snprintf(text, sizeof(text),
                  "the model's %.3g parameters need %.3g bytes in f32, more "
                  "than this machine's %.3g bytes of memory (",
                  parameters, bytes, memory);
  throw Error(where + ": " + text + keys + ")");
}

const nlohmann::json *ConfigFile::find(const std::string &key) const {
  auto it = json_.find(key);
  return it == json_.end() ? nullptr : &*it;
}

int64_t ConfigFile::positiveInt(const std::string &key) const {
  const nlohmann::json *value = find(key);
  if (!value)
    fail(key, "is missing (a required setting)");
  if (!value->is_number_integer() || value->get<int64_t>() < 1 ||
      (value->is_number_unsigned() && value->get<uint64_t>() > INT64_MAX))
    fail(key, "must be a positive integer, got " + describeJson(*value));
  return value->get<int64_t>();
}

int64_t ConfigFile::positiveInt(const std::string &key,
                                int64_t fallback) const {
  return find(key) ? positiveInt(key) : fallback;
}

double ConfigFile::positiveNumber(const std::string &key,
                                  double fallback) const {
  const nlohmann::json *value = find(key);
  if (!value)
    return fallback;
  if (!value->is_number() || !(value->get<double>() > 0))
    fail(key, "must be a positive number, got " + describeJson(*value));
  return value->get<double>();
}

double ConfigFile::probability(const std::string &key, double fallback) const {
  const nlohmann::json *value = find(key);
  if (!value)
    return fallback;
  if (!value->is_number() || !(value->get<double>() >= 0) ||
      !(value->get<double>() < 1))
    fail(key, "must be a probability in [0, 1), got " + describeJson(*value));
  return value->get<double>();
}

bool ConfigFile::flag(const std::string &key, bool fallback) const {
  const nlohmann::json *value = find(key);
  if (!value)
    return fallback;
  if (!value->is_boolean())
    fail(key, "must be true or false, got " + describeJson(*value));
  return value->get<bool>();
}

void ConfigFile::requireDefault(const std::string &key,
                                std::initializer_list<nlohmann::json> supported,
                                const std::string &what) const {
  const nlohmann::json *value = find(key);
  if (!value ||
      std::find(supported.begin(), supported.end(), *value) != supported.end())
    return;
  std::string choices;
  for (const nlohmann::json &choice : supported)
    choices += (choices.empty() ? "" : ", ") + choice.dump();
  fail(key, "is " + describeJson(*value) + ": " + what +
                " (supported: " + choices + ")");
}

double ConfigFile::ropeTheta(double fallback) const {
  std::optional<double> theta;
  std::string thetaKey;
  auto takeTheta = [&](const nlohmann::json &value, const std::string &key) {
    if (!value.is_number() || !(value.get<double>() > 0) ||
        !std::isfinite(value.get<double>()))
      fail(key, "must be a positive number, got " + describeJson(value));
    if (theta && *theta != value.get<double>())
      fail(key, "is " + describeJson(value) + " but '" + thetaKey + "' is " +
                    nlohmann::json(*theta).dump() +
                    ": the file gives two RoPE thetas");
    theta = value.get<double>();
    thetaKey = key;
  };
  if (const nlohmann::json *top = find("rope_theta"))
    takeTheta(*top, "rope_theta");
  // transformers 5 keeps RoPE's settings in rope_parameters; 4.x kept the
  // scaling in rope_scaling, whose type key was "type" before "rope_type".
  for (const char *group : {"rope_parameters", "rope_scaling"}) {
    const nlohmann::json *settings = find(group);
    if (!settings || settings->is_null())
      continue;
    if (!settings->is_object())
      fail(group, "must be an object or null, got " + describeJson(*settings));
    // The type first: a scaled RoPE is named by its type, not by the first
    // of its parameters.
    for (const char *typeKey : {"rope_type", "type"}) {
      auto type = settings->find(typeKey);
      if (type != settings->end() && *type != "default")
        fail(std::string(group) + "." + typeKey,
             "is " + describeJson(*type) +
                 ": only the default RoPE is implemented, without scaling "
                 "(supported: \"default\")");
    }
    for (const auto &[name, value] : settings->items()) {
      std::string key = std::string(group) + "." + name;
      if (name == "rope_theta")
        takeTheta(value, key);
      else if (name != "rope_type" && name != "type" &&
               !(name == "partial_rotary_factor" && value == 1.0))
        fail(key, "is " + describeJson(value) +
                      ": this RoPE setting is not implemented");
    }
  }
  return theta.value_or(fallback);
}

void writeConfigFile(const std::string &path, const nlohmann::json &config) {
  std::string text = config.dump(2) + "\n";
  writeFileAtomically(path, text.data(), text.size());
}

} // namespace genesis::models::hf
