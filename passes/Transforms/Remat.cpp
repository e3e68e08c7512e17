//===- Remat.cpp - Recompute cheap activations to fit a memory budget -----===//
//
// Implements genesis-remat; Passes.td states the algorithm.
//
//===----------------------------------------------------------------------===//

#include "dialect/IR/GenesisOps.h"
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Debug.h"

#include <memory>

#define DEBUG_TYPE "genesis-remat"

namespace genesis {
#define GEN_PASS_DEF_GENESISREMAT
#include "passes/Passes.h.inc"
} // namespace genesis

using namespace mlir;
using namespace genesis;

namespace {

/// The most ops one recomputation may repeat.
constexpr unsigned kMaxRecomputedOps = 64;

/// What a kernel launch costs, in bytes moved in the same time (~3 us at
/// ~3 TB/s): small recomputations score lower than their bytes suggest.
constexpr int64_t kLaunchEquivalentBytes = int64_t{8} << 20;

/// Ops a recomputing fusion may repeat: cheap per element, no reduction.
bool isRecomputable(Operation *op) {
  if (isa<ConstantOp>(op))
    return isSplatConstant(op->getResult(0));
  return op->hasTrait<mlir::OpTrait::Elementwise>() || isDataMovement(op) ||
         isa<BroadcastInDimOp, IotaOp>(op);
}

/// Bytes of a value the planner holds (a static tensor of integers or
/// floats).
int64_t bytesOf(Value value) { return *tensorBytes(value.getType()); }

/// Positions of the top-level ops and the last use of every value.
struct Schedule {
  explicit Schedule(Block &block) {
    for (auto [i, op] : llvm::enumerate(block))
      index[&op] = i;
    for (Operation &op : block)
      for (Value result : op.getResults()) {
        int64_t end = index[&op];
        for (Operation *user : result.getUsers())
          end = std::max(end, index.lookup(block.findAncestorOpInBlock(*user)));
        lastUse[result] = end;
      }
  }
  llvm::DenseMap<Operation *, int64_t> index;
  llvm::DenseMap<Value, int64_t> lastUse;
};

/// A fusion computing one value from the values available at op `at`,
/// built in a detached fusion until it is placed.
class Recomputation {
public:
  Recomputation(const Schedule &schedule, int64_t at, Value value)
      : schedule(schedule), at(at), builder(value.getContext()) {
    scratch = FusionOp::create(builder, value.getLoc(),
                               TypeRange{value.getType()}, ValueRange());
    body = builder.createBlock(&scratch.getBody());
  }
  ~Recomputation() {
    scratch.getBody().dropAllReferences();
    scratch->erase();
  }

  /// Builds the body computing top-level `value` from its producer (the
  /// value itself is live at `at`); false when it cannot.
  bool build(Value value) {
    root = value;
    std::optional<Value> result = produce(cast<OpResult>(value));
    if (!result)
      return false;
    computed = *result;
    return true;
  }

  /// Bytes the recomputation reads.
  int64_t leafBytes() const {
    int64_t total = 0;
    for (Value leaf : leaves)
      total += bytesOf(leaf);
    return total;
  }

  /// Inserts the fusion before `before`, returns its result.
  Value place(Operation *before, Value original) {
    OpBuilder outer(before);
    auto fusion = FusionOp::create(outer, original.getLoc(),
                                   TypeRange{original.getType()}, leaves);
    fusion->setAttr(kRematAttrName, outer.getUnitAttr());
    fusion.getBody().takeBody(scratch.getBody());
    OpBuilder inner = OpBuilder::atBlockEnd(&fusion.getBody().front());
    YieldOp::create(inner, original.getLoc(), ValueRange{computed});
    return fusion.getResult(0);
  }

private:
  /// A value live at `at` or free to read anywhere; never the value being
  /// recomputed.
  bool available(Value value) const {
    if (value == root)
      return false;
    if (isa<BlockArgument>(value) || isSplatConstant(value))
      return true;
    auto it = schedule.lastUse.find(value);
    return it != schedule.lastUse.end() && it->second >= at;
  }

  Value leaf(Value value) {
    if (Value known = mapping.lookupOrNull(value))
      return known;
    leaves.push_back(value);
    Value argument = body->addArgument(value.getType(), value.getLoc());
    mapping.map(value, argument);
    return argument;
  }

  std::optional<Value>
  clone(Operation *op,
        llvm::function_ref<std::optional<Value>(Value)> operandValue,
        unsigned resultNumber) {
    if (!isRecomputable(op) || ++ops > kMaxRecomputedOps)
      return std::nullopt;
    IRMapping operands;
    for (Value operand : op->getOperands()) {
      std::optional<Value> mapped = operandValue(operand);
      if (!mapped)
        return std::nullopt;
      operands.map(operand, *mapped);
    }
    Operation *copy = builder.clone(*op, operands);
    copy->removeAttr(kKernelAttrName);
    return copy->getResult(resultNumber);
  }

  /// A value of the function's block.
  std::optional<Value> topLevel(Value value) {
    if (Value known = mapping.lookupOrNull(value))
      return known;
    if (available(value))
      return leaf(value);
    return produce(cast<OpResult>(value));
  }

  /// `result` computed by repeating its producer.
  std::optional<Value> produce(OpResult result) {
    Value value = result;
    Operation *op = result.getOwner();
    std::optional<Value> computedValue;
    if (auto fusion = dyn_cast<FusionOp>(op)) {
      Value yielded = fusion.getBody().front().getTerminator()->getOperand(
          result.getResultNumber());
      computedValue = inFusion(fusion, yielded);
    } else {
      computedValue = clone(
          op, [&](Value operand) { return topLevel(operand); },
          result.getResultNumber());
    }
    if (computedValue)
      mapping.map(value, *computedValue);
    return computedValue;
  }

  /// A value of `fusion`'s body.
  std::optional<Value> inFusion(FusionOp fusion, Value value) {
    if (Value known = mapping.lookupOrNull(value))
      return known;
    if (auto argument = dyn_cast<BlockArgument>(value))
      return topLevel(fusion.getInputs()[argument.getArgNumber()]);
    // Stored by the fusion as well, and still there at `at`.
    for (OpOperand &use : value.getUses())
      if (isa<YieldOp>(use.getOwner())) {
        Value stored = fusion.getResult(use.getOperandNumber());
        if (available(stored))
          return leaf(stored);
      }
    auto result = cast<OpResult>(value);
    std::optional<Value> computedValue = clone(
        result.getOwner(),
        [&](Value operand) { return inFusion(fusion, operand); },
        result.getResultNumber());
    if (computedValue)
      mapping.map(value, *computedValue);
    return computedValue;
  }

  const Schedule &schedule;
  int64_t at;
  OpBuilder builder;
  FusionOp scratch;
  Block *body = nullptr;
  IRMapping mapping;
  SmallVector<Value> leaves;
  Value root, computed;
  unsigned ops = 0;
};

/// The op index at which the planned buffers together take the most bytes.
int64_t peakIndex(const MemoryPlan &plan, size_t opCount) {
  SmallVector<int64_t> delta(opCount + 1, 0);
  for (const MemoryPlan::Buffer &buffer : plan.buffers) {
    delta[buffer.start] += buffer.bytes;
    delta[buffer.end + 1] -= buffer.bytes;
  }
  int64_t live = 0, best = -1, peak = 0;
  for (size_t i = 0; i < opCount; ++i) {
    live += delta[i];
    if (live > best) {
      best = live;
      peak = static_cast<int64_t>(i);
    }
  }
  return peak;
}

/// Recomputes the best candidate across the peak; false when none is left.
bool rematerializeOne(func::FuncOp function, int64_t peak) {
  Block &block = function.getBody().front();
  Schedule schedule(block);
  struct Candidate {
    Value value;
    Operation *firstLateUse;
    std::unique_ptr<Recomputation> recomputation;
    double score;
  };
  SmallVector<Candidate> candidates;
  int64_t largest = 0;
  for (Operation &op : block) {
    if (schedule.index.lookup(&op) >= peak)
      break;
    for (Value result : op.getResults()) {
      auto tensor = dyn_cast<RankedTensorType>(result.getType());
      if (!tensor || !tensor.hasStaticShape() || isSplatConstant(result))
        continue;
      Operation *firstLateUse = nullptr;
      bool usedAtPeak = false;
      for (Operation *user : result.getUsers()) {
        Operation *top = block.findAncestorOpInBlock(*user);
        int64_t at = schedule.index.lookup(top);
        usedAtPeak |= at == peak;
        if (at > peak &&
            (!firstLateUse || at < schedule.index.lookup(firstLateUse)))
          firstLateUse = top;
      }
      if (usedAtPeak || !firstLateUse ||
          firstLateUse->hasTrait<mlir::OpTrait::IsTerminator>())
        continue;
      auto recomputation = std::make_unique<Recomputation>(
          schedule, schedule.index.lookup(firstLateUse), result);
      if (!recomputation->build(result))
        continue;
      int64_t bytes = bytesOf(result);
      double score = static_cast<double>(bytes) /
                     static_cast<double>(bytes + recomputation->leafBytes() +
                                         kLaunchEquivalentBytes);
      largest = std::max(largest, bytes);
      candidates.push_back(
          {result, firstLateUse, std::move(recomputation), score});
    }
  }
  // A value of under 1/64 of the largest candidate frees little for the
  // kernel it adds.
  Candidate *chosen = nullptr;
  for (Candidate &candidate : candidates) {
    int64_t bytes = bytesOf(candidate.value);
    if (bytes * 64 < largest)
      continue;
    if (!chosen || candidate.score > chosen->score ||
        (candidate.score == chosen->score && bytes > bytesOf(chosen->value)))
      chosen = &candidate;
  }
  if (!chosen)
    return false;
  Candidate &best = *chosen;
  LLVM_DEBUG(llvm::dbgs() << "recomputing a " << best.value.getType() << " of "
                          << best.value.getLoc() << " before op "
                          << schedule.index.lookup(best.firstLateUse) << "\n");
  int64_t from = schedule.index.lookup(best.firstLateUse);
  Value recomputed = best.recomputation->place(best.firstLateUse, best.value);
  best.value.replaceUsesWithIf(recomputed, [&](OpOperand &use) {
    return schedule.index.lookup(
               block.findAncestorOpInBlock(*use.getOwner())) >= from;
  });
  Operation *producer = best.value.getDefiningOp();
  if (producer->use_empty() && isMemoryEffectFree(producer))
    producer->erase();
  return true;
}

/// Bytes of the functions' arguments, which the runtime holds outside the
/// arena; arguments of the same `genesis.name` are one tensor.
int64_t argumentBytes(ModuleOp module) {
  int64_t total = 0;
  llvm::StringSet<> named;
  for (auto function : module.getOps<func::FuncOp>())
    for (BlockArgument argument : function.getArguments()) {
      auto tensor = dyn_cast<RankedTensorType>(argument.getType());
      if (!tensor || !tensor.hasStaticShape() ||
          !tensor.getElementType().isIntOrFloat())
        continue;
      auto name = function.getArgAttrOfType<StringAttr>(argument.getArgNumber(),
                                                        "genesis.name");
      if (!name || named.insert(name.getValue()).second)
        total += bytesOf(argument);
    }
  return total;
}

struct GenesisRematPass
    : public genesis::impl::GenesisRematBase<GenesisRematPass> {
  using GenesisRematBase::GenesisRematBase;

  void runOnOperation() override {
    if (budget <= 0)
      return;
    int64_t arguments = argumentBytes(getOperation());
    if (arguments >= budget) {
      getOperation().emitError("genesis-remat: the arguments (parameters, "
                               "optimizer state, inputs) alone take ")
          << arguments << " bytes, not less than the memory budget of "
          << static_cast<int64_t>(budget) << " bytes";
      return signalPassFailure();
    }
    for (auto function : getOperation().getOps<func::FuncOp>())
      if (!function.isExternal() &&
          llvm::hasSingleElement(function.getBody()) &&
          failed(fitBudget(function, arguments)))
        return signalPassFailure();
  }

  LogicalResult fitBudget(func::FuncOp function, int64_t arguments) {
    // Each recomputation moves a value's late uses past the peak; the bound
    // only guards against a cycle of peaks.
    size_t limit = function.getBody().front().getOperations().size();
    unsigned recomputed = 0;
    while (true) {
      FailureOr<MemoryPlan> plan = planMemory(function, alignment);
      if (failed(plan))
        return failure();
      int64_t needed = arguments + plan->arenaBytes;
      if (needed <= budget) {
        if (recomputed)
          function.emitRemark("genesis-remat: @")
              << function.getSymName() << " recomputes " << recomputed
              << " values; arguments " << arguments << " B + arena "
              << plan->arenaBytes << " B fit the budget of "
              << static_cast<int64_t>(budget) << " B";
        return success();
      }
      size_t opCount = function.getBody().front().getOperations().size();
      if (recomputed >= limit ||
          !rematerializeOne(function, peakIndex(*plan, opCount)))
        return function.emitError("genesis-remat: @")
               << function.getSymName() << " needs " << needed
               << " bytes (arguments " << arguments << " + arena "
               << plan->arenaBytes << ") after recomputing " << recomputed
               << " values, more than the memory budget of "
               << static_cast<int64_t>(budget)
               << " bytes, and nothing cheap to recompute is left across its "
                  "peak";
      ++recomputed;
    }
  }
};

} // namespace
