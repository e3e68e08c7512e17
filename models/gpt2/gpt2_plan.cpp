//===- gpt2_plan.cpp - Compile a GPT-2 language-model train step ----------===//
//
// Traces a GPT-2's next-token cross-entropy on input ids [B, S] and targets
// [B, S] (both i64), builds the AdamW train step (weight decay 0.01 except
// on 1-D parameters, like the MLP), compiles it for the CPU or CUDA into
// <out>/gpt.gplan and writes the initial weights to <out>/init.safetensors.
// scripts/gpu/bench.py times the CUDA plan against PyTorch (the tiny-GPT
// row); the defaults are that tiny GPT.
//
//===----------------------------------------------------------------------===//

#include "dialect/Utils/CommandLine.h"
#include "dialect/Utils/DiagnosticCapture.h"
#include "frontend/Trace.h"
#include "models/gpt2/Gpt2.h"
#include "passes/Passes.h"
#include "runtime/ArrayIO.h"
#include "runtime/AtomicFile.h"
#include "runtime/PlanFile.h"

#include "llvm/Support/CommandLine.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>

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
static llvm::cl::opt<std::string> precision(
    "precision", llvm::cl::init("f32"),
    llvm::cl::desc("f32, or bf16 / f16 GEMMs with f32 master weights "
                   "(genesis-amp; cuda only)"));
static llvm::cl::opt<std::string>
    lossScale("loss-scale", llvm::cl::init("none"),
              llvm::cl::desc("none, or dynamic (GradScaler semantics in the "
                             "train step; for --precision=f16)"));
static llvm::cl::opt<bool> writeInit(
    "write-init", llvm::cl::init(true),
    llvm::cl::desc("Write init.safetensors (off for models too large to "
                   "carry: initialise them where they run)"));
static llvm::cl::opt<std::string>
    outputDir("out", llvm::cl::init("gpt-plan"),
              llvm::cl::desc("Directory for gpt.gplan and init.safetensors"));

int main(int argc, char **argv) {
  showOnlyOptions("gpt2-plan options",
                  {std::addressof(layers), std::addressof(heads),
                   std::addressof(width), std::addressof(vocab),
                   std::addressof(seqLength), std::addressof(batchSize),
                   std::addressof(seed), std::addressof(target),
                   std::addressof(precision), std::addressof(lossScale),
                   std::addressof(writeInit),
                   std::addressof(outputDir)});
  llvm::cl::ParseCommandLineOptions(
      argc, argv, "Compile a GPT-2 language-model AdamW train step\n");
  try {
    if (target != "cpu" && target != "cuda")
      throw Error("--target must be cpu or cuda, got '" + target + "'");
    if (precision != "f32" && precision != "bf16" && precision != "f16")
      throw Error("--precision must be f32, bf16 or f16, got '" + precision +
                  "'");
    if (heads <= 0 || width % heads != 0)
      throw Error("--width must be a multiple of --heads");
    std::system(("mkdir -p '" + outputDir + "'").c_str());
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
    const int64_t tokens = batchSize * seqLength;
    Trace trace("loss");
    trace.bind(gpt);
    Tensor ids = trace.input("ids", DType::I64, {batchSize, seqLength});
    Tensor targets = trace.input("targets", DType::I64, {batchSize, seqLength});
    // cross_entropy takes [N, C] logits: every position is one prediction.
    Tensor logits = gpt.forward(ids).reshape({tokens, config.vocab_size});
    trace.output("loss", cross_entropy(logits, targets.reshape({tokens})));
    mlir::func::FuncOp loss = trace.finish();
    GenesisTrainStepOptions options;
    options.optimizer = "adamw";
    options.weightDecay = 0.01;
    options.lossScale = lossScale;
    for (auto &[name, parameter] : gpt.named_parameters())
      if (parameter->data().rank() == 1)
        options.noDecay.push_back(name);
    DiagnosticCapture capture(&trace.context());
    if (mlir::failed(buildTrainStep(loss, options)))
      throw Error(capture.firstError("building the train step failed"));
    PlanOptions planOptions;
    planOptions.target =
        target == "cuda" ? plan::Target::Cuda : plan::Target::Cpu;
    if (precision != "f32")
      planOptions.mixedPrecision = precision;
    mlir::FailureOr<std::vector<uint8_t>> planBytes =
        compilePlan(trace.module(), {"train_step"}, planOptions);
    if (mlir::failed(planBytes))
      throw Error(capture.firstError("compiling the plan failed"));

    std::string planPath = outputDir + "/gpt.gplan";
    writeFileAtomically(planPath, planBytes->data(), planBytes->size());
    PlanFile plan =
        PlanFile::fromBytes(planBytes->data(), planBytes->size(), planPath);
    std::printf(
        "compiled %s (%zu bytes, %s) in %.2f s; arena %llu bytes\n",
        planPath.c_str(), planBytes->size(), target.c_str(),
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count(),
        static_cast<unsigned long long>(plan.plan().memory()->arena_bytes()));
    if (writeInit) {
      saveSafetensors(outputDir + "/init.safetensors", gpt.state_dict());
      std::printf("initial weights: %s/init.safetensors\n",
                  outputDir.c_str());
    }
  } catch (const Error &error) {
    std::cerr << "gpt2-plan: error: " << error.what() << "\n";
    return 1;
  }
  return 0;
}
