//===- HorizontalLoopFusion.cpp - Independent small loops, one kernel -----===//
//
// Implements genesis-horizontal-loop-fusion; Passes.td states the algorithm.
//
//===----------------------------------------------------------------------===//

#include "dialect/IR/GenesisOps.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "genesis-horizontal-loop-fusion"

namespace genesis {
#define GEN_PASS_DEF_GENESISHORIZONTALLOOPFUSION
#include "passes/Passes.h.inc"
} // namespace genesis

using namespace mlir;
using namespace genesis;

namespace {

/// The most elements of a result of a fusion the pass merges: a larger loop
/// fills the GPU alone.
constexpr int64_t kMaxHorizontalElements = int64_t{1} << 20;
/// The most fusions one run merges.
constexpr int64_t kMaxHorizontalFusions = 8;

/// A fusion the loop emitter runs with results of at most
/// kMaxHorizontalElements elements: no reduction, GEMM, nested fusion or
/// optimizer update (genesis-group-optimizer-updates groups those).
bool isSmallLoop(Operation *op) {
  auto fusion = dyn_cast<FusionOp>(op);
  if (!fusion || fusion->getNumResults() == 0)
    return false;
  for (Type type : fusion->getResultTypes())
    if (cast<RankedTensorType>(type).getNumElements() > kMaxHorizontalElements)
      return false;
  return llvm::none_of(fusion.getBody().front(), [](Operation &inner) {
    return isa<ReduceSumOp, ReduceMaxOp, ReduceMinOp, LibraryCallOp, FusionOp>(
               inner) ||
           isOptimizerUpdate(&inner);
  });
}

/// For each op of `function` whose results are returned to update function
/// arguments (under the argument's genesis.name), those arguments: the plan
/// may write such a result into the argument's tensor (argumentUpdates).
llvm::DenseMap<Operation *, llvm::SmallDenseSet<Value>>
updatedArgumentsByOp(func::FuncOp function) {
  llvm::DenseMap<Operation *, llvm::SmallDenseSet<Value>> updates;
  Block &entry = function.getBody().front();
  llvm::StringMap<Value> argumentsByName;
  for (BlockArgument argument : entry.getArguments())
    if (auto name = function.getArgAttrOfType<StringAttr>(
            argument.getArgNumber(), "genesis.name"))
      argumentsByName[name.getValue()] = argument;
  auto returnOp = cast<func::ReturnOp>(entry.getTerminator());
  for (auto [r, value] : llvm::enumerate(returnOp.getOperands())) {
    auto name = function.getResultAttrOfType<StringAttr>(r, "genesis.name");
    Operation *producer = value.getDefiningOp();
    if (!name || !producer)
      continue;
    auto argument = argumentsByName.find(name.getValue());
    if (argument != argumentsByName.end())
      updates[producer].insert(argument->second);
  }
  return updates;
}

bool readsAny(FusionOp fusion, const llvm::SmallDenseSet<Value> &values) {
  return llvm::any_of(fusion.getInputs(),
                      [&](Value input) { return values.contains(input); });
}

struct GenesisHorizontalLoopFusionPass
    : public genesis::impl::GenesisHorizontalLoopFusionBase<
          GenesisHorizontalLoopFusionPass> {
  void runOnOperation() override {
    func::FuncOp function = getOperation();
    Block &block = function.getBody().front();
    // Keyed by the fusions as they are before merging: only those are
    // looked up (a merged fusion is never a candidate again).
    llvm::DenseMap<Operation *, llvm::SmallDenseSet<Value>> updatesByOp =
        updatedArgumentsByOp(function);
    for (Operation *op = block.empty() ? nullptr : &block.front(); op;
         op = op->getNextNode()) {
      if (!isSmallLoop(op))
        continue;
      auto first = cast<FusionOp>(op);
      llvm::SmallDenseSet<Value> updated = updatesByOp.lookup(first);
      llvm::SmallDenseSet<Value> read(first.getInputs().begin(),
                                      first.getInputs().end());
      int64_t ops = opCount(first), fusions = 1;
      Operation *next = first->getNextNode();
      while (next && fusions < kMaxHorizontalFusions) {
        if (isa<ReshapeOp, ConstantOp>(next)) {
          next = next->getNextNode();
          continue;
        }
        if (!isSmallLoop(next))
          break;
        auto candidate = cast<FusionOp>(next);
        llvm::SmallDenseSet<Value> candidateUpdates =
            updatesByOp.lookup(candidate);
        if (!inputsDefinedBefore(candidate, first) ||
            ops + opCount(candidate) > kMaxFusionOps ||
            readsAny(candidate, updated) ||
            llvm::any_of(candidateUpdates,
                         [&](Value v) { return read.contains(v); }))
          break;
        LLVM_DEBUG(llvm::dbgs() << "merging " << candidate.getLoc() << " into "
                                << first.getLoc() << "\n");
        next = candidate->getNextNode();
        updated.insert(candidateUpdates.begin(), candidateUpdates.end());
        read.insert(candidate.getInputs().begin(), candidate.getInputs().end());
        ops += opCount(candidate);
        ++fusions;
        first = mergeFusions(first, candidate);
      }
      op = first;
    }
  }
};

} // namespace
