//===- mlp_fashion_mnist.cpp - Train the MLP on Fashion-MNIST -----------===//
//
// The main job. Traces a 784-256-128-10 MLP's loss, differentiates it and
// builds the AdamW train step (genesis-autodiff, genesis-train-step),
// compiles both the train step and the loss (which also returns the logits,
// for accuracy) into one plan (CPU by default, or CUDA), and trains with the
// runtime (models/mlp/MlpTrainer.h): a progress
// line per step, a table and a PNG plot per run, test accuracy each epoch, a
// checkpoint after each epoch, and --resume to continue from one.
//
//===----------------------------------------------------------------------===//

#include "dialect/Utils/CommandLine.h"
#include "models/mlp/Mlp.h"
#include "models/mlp/MlpPlan.h"
#include "models/mlp/MlpTrainer.h"
#include "runtime/formats/ArrayIO.h"
#include "runtime/formats/AtomicFile.h"
#include "runtime/plan/PlanFile.h"
#include "runtime/session/Session.h"

#include "llvm/Support/CommandLine.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <unistd.h>

using namespace genesis;

static llvm::cl::opt<int64_t> epochs("epochs", llvm::cl::init(5),
                                     llvm::cl::desc("Training epochs"));
static llvm::cl::opt<int64_t> batchSize("batch", llvm::cl::init(100),
                                        llvm::cl::desc("Batch size (divides "
                                                       "60000 and 10000)"));
static llvm::cl::opt<double> learningRate("lr", llvm::cl::init(2e-3),
                                          llvm::cl::desc("Peak learning rate"));
static llvm::cl::opt<uint64_t> seed("seed", llvm::cl::init(0),
                                    llvm::cl::desc("Weight and shuffle seed"));
static llvm::cl::opt<int64_t>
    trainImages("train-images", llvm::cl::init(60000),
                llvm::cl::desc("Use the first N training images"));
static llvm::cl::opt<std::string> outputDir(
    "out", llvm::cl::init("mlp-run"),
    llvm::cl::desc("Directory for the plan, checkpoint, table and plot"));
static llvm::cl::opt<std::string>
    resume("resume", llvm::cl::init(""),
           llvm::cl::desc("Checkpoint to resume from"));
static llvm::cl::opt<int64_t> stopAfterEpoch(
    "stop-after-epoch", llvm::cl::init(0),
    llvm::cl::desc("Stop (as if interrupted) after this epoch; the schedule "
                   "still spans --epochs"));
static llvm::cl::opt<bool> printIr("print-ir", llvm::cl::init(false),
                                   llvm::cl::desc("Print the traced IR"));

static llvm::cl::opt<std::string> target(
    "target", llvm::cl::init("auto"),
    llvm::cl::desc("cpu, cuda, or auto: cuda when a GPU and ptxas are here, "
                   "else cpu (with --compile-only, a cuda plan can be run by "
                   "mlp-train on a GPU machine)"));
static llvm::cl::opt<bool> compileOnly(
    "compile-only", llvm::cl::init(false),
    llvm::cl::desc("Write the plan and the initial weights (init.safetensors) "
                   "to the output directory and stop"));

int main(int argc, char **argv) {
  showOnlyOptions("mlp-fashion-mnist options",
                  {std::addressof(epochs), std::addressof(batchSize),
                   std::addressof(learningRate), std::addressof(seed),
                   std::addressof(trainImages), std::addressof(outputDir),
                   std::addressof(resume), std::addressof(stopAfterEpoch),
                   std::addressof(printIr), std::addressof(target),
                   std::addressof(compileOnly)});
  llvm::cl::ParseCommandLineOptions(argc, argv,
                                    "Train the Genesis MLP on Fashion-MNIST\n");
  try {
    if (target != "cpu" && target != "cuda" && target != "auto")
      throw Error("--target must be cpu, cuda or auto, got '" + target + "'");
    if (target == "auto") {
      // The cubin needs the toolkit's ptxas, the run a driver and a device.
      const char *toolkit = std::getenv("GENESIS_CUDA_PATH");
      std::string ptxas =
          std::string(toolkit && *toolkit ? toolkit : "/usr/local/cuda") +
          "/bin/ptxas";
      std::string reason = cudaUnavailableReason();
      if (reason.empty() && access(ptxas.c_str(), X_OK) != 0)
        reason = "no ptxas at " + ptxas;
      target = reason.empty() ? "cuda" : "cpu";
      std::printf("target: %s%s\n", target.c_str(),
                  reason.empty() ? ""
                                 : (" (no GPU run: " + reason + ")").c_str());
    }
    createDirectories(outputDir);
    Generator generator(seed);
    auto model = models::makeMlp({256, 128}, generator);

    auto start = std::chrono::steady_clock::now();
    std::vector<uint8_t> planBytes = models::compileMlpTrainingPlan(
        *model, batchSize, printIr,
        target == "cuda" ? plan::Target::Cuda : plan::Target::Cpu);
    std::string planPath = outputDir + "/mlp.gplan";
    writeFileAtomically(planPath, planBytes.data(), planBytes.size());
    PlanFile plan =
        PlanFile::fromBytes(planBytes.data(), planBytes.size(), planPath);
    std::printf(
        "compiled %s (%zu bytes, %s) in %.2f s; arena %llu bytes\n",
        planPath.c_str(), planBytes.size(), target.c_str(),
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count(),
        static_cast<unsigned long long>(plan.plan().memory()->arena_bytes()));
    if (compileOnly) {
      saveSafetensors(outputDir + "/init.safetensors", model->state_dict());
      std::printf("initial weights: %s/init.safetensors\n", outputDir.c_str());
      return 0;
    }
    Session session(plan);
    for (auto &[name, value] : model->state_dict())
      session.bind(name, value);
    models::MlpTrainOptions options;
    options.epochs = epochs;
    options.learningRate = learningRate;
    options.seed = seed;
    options.trainImages = trainImages;
    options.outputDir = outputDir;
    options.resume = resume;
    options.stopAfterEpoch = stopAfterEpoch;
    options.device = target == "cuda" ? "CUDA plan" : "CPU plan";
    models::trainMlp(session, options);
  } catch (const Error &error) {
    std::cerr << "mlp-fashion-mnist: error: " << error.what() << "\n";
    return 1;
  }
  return 0;
}
