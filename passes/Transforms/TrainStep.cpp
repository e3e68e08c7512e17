//===- TrainStep.cpp - One compiled training step -------------------------===//
//
// Implements genesis-train-step; Passes.td states the algorithm.
//
//===----------------------------------------------------------------------===//

#include "dialect/IR/GenesisOps.h"
#include "dialect/IR/Provenance.h"
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/StringSet.h"

#include "llvm/Support/Debug.h"
#include <cmath>
#include <numeric>

#define DEBUG_TYPE "genesis-train-step"

namespace genesis {
#define GEN_PASS_DEF_GENESISTRAINSTEP
#include "passes/Passes.h.inc"
} // namespace genesis

using namespace mlir;
using namespace genesis;

namespace {

StringRef attrOf(func::FuncOp function, unsigned i, StringRef key) {
  auto attr = function.getArgAttrOfType<StringAttr>(i, key);
  return attr ? attr.getValue() : StringRef();
}

Value splat(OpBuilder &builder, Location loc, Type type, double value) {
  auto tensor = cast<RankedTensorType>(type);
  Type element = tensor.getElementType();
  Attribute scalar = isa<FloatType>(element)
                         ? Attribute(builder.getFloatAttr(element, value))
                         : Attribute(builder.getIntegerAttr(
                               element, static_cast<int64_t>(value)));
  return ConstantOp::create(
      builder, loc, cast<ElementsAttr>(DenseElementsAttr::get(tensor, scalar)));
}

/// Micro-batch k of an argument with a leading accumulation dimension.
Value microBatch(OpBuilder &builder, Location loc, Value batched, int64_t k,
                 Type slice) {
  auto type = cast<RankedTensorType>(batched.getType());
  SmallVector<int64_t> start(type.getRank(), 0), limit(type.getShape()),
      stride(type.getRank(), 1);
  start[0] = k;
  limit[0] = k + 1;
  Value piece = SliceOp::create(builder, loc, batched, start, limit, stride);
  return ReshapeOp::create(builder, loc, slice, piece);
}

/// `@<loss>_scaled`: `loss`'s function with one more argument, the f32
/// scalar `amp.loss_scale`, multiplying its first result, so that its
/// gradient is the scaled loss's (the backward runs on scaled cotangents).
FailureOr<func::FuncOp> scaledLoss(func::FuncOp loss, ModuleOp module) {
  std::string name = (loss.getSymName() + "_scaled").str();
  if (module.lookupSymbol(name))
    return loss.emitError("genesis-train-step: @") << name << " already exists";
  func::FuncOp scaled = loss.clone();
  scaled.setSymName(name);
  module.insert(std::next(Block::iterator(loss)), scaled);
  OpBuilder builder(scaled.getContext());
  auto lossType = cast<RankedTensorType>(scaled.getResultTypes()[0]);
  unsigned index = scaled.getNumArguments();
  if (failed(scaled.insertArgument(
          index, lossType,
          builder.getDictionaryAttr(
              {builder.getNamedAttr("genesis.name",
                                    builder.getStringAttr("amp.loss_scale")),
               builder.getNamedAttr("genesis.role",
                                    builder.getStringAttr("input"))}),
          scaled.getLoc())))
    return failure();
  Operation *terminator = scaled.getBody().front().getTerminator();
  builder.setInsertionPoint(terminator);
  terminator->setOperand(0, MulOp::create(builder, scaled.getLoc(),
                                          terminator->getOperand(0),
                                          scaled.getArgument(index)));
  return scaled;
}

/// `value` (a scalar) broadcast to `type`'s shape.
Value broadcastScalar(OpBuilder &builder, Location loc, Value value,
                      RankedTensorType type) {
  auto scalar = cast<RankedTensorType>(value.getType());
  return BroadcastInDimOp::create(builder, loc,
                                  type.clone(scalar.getElementType()), value,
                                  ArrayRef<int64_t>{});
}

} // namespace

FailureOr<func::FuncOp>
genesis::buildTrainStep(func::FuncOp loss,
                        const GenesisTrainStepOptions &options) {
  StringRef optimizer = options.optimizer;
  if (optimizer != "sgd" && optimizer != "adam" && optimizer != "adamw")
    return loss.emitError("genesis-train-step: unknown optimizer '")
           << optimizer << "' (expected sgd, adam or adamw)";
  if (options.accumulation < 1 || options.accumulation > kMaxAccumulation)
    return loss.emitError("genesis-train-step: accumulation must be in [1, ")
           << kMaxAccumulation << "], got " << options.accumulation;
  // Every hyperparameter is checked before any op is built (PyTorch's
  // optimizers' rules): an op verifier refusing one later would leave a
  // half-built module, and NaN or a negative clip would pass silently.
  auto finiteAtLeast = [](double value, double low) {
    return std::isfinite(value) && value >= low;
  };
  auto refuse = [&](StringRef option, double value, StringRef rule) {
    return loss.emitError("genesis-train-step: ")
           << option << " must be " << rule << ", got " << value;
  };
  if (!finiteAtLeast(options.weightDecay, 0.0))
    return refuse("weight-decay", options.weightDecay, "finite and >= 0");
  if (!finiteAtLeast(options.clipGradNorm, 0.0))
    return refuse("clip-grad-norm", options.clipGradNorm,
                  "finite and >= 0 (0: no clipping)");
  if (!finiteAtLeast(options.clipGradValue, 0.0))
    return refuse("clip-grad-value", options.clipGradValue,
                  "finite and >= 0 (0: no clipping)");
  if (optimizer == "sgd") {
    if (!finiteAtLeast(options.momentum, 0.0))
      return refuse("momentum", options.momentum, "finite and >= 0");
    if (!finiteAtLeast(options.dampening, 0.0) || options.dampening > 1.0)
      return refuse("dampening", options.dampening, "in [0, 1]");
    if (options.nesterov &&
        (options.momentum == 0.0 || options.dampening != 0.0))
      return loss.emitError("genesis-train-step: nesterov needs momentum > 0 "
                            "and dampening 0, got momentum ")
             << options.momentum << " and dampening " << options.dampening;
  } else {
    if (!finiteAtLeast(options.beta1, 0.0) || options.beta1 >= 1.0)
      return refuse("beta1", options.beta1, "in [0, 1)");
    if (!finiteAtLeast(options.beta2, 0.0) || options.beta2 >= 1.0)
      return refuse("beta2", options.beta2, "in [0, 1)");
    if (!finiteAtLeast(options.epsilon, 0.0))
      return refuse("eps", options.epsilon, "finite and >= 0");
  }
  bool dynamicScale = options.lossScale == "dynamic";
  if (!dynamicScale && options.lossScale != "none")
    return loss.emitError("genesis-train-step: unknown loss-scale '")
           << options.lossScale << "' (expected none or dynamic)";
  if (dynamicScale &&
      (!(std::isfinite(options.initScale) && options.initScale > 0.0) ||
       options.growthInterval < 1))
    return loss.emitError("genesis-train-step: loss scaling needs init-scale "
                          "> 0 and growth-interval >= 1");

  auto module = loss->getParentOfType<ModuleOp>();
  if (!module)
    return loss.emitError("genesis-train-step: the loss must be in a module");
  if (module.lookupSymbol("train_step"))
    return loss.emitError("genesis-train-step: @train_step already exists");

  SmallVector<unsigned> parameters, others;
  for (unsigned i = 0; i < loss.getNumArguments(); ++i)
    (attrOf(loss, i, "genesis.role") == "parameter" ? parameters : others)
        .push_back(i);
  if (parameters.empty())
    return loss.emitError("genesis-train-step: @")
           << loss.getSymName() << " has no argument with genesis.role = "
           << "\"parameter\"";

  // The scale (2^16 by default) must be representable where it multiplies.
  if (dynamicScale) {
    SmallVector<Type> scaled = {loss.getResultTypes()[0]};
    for (unsigned i : parameters)
      scaled.push_back(loss.getArgumentTypes()[i]);
    for (Type type : scaled) {
      Type element = cast<RankedTensorType>(type).getElementType();
      if (element.isF16() || element.isBF16())
        return loss.emitError("genesis-train-step: loss scaling needs an f32 "
                              "or f64 loss and parameters (master weights), "
                              "got ")
               << type;
    }
  }

  // 1. The gradient function (of the scaled loss with loss scaling).
  func::FuncOp gradient;
  if (dynamicScale) {
    FailureOr<func::FuncOp> scaled = scaledLoss(loss, module);
    if (failed(scaled))
      return failure();
    FailureOr<func::FuncOp> built = differentiate(*scaled, parameters);
    if (failed(built))
      return failure();
    gradient = *built;
  } else {
    gradient =
        module.lookupSymbol<func::FuncOp>((loss.getSymName() + "_grad").str());
    if (!gradient) {
      FailureOr<func::FuncOp> built = differentiate(loss, parameters);
      if (failed(built))
        return failure();
      gradient = *built;
    }
  }
  unsigned numLossResults = loss.getNumResults();
  if (gradient.getNumResults() != numLossResults + parameters.size())
    return gradient.emitError("genesis-train-step: @")
           << gradient.getSymName() << " must return the results of @"
           << loss.getSymName() << " and one gradient per parameter";

  // The signature: parameters, optimizer state, batch, lr, step.
  bool momentum = optimizer == "sgd" && options.momentum != 0.0;
  SmallVector<std::string> stateSuffixes;
  if (momentum)
    stateSuffixes = {"momentum_buffer"};
  else if (optimizer != "sgd")
    stateSuffixes = {"exp_avg", "exp_avg_sq"};
  int64_t micro = options.accumulation;

  OpBuilder builder(module.getContext());
  Location loc = loss.getLoc();
  SmallVector<Type> argTypes;
  SmallVector<DictionaryAttr> argAttrs;
  auto addArg = [&](Type type, StringRef name, StringRef role) {
    argTypes.push_back(type);
    argAttrs.push_back(builder.getDictionaryAttr(
        {builder.getNamedAttr("genesis.name", builder.getStringAttr(name)),
         builder.getNamedAttr("genesis.role", builder.getStringAttr(role))}));
  };
  for (unsigned i : parameters)
    addArg(loss.getArgumentTypes()[i], attrOf(loss, i, "genesis.name"),
           "parameter");
  for (const std::string &suffix : stateSuffixes)
    for (unsigned i : parameters)
      addArg(loss.getArgumentTypes()[i],
             (attrOf(loss, i, "genesis.name") + "." + suffix).str(),
             "optimizer_state");
  auto scalarF32 = RankedTensorType::get({}, builder.getF32Type());
  const char *ampState[] = {"amp.loss_scale", "amp.growth_tracker",
                            "amp.skipped_steps"};
  if (dynamicScale)
    for (const char *name : ampState)
      addArg(scalarF32, name, "optimizer_state");
  for (unsigned i : others) {
    auto type = cast<RankedTensorType>(loss.getArgumentTypes()[i]);
    bool split = micro > 1 && attrOf(loss, i, "genesis.role") == "input";
    SmallVector<int64_t> shape;
    if (split)
      shape.push_back(micro);
    llvm::append_range(shape, type.getShape());
    addArg(type.clone(shape), attrOf(loss, i, "genesis.name"),
           attrOf(loss, i, "genesis.role"));
  }
  auto lrType = RankedTensorType::get({}, builder.getF32Type());
  auto stepType = RankedTensorType::get({}, builder.getI64Type());
  addArg(lrType, "lr", "lr");
  addArg(stepType, "step", "step");
  // The names the train step adds (lr, step, optimizer state, amp.*) must
  // not take a loss argument's name: the plan binds arguments by name.
  llvm::StringSet<> argNames;
  for (DictionaryAttr attrs : argAttrs) {
    StringRef argName = cast<StringAttr>(attrs.get("genesis.name")).getValue();
    if (!argNames.insert(argName).second)
      return loss.emitError("genesis-train-step: @")
             << loss.getSymName() << " has an argument named '" << argName
             << "', a name the train step gives one of its own arguments "
                "(lr, step, <parameter>.<optimizer state>, amp.*); rename it";
  }

  builder.setInsertionPointAfter(gradient);
  auto step = func::FuncOp::create(builder, loc, "train_step",
                                   builder.getFunctionType(argTypes, {}));
  step.setAllArgAttrs(argAttrs);
  Block *entry = step.addEntryBlock();
  builder.setInsertionPointToEnd(entry);
  unsigned numParams = parameters.size();
  unsigned stateBase = numParams;
  unsigned ampBase = stateBase + numParams * stateSuffixes.size();
  unsigned batchBase = ampBase + (dynamicScale ? 3 : 0);
  Value lr = step.getArgument(batchBase + others.size());
  Value stepCount = step.getArgument(batchBase + others.size() + 1);

  // The loss scale (0 in the state stands for the initial one), in the
  // loss's type for the scaled loss.
  Value scale, lossScale;
  if (dynamicScale) {
    Value stored = step.getArgument(ampBase);
    Value unset = CompareOp::create(builder, loc, CompareDirection::eq, stored,
                                    splat(builder, loc, scalarF32, 0.0));
    scale = SelectOp::create(builder, loc, unset,
                             splat(builder, loc, scalarF32, options.initScale),
                             stored);
    auto lossType = cast<RankedTensorType>(loss.getResultTypes()[0]);
    lossScale = lossType == scalarF32
                    ? scale
                    : CastOp::create(builder, loc, lossType, scale).getResult();
  }

  // 2. Clone the gradient body once per micro-batch.
  Value totalLoss;
  SmallVector<Value> grads(numParams);
  Block &gradBody = gradient.getBody().front();
  for (int64_t k = 0; k < micro; ++k) {
    IRMapping mapping;
    for (auto [n, i] : llvm::enumerate(parameters))
      mapping.map(gradBody.getArgument(i), step.getArgument(n));
    for (auto [n, i] : llvm::enumerate(others)) {
      Value arg = step.getArgument(batchBase + n);
      Type original = loss.getArgumentTypes()[i];
      if (arg.getType() != original)
        arg = microBatch(builder, loc, arg, k, original);
      else if (k > 0 && attrOf(loss, i, "genesis.role") == "rng_seed")
        arg = AddOp::create(
            builder, loc, arg,
            splat(builder, loc, arg.getType(), static_cast<double>(k)));
      mapping.map(gradBody.getArgument(i), arg);
    }
    if (dynamicScale)
      mapping.map(gradBody.getArgument(loss.getNumArguments()), lossScale);
    for (Operation &op : gradBody.without_terminator())
      builder.clone(op, mapping);
    auto results = gradBody.getTerminator()->getOperands();
    Value lossK = mapping.lookup(results[0]);
    totalLoss = k == 0 ? lossK : AddOp::create(builder, loc, totalLoss, lossK);
    for (unsigned p = 0; p < numParams; ++p) {
      Value g = mapping.lookup(results[numLossResults + p]);
      grads[p] = k == 0 ? g : AddOp::create(builder, loc, grads[p], g);
    }
  }
  if (micro > 1) {
    double inverse = 1.0 / static_cast<double>(micro);
    totalLoss =
        MulOp::create(builder, loc, totalLoss,
                      splat(builder, loc, totalLoss.getType(), inverse));
    for (Value &g : grads)
      g = MulOp::create(builder, loc, g,
                        splat(builder, loc, g.getType(), inverse));
  }

  // Unscaled before clipping; the step is clean when the gradients are
  // finite (NaN - NaN and inf - inf are NaN).
  Value finite;
  if (dynamicScale) {
    totalLoss = DivOp::create(builder, loc, totalLoss, lossScale);
    for (Value &g : grads) {
      auto type = cast<RankedTensorType>(g.getType());
      auto scalarType = RankedTensorType::get({}, type.getElementType());
      Value s =
          scalarType == scalarF32
              ? scale
              : CastOp::create(builder, loc, scalarType, scale).getResult();
      g = DivOp::create(builder, loc, g,
                        broadcastScalar(builder, loc, s, type));
    }
    Value norm = GlobalNormOp::create(builder, loc, grads);
    finite = CompareOp::create(builder, loc, CompareDirection::eq,
                               SubOp::create(builder, loc, norm, norm),
                               splat(builder, loc, norm.getType(), 0.0));
    // Adam counts only the steps taken.
    Value skipped = CastOp::create(builder, loc, stepCount.getType(),
                                   step.getArgument(ampBase + 2));
    stepCount = SubOp::create(builder, loc, stepCount, skipped);
  }

  // 3. Clipping. The optimizer's ops are named so, for plan listings and
  // numerics reports (Provenance.h).
  Location optimizerLoc =
      NameLoc::get(builder.getStringAttr(kOptimizerLocationName), loc);
  if (options.clipGradValue > 0.0)
    for (Value &g : grads) {
      double bound = options.clipGradValue;
      g = MinOp::create(
          builder, optimizerLoc,
          MaxOp::create(builder, optimizerLoc, g,
                        splat(builder, optimizerLoc, g.getType(), -bound)),
          splat(builder, optimizerLoc, g.getType(), bound));
    }
  if (options.clipGradNorm > 0.0) {
    Value norm = GlobalNormOp::create(builder, optimizerLoc, grads);
    Value coefficient = MinOp::create(
        builder, optimizerLoc,
        DivOp::create(
            builder, optimizerLoc,
            splat(builder, optimizerLoc, norm.getType(), options.clipGradNorm),
            AddOp::create(builder, optimizerLoc, norm,
                          splat(builder, optimizerLoc, norm.getType(), 1e-6))),
        splat(builder, optimizerLoc, norm.getType(), 1.0));
    for (Value &g : grads) {
      auto type = cast<RankedTensorType>(g.getType());
      auto scalarType = RankedTensorType::get({}, type.getElementType());
      Value scale =
          scalarType == coefficient.getType()
              ? coefficient
              : CastOp::create(builder, optimizerLoc, scalarType, coefficient);
      g = MulOp::create(builder, optimizerLoc, g,
                        BroadcastInDimOp::create(builder, optimizerLoc, type,
                                                 scale, ArrayRef<int64_t>{}));
    }
  }

  // 4. Updates.
  SmallVector<Value> newParams, newState(numParams * stateSuffixes.size());
  for (unsigned p = 0; p < numParams; ++p) {
    Value param = step.getArgument(p);
    StringRef name = attrOf(loss, parameters[p], "genesis.name");
    double decay = llvm::is_contained(options.noDecay, name.str())
                       ? 0.0
                       : static_cast<double>(options.weightDecay);
    FloatAttr decayAttr = builder.getF64FloatAttr(decay);
    if (optimizer == "sgd" && !momentum) {
      newParams.push_back(SgdUpdateOp::create(builder, optimizerLoc, param,
                                              grads[p], lr, decayAttr));
    } else if (optimizer == "sgd") {
      auto update = SgdMomentumUpdateOp::create(
          builder, optimizerLoc, param, grads[p],
          step.getArgument(stateBase + p), lr, stepCount,
          builder.getF64FloatAttr(options.momentum),
          builder.getF64FloatAttr(options.dampening), decayAttr,
          options.nesterov ? builder.getUnitAttr() : UnitAttr());
      newParams.push_back(update.getNewParam());
      newState[p] = update.getNewMomentumBuffer();
    } else {
      Value m = step.getArgument(stateBase + p),
            v = step.getArgument(stateBase + numParams + p);
      FloatAttr b1 = builder.getF64FloatAttr(options.beta1),
                b2 = builder.getF64FloatAttr(options.beta2),
                eps = builder.getF64FloatAttr(options.epsilon);
      Operation *update =
          optimizer == "adam"
              ? AdamUpdateOp::create(builder, optimizerLoc, param, grads[p], m,
                                     v, lr, stepCount, b1, b2, eps, decayAttr)
                    .getOperation()
              : AdamWUpdateOp::create(builder, optimizerLoc, param, grads[p], m,
                                      v, lr, stepCount, b1, b2, eps, decayAttr)
                    .getOperation();
      newParams.push_back(update->getResult(0));
      newState[p] = update->getResult(1);
      newState[numParams + p] = update->getResult(2);
    }
  }

  SmallVector<Value> results = {totalLoss};
  if (dynamicScale) {
    // A step that is not clean changes no parameter and no state.
    auto keepUnlessFinite = [&](Value updated, Value old) -> Value {
      auto type = cast<RankedTensorType>(old.getType());
      return SelectOp::create(builder, loc,
                              broadcastScalar(builder, loc, finite, type),
                              updated, old);
    };
    for (unsigned p = 0; p < numParams; ++p)
      newParams[p] = keepUnlessFinite(newParams[p], step.getArgument(p));
    for (auto [i, state] : llvm::enumerate(newState))
      state = keepUnlessFinite(state, step.getArgument(stateBase + i));
    auto constant = [&](double value) {
      return splat(builder, loc, scalarF32, value);
    };
    Value tracker = step.getArgument(ampBase + 1),
          skipped = step.getArgument(ampBase + 2);
    Value counted = AddOp::create(builder, loc, tracker, constant(1.0));
    Value grow = CompareOp::create(
        builder, loc, CompareDirection::ge, counted,
        constant(static_cast<double>(options.growthInterval)));
    Value cleanScale = SelectOp::create(
        builder, loc, grow, MulOp::create(builder, loc, scale, constant(2.0)),
        scale);
    Value cleanTracker =
        SelectOp::create(builder, loc, grow, constant(0.0), counted);
    newState.push_back(
        SelectOp::create(builder, loc, finite, cleanScale,
                         MulOp::create(builder, loc, scale, constant(0.5))));
    newState.push_back(
        SelectOp::create(builder, loc, finite, cleanTracker, constant(0.0)));
    newState.push_back(
        SelectOp::create(builder, loc, finite, skipped,
                         AddOp::create(builder, loc, skipped, constant(1.0))));
  }
  llvm::append_range(results, newParams);
  llvm::append_range(results, newState);
  func::ReturnOp::create(builder, loc, results);
  step.setFunctionType(
      builder.getFunctionType(argTypes, ValueRange(results).getTypes()));
  step.setResultAttr(0, "genesis.name", builder.getStringAttr("loss"));
  for (unsigned r = 1; r < results.size(); ++r)
    step.setResultAttr(
        r, "genesis.name",
        step.getArgAttrOfType<StringAttr>(r - 1, "genesis.name"));
  return step;
}

namespace {

struct GenesisTrainStepPass
    : public genesis::impl::GenesisTrainStepBase<GenesisTrainStepPass> {
  using GenesisTrainStepBase::GenesisTrainStepBase;

  void runOnOperation() override {
    auto loss = getOperation().lookupSymbol<func::FuncOp>(function);
    if (!loss) {
      getOperation().emitError("genesis-train-step: no function @") << function;
      return signalPassFailure();
    }
    LLVM_DEBUG(llvm::dbgs() << "train step of @" << function << " with "
                            << optimizer << "\n");
    GenesisTrainStepOptions options;
    options.function = function;
    options.optimizer = optimizer;
    options.momentum = momentum;
    options.dampening = dampening;
    options.nesterov = nesterov;
    options.weightDecay = weightDecay;
    options.beta1 = beta1;
    options.beta2 = beta2;
    options.epsilon = epsilon;
    options.noDecay.assign(noDecay.begin(), noDecay.end());
    options.clipGradNorm = clipGradNorm;
    options.clipGradValue = clipGradValue;
    options.accumulation = accumulation;
    options.lossScale = lossScale;
    options.initScale = initScale;
    options.growthInterval = growthInterval;
    if (failed(buildTrainStep(loss, options)))
      signalPassFailure();
  }
};

} // namespace
