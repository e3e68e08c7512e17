//===- PlanMemory.cpp - Static offsets of temporaries in one arena --------===//
//
// Implements genesis-plan-memory; Passes.td states the algorithm.
//
//===----------------------------------------------------------------------===//

#include "dialect/IR/GenesisOps.h"
#include "passes/Analysis/ArgumentUpdates.h"
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "llvm/Support/MathExtras.h"

#include "llvm/Support/Debug.h"
#include <limits>
#include <numeric>
#include <optional>

#define DEBUG_TYPE "genesis-plan-memory"

namespace genesis {
#define GEN_PASS_DEF_GENESISPLANMEMORY
#include "passes/Passes.h.inc"
} // namespace genesis

using namespace mlir;
using namespace genesis;

bool genesis::isSplatConstant(Value value) {
  ElementsAttr elements;
  return matchPattern(value, m_Constant(&elements)) && elements.isSplat();
}

std::optional<int64_t> genesis::tensorBytes(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape() ||
      !tensor.getElementType().isIntOrFloat())
    return std::nullopt;
  return tensor.getNumElements() *
         llvm::divideCeil(tensor.getElementType().getIntOrFloatBitWidth(), 8);
}

namespace {

/// Whether a splat constant needs arena space: an op other than a fusion
/// (whose kernel materialises the value) reads it, and it is not returned
/// (the runtime fills a returned one after the planned arena). The plan
/// fills it before its first use.
bool isPlannedSplat(Value value) {
  bool readByOpKernel = false;
  for (Operation *user : value.getUsers()) {
    if (isa<func::ReturnOp>(user))
      return false;
    readByOpKernel |= !isa<FusionOp>(user);
  }
  return readByOpKernel;
}

/// Whether `value`, a result of an op in the top-level block, is a
/// temporary that needs arena space: a tensor that is not a splat constant,
/// or a splat constant an op kernel reads.
bool needsBuffer(Value value) {
  if (!isa<TensorType>(value.getType()))
    return false;
  return !isSplatConstant(value) || isPlannedSplat(value);
}

/// `value` read back through reshapes: values of one root hold the same
/// bytes (a reshape aliases its operand's buffer).
Value reshapeRoot(Value value) {
  while (auto reshape = value.getDefiningOp<ReshapeOp>())
    value = reshape.getOperand();
  return value;
}

/// The operands of `op` whose buffer result `result` may take when they die
/// at `op`, most preferred first.
SmallVector<unsigned> getReusableOperands(Operation *op, unsigned result) {
  if (op->hasTrait<mlir::OpTrait::Elementwise>())
    return llvm::to_vector(llvm::seq<unsigned>(0, op->getNumOperands()));
  if (isa<ReshapeOp>(op))
    return {0};
  // Operands: param, grad, state..., lr, step; results: param, state...
  if (isOptimizerUpdate(op))
    return {result == 0 ? 0 : result + 1, 1};
  // A group of updates (genesis-group-optimizer-updates): each result may
  // take its own update's operands', which the update's thread reads at
  // the index it writes (the group's updates share no such tensor).
  if (auto fusion = dyn_cast<FusionOp>(op)) {
    Block &body = fusion.getBody().front();
    auto yielded = dyn_cast<OpResult>(body.getTerminator()->getOperand(result));
    // Any other fusion (the planner asks for every result) stops here.
    if (!yielded || !isOptimizerUpdate(yielded.getOwner()))
      return {};
    SmallVector<Operation *> updates;
    for (Operation &inner : body.without_terminator())
      updates.push_back(&inner);
    // Two inputs that are reshapes of one value share its bytes: an update
    // writing over one would race with another reading the other.
    llvm::SmallDenseSet<Value> roots;
    for (Value input : fusion.getInputs())
      if (!roots.insert(reshapeRoot(input)).second)
        return {};
    if (!llvm::all_of(updates, isOptimizerUpdate) ||
        !updatesAreIndependent(updates))
      return {};
    SmallVector<unsigned> operands;
    for (unsigned own :
         getReusableOperands(yielded.getOwner(), yielded.getResultNumber()))
      if (auto argument =
              dyn_cast<BlockArgument>(yielded.getOwner()->getOperand(own));
          argument && argument.getOwner() == &body)
        operands.push_back(argument.getArgNumber());
    return operands;
  }
  // Every kernel of it (and of the fused loss and gradient) reads a row's
  // logits before writing that row's gradient: the thread-per-row kernels
  // read each element last in the thread that writes it, and the
  // block-per-row kernels (whose threads also read the label's logit)
  // write only after the block-wide reduction's barrier. So the logits'
  // [tokens, vocab] buffer takes the gradient.
  if (isa<CrossEntropyGradOp>(op) ||
      (isa<CrossEntropyWithGradOp>(op) && result == 1))
    return {0};
  return {};
}

/// Live range [definition, last use] of every result of an op in `block`,
/// as indices of ops in `block`; a use inside a nested region counts as a
/// use by its ancestor in `block`. A planned splat constant lives from its
/// first use, where the plan fills it.
llvm::DenseMap<Value, std::pair<int64_t, int64_t>>
computeLiveRanges(Block &block) {
  llvm::DenseMap<Operation *, int64_t> index;
  for (auto [i, op] : llvm::enumerate(block))
    index[&op] = i;
  llvm::DenseMap<Value, std::pair<int64_t, int64_t>> ranges;
  for (auto [i, op] : llvm::enumerate(block))
    for (Value result : op.getResults()) {
      bool filledAtFirstUse = isSplatConstant(result) && !result.use_empty();
      int64_t start = filledAtFirstUse ? std::numeric_limits<int64_t>::max()
                                       : static_cast<int64_t>(i);
      int64_t end = i;
      for (Operation *user : result.getUsers()) {
        int64_t at = index.lookup(block.findAncestorOpInBlock(*user));
        start = std::min(start, at);
        end = std::max(end, at);
      }
      ranges[result] = {start, end};
    }
  return ranges;
}

} // namespace

FailureOr<MemoryPlan> genesis::planMemory(func::FuncOp function,
                                          int64_t alignment) {
  if (alignment <= 0 || !llvm::isPowerOf2_64(alignment))
    return function.emitError("genesis-plan-memory: alignment ")
           << alignment << " is not a power of two";
  if (function.isExternal() || !llvm::hasSingleElement(function.getBody()))
    return function.emitError("genesis-plan-memory: @")
           << function.getSymName() << " must have a body of one block";
  Block &block = function.getBody().front();
  llvm::DenseMap<Value, std::pair<int64_t, int64_t>> ranges =
      computeLiveRanges(block);
  // Their producers write them into the arguments' tensors.
  llvm::DenseSet<Value> updates = argumentUpdates(function);

  // Buffers in program order, sharing through in-place reuse.
  MemoryPlan plan;
  plan.alignment = alignment;
  llvm::DenseMap<Value, unsigned> bufferOf;
  for (auto [i, op] : llvm::enumerate(block)) {
    SmallVector<unsigned> claimed;
    for (OpResult result : op.getResults()) {
      if (!needsBuffer(result) || updates.contains(result))
        continue;
      std::optional<int64_t> bytes = tensorBytes(result.getType());
      if (!bytes)
        return op.emitError(
                   "genesis-plan-memory: cannot plan a result of type ")
               << result.getType()
               << " (only static shapes of integers and floats)";
      plan.temporaryBytes += *bytes;
      auto [start, end] = ranges.lookup(result);
      std::optional<unsigned> reused;
      for (unsigned operand :
           getReusableOperands(&op, result.getResultNumber())) {
        auto it = bufferOf.find(op.getOperand(operand));
        if (it == bufferOf.end() || llvm::is_contained(claimed, it->second))
          continue;
        const MemoryPlan::Buffer &buffer = plan.buffers[it->second];
        // A reshape aliases its operand even while that lives on: no op
        // writes a value after defining it, and a later op writes over the
        // shared buffer only where the union of their intervals ends.
        bool endsHere = buffer.end == static_cast<int64_t>(i);
        if ((endsHere || isa<ReshapeOp>(op)) && buffer.bytes == *bytes) {
          reused = it->second;
          break;
        }
      }
      if (!reused) {
        reused = plan.buffers.size();
        plan.buffers.push_back({0, *bytes, start, end, {}});
      }
      MemoryPlan::Buffer &buffer = plan.buffers[*reused];
      buffer.end = std::max(buffer.end, end);
      buffer.values.push_back(result);
      bufferOf[result] = *reused;
      claimed.push_back(*reused);
    }
  }

  // Greedy by size, best fit among the gaps left by overlapping buffers.
  // Buffers are numbered in order of definition, so a stable sort breaks
  // ties by earlier definition.
  SmallVector<unsigned> order(plan.buffers.size());
  std::iota(order.begin(), order.end(), 0);
  llvm::stable_sort(order, [&](unsigned a, unsigned b) {
    return plan.buffers[a].bytes > plan.buffers[b].bytes;
  });
  SmallVector<unsigned> placed;
  for (unsigned current : order) {
    MemoryPlan::Buffer &buffer = plan.buffers[current];
    SmallVector<const MemoryPlan::Buffer *> neighbours;
    for (unsigned other : placed) {
      const MemoryPlan::Buffer &placedBuffer = plan.buffers[other];
      if (placedBuffer.start <= buffer.end && buffer.start <= placedBuffer.end)
        neighbours.push_back(&placedBuffer);
    }
    llvm::sort(neighbours,
               [](const MemoryPlan::Buffer *a, const MemoryPlan::Buffer *b) {
                 return a->offset < b->offset;
               });
    int64_t bestOffset = -1;
    int64_t bestWaste = std::numeric_limits<int64_t>::max();
    int64_t cursor = 0;
    for (const MemoryPlan::Buffer *neighbour : neighbours) {
      int64_t gapStart = llvm::alignTo(cursor, alignment);
      int64_t waste = neighbour->offset - gapStart - buffer.bytes;
      if (waste >= 0 && waste < bestWaste) {
        bestOffset = gapStart;
        bestWaste = waste;
      }
      cursor = std::max(cursor, neighbour->offset + neighbour->bytes);
    }
    buffer.offset =
        bestOffset >= 0 ? bestOffset : llvm::alignTo(cursor, alignment);
    plan.arenaBytes = std::max(plan.arenaBytes, buffer.offset + buffer.bytes);
    placed.push_back(current);
  }

  for (const MemoryPlan::Buffer &buffer : plan.buffers)
    for (Value value : buffer.values)
      plan.offsets[value] = buffer.offset;
  return plan;
}

LogicalResult genesis::verifyMemoryPlan(func::FuncOp function,
                                        const MemoryPlan &plan) {
  auto fail = [&](Operation *op) {
    return op->emitError("genesis-plan-memory: internal error: ");
  };
  if (function.isExternal() || !llvm::hasSingleElement(function.getBody()))
    return fail(function) << "@" << function.getSymName()
                          << " must have a body of one block";
  if (plan.alignment <= 0 || !llvm::isPowerOf2_64(plan.alignment))
    return fail(function) << "alignment " << plan.alignment
                          << " is not a power of two";
  Block &block = function.getBody().front();
  llvm::DenseMap<Value, std::pair<int64_t, int64_t>> ranges =
      computeLiveRanges(block);

  struct Planned {
    OpResult value;
    int64_t offset, bytes, start, end;
  };
  llvm::DenseSet<Value> updates = argumentUpdates(function);
  SmallVector<Planned> planned;
  int64_t total = 0;
  for (Operation &op : block)
    for (OpResult result : op.getResults()) {
      auto it = plan.offsets.find(result);
      if (!needsBuffer(result) || updates.contains(result)) {
        if (it != plan.offsets.end())
          return fail(&op) << "result #" << result.getResultNumber()
                           << " needs no buffer but has an offset";
        continue;
      }
      if (it == plan.offsets.end())
        return fail(&op) << "result #" << result.getResultNumber()
                         << " has no offset";
      std::optional<int64_t> bytes = tensorBytes(result.getType());
      if (!bytes)
        return fail(&op) << "result #" << result.getResultNumber()
                         << " has no byte size";
      int64_t offset = it->second;
      if (offset < 0 || offset % plan.alignment != 0 ||
          offset + *bytes > plan.arenaBytes)
        return fail(&op) << "result #" << result.getResultNumber()
                         << " at offset " << offset << " (" << *bytes
                         << " bytes) is misaligned or outside the arena of "
                         << plan.arenaBytes << " bytes";
      total += *bytes;
      auto [start, end] = ranges.lookup(result);
      planned.push_back({result, offset, *bytes, start, end});
    }
  if (plan.offsets.size() != planned.size())
    return fail(function) << "the plan has offsets for values outside the "
                             "top-level block";
  if (total != plan.temporaryBytes)
    return fail(function) << "temporaries add up to " << total
                          << " bytes, the plan says " << plan.temporaryBytes;
  for (const MemoryPlan::Buffer &buffer : plan.buffers)
    for (Value value : buffer.values)
      if (plan.offsets.lookup(value) != buffer.offset)
        return fail(function) << "a buffer at offset " << buffer.offset
                              << " holds a value planned elsewhere";

  // Sweep in order of first liveness over the values live at each start
  // (a planned splat constant starts at its first use).
  llvm::stable_sort(planned, [](const Planned &a, const Planned &b) {
    return a.start < b.start;
  });
  SmallVector<const Planned *> live;
  for (const Planned &current : planned) {
    llvm::erase_if(
        live, [&](const Planned *other) { return other->end < current.start; });
    for (const Planned *other : live) {
      if (other->offset >= current.offset + current.bytes ||
          current.offset >= other->offset + other->bytes)
        continue;
      Operation *op = current.value.getOwner();
      bool aliases = current.offset == other->offset &&
                     current.bytes == other->bytes &&
                     reshapeRoot(current.value) == reshapeRoot(other->value);
      bool inPlace =
          aliases ||
          (other->end == current.start && other->offset == current.offset &&
           other->bytes == current.bytes &&
           llvm::any_of(
               getReusableOperands(op, current.value.getResultNumber()),
               [&](unsigned operand) {
                 return op->getOperand(operand) == other->value;
               }));
      if (!inPlace)
        return fail(op) << "result #" << current.value.getResultNumber()
                        << " overlaps a live value defined by '"
                        << other->value.getOwner()->getName() << "' at bytes ["
                        << std::max(current.offset, other->offset) << ", "
                        << std::min(current.offset + current.bytes,
                                    other->offset + other->bytes)
                        << ")";
    }
    live.push_back(&current);
  }
  return success();
}

namespace {

struct GenesisPlanMemoryPass
    : public genesis::impl::GenesisPlanMemoryBase<GenesisPlanMemoryPass> {
  using GenesisPlanMemoryBase::GenesisPlanMemoryBase;

  void runOnOperation() override {
    func::FuncOp target = getOperation();
    if (target.isExternal() ||
        (!function.empty() && target.getSymName() != function))
      return;
    FailureOr<MemoryPlan> plan = planMemory(target, alignment);
    if (failed(plan) || failed(verifyMemoryPlan(target, *plan)))
      return signalPassFailure();
    LLVM_DEBUG(llvm::dbgs()
               << "@" << target.getSymName() << ": arena " << plan->arenaBytes
               << " B for " << plan->temporaryBytes << " B of temporaries\n");

    Builder builder(&getContext());
    for (Operation &op : target.getBody().front()) {
      if (op.getNumResults() == 0)
        continue;
      SmallVector<int64_t> offsets;
      for (Value result : op.getResults())
        offsets.push_back(plan->offsets.lookup_or(result, -1));
      op.setAttr("genesis.offsets", builder.getDenseI64ArrayAttr(offsets));
    }
    target->setAttr("genesis.arena_bytes",
                    builder.getI64IntegerAttr(plan->arenaBytes));
    target->setAttr("genesis.temporary_bytes",
                    builder.getI64IntegerAttr(plan->temporaryBytes));
    target.emitRemark() << "planned " << plan->temporaryBytes
                        << " bytes of temporaries into an arena of "
                        << plan->arenaBytes << " bytes";
  }
};

} // namespace
