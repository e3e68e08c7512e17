//===- MergeSideResults.cpp - Elementwise consumers as side results -------===//
//
// Implements genesis-merge-side-results; Passes.td states the algorithm.
//
//===----------------------------------------------------------------------===//

#include "dialect/IR/GenesisOps.h"
#include "dialect/IR/Provenance.h"
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "genesis-merge-side-results"

namespace genesis {
#define GEN_PASS_DEF_GENESISMERGESIDERESULTS
#include "passes/Passes.h.inc"
} // namespace genesis

using namespace mlir;
using namespace genesis;

namespace {

/// The operand shape of `fusion`'s reduction when it is a reduction fusion
/// (reductionFusionRoot), else nullopt.
std::optional<ArrayRef<int64_t>> sideShape(FusionOp fusion) {
  Operation *root = reductionFusionRoot(fusion);
  if (!root)
    return std::nullopt;
  return cast<RankedTensorType>(root->getOperand(0).getType()).getShape();
}

/// Whether `consumer` can be computed element by element beside `producer`'s
/// side results: elementwise ops, broadcasts and splat constants only, every
/// result of the side shape, every input a side result of `producer` or
/// defined before it, every user after it.
bool mergeable(FusionOp producer, ArrayRef<int64_t> shape, FusionOp consumer) {
  if (!isElementwiseFusion(consumer, shape))
    return false;
  for (Value input : consumer.getInputs()) {
    Operation *definer = input.getDefiningOp();
    if (definer == producer.getOperation()) {
      if (cast<RankedTensorType>(input.getType()).getShape() != shape)
        return false;
    } else if (definer && !definer->isBeforeInBlock(producer)) {
      return false;
    }
  }
  Block *block = producer->getBlock();
  for (Operation *user : consumer->getUsers()) {
    Operation *owner = block->findAncestorOpInBlock(*user);
    if (!owner || !producer->isBeforeInBlock(owner))
      return false;
  }
  return true;
}

/// The first reduction fusion after `sibling` in its block that reads one of
/// its inputs and can take it as side results (a GELU's backward: its dx and
/// its bias gradient read the same two tensors), or null. Only the inputs'
/// users can share one, so they are the candidates (not every later op).
FusionOp siblingReduction(FusionOp sibling) {
  FusionOp first;
  for (Value input : sibling.getInputs())
    for (Operation *user : input.getUsers()) {
      auto fusion = dyn_cast<FusionOp>(user);
      if (!fusion || fusion->getBlock() != sibling->getBlock() ||
          !sibling->isBeforeInBlock(fusion) ||
          (first && !fusion->isBeforeInBlock(first)))
        continue;
      std::optional<ArrayRef<int64_t>> shape = sideShape(fusion);
      if (shape && mergeable(fusion, *shape, sibling))
        first = fusion;
    }
  return first;
}

struct GenesisMergeSideResultsPass
    : public genesis::impl::GenesisMergeSideResultsBase<
          GenesisMergeSideResultsPass> {
  void runOnOperation() override {
    bool changed = true;
    while (changed) {
      changed = false;
      SmallVector<FusionOp> fusions;
      getOperation().walk([&](FusionOp fusion) { fusions.push_back(fusion); });
      for (FusionOp consumer : fusions) {
        for (Value input : consumer.getInputs()) {
          auto producer = input.getDefiningOp<FusionOp>();
          std::optional<ArrayRef<int64_t>> shape;
          if (producer)
            shape = sideShape(producer);
          if (shape && mergeable(producer, *shape, consumer)) {
            mergeFusions(producer, consumer);
            changed = true;
            break;
          }
        }
        if (changed)
          break;
        if (FusionOp reduction = siblingReduction(consumer)) {
          mergeFusions(reduction, consumer);
          changed = true;
          break;
        }
      }
    }
  }
};

} // namespace

int64_t genesis::opCount(FusionOp fusion) {
  return static_cast<int64_t>(fusion.getBody().front().getOperations().size());
}

bool genesis::inputsDefinedBefore(FusionOp fusion, Operation *anchor) {
  return llvm::all_of(fusion.getInputs(), [&](Value input) {
    Operation *definer = input.getDefiningOp();
    return !definer || (definer->getBlock() == anchor->getBlock() &&
                        definer->isBeforeInBlock(anchor));
  });
}

bool genesis::isElementwiseFusion(FusionOp fusion, ArrayRef<int64_t> shape) {
  Block &body = fusion.getBody().front();
  for (Operation &op : body.without_terminator())
    if (!op.hasTrait<mlir::OpTrait::Elementwise>() &&
        !isa<BroadcastInDimOp>(op) &&
        !(isa<ConstantOp>(op) && cast<ConstantOp>(op).getValue().isSplat()))
      return false;
  return llvm::all_of(fusion.getResultTypes(), [&](Type type) {
    return cast<RankedTensorType>(type).getShape() == shape;
  });
}

FusionOp genesis::mergeFusions(FusionOp producer, FusionOp consumer) {
  LLVM_DEBUG(llvm::dbgs() << "merging the fusion at " << consumer.getLoc()
                          << " into the one at " << producer.getLoc() << "\n");
  SmallVector<Value> inputs(producer.getInputs());
  Block &producerBody = producer.getBody().front();
  auto producerYield = cast<YieldOp>(producerBody.getTerminator());
  Block &consumerBody = consumer.getBody().front();
  IRMapping mapping;
  for (auto [value, argument] :
       llvm::zip(consumer.getInputs(), consumerBody.getArguments())) {
    if (auto result = dyn_cast<OpResult>(value);
        result && result.getOwner() == producer.getOperation()) {
      mapping.map(argument,
                  producerYield.getValues()[result.getResultNumber()]);
      continue;
    }
    auto it = llvm::find(inputs, value);
    if (it != inputs.end()) {
      mapping.map(argument,
                  producerBody.getArgument(std::distance(inputs.begin(), it)));
      continue;
    }
    inputs.push_back(value);
    mapping.map(argument,
                producerBody.addArgument(value.getType(), value.getLoc()));
  }
  OpBuilder builder(producerYield);
  for (Operation &op : consumerBody.without_terminator())
    builder.clone(op, mapping);
  SmallVector<Value> yields(producerYield.getValues());
  for (Value value : consumerBody.getTerminator()->getOperands())
    yields.push_back(mapping.lookup(value));
  YieldOp::create(builder, producerYield.getLoc(), yields);
  producerYield.erase();

  builder.setInsertionPoint(producer);
  SmallVector<Type> types(producer.getResultTypes());
  llvm::append_range(types, consumer.getResultTypes());
  auto merged = FusionOp::create(
      builder,
      builder.getFusedLoc({memberLocation(producer), memberLocation(consumer)}),
      types, inputs);
  merged.getBody().takeBody(producer.getBody());
  unsigned count = producer->getNumResults();
  producer->replaceAllUsesWith(merged.getResults().take_front(count));
  consumer->replaceAllUsesWith(merged.getResults().drop_front(count));
  consumer.erase();
  producer.erase();
  return merged;
}
