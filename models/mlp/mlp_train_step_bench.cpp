//===- mlp_train_step_bench.cpp - Time the compiled MLP train step ------===//
//
// Times one AdamW training step of the 784-256-128-10 MLP through the CPU
// plan on random data (the data does not change the work), handing the
// session a copy of the batch each step as a training loop would. Run by
// scripts/bench/mlp_cpu_vs_pytorch.py next to PyTorch; prints
// "genesis_ms_per_step <value>" last.
//
//===----------------------------------------------------------------------===//

#include "dialect/Utils/CommandLine.h"
#include "models/mlp/Mlp.h"
#include "models/mlp/MlpPlan.h"
#include "runtime/plan/PlanFile.h"
#include "runtime/session/Session.h"

#include "llvm/Support/CommandLine.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <malloc.h>
#include <map>
#include <memory>
#include <numeric>

using namespace genesis;

static llvm::cl::opt<int64_t> batchSize("batch", llvm::cl::init(256),
                                        llvm::cl::desc("Batch size"));
static llvm::cl::opt<int64_t> steps("steps", llvm::cl::init(200),
                                    llvm::cl::desc("Timed steps"));
static llvm::cl::opt<int64_t> warmup("warmup", llvm::cl::init(20),
                                     llvm::cl::desc("Untimed steps first"));
static llvm::cl::opt<bool>
    profile("profile", llvm::cl::init(false),
            llvm::cl::desc("Print the time of every plan step, largest first"));

namespace {

/// Makes free() keep memory for reuse rather than return it to the system.
/// Each step allocates and frees a copy of the batch (800 KB), and by
/// glibc's default policy the freed top of the heap may be trimmed, so that
/// the next step page-faults it back in: whether that happens depends on the
/// heap's layout, and when it did it added 0.8 ms to a 3.3 ms step
/// (docs/performance.md). scripts/bench/mlp_cpu_vs_pytorch.py gives PyTorch
/// the same policy.
void retainFreedMemory() {
  // Setting either threshold stops glibc from adapting them, so both are
  // set: allocations up to 32 MiB come from the heap (not mmap, whose every
  // free is an munmap), and up to 64 MiB of free heap top is kept.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 64 << 20);
}

} // namespace

int main(int argc, char **argv) {
  showOnlyOptions("mlp-train-step-bench options",
                  {std::addressof(batchSize), std::addressof(steps),
                   std::addressof(warmup), std::addressof(profile)});
  llvm::cl::ParseCommandLineOptions(argc, argv, "Time the MLP train step\n");
  retainFreedMemory();
  try {
    Generator generator(0);
    auto model = models::makeMlp({256, 128}, generator);
    std::vector<uint8_t> bytes =
        models::compileMlpTrainingPlan(*model, batchSize);
    PlanFile plan = PlanFile::fromBytes(bytes.data(), bytes.size(), "mlp");
    Session session(plan);
    for (auto &[name, value] : model->state_dict())
      session.bind(name, value);
    session.bind("lr", HostArray::fromValues<double>(DType::F32, {}, {1e-3}));
    HostArray images(DType::F32, {batchSize, 784}),
        labels(DType::I64, {batchSize});
    generator.fill_uniform(images, 0, 1);
    for (int64_t i = 0; i < batchSize; ++i)
      labels.setInt(i, generator.randint(0, 10));
    const std::map<std::string, HostArray> batch = {{"images", images},
                                                    {"labels", labels}};
    std::vector<double> times;
    for (int64_t s = 0; s < warmup + steps; ++s) {
      if (s == warmup)
        session.resetStats();
      auto start = std::chrono::steady_clock::now();
      session.run("train_step", batch);
      double ms = std::chrono::duration<double, std::milli>(
                      std::chrono::steady_clock::now() - start)
                      .count();
      if (s >= warmup)
        times.push_back(ms);
    }
    if (profile) {
      std::vector<StepTiming> steps = session.stats().steps;
      std::sort(steps.begin(), steps.end(), [](const auto &a, const auto &b) {
        return a.totalSeconds > b.totalSeconds;
      });
      double total = 0;
      for (const StepTiming &step : steps)
        total += step.totalSeconds;
      std::printf("| step | ms/call | share |\n| --- | --- | --- |\n");
      for (const StepTiming &step : steps)
        if (step.function == "train_step" && step.calls > 0)
          std::printf("| %s | %.4f | %.1f%% |\n", step.name.c_str(),
                      1e3 * step.totalSeconds / step.calls,
                      100 * step.totalSeconds / total);
      // The batch copy and the session's own work around the plan's steps.
      double wall = std::accumulate(times.begin(), times.end(), 0.0);
      std::printf("outside the steps: %.4f ms/step\n",
                  (wall - 1e3 * total) / times.size());
    }
    std::sort(times.begin(), times.end());
    std::printf("genesis_ms_per_step %.4f\n", times[times.size() / 2]);
  } catch (const Error &error) {
    std::cerr << "mlp-train-step-bench: error: " << error.what() << "\n";
    return 1;
  }
  return 0;
}
