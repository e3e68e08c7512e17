//===- CudaOpKernelEmitter.cpp - CPU op kernels run per thread ------------===//
//
// The fallback emitter of genesis-lower-cuda: an op's CPU kernel (a
// func.func over [begin, end) of its outer loop) cloned into the GPU module
// and called with one outer iteration per thread.
//
//===----------------------------------------------------------------------===//

#include "dialect/IR/GenesisOps.h"
#include "passes/Conversion/CpuKernels.h"
#include "passes/Conversion/CudaEmitters.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"

using namespace mlir;

namespace genesis::cuda {

/// The CPU op kernel of `op` (a func.func over [begin, end) of its outer
/// loop, cloned into the GPU module) made callable per thread. Elementwise
/// ops (optimizer updates, dropout) are emitted over their flattened shape,
/// so every element gets a thread; an optimizer update's thread takes
/// kOptimizerElementsPerThread elements a block's width apart (so each
/// access stays coalesced): its kernel's element loop is given the block's
/// width as its step, so the step's scalars, which the kernel computes
/// before that loop (Adam's bias corrections: two f64 powers and a
/// division), are computed once for all of them.
FailureOr<OuterLoopBody> emitOuterLoopBody(Operation *op, StringRef name,
                                           OpBuilder &moduleBuilder) {
  FailureOr<func::FuncOp> body =
      cpu::emitOpKernel(op, name, moduleBuilder, /*flattenElementwise=*/true);
  if (failed(body))
    return failure();
  int64_t extent =
      (*body)->getAttrOfType<IntegerAttr>("genesis.outer_extent").getInt();
  // Device malloc is slow and its heap small: the op kernels' scratch
  // (static, allocated once per call) lives on the thread's stack.
  SmallVector<memref::AllocOp> allocs;
  (*body).walk([&](memref::AllocOp alloc) { allocs.push_back(alloc); });
  for (memref::AllocOp alloc : allocs) {
    OpBuilder at(alloc);
    alloc.replaceAllUsesWith(
        memref::AllocaOp::create(at, alloc.getLoc(), alloc.getType())
            .getResult());
    alloc.erase();
  }
  (*body).walk([&](memref::DeallocOp dealloc) { dealloc.erase(); });
  (*body)->removeAttr(kKernelAttrName);
  (*body)->removeAttr("genesis.outer_extent");
  (*body).setPrivate();
  constexpr int64_t kOptimizerElementsPerThread = 8;
  OuterLoopBody result{*body, extent,
                       isOptimizerUpdate(op) ? kOptimizerElementsPerThread : 1};
  if (result.perThread > 1) {
    // The flattened kernel's one loop runs over [begin, end) of its last
    // two arguments.
    Block &entry = body->getBody().front();
    Value beginArg = entry.getArgument(entry.getNumArguments() - 2);
    Value endArg = entry.getArgument(entry.getNumArguments() - 1);
    scf::ForOp elementLoop;
    body->walk([&](scf::ForOp loop) {
      if (loop.getLowerBound() == beginArg && loop.getUpperBound() == endArg)
        elementLoop = loop;
    });
    // A rank-0 update is one element: no loop to stride.
    if (!elementLoop && extent != 1)
      return op->emitError("genesis-lower-cuda: the optimizer kernel of ")
             << op->getName() << " has no element loop over [begin, end)";
    if (elementLoop) {
      OpBuilder at(elementLoop);
      elementLoop.getStepMutable().assign(arith::ConstantIndexOp::create(
          at, op->getLoc(), OuterLoopBody::kOuterLoopBlock));
    }
  }
  return result;
}

void callOuterLoopBody(OpBuilder &b, Location loc, const OuterLoopBody &body,
                       ValueRange arguments, Value block) {
  IndexMath im{b, loc};
  int64_t width = OuterLoopBody::kOuterLoopBlock;
  Value begin =
      im.add(im.mul(block, im.c(width * body.perThread)), im.threadId());
  auto branch = scf::IfOp::create(b, loc, im.lt(begin, im.c(body.extent)),
                                  /*withElse=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&branch.getThenRegion().front());
  SmallVector<Value> callArguments(arguments);
  callArguments.push_back(begin);
  // The thread's last element is begin + width (perThread - 1); a kernel
  // without the strided loop runs the single iteration begin.
  callArguments.push_back(
      arith::MinUIOp::create(
          b, loc, im.add(begin, im.c(width * (body.perThread - 1) + 1)),
          im.c(body.extent))
          .getResult());
  func::CallOp::create(b, loc, body.function, callArguments);
}

/// Runs the CPU op kernel of `op` (emitOuterLoopBody) with one outer
/// iteration (or an optimizer's kOptimizerElementsPerThread) per thread.
FailureOr<GpuKernel> emitOuterLoopKernel(Operation *op, StringRef name,
                                         OpBuilder &moduleBuilder) {
  Location loc = op->getLoc();
  FailureOr<OuterLoopBody> body =
      emitOuterLoopBody(op, (name + "_body").str(), moduleBuilder);
  if (failed(body))
    return failure();
  auto argTypes = body->function.getArgumentTypes().drop_back(2);
  unsigned numInputs = op->getNumOperands();
  if (isa<DropoutOp>(op))
    numInputs = 2;
  SmallVector<Type> inputs, outputs;
  for (auto [i, type] : llvm::enumerate(argTypes)) {
    auto memref = cast<MemRefType>(type);
    (i < numInputs ? inputs : outputs)
        .push_back(
            RankedTensorType::get(memref.getShape(), memref.getElementType()));
  }
  GpuKernel kernel = createGpuKernel(moduleBuilder, loc, name, inputs, outputs);
  setLaunch(kernel, body->blocks(), OuterLoopBody::kOuterLoopBlock);
  OpBuilder b = OpBuilder::atBlockBegin(&kernel.function.getBody().front());
  SmallVector<Value> arguments(kernel.inputs);
  arguments.append(kernel.outputs);
  callOuterLoopBody(b, loc, *body, arguments, IndexMath{b, loc}.blockId());
  gpu::ReturnOp::create(b, loc);
  return kernel;
}

} // namespace genesis::cuda
