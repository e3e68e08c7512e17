//===- lm_compile.cpp - Compile lm-train's plans --------------------------===//
//
// The compiler half of lm-train (which runs it unless given a plan): traces a
// causal language model (GPT-2 or Qwen2 of the given sizes, a named
// configuration, or a Hugging Face directory's model and weights), builds its
// AdamW train step with gradient-norm clipping, and writes to the output
// directory
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
#include "models/lm/GenerationCompiler.h"
#include "models/lm/LmPlan.h"
#include "passes/Passes.h"
#include "runtime/formats/ArrayIO.h"
#include "runtime/formats/AtomicFile.h"
#include "runtime/support/Strings.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "llvm/Support/CommandLine.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>

using namespace genesis;

static llvm::cl::opt<std::string> modelName(
    "model", llvm::cl::init("gpt2"),
    llvm::cl::desc("gpt2 or qwen2 of the sizes below; a named configuration "
                   "with random weights (gpt2-tiny, qwen2-tiny, gpt2-124m, "
                   "qwen2.5-0.5b); or a Hugging Face directory (config.json "
                   "and weights) to train from"));
static llvm::cl::opt<int64_t> layers("layers", llvm::cl::init(2),
                                     llvm::cl::desc("Transformer blocks"));
static llvm::cl::opt<int64_t> heads("heads", llvm::cl::init(4),
                                    llvm::cl::desc("Attention heads"));
static llvm::cl::opt<int64_t> width("width", llvm::cl::init(64),
                                    llvm::cl::desc("Embedding width"));
static llvm::cl::opt<int64_t>
    kvHeads("kv-heads", llvm::cl::init(0),
            llvm::cl::desc("qwen2: key/value heads, dividing --heads "
                           "(grouped-query attention; default --heads)"));
static llvm::cl::opt<int64_t>
    intermediate("intermediate", llvm::cl::init(0),
                 llvm::cl::desc("qwen2: SwiGLU width (default 4 x --width)"));
static llvm::cl::opt<int64_t>
    vocab("vocab", llvm::cl::init(257),
          llvm::cl::desc("Vocabulary size (the tokenizer's; a named or loaded "
                         "model keeps its own, which must hold it)"));
static llvm::cl::opt<int64_t>
    seqLength("seq", llvm::cl::init(32),
              llvm::cl::desc("Tokens per window (also the number of learned "
                             "positions of a GPT-2 of the sizes above)"));
static llvm::cl::opt<int64_t> batchSize("batch", llvm::cl::init(32),
                                        llvm::cl::desc("Windows per step"));
static llvm::cl::opt<uint64_t> seed("seed", llvm::cl::init(0),
                                    llvm::cl::desc("Weight seed"));
static llvm::cl::opt<std::string>
    target("target", llvm::cl::init("cpu"),
           llvm::cl::desc("cpu or cuda (a cuda plan compiles without a GPU)"));
static llvm::cl::opt<std::string> cudaArch(
    "cuda-arch", llvm::cl::init("sm_90"),
    llvm::cl::desc("cuda: the chips to compile kernels for, e.g. "
                   "sm_80,sm_89,sm_90 (a cubin each, and the oldest one's "
                   "PTX for later chips), or native (this machine's GPU)"));
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
    beta2("beta2", llvm::cl::init(0.95),
          llvm::cl::desc("AdamW's second-moment decay (beta1 is 0.9)"));
static llvm::cl::opt<double>
    clipGradNorm("clip-grad-norm", llvm::cl::init(1.0),
                 llvm::cl::desc("Maximum global gradient norm (0: none)"));
static llvm::cl::opt<std::string>
    outputDir("out", llvm::cl::init("lm-run"),
              llvm::cl::desc("Directory for lm.gplan, sample.gplan and "
                             "init.safetensors"));

/// The model that --model names, with the sizes of the flags for "gpt2" and
/// "qwen2"; weights drawn from --seed unless loaded from a directory.
std::unique_ptr<lm::CausalLM> buildModel() {
  Generator generator(seed);
  if (modelName == "gpt2" || modelName == "qwen2") {
    if (layers < 1 || width < 1 || vocab < 2)
      throw Error("--layers and --width must be positive and --vocab at "
                  "least 2");
    if (heads < 1 || width % heads != 0)
      throw Error("--width " + std::to_string(width) +
                  " is not a multiple of --heads " + std::to_string(heads));
  }
  if (modelName == "gpt2") {
    if (kvHeads.getNumOccurrences() || intermediate.getNumOccurrences())
      throw Error("--kv-heads and --intermediate apply to --model qwen2");
    models::Gpt2Config config;
    config.vocab_size = vocab;
    config.n_positions = seqLength;
    config.n_embd = width;
    config.n_layer = layers;
    config.n_head = heads;
    return lm::makeCausalLM(config, generator);
  }
  if (modelName == "qwen2") {
    models::Qwen2Config config;
    config.vocab_size = vocab;
    config.hidden_size = width;
    config.num_hidden_layers = layers;
    config.num_attention_heads = heads;
    config.num_key_value_heads = kvHeads ? kvHeads : heads;
    config.intermediate_size = intermediate ? intermediate : 4 * width;
    config.max_position_embeddings = std::max<int64_t>(seqLength, 1);
    if (config.num_key_value_heads < 1 ||
        heads % config.num_key_value_heads != 0)
      throw Error("--kv-heads " + std::to_string(config.num_key_value_heads) +
                  " must divide --heads " + std::to_string(heads));
    if (config.intermediate_size < 1)
      throw Error("--intermediate must be positive");
    if (config.head_dim() % 2 != 0)
      throw Error("--width / --heads is " + std::to_string(config.head_dim()) +
                  ": RoPE needs an even head size");
    return lm::makeCausalLM(config, generator);
  }
  // A named configuration or a directory fixes the sizes.
  for (const llvm::cl::opt<int64_t> *sizeFlag :
       {&layers, &heads, &width, &kvHeads, &intermediate})
    if (sizeFlag->getNumOccurrences())
      throw Error("--" + sizeFlag->ArgStr.str() +
                  " applies to --model gpt2 "
                  "or qwen2; the model '" +
                  modelName + "' fixes it");
  std::vector<std::string> names = lm::randomModelNames();
  bool named = std::find(names.begin(), names.end(), modelName.getValue()) !=
               names.end();
  if (!named && !std::filesystem::is_directory(modelName.getValue())) {
    std::string known;
    for (const std::string &name : names)
      known += ", " + name;
    throw Error("--model '" + modelName +
                "' is neither gpt2, qwen2, a named "
                "configuration (" +
                known.substr(2) + ") nor a directory");
  }
  std::unique_ptr<lm::CausalLM> model =
      named ? lm::randomCausalLM(modelName, seed) : lm::loadCausalLM(modelName);
  if (model->vocabSize() < vocab)
    throw Error("the model '" + modelName + "' has " +
                std::to_string(model->vocabSize()) +
                " token ids, fewer than the tokenizer's " +
                std::to_string(vocab));
  if (model->maxPositions() < seqLength)
    throw Error("--seq " + std::to_string(seqLength) + " is longer than the " +
                std::to_string(model->maxPositions()) +
                " positions the model '" + modelName + "' was made for");
  return model;
}

int main(int argc, char **argv) {
  // --mlir-timing, --mlir-print-ir-after=<pass> and the rest of MLIR's pass
  // manager options apply to the compile pipeline (registered first: the
  // IR printing options list the passes registered when they are created);
  // --help lists only lm-compile's own.
  genesis::registerGenesisPasses();
  mlir::registerPassManagerCLOptions();
  mlir::registerDefaultTimingManagerCLOptions();
  showOnlyOptions("lm-compile options",
                  {std::addressof(modelName), std::addressof(layers),
                   std::addressof(heads), std::addressof(width),
                   std::addressof(kvHeads), std::addressof(intermediate),
                   std::addressof(vocab), std::addressof(seqLength),
                   std::addressof(batchSize), std::addressof(seed),
                   std::addressof(target), std::addressof(cudaArch),
                   std::addressof(allowTf32), std::addressof(precision),
                   std::addressof(memoryBudget), std::addressof(weightDecay),
                   std::addressof(beta2), std::addressof(clipGradNorm),
                   std::addressof(outputDir)});
  llvm::cl::ParseCommandLineOptions(
      argc, argv, "Compile the plans of lm-train (GPT-2 or Qwen2, AdamW)\n");
  try {
    if (target != "cpu" && target != "cuda")
      throw Error("--target must be cpu or cuda, got '" + target + "'");
    if (precision != "f32" && precision != "bf16" && precision != "f16")
      throw Error("--precision must be f32, bf16 or f16, got '" + precision +
                  "'");
    if (precision != "f32" && target != "cuda")
      throw Error("--precision " + precision +
                  " needs --target cuda (the CPU kernels compute in f32)");
    if (seqLength < 1 || batchSize < 1)
      throw Error("--seq and --batch must be positive");
    std::unique_ptr<lm::CausalLM> model = buildModel();
    // Trained with dropout where the model has it (a loaded GPT-2's).
    model->model().train();
    createDirectories(outputDir);

    models::LmPlanOptions options;
    options.batch = batchSize;
    options.sequence = seqLength;
    options.target = target == "cuda" ? plan::Target::Cuda : plan::Target::Cpu;
    options.cudaChips = parseCudaArchs(cudaArch);
    options.allowTf32 = allowTf32;
    options.weightDecay = weightDecay;
    if (!(beta2 >= 0 && beta2 < 1))
      throw Error("--beta2 must be in [0, 1), got " + std::to_string(beta2));
    options.beta2 = beta2;
    options.clipGradNorm = clipGradNorm;
    if (precision != "f32")
      options.mixedPrecision = precision;
    if (precision == "f16")
      options.lossScale = "dynamic";
    options.memoryBudget = memoryBudgetFlag(memoryBudget);
    auto start = std::chrono::steady_clock::now();
    std::vector<uint8_t> training = models::compileLmTrainingPlan(
        model->model(), model->vocabSize(), options);
    std::vector<uint8_t> sampling =
        models::compileLmSamplingPlan(model->model(), options);
    writeFileAtomically(outputDir + "/lm.gplan", training.data(),
                        training.size());
    writeFileAtomically(outputDir + "/sample.gplan", sampling.data(),
                        sampling.size());
    saveSafetensors(outputDir + "/init.safetensors",
                    model->model().state_dict());
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
