//===- PadClassesTest.cpp - genesis-pad-classes ---------------------------===//
//
// Padding a classifier's classes changes nothing a user sees: the reference
// evaluator runs the loss and its gradient (genesis-autodiff) without the
// pass, and with it run before or after autodiff, on fresh random inputs in
// f64, with every label present and some ignored, and they agree to the last
// bits (the padded classes add exact zeros to the softmax's sum).
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
  func.func @loss(%x: tensor<12x16xf64>, %w: tensor<1000x16xf64>,
                  %y: tensor<12xi64>) -> tensor<f64> {
    %0 = genesis.matmul %x, %w transpose_rhs : tensor<12x16xf64>, tensor<1000x16xf64>
    %1 = genesis.reshape %0 : tensor<12x1000xf64> -> tensor<3x4x1000xf64>
    %2 = genesis.reshape %1 : tensor<3x4x1000xf64> -> tensor<12x1000xf64>
    %3 = genesis.cross_entropy %2, %y : (tensor<12x1000xf64>, tensor<12xi64>) -> tensor<f64>
    return %3 : tensor<f64>
  })";

enum class Padding { None, BeforeAutodiff, AfterAutodiff };

/// The loss, dL/dx and dL/dw of kLoss; padded before or after
/// genesis-autodiff built them (as genesis-train-step's callers do).
std::vector<HostArray> lossAndGradients(Padding padding,
                                        const std::vector<HostArray> &inputs) {
  mlir::MLIRContext context;
  context.loadDialect<GenesisDialect, mlir::func::FuncDialect>();
  auto module = mlir::parseSourceString<mlir::ModuleOp>(kLoss, &context);
  EXPECT_TRUE(module);
  auto loss = module->lookupSymbol<mlir::func::FuncOp>("loss");
  auto pad = [&](mlir::func::FuncOp function) {
    mlir::PassManager pm(&context);
    pm.addNestedPass<mlir::func::FuncOp>(
        createGenesisPadClasses(GenesisPadClassesOptions{128, 512}));
    EXPECT_TRUE(mlir::succeeded(pm.run(*module)));
    int pads = 0;
    function.walk([&](PadOp) { ++pads; });
    EXPECT_EQ(pads, 1);
  };
  if (padding == Padding::BeforeAutodiff)
    pad(loss);
  mlir::FailureOr<mlir::func::FuncOp> grad = differentiate(loss, {0, 1});
  EXPECT_TRUE(mlir::succeeded(grad));
  if (padding == Padding::AfterAutodiff)
    pad(*grad);
  return evaluate(*grad, inputs);
}

TEST(PadClasses, LossAndGradientsEqualTheUnpaddedModels) {
  Generator generator(7);
  HostArray x(DType::F64, {12, 16}), w(DType::F64, {1000, 16});
  for (HostArray *array : {&x, &w})
    for (int64_t i = 0; i < array->numel(); ++i)
      array->setDouble(i, 4 * generator.uniform() - 2);
  // The last class and the first are labels too; -100 is ignored.
  HostArray y(DType::I64, {12});
  for (int64_t i = 0; i < 12; ++i)
    y.setInt(i, i == 0   ? 999
                : i == 1 ? 0
                : i == 2 ? -100
                         : static_cast<int64_t>(generator.uniform() * 1000));
  std::vector<HostArray> want = lossAndGradients(Padding::None, {x, w, y});
  for (Padding padding : {Padding::BeforeAutodiff, Padding::AfterAutodiff}) {
    std::vector<HostArray> got = lossAndGradients(padding, {x, w, y});
    ASSERT_EQ(got.size(), want.size());
    for (size_t r = 0; r < want.size(); ++r) {
      ASSERT_EQ(got[r].shape(), want[r].shape()) << "result " << r;
      for (int64_t i = 0; i < want[r].numel(); ++i)
        EXPECT_NEAR(got[r].getDouble(i), want[r].getDouble(i),
                    1e-13 * std::max(1.0, std::fabs(want[r].getDouble(i))))
            << "padding " << int(padding) << " result " << r << " element "
            << i;
    }
  }
}

} // namespace
