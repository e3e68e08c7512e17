//===- StepNumber.cpp - Step arguments count from one ---------------------===//
//
// Implements genesis-step-number; Passes.td states the algorithm.
//
//===----------------------------------------------------------------------===//

#include "dialect/IR/GenesisOps.h"
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "genesis-step-number"

namespace genesis {
#define GEN_PASS_DEF_GENESISSTEPNUMBER
#include "passes/Passes.h.inc"
} // namespace genesis

using namespace mlir;
using namespace genesis;

namespace {

void rewriteStepArguments(func::FuncOp function) {
  if (function.isExternal())
    return;
  Block &entry = function.getBody().front();
  for (unsigned i = 0; i < function.getNumArguments(); ++i) {
    auto role = function.getArgAttrOfType<StringAttr>(i, "genesis.role");
    if (!role || role.getValue() != "step")
      continue;
    BlockArgument step = entry.getArgument(i);
    if (step.use_empty())
      continue;
    LLVM_DEBUG(llvm::dbgs() << "step argument #" << i << " of @"
                            << function.getSymName() << " becomes step + 1\n");
    OpBuilder builder = OpBuilder::atBlockBegin(&entry);
    auto type = cast<RankedTensorType>(step.getType());
    Type element = type.getElementType();
    Attribute one = isa<FloatType>(element)
                        ? Attribute(builder.getFloatAttr(element, 1.0))
                        : Attribute(builder.getIntegerAttr(element, 1));
    Value constant = ConstantOp::create(
        builder, step.getLoc(),
        cast<ElementsAttr>(DenseElementsAttr::get(type, one)));
    Value next = AddOp::create(builder, step.getLoc(), step, constant);
    step.replaceAllUsesExcept(next, next.getDefiningOp());
  }
}

struct GenesisStepNumberPass
    : public genesis::impl::GenesisStepNumberBase<GenesisStepNumberPass> {
  using GenesisStepNumberBase::GenesisStepNumberBase;

  void runOnOperation() override { rewriteStepArguments(getOperation()); }
};

} // namespace
