//===- GroupOptimizerUpdates.cpp - Adjacent updates in one kernel ---------===//
//
// Implements genesis-group-optimizer-updates; Passes.td states the
// algorithm.
//
//===----------------------------------------------------------------------===//

#include "dialect/IR/GenesisOps.h"
#include "dialect/IR/Provenance.h"
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "genesis-group-optimizer-updates"

namespace genesis {
#define GEN_PASS_DEF_GENESISGROUPOPTIMIZERUPDATES
#include "passes/Passes.h.inc"
} // namespace genesis

using namespace mlir;
using namespace genesis;

bool genesis::isOptimizerUpdate(Operation *op) {
  return isa<SgdUpdateOp, SgdMomentumUpdateOp, AdamUpdateOp, AdamWUpdateOp>(op);
}

namespace {

/// The operands of an update that its kernel may overwrite in place (the
/// parameter, its state) or whose buffer a result may take (the gradient):
/// all but the trailing scalars (lr, and step but for plain SGD).
OperandRange tensorOperands(Operation *update) {
  unsigned scalars = isa<SgdUpdateOp>(update) ? 1 : 2;
  return update->getOperands().drop_back(scalars);
}

} // namespace

bool genesis::updatesAreIndependent(ArrayRef<Operation *> updates) {
  for (Operation *update : updates)
    for (Operation *other : updates) {
      if (other == update)
        continue;
      for (Value operand : update->getOperands())
        if (operand.getDefiningOp() == other ||
            llvm::is_contained(tensorOperands(other), operand))
          return false;
    }
  return true;
}

namespace {

bool readsAnyResultOf(Operation *op, ArrayRef<Operation *> producers) {
  return llvm::any_of(op->getOperands(), [&](Value operand) {
    return llvm::is_contained(producers, operand.getDefiningOp());
  });
}

/// The updates of the run that starts at `first`: it and the updates after
/// it with only reshapes and constants in between, each independent of the
/// earlier ones, at most kMaxGroupedUpdates.
SmallVector<Operation *> runFrom(Operation *first) {
  SmallVector<Operation *> members = {first};
  for (Operation *op = first->getNextNode();
       op && static_cast<int64_t>(members.size()) < kMaxGroupedUpdates;
       op = op->getNextNode()) {
    if (readsAnyResultOf(op, members))
      break;
    if (isOptimizerUpdate(op)) {
      members.push_back(op);
      if (!updatesAreIndependent(members)) {
        members.pop_back();
        break;
      }
    } else if (!isa<ReshapeOp, ConstantOp>(op)) {
      break;
    }
  }
  return members;
}

/// Replaces `members` by one genesis.fusion at the last member's place whose
/// body holds them in order and yields all their results.
void group(ArrayRef<Operation *> members) {
  Operation *last = members.back();
  llvm::SetVector<Value> inputs;
  for (Operation *member : members)
    inputs.insert(member->operand_begin(), member->operand_end());
  SmallVector<Type> resultTypes;
  SmallVector<Location> locations;
  for (Operation *member : members) {
    llvm::append_range(resultTypes, member->getResultTypes());
    locations.push_back(memberLocation(member));
  }
  OpBuilder builder(last);
  auto fusion = FusionOp::create(builder, builder.getFusedLoc(locations),
                                 resultTypes, inputs.getArrayRef());
  Block *body = builder.createBlock(&fusion.getBody());
  IRMapping mapping;
  for (Value input : inputs)
    mapping.map(input, body->addArgument(input.getType(), input.getLoc()));
  SmallVector<Value> yielded;
  for (Operation *member : members)
    llvm::append_range(yielded, builder.clone(*member, mapping)->getResults());
  YieldOp::create(builder, fusion.getLoc(), yielded);
  unsigned next = 0;
  for (Operation *member : members) {
    unsigned count = member->getNumResults();
    member->replaceAllUsesWith(fusion.getResults().slice(next, count));
    next += count;
    member->erase();
  }
}

struct GenesisGroupOptimizerUpdatesPass
    : public genesis::impl::GenesisGroupOptimizerUpdatesBase<
          GenesisGroupOptimizerUpdatesPass> {
  void runOnOperation() override {
    func::FuncOp function = getOperation();
    if (function.isExternal())
      return;
    for (Block &block : function.getBody()) {
      Operation *op = block.empty() ? nullptr : &block.front();
      while (op) {
        if (!isOptimizerUpdate(op)) {
          op = op->getNextNode();
          continue;
        }
        SmallVector<Operation *> members = runFrom(op);
        op = members.back()->getNextNode();
        if (members.size() < 2)
          continue;
        LLVM_DEBUG(llvm::dbgs()
                   << "grouping " << members.size() << " updates at "
                   << members.back()->getLoc() << "\n");
        group(members);
      }
    }
  }
};

} // namespace
