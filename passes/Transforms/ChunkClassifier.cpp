//===- ChunkClassifier.cpp - a classifier and its loss in row chunks ------===//
//
// Implements genesis-chunk-classifier; Passes.td states the algorithm.
//
//===----------------------------------------------------------------------===//

#include "dialect/IR/GenesisOps.h"
#include "passes/Passes.h"

#include "mlir/IR/Dominance.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Debug.h"

#include <optional>

#define DEBUG_TYPE "genesis-chunk-classifier"

namespace genesis {
#define GEN_PASS_DEF_GENESISCHUNKCLASSIFIER
#include "passes/Passes.h.inc"
} // namespace genesis

using namespace mlir;
using namespace genesis;

namespace {

/// A classifier GEMM, its fused loss and the backward GEMMs of its logits'
/// gradient, all rank 2.
struct Classifier {
  /// genesis.matmul or genesis.library_call (none or bias): x @ w(^T) [+ b].
  Operation *head = nullptr;
  CrossEntropyWithGradOp loss;
  /// dlogits @ w(^T): their rows are the logits' rows.
  SmallVector<MatmulOp> rowProducts;
  /// dlogits^T @ x: sums over the logits' rows (the weight's gradient).
  SmallVector<MatmulOp> weightProducts;
};

/// The classifier around `loss`, when every op the chunks replace has the
/// shapes the rewrite slices and every operand they read from elsewhere is
/// defined before `loss`.
std::optional<Classifier> match(CrossEntropyWithGradOp loss,
                                DominanceInfo &dominance) {
  Classifier classifier;
  classifier.loss = loss;
  Value logits = loss.getLogits();
  if (!logits.hasOneUse())
    return std::nullopt;
  Operation *head = logits.getDefiningOp();
  if (auto matmul = dyn_cast_or_null<MatmulOp>(head)) {
    if (matmul.getTransposeLhs())
      return std::nullopt;
  } else if (auto call = dyn_cast_or_null<LibraryCallOp>(head)) {
    bool plainOrBias = call.getEpilogue() == GemmEpilogue::none ||
                       call.getEpilogue() == GemmEpilogue::bias;
    if (!plainOrBias || call.getAux() || call.getTransposeLhs())
      return std::nullopt;
  } else {
    return std::nullopt;
  }
  if (cast<RankedTensorType>(logits.getType()).getRank() != 2 ||
      head->getBlock() != loss->getBlock())
    return std::nullopt;
  classifier.head = head;

  for (Operation *user : loss.getLogitsGrad().getUsers()) {
    auto product = dyn_cast<MatmulOp>(user);
    if (!product || product.getLhs() != loss.getLogitsGrad() ||
        product.getRhs() == loss.getLogitsGrad() ||
        !dominance.properlyDominates(product.getRhs(), loss))
      return std::nullopt;
    if (!product.getTransposeLhs())
      classifier.rowProducts.push_back(product);
    else if (!product.getTransposeRhs())
      classifier.weightProducts.push_back(product);
    else
      return std::nullopt;
  }
  return classifier;
}

/// The number of chunks that leaves the least live at the chunked
/// classifier's peak (a chunk's logits and every chunk's partial weight
/// gradients), among powers of two dividing the rows into chunks of at
/// least `minRows`; 1 when none does better.
int64_t chooseChunks(Classifier &classifier, int64_t minRows) {
  Value logits = classifier.loss.getLogits();
  int64_t rows = cast<RankedTensorType>(logits.getType()).getDimSize(0);
  int64_t logitsBytes = *tensorBytes(logits.getType());
  int64_t partialBytes = 0;
  for (MatmulOp product : classifier.weightProducts)
    partialBytes += *tensorBytes(product.getType());
  int64_t best = 1, bestPeak = logitsBytes + partialBytes;
  for (int64_t chunks = 2; rows % chunks == 0 && rows / chunks >= minRows;
       chunks *= 2) {
    int64_t peak = logitsBytes / chunks + chunks * partialBytes;
    if (peak < bestPeak) {
      best = chunks;
      bestPeak = peak;
    }
  }
  return best;
}

/// Rows [first, first + count) of `value`.
Value sliceRows(OpBuilder &builder, Location loc, Value value, int64_t first,
                int64_t count) {
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<int64_t> start(type.getRank(), 0);
  SmallVector<int64_t> limit(type.getShape());
  SmallVector<int64_t> stride(type.getRank(), 1);
  start[0] = first;
  limit[0] = first + count;
  return SliceOp::create(builder, loc, value, start, limit, stride);
}

/// The head's GEMM of `features` instead of its own left operand.
Value headOf(OpBuilder &builder, Operation *head, Value features) {
  if (auto matmul = dyn_cast<MatmulOp>(head))
    return MatmulOp::create(builder, head->getLoc(), features, matmul.getRhs(),
                            false, matmul.getTransposeRhs());
  auto call = cast<LibraryCallOp>(head);
  auto type = cast<RankedTensorType>(call.getType());
  auto featureType = cast<RankedTensorType>(features.getType());
  return LibraryCallOp::create(
      builder, head->getLoc(),
      RankedTensorType::get({featureType.getDimSize(0), type.getDimSize(1)},
                            type.getElementType()),
      call.getEpilogue(), features, call.getRhs(), call.getBias(),
      /*aux=*/Value(), false, call.getTransposeRhs(), call.getAlpha());
}

/// The sum of `partials` in f32 (or wider), in their own type.
Value sumOf(OpBuilder &builder, Location loc, ArrayRef<Value> partials) {
  auto type = cast<RankedTensorType>(partials.front().getType());
  Type element = type.getElementType();
  bool widen = element.getIntOrFloatBitWidth() < 32;
  auto wide = type.clone(builder.getF32Type());
  auto widened = [&](Value partial) -> Value {
    return widen ? CastOp::create(builder, loc, wide, partial).getResult()
                 : partial;
  };
  Value sum = widened(partials.front());
  for (Value partial : partials.drop_front())
    sum = AddOp::create(builder, loc, sum, widened(partial));
  return widen ? CastOp::create(builder, loc, type, sum).getResult() : sum;
}

/// Replaces `classifier` with `chunks` row chunks at its loss (Passes.td).
void chunk(Classifier &classifier, int64_t chunks) {
  CrossEntropyWithGradOp loss = classifier.loss;
  Operation *head = classifier.head;
  Value features = head->getOperand(0);
  int64_t rows =
      cast<RankedTensorType>(loss.getLogits().getType()).getDimSize(0);
  int64_t chunkRows = rows / chunks;
  OpBuilder builder(loss);
  Location loc = loss.getLoc();

  SmallVector<Value> losses;
  SmallVector<SmallVector<Value>> rowParts(classifier.rowProducts.size());
  SmallVector<SmallVector<Value>> weightParts(classifier.weightProducts.size());
  // Each chunk's logits die in its own loss and gradients before the next
  // chunk's GEMM defines them.
  for (int64_t c = 0; c < chunks; ++c) {
    int64_t first = c * chunkRows;
    Value chunkFeatures =
        sliceRows(builder, head->getLoc(), features, first, chunkRows);
    Value logits = headOf(builder, head, chunkFeatures);
    Value labels = sliceRows(builder, loc, loss.getLabels(), first, chunkRows);
    Value cotangents =
        sliceRows(builder, loc, loss.getLossGrad(), first, chunkRows);
    auto fused = CrossEntropyWithGradOp::create(
        builder, loc, logits, labels, cotangents, loss.getIgnoreIndexAttr(),
        loss.getLabelSmoothingAttr());
    losses.push_back(fused.getLoss());
    for (auto [product, parts] :
         llvm::zip_equal(classifier.rowProducts, rowParts))
      parts.push_back(MatmulOp::create(builder, product.getLoc(),
                                       fused.getLogitsGrad(), product.getRhs(),
                                       false, product.getTransposeRhs()));
    for (auto [product, parts] :
         llvm::zip_equal(classifier.weightProducts, weightParts))
      parts.push_back(
          MatmulOp::create(builder, product.getLoc(), fused.getLogitsGrad(),
                           product.getRhs() == features
                               ? chunkFeatures
                               : sliceRows(builder, product.getLoc(),
                                           product.getRhs(), first, chunkRows),
                           true, false));
  }

  for (auto [product, parts] :
       llvm::zip_equal(classifier.rowProducts, rowParts)) {
    product.getResult().replaceAllUsesWith(
        ConcatOp::create(builder, product.getLoc(), parts, 0));
    product.erase();
  }
  for (auto [product, parts] :
       llvm::zip_equal(classifier.weightProducts, weightParts)) {
    product.getResult().replaceAllUsesWith(
        sumOf(builder, product.getLoc(), parts));
    product.erase();
  }
  loss.getLoss().replaceAllUsesWith(ConcatOp::create(builder, loc, losses, 0));
  loss.erase();
  head->erase();
}

struct GenesisChunkClassifierPass
    : public genesis::impl::GenesisChunkClassifierBase<
          GenesisChunkClassifierPass> {
  using GenesisChunkClassifierBase::GenesisChunkClassifierBase;

  void runOnOperation() override {
    func::FuncOp function = getOperation();
    DominanceInfo dominance(function);
    SmallVector<CrossEntropyWithGradOp> losses;
    function.walk([&](CrossEntropyWithGradOp loss) { losses.push_back(loss); });
    // Matched one at a time: a rewrite erases ops that another classifier
    // could have matched (its head, a product of the other's gradient), and
    // erases no loss but its own.
    for (CrossEntropyWithGradOp loss : losses) {
      // Genesis tensors have static shapes (the ops verify it).
      if (*tensorBytes(loss.getLogits().getType()) < minLogitsBytes)
        continue;
      std::optional<Classifier> classifier = match(loss, dominance);
      if (!classifier)
        continue;
      int64_t chunks = chooseChunks(*classifier, minChunkRows);
      LLVM_DEBUG(llvm::dbgs() << chunks << " chunks for " << loss << "\n");
      if (chunks > 1)
        chunk(*classifier, chunks);
    }
  }
};

} // namespace
