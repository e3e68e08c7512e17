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
