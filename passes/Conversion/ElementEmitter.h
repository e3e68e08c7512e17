//===- ElementEmitter.h - Scalar code of a fusion body ----------*- C++ -*-===//
//
// The elemental emitter shared by genesis-lower-cpu and genesis-lower-cuda
// (as XLA's): the scalar of one element of a fusion-body value is computed
// by walking the body from that value to the block arguments, so a fusion
// never materialises its intermediates.
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_PASSES_CONVERSION_ELEMENTEMITTER_H
#define GENESIS_PASSES_CONVERSION_ELEMENTEMITTER_H

#include "dialect/IR/GenesisOps.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <functional>
#include <string>

namespace genesis {

namespace element_emitter_detail {
// The MLIR names the emitter uses, declared one by one (no using-directive
// in a header).
namespace arith = mlir::arith;
namespace math = mlir::math;
namespace memref = mlir::memref;
using mlir::APInt;
using mlir::ArrayRef;
using mlir::BlockArgument;
using mlir::cast;
using mlir::dyn_cast;
using mlir::failed;
using mlir::failure;
using mlir::FailureOr;
using mlir::FloatType;
using mlir::isa;
using mlir::Location;
using mlir::OpBuilder;
using mlir::Operation;
using mlir::RankedTensorType;
using mlir::SmallVector;
using mlir::SplatElementsAttr;
using mlir::StringRef;
using mlir::succeeded;
using mlir::Type;
using mlir::TypedAttr;
using mlir::Value;
using mlir::ValueRange;
inline bool isFloat(mlir::Type type) {
  return mlir::isa<mlir::FloatType>(type);
}

/// Emits the scalar computation of one output element of a fusion body.
class ElementEmitter {
public:
  /// `inputs` are the memrefs of the fusion's block arguments; `pass` names
  /// the pass in error messages.
  ElementEmitter(OpBuilder &builder, Location loc, ArrayRef<Value> inputs,
                 StringRef pass)
      : b(builder), loc(loc), inputs(inputs), pass(pass) {}

  /// Replaces the load of a block argument's element (the GPU loop emitter
  /// feeds lanes of a vector load). `contiguous`: the element walk reached
  /// the argument through index maps that keep the lanes of `laneWidth`
  /// consecutive elements of the last dimension consecutive and aligned to
  /// the width in the argument's last dimension (see `contiguous`).
  std::function<FailureOr<Value>(BlockArgument, ValueRange, bool contiguous)>
      argumentLoader;

  /// Lanes of this many consecutive elements along the last dimension, the
  /// first at a multiple of it, whose walks the loop emitter vectorises; 1:
  /// no lanes.
  int64_t laneWidth = 1;

  /// Scalars given for body values instead of computing them (the GPU row
  /// epilogue emitter gives a row's reduced value), at every index.
  llvm::DenseMap<Value, Value> given;

  /// The scalars memoised for the current element, to resume it later
  /// (the values must dominate where it resumes).
  llvm::DenseMap<Value, Value> saveElement() const { return memo; }
  void resumeElement(llvm::DenseMap<Value, Value> saved, ValueRange index) {
    memo = std::move(saved);
    loopIndex.assign(index.begin(), index.end());
  }

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
    contiguous = laneWidth > 1;
  }

private:
  Value constantFloat(Type type, double value) {
    return arith::ConstantOp::create(b, loc, type, b.getFloatAttr(type, value));
  }

  Value constantInt(Type type, int64_t value) {
    return arith::ConstantOp::create(b, loc, type,
                                     b.getIntegerAttr(type, value));
  }

  /// lhs / rhs truncated toward zero, defined everywhere (arith.divsi is
  /// undefined for a zero divisor and for INT_MIN / -1): x / -1 wraps as
  /// 0 - x does, as in the evaluator; x / 0 is 0 (the evaluator reports an
  /// error, a kernel cannot; docs/limits.md).
  Value integerDivision(Value lhs, Value rhs, Type element) {
    Value zero = constantInt(element, 0), one = constantInt(element, 1),
          minusOne = constantInt(element, -1);
    auto equals = [&](Value a, Value c) {
      return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, a, c)
          .getResult();
    };
    Value byZero = equals(rhs, zero), byMinusOne = equals(rhs, minusOne);
    Value safe = arith::SelectOp::create(
        b, loc, arith::OrIOp::create(b, loc, byZero, byMinusOne), one, rhs);
    Value quotient = arith::DivSIOp::create(b, loc, lhs, safe);
    quotient = arith::SelectOp::create(
        b, loc, byMinusOne, arith::SubIOp::create(b, loc, zero, lhs), quotient);
    return arith::SelectOp::create(b, loc, byZero, zero, quotient);
  }

  /// f64 -> f32 rounded to odd (toward zero, then the last bit set when
  /// inexact): rounding that to a 16-bit type to nearest even rounds the
  /// f64 once, as the evaluator does (a plain f32 step would round twice;
  /// and LLVM's direct f64 -> bf16 truncation calls __truncdfbf2, which the
  /// host's libgcc lacks).
  Value roundToOddF32(Value x) {
    Type f32 = b.getF32Type(), f64 = b.getF64Type(), i32 = b.getI32Type();
    // Toward zero: the nearest f32, one step down in magnitude where it
    // rounded away from zero (an overflow to infinity becomes the largest
    // finite value).
    Value nearest = arith::TruncFOp::create(b, loc, f32, x);
    Value away = arith::CmpFOp::create(
        b, loc, arith::CmpFPredicate::OGT,
        math::AbsFOp::create(b, loc,
                             arith::ExtFOp::create(b, loc, f64, nearest)),
        math::AbsFOp::create(b, loc, x));
    Value bits = arith::BitcastOp::create(b, loc, i32, nearest);
    bits = arith::SelectOp::create(
        b, loc, away, arith::SubIOp::create(b, loc, bits, constantInt(i32, 1)),
        bits);
    Value truncated = arith::BitcastOp::create(b, loc, f32, bits);
    Value inexact =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE,
                              arith::ExtFOp::create(b, loc, f64, truncated), x);
    Value odd = arith::OrIOp::create(b, loc, bits, constantInt(i32, 1));
    return arith::BitcastOp::create(
        b, loc, f32, arith::SelectOp::create(b, loc, inexact, odd, bits));
  }

  FailureOr<Value> unsupported(Operation *op) {
    return op->emitError(pass)
           << ": '" << op->getName() << "' on " << op->getResultTypes()[0]
           << " is not supported inside a fusion kernel yet";
  }

  FailureOr<Value> compute(Value value, ValueRange index) {
    if (Value scalar = given.lookup(value))
      return scalar;
    if (auto argument = dyn_cast<BlockArgument>(value)) {
      if (argumentLoader)
        return argumentLoader(argument, index, contiguous);
      return memref::LoadOp::create(b, loc, inputs[argument.getArgNumber()],
                                    index)
          .getResult();
    }
    Operation *op = value.getDefiningOp();
    Type element = cast<RankedTensorType>(value.getType()).getElementType();
    // 16-bit floats are storage types: only casts (genesis-amp) and the
    // ops that move values exactly (selects, splats, broadcasts) produce
    // them; arithmetic is f32.
    bool storage = (element.isBF16() || element.isF16()) &&
                   (isa<CastOp, SelectOp, ConstantOp, BroadcastInDimOp>(op) ||
                    isDataMovement(op));
    if (!element.isF32() && !element.isF64() && !element.isInteger(1) &&
        !element.isInteger(32) && !element.isInteger(64) && !storage)
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
      ArrayRef<int64_t> dims = broadcast.getBroadcastDimensions();
      SmallVector<Value> mapped;
      for (auto [i, dim] : llvm::enumerate(dims))
        mapped.push_back(
            from.getDimSize(i) == 1
                ? arith::ConstantIndexOp::create(b, loc, 0).getResult()
                : index[dim]);
      // The lanes stay consecutive when the operand's last dimension is the
      // result's, not broadcast (a bias along the rows).
      int64_t rank = cast<RankedTensorType>(value.getType()).getRank();
      bool lanesKept = !dims.empty() && dims.back() == rank - 1 &&
                       from.getShape().back() != 1;
      return atKeepingLanes(broadcast.getOperand(), mapped, lanesKept);
    }
    if (isDataMovement(op))
      return move(op, index);
    if (auto rope = dyn_cast<RopeOp>(op))
      return rotate(rope, index);
    if (isa<ReduceSumOp, ReduceMaxOp, ReduceMinOp>(op)) {
      bool saved = contiguous;
      contiguous = false;
      FailureOr<Value> scalar = reductionOfOne(op, index);
      contiguous = saved;
      return scalar;
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

  /// genesis.rope at `index` ([..., s, d]): x cos + rotate_half(x) sin, with
  /// x's partner half a row away (negated in the row's first half) and the
  /// [S, D] tables broadcast over the leading dimensions. The partner keeps
  /// the lanes consecutive when half a row is a multiple of the lane width.
  FailureOr<Value> rotate(RopeOp rope, ValueRange index) {
    int64_t half = rope.getType().getShape().back() / 2;
    Value d = index.back();
    Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, d,
                                        indexConstant(half));
    SmallVector<Value> partner(index.begin(), index.end());
    partner.back() = arith::SelectOp::create(
        b, loc, first, arith::AddIOp::create(b, loc, d, indexConstant(half)),
        arith::SubIOp::create(b, loc, d, indexConstant(half)));
    SmallVector<Value> table(index.take_back(2));
    FailureOr<Value> x = at(rope.getOperand(), index);
    FailureOr<Value> other =
        atKeepingLanes(rope.getOperand(), partner, half % laneWidth == 0);
    FailureOr<Value> cos = at(rope.getCos(), table);
    FailureOr<Value> sin = at(rope.getSin(), table);
    if (failed(x) || failed(other) || failed(cos) || failed(sin))
      return failure();
    Value rotated = arith::SelectOp::create(
        b, loc, first, arith::NegFOp::create(b, loc, *other), *other);
    return arith::AddFOp::create(b, loc,
                                 arith::MulFOp::create(b, loc, *x, *cos),
                                 arith::MulFOp::create(b, loc, rotated, *sin))
        .getResult();
  }

  /// A reduction inside a fusion body whose reduced dimensions all have
  /// size 1 (autodiff reduces a broadcast's cotangent so): the one element,
  /// plus +0.0 for a float sum (a sum starts from +0.0, so -0.0 becomes
  /// +0.0 as in the evaluator). Other reductions are fusion roots.
  FailureOr<Value> reductionOfOne(Operation *op, ValueRange index) {
    auto from = cast<RankedTensorType>(op->getOperand(0).getType());
    auto dims = op->getAttrOfType<mlir::DenseI64ArrayAttr>("dims").asArrayRef();
    bool keepdim = op->hasAttr("keepdim");
    SmallVector<Value> mapped;
    size_t next = 0;
    for (int64_t d = 0; d < from.getRank(); ++d) {
      if (!llvm::is_contained(dims, d)) {
        mapped.push_back(index[next++]);
        continue;
      }
      if (from.getDimSize(d) != 1)
        return unsupported(op);
      mapped.push_back(arith::ConstantIndexOp::create(b, loc, 0));
      if (keepdim)
        ++next;
    }
    FailureOr<Value> element = at(op->getOperand(0), mapped);
    if (failed(element) || !isa<ReduceSumOp>(op) ||
        !isFloat(element->getType()))
      return element;
    return arith::AddFOp::create(b, loc, *element,
                                 constantFloat(element->getType(), 0.0))
        .getResult();
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
                          : arith::SubIOp::create(b, loc,
                                                  constantInt(element, 0), x[0])
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
              b, loc, negative, arith::SubIOp::create(b, loc, zero, x[0]),
              x[0]);
        })
        .Case([&](ExpOp) {
          return math::ExpOp::create(b, loc, x[0]).getResult();
        })
        .Case([&](LogOp) {
          return math::LogOp::create(b, loc, x[0]).getResult();
        })
        .Case([&](SqrtOp) {
          return math::SqrtOp::create(b, loc, x[0]).getResult();
        })
        .Case([&](RsqrtOp) -> Value {
          return arith::DivFOp::create(b, loc, one(),
                                       math::SqrtOp::create(b, loc, x[0]));
        })
        .Case([&](TanhOp) {
          return math::TanhOp::create(b, loc, x[0]).getResult();
        })
        .Case([&](ErfOp) {
          return math::ErfOp::create(b, loc, x[0]).getResult();
        })
        .Case([&](SinOp) {
          return math::SinOp::create(b, loc, x[0]).getResult();
        })
        .Case([&](CosOp) {
          return math::CosOp::create(b, loc, x[0]).getResult();
        })
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
                    b, loc, constantFloat(element, std::sqrt(2.0 / M_PI)),
                    poly));
          } else {
            inner = math::ErfOp::create(
                b, loc,
                arith::MulFOp::create(b, loc, x[0],
                                      constantFloat(element, M_SQRT1_2)));
          }
          return arith::MulFOp::create(
              b, loc, halfX, arith::AddFOp::create(b, loc, one(), inner));
        })
        .Case([&](ReluOp) -> Value {
          return floating ? arith::MaximumFOp::create(
                                b, loc, x[0], constantFloat(element, 0.0))
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
                arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, x[0],
                                      zero));
            Value negative = arith::ExtUIOp::create(
                b, loc, element,
                arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, x[0],
                                      zero));
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
              arith::SelectOp::create(b, loc, below,
                                      constantFloat(element, -1.0), zero));
          return arith::SelectOp::create(b, loc, isNan, x[0], magnitude);
        })
        .Case([&](NotOp) -> Value {
          return arith::XOrIOp::create(b, loc, x[0], constantInt(element, 1));
        })
        .Case([&](AddOp) -> Value {
          return floating
                     ? arith::AddFOp::create(b, loc, x[0], x[1]).getResult()
                     : arith::AddIOp::create(b, loc, x[0], x[1]).getResult();
        })
        .Case([&](SubOp) -> Value {
          return floating
                     ? arith::SubFOp::create(b, loc, x[0], x[1]).getResult()
                     : arith::SubIOp::create(b, loc, x[0], x[1]).getResult();
        })
        .Case([&](MulOp) -> Value {
          return floating
                     ? arith::MulFOp::create(b, loc, x[0], x[1]).getResult()
                     : arith::MulIOp::create(b, loc, x[0], x[1]).getResult();
        })
        .Case([&](DivOp) -> Value {
          if (floating)
            return arith::DivFOp::create(b, loc, x[0], x[1]).getResult();
          return integerDivision(x[0], x[1], element);
        })
        .Case([&](PowOp) {
          return math::PowFOp::create(b, loc, x[0], x[1]).getResult();
        })
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
        .Case([&](AndOp) {
          return arith::AndIOp::create(b, loc, x[0], x[1]).getResult();
        })
        .Case([&](OrOp) {
          return arith::OrIOp::create(b, loc, x[0], x[1]).getResult();
        })
        .Case([&](CompareOp compare) -> Value {
          if (floating) {
            // IEEE: every comparison with NaN is false except ne.
            arith::CmpFPredicate predicate = arith::CmpFPredicate::OEQ;
            switch (compare.getDirection()) {
            case CompareDirection::eq:
              predicate = arith::CmpFPredicate::OEQ;
              break;
            case CompareDirection::ne:
              predicate = arith::CmpFPredicate::UNE;
              break;
            case CompareDirection::lt:
              predicate = arith::CmpFPredicate::OLT;
              break;
            case CompareDirection::le:
              predicate = arith::CmpFPredicate::OLE;
              break;
            case CompareDirection::gt:
              predicate = arith::CmpFPredicate::OGT;
              break;
            case CompareDirection::ge:
              predicate = arith::CmpFPredicate::OGE;
              break;
            }
            return arith::CmpFOp::create(b, loc, predicate, x[0], x[1]);
          }
          // i1 orders false < true (0 < 1), as the evaluator: unsigned
          // (signed, true would be -1).
          bool isUnsigned = x[0].getType().isInteger(1);
          arith::CmpIPredicate predicate = arith::CmpIPredicate::eq;
          switch (compare.getDirection()) {
          case CompareDirection::eq:
            predicate = arith::CmpIPredicate::eq;
            break;
          case CompareDirection::ne:
            predicate = arith::CmpIPredicate::ne;
            break;
          case CompareDirection::lt:
            predicate = isUnsigned ? arith::CmpIPredicate::ult
                                   : arith::CmpIPredicate::slt;
            break;
          case CompareDirection::le:
            predicate = isUnsigned ? arith::CmpIPredicate::ule
                                   : arith::CmpIPredicate::sle;
            break;
          case CompareDirection::gt:
            predicate = isUnsigned ? arith::CmpIPredicate::ugt
                                   : arith::CmpIPredicate::sgt;
            break;
          case CompareDirection::ge:
            predicate = isUnsigned ? arith::CmpIPredicate::uge
                                   : arith::CmpIPredicate::sge;
            break;
          }
          return arith::CmpIOp::create(b, loc, predicate, x[0], x[1]);
        })
        .Case([&](SelectOp) {
          return arith::SelectOp::create(b, loc, x[0], x[1], x[2]).getResult();
        })
        .Case([&](CastOp cast) { return convert(cast, x[0], element); })
        .Default([&](Operation *other) { return unsupported(other); });
  }

  Value indexConstant(int64_t value) {
    return arith::ConstantIndexOp::create(b, loc, value);
  }

  /// `at(value, index)` through an index map that keeps the lanes
  /// consecutive and aligned (`lanesKept`) or not.
  FailureOr<Value> atKeepingLanes(Value value, ValueRange index,
                                  bool lanesKept) {
    bool saved = contiguous;
    contiguous = contiguous && lanesKept;
    FailureOr<Value> scalar = at(value, index);
    contiguous = saved;
    return scalar;
  }

  /// Whether `i` lies in [begin, end).
  Value inRange(Value i, int64_t begin, int64_t end) {
    Value low = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, i,
                                      indexConstant(begin));
    Value high = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, i,
                                       indexConstant(end));
    return arith::AndIOp::create(b, loc, low, high);
  }

  /// The element of a transpose, slice, reshape, pad or concat at `index`:
  /// the operand's element at the mapped index. Pad and concat read every
  /// operand at an index clamped into it and select (no branch, no load out
  /// of bounds; a lane outside an operand reads its first element).
  FailureOr<Value> move(Operation *op, ValueRange index) {
    auto shapeOf = [](Value v) {
      return cast<RankedTensorType>(v.getType()).getShape();
    };
    if (auto transpose = dyn_cast<TransposeOp>(op)) {
      ArrayRef<int64_t> permutation = transpose.getPermutation();
      SmallVector<Value> mapped(index.size());
      for (auto [i, dim] : llvm::enumerate(permutation))
        mapped[dim] = index[i];
      bool lanesKept =
          !permutation.empty() &&
          permutation.back() == static_cast<int64_t>(permutation.size()) - 1;
      return atKeepingLanes(transpose.getOperand(), mapped, lanesKept);
    }
    if (auto slice = dyn_cast<SliceOp>(op)) {
      SmallVector<Value> mapped;
      for (auto [i, start, stride] :
           llvm::zip(index, slice.getStart(), slice.getStride())) {
        Value v = i;
        if (stride != 1)
          v = arith::MulIOp::create(b, loc, v, indexConstant(stride));
        if (start != 0)
          v = arith::AddIOp::create(b, loc, v, indexConstant(start));
        mapped.push_back(v);
      }
      bool lanesKept = !index.empty() && slice.getStride().back() == 1 &&
                       slice.getStart().back() % laneWidth == 0;
      return atKeepingLanes(slice.getOperand(), mapped, lanesKept);
    }
    if (auto reshape = dyn_cast<ReshapeOp>(op)) {
      ArrayRef<int64_t> to = shapeOf(reshape.getResult());
      ArrayRef<int64_t> from = shapeOf(reshape.getOperand());
      Value linear = indexConstant(0);
      for (auto [i, extent] : llvm::zip(index, to))
        linear = arith::AddIOp::create(
            b, loc,
            arith::MulIOp::create(b, loc, linear, indexConstant(extent)), i);
      SmallVector<Value> mapped(from.size());
      for (int64_t d = static_cast<int64_t>(from.size()) - 1; d >= 0; --d) {
        Value extent = indexConstant(from[d]);
        mapped[d] =
            d == 0 ? linear
                   : arith::RemUIOp::create(b, loc, linear, extent).getResult();
        if (d > 0)
          linear = arith::DivUIOp::create(b, loc, linear, extent);
      }
      bool lanesKept = !from.empty() && !to.empty() &&
                       from.back() % laneWidth == 0 &&
                       to.back() % laneWidth == 0;
      return atKeepingLanes(reshape.getOperand(), mapped, lanesKept);
    }
    Type element =
        cast<RankedTensorType>(op->getResult(0).getType()).getElementType();
    Value zero = isFloat(element) ? constantFloat(element, 0.0)
                                  : constantInt(element, 0);
    if (auto pad = dyn_cast<PadOp>(op)) {
      ArrayRef<int64_t> operandShape = shapeOf(pad.getOperand());
      if (llvm::is_contained(operandShape, 0))
        return zero; // nothing to read
      Value inside;
      SmallVector<Value> mapped;
      for (auto [d, i] : llvm::enumerate(index)) {
        int64_t low = pad.getLow()[d], step = pad.getInterior()[d] + 1;
        int64_t n = operandShape[d];
        Value shifted =
            low == 0 ? Value(i)
                     : arith::SubIOp::create(b, loc, i, indexConstant(low))
                           .getResult();
        Value ok = inRange(i, low, low + (n - 1) * step + 1);
        Value source = shifted;
        if (step != 1) {
          Value c = indexConstant(step);
          Value onGrid = arith::CmpIOp::create(
              b, loc, arith::CmpIPredicate::eq,
              arith::RemSIOp::create(b, loc, shifted, c), indexConstant(0));
          ok = arith::AndIOp::create(b, loc, ok, onGrid);
          source = arith::DivSIOp::create(b, loc, shifted, c);
        }
        inside =
            inside ? arith::AndIOp::create(b, loc, inside, ok).getResult() : ok;
        mapped.push_back(source);
      }
      for (Value &m : mapped)
        m = arith::SelectOp::create(b, loc, inside, m, indexConstant(0));
      // Aligned edges along the last dimension: the lanes are all inside or
      // all outside, and read consecutive elements.
      int64_t last = static_cast<int64_t>(operandShape.size()) - 1;
      bool lanesKept = last >= 0 && pad.getInterior()[last] == 0 &&
                       pad.getLow()[last] % laneWidth == 0 &&
                       operandShape[last] % laneWidth == 0;
      FailureOr<Value> value =
          atKeepingLanes(pad.getOperand(), mapped, lanesKept);
      if (failed(value))
        return failure();
      return arith::SelectOp::create(b, loc, inside, *value, zero).getResult();
    }
    auto concat = cast<ConcatOp>(op);
    int64_t dim = concat.getDim();
    Value result;
    int64_t offset = 0;
    for (Value input : concat.getInputs()) {
      int64_t n = shapeOf(input)[dim];
      if (n == 0)
        continue; // no element, nothing to read
      Value ok = inRange(index[dim], offset, offset + n);
      SmallVector<Value> mapped(index.begin(), index.end());
      Value shifted = offset == 0 ? Value(index[dim])
                                  : arith::SubIOp::create(b, loc, index[dim],
                                                          indexConstant(offset))
                                        .getResult();
      mapped[dim] =
          arith::SelectOp::create(b, loc, ok, shifted, indexConstant(0));
      bool lastDim = dim == static_cast<int64_t>(index.size()) - 1;
      bool lanesKept =
          !lastDim || (offset % laneWidth == 0 && n % laneWidth == 0);
      FailureOr<Value> value = atKeepingLanes(input, mapped, lanesKept);
      if (failed(value))
        return failure();
      result =
          result
              ? arith::SelectOp::create(b, loc, ok, *value, result).getResult()
              : *value;
      offset += n;
    }
    return result ? result : zero;
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
    if (isFloat(from) && isFloat(to) &&
        from.getIntOrFloatBitWidth() == to.getIntOrFloatBitWidth()) {
      // f16 <-> bf16: through f32, which holds either exactly (one rounding).
      Value wide = arith::ExtFOp::create(b, loc, b.getF32Type(), x);
      return arith::TruncFOp::create(b, loc, to, wide).getResult();
    }
    if (from.isF64() && to.getIntOrFloatBitWidth() == 16)
      return arith::TruncFOp::create(b, loc, to, roundToOddF32(x)).getResult();
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
    Value tooLow =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLE, x, low);
    Value tooHigh =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGE, x, high);
    Value isNan =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, x, x);
    Value outside = arith::OrIOp::create(
        b, loc, isNan, arith::OrIOp::create(b, loc, tooLow, tooHigh));
    Value safe =
        arith::SelectOp::create(b, loc, outside, constantFloat(from, 0.0), x);
    Value truncated = arith::FPToSIOp::create(b, loc, to, safe);
    auto intConstant = [&](const APInt &value) -> Value {
      return arith::ConstantOp::create(b, loc, to, b.getIntegerAttr(to, value));
    };
    Value result = arith::SelectOp::create(
        b, loc, tooHigh, intConstant(APInt::getSignedMaxValue(bits)),
        truncated);
    result = arith::SelectOp::create(
        b, loc, tooLow, intConstant(APInt::getSignedMinValue(bits)), result);
    return arith::SelectOp::create(b, loc, isNan, constantInt(to, 0), result)
        .getResult();
  }

  OpBuilder &b;
  Location loc;
  ArrayRef<Value> inputs;
  std::string pass;
  llvm::DenseMap<Value, Value> memo;
  /// Whether the walk to the value at hand kept the lanes consecutive (see
  /// argumentLoader).
  bool contiguous = false;
  SmallVector<Value> loopIndex;
};

} // namespace element_emitter_detail
using element_emitter_detail::ElementEmitter;
using element_emitter_detail::isFloat;

} // namespace genesis

#endif // GENESIS_PASSES_CONVERSION_ELEMENTEMITTER_H
