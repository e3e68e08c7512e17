//===- lm_train.cpp - Train a GPT-2 language model on a text corpus -------===//
//
// Reads a corpus (by default this machine's Python standard library),
// tokenises it, and trains a GPT-2 or a Qwen2 with AdamW under linear warmup
// and cosine decay, gradient norm clipped, from a compiled plan
// (models/lm/LmTrainer.h), then greedily samples from it. It links only the
// runtime: without --plan it runs lm-compile, found beside it, to compile the
// plans first, so the same program trains a cuda plan compiled elsewhere on a
// GPU machine that has no MLIR. docs/training.md describes the flags and the
// figures.
//
//===----------------------------------------------------------------------===//

#include "models/common/Sampling.h"
#include "models/common/Tokenizer.h"
#include "models/lm/Corpus.h"
#include "models/lm/LmTrainer.h"
#include "runtime/formats/ArrayIO.h"
#include "runtime/plan/PlanFile.h"
#include "runtime/support/Strings.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <spawn.h>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

extern char **environ;

using namespace genesis;

namespace {

const char *kUsage = R"(usage: lm-train [options]

Trains a GPT-2 or Qwen2 language model on a text corpus (AdamW, linear warmup and
cosine decay, gradient norm clipped) and samples from it. Without --plan it
runs lm-compile (beside lm-train, needs MLIR) to compile the plans into --out.

data:
  --corpus PATH        a text file, or a directory of them (default: the
                       Python standard library, /usr/lib/python3.N)
  --corpus-ext EXT     read the files in a directory ending in EXT (.py)
  --max-bytes N        read at most N bytes of text (16777216)
  --tokenizer FILE     a Hugging Face tokenizer.json (default: bytes, 257 ids)
  --val-fraction X     the last X of the tokens validate (0.05)
model, compiled by lm-compile:
  --model M            gpt2 or qwen2 of the sizes below (gpt2); a named
                       configuration with random weights (gpt2-tiny,
                       qwen2-tiny, gpt2-124m, qwen2.5-0.5b); or a Hugging
                       Face directory (config.json, weights) to train from
  --layers N --heads N --width N   sizes (2, 4, 64)
  --kv-heads N         qwen2: key/value heads, dividing --heads (--heads)
  --intermediate N     qwen2: SwiGLU width (4 x --width)
  --seq N              tokens per window, also the positions learned (32)
  --batch N            windows per step (32)
  --seed N             weight, window and sampling seed (0)
  --target T           cpu, cuda, or auto: cuda when a GPU and ptxas are
                       here (auto)
  --tf32               cuda: f32 GEMMs on TF32 tensor cores
  --deterministic      cuda: train bit for bit the same every run
                       (GENESIS_DETERMINISTIC=1; docs/debugging.md)
  --check-numerics[=nan]  stop at the first step whose outputs hold a NaN
                       or infinity (=nan: NaNs only), naming the plan step
                       that wrote it, its ops and source lines; the
                       step's inputs go to OUT/nonfinite-inputs.safetensors
  --precision P        f32, or bf16 / f16 GEMMs (cuda; f16 adds a dynamic
                       loss scale)
  --memory-budget SIZE device memory the train step may take, e.g. 6GiB:
                       activations are recomputed to fit (no budget)
  --weight-decay X     AdamW decay, not on 1-D parameters (0.1)
  --beta2 X            AdamW second-moment decay, beta1 being 0.9 (0.95)
  --clip-grad-norm X   maximum global gradient norm, 0 for none (1.0)
  --compile-only       write lm.gplan, sample.gplan and init.safetensors to
                       --out and stop
plan runner (no compiler needed):
  --plan FILE          a training plan from --compile-only
  --weights FILE       its initial weights; sample.gplan beside the plan is
                       used for the sample when it is there
training:
  --steps N            optimizer steps (1500)
  --lr X               peak learning rate (3e-3)
  --min-lr X           learning rate at the last step (lr / 10)
  --warmup N           linear warmup steps (steps / 20)
  --log-every N        progress line interval (10)
  --eval-every N       validation loss and checkpoint interval (100)
  --eval-batches N     validation batches (4)
  --out DIR            plans, checkpoint, training.tsv, training.png (lm-run)
  --resume FILE        continue from a checkpoint (the same --steps)
  --stop-after-step N  stop after step N, with a checkpoint
  --peak-tflops X      device peak for MFU (cuda: 494 with --tf32, else 67;
                       cpu: none, so no MFU)
  --sample-tokens N    sample length after training, 0 for none (200)
  --prompt TEXT        the sample's prompt ("def ")
  --temperature X      sampling temperature, 0 for greedy (0.8)
)";

struct Flags {
  std::string corpus, corpusExtension = ".py", tokenizer;
  int64_t maxBytes = 16 << 20;
  double validationFraction = 0.05;
  std::string model = "gpt2";
  int64_t layers = 2, heads = 4, width = 64, kvHeads = 0, intermediate = 0,
          sequence = 32, batch = 32;
  uint64_t seed = 0;
  std::string target = "auto", precision = "f32", memoryBudget;
  bool tf32 = false, compileOnly = false, deterministic = false;
  /// --check-numerics alone, or its value (--check-numerics=nan).
  bool checkNumerics = false;
  std::string checkNumericsMode;
  double weightDecay = 0.1, beta2 = 0.95, clipGradNorm = 1.0;
  std::string plan, weights;
  int64_t steps = 1500, warmup = -1, logEvery = 10, evalEvery = 100,
          evalBatches = 4, stopAfterStep = 0, sampleTokens = 200;
  double learningRate = 3e-3, minLearningRate = -1, peakTflops = 0,
         temperature = 0.8;
  std::string outputDir = "lm-run", resume, prompt = "def ";
  /// The flags given on the command line.
  std::set<std::string> given;
};

Flags parseFlags(int argc, char **argv) {
  Flags flags;
  using Setter = std::function<void(const std::string &)>;
  auto integer = [](int64_t &field) -> Setter {
    return [&field](const std::string &text) {
      char *end = nullptr;
      long long value = std::strtoll(text.c_str(), &end, 10);
      if (text.empty() || *end != '\0')
        throw Error("needs an integer, got '" + text + "'");
      field = value;
    };
  };
  auto number = [](double &field) -> Setter {
    return [&field](const std::string &text) {
      char *end = nullptr;
      double value = std::strtod(text.c_str(), &end);
      if (text.empty() || *end != '\0' || !std::isfinite(value))
        throw Error("needs a number, got '" + text + "'");
      field = value;
    };
  };
  auto string = [](std::string &field) -> Setter {
    return [&field](const std::string &text) { field = text; };
  };
  int64_t seed = 0;
  std::map<std::string, Setter> valued = {
      {"--corpus", string(flags.corpus)},
      {"--corpus-ext", string(flags.corpusExtension)},
      {"--max-bytes", integer(flags.maxBytes)},
      {"--tokenizer", string(flags.tokenizer)},
      {"--val-fraction", number(flags.validationFraction)},
      {"--model", string(flags.model)},
      {"--layers", integer(flags.layers)},
      {"--kv-heads", integer(flags.kvHeads)},
      {"--intermediate", integer(flags.intermediate)},
      {"--heads", integer(flags.heads)},
      {"--width", integer(flags.width)},
      {"--seq", integer(flags.sequence)},
      {"--batch", integer(flags.batch)},
      {"--seed", integer(seed)},
      {"--target", string(flags.target)},
      {"--precision", string(flags.precision)},
      {"--memory-budget", string(flags.memoryBudget)},
      {"--weight-decay", number(flags.weightDecay)},
      {"--beta2", number(flags.beta2)},
      {"--clip-grad-norm", number(flags.clipGradNorm)},
      {"--plan", string(flags.plan)},
      {"--weights", string(flags.weights)},
      {"--steps", integer(flags.steps)},
      {"--lr", number(flags.learningRate)},
      {"--min-lr", number(flags.minLearningRate)},
      {"--warmup", integer(flags.warmup)},
      {"--log-every", integer(flags.logEvery)},
      {"--eval-every", integer(flags.evalEvery)},
      {"--eval-batches", integer(flags.evalBatches)},
      {"--out", string(flags.outputDir)},
      {"--resume", string(flags.resume)},
      {"--stop-after-step", integer(flags.stopAfterStep)},
      {"--peak-tflops", number(flags.peakTflops)},
      {"--sample-tokens", integer(flags.sampleTokens)},
      {"--prompt", string(flags.prompt)},
      {"--temperature", number(flags.temperature)},
      {"--check-numerics", string(flags.checkNumericsMode)}};
  std::map<std::string, bool *> switches = {
      {"--tf32", &flags.tf32},
      {"--compile-only", &flags.compileOnly},
      {"--deterministic", &flags.deterministic},
      {"--check-numerics", &flags.checkNumerics}};
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i], value;
    bool hasValue = false;
    // --name=value is the same as --name value.
    if (size_t equals = arg.find('=');
        arg.rfind("--", 0) == 0 && equals != std::string::npos) {
      value = arg.substr(equals + 1);
      arg = arg.substr(0, equals);
      hasValue = true;
    }
    if (arg == "--help" || arg == "-h") {
      std::cout << kUsage;
      std::exit(0);
    }
    if (auto it = switches.find(arg); it != switches.end() && !hasValue) {
      *it->second = true;
    } else if (auto it = valued.find(arg); it != valued.end()) {
      if (!hasValue) {
        if (i + 1 >= argc)
          throw Error("option " + arg + " needs a value");
        value = argv[++i];
      }
      try {
        it->second(value);
      } catch (const Error &error) {
        throw Error("option " + arg + " " + error.what());
      }
    } else {
      throw Error("unknown option '" + std::string(argv[i]) + "'; see --help");
    }
    flags.given.insert(arg);
  }
  flags.seed = static_cast<uint64_t>(seed);
  return flags;
}

std::string formatNumber(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", value);
  return text;
}

void checkFlags(const Flags &flags) {
  if (flags.precision != "f32" && flags.precision != "bf16" &&
      flags.precision != "f16")
    throw Error("--precision must be f32, bf16 or f16, got '" +
                flags.precision + "'");
  if (flags.precision != "f32" && flags.target == "cpu")
    throw Error("--precision " + flags.precision +
                " needs --target cuda (the CPU kernels compute in f32)");
  memoryBudgetFlag(flags.memoryBudget);
  if (flags.target != "cpu" && flags.target != "cuda" && flags.target != "auto")
    throw Error("--target must be cpu, cuda or auto, got '" + flags.target +
                "'");
  if (!flags.plan.empty() || !flags.weights.empty()) {
    if (flags.plan.empty() || flags.weights.empty())
      throw Error("--plan and --weights go together");
    if (flags.compileOnly)
      throw Error("--compile-only compiles a plan; it takes no --plan");
    // The plan fixes the model: flags that would change it are mistakes.
    for (const char *compileFlag :
         {"--model", "--layers", "--heads", "--width", "--kv-heads",
          "--intermediate", "--seq", "--batch", "--target", "--tf32",
          "--weight-decay", "--beta2", "--clip-grad-norm"})
      if (flags.given.count(compileFlag))
        throw Error(std::string(compileFlag) +
                    " applies when compiling; the plan " + flags.plan +
                    " fixes it");
  }
  auto positive = [](const char *name, int64_t value) {
    if (value < 1)
      throw Error(std::string(name) + " must be positive, got " +
                  std::to_string(value));
  };
  positive("--max-bytes", flags.maxBytes);
  positive("--steps", flags.steps);
  positive("--log-every", flags.logEvery);
  positive("--eval-every", flags.evalEvery);
  positive("--eval-batches", flags.evalBatches);
  if (flags.sampleTokens < 0)
    throw Error("--sample-tokens must not be negative");
  if (!(flags.learningRate > 0) || !std::isfinite(flags.learningRate))
    throw Error("--lr must be positive");
  // -1 (the default) means lr / 10; any other value must be a rate.
  if (flags.given.count("--min-lr") &&
      (!(flags.minLearningRate >= 0) || !std::isfinite(flags.minLearningRate)))
    throw Error("--min-lr must be >= 0, got " +
                formatNumber(flags.minLearningRate));
  if (flags.given.count("--warmup") && flags.warmup < 0)
    throw Error("--warmup must not be negative, got " +
                std::to_string(flags.warmup));
  if (!(flags.weightDecay >= 0) || !std::isfinite(flags.weightDecay))
    throw Error("--weight-decay must be >= 0, got " +
                formatNumber(flags.weightDecay));
  if (!(flags.beta2 >= 0 && flags.beta2 < 1))
    throw Error("--beta2 must be in [0, 1), got " + formatNumber(flags.beta2));
  if (!(flags.clipGradNorm >= 0) || !std::isfinite(flags.clipGradNorm))
    throw Error("--clip-grad-norm must be >= 0 (0: no clipping), got " +
                formatNumber(flags.clipGradNorm));
  if (flags.peakTflops < 0)
    throw Error("--peak-tflops must not be negative");
  if (flags.temperature < 0)
    throw Error("--temperature must not be negative");
  if (flags.sampleTokens > 0 && flags.prompt.empty())
    throw Error("--prompt must not be empty");
}

std::string directoryOf(const std::string &path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

/// Runs lm-compile, the executable beside this one, to write the plans and
/// initial weights of `flags` into the output directory.
void runCompiler(const Flags &flags, const std::string &target, int64_t vocab) {
  char self[4096];
  ssize_t length = readlink("/proc/self/exe", self, sizeof self - 1);
  if (length <= 0)
    throw Error("cannot find this executable to locate lm-compile");
  self[length] = '\0';
  std::string compiler = directoryOf(self) + "/lm-compile";
  if (access(compiler.c_str(), X_OK) != 0)
    throw Error("compiling needs lm-compile beside lm-train (" + compiler +
                "), which needs MLIR; on a machine without the compiler, "
                "train a plan compiled elsewhere with --plan and --weights");
  std::vector<std::string> args = {compiler, "--model=" + flags.model};
  // Only the sizes given: a named or loaded model refuses any.
  for (auto [flag, value] :
       {std::pair<const char *, int64_t>{"--layers", flags.layers},
        {"--heads", flags.heads},
        {"--width", flags.width},
        {"--kv-heads", flags.kvHeads},
        {"--intermediate", flags.intermediate}})
    if (flags.given.count(flag) ||
        ((flags.model == "gpt2" || flags.model == "qwen2") && value > 0))
      args.push_back(std::string(flag) + "=" + std::to_string(value));
  args.insert(args.end(),
              {"--seq=" + std::to_string(flags.sequence),
               "--batch=" + std::to_string(flags.batch),
               "--vocab=" + std::to_string(vocab),
               "--seed=" + std::to_string(flags.seed), "--target=" + target,
               "--precision=" + flags.precision,
               "--weight-decay=" + formatNumber(flags.weightDecay),
               "--beta2=" + formatNumber(flags.beta2),
               "--clip-grad-norm=" + formatNumber(flags.clipGradNorm),
               "--out=" + flags.outputDir});
  if (flags.tf32)
    args.emplace_back("--tf32");
  // Kernels for the GPU here, which runs the plan.
  if (target == "cuda")
    args.emplace_back("--cuda-arch=native");
  if (!flags.memoryBudget.empty())
    args.push_back("--memory-budget=" + flags.memoryBudget);
  std::vector<char *> argv;
  argv.reserve(args.size() + 1);
  for (std::string &arg : args)
    argv.push_back(arg.data());
  argv.push_back(nullptr);
  std::fflush(stdout);
  pid_t pid = 0;
  if (int error = posix_spawn(&pid, compiler.c_str(), nullptr, nullptr,
                              argv.data(), environ))
    throw Error("cannot run " + compiler + ": " + std::strerror(error));
  int status = 0;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
      WEXITSTATUS(status) != 0)
    throw Error("lm-compile failed (its message is above)");
}

/// Whether the plan has 16-bit tensors (its GEMMs run in bf16 or f16).
bool hasHalfTensors(const PlanFile &planFile) {
  const auto &tensors = *planFile.plan().tensors();
  return std::any_of(tensors.begin(), tensors.end(),
                     [](const plan::Tensor *tensor) {
                       return tensor->dtype() == plan::DType::BF16 ||
                              tensor->dtype() == plan::DType::F16;
                     });
}

bool allowsTf32(const PlanFile &planFile) {
  for (const plan::Function *function : *planFile.plan().functions())
    for (const plan::Step *step : *function->steps())
      if (const plan::Gemm *gemm = step->kind_as_Gemm();
          gemm && gemm->allow_tf32())
        return true;
  return false;
}

/// `text` with bytes that are not printable ASCII (or newline, tab)
/// escaped, so a sample of a byte model cannot upset the terminal.
std::string printable(const std::string &text) {
  std::string out;
  for (unsigned char c : text) {
    if (std::isprint(c) || c == '\n' || c == '\t' || c >= 0x80) {
      out += static_cast<char>(c);
    } else {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", c);
      out += escaped;
    }
  }
  return out;
}

/// --target, with auto resolved: cuda when this machine can compile (ptxas)
/// and run (a driver and a device) a cuda plan, else cpu.
std::string resolveTarget(const std::string &target) {
  if (target != "auto")
    return target;
  const char *toolkit = std::getenv("GENESIS_CUDA_PATH");
  std::string ptxas =
      std::string(toolkit && *toolkit ? toolkit : "/usr/local/cuda") +
      "/bin/ptxas";
  std::string reason = cudaUnavailableReason();
  if (reason.empty() && access(ptxas.c_str(), X_OK) != 0)
    reason = "no ptxas at " + ptxas;
  std::printf("target: %s%s\n", reason.empty() ? "cuda" : "cpu",
              reason.empty() ? "" : (" (no GPU run: " + reason + ")").c_str());
  return reason.empty() ? "cuda" : "cpu";
}

int run(int argc, char **argv) {
  Flags flags = parseFlags(argc, argv);
  checkFlags(flags);
  // The CUDA backend reads the mode when a session loads a plan.
  if (flags.deterministic && setenv("GENESIS_DETERMINISTIC", "1", 1) != 0)
    throw Error("cannot set GENESIS_DETERMINISTIC for --deterministic");

  std::unique_ptr<text::Tokenizer> tokenizer;
  if (flags.tokenizer.empty())
    tokenizer = std::make_unique<text::ByteTokenizer>();
  else
    tokenizer = std::make_unique<text::BpeTokenizer>(
        text::BpeTokenizer::fromFile(flags.tokenizer));
  if (flags.compileOnly) {
    runCompiler(flags, resolveTarget(flags.target), tokenizer->vocabSize());
    return 0;
  }
  // A plan given is loaded first: a wrong path fails before the corpus is
  // read.
  std::optional<PlanFile> plan;
  std::string weightsPath = flags.weights;
  if (!flags.plan.empty())
    plan = PlanFile::load(flags.plan);

  std::string corpusPath =
      flags.corpus.empty() ? models::findPythonStandardLibrary() : flags.corpus;
  std::vector<std::string> files =
      models::listCorpusFiles(corpusPath, flags.corpusExtension);
  models::Corpus corpus = models::readCorpus(files, flags.maxBytes, *tokenizer);
  models::TokenSplit split =
      models::splitTokens(corpus.tokens, flags.validationFraction);
  std::printf("corpus: %s, %lld of %zu files, %lld bytes -> %zu tokens (%s, "
              "vocabulary %lld): %zu train, %zu validation\n",
              corpusPath.c_str(), static_cast<long long>(corpus.files),
              files.size(), static_cast<long long>(corpus.bytes),
              corpus.tokens.size(),
              flags.tokenizer.empty() ? "bytes" : flags.tokenizer.c_str(),
              static_cast<long long>(tokenizer->vocabSize()),
              split.train.size(), split.validation.size());
  double entropy = models::unigramEntropy(split.train);
  std::printf("unigram entropy of the training tokens: %.4f nats/token "
              "(%.4f bits); the loss (nats) must fall below it\n",
              entropy, entropy / std::log(2.0));

  if (!plan) {
    runCompiler(flags, resolveTarget(flags.target), tokenizer->vocabSize());
    plan = PlanFile::load(flags.outputDir + "/lm.gplan");
    weightsPath = flags.outputDir + "/init.safetensors";
  }
  Session session(*plan);
  if (flags.checkNumerics || !flags.checkNumericsMode.empty())
    session.setCheckNumerics(numericsCheckFlag(flags.checkNumericsMode),
                             flags.outputDir + "/nonfinite-inputs.safetensors");
  for (auto &[name, value] : loadSafetensors(weightsPath))
    session.bind(name, value);
  models::LmShape shape = models::describeLmPlan(session);
  const bool cuda = plan->plan().header()->target() == plan::Target::Cuda;
  double flopsPerToken = shape.flopsPerToken();
  std::printf("model: %s, %lld layers, width %lld, sequence %lld, "
              "vocabulary %lld: %lld parameters; %lld windows x %lld = %lld "
              "tokens per step; %.4g FLOPs per token (6N + 12LSd)\n",
              shape.architecture.c_str(), static_cast<long long>(shape.layers),
              static_cast<long long>(shape.width),
              static_cast<long long>(shape.sequence),
              static_cast<long long>(shape.vocab),
              static_cast<long long>(shape.parameters),
              static_cast<long long>(shape.batch),
              static_cast<long long>(shape.sequence),
              static_cast<long long>(shape.batch) * shape.sequence,
              flopsPerToken);
  double peakTflops = flags.peakTflops;
  std::string peakSource = "--peak-tflops";
  if (peakTflops == 0 && cuda) {
    // H100 SXM dense peaks (the H200's are the same).
    bool half = hasHalfTensors(*plan), tf32 = allowsTf32(*plan);
    peakTflops = half ? 989 : tf32 ? 494 : 67;
    peakSource = half   ? "H100 dense bf16/f16"
                 : tf32 ? "H100 dense TF32"
                        : "H100 f32 without tensor cores";
  }
  if (peakTflops > 0)
    std::printf("MFU against %.4g TFLOP/s (%s)\n", peakTflops,
                peakSource.c_str());
  else
    std::printf("MFU needs --peak-tflops on the CPU\n");

  models::LmTrainOptions options;
  options.steps = flags.steps;
  options.learningRate = flags.learningRate;
  options.minLearningRate = flags.minLearningRate >= 0
                                ? flags.minLearningRate
                                : flags.learningRate / 10;
  options.warmupSteps = flags.warmup >= 0 ? flags.warmup : flags.steps / 20;
  options.seed = flags.seed;
  options.logEvery = flags.logEvery;
  options.evalEvery = flags.evalEvery;
  options.evalBatches = flags.evalBatches;
  options.stopAfterStep = flags.stopAfterStep;
  options.outputDir = flags.outputDir;
  options.resume = flags.resume;
  options.peakFlops = peakTflops * 1e12;
  options.unigramEntropy = entropy;
  options.device = cuda ? "CUDA plan" : "CPU plan";
  models::LmTrainResult result =
      models::trainLm(session, split.train, split.validation, options);

  double validation = std::nan("");
  for (const models::LmLogRecord &record : result.log)
    if (!std::isnan(record.validationLoss))
      validation = record.validationLoss;
  std::printf("validation loss %.4f nats vs unigram entropy %.4f nats; "
              "%.0f tokens/s",
              validation, entropy, result.tokensPerSecond);
  if (peakTflops > 0)
    std::printf(", MFU %.2f%%", 100 * flopsPerToken * result.tokensPerSecond /
                                    (peakTflops * 1e12));
  std::printf("\n");

  std::string samplePath = directoryOf(plan->name()) + "/sample.gplan";
  if (flags.sampleTokens > 0 && access(samplePath.c_str(), R_OK) == 0) {
    PlanFile samplePlan = PlanFile::load(samplePath);
    Session sampler(samplePlan);
    for (auto &[name, value] : session.parameters())
      sampler.bind(name, value);
    text::SamplingOptions sampling;
    sampling.temperature = flags.temperature;
    sampling.seed = flags.seed;
    text::Sampler picker(sampling);
    std::vector<int64_t> sample = models::continuePrompt(
        sampler, tokenizer->encode(flags.prompt), flags.sampleTokens, picker);
    std::printf("sample (%s, temperature %g):\n%s%s\n", samplePath.c_str(),
                flags.temperature, printable(flags.prompt).c_str(),
                printable(tokenizer->decodeContinuation(sample)).c_str());
  }
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  try {
    return run(argc, argv);
  } catch (const Error &error) {
    std::cerr << "lm-train: error: " << error.what() << "\n";
    return 1;
  }
}
