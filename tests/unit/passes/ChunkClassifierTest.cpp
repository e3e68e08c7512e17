//===- ChunkClassifierTest.cpp - genesis-chunk-classifier -----------------===//
//
// Chunking a classifier's rows changes nothing but the order of the weight
// gradient's sums: the reference evaluator runs the loss and its gradients
// (genesis-autodiff, then the CUDA pipeline's decomposition and fusion of
// the loss) with and without the pass, on fresh random f32 inputs with some
// labels ignored, and they agree to f32 rounding (1e-5 relative: the weight
// gradient adds two partial sums of 6 rows instead of one of 12). In f32 no
// partial is rounded to 16 bits; GPT-2's bf16 run checks that case
// (docs/performance.md).
//
//===----------------------------------------------------------------------===//

#include "dialect/Evaluator/Evaluator.h"
#include "dialect/IR/GenesisOps.h"
#include "passes/Passes.h"
#include "runtime/support/Random.h"

#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include "gtest/gtest.h"

#include <cmath>

using namespace genesis;

namespace {

constexpr const char *kLoss = R"(
  func.func @loss(%x: tensor<12x4xf32>, %w: tensor<1024x4xf32>,
                  %y: tensor<12xi64>) -> tensor<f32> {
    %0 = genesis.matmul %x, %w transpose_rhs : tensor<12x4xf32>, tensor<1024x4xf32>
    %1 = genesis.cross_entropy %0, %y : (tensor<12x1024xf32>, tensor<12xi64>) -> tensor<f32>
    return %1 : tensor<f32>
  })";

/// The loss, dL/dx and dL/dw of kLoss, the loss fused with its gradient,
/// and in row chunks when `chunked`.
std::vector<HostArray> lossAndGradients(bool chunked,
                                        const std::vector<HostArray> &inputs) {
  mlir::MLIRContext context;
  context.loadDialect<GenesisDialect, mlir::func::FuncDialect>();
  auto module = mlir::parseSourceString<mlir::ModuleOp>(kLoss, &context);
  EXPECT_TRUE(module);
  auto loss = module->lookupSymbol<mlir::func::FuncOp>("loss");
  mlir::FailureOr<mlir::func::FuncOp> grad = differentiate(loss, {0, 1});
  EXPECT_TRUE(mlir::succeeded(grad));
  mlir::PassManager pm(&context);
  mlir::OpPassManager &functionPm = pm.nest<mlir::func::FuncOp>();
  functionPm.addPass(createGenesisDecomposeCrossEntropy());
  functionPm.addPass(createGenesisFuseCrossEntropyGradient());
  if (chunked)
    functionPm.addPass(createGenesisChunkClassifier(
        GenesisChunkClassifierOptions{/*minLogitsBytes=*/0,
                                      /*minChunkRows=*/2}));
  EXPECT_TRUE(mlir::succeeded(pm.run(*module)));
  int fused = 0;
  grad->walk([&](CrossEntropyWithGradOp) { ++fused; });
  // 12 x 1024 f32 logits (48 KiB) and a 16 KiB weight gradient: two chunks
  // leave 24 + 32 KiB live, less than one (64) or four (12 + 64).
  EXPECT_EQ(fused, chunked ? 2 : 1);
  return evaluate(*grad, inputs);
}

TEST(ChunkClassifier, LossAndGradientsEqualTheWholeClassifiers) {
  Generator generator(11);
  HostArray x(DType::F32, {12, 4}), w(DType::F32, {1024, 4});
  for (HostArray *array : {&x, &w})
    for (int64_t i = 0; i < array->numel(); ++i)
      array->setDouble(i, 4 * generator.uniform() - 2);
  // Labels in both chunks, the first and last class among them; -100 is
  // ignored (it changes the mean's count, which every chunk shares).
  HostArray y(DType::I64, {12});
  for (int64_t i = 0; i < 12; ++i)
    y.setInt(i, i == 0   ? 1023
                : i == 7 ? 0
                : i == 2 || i == 9
                    ? -100
                    : static_cast<int64_t>(generator.uniform() * 1024));
  std::vector<HostArray> want = lossAndGradients(false, {x, w, y});
  std::vector<HostArray> got = lossAndGradients(true, {x, w, y});
  ASSERT_EQ(got.size(), want.size());
  for (size_t r = 0; r < want.size(); ++r) {
    ASSERT_EQ(got[r].shape(), want[r].shape()) << "result " << r;
    for (int64_t i = 0; i < want[r].numel(); ++i)
      EXPECT_NEAR(got[r].getDouble(i), want[r].getDouble(i),
                  1e-5 * std::max(1e-3, std::fabs(want[r].getDouble(i))))
          << "result " << r << " element " << i;
  }
}

} // namespace
