//===- plan_loader_fuzzer.cpp - libFuzzer target for .gplan loading -------===//
//
// Each input is tried twice: as a whole file, and as a bare FlatBuffers
// payload wrapped in a correct container (otherwise nearly every mutation
// would stop at the content hash and the verifier would never be reached).
// Loading may only ever throw genesis::Error. A plan the loader accepts must
// be describable, and, when it has no kernel images (which would run
// arbitrary code) and is small, must run every function without a memory
// error: that is the guarantee the verifier exists to give.
//
//===----------------------------------------------------------------------===//

#include "runtime/plan/PlanFile.h"
#include "runtime/session/Session.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <sstream>

using namespace genesis;

namespace {

constexpr uint64_t kMaxBytes = 1 << 20;
constexpr uint64_t kMaxGemmWork = 1 << 20;

/// Small enough to execute within a fuzzing iteration.
bool cheapToRun(const plan::Plan &root) {
  if (root.header()->target() != plan::Target::Cpu ||
      root.images()->size() != 0)
    return false;
  uint64_t bytes = root.memory()->arena_bytes();
  for (const plan::Tensor *tensor : *root.tensors())
    bytes += tensor->bytes();
  if (bytes > kMaxBytes)
    return false;
  // Each factor is below 2^31, so the product fits in 128 bits.
  __int128 work = 0;
  for (const plan::Function *function : *root.functions())
    for (const plan::Step *step : *function->steps())
      if (const plan::Gemm *gemm = step->kind_as_Gemm())
        work +=
            __int128(gemm->batch_count()) * gemm->m() * gemm->n() * gemm->k();
  return work <= kMaxGemmWork;
}

void runEveryFunction(const PlanFile &planFile) {
  Session session(planFile);
  for (const TensorInfo &info : session.tensors())
    if (info.role == plan::Role::Parameter || info.role == plan::Role::Buffer ||
        info.role == plan::Role::Lr)
      session.bind(info.name, HostArray(info.dtype, info.shape));
  for (const plan::Function *function : *planFile.plan().functions()) {
    std::map<std::string, HostArray> inputs;
    for (uint32_t index : *function->inputs())
      if (planFile.tensorRole(index) == plan::Role::Input)
        inputs.emplace(planFile.tensorName(index),
                       HostArray(planFile.tensorDType(index),
                                 planFile.tensorShape(index)));
    session.run(function->name()->str(), std::move(inputs));
  }
}

void checkPlan(const uint8_t *data, size_t size) {
  std::optional<PlanFile> planFile;
  try {
    planFile = PlanFile::fromBytes(data, size, "fuzz.gplan");
  } catch (const Error &) {
    return;
  }
  std::ostringstream sink;
  describePlan(*planFile, sink);
  if (cheapToRun(planFile->plan()))
    runEveryFunction(*planFile);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  checkPlan(data, size);
  std::vector<uint8_t> wrapped = wrapPlanPayload(data, size);
  checkPlan(wrapped.data(), wrapped.size());
  return 0;
}
