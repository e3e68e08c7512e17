//===- DecomposeGlobalNorm.cpp - global_norm as row reductions ------------===//
//
// Implements genesis-decompose-global-norm; Passes.td states the algorithm.
//
//===----------------------------------------------------------------------===//

#include "dialect/IR/GenesisOps.h"
#include "dialect/IR/Provenance.h"
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"

#include "llvm/Support/Debug.h"
#include <algorithm>

#define DEBUG_TYPE "genesis-decompose-global-norm"

namespace genesis {
#define GEN_PASS_DEF_GENESISDECOMPOSEGLOBALNORM
#include "passes/Passes.h.inc"
} // namespace genesis

using namespace mlir;
using namespace genesis;

namespace {

/// The row width C of the [n / C, C] view: the largest divisor of `n` up
/// to 4096 that still leaves 2048 rows (enough warps to fill the GPU), at
/// least 32; 0 when `n` has none.
int64_t rowWidth(int64_t n) {
  int64_t widest = std::clamp<int64_t>(n / 2048, 32, 4096);
  for (int64_t width = std::min(n, widest); width >= 32; --width)
    if (n % width == 0)
      return width;
  return 0;
}

/// The sum of squares of `x`'s elements, in `element`, as a scalar.
Value sumOfSquares(OpBuilder &b, Location loc, Value x, Type element) {
  auto type = cast<RankedTensorType>(x.getType());
  int64_t n = type.getNumElements();
  int64_t width = rowWidth(n);
  SmallVector<int64_t> shape =
      width ? SmallVector<int64_t>{n / width, width} : SmallVector<int64_t>{n};
  Value rows = x;
  if (type.getShape() != ArrayRef<int64_t>(shape))
    rows = ReshapeOp::create(
        b, loc, RankedTensorType::get(shape, type.getElementType()), x);
  if (type.getElementType() != element)
    rows = CastOp::create(b, loc, RankedTensorType::get(shape, element), rows);
  Value squares = MulOp::create(b, loc, rows, rows);
  if (!width)
    return ReduceSumOp::create(b, loc, squares, ArrayRef<int64_t>{0}, false);
  Value partial =
      ReduceSumOp::create(b, loc, squares, ArrayRef<int64_t>{1}, false);
  return ReduceSumOp::create(b, loc, partial, ArrayRef<int64_t>{0}, false);
}

struct GenesisDecomposeGlobalNormPass
    : public genesis::impl::GenesisDecomposeGlobalNormBase<
          GenesisDecomposeGlobalNormPass> {
  void runOnOperation() override {
    SmallVector<GlobalNormOp> norms;
    getOperation().walk([&](GlobalNormOp norm) { norms.push_back(norm); });
    LLVM_DEBUG(llvm::dbgs() << norms.size() << " global norms\n");
    for (GlobalNormOp norm : norms) {
      OpBuilder b(norm);
      Location loc = memberLocation(norm);
      Type element = norm.getType().getElementType();
      Value total;
      for (Value input : norm.getInputs()) {
        Value sum = sumOfSquares(b, loc, input, element);
        total = total ? AddOp::create(b, loc, total, sum).getResult() : sum;
      }
      norm.getResult().replaceAllUsesWith(
          SqrtOp::create(b, loc, total).getResult());
      norm.erase();
    }
  }
};

} // namespace
