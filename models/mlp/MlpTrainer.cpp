//===- MlpTrainer.cpp - Training the MLP from a compiled plan -------------===//

#include "models/mlp/MlpTrainer.h"
#include "models/common/FashionMnist.h"
#include "runtime/formats/AtomicFile.h"
#include "runtime/session/Checkpoint.h"
#include "runtime/support/LrSchedule.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <numeric>

namespace genesis::models {
namespace {

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

/// Rows `order[first .. first+count)` of `array`.
HostArray gather(const HostArray &array, const std::vector<int64_t> &order,
                 int64_t first, int64_t count) {
  std::vector<int64_t> shape = array.shape();
  int64_t row =
      array.numel() / shape[0] * static_cast<int64_t>(dtypeSize(array.dtype()));
  shape[0] = count;
  HostArray out(array.dtype(), shape);
  for (int64_t i = 0; i < count; ++i)
    std::memcpy(
        static_cast<char *>(out.data()) + i * row,
        static_cast<const char *>(array.data()) + order[first + i] * row, row);
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
    auto out = session.run(
        "loss", {{"images", gather(test.images, order, b * batch, batch)},
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
  return {
      0, 0, loss / batches, static_cast<double>(correct) / (batches * batch),
      0, 0};
}

void writeTableAndPlot(const std::vector<EpochRecord> &records,
                       const MlpTrainOptions &options) {
  const std::string &outputDir = options.outputDir;
  std::string table = outputDir + "/training.tsv";
  std::ofstream out(table);
  out << "epoch\ttrain_loss\ttest_loss\ttest_accuracy\tseconds\tsamples_per_"
         "s\n";
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
        "Fashion-MNIST ("
     << options.device << ")'\n"
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

void trainMlp(Session &session, const MlpTrainOptions &options) {
  createDirectories(options.outputDir);
  int64_t batchSize = 0;
  for (const TensorInfo &info : session.tensors())
    if (info.name == "images")
      batchSize = info.shape.at(0);
  if (batchSize == 0)
    throw Error("the plan " + session.planName() + " has no 'images' input");
  if (!options.resume.empty()) {
    loadCheckpoint(session, options.resume);
    std::printf("resumed from %s at step %llu\n", options.resume.c_str(),
                static_cast<unsigned long long>(session.step()));
  }

  data::Dataset train = data::loadFashionMnist("train");
  data::Dataset test = data::loadFashionMnist("test");
  int64_t count =
      std::min<int64_t>(options.trainImages, train.images.shape()[0]);
  int64_t stepsPerEpoch = count / batchSize;
  int64_t totalSteps = stepsPerEpoch * options.epochs;
  optim::Schedule schedule =
      optim::warmup_cosine_lr(options.learningRate, stepsPerEpoch / 2,
                              totalSteps, options.learningRate / 20);
  std::vector<EpochRecord> records;
  int64_t firstEpoch = static_cast<int64_t>(session.step()) / stepsPerEpoch;
  for (int64_t epoch = firstEpoch; epoch < options.epochs; ++epoch) {
    // The order of an epoch depends only on the seed and the epoch, so a
    // resumed run sees the same batches as an uninterrupted one.
    std::vector<int64_t> order(count);
    std::iota(order.begin(), order.end(), 0);
    Generator shuffle(options.seed * 1000003 + static_cast<uint64_t>(epoch));
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
                    (options.epochs - epoch - 1) * stepsPerEpoch) *
                   batchSize / rate;
      if (s % 20 == 19 || s + 1 == stepsPerEpoch)
        std::fprintf(stderr,
                     "\r[train] epoch %lld/%lld step %lld/%lld loss %.4f  "
                     "%.0f samples/s  ETA %.0fs   ",
                     static_cast<long long>(epoch) + 1,
                     static_cast<long long>(options.epochs),
                     static_cast<long long>(s) + 1,
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
    saveCheckpoint(session, options.outputDir + "/checkpoint.safetensors");
    if (options.stopAfterEpoch > 0 && epoch + 1 >= options.stopAfterEpoch)
      break;
  }
  std::printf("| epoch | train loss | test loss | test accuracy | seconds | "
              "samples/s |\n| --- | --- | --- | --- | --- | --- |\n");
  for (const EpochRecord &r : records)
    std::printf("| %lld | %.4f | %.4f | %.4f | %.1f | %.0f |\n",
                static_cast<long long>(r.epoch), r.trainLoss, r.testLoss,
                r.testAccuracy, r.seconds, r.samplesPerSecond);
  if (!records.empty())
    writeTableAndPlot(records, options);
  std::printf("checkpoint: %s/checkpoint.safetensors (step %llu)\n",
              options.outputDir.c_str(),
              static_cast<unsigned long long>(session.step()));
}

} // namespace genesis::models
