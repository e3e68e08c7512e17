//===- mlp_train.cpp - Train the MLP from a compiled plan -----------------===//
//
// Runs the main job's training loop on a plan compiled elsewhere
// (`mlp-fashion-mnist --target=cuda --compile-only`), with the initial
// weights written beside it. It links only the runtime, so it runs on a
// machine without MLIR or LLVM: the GPU machine.
//
//===----------------------------------------------------------------------===//

#include "models/mlp/MlpTrainer.h"
#include "runtime/formats/ArrayIO.h"
#include "runtime/plan/PlanFile.h"

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>

using namespace genesis;

namespace {

const char *kUsage =
    "usage: mlp-train PLAN.gplan INIT.safetensors [--epochs N] [--lr X]\n"
    "                 [--seed N] [--train-images N] [--out DIR]\n"
    "                 [--resume CHECKPOINT] [--stop-after-epoch N]\n"
    "                 [--check-numerics[=nan]]\n"
    "  --check-numerics stops at the first step whose outputs hold a NaN or\n"
    "  an infinity (=nan: NaNs only), naming the plan step that wrote it;\n"
    "  the step's inputs go to OUT/nonfinite-inputs.safetensors\n";

} // namespace

int main(int argc, char **argv) {
  try {
    std::vector<std::string> positional;
    models::MlpTrainOptions options;
    NumericsCheck check = NumericsCheck::Off;
    for (int i = 1; i < argc; ++i) {
      std::string arg = argv[i];
      auto value = [&]() -> std::string {
        if (i + 1 >= argc)
          throw Error("option " + arg + " needs a value");
        return argv[++i];
      };
      auto number = [&]() {
        std::string text = value();
        char *end = nullptr;
        double parsed = std::strtod(text.c_str(), &end);
        if (text.empty() || *end != '\0')
          throw Error("option " + arg + " needs a number, got '" + text + "'");
        return parsed;
      };
      if (arg == "--epochs")
        options.epochs = static_cast<int64_t>(number());
      else if (arg == "--lr")
        options.learningRate = number();
      else if (arg == "--seed")
        options.seed = static_cast<uint64_t>(number());
      else if (arg == "--train-images")
        options.trainImages = static_cast<int64_t>(number());
      else if (arg == "--out")
        options.outputDir = value();
      else if (arg == "--resume")
        options.resume = value();
      else if (arg == "--check-numerics" ||
               arg.rfind("--check-numerics=", 0) == 0)
        check = numericsCheckFlag(arg.size() > 16 ? arg.substr(17) : "");
      else if (arg == "--stop-after-epoch")
        options.stopAfterEpoch = static_cast<int64_t>(number());
      else if (arg == "--help" || arg == "-h") {
        std::cout << kUsage;
        return 0;
      } else if (!arg.empty() && arg[0] == '-')
        throw Error("unknown option '" + arg + "'\n" + kUsage);
      else
        positional.push_back(arg);
    }
    if (positional.size() != 2)
      throw Error(std::string("expected a plan and initial weights\n") +
                  kUsage);
    PlanFile plan = PlanFile::load(positional[0]);
    Session session(plan);
    session.setCheckNumerics(check, check == NumericsCheck::Off
                                        ? ""
                                        : options.outputDir +
                                              "/nonfinite-inputs.safetensors");
    for (auto &[name, value] : loadSafetensors(positional[1]))
      session.bind(name, value);
    options.device = plan.plan().header()->target() == plan::Target::Cuda
                         ? "CUDA plan"
                         : "CPU plan";
    models::trainMlp(session, options);
  } catch (const Error &error) {
    std::cerr << "mlp-train: error: " << error.what() << "\n";
    return 1;
  }
  return 0;
}
