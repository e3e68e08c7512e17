//===- DecomposeAttentionTest.cpp - genesis-decompose-attention -----------===//
//
// The decomposition computes what the ops compute: the reference evaluator
// runs each function before and after the pass on fresh random inputs (f64,
// so the two orders of summation agree to ~1e-12), for GQA, masks, causal
// S = T, S < T and S > T (rows that see no key), forward and backward.
//
//===----------------------------------------------------------------------===//

#include "dialect/Evaluator/Evaluator.h"
#include "dialect/IR/GenesisOps.h"
#include "dialect/Utils/DTypes.h"
#include "passes/Passes.h"
#include "runtime/support/Random.h"
#include "tests/unit/passes/KernelTestSupport.h"

#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include "gtest/gtest.h"

#include <cmath>

using namespace genesis;
using namespace genesis::test;

namespace {

TEST(DecomposeAttention, MatchesTheOpsOnTheEvaluator) {
  struct Case {
    int64_t b, hq, hkv, s, t, d, dv;
    bool mask, causal;
  };
  for (const Case &c : std::vector<Case>{
           {2, 4, 2, 6, 6, 8, 5, false, true}, // GQA, S = T
           {2, 4, 1, 3, 7, 4, 6, true, true},  // S < T, MQA, mask
           {1, 2, 2, 7, 4, 3, 3, false, true}, // S > T: rows that see no key
           {2, 3, 3, 5, 6, 4, 4, true, false}, // additive mask only
       }) {
    mlir::MLIRContext context;
    context.loadDialect<GenesisDialect, mlir::func::FuncDialect>();
    auto module = mlir::parseSourceString<mlir::ModuleOp>(
        attentionFunction("f64", c.b, c.hq, c.hkv, c.s, c.t, c.d, c.dv, c.mask,
                          c.causal),
        &context);
    ASSERT_TRUE(module);
    auto function = module->lookupSymbol<mlir::func::FuncOp>("f");
    std::vector<HostArray> inputs;
    Generator generator(c.s * 100 + c.t);
    for (mlir::Type type : function.getArgumentTypes()) {
      auto tensor = mlir::cast<mlir::RankedTensorType>(type);
      HostArray array(DType::F64,
                      {tensor.getShape().begin(), tensor.getShape().end()});
      for (int64_t i = 0; i < array.numel(); ++i)
        array.setDouble(i, 2 * generator.uniform() - 1);
      inputs.push_back(array);
    }
    std::vector<HostArray> expected = evaluate(function, inputs);
    mlir::PassManager pm(&context);
    pm.addNestedPass<mlir::func::FuncOp>(createGenesisDecomposeAttention());
    ASSERT_TRUE(mlir::succeeded(pm.run(*module)));
    function.walk([](mlir::Operation *op) {
      EXPECT_FALSE((mlir::isa<AttentionOp, AttentionGradOp>(op)));
    });
    std::vector<HostArray> got = evaluate(function, inputs);
    for (size_t r = 0; r < expected.size(); ++r)
      for (int64_t i = 0; i < expected[r].numel(); ++i) {
        double want = expected[r].getDouble(i), have = got[r].getDouble(i);
        ASSERT_FALSE(std::isnan(have)) << "result " << r << " element " << i;
        EXPECT_NEAR(have, want, 1e-12 * std::max(1.0, std::fabs(want)))
            << "S " << c.s << " T " << c.t << " result " << r << " element "
            << i;
      }
  }
}

} // namespace
