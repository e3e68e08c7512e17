//===- DedupeKernels.cpp - Kernels with the same body compiled once -------===//
//
// Implements genesis-dedupe-kernels; Passes.td states the algorithm.
//
//===----------------------------------------------------------------------===//

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

/// The function's text with its symbol replaced by a fixed name.
std::string textWithoutName(Operation *function) {
  StringAttr name = SymbolTable::getSymbolName(function);
  SymbolTable::setSymbolName(function, "kernel");
  std::string text;
  llvm::raw_string_ostream os(text);
  function->print(os, OpPrintingFlags().useLocalScope());
  SymbolTable::setSymbolName(function, name);
  return text;
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

/// Erases each of `functions` whose text equals an earlier one's, recording
/// the survivor in `renamed`.
void dedupe(ArrayRef<Operation *> functions,
            llvm::DenseMap<StringAttr, StringAttr> &renamed) {
  llvm::StringMap<StringAttr> first;
  for (Operation *function : functions) {
    StringAttr name = SymbolTable::getSymbolName(function);
    auto [known, inserted] = first.try_emplace(textWithoutName(function), name);
    if (inserted)
      continue;
    LLVM_DEBUG(llvm::dbgs() << "@" << name.getValue() << " is @"
                            << known->second.getValue() << "\n");
    renamed[name] = known->second;
    function->erase();
  }
}

struct GenesisDedupeKernels
    : genesis::impl::GenesisDedupeKernelsBase<GenesisDedupeKernels> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto kernels =
        module.lookupSymbol<gpu::GPUModuleOp>(cuda::kKernelModuleName);
    if (!kernels)
      return;
    llvm::DenseMap<StringAttr, StringAttr> renamed;
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
    renameReferences(module, renamed);
  }
};

} // namespace
