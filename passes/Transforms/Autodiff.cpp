//===- Autodiff.cpp - Reverse-mode differentiation as a graph transform ---===//
//
// Implements genesis-autodiff; Passes.td states the algorithm.
//
//===----------------------------------------------------------------------===//

#include "dialect/IR/GenesisOps.h"
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "genesis-autodiff"

namespace genesis {
#define GEN_PASS_DEF_GENESISAUTODIFF
#include "passes/Passes.h.inc"
} // namespace genesis

using namespace mlir;
using namespace genesis;

namespace {

bool isFloatTensor(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type && isa<FloatType>(type.getElementType());
}

Value splat(OpBuilder &builder, Location loc, Type type, double value) {
  auto tensor = cast<RankedTensorType>(type);
  Attribute scalar = builder.getFloatAttr(tensor.getElementType(), value);
  return ConstantOp::create(
      builder, loc, cast<ElementsAttr>(DenseElementsAttr::get(tensor, scalar)));
}

std::string argumentName(func::FuncOp function, unsigned i) {
  if (auto name = function.getArgAttrOfType<StringAttr>(i, "genesis.name"))
    return name.str();
  return "arg" + std::to_string(i);
}

} // namespace

FailureOr<func::FuncOp> genesis::differentiate(func::FuncOp forward,
                                               ArrayRef<unsigned> wrt) {
  if (forward.isExternal() || forward.getNumResults() == 0)
    return forward.emitError("genesis-autodiff: @")
           << forward.getSymName()
           << " has no body or no result to differentiate";
  auto lossType = dyn_cast<RankedTensorType>(forward.getResultTypes()[0]);
  if (!lossType || lossType.getRank() != 0 ||
      !isa<FloatType>(lossType.getElementType()))
    return forward.emitError("genesis-autodiff: the first result of @")
           << forward.getSymName() << " must be a scalar float loss, got "
           << forward.getResultTypes()[0];
  for (unsigned i : wrt)
    if (i >= forward.getNumArguments() ||
        !isFloatTensor(forward.getArgument(i)))
      return forward.emitError("genesis-autodiff: argument ")
             << i << " of @" << forward.getSymName()
             << " is not a floating-point tensor and has no gradient";
  if (!llvm::hasSingleElement(forward.getBody()))
    return forward.emitError("genesis-autodiff: @")
           << forward.getSymName() << " must have a single block";

  // 1. Clone; find the active ops.
  func::FuncOp gradient = forward.clone();
  gradient.setSymName((forward.getSymName() + "_grad").str());
  SymbolTable::setSymbolVisibility(gradient,
                                   SymbolTable::getSymbolVisibility(forward));
  auto module = forward->getParentOfType<ModuleOp>();
  if (module && SymbolTable::lookupSymbolIn(module, gradient.getSymName())) {
    gradient.erase();
    return forward.emitError("genesis-autodiff: @")
           << forward.getSymName() << "_grad already exists";
  }
  forward->getBlock()->getOperations().insertAfter(Block::iterator(forward),
                                                   gradient);

  Block &body = gradient.getBody().front();
  auto returnOp = cast<func::ReturnOp>(body.getTerminator());

  SmallVector<Operation *> forwardOps;
  llvm::DenseSet<Value> varied, useful;
  auto findVaried = [&] {
    forwardOps.clear();
    varied.clear();
    for (Operation &op : body.without_terminator())
      forwardOps.push_back(&op);
    for (unsigned i : wrt)
      varied.insert(gradient.getArgument(i));
    for (Operation *op : forwardOps)
      if (llvm::any_of(op->getOperands(),
                       [&](Value v) { return varied.contains(v); }))
        for (Value result : op->getResults())
          if (isFloatTensor(result))
            varied.insert(result);
  };
  findVaried();
  // An attention whose additive mask is varied is differentiated through
  // its decomposition (attention_grad treats the mask as a constant).
  SmallVector<AttentionOp> maskVaried;
  for (Operation *op : forwardOps)
    if (auto attention = dyn_cast<AttentionOp>(op))
      if (attention.getMask() && varied.contains(attention.getMask()))
        maskVaried.push_back(attention);
  for (AttentionOp attention : maskVaried)
    decomposeAttention(attention);
  if (!maskVaried.empty())
    findVaried();
  Value loss = returnOp.getOperand(0);
  useful.insert(loss);
  for (Operation *op : llvm::reverse(forwardOps))
    if (llvm::any_of(op->getResults(),
                     [&](Value v) { return useful.contains(v); }))
      for (Value operand : op->getOperands())
        useful.insert(operand);

  // 2. Reverse sweep.
  OpBuilder builder(returnOp);
  llvm::DenseMap<Value, Value> cotangents;
  auto accumulate = [&](Value value, Value cotangent) {
    auto [it, inserted] = cotangents.try_emplace(value, cotangent);
    if (!inserted)
      it->second =
          AddOp::create(builder, cotangent.getLoc(), it->second, cotangent);
  };
  if (varied.contains(loss))
    accumulate(loss, splat(builder, returnOp.getLoc(), lossType, 1.0));

  for (Operation *op : llvm::reverse(forwardOps)) {
    bool active = llvm::any_of(op->getResults(), [&](Value v) {
      return varied.contains(v) && useful.contains(v);
    });
    if (!active || op->hasTrait<OpTrait::NonDifferentiable>())
      continue;
    SmallVector<Value> resultGrads;
    for (Value result : op->getResults())
      resultGrads.push_back(cotangents.lookup(result));
    if (llvm::all_of(resultGrads, [](Value v) { return !v; }))
      continue;
    auto differentiable = dyn_cast<DifferentiableOpInterface>(op);
    if (!differentiable) {
      InFlightDiagnostic diagnostic =
          op->emitError("genesis-autodiff: '")
          << op->getName()
          << "' is not differentiable (differentiate before fusion and "
             "library-call formation)";
      gradient.erase();
      return diagnostic;
    }
    // A result without a cotangent contributes zero; VJPs of multi-result
    // ops expect a value for each result.
    for (auto [result, grad] : llvm::zip(op->getResults(), resultGrads))
      if (!grad && isFloatTensor(result))
        grad = splat(builder, op->getLoc(), result.getType(), 0.0);
    SmallVector<Value> operandGrads(op->getNumOperands());
    differentiable.buildVjp(builder, resultGrads, operandGrads);
    for (auto [operand, grad] : llvm::zip(op->getOperands(), operandGrads))
      if (grad && varied.contains(operand))
        accumulate(operand, grad);
  }

  // 3. Return the gradients; drop backward work nobody uses.
  SmallVector<Value> results(returnOp.getOperands());
  unsigned firstGrad = results.size();
  for (unsigned i : wrt) {
    Value arg = gradient.getArgument(i);
    Value grad = cotangents.lookup(arg);
    results.push_back(
        grad ? grad : splat(builder, returnOp.getLoc(), arg.getType(), 0.0));
  }
  for (auto [n, i] : llvm::enumerate(wrt)) {
    DictionaryAttr attrs = builder.getDictionaryAttr(builder.getNamedAttr(
        "genesis.name",
        builder.getStringAttr("grad:" + argumentName(gradient, i))));
    if (failed(gradient.insertResult(firstGrad + n,
                                     results[firstGrad + n].getType(), attrs)))
      return gradient.emitError("genesis-autodiff: cannot add a result");
  }
  returnOp->setOperands(results);
  SmallVector<Operation *> all;
  for (Operation &op : body.without_terminator())
    all.push_back(&op);
  for (Operation *op : llvm::reverse(all))
    if (isOpTriviallyDead(op))
      op->erase();
  return gradient;
}

namespace {

struct GenesisAutodiffPass
    : public genesis::impl::GenesisAutodiffBase<GenesisAutodiffPass> {
  using GenesisAutodiffBase::GenesisAutodiffBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto forward = module.lookupSymbol<func::FuncOp>(function);
    if (!forward) {
      module.emitError("genesis-autodiff: no function @") << function;
      return signalPassFailure();
    }
    SmallVector<unsigned> chosen;
    LLVM_DEBUG(llvm::dbgs() << "differentiating @" << function << "\n");
    for (unsigned i = 0; i < forward.getNumArguments(); ++i) {
      std::string name = argumentName(forward, i);
      auto role = forward.getArgAttrOfType<StringAttr>(i, "genesis.role");
      bool wanted = wrt.empty() ? role && role.getValue() == "parameter"
                                : llvm::is_contained(wrt, name);
      if (wanted)
        chosen.push_back(i);
    }
    for (const std::string &name : wrt)
      if (llvm::none_of(chosen, [&](unsigned i) {
            return argumentName(forward, i) == name;
          })) {
        forward.emitError("genesis-autodiff: @")
            << function << " has no argument named '" << name << "'";
        return signalPassFailure();
      }
    if (failed(differentiate(forward, chosen)))
      signalPassFailure();
  }
};

} // namespace
