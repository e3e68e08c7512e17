//===- DecomposeLayerNorm.cpp - layer_norm as row sums and elementwise ops ===//
//
// Implements genesis-decompose-layer-norm; Passes.td states the algorithm.
//
//===----------------------------------------------------------------------===//

#include "dialect/IR/GenesisExpansions.h"
#include "dialect/IR/GenesisOps.h"
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "genesis-decompose-layer-norm"

namespace genesis {
#define GEN_PASS_DEF_GENESISDECOMPOSELAYERNORM
#include "passes/Passes.h.inc"
} // namespace genesis

using namespace mlir;
using namespace genesis;

namespace {

struct GenesisDecomposeLayerNormPass
    : public genesis::impl::GenesisDecomposeLayerNormBase<
          GenesisDecomposeLayerNormPass> {
  void runOnOperation() override {
    SmallVector<LayerNormOp> norms;
    getOperation().walk([&](LayerNormOp norm) {
      if (norm.getType().getElementType().isF32())
        norms.push_back(norm);
    });
    LLVM_DEBUG(llvm::dbgs() << norms.size() << " f32 layer norms\n");
    for (LayerNormOp norm : norms) {
      OpBuilder builder(norm);
      norm.getResult().replaceAllUsesWith(expandLayerNorm(builder, norm));
      norm.erase();
    }
  }
};

} // namespace
