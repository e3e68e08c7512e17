//===- gpt2_autodiff_bench.cpp - Compile-time cost of differentiation -----===//
//
// Traces GPT-2's training loss (124M configuration by default) and times the
// trace and the genesis-autodiff transform that derives its gradient.
//
//===----------------------------------------------------------------------===//

#include "dialect/Utils/CommandLine.h"
#include "frontend/Grad.h"
#include "models/gpt2/Gpt2.h"

#include "llvm/Support/CommandLine.h"

#include <chrono>
#include <cstdio>
#include <memory>

using namespace genesis;

static llvm::cl::opt<int64_t> layers("layers", llvm::cl::init(12),
                                     llvm::cl::desc("Transformer layers"));
static llvm::cl::opt<int64_t> seqLen("seq", llvm::cl::init(1024),
                                     llvm::cl::desc("Sequence length"));
static llvm::cl::opt<int64_t> batch("batch", llvm::cl::init(8),
                                    llvm::cl::desc("Batch size"));

static double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

static size_t countOps(mlir::func::FuncOp function) {
  size_t count = 0;
  function.walk([&](mlir::Operation *) { ++count; });
  return count;
}

int main(int argc, char **argv) {
  showOnlyOptions(
      "gpt2-autodiff-bench options",
      {std::addressof(layers), std::addressof(seqLen), std::addressof(batch)});
  llvm::cl::ParseCommandLineOptions(argc, argv,
                                    "Time tracing and autodiff of GPT-2\n");
  models::Gpt2Config config;
  config.n_layer = layers;
  auto start = std::chrono::steady_clock::now();
  Generator generator(0);
  models::Gpt2 model(config, generator);
  double init = secondsSince(start);

  start = std::chrono::steady_clock::now();
  Trace trace("loss");
  trace.bind(model);
  Tensor ids = trace.input("ids", DType::I64, {batch, seqLen});
  Tensor targets = trace.input("targets", DType::I64, {batch * seqLen});
  Tensor logits = model(ids);
  trace.output(
      "loss", cross_entropy(logits.reshape({batch * seqLen, config.vocab_size}),
                            targets));
  mlir::func::FuncOp forward = trace.finish();
  double traced = secondsSince(start);

  start = std::chrono::steady_clock::now();
  mlir::func::FuncOp gradient = value_and_grad(trace);
  double differentiated = secondsSince(start);

  std::printf("GPT-2 %lld layers, %.1fM parameters, batch %lld x %lld tokens\n",
              static_cast<long long>(config.n_layer),
              model.num_parameters() / 1e6,
              static_cast<long long>(batch.getValue()),
              static_cast<long long>(seqLen.getValue()));
  std::printf("| step | seconds | ops |\n| --- | --- | --- |\n");
  std::printf("| initialise weights (host) | %.3f | |\n", init);
  std::printf("| trace @loss | %.3f | %zu |\n", traced, countOps(forward));
  std::printf("| genesis-autodiff -> @loss_grad | %.3f | %zu |\n",
              differentiated, countOps(gradient));
  return 0;
}
