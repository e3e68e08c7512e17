//===- HuggingFace.cpp - Hugging Face config.json and weights -------------===//

#include "models/common/HuggingFace.h"
#include "runtime/formats/ArrayIO.h"
#include "runtime/formats/AtomicFile.h"
#include "runtime/formats/Json.h"
#include "runtime/support/HostArray.h"
#include "runtime/support/Strings.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <set>

namespace genesis::models::hf {

//===----------------------------------------------------------------------===//
// config.json
//===----------------------------------------------------------------------===//

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

//===----------------------------------------------------------------------===//
// model.safetensors
//===----------------------------------------------------------------------===//

namespace {

bool contains(const std::vector<std::string> &list, const std::string &item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

/// The name HF gives the state_dict key `key`.
std::string hfName(const TensorNames &names, const std::string &key) {
  return contains(names.unprefixed, key) ? key : names.prefix + key;
}

/// The state_dict key of the HF tensor `name` (the inverse of hfName, with
/// the prefix optional).
std::string keyOf(const TensorNames &names, const std::string &name) {
  if (names.prefix.empty() || !startsWith(name, names.prefix))
    return name;
  std::string key = name.substr(names.prefix.size());
  return contains(names.unprefixed, key) ? name : key;
}

/// Every parameter and buffer of `module` by state_dict key.
std::vector<std::pair<std::string, nn::Parameter *>>
tensorsOf(nn::Module &module) {
  auto tensors = module.named_parameters();
  for (auto &named : module.named_buffers())
    tensors.push_back(named);
  return tensors;
}

constexpr const char *kIndexSuffix = ".index.json";

/// The directory part of `path` ("." when it has none).
std::string directoryOf(const std::string &path) {
  std::string parent = std::filesystem::path(path).parent_path().string();
  return parent.empty() ? "." : parent;
}

/// Every tensor of the shards that the index file `path` maps them to.
NamedArrays loadShards(const std::string &path) {
  const std::string where = "checkpoint index '" + path + "'";
  nlohmann::json index = readJsonObject(path, where);
  auto map = index.find("weight_map");
  if (map == index.end() || !map->is_object() || map->empty())
    throw Error(where + ": 'weight_map' is missing or not a non-empty object");
  std::map<std::string, std::set<std::string>> tensorsOfShard;
  for (const auto &[name, file] : map->items()) {
    if (!file.is_string())
      throw Error(where + ": the shard of tensor '" + name +
                  "' is not a file name: " + describeJson(file));
    std::string shard = file.get<std::string>();
    if (shard.empty() || shard == "." || shard == ".." ||
        shard.find('/') != std::string::npos)
      throw Error(where + ": the shard '" + shard + "' of tensor '" + name +
                  "' is not a file name in the index's directory");
    tensorsOfShard[shard].insert(name);
  }
  NamedArrays all;
  const std::string directory = directoryOf(path);
  for (auto &[shard, listed] : tensorsOfShard) {
    const std::string shardPath = directory + "/" + shard;
    for (auto &[name, array] : loadSafetensors(shardPath)) {
      if (!listed.erase(name))
        throw Error("safetensors file '" + shardPath + "': tensor '" + name +
                    "' is not mapped to this shard by " + where);
      all.emplace_back(name, std::move(array));
    }
    if (!listed.empty())
      throw Error(where + ": tensor '" + *listed.begin() +
                  "' is mapped to shard '" + shard +
                  "', which does not hold it");
  }
  return all;
}

} // namespace

std::string weightsFile(const std::string &directory) {
  std::string single = directory + "/model.safetensors";
  std::error_code error;
  if (!std::filesystem::exists(single, error) &&
      std::filesystem::exists(single + kIndexSuffix, error))
    return single + kIndexSuffix;
  return single;
}

void loadWeights(nn::Module &module, const std::string &path,
                 const TensorNames &names) {
  bool sharded = endsWith(path, kIndexSuffix);
  const std::string where =
      (sharded ? "checkpoint index '" : "safetensors file '") + path + "'";
  NamedArrays file = sharded ? loadShards(path) : loadSafetensors(path);

  // The file's tensors by state_dict key, with their names in the file.
  std::map<std::string, std::pair<std::string, HostArray *>> byKey;
  for (auto &[fileName, array] : file) {
    const std::string &name =
        fileName; // lambdas capture variables, not bindings
    if (std::any_of(
            names.ignoredSuffixes.begin(), names.ignoredSuffixes.end(),
            [&](const std::string &end) { return endsWith(name, end); }))
      continue;
    auto [it, inserted] = byKey.try_emplace(keyOf(names, name), name, &array);
    if (!inserted)
      throw Error(where + ": tensors '" + it->second.first + "' and '" + name +
                  "' are the same parameter, with and without the prefix '" +
                  names.prefix + "'");
  }

  // Check everything before anything changes.
  auto expected = tensorsOf(module);
  std::vector<std::string> missing;
  for (auto &[key, parameter] : expected) {
    auto it = byKey.find(key);
    if (it == byKey.end()) {
      missing.push_back(hfName(names, key));
      continue;
    }
    const auto &[name, array] = it->second;
    DType dtype = array->dtype();
    if (dtype != DType::F32 && dtype != DType::F16 && dtype != DType::BF16)
      throw Error(where + ": tensor '" + name + "' has dtype " +
                  dtypeName(dtype) + "; expected f32, f16 or bf16");
    if (array->shape() != parameter->data().shape())
      throw Error(where + ": tensor '" + name + "' has shape " +
                  shapeString(array->shape()) + ", the model expects " +
                  shapeString(parameter->data().shape()));
  }
  if (!missing.empty())
    throw Error(where + ": tensor '" + missing.front() + "' is missing" +
                (missing.size() > 1
                     ? " (and " + std::to_string(missing.size() - 1) + " more)"
                     : ""));
  if (byKey.size() != expected.size())
    for (const auto &[fileKey, entry] : byKey) {
      const std::string &key =
          fileKey; // lambdas capture variables, not bindings
      if (std::none_of(expected.begin(), expected.end(),
                       [&](const auto &named) { return named.first == key; }))
        throw Error(where + ": unexpected tensor '" + entry.first +
                    "' (the model has no parameter '" + key + "')");
    }

  // Half-precision values widen to f32 exactly. All conversions happen
  // before the first assignment, so a failed allocation changes nothing.
  std::vector<HostArray> values;
  values.reserve(expected.size());
  for (auto &[key, parameter] : expected) {
    HostArray &source = *byKey.at(key).second;
    DType dtype = parameter->data().dtype();
    if (source.dtype() == dtype) {
      values.push_back(std::move(source));
      continue;
    }
    values.push_back(source.toFloatType(dtype));
  }
  for (size_t i = 0; i < expected.size(); ++i)
    expected[i].second->data() = std::move(values[i]);
}

void saveWeights(nn::Module &module, const std::string &path,
                 const TensorNames &names, uint64_t maxShardBytes) {
  NamedArrays state = module.state_dict();
  uint64_t total = 0;
  for (auto &named : state) {
    named.first = hfName(names, named.first);
    total += named.second.nbytes();
  }
  const std::string indexPath = path + kIndexSuffix;
  std::error_code error;
  if (maxShardBytes == 0 || total <= maxShardBytes) {
    saveSafetensors(path, state, {{"format", "pt"}});
    std::filesystem::remove(indexPath, error);
    return;
  }
  std::vector<NamedArrays> shards;
  uint64_t filled = 0;
  for (auto &named : state) {
    uint64_t bytes = named.second.nbytes();
    if (shards.empty() || (filled != 0 && filled + bytes > maxShardBytes)) {
      shards.emplace_back();
      filled = 0;
    }
    shards.back().push_back(std::move(named));
    filled += bytes;
  }
  nlohmann::json weightMap = nlohmann::json::object();
  const std::string directory = directoryOf(path);
  for (size_t i = 0; i < shards.size(); ++i) {
    char shard[64];
    std::snprintf(shard, sizeof shard, "model-%05zu-of-%05zu.safetensors",
                  i + 1, shards.size());
    saveSafetensors(directory + "/" + shard, shards[i], {{"format", "pt"}});
    for (const auto &named : shards[i])
      weightMap[named.first] = shard;
  }
  nlohmann::json index = {{"metadata", {{"total_size", total}}},
                          {"weight_map", weightMap}};
  std::string text = index.dump(2) + "\n";
  writeFileAtomically(indexPath, text.data(), text.size());
  std::filesystem::remove(path, error);
}

} // namespace genesis::models::hf
