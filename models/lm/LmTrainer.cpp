//===- LmTrainer.cpp - Training a GPT-2 language model from a plan --------===//

#include "models/lm/LmTrainer.h"
#include "runtime/formats/AtomicFile.h"
#include "runtime/session/Checkpoint.h"
#include "runtime/support/LrSchedule.h"
#include "runtime/support/Random.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

namespace genesis::models {
namespace {

/// Keeps the windows' Philox stream apart from the weight initialisation's,
/// which uses the same user seed.
constexpr uint64_t kWindowSeedSalt = 0x9E3779B97F4A7C15ull;

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

const TensorInfo *findTensor(const Session &session, const std::string &name) {
  for (const TensorInfo &info : session.tensors())
    if (info.name == name)
      return &info;
  return nullptr;
}

/// ids = tokens[start, start + S), targets = tokens[start + 1, start + S + 1)
/// for each start, as the plan's [B, S] i64 inputs.
std::map<std::string, HostArray> windowBatch(const std::vector<int32_t> &tokens,
                                             const std::vector<int64_t> &starts,
                                             int64_t sequence) {
  auto batch = static_cast<int64_t>(starts.size());
  HostArray ids(DType::I64, {batch, sequence});
  HostArray targets(DType::I64, {batch, sequence});
  auto *idData = ids.dataAs<int64_t>();
  auto *targetData = targets.dataAs<int64_t>();
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t s = 0; s < sequence; ++s) {
      idData[b * sequence + s] = tokens[starts[b] + s];
      targetData[b * sequence + s] = tokens[starts[b] + s + 1];
    }
  return {{"ids", std::move(ids)}, {"targets", std::move(targets)}};
}

std::string formatDuration(double seconds) {
  auto total = static_cast<long long>(std::max(0.0, seconds) + 0.5);
  char text[32];
  if (total >= 3600)
    std::snprintf(text, sizeof text, "%lld:%02lld:%02lld", total / 3600,
                  total / 60 % 60, total % 60);
  else
    std::snprintf(text, sizeof text, "%lld:%02lld", total / 60, total % 60);
  return text;
}

std::string formatRate(double tokensPerSecond) {
  char text[32];
  if (tokensPerSecond >= 1e6)
    std::snprintf(text, sizeof text, "%.2fM", tokensPerSecond / 1e6);
  else if (tokensPerSecond >= 1e3)
    std::snprintf(text, sizeof text, "%.1fk", tokensPerSecond / 1e3);
  else
    std::snprintf(text, sizeof text, "%.0f", tokensPerSecond);
  return text;
}

void checkIds(const std::vector<int32_t> &tokens, const char *split,
              int64_t vocab) {
  for (int32_t id : tokens)
    if (id < 0 || id >= vocab)
      throw Error(std::string("the ") + split + " tokens hold id " +
                  std::to_string(id) + ", outside the plan's vocabulary of " +
                  std::to_string(vocab) +
                  " (was the plan compiled for this tokenizer?)");
}

constexpr char kLogHeader[] =
    "step\ttrain_loss\tvalidation_loss\tlr\ttokens_per_s\tseconds";

/// The rows of a training.tsv up to `lastStep`; none if there is no file.
std::vector<LmLogRecord> readLog(const std::string &path, int64_t lastStep) {
  std::ifstream in(path);
  std::vector<LmLogRecord> records;
  std::string line;
  if (!in || !std::getline(in, line))
    return records;
  if (line != kLogHeader)
    throw Error("training log '" + path + "' does not start with the header '" +
                std::string(kLogHeader) + "'");
  for (int row = 2; std::getline(in, line); ++row) {
    std::istringstream fields(line);
    LmLogRecord record;
    std::string validation;
    if (!(fields >> record.step >> record.trainLoss >> validation >>
          record.learningRate >> record.tokensPerSecond >> record.seconds))
      throw Error("training log '" + path + "' line " + std::to_string(row) +
                  ": expected 6 tab-separated numbers");
    if (validation != "-")
      record.validationLoss = std::strtod(validation.c_str(), nullptr);
    if (record.step <= lastStep)
      records.push_back(record);
  }
  return records;
}

void writeLog(const std::vector<LmLogRecord> &records,
              const std::string &path) {
  std::ofstream out(path);
  out << kLogHeader << "\n";
  char row[256];
  for (const LmLogRecord &r : records) {
    char validation[32] = "-";
    if (!std::isnan(r.validationLoss))
      std::snprintf(validation, sizeof validation, "%.6f", r.validationLoss);
    std::snprintf(row, sizeof row, "%lld\t%.6f\t%s\t%.6g\t%.1f\t%.2f\n",
                  static_cast<long long>(r.step), r.trainLoss, validation,
                  r.learningRate, r.tokensPerSecond, r.seconds);
    out << row;
  }
  if (!out)
    throw Error("cannot write training log '" + path + "'");
}

void writePlot(const LmShape &shape, const LmTrainOptions &options) {
  const std::string &dir = options.outputDir;
  std::string script = dir + "/plot.gp";
  std::ofstream gp(script);
  gp << "set terminal png size 900,500\n"
     << "set output '" << dir << "/training.png'\n"
     << "set title 'Genesis GPT-2 " << shape.layers << " layers, width "
     << shape.width << ", " << shape.parameters / 1000 << "k parameters ("
     << options.device << ")'\n"
     << "set xlabel 'step'\nset ylabel 'loss (nats per token)'\n"
     << "set datafile missing '-'\nset key top right\nset grid\n"
     << "plot '" << dir
     << "/training.tsv' using 1:2 with lines lw 2 title 'train', '' using "
        "1:3 with linespoints pt 7 lw 2 title 'validation'";
  if (!std::isnan(options.unigramEntropy))
    gp << ", " << options.unigramEntropy
       << " with lines dt 2 lc rgb 'gray' title 'unigram entropy'";
  gp << "\n";
  gp.close();
  if (std::system(("command -v gnuplot >/dev/null && gnuplot '" + script +
                   "' 2>/dev/null")
                      .c_str()) == 0)
    std::printf("plot: %s/training.png\n", dir.c_str());
  else
    std::printf("plot: gnuplot not found; the table is %s/training.tsv\n",
                dir.c_str());
}

} // namespace

double LmShape::flopsPerToken() const {
  auto n = static_cast<double>(parameters - positionParameters);
  return 6 * n + 12 * static_cast<double>(layers) *
                     static_cast<double>(sequence) * static_cast<double>(width);
}

LmShape describeLmPlan(const Session &session) {
  auto fail = [&](const std::string &problem) -> Error {
    return Error("the plan " + session.planName() + " " + problem +
                 ": not a language-model plan from lm-train");
  };
  std::vector<std::string> functions = session.functionNames();
  for (const char *function : {"train_step", "loss"})
    if (std::find(functions.begin(), functions.end(), function) ==
        functions.end())
      throw fail(std::string("has no function '") + function + "'");
  const TensorInfo *ids = findTensor(session, "ids");
  const TensorInfo *targets = findTensor(session, "targets");
  // GPT-2's names, or Qwen2's (HF's Qwen2ForCausalLM: no learned positions).
  const TensorInfo *embedding = findTensor(session, "wte.weight");
  const TensorInfo *positions = findTensor(session, "wpe.weight");
  std::string layerPrefix = "h.";
  if (!embedding) {
    embedding = findTensor(session, "model.embed_tokens.weight");
    layerPrefix = "model.layers.";
  }
  if (!ids || ids->role != plan::Role::Input || ids->shape.size() != 2 ||
      ids->dtype != DType::I64)
    throw fail("has no i64 [batch, sequence] input 'ids'");
  if (!targets || targets->shape != ids->shape || targets->dtype != DType::I64)
    throw fail("has no input 'targets' shaped like 'ids'");
  if (!embedding || embedding->shape.size() != 2 ||
      (layerPrefix == "h." && (!positions || positions->shape.size() != 2)))
    throw fail("has no GPT-2 embeddings 'wte.weight' and 'wpe.weight' nor "
               "Qwen2's 'model.embed_tokens.weight'");
  LmShape shape;
  shape.architecture = layerPrefix == "h." ? "GPT-2" : "Qwen2";
  shape.batch = ids->shape[0];
  shape.sequence = ids->shape[1];
  shape.vocab = embedding->shape[0];
  shape.width = embedding->shape[1];
  std::set<std::string> layers;
  for (const TensorInfo &info : session.tensors()) {
    if (info.role != plan::Role::Parameter)
      continue;
    int64_t count = 1;
    for (int64_t size : info.shape)
      count *= size;
    shape.parameters += count;
    if (info.name == "wpe.weight")
      shape.positionParameters = count;
    if (info.name.rfind(layerPrefix, 0) == 0)
      layers.insert(
          info.name.substr(0, info.name.find('.', layerPrefix.size())));
  }
  shape.layers = static_cast<int64_t>(layers.size());
  return shape;
}

double evaluateLm(Session &session, const std::vector<int32_t> &validation,
                  int64_t batches) {
  LmShape shape = describeLmPlan(session);
  double sum = 0;
  for (int64_t b = 0; b < batches; ++b) {
    std::vector<int64_t> starts(shape.batch);
    for (int64_t i = 0; i < shape.batch; ++i)
      starts[i] = (b * shape.batch + i) * shape.sequence;
    if (starts.back() + shape.sequence + 1 >
        static_cast<int64_t>(validation.size()))
      throw Error("the validation split (" + std::to_string(validation.size()) +
                  " tokens) is too short for " + std::to_string(batches) +
                  " batches of " + std::to_string(shape.batch) +
                  " windows of " + std::to_string(shape.sequence + 1) +
                  " tokens");
    sum += session.run("loss", windowBatch(validation, starts, shape.sequence))
               .at("loss")
               .getDouble(0);
  }
  return sum / static_cast<double>(batches);
}

LmTrainResult trainLm(Session &session, const std::vector<int32_t> &train,
                      const std::vector<int32_t> &validation,
                      const LmTrainOptions &options) {
  LmShape shape = describeLmPlan(session);
  if (options.steps < 1 || options.logEvery < 1 || options.evalEvery < 1 ||
      options.evalBatches < 1)
    throw Error("steps, log interval, evaluation interval and evaluation "
                "batches must be positive");
  if (static_cast<int64_t>(train.size()) < shape.sequence + 2)
    throw Error("the training split has " + std::to_string(train.size()) +
                " tokens, too few for windows of " +
                std::to_string(shape.sequence + 1));
  int64_t validationWindows =
      (static_cast<int64_t>(validation.size()) - 1) / shape.sequence;
  if (validationWindows < shape.batch * options.evalBatches)
    throw Error("the validation split has " +
                std::to_string(validation.size()) + " tokens, " +
                std::to_string(std::max<int64_t>(validationWindows, 0)) +
                " windows of " + std::to_string(shape.sequence + 1) +
                "; evaluating " + std::to_string(options.evalBatches) +
                " batches of " + std::to_string(shape.batch) +
                " needs more (a larger corpus or validation fraction, or "
                "fewer evaluation batches)");
  checkIds(train, "training", shape.vocab);
  checkIds(validation, "validation", shape.vocab);
  createDirectories(options.outputDir);

  LmTrainResult result;
  // The log of the steps before this run: beside the checkpoint resumed
  // from, or in the output directory when the session goes on by itself.
  std::string history = options.outputDir;
  if (!options.resume.empty()) {
    loadCheckpoint(session, options.resume);
    size_t slash = options.resume.rfind('/');
    history =
        slash == std::string::npos ? "." : options.resume.substr(0, slash);
    std::printf("resumed from %s at step %llu\n", options.resume.c_str(),
                static_cast<unsigned long long>(session.step()));
  }
  result.firstStep = static_cast<int64_t>(session.step());
  if (result.firstStep > 0)
    result.log = readLog(history + "/training.tsv", result.firstStep);
  if (result.firstStep >= options.steps)
    throw Error("the session is at step " + std::to_string(result.firstStep) +
                ", not before the run's last step " +
                std::to_string(options.steps));
  optim::Schedule schedule =
      optim::warmup_cosine_lr(options.learningRate, options.warmupSteps,
                              options.steps, options.minLearningRate);
  const std::string checkpoint = options.outputDir + "/checkpoint.safetensors";
  const int64_t tokensPerStep = shape.batch * shape.sequence;
  const int64_t lastStart =
      static_cast<int64_t>(train.size()) - shape.sequence - 1;
  const uint64_t windowSeed = options.seed ^ kWindowSeedSalt;

  auto runStart = std::chrono::steady_clock::now();
  double stepSeconds = 0, intervalSeconds = 0, intervalLoss = 0;
  int64_t intervalSteps = 0, timedSteps = 0;
  for (int64_t step = result.firstStep; step < options.steps; ++step) {
    Generator windows(windowSeed);
    windows.set_state({windowSeed, static_cast<uint64_t>(step * shape.batch)});
    std::vector<int64_t> starts(shape.batch);
    for (int64_t &start : starts)
      start = windows.randint(0, lastStart + 1);
    std::map<std::string, HostArray> batch =
        windowBatch(train, starts, shape.sequence);
    double learningRate = schedule(step);
    session.bind("lr",
                 HostArray::fromValues<double>(DType::F32, {}, {learningRate}));
    auto stepStart = std::chrono::steady_clock::now();
    double loss =
        session.run("train_step", std::move(batch)).at("loss").getDouble(0);
    double seconds = secondsSince(stepStart);
    if (!std::isfinite(loss))
      throw Error("the training loss is " + std::to_string(loss) + " at step " +
                  std::to_string(step + 1) +
                  " (a lower learning rate may help)");
    result.losses.push_back(loss);
    // The first step of a session loads and warms the kernels: not a rate.
    if (step > result.firstStep) {
      stepSeconds += seconds;
      ++timedSteps;
    }
    intervalSeconds += seconds;
    intervalLoss += loss;
    ++intervalSteps;

    const int64_t done = step + 1;
    const bool last = done == options.steps;
    const bool stopping =
        options.stopAfterStep > 0 && done >= options.stopAfterStep;
    const bool evaluating = done % options.evalEvery == 0 || last;
    if (done % options.logEvery != 0 && !evaluating && !stopping)
      continue;
    LmLogRecord record;
    record.step = done;
    record.trainLoss = intervalLoss / static_cast<double>(intervalSteps);
    record.learningRate = learningRate;
    record.tokensPerSecond =
        static_cast<double>(intervalSteps * tokensPerStep) / intervalSeconds;
    double elapsed = secondsSince(runStart);
    double eta = elapsed / static_cast<double>(done - result.firstStep) *
                 static_cast<double>(options.steps - done);
    std::string mfu;
    if (options.peakFlops > 0) {
      char text[32];
      std::snprintf(text, sizeof text, "  MFU %.1f%%",
                    100 * shape.flopsPerToken() * record.tokensPerSecond /
                        options.peakFlops);
      mfu = text;
    }
    std::printf("step %*lld/%lld  loss %.4f  lr %.2e  %s tok/s%s  ETA %s\n",
                static_cast<int>(std::to_string(options.steps).size()),
                static_cast<long long>(done),
                static_cast<long long>(options.steps), record.trainLoss,
                learningRate, formatRate(record.tokensPerSecond).c_str(),
                mfu.c_str(), formatDuration(eta).c_str());
    if (evaluating) {
      record.validationLoss =
          evaluateLm(session, validation, options.evalBatches);
      std::printf("step %lld  validation loss %.4f\n",
                  static_cast<long long>(done), record.validationLoss);
    }
    std::fflush(stdout);
    record.seconds = secondsSince(runStart);
    result.log.push_back(record);
    intervalSeconds = intervalLoss = 0;
    intervalSteps = 0;
    // The log goes with each checkpoint, so that a run killed after it
    // resumes with its whole history.
    if (evaluating || stopping) {
      writeLog(result.log, options.outputDir + "/training.tsv");
      saveCheckpoint(session, checkpoint);
    }
    if (stopping)
      break;
  }
  result.tokensPerSecond =
      timedSteps > 0
          ? static_cast<double>(timedSteps * tokensPerStep) / stepSeconds
          : 0;

  std::printf("\n| step | train loss | validation loss | lr | tokens/s |\n"
              "| ---: | ---: | ---: | ---: | ---: |\n");
  for (const LmLogRecord &r : result.log) {
    if (std::isnan(r.validationLoss))
      continue;
    std::printf("| %lld | %.4f | %.4f | %.2e | %.0f |\n",
                static_cast<long long>(r.step), r.trainLoss, r.validationLoss,
                r.learningRate, r.tokensPerSecond);
  }
  writePlot(shape, options);
  std::printf("checkpoint: %s (step %llu)\n", checkpoint.c_str(),
              static_cast<unsigned long long>(session.step()));
  return result;
}

std::vector<int64_t> continuePrompt(Session &sampler,
                                    const std::vector<int64_t> &prompt,
                                    int64_t count, text::Sampler &picker) {
  const TensorInfo *ids = findTensor(sampler, "ids");
  const TensorInfo *logits = findTensor(sampler, "logits");
  if (!ids || ids->shape.size() != 2 || ids->shape[0] != 1 || !logits ||
      logits->shape.size() != 3)
    throw Error(
        "the plan " + sampler.planName() +
        " has no function forward: ids [1, sequence] -> logits [1, sequence, "
        "vocab]: not a sampling plan from lm-train");
  if (prompt.empty())
    throw Error("continuing a prompt needs at least one token of it");
  const int64_t sequence = ids->shape[1], vocab = logits->shape[2];
  std::vector<int64_t> tokens = prompt;
  for (int64_t i = 0; i < count; ++i) {
    int64_t length =
        std::min<int64_t>(sequence, static_cast<int64_t>(tokens.size()));
    HostArray input(DType::I64, {1, sequence});
    auto *inputData = input.dataAs<int64_t>();
    std::fill(inputData, inputData + sequence, 0);
    std::copy(tokens.end() - length, tokens.end(), inputData);
    HostArray out =
        sampler.run("forward", {{"ids", std::move(input)}}).at("logits");
    tokens.push_back(
        picker.sample(out.dataAs<float>() + (length - 1) * vocab, vocab));
  }
  return {tokens.begin() + static_cast<int64_t>(prompt.size()), tokens.end()};
}

} // namespace genesis::models
