//===- CudaOptimizerGroupEmitter.cpp - Optimizer updates in one kernel ----===//
//
// The emitter of genesis-lower-cuda for the fusions of
// genesis-group-optimizer-updates: one kernel whose blocks are split among
// the updates, each running its update's op kernel (emitOuterLoopBody)
// over its share of the elements.
//
//===----------------------------------------------------------------------===//

#include "dialect/IR/GenesisOps.h"
#include "passes/Conversion/CudaEmitters.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;

namespace genesis::cuda {

bool isOptimizerGroup(Operation *op) {
  auto fusion = dyn_cast<FusionOp>(op);
  // Distinct inputs: no tensor enters under two names.
  if (!fusion || llvm::SmallPtrSet<Value, 16>(fusion.getInputs().begin(),
                                              fusion.getInputs().end())
                         .size() != fusion.getInputs().size())
    return false;
  Block &body = fusion.getBody().front();
  SmallVector<Value> results;
  SmallVector<Operation *> members;
  for (Operation &inner : body.without_terminator()) {
    // Every operand from outside the body.
    if (!isOptimizerUpdate(&inner) ||
        !llvm::all_of(inner.getOperands(),
                      [](Value v) { return isa<BlockArgument>(v); }))
      return false;
    llvm::append_range(results, inner.getResults());
    members.push_back(&inner);
  }
  // Its blocks run the members in any order.
  return !results.empty() && updatesAreIndependent(members) &&
         llvm::equal(results, body.getTerminator()->getOperands());
}

FailureOr<GpuKernel> emitOptimizerGroup(Operation *op, StringRef name,
                                        OpBuilder &moduleBuilder) {
  auto fusion = cast<FusionOp>(op);
  Location loc = fusion.getLoc();
  Block &body = fusion.getBody().front();
  SmallVector<Operation *> members = llvm::to_vector(llvm::map_range(
      body.without_terminator(), [](Operation &inner) { return &inner; }));
  SmallVector<OuterLoopBody> bodies;
  int64_t blocks = 0;
  for (auto [i, member] : llvm::enumerate(members)) {
    FailureOr<OuterLoopBody> memberBody = emitOuterLoopBody(
        member, (name + "_body" + Twine(i)).str(), moduleBuilder);
    if (failed(memberBody))
      return failure();
    blocks += memberBody->blocks();
    bodies.push_back(*memberBody);
  }
  // The kernel's parameters take the bodies' (flattened) memref types: the
  // plan passes bare pointers, the bodies index the flat elements.
  SmallVector<Type> inputTypes(fusion.getInputs().getTypes());
  SmallVector<Type> outputTypes(fusion.getResultTypes());
  auto tensorOf = [](Type memref) -> Type {
    auto type = cast<MemRefType>(memref);
    return RankedTensorType::get(type.getShape(), type.getElementType());
  };
  unsigned resultIndex = 0;
  for (auto [member, memberBody] : llvm::zip(members, bodies)) {
    TypeRange argTypes = memberBody.function.getArgumentTypes();
    for (auto [k, operand] : llvm::enumerate(member->getOperands()))
      inputTypes[cast<BlockArgument>(operand).getArgNumber()] =
          tensorOf(argTypes[k]);
    for (unsigned r = 0; r < member->getNumResults(); ++r)
      outputTypes[resultIndex++] =
          tensorOf(argTypes[member->getNumOperands() + r]);
  }
  GpuKernel kernel =
      createGpuKernel(moduleBuilder, loc, name, inputTypes, outputTypes);
  setLaunch(kernel, blocks, OuterLoopBody::kOuterLoopBlock);
  OpBuilder b = OpBuilder::atBlockBegin(&kernel.function.getBody().front());
  IndexMath im{b, loc};
  Value block = im.blockId();
  // Member i takes blocks [first, first + its blocks): a uniform branch per
  // block, every thread of a block in the same member.
  int64_t first = 0;
  unsigned result = 0;
  for (auto [member, memberBody] : llvm::zip(members, bodies)) {
    SmallVector<Value> arguments;
    for (Value operand : member->getOperands())
      arguments.push_back(
          kernel.inputs[cast<BlockArgument>(operand).getArgNumber()]);
    for (unsigned r = 0; r < member->getNumResults(); ++r)
      arguments.push_back(kernel.outputs[result++]);
    Value fromFirst = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge,
                                            block, im.c(first));
    Value beforeNext = im.lt(block, im.c(first + memberBody.blocks()));
    Value inRange = arith::AndIOp::create(b, loc, fromFirst, beforeNext);
    auto branch = scf::IfOp::create(b, loc, inRange, /*withElse=*/false);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&branch.getThenRegion().front());
      callOuterLoopBody(b, loc, memberBody, arguments,
                        IndexMath{b, loc}.sub(block, im.c(first)));
    }
    first += memberBody.blocks();
  }
  gpu::ReturnOp::create(b, loc);
  return kernel;
}

} // namespace genesis::cuda
