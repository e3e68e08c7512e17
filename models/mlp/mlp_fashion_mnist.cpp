//===- mlp_fashion_mnist.cpp - The MLP on Fashion-MNIST -------------------===//
//
// Builds the 784-256-10 MLP with seeded weights, traces its loss function
// into the genesis dialect, prints the IR and runs it with the reference
// evaluator over Fashion-MNIST test batches, printing loss and accuracy with
// a progress line. (Training arrives with the autodiff pass and the CPU
// backend; until then the weights are the seeded initial ones.)
//
//===----------------------------------------------------------------------===//

#include "dialect/Evaluator/Evaluator.h"
#include "frontend/Trace.h"
#include "models/common/FashionMnist.h"
#include "models/mlp/Mlp.h"

#include "llvm/Support/CommandLine.h"

#include <chrono>
#include <cstdio>
#include <iostream>

using namespace genesis;

static llvm::cl::opt<int64_t> batchSize("batch", llvm::cl::init(64),
                                        llvm::cl::desc("Batch size"));
static llvm::cl::opt<int64_t>
    batches("batches", llvm::cl::init(8),
            llvm::cl::desc("Test batches to evaluate"));
static llvm::cl::opt<uint64_t> seed("seed", llvm::cl::init(0),
                                    llvm::cl::desc("Weight seed"));
static llvm::cl::opt<bool> printIr("print-ir", llvm::cl::init(true),
                                   llvm::cl::desc("Print the traced IR"));

int main(int argc, char **argv) {
  llvm::cl::ParseCommandLineOptions(argc, argv, "Genesis MLP on Fashion-MNIST\n");
  try {
    Generator generator(seed);
    auto model = models::makeMlp(256, generator);

    Trace trace("loss");
    trace.bind(*model);
    Tensor images = trace.input("images", DType::F32, {batchSize, 784});
    Tensor labels = trace.input("labels", DType::I64, {batchSize});
    Tensor logits = model->forward(images);
    trace.output("loss", cross_entropy(logits, labels));
    trace.output("correct",
                 sum(eq(argmax(logits, 1), labels).to(DType::I64)));
    mlir::func::FuncOp function = trace.finish();
    if (printIr)
      std::cout << trace.str() << "\n";

    data::Dataset test = data::loadFashionMnist("test");
    int64_t available = test.images.shape()[0] / batchSize;
    int64_t count = std::min<int64_t>(batches, available);
    double totalLoss = 0;
    int64_t correct = 0;
    auto start = std::chrono::steady_clock::now();
    for (int64_t b = 0; b < count; ++b) {
      std::vector<HostArray> results = evaluate(
          function,
          trace.arguments(
              {{"images", data::batchOf(test.images, b * batchSize, batchSize)},
               {"labels",
                data::batchOf(test.labels, b * batchSize, batchSize)}}));
      totalLoss += results[0].getDouble(0);
      correct += results[1].getInt(0);
      double elapsed = std::chrono::duration<double>(
                           std::chrono::steady_clock::now() - start)
                           .count();
      double rate = (b + 1) * batchSize / elapsed;
      std::fprintf(stderr,
                   "\r[evaluate] batch %lld/%lld  %.0f samples/s  ETA %.1fs   ",
                   static_cast<long long>(b + 1), static_cast<long long>(count),
                   rate, (count - b - 1) * batchSize / rate);
    }
    std::fprintf(stderr, "\n");
    std::printf("MLP 784-256-10 (%lld parameters, seed %llu), reference "
                "evaluator on %lld test images: mean loss %.4f, accuracy "
                "%.2f%% (untrained: chance is 10%%)\n",
                static_cast<long long>(model->num_parameters()),
                static_cast<unsigned long long>(seed.getValue()),
                static_cast<long long>(count * batchSize), totalLoss / count,
                100.0 * correct / (count * batchSize));
  } catch (const Error &error) {
    std::cerr << "mlp-fashion-mnist: error: " << error.what() << "\n";
    return 1;
  }
  return 0;
}
