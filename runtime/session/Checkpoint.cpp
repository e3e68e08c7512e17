//===- Checkpoint.cpp - Saving and restoring training state ---------------===//

#include "runtime/session/Checkpoint.h"
#include "runtime/formats/ArrayIO.h"
#include "runtime/support/Error.h"

#include <set>

namespace genesis {

namespace {

constexpr char kVersionKey[] = "genesis.checkpoint_version";
constexpr char kModelHashKey[] = "genesis.model_hash";
constexpr char kStepKey[] = "genesis.step";
constexpr char kRngSeedKey[] = "genesis.rng_seed";
constexpr char kRngOffsetKey[] = "genesis.rng_offset";

std::string checkpointWhere(const std::string &path) {
  return "checkpoint '" + path + "'";
}

/// The metadata value of `key` as an unsigned decimal number.
uint64_t metadataNumber(const std::map<std::string, std::string> &metadata,
                        const char *key, const std::string &where) {
  auto it = metadata.find(key);
  if (it == metadata.end())
    throw Error(where + ": metadata has no '" + key + "'");
  const std::string &text = it->second;
  uint64_t value = 0;
  bool valid = !text.empty() && text.size() <= 20;
  for (char digit : text)
    valid = valid && digit >= '0' && digit <= '9' &&
            !__builtin_mul_overflow(value, 10, &value) &&
            !__builtin_add_overflow(value, uint64_t(digit - '0'), &value);
  if (!valid)
    throw Error(where + ": metadata '" + key + "' is '" + text +
                "', not an unsigned 64-bit number");
  return value;
}

} // namespace

void saveCheckpoint(const Session &session, const std::string &path) {
  NamedArrays arrays;
  for (const TensorInfo &info : session.tensors())
    if (isCheckpointedRole(info.role))
      arrays.emplace_back(info.name, session.tensor(info.name));
  Generator::State rng = session.rngState();
  saveSafetensors(path, arrays,
                  {{kVersionKey, std::to_string(kCheckpointVersion)},
                   {kModelHashKey, session.modelHash()},
                   {kStepKey, std::to_string(session.step())},
                   {kRngSeedKey, std::to_string(rng.seed)},
                   {kRngOffsetKey, std::to_string(rng.offset)}});
}

void loadCheckpoint(Session &session, const std::string &path) {
  std::string where = checkpointWhere(path);
  std::map<std::string, std::string> metadata;
  NamedArrays arrays = loadSafetensors(path, &metadata);

  uint64_t version = metadataNumber(metadata, kVersionKey, where);
  if (version > kCheckpointVersion)
    throw Error(where + ": checkpoint version " + std::to_string(version) +
                " is newer than this runtime supports (version " +
                std::to_string(kCheckpointVersion) + ")");
  auto hash = metadata.find(kModelHashKey);
  if (hash == metadata.end())
    throw Error(where + ": metadata has no '" + kModelHashKey + "'");
  if (hash->second != session.modelHash())
    throw Error(where + ": it was saved for model hash '" + hash->second +
                "' but plan file '" + session.planName() +
                "' has model hash '" + session.modelHash() + "'");
  uint64_t step = metadataNumber(metadata, kStepKey, where);
  Generator::State rng{metadataNumber(metadata, kRngSeedKey, where),
                       metadataNumber(metadata, kRngOffsetKey, where)};

  std::map<std::string, const HostArray *> byName;
  for (const auto &[name, array] : arrays)
    byName[name] = &array;
  std::set<std::string> expected;
  for (const TensorInfo &info : session.tensors()) {
    if (!isCheckpointedRole(info.role))
      continue;
    expected.insert(info.name);
    auto it = byName.find(info.name);
    if (it == byName.end())
      throw Error(where + ": missing " + roleName(info.role) + " '" +
                  info.name + "'");
    const HostArray &array = *it->second;
    if (array.dtype() != info.dtype || array.shape() != info.shape)
      throw Error(where + ": tensor '" + info.name + "' is " +
                  array.typeString() + " but the plan declares " +
                  dtypeName(info.dtype) + shapeString(info.shape));
  }
  for (const auto &[name, array] : arrays)
    if (!expected.count(name))
      throw Error(where + ": tensor '" + name +
                  "' is not a parameter, optimizer_state or buffer tensor of "
                  "plan file '" +
                  session.planName() + "'");

  // Every check has passed; binding verified tensors cannot fail.
  for (const auto &[name, array] : arrays)
    session.bind(name, array);
  session.setStep(step);
  session.setRngState(rng);
}

} // namespace genesis
