//===- FuseMatrixVector.cpp - Matrix-vector products in one kernel --------===//
//
// Implements genesis-fuse-matrix-vector; Passes.td states the algorithm.
//
//===----------------------------------------------------------------------===//

#include "dialect/IR/GenesisOps.h"
#include "dialect/IR/Provenance.h"
#include "passes/Analysis/MatrixVector.h"
#include "passes/Passes.h"

#include "mlir/IR/IRMapping.h"
#include "llvm/Support/Debug.h"

#include <map>

#define DEBUG_TYPE "genesis-fuse-matrix-vector"

namespace genesis {
#define GEN_PASS_DEF_GENESISFUSEMATRIXVECTOR
#include "passes/Passes.h.inc"
} // namespace genesis

using namespace mlir;
using namespace genesis;

namespace {

int64_t columnsOf(LibraryCallOp call) {
  return cast<RankedTensorType>(call.getType()).getDimSize(1);
}

/// The op after `op` past reshapes and constants, or null.
Operation *nextWork(Operation *op) {
  for (op = op->getNextNode(); op; op = op->getNextNode())
    if (!isa<ReshapeOp, ConstantOp>(op))
      return op;
  return nullptr;
}

bool definedBefore(Value value, Operation *anchor) {
  Operation *definer = value.getDefiningOp();
  return !definer || (definer->getBlock() == anchor->getBlock() &&
                      definer->isBeforeInBlock(anchor));
}

/// The matrix-vector products of `first`'s lhs that follow it with only
/// reshapes and constants between them, `first` included, within the
/// limits of one kernel.
SmallVector<LibraryCallOp> siblingProducts(LibraryCallOp first) {
  SmallVector<LibraryCallOp> group = {first};
  std::map<int64_t, int64_t> loads = {
      {columnsOf(first), gemvLoadsPerLane(first)}};
  for (Operation *op = nextWork(first);
       op && static_cast<int64_t>(group.size()) < kMaxGemvFusionCalls;
       op = nextWork(op)) {
    auto call = dyn_cast<LibraryCallOp>(op);
    if (!call || !isMatrixVectorProduct(call) ||
        call.getLhs() != first.getLhs() ||
        call.getRhs().getType().getElementType() !=
            first.getRhs().getType().getElementType() ||
        !llvm::all_of(call->getOperands(),
                      [&](Value v) { return definedBefore(v, first); }))
      break;
    int64_t &columnLoads = loads[columnsOf(call)];
    if (columnLoads + gemvLoadsPerLane(call) > kMaxGemvLoadsPerLane)
      break;
    columnLoads += gemvLoadsPerLane(call);
    group.push_back(call);
  }
  return group;
}

/// The product of `group` whose result `value` is, directly or through
/// reshapes outside any fusion, or null.
LibraryCallOp productBehind(Value value, MutableArrayRef<LibraryCallOp> group) {
  while (auto reshape = value.getDefiningOp<ReshapeOp>())
    value = reshape.getOperand();
  auto call = value.getDefiningOp<LibraryCallOp>();
  return call && llvm::is_contained(group, call) ? call : LibraryCallOp();
}

/// The fusion after `group` (past reshapes and constants) that computes
/// element by element from the group's results of one column count N, with
/// M x N elements, and values defined before the group, every result from
/// a product (matrixVectorFusion's rule); else null.
FusionOp epilogueOf(MutableArrayRef<LibraryCallOp> group) {
  auto fusion = dyn_cast_or_null<FusionOp>(nextWork(group.back()));
  if (!fusion || fusion->getNumResults() == 0)
    return {};
  auto shape = cast<RankedTensorType>(fusion->getResultTypes()[0]).getShape();
  if (!isElementwiseFusion(fusion, shape))
    return {};
  int64_t rows =
      cast<RankedTensorType>(group.front().getLhs().getType()).getDimSize(0);
  std::optional<int64_t> columns;
  Block &body = fusion.getBody().front();
  // The body's values computed from a product's result.
  llvm::DenseSet<Value> fromProducts;
  for (auto [input, argument] :
       llvm::zip(fusion.getInputs(), body.getArguments())) {
    if (LibraryCallOp call = productBehind(input, group)) {
      if (columns && *columns != columnsOf(call))
        return {};
      columns = columnsOf(call);
      fromProducts.insert(argument);
    } else if (!definedBefore(input, group.front())) {
      return {};
    }
  }
  if (!columns)
    return {};
  for (Type type : fusion->getResultTypes())
    if (cast<RankedTensorType>(type).getNumElements() != rows * *columns)
      return {};
  for (Operation &op : body.without_terminator())
    if (llvm::any_of(op.getOperands(),
                     [&](Value v) { return fromProducts.contains(v); }))
      fromProducts.insert(op.result_begin(), op.result_end());
  if (!llvm::all_of(body.getTerminator()->getOperands(),
                    [&](Value v) { return fromProducts.contains(v); }))
    return {};
  return fusion;
}

/// The fusion computing `group`'s lhs (through reshapes outside fusions)
/// right before the group (only reshapes and constants between), which each
/// block of the kernel can compute (gemvPrologue) and none of whose results
/// the products' other operands (a weight, a bias) or `epilogue` read; else
/// null.
FusionOp prologueOf(MutableArrayRef<LibraryCallOp> group, FusionOp epilogue) {
  Value source = group.front().getLhs();
  while (auto reshape = source.getDefiningOp<ReshapeOp>())
    source = reshape.getOperand();
  auto fusion = source.getDefiningOp<FusionOp>();
  if (!fusion || fusion->getBlock() != group.front()->getBlock() ||
      nextWork(fusion) != group.front().getOperation() ||
      !gemvPrologue(fusion, cast<OpResult>(source).getResultNumber(),
                    cast<RankedTensorType>(group.front().getLhs().getType())))
    return {};
  auto fromPrologue = [&](Value value) {
    while (auto reshape = value.getDefiningOp<ReshapeOp>())
      value = reshape.getOperand();
    return value.getDefiningOp() == fusion.getOperation();
  };
  for (LibraryCallOp call : group)
    if (llvm::any_of(call->getOperands().drop_front(), fromPrologue))
      return {};
  if (epilogue && llvm::any_of(epilogue.getInputs(), fromPrologue))
    return {};
  return fusion;
}

/// Replaces `group`, `prologue` and `epilogue` (null: none) by one fusion
/// in the first product's place (Passes.td).
void fuse(MutableArrayRef<LibraryCallOp> group, FusionOp prologue,
          FusionOp epilogue) {
  LLVM_DEBUG(llvm::dbgs() << "fusing " << group.size()
                          << " matrix-vector products at "
                          << group.front().getLoc() << "\n");
  OpBuilder builder(group.front());
  SmallVector<Value> inputs;
  SmallVector<Type> inputTypes;
  SmallVector<Location> inputLocations;
  auto inputIndex = [&](Value value) {
    auto it = llvm::find(inputs, value);
    if (it != inputs.end())
      return static_cast<unsigned>(std::distance(inputs.begin(), it));
    inputs.push_back(value);
    inputTypes.push_back(value.getType());
    inputLocations.push_back(value.getLoc());
    return static_cast<unsigned>(inputs.size() - 1);
  };
  if (prologue)
    for (Value input : prologue.getInputs())
      inputIndex(input);
  for (LibraryCallOp call : group)
    for (Value operand : call->getOperands())
      if (!prologue || operand != group.front().getLhs())
        inputIndex(operand);
  if (epilogue)
    for (Value input : epilogue.getInputs())
      if (!productBehind(input, group))
        inputIndex(input);

  // Results still read outside the group and its epilogue.
  auto usedOutside = [&](Value result) {
    SmallVector<Operation *> pending(result.getUsers().begin(),
                                     result.getUsers().end());
    while (!pending.empty()) {
      Operation *user = pending.pop_back_val();
      if ((epilogue && user == epilogue.getOperation()) ||
          (prologue && llvm::is_contained(group, user)))
        continue;
      if (auto reshape = dyn_cast<ReshapeOp>(user)) {
        llvm::append_range(pending, reshape->getUsers());
        continue;
      }
      return true;
    }
    return false;
  };
  SmallVector<Value> replaced;
  if (prologue)
    for (Value result : prologue.getResults())
      if (usedOutside(result))
        replaced.push_back(result);
  for (LibraryCallOp call : group)
    if (!epilogue || usedOutside(call.getResult()))
      replaced.push_back(call.getResult());
  if (epilogue)
    llvm::append_range(replaced, epilogue.getResults());
  SmallVector<Location> locations;
  SmallVector<Type> resultTypes;
  if (prologue)
    locations.push_back(memberLocation(prologue));
  for (LibraryCallOp call : group)
    locations.push_back(memberLocation(call));
  if (epilogue)
    locations.push_back(memberLocation(epilogue));
  for (Value value : replaced)
    resultTypes.push_back(value.getType());
  auto fusion = FusionOp::create(builder, builder.getFusedLoc(locations),
                                 resultTypes, inputs);

  Block *body = new Block();
  fusion.getBody().push_back(body);
  body->addArguments(inputTypes, inputLocations);
  OpBuilder inside = OpBuilder::atBlockEnd(body);
  IRMapping mapping;
  for (auto [input, argument] : llvm::zip(inputs, body->getArguments()))
    mapping.map(input, argument);
  if (prologue) {
    // The prologue nested whole; the products read its result reshaped.
    Operation *nested = inside.clone(*prologue, mapping);
    Value lhs = group.front().getLhs(), source = lhs;
    while (auto reshape = source.getDefiningOp<ReshapeOp>())
      source = reshape.getOperand();
    Value computed =
        nested->getResult(cast<OpResult>(source).getResultNumber());
    if (computed.getType() != lhs.getType())
      computed =
          ReshapeOp::create(inside, lhs.getLoc(), lhs.getType(), computed);
    mapping.map(lhs, computed);
  }
  for (LibraryCallOp call : group)
    inside.clone(*call, mapping);
  SmallVector<Value> yields;
  for (Value value : replaced)
    if (value.getDefiningOp<LibraryCallOp>() ||
        (prologue && value.getDefiningOp() == prologue.getOperation()))
      yields.push_back(mapping.lookup(value));
  if (epilogue) {
    Block &epilogueBody = epilogue.getBody().front();
    IRMapping epilogueMapping;
    for (auto [input, argument] :
         llvm::zip(epilogue.getInputs(), epilogueBody.getArguments())) {
      LibraryCallOp call = productBehind(input, group);
      if (!call) {
        epilogueMapping.map(argument, body->getArgument(inputIndex(input)));
        continue;
      }
      Value result = mapping.lookup(call.getResult());
      if (result.getType() != argument.getType())
        result = ReshapeOp::create(inside, input.getLoc(), argument.getType(),
                                   result);
      epilogueMapping.map(argument, result);
    }
    for (Operation &op : epilogueBody.without_terminator())
      inside.clone(op, epilogueMapping);
    for (Value value : epilogueBody.getTerminator()->getOperands())
      yields.push_back(epilogueMapping.lookup(value));
  }
  YieldOp::create(inside, group.front().getLoc(), yields);
  // The reshapes of the products' and the prologue's results (chains of
  // them), found before their sources are replaced.
  SmallVector<Operation *> reshapes;
  SmallVector<Value> pending;
  for (LibraryCallOp call : group)
    pending.push_back(call.getResult());
  if (prologue)
    llvm::append_range(pending, prologue.getResults());
  while (!pending.empty())
    for (Operation *user : pending.pop_back_val().getUsers())
      if (isa<ReshapeOp>(user) && !llvm::is_contained(reshapes, user)) {
        reshapes.push_back(user);
        pending.push_back(user->getResult(0));
      }
  for (auto [value, result] : llvm::zip(replaced, fusion.getResults()))
    value.replaceAllUsesWith(result);
  // The reshapes no one reads any more (in any order).
  auto eraseUnusedReshapes = [&] {
    for (bool erased = true; erased;) {
      erased = false;
      for (Operation *&reshape : reshapes)
        if (reshape && reshape->use_empty()) {
          reshape->erase();
          reshape = nullptr;
          erased = true;
        }
    }
  };
  // The epilogue, the reshapes of the products' results it read, the
  // products, the reshapes of the prologue's results they read, then the
  // prologue: each when nothing reads it any more.
  if (epilogue)
    epilogue.erase();
  eraseUnusedReshapes();
  for (LibraryCallOp call : llvm::reverse(group))
    call.erase();
  eraseUnusedReshapes();
  if (prologue)
    prologue.erase();
  // A prologue's reshapes still read elsewhere now read the fusion's
  // results: after it, in their order.
  llvm::erase(reshapes, nullptr);
  llvm::sort(reshapes,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  Operation *last = fusion;
  for (Operation *reshape : reshapes)
    if (reshape->isBeforeInBlock(fusion)) {
      reshape->moveAfter(last);
      last = reshape;
    }
}

struct GenesisFuseMatrixVectorPass
    : public genesis::impl::GenesisFuseMatrixVectorBase<
          GenesisFuseMatrixVectorPass> {
  void runOnOperation() override {
    getOperation().walk([](Block *block) {
      // A fusion's body is already one kernel.
      if (isa_and_nonnull<FusionOp>(block->getParentOp()))
        return;
      for (Operation *op = block->empty() ? nullptr : &block->front(); op;
           op = op->getNextNode()) {
        auto call = dyn_cast<LibraryCallOp>(op);
        if (!call || !isMatrixVectorProduct(call))
          continue;
        SmallVector<LibraryCallOp> group = siblingProducts(call);
        FusionOp epilogue = epilogueOf(group);
        FusionOp prologue = prologueOf(group, epilogue);
        if (group.size() == 1 && !epilogue && !prologue)
          continue;
        // Resumes after the fusion, which takes the first product's place.
        Operation *previous = (prologue ? prologue : op)->getPrevNode();
        fuse(group, prologue, epilogue);
        op = previous ? previous->getNextNode() : &block->front();
      }
    });
  }
};

} // namespace
