//===- LowerToCpu.cpp - Fusion regions to CPU loop kernels ----------------===//
//
// Implements genesis-lower-cpu; Passes.td states the algorithm. The emitter
// is elemental, as XLA's: each output element is computed by walking the
// fusion body from the yielded value to the block arguments, so a fusion
// never materialises its intermediates.
//
//===----------------------------------------------------------------------===//

#include "dialect/IR/GenesisOps.h"
#include "passes/Conversion/CpuKernels.h"
#include "passes/Conversion/ElementEmitter.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/TypeSwitch.h"

#include "llvm/Support/Debug.h"
#include <cmath>

#define DEBUG_TYPE "genesis-lower-cpu"

namespace genesis {
#define GEN_PASS_DEF_GENESISLOWERCPU
#include "passes/Passes.h.inc"
} // namespace genesis

using namespace mlir;
using namespace genesis;

namespace {

/// Kernel of a fusion: inputs and outputs as memrefs, then the [begin, end)
/// range of the outermost loop (the runtime splits it across threads).
FailureOr<func::FuncOp> emitKernel(FusionOp fusion, StringRef name,
                                   OpBuilder &moduleBuilder) {
  Location loc = fusion.getLoc();
  auto yield = cast<YieldOp>(fusion.getBody().front().getTerminator());

  // All results share the loop shape, except a reduction root whose loop
  // covers its operand.
  Operation *root = yield.getValues()[0].getDefiningOp();
  bool isReduction = root && isa<ReduceSumOp, ReduceMaxOp, ReduceMinOp>(root);
  if (isReduction && yield.getValues().size() != 1)
    return fusion.emitError(
        "genesis-lower-cpu: a reduction fusion must have one result");
  auto resultType = cast<RankedTensorType>(fusion.getResultTypes()[0]);
  for (Type type : fusion.getResultTypes())
    if (!isReduction &&
        cast<RankedTensorType>(type).getShape() != resultType.getShape())
      return fusion.emitError("genesis-lower-cpu: the results of a loop fusion "
                              "must share one shape");

  // The extent of the outermost loop, which the runtime may split.
  int64_t outerExtent = 1;
  if (!isReduction && resultType.getRank() > 0)
    outerExtent = resultType.getDimSize(0);
  SmallVector<int64_t> keptShape, kept, reduced;
  ArrayRef<int64_t> dims;
  if (isReduction) {
    auto operandType = cast<RankedTensorType>(root->getOperand(0).getType());
    dims = llvm::TypeSwitch<Operation *, ArrayRef<int64_t>>(root)
               .Case<ReduceSumOp, ReduceMaxOp, ReduceMinOp>(
                   [](auto reduce) { return reduce.getDims(); });
    for (int64_t d = 0; d < operandType.getRank(); ++d)
      (llvm::is_contained(dims, d) ? reduced : kept).push_back(d);
    for (int64_t d : kept)
      keptShape.push_back(operandType.getDimSize(d));
    if (keptShape.empty()) // a full reduction runs once: make it a 1-loop
      keptShape.push_back(1);
    outerExtent = keptShape.front();
  }
  func::FuncOp kernel =
      cpu::createKernel(moduleBuilder, loc, name, fusion.getInputs().getTypes(),
                        fusion.getResultTypes(), outerExtent);
  Block *entry = &kernel.getBody().front();
  OpBuilder b = OpBuilder::atBlockBegin(entry);
  unsigned numInputs = fusion.getInputs().size();
  SmallVector<Value> inputs(entry->getArguments().take_front(numInputs));
  ArrayRef<BlockArgument> outputs =
      entry->getArguments().slice(numInputs, fusion.getNumResults());
  Value begin = entry->getArgument(entry->getNumArguments() - 2);
  Value end = entry->getArgument(entry->getNumArguments() - 1);
  ElementEmitter emitter(b, loc, inputs, "genesis-lower-cpu");
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value oneIndex = arith::ConstantIndexOp::create(b, loc, 1);
  auto loopNest =
      [&](ArrayRef<int64_t> shape,
          function_ref<LogicalResult(OpBuilder &, ValueRange)> body) {
        return cpu::buildLoopNest(b, loc, shape, begin, end, body);
      };

  LogicalResult status = success();
  if (!isReduction) {
    status = loopNest(
        resultType.getShape(), [&](OpBuilder &builder, ValueRange index) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(builder.getInsertionBlock(),
                              builder.getInsertionPoint());
          emitter.beginElement(index);
          for (auto [value, output] : llvm::zip(yield.getValues(), outputs)) {
            FailureOr<Value> scalar = emitter.at(value, index);
            if (failed(scalar))
              return failure();
            memref::StoreOp::create(b, loc, *scalar, output, index);
          }
          return success();
        });
  } else {
    // Loop over the kept dimensions; an inner nest over the reduced ones
    // carries the accumulator.
    auto operandType = cast<RankedTensorType>(root->getOperand(0).getType());
    bool keepdim = root->hasAttr("keepdim");
    Type element = operandType.getElementType();
    bool floating = isa<FloatType>(element);
    // The identity of the combination: what a reduction of nothing gives.
    TypedAttr init;
    if (floating)
      init = b.getFloatAttr(element, isa<ReduceSumOp>(root)   ? 0.0
                                     : isa<ReduceMaxOp>(root) ? -INFINITY
                                                              : INFINITY);
    else {
      unsigned width = element.getIntOrFloatBitWidth();
      init = b.getIntegerAttr(
          element, isa<ReduceSumOp>(root)   ? APInt::getZero(width)
                   : isa<ReduceMaxOp>(root) ? APInt::getSignedMinValue(width)
                                            : APInt::getSignedMaxValue(width));
    }
    status = loopNest(keptShape, [&](OpBuilder &builder, ValueRange keptIndex) {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(builder.getInsertionBlock(),
                          builder.getInsertionPoint());
      Value accumulator = arith::ConstantOp::create(b, loc, element, init);
      // Nested reduction loops with iter_args.
      SmallVector<Value> full(operandType.getRank());
      for (auto [i, d] : llvm::enumerate(kept))
        full[d] = keptIndex[i];
      std::function<FailureOr<Value>(OpBuilder &, size_t, Value)> reduceLevel =
          [&](OpBuilder &builder2, size_t r, Value acc) -> FailureOr<Value> {
        if (r == reduced.size()) {
          OpBuilder::InsertionGuard g2(b);
          b.setInsertionPoint(builder2.getInsertionBlock(),
                              builder2.getInsertionPoint());
          emitter.beginElement(full);
          FailureOr<Value> x = emitter.at(root->getOperand(0), full);
          if (failed(x))
            return failure();
          // Integer sums wrap, as the evaluator's do.
          if (isa<ReduceSumOp>(root))
            return floating
                       ? arith::AddFOp::create(b, loc, acc, *x).getResult()
                       : arith::AddIOp::create(b, loc, acc, *x).getResult();
          if (isa<ReduceMaxOp>(root))
            return floating
                       ? arith::MaximumFOp::create(b, loc, acc, *x).getResult()
                       : arith::MaxSIOp::create(b, loc, acc, *x).getResult();
          return floating
                     ? arith::MinimumFOp::create(b, loc, acc, *x).getResult()
                     : arith::MinSIOp::create(b, loc, acc, *x).getResult();
        }
        Value upper = arith::ConstantIndexOp::create(
            builder2, loc, operandType.getDimSize(reduced[r]));
        FailureOr<Value> inner = failure();
        auto loop = scf::ForOp::create(
            builder2, loc, zero, upper, oneIndex, ValueRange{acc},
            [&](OpBuilder &body, Location, Value iv, ValueRange carried) {
              full[reduced[r]] = iv;
              inner = reduceLevel(body, r + 1, carried[0]);
              scf::YieldOp::create(body, loc,
                                   succeeded(inner) ? *inner : carried[0]);
            });
        if (failed(inner))
          return failure();
        return loop.getResult(0);
      };
      FailureOr<Value> total = reduceLevel(b, 0, accumulator);
      if (failed(total))
        return failure();
      SmallVector<Value> outIndex;
      if (kept.empty()) {
        if (keepdim)
          outIndex.assign(operandType.getRank(), zero);
      } else if (keepdim) {
        for (int64_t d = 0; d < operandType.getRank(); ++d)
          outIndex.push_back(llvm::is_contained(dims, d) ? zero : full[d]);
      } else {
        outIndex.assign(keptIndex.begin(), keptIndex.end());
      }
      memref::StoreOp::create(b, loc, *total, outputs[0], outIndex);
      return success();
    });
  }
  func::ReturnOp::create(b, loc);
  if (failed(status)) {
    kernel.erase();
    return failure();
  }
  return kernel;
}

struct GenesisLowerCpuPass
    : public genesis::impl::GenesisLowerCpuBase<GenesisLowerCpuPass> {
  using GenesisLowerCpuBase::GenesisLowerCpuBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<std::pair<func::FuncOp, Operation *>> work;
    for (auto function : module.getOps<func::FuncOp>())
      if (!function->hasAttr(kKernelAttrName))
        for (Operation &op : function.getBody().getOps())
          if ((isa<FusionOp>(op) || cpu::hasOpKernel(&op)) &&
              !computesNothing(&op))
            work.emplace_back(function, &op);
    LLVM_DEBUG(llvm::dbgs() << work.size() << " CPU kernels\n");
    OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
    llvm::StringMap<unsigned> counters;
    for (auto [function, op] : work) {
      StringRef kind = op->hasAttr(kRematAttrName) ? StringRef("remat")
                       : isa<FusionOp>(op)         ? StringRef("fusion")
                                           : op->getName().stripDialect();
      std::string name =
          (function.getSymName() + "_" + kind +
           Twine(counters[(function.getSymName() + kind).str()]++))
              .str();
      FailureOr<func::FuncOp> kernel =
          isa<FusionOp>(op) ? emitKernel(cast<FusionOp>(op), name, builder)
                            : cpu::emitOpKernel(op, name, builder);
      if (failed(kernel))
        return signalPassFailure();
      op->setAttr(kKernelAttrName, FlatSymbolRefAttr::get(&getContext(), name));
    }
  }
};

} // namespace
