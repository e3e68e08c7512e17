//===- LowerToCpu.cpp - Fusion regions to CPU loop kernels -----------------===//
//
// Implements genesis-lower-cpu; Passes.td states the algorithm. The emitter
// is elemental, as XLA's: each output element is computed by walking the
// fusion body from the yielded value to the block arguments, so a fusion
// never materialises its intermediates.
//
//===----------------------------------------------------------------------===//

#include "dialect/IR/GenesisOps.h"
#include "passes/Conversion/CpuKernels.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

namespace genesis {
#define GEN_PASS_DEF_GENESISLOWERCPU
#include "passes/Passes.h.inc"
} // namespace genesis

using namespace mlir;
using namespace genesis;

namespace {

bool isFloat(Type type) { return isa<FloatType>(type); }

/// Emits the scalar computation of one output element of a fusion body.
class ElementEmitter {
public:
  ElementEmitter(OpBuilder &builder, Location loc, FusionOp fusion,
                 ArrayRef<Value> inputs)
      : b(builder), loc(loc), fusion(fusion), inputs(inputs) {}

  /// The scalar of `value` (a tensor of the fusion body) at `index`.
  FailureOr<Value> at(Value value, ValueRange index) {
    auto type = cast<RankedTensorType>(value.getType());
    bool memoizable = static_cast<int64_t>(index.size()) == type.getRank() &&
                      index.size() == loopIndex.size() &&
                      llvm::equal(index, loopIndex);
    if (memoizable)
      if (Value known = memo.lookup(value))
        return known;
    FailureOr<Value> scalar = compute(value, index);
    if (succeeded(scalar) && memoizable)
      memo[value] = *scalar;
    return scalar;
  }

  /// Starts a new output element: memoised scalars are per element.
  void beginElement(ValueRange index) {
    memo.clear();
    loopIndex.assign(index.begin(), index.end());
  }

private:
  Value constantFloat(Type type, double value) {
    return arith::ConstantOp::create(b, loc, type, b.getFloatAttr(type, value));
  }

  Value constantInt(Type type, int64_t value) {
    return arith::ConstantOp::create(b, loc, type, b.getIntegerAttr(type, value));
  }

  FailureOr<Value> unsupported(Operation *op) {
    return op->emitError("genesis-lower-cpu: '")
           << op->getName() << "' on " << op->getResultTypes()[0]
           << " is not supported inside a CPU fusion kernel yet";
  }

  FailureOr<Value> compute(Value value, ValueRange index) {
    if (auto argument = dyn_cast<BlockArgument>(value))
      return memref::LoadOp::create(b, loc, inputs[argument.getArgNumber()],
                                    index)
          .getResult();
    Operation *op = value.getDefiningOp();
    Type element = cast<RankedTensorType>(value.getType()).getElementType();
    if (!element.isF32() && !element.isF64() && !element.isInteger(1) &&
        !element.isInteger(32) && !element.isInteger(64))
      return unsupported(op);

    if (auto constant = dyn_cast<ConstantOp>(op)) {
      auto splat = dyn_cast<SplatElementsAttr>(constant.getValue());
      if (!splat)
        return unsupported(op);
      return arith::ConstantOp::create(b, loc, element,
                                       splat.getSplatValue<TypedAttr>())
          .getResult();
    }
    if (auto broadcast = dyn_cast<BroadcastInDimOp>(op)) {
      RankedTensorType from = broadcast.getOperand().getType();
      SmallVector<Value> mapped;
      for (auto [i, dim] : llvm::enumerate(broadcast.getBroadcastDimensions()))
        mapped.push_back(from.getDimSize(i) == 1
                             ? arith::ConstantIndexOp::create(b, loc, 0).getResult()
                             : index[dim]);
      return at(broadcast.getOperand(), mapped);
    }
    SmallVector<Value> operands;
    for (Value operand : op->getOperands()) {
      FailureOr<Value> scalar = at(operand, index);
      if (failed(scalar))
        return failure();
      operands.push_back(*scalar);
    }
    return elementwise(op, operands, element);
  }

  /// The scalar semantics of each elementwise op, as GenesisOps.td states
  /// them (NaN-propagating max/min, relu(NaN) = NaN, ...).
  FailureOr<Value> elementwise(Operation *op, ArrayRef<Value> x, Type element) {
    Type operandType = x.empty() ? element : x[0].getType();
    bool floating = isFloat(operandType);
    auto one = [&] { return constantFloat(element, 1.0); };
    auto sigmoidOf = [&](Value v) -> Value {
      Value e = math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, v));
      return arith::DivFOp::create(b, loc, one(),
                                   arith::AddFOp::create(b, loc, one(), e));
    };
    return llvm::TypeSwitch<Operation *, FailureOr<Value>>(op)
        .Case([&](NegOp) -> Value {
          return floating ? arith::NegFOp::create(b, loc, x[0]).getResult()
                          : arith::SubIOp::create(b, loc, constantInt(element, 0),
                                                  x[0])
                                .getResult();
        })
        .Case([&](AbsOp) -> Value {
          if (floating)
            return math::AbsFOp::create(b, loc, x[0]).getResult();
          // Wraps on the most negative value, as genesis.abs states.
          Value zero = constantInt(element, 0);
          Value negative = arith::CmpIOp::create(
              b, loc, arith::CmpIPredicate::slt, x[0], zero);
          return arith::SelectOp::create(
              b, loc, negative, arith::SubIOp::create(b, loc, zero, x[0]), x[0]);
        })
        .Case([&](ExpOp) { return math::ExpOp::create(b, loc, x[0]).getResult(); })
        .Case([&](LogOp) { return math::LogOp::create(b, loc, x[0]).getResult(); })
        .Case([&](SqrtOp) { return math::SqrtOp::create(b, loc, x[0]).getResult(); })
        .Case([&](RsqrtOp) -> Value {
          return arith::DivFOp::create(b, loc, one(),
                                       math::SqrtOp::create(b, loc, x[0]));
        })
        .Case([&](TanhOp) { return math::TanhOp::create(b, loc, x[0]).getResult(); })
        .Case([&](ErfOp) { return math::ErfOp::create(b, loc, x[0]).getResult(); })
        .Case([&](SinOp) { return math::SinOp::create(b, loc, x[0]).getResult(); })
        .Case([&](CosOp) { return math::CosOp::create(b, loc, x[0]).getResult(); })
        .Case([&](SigmoidOp) { return sigmoidOf(x[0]); })
        .Case([&](SiluOp) -> Value {
          return arith::MulFOp::create(b, loc, x[0], sigmoidOf(x[0]));
        })
        .Case([&](GeluOp gelu) -> Value {
          Value half = constantFloat(element, 0.5);
          Value halfX = arith::MulFOp::create(b, loc, half, x[0]);
          Value inner;
          if (gelu.getApproximate() == GeluApproximation::tanh) {
            Value cube = arith::MulFOp::create(
                b, loc, x[0], arith::MulFOp::create(b, loc, x[0], x[0]));
            Value poly = arith::AddFOp::create(
                b, loc, x[0],
                arith::MulFOp::create(b, loc, constantFloat(element, 0.044715),
                                      cube));
            inner = math::TanhOp::create(
                b, loc,
                arith::MulFOp::create(
                    b, loc, constantFloat(element, std::sqrt(2.0 / M_PI)), poly));
          } else {
            inner = math::ErfOp::create(
                b, loc,
                arith::MulFOp::create(b, loc, x[0],
                                      constantFloat(element, M_SQRT1_2)));
          }
          return arith::MulFOp::create(b, loc, halfX,
                                       arith::AddFOp::create(b, loc, one(), inner));
        })
        .Case([&](ReluOp) -> Value {
          return floating ? arith::MaximumFOp::create(b, loc, x[0],
                                                      constantFloat(element, 0.0))
                                .getResult()
                          : arith::MaxSIOp::create(b, loc, x[0],
                                                   constantInt(element, 0))
                                .getResult();
        })
        .Case([&](StopGradientOp) { return x[0]; })
        .Case([&](SignOp) -> Value {
          // -1, 0 or 1; NaN stays NaN and both zeros give +0 (genesis.sign).
          if (!floating) {
            Value zero = constantInt(element, 0);
            Value positive = arith::ExtUIOp::create(
                b, loc, element,
                arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, x[0], zero));
            Value negative = arith::ExtUIOp::create(
                b, loc, element,
                arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, x[0], zero));
            return arith::SubIOp::create(b, loc, positive, negative);
          }
          Value zero = constantFloat(element, 0.0);
          Value above = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT,
                                              x[0], zero);
          Value below = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT,
                                              x[0], zero);
          Value isNan = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO,
                                              x[0], x[0]);
          Value magnitude = arith::SelectOp::create(
              b, loc, above, one(),
              arith::SelectOp::create(b, loc, below, constantFloat(element, -1.0),
                                      zero));
          return arith::SelectOp::create(b, loc, isNan, x[0], magnitude);
        })
        .Case([&](NotOp) -> Value {
          return arith::XOrIOp::create(b, loc, x[0], constantInt(element, 1));
        })
        .Case([&](AddOp) -> Value {
          return floating ? arith::AddFOp::create(b, loc, x[0], x[1]).getResult()
                          : arith::AddIOp::create(b, loc, x[0], x[1]).getResult();
        })
        .Case([&](SubOp) -> Value {
          return floating ? arith::SubFOp::create(b, loc, x[0], x[1]).getResult()
                          : arith::SubIOp::create(b, loc, x[0], x[1]).getResult();
        })
        .Case([&](MulOp) -> Value {
          return floating ? arith::MulFOp::create(b, loc, x[0], x[1]).getResult()
                          : arith::MulIOp::create(b, loc, x[0], x[1]).getResult();
        })
        .Case([&](DivOp div) -> FailureOr<Value> {
          if (!floating) // integer division by zero must be reported, not UB
            return unsupported(div);
          return arith::DivFOp::create(b, loc, x[0], x[1]).getResult();
        })
        .Case([&](PowOp) { return math::PowFOp::create(b, loc, x[0], x[1]).getResult(); })
        .Case([&](MaxOp) -> Value {
          return floating
                     ? arith::MaximumFOp::create(b, loc, x[0], x[1]).getResult()
                     : arith::MaxSIOp::create(b, loc, x[0], x[1]).getResult();
        })
        .Case([&](MinOp) -> Value {
          return floating
                     ? arith::MinimumFOp::create(b, loc, x[0], x[1]).getResult()
                     : arith::MinSIOp::create(b, loc, x[0], x[1]).getResult();
        })
        .Case([&](AndOp) { return arith::AndIOp::create(b, loc, x[0], x[1]).getResult(); })
        .Case([&](OrOp) { return arith::OrIOp::create(b, loc, x[0], x[1]).getResult(); })
        .Case([&](CompareOp compare) -> Value {
          if (floating) {
            // IEEE: every comparison with NaN is false except ne.
            arith::CmpFPredicate predicate;
            switch (compare.getDirection()) {
            case CompareDirection::eq: predicate = arith::CmpFPredicate::OEQ; break;
            case CompareDirection::ne: predicate = arith::CmpFPredicate::UNE; break;
            case CompareDirection::lt: predicate = arith::CmpFPredicate::OLT; break;
            case CompareDirection::le: predicate = arith::CmpFPredicate::OLE; break;
            case CompareDirection::gt: predicate = arith::CmpFPredicate::OGT; break;
            case CompareDirection::ge: predicate = arith::CmpFPredicate::OGE; break;
            }
            return arith::CmpFOp::create(b, loc, predicate, x[0], x[1]);
          }
          arith::CmpIPredicate predicate;
          switch (compare.getDirection()) {
          case CompareDirection::eq: predicate = arith::CmpIPredicate::eq; break;
          case CompareDirection::ne: predicate = arith::CmpIPredicate::ne; break;
          case CompareDirection::lt: predicate = arith::CmpIPredicate::slt; break;
          case CompareDirection::le: predicate = arith::CmpIPredicate::sle; break;
          case CompareDirection::gt: predicate = arith::CmpIPredicate::sgt; break;
          case CompareDirection::ge: predicate = arith::CmpIPredicate::sge; break;
          }
          return arith::CmpIOp::create(b, loc, predicate, x[0], x[1]);
        })
        .Case([&](SelectOp) {
          return arith::SelectOp::create(b, loc, x[0], x[1], x[2]).getResult();
        })
        .Case([&](CastOp cast) { return convert(cast, x[0], element); })
        .Default([&](Operation *other) { return unsupported(other); });
  }

  /// genesis.cast: float rounding, saturating float -> int with NaN -> 0,
  /// anything -> i1 as != 0.
  FailureOr<Value> convert(CastOp cast, Value x, Type to) {
    Type from = x.getType();
    if (from == to)
      return x;
    if (to.isInteger(1))
      return isFloat(from)
                 ? arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, x,
                                         constantFloat(from, 0.0))
                       .getResult()
                 : arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, x,
                                         constantInt(from, 0))
                       .getResult();
    if (from.isInteger(1))
      return isFloat(to) ? arith::UIToFPOp::create(b, loc, to, x).getResult()
                         : arith::ExtUIOp::create(b, loc, to, x).getResult();
    if (isFloat(from) && isFloat(to))
      return from.getIntOrFloatBitWidth() < to.getIntOrFloatBitWidth()
                 ? arith::ExtFOp::create(b, loc, to, x).getResult()
                 : arith::TruncFOp::create(b, loc, to, x).getResult();
    if (!isFloat(from) && isFloat(to))
      return arith::SIToFPOp::create(b, loc, to, x).getResult();
    if (!isFloat(from) && !isFloat(to))
      return from.getIntOrFloatBitWidth() < to.getIntOrFloatBitWidth()
                 ? arith::ExtSIOp::create(b, loc, to, x).getResult()
                 : arith::TruncIOp::create(b, loc, to, x).getResult();
    // float -> int: NaN -> 0, saturate at the range, else truncate; the
    // value given to fptosi is always in range, so it is defined.
    unsigned bits = to.getIntOrFloatBitWidth();
    Value low = constantFloat(from, -std::ldexp(1.0, bits - 1));
    Value high = constantFloat(from, std::ldexp(1.0, bits - 1));
    Value tooLow = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLE, x, low);
    Value tooHigh =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGE, x, high);
    Value isNan = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, x, x);
    Value outside = arith::OrIOp::create(
        b, loc, isNan, arith::OrIOp::create(b, loc, tooLow, tooHigh));
    Value safe = arith::SelectOp::create(b, loc, outside,
                                         constantFloat(from, 0.0), x);
    Value truncated = arith::FPToSIOp::create(b, loc, to, safe);
    auto intConstant = [&](const APInt &value) -> Value {
      return arith::ConstantOp::create(b, loc, to, b.getIntegerAttr(to, value));
    };
    Value result = arith::SelectOp::create(
        b, loc, tooHigh, intConstant(APInt::getSignedMaxValue(bits)), truncated);
    result = arith::SelectOp::create(
        b, loc, tooLow, intConstant(APInt::getSignedMinValue(bits)), result);
    return arith::SelectOp::create(b, loc, isNan, constantInt(to, 0), result)
        .getResult();
  }

  OpBuilder &b;
  Location loc;
  FusionOp fusion;
  ArrayRef<Value> inputs;
  llvm::DenseMap<Value, Value> memo;
  SmallVector<Value> loopIndex;
};

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
  ElementEmitter emitter(b, loc, fusion, inputs);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value oneIndex = arith::ConstantIndexOp::create(b, loc, 1);
  auto loopNest = [&](ArrayRef<int64_t> shape,
                      function_ref<LogicalResult(OpBuilder &, ValueRange)> body) {
    return cpu::buildLoopNest(b, loc, shape, begin, end, body);
  };

  LogicalResult status = success();
  if (!isReduction) {
    status = loopNest(resultType.getShape(), [&](OpBuilder &builder,
                                                 ValueRange index) {
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
    if (!isFloat(element))
      return fusion.emitError("genesis-lower-cpu: integer reductions are not "
                              "supported in CPU kernels yet");
    double init = isa<ReduceSumOp>(root)   ? 0.0
                  : isa<ReduceMaxOp>(root) ? -INFINITY
                                           : INFINITY;
    status = loopNest(keptShape, [&](OpBuilder &builder, ValueRange keptIndex) {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(builder.getInsertionBlock(),
                          builder.getInsertionPoint());
      Value accumulator = arith::ConstantOp::create(
          b, loc, element, b.getFloatAttr(element, init));
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
          if (isa<ReduceSumOp>(root))
            return arith::AddFOp::create(b, loc, acc, *x).getResult();
          if (isa<ReduceMaxOp>(root))
            return arith::MaximumFOp::create(b, loc, acc, *x).getResult();
          return arith::MinimumFOp::create(b, loc, acc, *x).getResult();
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
      if (!function->hasAttr("genesis.kernel"))
        for (Operation &op : function.getBody().getOps())
          if (isa<FusionOp>(op) || cpu::hasOpKernel(&op))
            work.emplace_back(function, &op);
    OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
    llvm::StringMap<unsigned> counters;
    for (auto [function, op] : work) {
      StringRef kind = isa<FusionOp>(op) ? StringRef("fusion")
                                         : op->getName().stripDialect();
      std::string name = (function.getSymName() + "_" + kind +
                          Twine(counters[(function.getSymName() + kind).str()]++))
                             .str();
      FailureOr<func::FuncOp> kernel =
          isa<FusionOp>(op) ? emitKernel(cast<FusionOp>(op), name, builder)
                            : cpu::emitOpKernel(op, name, builder);
      if (failed(kernel))
        return signalPassFailure();
      op->setAttr("genesis.kernel", FlatSymbolRefAttr::get(&getContext(), name));
    }
  }
};

} // namespace
