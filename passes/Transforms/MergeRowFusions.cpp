//===- MergeRowFusions.cpp - Producer and consumer fusions as one row -----===//
//
// Implements genesis-merge-row-fusions; Passes.td states the algorithm.
//
//===----------------------------------------------------------------------===//

#include "dialect/IR/GenesisOps.h"
#include "dialect/IR/Provenance.h"
#include "passes/Analysis/RowFusion.h"
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "genesis-merge-row-fusions"

namespace genesis {
#define GEN_PASS_DEF_GENESISMERGEROWFUSIONS
#include "passes/Passes.h.inc"
} // namespace genesis

using namespace mlir;
using namespace genesis;

namespace {

/// The widest row for which a merge that drops no producer result is taken:
/// it saves the consumer's second pass over the rows, and the row kernel's
/// threads hold at most 4 elements of such a row in registers.
constexpr int64_t kMaxKeptRowWidth = 4096;

/// Merges `producer` into `consumer`, one of its users, when the merged
/// body is a row fusion (rowFusionShape): the merged kernel reads the
/// producer's rows once, and producer results used only by `consumer` are
/// no longer written. A merge that drops no result is taken for rows of at
/// most kMaxKeptRowWidth. The merged fusion takes the producer's place, so
/// the consumer's other inputs must be defined before the producer. It
/// yields the producer's results still used elsewhere, then the
/// consumer's.
bool mergeRowFusionPair(FusionOp producer, FusionOp consumer) {
  Operation *consumerOp = consumer;
  SmallVector<Value> kept;
  for (Value result : producer.getResults()) {
    bool onlyConsumer = llvm::all_of(
        result.getUsers(), [&](Operation *user) { return user == consumerOp; });
    if (!onlyConsumer || result.use_empty())
      kept.push_back(result);
  }
  bool dropsOne = kept.size() < producer->getNumResults();
  for (Value input : consumer.getInputs()) {
    Operation *definer = input.getDefiningOp();
    if (definer && definer != producer.getOperation() &&
        !definer->isBeforeInBlock(producer))
      return false;
  }

  // Inputs of both, each once; the consumer's block arguments that were
  // producer results map to the producer's yielded values.
  SmallVector<Value> inputs;
  auto *body = new Block();
  IRMapping mapping;
  llvm::DenseMap<Value, BlockArgument> argumentOf;
  auto bindInput = [&](Value value, BlockArgument argument) {
    auto [it, inserted] = argumentOf.try_emplace(value);
    if (inserted) {
      inputs.push_back(value);
      it->second = body->addArgument(argument.getType(), argument.getLoc());
    }
    mapping.map(argument, it->second);
  };
  Block &producerBody = producer.getBody().front();
  Block &consumerBody = consumer.getBody().front();
  auto producerYield = cast<YieldOp>(producerBody.getTerminator());
  for (auto [value, argument] :
       llvm::zip(producer.getInputs(), producerBody.getArguments()))
    bindInput(value, argument);
  for (auto [value, argument] :
       llvm::zip(consumer.getInputs(), consumerBody.getArguments()))
    if (auto result = dyn_cast<OpResult>(value);
        !result || result.getOwner() != producer.getOperation())
      bindInput(value, argument);
  OpBuilder bodyBuilder(producer->getContext());
  bodyBuilder.setInsertionPointToEnd(body);
  for (Operation &op : producerBody.without_terminator())
    bodyBuilder.clone(op, mapping);
  for (auto [value, argument] :
       llvm::zip(consumer.getInputs(), consumerBody.getArguments()))
    if (auto result = dyn_cast<OpResult>(value);
        result && result.getOwner() == producer.getOperation())
      mapping.map(
          argument,
          mapping.lookup(producerYield.getValues()[result.getResultNumber()]));
  for (Operation &op : consumerBody.without_terminator())
    bodyBuilder.clone(op, mapping);
  SmallVector<Value> yields;
  SmallVector<Type> resultTypes;
  for (Value result : kept) {
    yields.push_back(mapping.lookup(
        producerYield.getValues()[cast<OpResult>(result).getResultNumber()]));
    resultTypes.push_back(result.getType());
  }
  for (auto [value, type] :
       llvm::zip(consumerBody.getTerminator()->getOperands(),
                 consumer.getResultTypes())) {
    yields.push_back(mapping.lookup(value));
    resultTypes.push_back(type);
  }
  YieldOp::create(bodyBuilder, consumer.getLoc(), yields);
  std::optional<SmallVector<int64_t>> rowShape = rowFusionShape(*body);
  if (!rowShape || (!dropsOne && rowShape->back() > kMaxKeptRowWidth)) {
    body->dropAllDefinedValueUses();
    delete body;
    return false;
  }

  LLVM_DEBUG(llvm::dbgs() << "merging the fusions at " << producer.getLoc()
                          << " and " << consumer.getLoc() << "\n");
  OpBuilder builder(producer);
  auto merged = FusionOp::create(
      builder,
      builder.getFusedLoc({memberLocation(producer), memberLocation(consumer)}),
      resultTypes, inputs);
  merged.getBody().push_back(body);
  for (auto [result, replacement] : llvm::zip(kept, merged.getResults()))
    result.replaceAllUsesWith(replacement);
  consumer.replaceAllUsesWith(merged.getResults().drop_front(kept.size()));
  consumer.erase();
  producer.erase();
  return true;
}

/// Merges row fusions pairwise (mergeRowFusionPair) until none merge: a
/// chain of row reductions and the elementwise ops between them (softmax's
/// backward y * (g - rowsum(g * y)); rms_norm's and layer_norm's backward,
/// whose second reduction uses the first) becomes one fusion, which reads
/// each row once and writes only the values used outside. XLA calls the
/// pattern a reduction epilogue fusion.
void mergeRowFusions(func::FuncOp function) {
  bool merged = true;
  while (merged) {
    merged = false;
    SmallVector<FusionOp> fusions;
    function.walk([&](FusionOp fusion) { fusions.push_back(fusion); });
    for (FusionOp consumer : fusions) {
      for (Value input : consumer.getInputs())
        if (auto producer = input.getDefiningOp<FusionOp>();
            producer && mergeRowFusionPair(producer, consumer)) {
          merged = true;
          break;
        }
      if (merged)
        break;
    }
  }
}

struct GenesisMergeRowFusionsPass
    : public genesis::impl::GenesisMergeRowFusionsBase<
          GenesisMergeRowFusionsPass> {
  using GenesisMergeRowFusionsBase::GenesisMergeRowFusionsBase;

  void runOnOperation() override { mergeRowFusions(getOperation()); }
};

} // namespace
