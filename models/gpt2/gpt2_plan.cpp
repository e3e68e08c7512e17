//===- gpt2_plan.cpp - Compile a GPT-2 language-model train step ----------===//
//
// Compiles lm-train's GPT-2 language-model plan (models/lm/LmPlan.h:
// `train_step` and `loss` on ids and targets [B, S]) with the AdamW of the
// GPU benchmarks' PyTorch models (weight decay 0.01 except on 1-D
// parameters, betas 0.9 / 0.999, no clipping) for the CPU or CUDA into
// <out>/gpt.gplan, and writes the initial weights to <out>/init.safetensors.
// scripts/gpu/bench.py times the CUDA plan against PyTorch (the tiny-GPT
// row; the defaults are that tiny GPT), gpt2_bench.py GPT-2 124M in bf16.
//
//===----------------------------------------------------------------------===//

#include "dialect/Utils/CommandLine.h"
#include "models/gpt2/Gpt2.h"
#include "models/lm/LmPlan.h"
#include "passes/Passes.h"
#include "runtime/formats/ArrayIO.h"
#include "runtime/formats/AtomicFile.h"
#include "runtime/plan/PlanFile.h"
#include "runtime/support/Strings.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "llvm/Support/CommandLine.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <utility>

using namespace genesis;

static llvm::cl::opt<int64_t> layers("layers", llvm::cl::init(4),
                                     llvm::cl::desc("Transformer blocks"));
static llvm::cl::opt<int64_t> heads("heads", llvm::cl::init(4),
                                    llvm::cl::desc("Attention heads"));
static llvm::cl::opt<int64_t> width("width", llvm::cl::init(256),
                                    llvm::cl::desc("Embedding width"));
static llvm::cl::opt<int64_t> vocab("vocab", llvm::cl::init(4096),
                                    llvm::cl::desc("Vocabulary size"));
static llvm::cl::opt<int64_t>
    seqLength("seq", llvm::cl::init(256),
              llvm::cl::desc("Sequence length (also the number of learned "
                             "positions)"));
static llvm::cl::opt<int64_t> batchSize("batch", llvm::cl::init(16),
                                        llvm::cl::desc("Batch size"));
static llvm::cl::opt<uint64_t> seed("seed", llvm::cl::init(0),
                                    llvm::cl::desc("Weight seed"));
static llvm::cl::opt<std::string>
    target("target", llvm::cl::init("cuda"),
           llvm::cl::desc("cpu or cuda (a cuda plan compiles without a GPU)"));
static llvm::cl::opt<std::string>
    precision("precision", llvm::cl::init("f32"),
              llvm::cl::desc("f32, or bf16 / f16 GEMMs with f32 master weights "
                             "(genesis-amp; cuda only)"));
static llvm::cl::opt<std::string> cudaArch(
    "cuda-arch", llvm::cl::init("sm_90"),
    llvm::cl::desc("cuda: the chips to compile kernels for, e.g. "
                   "sm_80,sm_89,sm_90 (a cubin each, and the oldest one's "
                   "PTX for later chips), or native (this machine's GPU)"));
static llvm::cl::opt<std::string>
    lossScale("loss-scale", llvm::cl::init("none"),
              llvm::cl::desc("none, or dynamic (GradScaler semantics in the "
                             "train step; for --precision=f16)"));
static llvm::cl::opt<std::string> memoryBudget(
    "memory-budget", llvm::cl::init(""),
    llvm::cl::desc("Device memory the train step's parameters, optimizer "
                   "state, batch and temporaries may take, e.g. 6GiB: "
                   "genesis-remat recomputes cheap activations to fit "
                   "(default: no budget)"));
static llvm::cl::opt<bool> writeInit(
    "write-init", llvm::cl::init(true),
    llvm::cl::desc("Write init.safetensors (off for models too large to "
                   "carry: initialise them where they run)"));
static llvm::cl::opt<std::string>
    outputDir("out", llvm::cl::init("gpt-plan"),
              llvm::cl::desc("Directory for gpt.gplan and init.safetensors"));

int main(int argc, char **argv) {
  // --mlir-timing, --mlir-print-ir-after=... and the rest of MLIR's pass
  // manager options apply to the compile pipeline; --help lists only
  // gpt2-plan's own.
  // First: --mlir-print-ir-after=<pass> lists the passes registered when
  // it is created.
  genesis::registerGenesisPasses();
  mlir::registerPassManagerCLOptions();
  mlir::registerDefaultTimingManagerCLOptions();
  showOnlyOptions("gpt2-plan options",
                  {std::addressof(layers), std::addressof(heads),
                   std::addressof(width), std::addressof(vocab),
                   std::addressof(seqLength), std::addressof(batchSize),
                   std::addressof(seed), std::addressof(target),
                   std::addressof(cudaArch), std::addressof(precision),
                   std::addressof(lossScale), std::addressof(memoryBudget),
                   std::addressof(writeInit), std::addressof(outputDir)});
  llvm::cl::ParseCommandLineOptions(
      argc, argv, "Compile a GPT-2 language-model AdamW train step\n");
  try {
    if (target != "cpu" && target != "cuda")
      throw Error("--target must be cpu or cuda, got '" + target + "'");
    if (precision != "f32" && precision != "bf16" && precision != "f16")
      throw Error("--precision must be f32, bf16 or f16, got '" + precision +
                  "'");
    for (auto [flag, value] :
         {std::pair<const char *, int64_t>{"--layers", layers},
          {"--heads", heads},
          {"--width", width},
          {"--vocab", vocab},
          {"--seq", seqLength},
          {"--batch", batchSize}})
      if (value < 1)
        throw Error(std::string(flag) + " must be positive, got " +
                    std::to_string(value));
    if (width % heads != 0)
      throw Error("--width must be a multiple of --heads");
    createDirectories(outputDir);
    models::Gpt2Config config;
    config.vocab_size = vocab;
    config.n_positions = seqLength;
    config.n_embd = width;
    config.n_layer = layers;
    config.n_head = heads;
    config.dropout = 0.0;
    Generator generator(seed);
    models::Gpt2 gpt(config, generator);

    auto start = std::chrono::steady_clock::now();
    // The AdamW of bench.py's PyTorch models: torch's defaults but weight
    // decay 0.01, no clipping.
    models::LmPlanOptions options;
    options.batch = batchSize;
    options.sequence = seqLength;
    options.target = target == "cuda" ? plan::Target::Cuda : plan::Target::Cpu;
    options.cudaChips = parseCudaArchs(cudaArch);
    options.weightDecay = 0.01;
    options.beta2 = 0.999;
    options.clipGradNorm = 0.0;
    if (precision != "f32")
      options.mixedPrecision = precision;
    options.lossScale = lossScale;
    options.memoryBudget = memoryBudgetFlag(memoryBudget);
    std::vector<uint8_t> planBytes =
        models::compileLmTrainingPlan(gpt, config.vocab_size, options);

    std::string planPath = outputDir + "/gpt.gplan";
    writeFileAtomically(planPath, planBytes.data(), planBytes.size());
    PlanFile plan =
        PlanFile::fromBytes(planBytes.data(), planBytes.size(), planPath);
    std::printf(
        "compiled %s (%zu bytes, %s) in %.2f s; arena %llu bytes\n",
        planPath.c_str(), planBytes.size(), target.c_str(),
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count(),
        static_cast<unsigned long long>(plan.plan().memory()->arena_bytes()));
    if (writeInit) {
      saveSafetensors(outputDir + "/init.safetensors", gpt.state_dict());
      std::printf("initial weights: %s/init.safetensors\n", outputDir.c_str());
    }
  } catch (const Error &error) {
    std::cerr << "gpt2-plan: error: " << error.what() << "\n";
    return 1;
  }
  return 0;
}
