//===- ArgumentUpdates.cpp - Results written into argument tensors --------===//

#include "passes/Analysis/ArgumentUpdates.h"
#include "dialect/IR/GenesisOps.h"
#include "passes/Passes.h"

#include "llvm/ADT/StringMap.h"

using namespace mlir;

namespace genesis {

llvm::DenseSet<Value> argumentUpdates(func::FuncOp function) {
  llvm::DenseSet<Value> updates;
  if (function.isExternal() || !llvm::hasSingleElement(function.getBody()))
    return updates;
  Block &body = function.getBody().front();
  llvm::StringMap<BlockArgument> argumentByName;
  for (BlockArgument argument : body.getArguments())
    if (auto name = function.getArgAttrOfType<StringAttr>(
            argument.getArgNumber(), "genesis.name"))
      argumentByName[name.getValue()] = argument;
  llvm::DenseMap<Operation *, int64_t> position;
  for (auto [i, op] : llvm::enumerate(body))
    position[&op] = static_cast<int64_t>(i);

  // Values an earlier result already binds to its tensor: every result
  // produced in the block binds, an output's as well as an update's.
  llvm::DenseSet<Value> bound;
  auto returnOp = cast<func::ReturnOp>(body.getTerminator());
  for (auto [r, value] : llvm::enumerate(returnOp.getOperands())) {
    Operation *producer = value.getDefiningOp();
    if (!producer || producer->getBlock() != &body || isSplatConstant(value) ||
        bound.contains(value))
      continue;
    auto name = function.getResultAttrOfType<StringAttr>(r, "genesis.name");
    auto argument =
        name ? argumentByName.find(name.getValue()) : argumentByName.end();
    if (argument == argumentByName.end()) {
      bound.insert(value); // an output of its own
      continue;
    }
    BlockArgument old = argument->second;
    if (old.getType() != value.getType())
      continue;
    int64_t at = position.lookup(producer);
    bool readLater = llvm::any_of(old.getUsers(), [&](Operation *user) {
      return position.lookup(body.findAncestorOpInBlock(*user)) > at;
    });
    // A reduction or a GEMM (a matrix-vector fusion's too) reads elements
    // other than the one it writes, from every block.
    bool reduces = false;
    producer->walk([&](Operation *inner) {
      reduces |=
          isa<ReduceSumOp, ReduceMaxOp, ReduceMinOp, LibraryCallOp>(inner);
    });
    if (readLater || reduces)
      continue;
    updates.insert(value);
    bound.insert(value);
  }
  return updates;
}

} // namespace genesis
