//===- DedupeKernels.cpp - Kernels with the same body compiled once -------===//
//
// Implements genesis-dedupe-kernels; Passes.td states the algorithm.
//
//===----------------------------------------------------------------------===//

#include "dialect/IR/GenesisDialect.h"
#include "passes/Conversion/CudaKernels.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "genesis-dedupe-kernels"

namespace genesis {
#define GEN_PASS_DEF_GENESISDEDUPEKERNELS
#include "passes/Passes.h.inc"
} // namespace genesis

using namespace mlir;
using namespace genesis;

namespace {

/// The function's attributes other than its symbol name.
SmallVector<NamedAttribute> attributesWithoutName(Operation *function) {
  SmallVector<NamedAttribute> attributes;
  for (NamedAttribute attribute : function->getAttrDictionary())
    if (attribute.getName() != SymbolTable::getSymbolAttrName())
      attributes.push_back(attribute);
  return attributes;
}

/// A hash of what makes two functions the same kernel: their attributes
/// but the name, and every op of the body (name, attributes, types).
llvm::hash_code kernelHash(Operation *function) {
  llvm::hash_code hash = llvm::hash_combine(
      function->getName(),
      llvm::hash_combine_range(attributesWithoutName(function)));
  function->getRegion(0).walk([&](Operation *op) {
    hash =
        llvm::hash_combine(hash, OperationEquivalence::computeHash(
                                     op, OperationEquivalence::ignoreHashValue,
                                     OperationEquivalence::ignoreHashValue,
                                     OperationEquivalence::IgnoreLocations));
  });
  return hash;
}

/// Whether two functions differ in nothing but their names (and locations).
bool sameKernel(Operation *a, Operation *b) {
  return a->getName() == b->getName() &&
         attributesWithoutName(a) == attributesWithoutName(b) &&
         OperationEquivalence::isRegionEquivalentTo(
             &a->getRegion(0), &b->getRegion(0),
             OperationEquivalence::IgnoreLocations);
}

/// Points every flat symbol reference in `root` named in `renamed` (calls'
/// callees, launching ops' genesis.kernel) at its replacement.
void renameReferences(Operation *root,
                      const llvm::DenseMap<StringAttr, StringAttr> &renamed) {
  if (renamed.empty())
    return;
  root->walk([&](Operation *op) {
    if (auto call = dyn_cast<func::CallOp>(op)) {
      if (StringAttr to = renamed.lookup(call.getCalleeAttr().getAttr()))
        call.setCalleeAttr(FlatSymbolRefAttr::get(to));
      return;
    }
    for (NamedAttribute attribute : op->getDiscardableAttrs())
      if (auto ref = dyn_cast<FlatSymbolRefAttr>(attribute.getValue()))
        if (StringAttr to = renamed.lookup(ref.getAttr()))
          op->setDiscardableAttr(attribute.getName(),
                                 FlatSymbolRefAttr::get(to));
  });
}

/// Erases each of `functions` that is the same kernel as an earlier one,
/// recording the survivor in `renamed`.
void dedupe(ArrayRef<Operation *> functions,
            llvm::DenseMap<StringAttr, StringAttr> &renamed) {
  llvm::DenseMap<llvm::hash_code, SmallVector<Operation *, 1>> survivors;
  for (Operation *function : functions) {
    SmallVector<Operation *, 1> &candidates = survivors[kernelHash(function)];
    Operation *known = nullptr;
    for (Operation *candidate : candidates)
      if (sameKernel(candidate, function)) {
        known = candidate;
        break;
      }
    if (!known) {
      candidates.push_back(function);
      continue;
    }
    StringAttr name = SymbolTable::getSymbolName(function);
    StringAttr survivor = SymbolTable::getSymbolName(known);
    LLVM_DEBUG(llvm::dbgs() << "@" << name.getValue() << " is @"
                            << survivor.getValue() << "\n");
    renamed[name] = survivor;
    function->erase();
  }
}

struct GenesisDedupeKernels
    : genesis::impl::GenesisDedupeKernelsBase<GenesisDedupeKernels> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::DenseMap<StringAttr, StringAttr> renamed;
    // CPU: the kernels are the module's functions marked genesis.kernel.
    SmallVector<Operation *> cpuKernels;
    for (auto function : module.getOps<func::FuncOp>())
      if (function->hasAttr(kKernelAttrName))
        cpuKernels.push_back(function);
    dedupe(cpuKernels, renamed);
    // CUDA: the kernel module's bodies, then its kernels.
    if (auto kernels =
            module.lookupSymbol<gpu::GPUModuleOp>(cuda::kKernelModuleName)) {
      SmallVector<Operation *> bodies, entries;
      for (Operation &op : kernels.getBody()->getOperations()) {
        if (isa<func::FuncOp>(op))
          bodies.push_back(&op);
        else if (isa<gpu::GPUFuncOp>(op))
          entries.push_back(&op);
      }
      dedupe(bodies, renamed);
      renameReferences(kernels, renamed);
      dedupe(entries, renamed);
    }
    renameReferences(module, renamed);
  }
};

} // namespace
