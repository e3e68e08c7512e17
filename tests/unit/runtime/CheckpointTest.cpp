//===- CheckpointTest.cpp - Saving and restoring session state ------------===//

#include "PlanTestSupport.h"

#include "runtime/formats/ArrayIO.h"
#include "runtime/session/Checkpoint.h"
#include "runtime/support/Sha256.h"

#include <chrono>
#include <csignal>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace genesis;
using namespace genesis::test;
namespace fs = std::filesystem;

namespace {

PlanFile checkpointPlan(const std::string &modelHash = "mlp-v1",
                        int64_t bigElements = 4) {
  PlanBuilder builder(testHeader(modelHash));
  builder.addTensor("w", DType::F32, {2, 2}, plan::Role::Parameter);
  builder.addTensor("b", DType::F64, {2}, plan::Role::Parameter);
  builder.addTensor("w.exp_avg", DType::F32, {2, 2},
                    plan::Role::OptimizerState);
  builder.addTensor("running_mean", DType::F32, {2}, plan::Role::Buffer);
  builder.addTensor("big", DType::F32, {bigElements}, plan::Role::Parameter);
  builder.addTensor("lr", DType::F32, {}, plan::Role::Lr);
  builder.addTensor("x", DType::F32, {2}, plan::Role::Input);
  builder.addFunction("noop", {}, {});
  return planOf(builder);
}

HostArray filled(DType dtype, std::vector<int64_t> shape, double value) {
  HostArray array(dtype, std::move(shape));
  for (int64_t i = 0; i < array.numel(); ++i)
    array.setDouble(i, value);
  return array;
}

void bindAll(Session &session, double value) {
  session.bind("w", filled(DType::F32, {2, 2}, value));
  session.bind("b", filled(DType::F64, {2}, value + 0.25));
  session.bind("w.exp_avg", filled(DType::F32, {2, 2}, value + 0.5));
  session.bind("running_mean", filled(DType::F32, {2}, value + 0.75));
  const TensorInfo &big = session.tensors()[4];
  session.bind("big", filled(DType::F32, big.shape, value + 1));
}

/// Everything a checkpoint restores, for comparing sessions.
struct Snapshot {
  std::vector<std::vector<uint8_t>> tensors;
  uint64_t step;
  Generator::State rng;

  explicit Snapshot(const Session &session)
      : step(session.step()), rng(session.rngState()) {
    for (const TensorInfo &info : session.tensors())
      if (isCheckpointedRole(info.role)) {
        const HostArray &array = session.tensor(info.name);
        const auto *bytes = static_cast<const uint8_t *>(array.data());
        tensors.emplace_back(bytes, bytes + array.nbytes());
      }
  }
  bool operator==(const Snapshot &other) const {
    return tensors == other.tensors && step == other.step && rng == other.rng;
  }
};

class CheckpointTest : public TempDirTest {
protected:
  /// Saves a checkpoint of a session with distinctive state and returns its
  /// tensors and metadata for tests to tamper with.
  NamedArrays savedArrays(std::map<std::string, std::string> &metadata) {
    Session session(checkpointPlan());
    bindAll(session, 3);
    session.setStep(17);
    session.setRngState({99, 1234});
    saveCheckpoint(session, path("good.safetensors"));
    return loadSafetensors(path("good.safetensors"), &metadata);
  }

  /// The error of loading `arrays` with `metadata` into a fresh session,
  /// which must come out unchanged.
  std::string loadError(const NamedArrays &arrays,
                        const std::map<std::string, std::string> &metadata,
                        const std::string &modelHash = "mlp-v1") {
    saveSafetensors(path("bad.safetensors"), arrays, metadata);
    Session session(checkpointPlan(modelHash));
    bindAll(session, 1);
    Snapshot before(session);
    std::string message =
        errorFrom([&] { loadCheckpoint(session, path("bad.safetensors")); });
    EXPECT_TRUE(Snapshot(session) == before) << "the session changed";
    return message;
  }
};

TEST_F(CheckpointTest, RoundTripRestoresTensorsStepAndRng) {
  Session source(checkpointPlan());
  bindAll(source, 3);
  source.bind("lr", filled(DType::F32, {}, 0.1));
  source.setStep(17);
  source.setRngState({99, 1234});
  saveCheckpoint(source, path("ckpt.safetensors"));

  std::map<std::string, std::string> metadata =
      loadSafetensorsMetadata(path("ckpt.safetensors"));
  EXPECT_EQ(metadata, (std::map<std::string, std::string>{
                          {"genesis.checkpoint_version", "1"},
                          {"genesis.model_hash", "mlp-v1"},
                          {"genesis.step", "17"},
                          {"genesis.rng_seed", "99"},
                          {"genesis.rng_offset", "1234"}}));
  std::vector<std::string> names;
  for (const auto &[name, array] : loadSafetensors(path("ckpt.safetensors")))
    names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{"w", "b", "w.exp_avg",
                                             "running_mean", "big"}))
      << "inputs and learning rates are not checkpointed";

  Session restored(checkpointPlan());
  loadCheckpoint(restored, path("ckpt.safetensors"));
  EXPECT_TRUE(Snapshot(restored) == Snapshot(source));
  EXPECT_EQ(restored.tensor("b").getDouble(1), 3.25);
}

TEST_F(CheckpointTest, MissingTensorLeavesTheSessionUnchanged) {
  std::map<std::string, std::string> metadata;
  NamedArrays arrays = savedArrays(metadata);
  arrays.erase(arrays.begin() + 2);
  EXPECT_TRUE(contains(loadError(arrays, metadata),
                       "checkpoint '" + path("bad.safetensors") +
                           "': missing optimizer_state 'w.exp_avg'"));
}

TEST_F(CheckpointTest, MisshapedTensorLeavesTheSessionUnchanged) {
  std::map<std::string, std::string> metadata;
  NamedArrays arrays = savedArrays(metadata);
  // The last tensor is wrong, so every earlier one passed its check.
  arrays.back().second = HostArray(DType::F32, {5});
  EXPECT_TRUE(contains(loadError(arrays, metadata),
                       "tensor 'big' is f32[5] but the plan declares f32[4]"));
  arrays.back().second = HostArray(DType::F64, {4});
  EXPECT_TRUE(contains(loadError(arrays, metadata),
                       "tensor 'big' is f64[4] but the plan declares f32[4]"));
}

TEST_F(CheckpointTest, UnknownTensorLeavesTheSessionUnchanged) {
  std::map<std::string, std::string> metadata;
  NamedArrays arrays = savedArrays(metadata);
  arrays.emplace_back("x", HostArray(DType::F32, {2}));
  EXPECT_TRUE(contains(loadError(arrays, metadata),
                       "tensor 'x' is not a parameter, optimizer_state or "
                       "buffer tensor of plan file 'test.gplan'"));
}

TEST_F(CheckpointTest, ModelHashMismatch) {
  std::map<std::string, std::string> metadata;
  NamedArrays arrays = savedArrays(metadata);
  EXPECT_TRUE(contains(loadError(arrays, metadata, "mlp-v2"),
                       "it was saved for model hash 'mlp-v1' but plan file "
                       "'test.gplan' has model hash 'mlp-v2'"));
}

TEST_F(CheckpointTest, BadMetadata) {
  std::map<std::string, std::string> metadata;
  NamedArrays arrays = savedArrays(metadata);
  struct Case {
    const char *key;
    const char *value; // nullptr removes the key
    const char *expected;
  };
  const Case cases[] = {
      {"genesis.checkpoint_version", "2",
       "checkpoint version 2 is newer than this runtime supports (version 1)"},
      {"genesis.checkpoint_version", nullptr,
       "metadata has no 'genesis.checkpoint_version'"},
      {"genesis.model_hash", nullptr, "metadata has no 'genesis.model_hash'"},
      {"genesis.step", "12x",
       "metadata 'genesis.step' is '12x', not an unsigned 64-bit number"},
      {"genesis.step", "-1", "not an unsigned 64-bit number"},
      {"genesis.step", "", "not an unsigned 64-bit number"},
      {"genesis.rng_seed", "18446744073709551616",
       "metadata 'genesis.rng_seed' is '18446744073709551616', not an "
       "unsigned 64-bit number"},
      {"genesis.rng_offset", nullptr, "metadata has no 'genesis.rng_offset'"},
  };
  for (const Case &c : cases) {
    std::map<std::string, std::string> changed = metadata;
    if (c.value)
      changed[c.key] = c.value;
    else
      changed.erase(c.key);
    EXPECT_TRUE(contains(loadError(arrays, changed), c.expected)) << c.key;
  }
  std::map<std::string, std::string> largest = metadata;
  largest["genesis.rng_seed"] = "18446744073709551615";
  saveSafetensors(path("max.safetensors"), arrays, largest);
  Session session(checkpointPlan());
  loadCheckpoint(session, path("max.safetensors"));
  EXPECT_EQ(session.rngState().seed, UINT64_MAX);
}

TEST_F(CheckpointTest, CorruptFileLeavesTheSessionUnchanged) {
  std::map<std::string, std::string> metadata;
  savedArrays(metadata);
  std::vector<uint8_t> bytes = readFileBytes(path("good.safetensors"));
  bytes.resize(bytes.size() - 3);
  writeFileBytes(path("cut.safetensors"), bytes);
  Session session(checkpointPlan());
  bindAll(session, 1);
  Snapshot before(session);
  EXPECT_TRUE(contains(
      errorFrom([&] { loadCheckpoint(session, path("cut.safetensors")); }),
      "safetensors file '" + path("cut.safetensors") + "'"));
  EXPECT_TRUE(Snapshot(session) == before);
}

Sha256::Digest fileDigest(const std::string &path) {
  std::vector<uint8_t> bytes = readFileBytes(path);
  return Sha256::digest(bytes.data(), bytes.size());
}

// A process killed while it writes a checkpoint leaves the previous one
// intact: the new bytes only ever go to the temporary file.
TEST_F(CheckpointTest, SaveKilledMidWriteKeepsThePreviousCheckpoint) {
  constexpr int64_t kBigElements = 32 << 20; // 128 MiB
  PlanFile planFile = checkpointPlan("mlp-v1", kBigElements);
  Session session(planFile);
  bindAll(session, 1);
  std::string target = path("ckpt.safetensors");
  saveCheckpoint(session, target);
  Sha256::Digest before = fileDigest(target);

  bindAll(session, 2);
  session.setStep(5);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The parent must get to the kill before the save completes.
    (void)nice(19);
    try {
      saveCheckpoint(session, target);
    } catch (...) {
      _exit(2);
    }
    _exit(0);
  }

  std::string temporary = target + ".tmp." + std::to_string(child);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!fs::exists(temporary) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  bool appeared = fs::exists(temporary);
  kill(child, SIGKILL);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(appeared) << "the child never created " << temporary;
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
      << "the child finished before it was killed";
  // The rename never happened: the temporary file is still there.
  EXPECT_TRUE(fs::exists(temporary));

  EXPECT_EQ(fileDigest(target), before);
  Session restored(planFile);
  loadCheckpoint(restored, target);
  EXPECT_EQ(restored.step(), 0u);
  EXPECT_EQ(restored.tensor("big").getDouble(kBigElements - 1), 2.0);
  EXPECT_EQ(restored.tensor("w").getDouble(0), 1.0);
  fs::remove(temporary);
}

} // namespace
