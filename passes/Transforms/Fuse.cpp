//===- Fuse.cpp - Library calls and fusion regions ------------------------===//
//
// Implements genesis-fuse; Passes.td states the rules.
//
//===----------------------------------------------------------------------===//

#include "dialect/IR/GenesisOps.h"
#include "dialect/IR/Provenance.h"
#include "passes/Passes.h"

#include "mlir/Analysis/TopologicalSortUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"

#include "llvm/Support/Debug.h"
#include <functional>

#define DEBUG_TYPE "genesis-fuse"

namespace genesis {
#define GEN_PASS_DEF_GENESISFUSE
#include "passes/Passes.h.inc"
} // namespace genesis

using namespace mlir;
using namespace genesis;

bool genesis::isDataMovement(Operation *op) {
  return isa<TransposeOp, SliceOp, ReshapeOp, PadOp, ConcatOp>(op);
}

Value genesis::broadcastBias(Value value) {
  auto broadcast = value.getDefiningOp<BroadcastInDimOp>();
  if (!broadcast)
    return {};
  auto biasType = cast<RankedTensorType>(broadcast.getOperand().getType());
  auto type = cast<RankedTensorType>(broadcast.getType());
  int64_t last = type.getRank() - 1;
  if (biasType.getRank() != 1 ||
      biasType.getDimSize(0) != type.getDimSize(last) ||
      broadcast.getBroadcastDimensions() != ArrayRef<int64_t>{last})
    return {};
  return broadcast.getOperand();
}

std::optional<ArrayRef<int64_t>> genesis::reducedDims(Operation *op) {
  if (auto sum = dyn_cast<ReduceSumOp>(op))
    return sum.getDims();
  if (auto max = dyn_cast<ReduceMaxOp>(op))
    return max.getDims();
  if (auto min = dyn_cast<ReduceMinOp>(op))
    return min.getDims();
  return std::nullopt;
}

bool genesis::alikeReductions(Operation *reduction, Operation *other) {
  return reduction->getOperand(0).getType() == other->getOperand(0).getType() &&
         *reducedDims(reduction) == *reducedDims(other) &&
         reduction->getResult(0).getType() == other->getResult(0).getType();
}

SmallVector<Operation *> genesis::reductionFusionRoots(FusionOp fusion) {
  Block &body = fusion.getBody().front();
  SmallVector<Operation *> roots;
  for (Operation &op : body)
    if (reducedDims(&op))
      roots.push_back(&op);
  if (roots.empty())
    return {};
  Operation *first = roots.front();
  for (Operation *root : roots) {
    bool yieldedOnly =
        llvm::all_of(root->getResult(0).getUsers(),
                     [](Operation *user) { return isa<YieldOp>(user); });
    if (!alikeReductions(root, first) || !yieldedOnly)
      return {};
  }
  auto operandShape =
      cast<RankedTensorType>(first->getOperand(0).getType()).getShape();
  bool sidesOfOperandShape =
      llvm::all_of(body.getTerminator()->getOperands(), [&](Value value) {
        return llvm::any_of(roots,
                            [&](Operation *root) {
                              return root->getResult(0) == value;
                            }) ||
               cast<RankedTensorType>(value.getType()).getShape() ==
                   operandShape;
      });
  return sidesOfOperandShape ? roots : SmallVector<Operation *>();
}

Operation *genesis::reductionFusionRoot(FusionOp fusion) {
  SmallVector<Operation *> roots = reductionFusionRoots(fusion);
  return roots.size() == 1 ? roots.front() : nullptr;
}

//===----------------------------------------------------------------------===//
// Rule 1: library calls
//===----------------------------------------------------------------------===//

namespace {

/// The other operand of a binary `user` of `value`.
Value otherOperand(Operation *user, Value value) {
  return user->getOperand(0) == value ? user->getOperand(1)
                                      : user->getOperand(0);
}

/// Replaces `call` and its sole user by one call when rule 1 allows it;
/// returns the new call, or null. A reshape between them that keeps the
/// last dimension (a linear layer's rows put back into their batch shape)
/// is seen through and goes after the new call: every absorbed op acts
/// elementwise or along the last dimension.
LibraryCallOp absorbUser(LibraryCallOp call) {
  Value result = call.getResult();
  if (!result.hasOneUse())
    return {};
  Operation *user = *result.user_begin();
  auto reshape = dyn_cast<ReshapeOp>(user);
  if (reshape) {
    if (!reshape.getResult().hasOneUse() || reshape.getType().getRank() == 0 ||
        reshape.getType().getShape().back() != call.getType().getShape().back())
      return {};
    result = reshape.getResult();
    user = *result.user_begin();
  }
  GemmEpilogue epilogue = call.getEpilogue();
  Value bias = call.getBias();
  double alpha = call.getAlpha().convertToDouble();
  Value absorbed; // the user's other operand, dead afterwards unless shared
  if (isa<MulOp>(user)) {
    absorbed = otherOperand(user, result);
    std::optional<double> scale = splatFloat(absorbed);
    if (epilogue != GemmEpilogue::none || alpha != 1.0 || !scale)
      return {};
    alpha = *scale;
  } else if (isa<AddOp>(user)) {
    absorbed = otherOperand(user, result);
    bias = broadcastBias(absorbed);
    if (epilogue != GemmEpilogue::none || !bias)
      return {};
    epilogue = GemmEpilogue::bias;
  } else if (isa<ReluOp>(user)) {
    if (epilogue != GemmEpilogue::none && epilogue != GemmEpilogue::bias)
      return {};
    epilogue = epilogue == GemmEpilogue::bias ? GemmEpilogue::bias_relu
                                              : GemmEpilogue::relu;
  } else if (auto gelu = dyn_cast<GeluOp>(user)) {
    if (gelu.getApproximate() != GeluApproximation::tanh ||
        (epilogue != GemmEpilogue::none && epilogue != GemmEpilogue::bias))
      return {};
    epilogue = epilogue == GemmEpilogue::bias ? GemmEpilogue::bias_gelu
                                              : GemmEpilogue::gelu;
  } else {
    return {};
  }

  // The bias may be defined after the call, so the new call takes the
  // user's place.
  OpBuilder builder(user);
  auto fused = LibraryCallOp::create(
      builder,
      builder.getFusedLoc({memberLocation(call), memberLocation(user)}),
      call.getType(), epilogue, call.getLhs(), call.getRhs(), bias,
      /*aux=*/Value(), call.getTransposeLhs(), call.getTransposeRhs(),
      APFloat(alpha));
  Value replacement = fused.getResult();
  if (reshape)
    replacement = ReshapeOp::create(builder, reshape.getLoc(),
                                    reshape.getType(), replacement);
  user->getResult(0).replaceAllUsesWith(replacement);
  user->erase();
  if (reshape)
    reshape.erase();
  call.erase();
  if (Operation *dead = absorbed ? absorbed.getDefiningOp() : nullptr)
    if (isOpTriviallyDead(dead))
      dead->erase();
  return fused;
}

} // namespace

std::optional<double> genesis::splatFloat(Value value) {
  auto constant = value.getDefiningOp<ConstantOp>();
  if (!constant || !constant.getValue().isSplat() ||
      !isa<FloatType>(constant.getValue().getElementType()))
    return std::nullopt;
  APFloat element = constant.getValue().getSplatValue<APFloat>();
  bool losesInfo = false;
  element.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven,
                  &losesInfo);
  return element.convertToDouble();
}

void genesis::formLibraryCalls(func::FuncOp function, bool absorbEpilogues) {
  SmallVector<MatmulOp> matmuls;
  function.walk([&](MatmulOp matmul) { matmuls.push_back(matmul); });
  for (MatmulOp matmul : matmuls) {
    OpBuilder builder(matmul);
    auto call = LibraryCallOp::create(
        builder, memberLocation(matmul), matmul.getType(), GemmEpilogue::none,
        matmul.getLhs(), matmul.getRhs(), /*bias=*/Value(), /*aux=*/Value(),
        matmul.getTransposeLhs(), matmul.getTransposeRhs(), APFloat(1.0));
    matmul.replaceAllUsesWith(call.getResult());
    matmul.erase();
  }
  if (!absorbEpilogues)
    return;
  SmallVector<LibraryCallOp> calls;
  function.walk([&](LibraryCallOp call) { calls.push_back(call); });
  for (LibraryCallOp call : calls)
    while (LibraryCallOp grown = absorbUser(call))
      call = grown;
}

//===----------------------------------------------------------------------===//
// Rules 2-5: fusion regions
//===----------------------------------------------------------------------===//

namespace {

bool isReduction(Operation *op) {
  return isa<ReduceSumOp, ReduceMaxOp, ReduceMinOp>(op);
}

/// An f32 or f64 genesis.rope, which the elemental emitter computes from
/// two elements of its operand's row: it fuses like data movement (not into
/// reductions, whose kernels read operands row by row or column by column).
bool isFusibleRope(Operation *op) {
  auto rope = dyn_cast<RopeOp>(op);
  return rope && isa<Float32Type, Float64Type>(rope.getType().getElementType());
}

/// Data movement but reshape, and rope: ops reading their operands at other
/// indices than their result's.
bool movesElements(Operation *op) {
  return (isDataMovement(op) && !isa<ReshapeOp>(op)) || isFusibleRope(op);
}

/// Elementwise ops, broadcasts, the data-movement ops but reshape, and
/// rope, which fuse by the no-duplication rule (a reshape joins only as
/// Fuser::joinsWithReshape says).
bool isLoopFusible(Operation *op, const llvm::SetVector<Operation *> &cheap) {
  if (!isa<GenesisDialect>(op->getDialect()) || cheap.contains(op))
    return false;
  return isa<BroadcastInDimOp>(op) ||
         op->hasTrait<mlir::OpTrait::Elementwise>() || movesElements(op);
}

/// A float cast that widens (a 16-bit GEMM result read in f32) a value from
/// outside every group, used only by elementwise ops, data-movement ops
/// other than reshape, rope and reductions, which all join groups: cloned
/// into each, so the wide value is never stored.
bool isCheapWidening(CastOp cast, const llvm::SetVector<Operation *> &cheap) {
  auto from = dyn_cast<FloatType>(getElementTypeOrSelf(cast.getOperand()));
  auto to = dyn_cast<FloatType>(getElementTypeOrSelf(cast.getType()));
  if (!from || !to || from.getWidth() >= to.getWidth())
    return false;
  Operation *producer = cast.getOperand().getDefiningOp();
  if (producer && isLoopFusible(producer, cheap))
    return false;
  return !cast->use_empty() &&
         llvm::all_of(cast->getUsers(), [](Operation *user) {
           return isReduction(user) ||
                  user->hasTrait<mlir::OpTrait::Elementwise>() ||
                  movesElements(user);
         });
}

/// Splat constants, widening casts (isCheapWidening), and broadcasts whose
/// operand is never inside a group: cloned into each group that uses them.
bool isCheap(Operation *op, const llvm::SetVector<Operation *> &cheap) {
  if (auto constant = dyn_cast<ConstantOp>(op))
    return constant.getValue().isSplat();
  if (auto widening = dyn_cast<CastOp>(op))
    return isCheapWidening(widening, cheap);
  auto broadcast = dyn_cast<BroadcastInDimOp>(op);
  if (!broadcast)
    return false;
  Operation *producer = broadcast.getOperand().getDefiningOp();
  return !producer || !isLoopFusible(producer, cheap);
}

struct Group {
  /// In reverse program order; the first is the root.
  SmallVector<Operation *> members;
  /// The operand shape of a reduction root; empty for a loop group.
  std::optional<ArrayRef<int64_t>> reductionShape;
};

class Fuser {
public:
  Fuser(Block &block, bool grouping) : block(block), grouping(grouping) {}

  void run() {
    SmallVector<Operation *> ops;
    for (Operation &op : block.without_terminator())
      ops.push_back(&op);
    for (Operation *op : ops)
      if (isCheap(op, cheap))
        cheap.insert(op);
    for (Operation *op : llvm::reverse(ops))
      assign(op);
    // Decided before any rewrite, which changes the users it looks at.
    SmallVector<const Group *> kept;
    for (const Group &group : groups)
      if (!isLoneBroadcast(group))
        kept.push_back(&group);
    LLVM_DEBUG(llvm::dbgs() << kept.size() << " fusions\n");
    for (const Group *group : kept)
      build(*group);
    for (Operation *op : llvm::reverse(cheap))
      if (op->use_empty())
        op->erase();
    bool sorted = sortTopologically(&block);
    assert(sorted && "fusion groups must stay acyclic");
    (void)sorted;
  }

private:
  /// Places `op` (rules 2 and 3); ops are visited consumers first.
  void assign(Operation *op) {
    if (auto reshape = dyn_cast<ReshapeOp>(op)) {
      if (std::optional<unsigned> target = joinsWithReshape(reshape))
        join(op, *target);
      return;
    }
    bool reduction = isReduction(op);
    if ((!reduction && !isLoopFusible(op, cheap)) || op->use_empty())
      return;
    if (!reduction && grouping) {
      std::optional<unsigned> target = soleUserGroup(op);
      // A reduction's kernels read their operands row by row or column by
      // column: data movement stays in loop groups.
      if (target && ((movesElements(op) && groups[*target].reductionShape) ||
                     isFull(*target)))
        target = std::nullopt;
      if (!target && duplicateIntoUserGroups(op))
        return;
      if (!target && !movesElements(op))
        target = multiOutputGroup(op);
      if (target) {
        join(op, *target);
        return;
      }
    }
    groups.emplace_back();
    if (reduction)
      groups.back().reductionShape =
          cast<RankedTensorType>(op->getOperand(0).getType()).getShape();
    join(op, groups.size() - 1);
  }

  /// Whether `group` holds kMaxFusionOps ops: it takes no more, so that a
  /// kernel's body (which the element emitters walk recursively, an
  /// element's computation following its operands) stays shallow however
  /// long a chain of ops a function holds.
  bool isFull(unsigned group) const {
    return static_cast<int64_t>(groups[group].members.size()) >= kMaxFusionOps;
  }

  void join(Operation *op, unsigned group) {
    groups[group].members.push_back(op);
    groupOf[op] = group;
  }

  /// Rule 2b: an elementwise op whose users are all grouped, in more than
  /// one group of which one is a column reduction, is cloned into each of
  /// those groups when its cone is cheap (isDuplicable): each kernel
  /// recomputes it from values stored anyway instead of one kernel storing
  /// it for the others. Without a column reduction, only when the clones
  /// read fewer bits per element than the op's result takes (a SiLU of a
  /// bf16 GEMM result, which the forward and the backward both read, would
  /// be stored in f32). Returns whether `op` was replaced by its clones.
  bool duplicateIntoUserGroups(Operation *op) {
    if (!op->hasTrait<mlir::OpTrait::Elementwise>() || op->getNumResults() != 1)
      return false;
    llvm::SmallMapVector<unsigned, SmallVector<OpOperand *>, 4> usesByGroup;
    for (OpOperand &use : op->getResult(0).getUses()) {
      auto it = groupOf.find(use.getOwner());
      if (it == groupOf.end())
        return false;
      usesByGroup[it->second].push_back(&use);
    }
    if (usesByGroup.size() < 2 ||
        llvm::any_of(usesByGroup,
                     [&](const auto &entry) { return isFull(entry.first); }))
      return false;
    bool intoColumnReduction =
        llvm::any_of(usesByGroup, [&](const auto &entry) {
          return isColumnReduction(groups[entry.first]);
        });
    llvm::SmallDenseSet<unsigned, 4> targets;
    for (const auto &entry : usesByGroup)
      targets.insert(entry.first);
    int64_t readBits = 0;
    if (!isDuplicable(op, targets, readBits) ||
        (!intoColumnReduction &&
         readBits >= cast<ShapedType>(op->getResult(0).getType())
                         .getElementTypeBitWidth()))
      return false;
    OpBuilder builder(op);
    for (auto &[group, uses] : usesByGroup) {
      Operation *clone = builder.clone(*op);
      for (OpOperand *use : uses)
        use->set(clone->getResult(0));
      join(clone, group);
    }
    LLVM_DEBUG(llvm::dbgs() << "duplicated into " << usesByGroup.size()
                            << " groups: " << *op << "\n");
    op->erase();
    return true;
  }

  /// Whether `group` reduces and keeps its operand's last dimension (a sum
  /// over rows, such as a bias gradient): its kernel cannot share a row
  /// fusion's registers with other groups (genesis-merge-row-fusions), so
  /// a value it shares with them would be stored.
  bool isColumnReduction(const Group &group) {
    if (!group.reductionShape || group.reductionShape->empty())
      return false;
    int64_t last = static_cast<int64_t>(group.reductionShape->size()) - 1;
    std::optional<ArrayRef<int64_t>> dims = reducedDims(group.members.front());
    return dims && !llvm::is_contained(*dims, last);
  }

  /// Whether cloning `op` into several groups is cheap: its cone (`op` and,
  /// recursively, the elementwise producers that would be cloned with it)
  /// holds at most kMaxDuplicatedOps ops and reads at most
  /// kMaxDuplicatedInputs values stored anyway (block arguments, results of
  /// non-fusible ops and reductions, and fusible results that a non-fusible
  /// op also uses, or that a group other than `targets` reads; cheap ops
  /// are free, the values they read are counted), and those of them with
  /// as many elements as `op` take no more bits per element than `op`: each
  /// clone reads no more than it would read of `op` stored (a GELU's
  /// derivative from two bf16 values is cloned; a residual stream, an f32
  /// sum plus a bf16 branch output, is stored, not recomputed from every
  /// branch by every reader). `readBits` is set to those bits per element.
  bool isDuplicable(Operation *op,
                    const llvm::SmallDenseSet<unsigned, 4> &targets,
                    int64_t &readBits) {
    static constexpr int kMaxDuplicatedOps = 32;
    static constexpr int kMaxDuplicatedInputs = 3;
    llvm::SmallPtrSet<Operation *, 16> cone;
    llvm::SmallPtrSet<mlir::Value, 4> inputs;
    auto resultType = cast<ShapedType>(op->getResult(0).getType());
    int64_t fullBits = 0;
    // A stored value the clones read (also behind a cheap op: a widening
    // cast of a GEMM result). Those with as many elements as `op` may
    // together take no more bits per element than `op` stored would.
    std::function<bool(Value)> read = [&](Value value) {
      Operation *producer = value.getDefiningOp();
      if (producer && cheap.contains(producer))
        return llvm::all_of(producer->getOperands(), read);
      auto type = cast<ShapedType>(value.getType());
      if (inputs.insert(value).second &&
          type.getNumElements() == resultType.getNumElements())
        fullBits += type.getElementTypeBitWidth();
      return static_cast<int>(inputs.size()) <= kMaxDuplicatedInputs &&
             fullBits <= resultType.getElementTypeBitWidth();
    };
    std::function<bool(Operation *)> visit = [&](Operation *current) {
      if (!cone.insert(current).second)
        return true;
      if (static_cast<int>(cone.size()) > kMaxDuplicatedOps)
        return false;
      for (Value operand : current->getOperands()) {
        Operation *producer = operand.getDefiningOp();
        if (producer && cheap.contains(producer)) {
          if (!read(operand))
            return false;
          continue;
        }
        // Ops are placed consumers first: a user already in a group other
        // than `targets` needs the value stored (a residual stream read by
        // the next layer); unplaced users precede `op` and may be clones'
        // fellow cone members.
        bool stored =
            !producer || !isLoopFusible(producer, cheap) ||
            llvm::any_of(producer->getUsers(), [&](Operation *user) {
              if (!isLoopFusible(user, cheap) && !isReduction(user))
                return true;
              auto it = groupOf.find(user);
              return it != groupOf.end() && !targets.contains(it->second);
            });
        if (stored) {
          if (!read(operand))
            return false;
          continue;
        }
        if (!producer->hasTrait<mlir::OpTrait::Elementwise>() ||
            !visit(producer))
          return false;
      }
      return true;
    };
    bool duplicable = visit(op);
    readBits = fullBits;
    return duplicable;
  }

  /// The loop group a reshape joins: the one of all of its users, when its
  /// operand's producer is loop-fusible and used by it alone (so the
  /// producer joins too and the reshaped value is never stored). Any other
  /// reshape stays an alias of its operand, read without index arithmetic.
  std::optional<unsigned> joinsWithReshape(ReshapeOp reshape) {
    Operation *producer = reshape.getOperand().getDefiningOp();
    if (!grouping || !producer || !isLoopFusible(producer, cheap) ||
        !reshape.getOperand().hasOneUse())
      return std::nullopt;
    std::optional<unsigned> target = soleUserGroup(reshape);
    if (!target || groups[*target].reductionShape || isFull(*target))
      return std::nullopt;
    return target;
  }

  /// The group holding every user of `op`, if there is one.
  std::optional<unsigned> soleUserGroup(Operation *op) {
    std::optional<unsigned> group;
    for (Operation *user : op->getUsers()) {
      auto it = groupOf.find(user);
      if (it == groupOf.end() || (group && *group != it->second))
        return std::nullopt;
      group = it->second;
    }
    return group;
  }

  /// The first reduction group, by program order of `op`'s users, that may
  /// take `op` as an extra result.
  std::optional<unsigned> multiOutputGroup(Operation *op) {
    SmallVector<Operation *> users(op->getUsers());
    llvm::sort(users, [](Operation *a, Operation *b) {
      return a->isBeforeInBlock(b);
    });
    auto shape = cast<RankedTensorType>(op->getResult(0).getType()).getShape();
    for (Operation *user : users) {
      auto it = groupOf.find(user);
      if (it == groupOf.end())
        continue;
      const Group &group = groups[it->second];
      if (group.reductionShape && *group.reductionShape == shape &&
          !isFull(it->second) && !reentersGroup(op, it->second))
        return it->second;
    }
    return std::nullopt;
  }

  /// Whether a path from `op`'s users outside `group` leads back into
  /// `group`. Entering any group continues from all of its members, since
  /// its kernel produces every result only after reading all of its inputs.
  /// No path can enter `op` itself: every grouped op comes after it.
  bool reentersGroup(Operation *op, unsigned group) {
    SmallVector<Operation *> worklist;
    llvm::DenseSet<Operation *> seen;
    llvm::DenseSet<unsigned> expanded;
    auto push = [&](Operation *from) {
      for (Operation *user : from->getUsers())
        if (seen.insert(user).second)
          worklist.push_back(user);
    };
    for (Operation *user : op->getUsers()) {
      auto it = groupOf.find(user);
      if ((it == groupOf.end() || it->second != group) &&
          seen.insert(user).second)
        worklist.push_back(user);
    }
    while (!worklist.empty()) {
      Operation *current = worklist.pop_back_val();
      auto it = groupOf.find(current);
      if (it == groupOf.end()) {
        push(current);
        continue;
      }
      if (it->second == group)
        return true;
      if (expanded.insert(it->second).second)
        for (Operation *member : groups[it->second].members)
          push(member);
    }
    return false;
  }

  /// A broadcast alone in its group whose users are all non-fusible stays
  /// as it is (rule 4), and so does a data-movement op alone in its group
  /// that reads no cheap op (its own kernel moves the data as fast).
  bool isLoneBroadcast(const Group &group) {
    Operation *op = group.members.front();
    if (group.members.size() != 1)
      return false;
    if (isDataMovement(op))
      return llvm::none_of(op->getOperands(), [&](Value operand) {
        Operation *producer = operand.getDefiningOp();
        return producer && cheap.contains(producer);
      });
    return isa<BroadcastInDimOp>(op) &&
           llvm::none_of(op->getUsers(), [&](Operation *user) {
             return groupOf.contains(user);
           });
  }

  /// Rule 5: replaces `group`'s members by one genesis.fusion.
  void build(const Group &group) {
    SmallVector<Operation *> members(llvm::reverse(group.members));
    llvm::SmallPtrSet<Operation *, 16> memberSet(members.begin(),
                                                 members.end());
    auto *body = new Block();
    OpBuilder builder(members.front()->getContext());
    builder.setInsertionPointToEnd(body);
    IRMapping mapping;
    SmallVector<Value> inputs;
    std::function<void(Value)> bind = [&](Value value) {
      if (mapping.contains(value))
        return;
      Operation *producer = value.getDefiningOp();
      if (producer && cheap.contains(producer)) {
        for (Value operand : producer->getOperands())
          bind(operand);
        builder.clone(*producer, mapping);
        return;
      }
      inputs.push_back(value);
      mapping.map(value, body->addArgument(value.getType(), value.getLoc()));
    };
    SmallVector<Value> outputs;
    SmallVector<Location> locations;
    for (Operation *member : members) {
      for (Value operand : member->getOperands())
        bind(operand);
      builder.clone(*member, mapping);
      locations.push_back(memberLocation(member));
      for (Value result : member->getResults())
        if (llvm::any_of(result.getUsers(), [&](Operation *user) {
              return !memberSet.contains(user);
            }))
          outputs.push_back(result);
    }
    Location loc = builder.getFusedLoc(locations);
    SmallVector<Value> yielded;
    for (Value output : outputs)
      yielded.push_back(mapping.lookup(output));
    YieldOp::create(builder, loc, yielded);

    builder.setInsertionPoint(members.back());
    auto fusion =
        FusionOp::create(builder, loc, ValueRange(outputs).getTypes(), inputs);
    fusion.getBody().push_back(body);
    for (auto [output, result] : llvm::zip(outputs, fusion.getResults()))
      output.replaceAllUsesWith(result);
    for (Operation *member : llvm::reverse(members))
      member->erase();
  }

  Block &block;
  /// false: every fusible op is a group of its own.
  bool grouping;
  /// In program order.
  llvm::SetVector<Operation *> cheap;
  std::vector<Group> groups;
  llvm::DenseMap<Operation *, unsigned> groupOf;
};

} // namespace

void genesis::formFusions(func::FuncOp function, bool grouping) {
  for (Block &block : function.getBody())
    Fuser(block, grouping).run();
}

namespace {

struct GenesisFusePass
    : public genesis::impl::GenesisFuseBase<GenesisFusePass> {
  using GenesisFuseBase::GenesisFuseBase;

  void runOnOperation() override {
    formLibraryCalls(getOperation(), grouping);
    formFusions(getOperation(), grouping);
  }
};

} // namespace
