//===- lm_compile.cpp - Compile lm-train's plans --------------------------===//
//
// The compiler half of lm-train (which runs it unless given a plan): traces a
// GPT-2 of the given sizes, builds its AdamW train step with gradient-norm
// clipping, and writes to the output directory
//
//   lm.gplan          train_step and loss over ids, targets [batch, seq]
//   sample.gplan      forward: ids [1, seq] -> logits, for sampling
//   init.safetensors  the initial weights (seeded)
//
// lm-train runs these with the runtime alone, so a cuda plan compiled here
// trains on a GPU machine without MLIR.
//
//===----------------------------------------------------------------------===//

#include "dialect/Utils/CommandLine.h"
#include "models/lm/LmPlan.h"
#include "runtime/formats/ArrayIO.h"
#include "runtime/formats/AtomicFile.h"
#include "runtime/support/Strings.h"

#include "llvm/Support/CommandLine.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>

using namespace genesis;

static llvm::cl::opt<int64_t> layers("layers", llvm::cl::init(2),
                                     llvm::cl::desc("Transformer blocks"));
static llvm::cl::opt<int64_t> heads("heads", llvm::cl::init(4),
                                    llvm::cl::desc("Attention heads"));
static llvm::cl::opt<int64_t> width("width", llvm::cl::init(64),
                                    llvm::cl::desc("Embedding width"));
static llvm::cl::opt<int64_t>
    vocab("vocab", llvm::cl::init(257),
          llvm::cl::desc("Vocabulary size (the tokenizer's)"));
static llvm::cl::opt<int64_t>
    seqLength("seq", llvm::cl::init(32),
              llvm::cl::desc("Tokens per window (also the number of learned "
                             "positions)"));
static llvm::cl::opt<int64_t> batchSize("batch", llvm::cl::init(32),
                                        llvm::cl::desc("Windows per step"));
static llvm::cl::opt<uint64_t> seed("seed", llvm::cl::init(0),
                                    llvm::cl::desc("Weight seed"));
static llvm::cl::opt<std::string>
    target("target", llvm::cl::init("cpu"),
           llvm::cl::desc("cpu or cuda (a cuda plan compiles without a GPU)"));
static llvm::cl::opt<bool>
    allowTf32("tf32", llvm::cl::init(false),
              llvm::cl::desc("cuda: let f32 GEMMs use TF32 tensor cores"));
static llvm::cl::opt<std::string>
    precision("precision", llvm::cl::init("f32"),
              llvm::cl::desc("f32, or bf16 / f16 GEMMs with f32 master "
                             "weights (cuda; f16 with a dynamic loss scale)"));
static llvm::cl::opt<std::string> memoryBudget(
    "memory-budget", llvm::cl::init(""),
    llvm::cl::desc("Device memory the train step may take, e.g. 6GiB "
                   "(genesis-remat recomputes cheap activations to fit; "
                   "default: no budget)"));
static llvm::cl::opt<double>
    weightDecay("weight-decay", llvm::cl::init(0.1),
                llvm::cl::desc("AdamW weight decay (not on 1-D parameters)"));
static llvm::cl::opt<double>
    clipGradNorm("clip-grad-norm", llvm::cl::init(1.0),
                 llvm::cl::desc("Maximum global gradient norm (0: none)"));
static llvm::cl::opt<std::string>
    outputDir("out", llvm::cl::init("lm-run"),
              llvm::cl::desc("Directory for lm.gplan, sample.gplan and "
                             "init.safetensors"));

int main(int argc, char **argv) {
  showOnlyOptions("lm-compile options",
                  {std::addressof(layers), std::addressof(heads),
                   std::addressof(width), std::addressof(vocab),
                   std::addressof(seqLength), std::addressof(batchSize),
                   std::addressof(seed), std::addressof(target),
                   std::addressof(allowTf32), std::addressof(precision),
                   std::addressof(memoryBudget), std::addressof(weightDecay),
                   std::addressof(clipGradNorm), std::addressof(outputDir)});
  llvm::cl::ParseCommandLineOptions(
      argc, argv, "Compile the plans of lm-train (GPT-2, AdamW)\n");
  try {
    if (target != "cpu" && target != "cuda")
      throw Error("--target must be cpu or cuda, got '" + target + "'");
    if (precision != "f32" && precision != "bf16" && precision != "f16")
      throw Error("--precision must be f32, bf16 or f16, got '" + precision +
                  "'");
    if (precision != "f32" && target != "cuda")
      throw Error("--precision " + precision +
                  " needs --target cuda (the CPU kernels compute in f32)");
    if (layers < 1 || width < 1 || vocab < 2 || seqLength < 1 || batchSize < 1)
      throw Error("--layers, --width, --seq and --batch must be positive "
                  "and --vocab at least 2");
    if (heads < 1 || width % heads != 0)
      throw Error("--width " + std::to_string(width) +
                  " is not a multiple of --heads " + std::to_string(heads));
    createDirectories(outputDir);
    models::Gpt2Config config;
    config.vocab_size = vocab;
    config.n_positions = seqLength;
    config.n_embd = width;
    config.n_layer = layers;
    config.n_head = heads;
    Generator generator(seed);
    models::Gpt2 gpt(config, generator);

    models::LmPlanOptions options;
    options.batch = batchSize;
    options.sequence = seqLength;
    options.target = target == "cuda" ? plan::Target::Cuda : plan::Target::Cpu;
    options.allowTf32 = allowTf32;
    options.weightDecay = weightDecay;
    options.clipGradNorm = clipGradNorm;
    if (precision != "f32")
      options.mixedPrecision = precision;
    if (precision == "f16")
      options.lossScale = "dynamic";
    options.memoryBudget = memoryBudgetFlag(memoryBudget);
    auto start = std::chrono::steady_clock::now();
    std::vector<uint8_t> training = models::compileLmTrainingPlan(gpt, options);
    std::vector<uint8_t> sampling = models::compileLmSamplingPlan(gpt, options);
    writeFileAtomically(outputDir + "/lm.gplan", training.data(),
                        training.size());
    writeFileAtomically(outputDir + "/sample.gplan", sampling.data(),
                        sampling.size());
    saveSafetensors(outputDir + "/init.safetensors", gpt.state_dict());
    std::printf(
        "compiled %s/lm.gplan and sample.gplan (%s) in %.1f s; initial "
        "weights %s/init.safetensors\n",
        outputDir.c_str(), target.c_str(),
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count(),
        outputDir.c_str());
  } catch (const Error &error) {
    std::cerr << "lm-compile: error: " << error.what() << "\n";
    return 1;
  }
  return 0;
}
