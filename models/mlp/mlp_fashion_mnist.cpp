//===- mlp_fashion_mnist.cpp - Train the MLP on Fashion-MNIST --------------===//
//
// The main job. Traces a 784-256-128-10 MLP's loss, differentiates it and
// builds the AdamW train step (genesis-autodiff, genesis-train-step),
// compiles both the train step and the loss (which also returns the logits,
// for accuracy) into one CPU plan, and trains with the runtime: a progress
// line per step, a table and a PNG plot per run, test accuracy each epoch, a
// checkpoint after each epoch, and --resume to continue from one.
//
//===----------------------------------------------------------------------===//

#include "frontend/Optim.h"
#include "models/common/FashionMnist.h"
#include "models/mlp/Mlp.h"
#include "models/mlp/MlpPlan.h"
#include "runtime/AtomicFile.h"
#include "runtime/Checkpoint.h"
#include "runtime/PlanFile.h"
#include "runtime/Session.h"

#include "llvm/Support/CommandLine.h"

#include <chrono>
#include <cstring>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <numeric>

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
static llvm::cl::opt<std::string>
    outputDir("out", llvm::cl::init("mlp-run"),
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

namespace {

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

/// Rows `order[first .. first+count)` of `array`.
HostArray gather(const HostArray &array, const std::vector<int64_t> &order,
                 int64_t first, int64_t count) {
  std::vector<int64_t> shape = array.shape();
  int64_t row = array.numel() / shape[0] * static_cast<int64_t>(dtypeSize(array.dtype()));
  shape[0] = count;
  HostArray out(array.dtype(), shape);
  for (int64_t i = 0; i < count; ++i)
    std::memcpy(static_cast<char *>(out.data()) + i * row,
                static_cast<const char *>(array.data()) + order[first + i] * row,
                row);
  return out;
}

struct EpochRecord {
  int64_t epoch;
  double trainLoss, testLoss, testAccuracy, seconds, samplesPerSecond;
};

EpochRecord evaluateTest(Session &session, const data::Dataset &test,
                         int64_t batch) {
  std::vector<int64_t> order(test.images.shape()[0]);
  std::iota(order.begin(), order.end(), 0);
  int64_t batches = static_cast<int64_t>(order.size()) / batch, correct = 0;
  double loss = 0;
  for (int64_t b = 0; b < batches; ++b) {
    auto out = session.run("loss", {{"images", gather(test.images, order, b * batch, batch)},
                                    {"labels", gather(test.labels, order, b * batch, batch)}});
    loss += out.at("loss").getDouble(0);
    const HostArray &logits = out.at("logits");
    for (int64_t r = 0; r < batch; ++r) {
      int64_t best = 0;
      for (int64_t c = 1; c < 10; ++c)
        if (logits.getDouble(r * 10 + c) > logits.getDouble(r * 10 + best))
          best = c;
      correct += best == test.labels.getInt(b * batch + r);
    }
  }
  return {0, 0, loss / batches, static_cast<double>(correct) / (batches * batch),
          0, 0};
}

void writeTableAndPlot(const std::vector<EpochRecord> &records) {
  std::string table = outputDir + "/training.tsv";
  std::ofstream out(table);
  out << "epoch\ttrain_loss\ttest_loss\ttest_accuracy\tseconds\tsamples_per_s\n";
  for (const EpochRecord &r : records)
    out << r.epoch << "\t" << r.trainLoss << "\t" << r.testLoss << "\t"
        << r.testAccuracy << "\t" << r.seconds << "\t" << r.samplesPerSecond
        << "\n";
  out.close();
  std::string script = outputDir + "/plot.gp";
  std::ofstream gp(script);
  gp << "set terminal png size 900,400\n"
     << "set output '" << outputDir << "/training.png'\n"
     << "set multiplot layout 1,2 title 'Genesis MLP 784-256-128-10 on "
        "Fashion-MNIST (CPU plan)'\n"
     << "set xlabel 'epoch'\nset ylabel 'loss'\nset key top right\n"
     << "plot '" << table << "' using 1:2 with linespoints title 'train', '"
     << table << "' using 1:3 with linespoints title 'test'\n"
     << "set ylabel 'test accuracy'\nunset key\n"
     << "plot '" << table << "' using 1:4 with linespoints lw 2\n"
     << "unset multiplot\n";
  gp.close();
  if (std::system(("command -v gnuplot >/dev/null && gnuplot " + script +
                   " 2>/dev/null")
                      .c_str()) == 0)
    std::printf("plot: %s/training.png\n", outputDir.c_str());
  else
    std::printf("plot: gnuplot not found; the table is %s\n", table.c_str());
}

} // namespace

int main(int argc, char **argv) {
  llvm::cl::ParseCommandLineOptions(argc, argv,
                                    "Train the Genesis MLP on Fashion-MNIST\n");
  try {
    std::system(("mkdir -p '" + outputDir + "'").c_str());
    Generator generator(seed);
    auto model = models::makeMlp({256, 128}, generator);

    auto start = std::chrono::steady_clock::now();
    std::vector<uint8_t> planBytes =
        models::compileMlpTrainingPlan(*model, batchSize, printIr);
    writeFileAtomically(outputDir + "/mlp.gplan", planBytes.data(), planBytes.size());
    PlanFile plan = PlanFile::fromBytes(planBytes.data(), planBytes.size(),
                                        outputDir + "/mlp.gplan");
    Session session(plan);
    for (auto &[name, value] : model->state_dict())
      session.bind(name, value);
    std::printf("compiled %s (%zu bytes) in %.2f s; arena %llu bytes\n",
                (outputDir + "/mlp.gplan").c_str(), planBytes.size(),
                secondsSince(start),
                static_cast<unsigned long long>(plan.plan().memory()->arena_bytes()));
    if (!resume.empty()) {
      loadCheckpoint(session, resume);
      std::printf("resumed from %s at step %llu\n", resume.c_str(),
                  static_cast<unsigned long long>(session.step()));
    }

    data::Dataset train = data::loadFashionMnist("train");
    data::Dataset test = data::loadFashionMnist("test");
    int64_t count = std::min<int64_t>(trainImages, train.images.shape()[0]);
    int64_t stepsPerEpoch = count / batchSize;
    int64_t totalSteps = stepsPerEpoch * epochs;
    optim::Schedule schedule =
        optim::warmup_cosine_lr(learningRate, stepsPerEpoch / 2, totalSteps,
                                learningRate / 20);
    std::vector<EpochRecord> records;
    int64_t firstEpoch = static_cast<int64_t>(session.step()) / stepsPerEpoch;
    for (int64_t epoch = firstEpoch; epoch < epochs; ++epoch) {
      // The order of an epoch depends only on the seed and the epoch, so a
      // resumed run sees the same batches as an uninterrupted one.
      std::vector<int64_t> order(count);
      std::iota(order.begin(), order.end(), 0);
      Generator shuffle(seed * 1000003 + static_cast<uint64_t>(epoch));
      for (int64_t i = count - 1; i > 0; --i)
        std::swap(order[i], order[shuffle.randint(0, i + 1)]);
      auto epochStart = std::chrono::steady_clock::now();
      double lossSum = 0;
      for (int64_t s = 0; s < stepsPerEpoch; ++s) {
        int64_t globalStep = epoch * stepsPerEpoch + s;
        session.bind("lr", HostArray::fromValues<double>(DType::F32, {},
                                                         {schedule(globalStep)}));
        auto out = session.run(
            "train_step",
            {{"images", gather(train.images, order, s * batchSize, batchSize)},
             {"labels", gather(train.labels, order, s * batchSize, batchSize)}});
        lossSum += out.at("loss").getDouble(0);
        double elapsed = secondsSince(epochStart);
        double rate = (s + 1) * batchSize / elapsed;
        double eta = ((stepsPerEpoch - s - 1) +
                      (epochs - epoch - 1) * stepsPerEpoch) *
                     batchSize / rate;
        if (s % 20 == 19 || s + 1 == stepsPerEpoch)
          std::fprintf(stderr,
                       "\r[train] epoch %lld/%lld step %lld/%lld loss %.4f  "
                       "%.0f samples/s  ETA %.0fs   ",
                       static_cast<long long>(epoch + 1),
                       static_cast<long long>(epochs.getValue()),
                       static_cast<long long>(s + 1),
                       static_cast<long long>(stepsPerEpoch), lossSum / (s + 1),
                       rate, eta);
      }
      std::fprintf(stderr, "\n");
      EpochRecord record = evaluateTest(session, test, batchSize);
      record.epoch = epoch + 1;
      record.trainLoss = lossSum / stepsPerEpoch;
      record.seconds = secondsSince(epochStart);
      record.samplesPerSecond = stepsPerEpoch * batchSize / record.seconds;
      records.push_back(record);
      saveCheckpoint(session, outputDir + "/checkpoint.safetensors");
      if (stopAfterEpoch > 0 && epoch + 1 >= stopAfterEpoch)
        break;
    }
    std::printf("| epoch | train loss | test loss | test accuracy | seconds | "
                "samples/s |\n| --- | --- | --- | --- | --- | --- |\n");
    for (const EpochRecord &r : records)
      std::printf("| %lld | %.4f | %.4f | %.4f | %.1f | %.0f |\n",
                  static_cast<long long>(r.epoch), r.trainLoss, r.testLoss,
                  r.testAccuracy, r.seconds, r.samplesPerSecond);
    if (!records.empty())
      writeTableAndPlot(records);
    std::printf("checkpoint: %s/checkpoint.safetensors (step %llu)\n",
                outputDir.c_str(), static_cast<unsigned long long>(session.step()));
  } catch (const Error &error) {
    std::cerr << "mlp-fashion-mnist: error: " << error.what() << "\n";
    return 1;
  }
  return 0;
}
