//===- Evaluator.cpp - Reference evaluator of the genesis dialect ---------===//
//
// A direct interpreter: one host array per SSA value, ops visited in order.
// Floating-point elements are computed in double and rounded once by
// HostArray::setDouble; integer elements in int64_t and wrapped to their
// width. Clarity beats speed here, except for matmul and attention, whose
// operands are unpacked to double once so the models of the test suite run
// in seconds.
//
//===----------------------------------------------------------------------===//

#include "dialect/Evaluator/Evaluator.h"
#include "dialect/Evaluator/AttentionEvaluator.h"
#include "dialect/IR/GenesisOps.h"
#include "dialect/IR/Provenance.h"
#include "dialect/Utils/DTypes.h"
#include "runtime/support/Gelu.h"
#include "runtime/support/Philox.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

using namespace mlir;

namespace genesis {

DType dtypeOf(Type elementType) {
  if (std::optional<DType> dtype = toDType(elementType))
    return *dtype;
  std::string name;
  llvm::raw_string_ostream os(name);
  os << elementType;
  throw Error("element type '" + name + "' is not supported by genesis");
}

Type elementTypeOf(MLIRContext *context, DType dtype) {
  Builder b(context);
  switch (dtype) {
  case DType::F32:
    return b.getF32Type();
  case DType::F16:
    return b.getF16Type();
  case DType::BF16:
    return b.getBF16Type();
  case DType::F64:
    return b.getF64Type();
  case DType::I1:
    return b.getI1Type();
  case DType::I32:
    return b.getI32Type();
  case DType::I64:
    return b.getI64Type();
  }
  throw Error("unknown dtype");
}

std::string typeString(RankedTensorType type) {
  std::vector<int64_t> shape(type.getShape().begin(), type.getShape().end());
  return std::string(dtypeName(dtypeOf(type.getElementType()))) +
         shapeString(shape);
}

HostArray toHostArray(ElementsAttr value) {
  auto type = cast<RankedTensorType>(value.getShapedType());
  std::vector<int64_t> shape(type.getShape().begin(), type.getShape().end());
  HostArray array(dtypeOf(type.getElementType()), shape);
  int64_t i = 0;
  if (isa<FloatType>(type.getElementType())) {
    for (APFloat element : value.getValues<APFloat>()) {
      bool losesInfo = false;
      element.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven,
                      &losesInfo);
      array.setDouble(i++, element.convertToDouble());
    }
  } else {
    bool isBool = type.getElementType().isInteger(1);
    for (APInt element : value.getValues<APInt>())
      array.setInt(i++, isBool ? static_cast<int64_t>(element.getBoolValue())
                               : element.getSExtValue());
  }
  return array;
}

namespace {

using Shape = std::vector<int64_t>;

Shape shapeOf(Type type) {
  auto tensor = cast<RankedTensorType>(type);
  return Shape(tensor.getShape().begin(), tensor.getShape().end());
}

Shape stridesOf(const Shape &shape) {
  Shape strides(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

/// Multi-index of a flat row-major position.
void unflatten(int64_t flat, const Shape &shape, Shape &index) {
  index.resize(shape.size());
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    index[d] = shape[d] == 0 ? 0 : flat % shape[d];
    flat = shape[d] == 0 ? 0 : flat / shape[d];
  }
}

bool isFloat(const HostArray &array) { return isFloatDType(array.dtype()); }

/// Wraps an int64 result to the width of `dtype`, as two's complement
/// hardware does (i1 keeps only "non-zero").
int64_t wrapTo(DType dtype, int64_t value) {
  if (dtype == DType::I32)
    return static_cast<int32_t>(static_cast<uint32_t>(value));
  if (dtype == DType::I1)
    return value != 0;
  return value;
}

/// Sizes of the dimensions before, at and after `dim` (a tensor seen as
/// [outer, size, inner]), the access pattern of every "along dim" op.
struct AxisView {
  int64_t outer = 1, size = 1, inner = 1;
  AxisView(const Shape &shape, int64_t dim) {
    for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d)
      (d < dim ? outer : d == dim ? size : inner) *= shape[d];
  }
  int64_t at(int64_t o, int64_t k, int64_t i) const {
    return (o * size + k) * inner + i;
  }
};

double geluErf(double x) {
  return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
}

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

class Interpreter {
public:
  explicit Interpreter(NumericsCheck check) : check_(check) {}

  std::vector<HostArray> run(func::FuncOp function,
                             const std::vector<HostArray> &arguments) {
    checkArguments(function, arguments);
    Block &entry = function.getBody().front();
    for (auto [argument, array] : llvm::zip(entry.getArguments(), arguments))
      values[argument] = array;
    return runBlock(entry);
  }

private:
  static std::string argumentName(func::FuncOp function, unsigned i) {
    if (auto name = function.getArgAttrOfType<StringAttr>(i, "genesis.name"))
      return "argument #" + std::to_string(i) + " '" + name.str() + "'";
    return "argument #" + std::to_string(i);
  }

  static void checkArguments(func::FuncOp function,
                             const std::vector<HostArray> &arguments) {
    std::string where = "@" + function.getSymName().str();
    if (function.isExternal())
      throw Error(where + " has no body to evaluate");
    if (arguments.size() != function.getNumArguments())
      throw Error(where + " takes " +
                  std::to_string(function.getNumArguments()) +
                  " arguments, got " + std::to_string(arguments.size()));
    for (unsigned i = 0; i < arguments.size(); ++i) {
      auto type = dyn_cast<RankedTensorType>(function.getArgumentTypes()[i]);
      if (!type)
        throw Error(where + " " + argumentName(function, i) +
                    " is not a ranked tensor");
      std::string expected = typeString(type);
      if (expected != arguments[i].typeString())
        throw Error(where + " " + argumentName(function, i) + " expects " +
                    expected + ", got " + arguments[i].typeString());
    }
  }

  std::vector<HostArray> runBlock(Block &block) {
    for (Operation &op : block) {
      if (isa<func::ReturnOp, YieldOp>(op)) {
        std::vector<HostArray> results;
        for (Value operand : op.getOperands())
          results.push_back(get(operand));
        return results;
      }
      std::vector<HostArray> results = execute(&op);
      checkNumerics(&op, results);
      for (auto [result, array] : llvm::zip(op.getResults(), results))
        values[result] = std::move(array);
    }
    throw Error("block has no terminator");
  }

  const HostArray &get(Value value) { return values.at(value); }

  void checkNumerics(Operation *op, const std::vector<HostArray> &results) {
    for (size_t i = 0; i < results.size(); ++i) {
      const HostArray &array = results[i];
      std::optional<uint64_t> element =
          firstNonFinite(array.data(), static_cast<uint64_t>(array.numel()),
                         array.dtype(), check_);
      if (!element)
        continue;
      double value = array.getDouble(static_cast<int64_t>(*element));
      throw Error(describeProvenance(op) + ": result #" + std::to_string(i) +
                  " (" + array.typeString() + ") of '" +
                  op->getName().getStringRef().str() + "' holds " +
                  nonFiniteName(value) + " at " +
                  elementPosition(array.shape(), *element) +
                  ", the first value the numerics check (" +
                  numericsCheckName(check_) + ") reports");
    }
  }

  [[noreturn]] static void fail(Operation *op, const std::string &message) {
    throw Error(describeLocation(op->getLoc()) + ": '" +
                op->getName().getStringRef().str() + "' " + message);
  }

  HostArray resultArray(Operation *op, unsigned i = 0) {
    Type type = op->getResult(i).getType();
    try {
      return HostArray(dtypeOf(cast<RankedTensorType>(type).getElementType()),
                       shapeOf(type));
    } catch (const Error &error) { // too large for this machine
      fail(op, std::string("result: ") + error.what());
    }
  }

  template <typename FloatFn, typename IntFn>
  HostArray unary(Operation *op, FloatFn floatFn, IntFn intFn) {
    const HostArray &x = get(op->getOperand(0));
    HostArray out = resultArray(op);
    for (int64_t i = 0; i < x.numel(); ++i) {
      if (isFloat(x))
        out.setDouble(i, floatFn(x.getDouble(i)));
      else
        out.setInt(i, wrapTo(out.dtype(), intFn(x.getInt(i))));
    }
    return out;
  }

  template <typename FloatFn>
  HostArray unaryFloat(Operation *op, FloatFn floatFn) {
    return unary(op, floatFn, [](int64_t v) { return v; });
  }

  template <typename FloatFn, typename IntFn>
  HostArray binary(Operation *op, FloatFn floatFn, IntFn intFn) {
    const HostArray &a = get(op->getOperand(0)), &b = get(op->getOperand(1));
    HostArray out = resultArray(op);
    for (int64_t i = 0; i < a.numel(); ++i) {
      if (isFloat(a))
        out.setDouble(i, floatFn(a.getDouble(i), b.getDouble(i)));
      else
        out.setInt(i, wrapTo(out.dtype(), intFn(a.getInt(i), b.getInt(i))));
    }
    return out;
  }

  /// Integer arithmetic wraps like hardware; computing in uint64_t avoids
  /// the undefined behaviour of signed overflow.
  static int64_t wrapAdd(int64_t a, int64_t b) {
    return static_cast<int64_t>(static_cast<uint64_t>(a) +
                                static_cast<uint64_t>(b));
  }
  static int64_t wrapSub(int64_t a, int64_t b) {
    return static_cast<int64_t>(static_cast<uint64_t>(a) -
                                static_cast<uint64_t>(b));
  }
  static int64_t wrapMul(int64_t a, int64_t b) {
    return static_cast<int64_t>(static_cast<uint64_t>(a) *
                                static_cast<uint64_t>(b));
  }

  std::vector<HostArray> execute(Operation *op) {
    return llvm::TypeSwitch<Operation *, std::vector<HostArray>>(op)
        .Case([&](ConstantOp c) {
          return std::vector<HostArray>{toHostArray(c.getValue())};
        })
        .Case([&](FusionOp fusion) { return runFusion(fusion); })
        .Case([&](func::CallOp call) { return runCall(call); })
        .Case([&](SgdUpdateOp o) { return sgd(o); })
        .Case([&](AttentionGradOp o) { return attentionGrad(o); })
        .Case([&](FusedAttentionOp o) { return fusedAttention(o); })
        .Case([&](FusedAttentionGradOp o) { return fusedAttentionGrad(o); })
        .Case([&](PackedAttentionOp o) { return packedAttention(o); })
        .Case([&](CrossEntropyWithGradOp o) { return crossEntropyWithGrad(o); })
        .Case([&](PackedAttentionGradOp o) {
          return std::vector<HostArray>{packedAttentionGrad(o)};
        })
        .Case([&](SgdMomentumUpdateOp o) { return sgdMomentum(o); })
        .Case([&](AdamUpdateOp o) { return adam(o, /*decoupled=*/false); })
        .Case([&](AdamWUpdateOp o) { return adam(o, /*decoupled=*/true); })
        .Default([&](Operation *) {
          return std::vector<HostArray>{executeSingle(op)};
        });
  }

  HostArray executeSingle(Operation *op) {
    using Int = int64_t;
    return llvm::TypeSwitch<Operation *, HostArray>(op)
        // Elementwise unary.
        .Case([&](NegOp o) {
          return unary(
              o, [](double x) { return -x; },
              [](Int x) { return wrapSub(0, x); });
        })
        .Case([&](AbsOp o) {
          return unary(
              o, [](double x) { return std::fabs(x); },
              [](Int x) { return x < 0 ? wrapSub(0, x) : x; });
        })
        .Case([&](SignOp o) {
          return unary(
              o,
              [](double x) {
                return std::isnan(x) ? x
                                     : static_cast<double>((x > 0) - (x < 0));
              },
              [](Int x) { return static_cast<Int>((x > 0) - (x < 0)); });
        })
        .Case([&](ReluOp o) {
          return unary(
              o, [](double x) { return std::isnan(x) || x > 0 ? x : 0.0; },
              [](Int x) { return x > 0 ? x : 0; });
        })
        .Case([&](ExpOp o) {
          return unaryFloat(o, [](double x) { return std::exp(x); });
        })
        .Case([&](LogOp o) {
          return unaryFloat(o, [](double x) { return std::log(x); });
        })
        .Case([&](SqrtOp o) {
          return unaryFloat(o, [](double x) { return std::sqrt(x); });
        })
        .Case([&](RsqrtOp o) {
          return unaryFloat(o, [](double x) { return 1.0 / std::sqrt(x); });
        })
        .Case([&](TanhOp o) {
          return unaryFloat(o, [](double x) { return std::tanh(x); });
        })
        .Case([&](SigmoidOp o) { return unaryFloat(o, sigmoid); })
        .Case([&](SiluOp o) {
          return unaryFloat(o, [](double x) { return x * sigmoid(x); });
        })
        .Case([&](GeluOp o) {
          return o.getApproximate() == GeluApproximation::tanh
                     ? unaryFloat(o, geluTanh)
                     : unaryFloat(o, geluErf);
        })
        .Case([&](SinOp o) {
          return unaryFloat(o, [](double x) { return std::sin(x); });
        })
        .Case([&](CosOp o) {
          return unaryFloat(o, [](double x) { return std::cos(x); });
        })
        .Case([&](ErfOp o) {
          return unaryFloat(o, [](double x) { return std::erf(x); });
        })
        .Case([&](StopGradientOp o) { return get(o.getOperand()); })
        .Case([&](NotOp o) {
          return unary(
              o, [](double x) { return x; }, [](Int x) { return Int(!x); });
        })
        // Elementwise binary.
        .Case([&](AddOp o) {
          return binary(
              o, [](double a, double b) { return a + b; }, wrapAdd);
        })
        .Case([&](SubOp o) {
          return binary(
              o, [](double a, double b) { return a - b; }, wrapSub);
        })
        .Case([&](MulOp o) {
          return binary(
              o, [](double a, double b) { return a * b; }, wrapMul);
        })
        .Case([&](DivOp o) {
          return binary(
              o, [](double a, double b) { return a / b; },
              [&](Int a, Int b) -> Int {
                if (b == 0)
                  fail(o, "integer division by zero");
                if (b == -1)
                  return wrapSub(0, a);
                return a / b;
              });
        })
        .Case([&](PowOp o) {
          return binary(
              o, [](double a, double b) { return std::pow(a, b); },
              [](Int a, Int) { return a; });
        })
        .Case([&](MaxOp o) {
          return binary(o, nanMax, [](Int a, Int b) { return std::max(a, b); });
        })
        .Case([&](MinOp o) {
          return binary(o, nanMin, [](Int a, Int b) { return std::min(a, b); });
        })
        .Case([&](AndOp o) {
          return binary(
              o, [](double a, double b) { return a * b; },
              [](Int a, Int b) { return Int(a && b); });
        })
        .Case([&](OrOp o) {
          return binary(
              o, [](double a, double b) { return a + b; },
              [](Int a, Int b) { return Int(a || b); });
        })
        .Case([&](CompareOp o) { return compare(o); })
        .Case([&](SelectOp o) {
          const HostArray &c = get(o.getCondition());
          HostArray out = get(o.getOnFalse());
          const HostArray &t = get(o.getOnTrue());
          size_t size = dtypeSize(out.dtype());
          for (int64_t i = 0; i < c.numel(); ++i)
            if (c.getInt(i))
              std::memcpy(static_cast<char *>(out.data()) + i * size,
                          static_cast<const char *>(t.data()) + i * size, size);
          return out;
        })
        .Case([&](CastOp o) { return convert(o); })
        // Shape ops.
        .Case([&](ReshapeOp o) {
          const HostArray &x = get(o.getOperand());
          HostArray out = resultArray(o);
          if (x.nbytes() != 0) // an empty array's data may be null
            std::memcpy(out.data(), x.data(), x.nbytes());
          return out;
        })
        .Case([&](TransposeOp o) { return transpose(o); })
        .Case([&](SliceOp o) { return slice(o); })
        .Case([&](ConcatOp o) { return concat(o); })
        .Case([&](PadOp o) { return pad(o); })
        .Case([&](BroadcastInDimOp o) { return broadcast(o); })
        .Case([&](IotaOp o) {
          HostArray out = resultArray(o);
          Shape shape = out.shape(), index;
          for (int64_t i = 0; i < out.numel(); ++i) {
            unflatten(i, shape, index);
            out.setInt(i, index[o.getDim()]);
          }
          return out;
        })
        .Case([&](TakeOp o) { return take(o); })
        .Case([&](ScatterAddOp o) { return scatterAdd(o); })
        // Reductions.
        .Case([&](ReduceSumOp o) {
          return reduce(o, o.getDims(), 0.0,
                        [](double a, double b) { return a + b; });
        })
        .Case([&](ReduceMaxOp o) {
          return reduce(o, o.getDims(), -INFINITY, nanMax);
        })
        .Case([&](ReduceMinOp o) {
          return reduce(o, o.getDims(), INFINITY, nanMin);
        })
        .Case([&](ArgmaxOp o) { return argmax(o); })
        // Compound ops.
        .Case([&](MatmulOp o) {
          return matmul(o, get(o.getLhs()), get(o.getRhs()),
                        o.getTransposeLhs(), o.getTransposeRhs(), 1.0);
        })
        .Case(
            [&](SoftmaxOp o) { return softmax(o, o.getDim(), /*log=*/false); })
        .Case([&](LogSoftmaxOp o) {
          return softmax(o, o.getDim(), /*log=*/true);
        })
        .Case([&](LayerNormOp o) {
          return normalize(o, o.getWeight(), o.getBias(),
                           o.getEpsilon().convertToDouble(), /*rms=*/false);
        })
        .Case([&](RmsNormOp o) {
          return normalize(o, o.getWeight(), Value(),
                           o.getEpsilon().convertToDouble(), /*rms=*/true);
        })
        .Case([&](RopeOp o) { return rope(o); })
        .Case([&](AttentionOp o) { return attention(o); })
        .Case([&](DecodeAttentionOp o) { return decodeAttention(o); })
        .Case([&](CrossEntropyOp o) { return crossEntropy(o); })
        .Case([&](CrossEntropyGradOp o) { return crossEntropyGrad(o); })
        .Case([&](DropoutOp o) { return dropout(o); })
        .Case([&](GlobalNormOp o) {
          double sum = 0;
          for (Value input : o.getInputs()) {
            const HostArray &x = get(input);
            for (int64_t i = 0; i < x.numel(); ++i)
              sum += x.getDouble(i) * x.getDouble(i);
          }
          HostArray out = resultArray(o);
          out.setDouble(0, std::sqrt(sum));
          return out;
        })
        .Case([&](AllReduceOp o) {
          // The evaluator is a single rank: sum and mean are the identity.
          return get(o.getOperand());
        })
        .Case([&](LibraryCallOp o) { return libraryCall(o); })
        .Default([&](Operation *other) -> HostArray {
          fail(other, "is not supported by the reference evaluator");
        });
  }

  HostArray compare(CompareOp o) {
    const HostArray &a = get(o.getLhs()), &b = get(o.getRhs());
    HostArray out = resultArray(o);
    CompareDirection direction = o.getDirection();
    auto decide = [direction](auto x, auto y) {
      switch (direction) {
      case CompareDirection::eq:
        return x == y;
      case CompareDirection::ne:
        return x != y;
      case CompareDirection::lt:
        return x < y;
      case CompareDirection::le:
        return x <= y;
      case CompareDirection::gt:
        return x > y;
      case CompareDirection::ge:
        return x >= y;
      }
      return false;
    };
    for (int64_t i = 0; i < a.numel(); ++i)
      out.setInt(i, isFloat(a) ? decide(a.getDouble(i), b.getDouble(i))
                               : decide(a.getInt(i), b.getInt(i)));
    return out;
  }

  HostArray convert(CastOp o) {
    const HostArray &x = get(o.getOperand());
    HostArray out = resultArray(o);
    for (int64_t i = 0; i < x.numel(); ++i) {
      if (out.dtype() == DType::I1) {
        out.setInt(i, isFloat(x) ? x.getDouble(i) != 0.0 : x.getInt(i) != 0);
      } else if (isFloat(out)) {
        // setInt rounds an integer to the float dtype once; going through
        // double first would round twice for |x| > 2^53 (e.g. i64 -> bf16).
        if (isFloat(x))
          out.setDouble(i, x.getDouble(i));
        else
          out.setInt(i, x.getInt(i));
      } else if (isFloat(x)) {
        // Truncate toward zero, saturate, NaN -> 0 (the spec of genesis.cast).
        double v = std::trunc(x.getDouble(i));
        double lo = out.dtype() == DType::I32 ? -2147483648.0 : -0x1p63;
        double hi = out.dtype() == DType::I32 ? 2147483647.0 : 0x1p63;
        int64_t r;
        if (std::isnan(v))
          r = 0;
        else if (v <= lo)
          r = out.dtype() == DType::I32 ? INT32_MIN : INT64_MIN;
        else if (v >= hi)
          r = out.dtype() == DType::I32 ? INT32_MAX : INT64_MAX;
        else
          r = static_cast<int64_t>(v);
        out.setInt(i, r);
      } else {
        out.setInt(i, wrapTo(out.dtype(), x.getInt(i)));
      }
    }
    return out;
  }

  /// Copies element `from` of `src` to element `to` of `dst` (same dtype).
  static void copyElement(const HostArray &src, int64_t from, HostArray &dst,
                          int64_t to) {
    size_t size = dtypeSize(src.dtype());
    std::memcpy(static_cast<char *>(dst.data()) + to * size,
                static_cast<const char *>(src.data()) + from * size, size);
  }

  HostArray transpose(TransposeOp o) {
    const HostArray &x = get(o.getOperand());
    HostArray out = resultArray(o);
    Shape inStrides = stridesOf(x.shape()), index;
    ArrayRef<int64_t> permutation = o.getPermutation();
    for (int64_t i = 0; i < out.numel(); ++i) {
      unflatten(i, out.shape(), index);
      int64_t from = 0;
      for (size_t d = 0; d < index.size(); ++d)
        from += index[d] * inStrides[permutation[d]];
      copyElement(x, from, out, i);
    }
    return out;
  }

  HostArray slice(SliceOp o) {
    const HostArray &x = get(o.getOperand());
    HostArray out = resultArray(o);
    Shape inStrides = stridesOf(x.shape()), index;
    for (int64_t i = 0; i < out.numel(); ++i) {
      unflatten(i, out.shape(), index);
      int64_t from = 0;
      for (size_t d = 0; d < index.size(); ++d)
        from += (o.getStart()[d] + index[d] * o.getStride()[d]) * inStrides[d];
      copyElement(x, from, out, i);
    }
    return out;
  }

  HostArray concat(ConcatOp o) {
    HostArray out = resultArray(o);
    AxisView outView(out.shape(), o.getDim());
    int64_t offset = 0;
    for (Value input : o.getInputs()) {
      const HostArray &x = get(input);
      AxisView view(x.shape(), o.getDim());
      for (int64_t a = 0; a < view.outer; ++a)
        for (int64_t k = 0; k < view.size; ++k)
          for (int64_t b = 0; b < view.inner; ++b)
            copyElement(x, view.at(a, k, b), out, outView.at(a, offset + k, b));
      offset += view.size;
    }
    return out;
  }

  HostArray pad(PadOp o) {
    const HostArray &x = get(o.getOperand());
    HostArray out = resultArray(o);
    Shape outStrides = stridesOf(out.shape()), index;
    for (int64_t i = 0; i < x.numel(); ++i) {
      unflatten(i, x.shape(), index);
      int64_t to = 0;
      for (size_t d = 0; d < index.size(); ++d)
        to += (o.getLow()[d] + index[d] * (o.getInterior()[d] + 1)) *
              outStrides[d];
      copyElement(x, i, out, to);
    }
    return out;
  }

  HostArray broadcast(BroadcastInDimOp o) {
    const HostArray &x = get(o.getOperand());
    HostArray out = resultArray(o);
    Shape inStrides = stridesOf(x.shape()), index;
    ArrayRef<int64_t> dims = o.getBroadcastDimensions();
    for (int64_t i = 0; i < out.numel(); ++i) {
      unflatten(i, out.shape(), index);
      int64_t from = 0;
      for (size_t d = 0; d < dims.size(); ++d)
        if (x.shape()[d] != 1)
          from += index[dims[d]] * inStrides[d];
      copyElement(x, from, out, i);
    }
    return out;
  }

  /// Checked index for take/scatter_add.
  int64_t indexAt(Operation *op, const HostArray &indices, int64_t position,
                  int64_t bound) {
    int64_t index = indices.getInt(position);
    if (index < 0 || index >= bound)
      fail(op, "index " + std::to_string(index) + " at position " +
                   std::to_string(position) + " is out of range [0, " +
                   std::to_string(bound) + ")");
    return index;
  }

  HostArray take(TakeOp o) {
    const HostArray &x = get(o.getOperand()), &indices = get(o.getIndices());
    HostArray out = resultArray(o);
    AxisView in(x.shape(), o.getAxis());
    int64_t count = indices.numel();
    for (int64_t a = 0; a < in.outer; ++a)
      for (int64_t p = 0; p < count; ++p) {
        int64_t row = indexAt(o, indices, p, in.size);
        for (int64_t b = 0; b < in.inner; ++b)
          copyElement(x, in.at(a, row, b), out, (a * count + p) * in.inner + b);
      }
    return out;
  }

  HostArray scatterAdd(ScatterAddOp o) {
    HostArray out = get(o.getOperand());
    const HostArray &indices = get(o.getIndices()),
                    &updates = get(o.getUpdates());
    AxisView view(out.shape(), o.getAxis());
    int64_t count = indices.numel();
    // Float sums accumulate in double and are rounded once at the end, so
    // repeated indices do not round after every addition.
    std::vector<double> acc;
    if (isFloat(out))
      acc = toDoubles(out);
    for (int64_t a = 0; a < view.outer; ++a)
      for (int64_t p = 0; p < count; ++p) {
        int64_t row = indexAt(o, indices, p, view.size);
        for (int64_t b = 0; b < view.inner; ++b) {
          int64_t to = view.at(a, row, b),
                  from = (a * count + p) * view.inner + b;
          if (isFloat(out))
            acc[to] += updates.getDouble(from);
          else
            out.setInt(to, wrapTo(out.dtype(), wrapAdd(out.getInt(to),
                                                       updates.getInt(from))));
        }
      }
    for (size_t i = 0; i < acc.size(); ++i)
      out.setDouble(static_cast<int64_t>(i), acc[i]);
    return out;
  }

  /// Flat output position of input element `index` once `dims` are reduced.
  static int64_t reducedPosition(const Shape &index, const Shape &shape,
                                 ArrayRef<int64_t> dims) {
    int64_t position = 0;
    for (size_t d = 0; d < shape.size(); ++d)
      if (!llvm::is_contained(dims, static_cast<int64_t>(d)))
        position = position * shape[d] + index[d];
    return position;
  }

  template <typename Combine>
  HostArray reduce(Operation *op, ArrayRef<int64_t> dims, double init,
                   Combine combine) {
    const HostArray &x = get(op->getOperand(0));
    HostArray out = resultArray(op);
    Shape index;
    if (isFloat(x)) {
      std::vector<double> acc(out.numel(), init);
      for (int64_t i = 0; i < x.numel(); ++i) {
        unflatten(i, x.shape(), index);
        double &slot = acc[reducedPosition(index, x.shape(), dims)];
        slot = combine(slot, x.getDouble(i));
      }
      for (int64_t i = 0; i < out.numel(); ++i)
        out.setDouble(i, acc[i]);
      return out;
    }
    // Integer reductions: sum wraps, max/min start from the first element.
    bool isSum = isa<ReduceSumOp>(op);
    std::vector<int64_t> acc(out.numel(), 0);
    std::vector<bool> seen(out.numel(), isSum);
    for (int64_t i = 0; i < x.numel(); ++i) {
      unflatten(i, x.shape(), index);
      int64_t p = reducedPosition(index, x.shape(), dims);
      int64_t v = x.getInt(i);
      if (isSum)
        acc[p] = wrapAdd(acc[p], v);
      else if (!seen[p] || (isa<ReduceMaxOp>(op) ? v > acc[p] : v < acc[p]))
        acc[p] = v;
      seen[p] = true;
    }
    for (int64_t i = 0; i < out.numel(); ++i)
      out.setInt(i, wrapTo(out.dtype(), acc[i]));
    return out;
  }

  HostArray argmax(ArgmaxOp o) {
    const HostArray &x = get(o.getOperand());
    HostArray out = resultArray(o);
    AxisView view(x.shape(), o.getDim());
    for (int64_t a = 0; a < view.outer; ++a)
      for (int64_t b = 0; b < view.inner; ++b) {
        int64_t best = 0;
        if (isFloat(x)) {
          double bestValue = x.getDouble(view.at(a, 0, b));
          for (int64_t k = 1; k < view.size && !std::isnan(bestValue); ++k) {
            double v = x.getDouble(view.at(a, k, b));
            if (std::isnan(v) || v > bestValue) {
              best = k;
              bestValue = v;
            }
          }
        } else {
          // Compared as integers: i64 values above 2^53 are not all doubles.
          int64_t bestValue = x.getInt(view.at(a, 0, b));
          for (int64_t k = 1; k < view.size; ++k) {
            int64_t v = x.getInt(view.at(a, k, b));
            if (v > bestValue) {
              best = k;
              bestValue = v;
            }
          }
        }
        out.setInt(a * view.inner + b, best);
      }
    return out;
  }

  HostArray matmul(Operation *op, const HostArray &lhs, const HostArray &rhs,
                   bool transposeLhs, bool transposeRhs, double alpha) {
    return fromDoubles(
        op, matmulDoubles(op, lhs, rhs, transposeLhs, transposeRhs, alpha));
  }

  /// The result of `op` holding `values`, each rounded once.
  HostArray fromDoubles(Operation *op, const std::vector<double> &values) {
    HostArray out = resultArray(op);
    for (int64_t i = 0; i < out.numel(); ++i)
      out.setDouble(i, values[i]);
    return out;
  }

  /// alpha * lhs @ rhs in double, unrounded, in the result's row-major order.
  std::vector<double> matmulDoubles(Operation *op, const HostArray &lhs,
                                    const HostArray &rhs, bool transposeLhs,
                                    bool transposeRhs, double alpha) {
    Shape outShape = shapeOf(op->getResult(0).getType());
    std::vector<double> out(HostArray::numelOf(outShape), 0.0);
    const Shape &a = lhs.shape();
    size_t rank = a.size();
    int64_t m = outShape[rank - 2], n = outShape[rank - 1];
    int64_t k = transposeLhs ? a[rank - 2] : a[rank - 1];
    int64_t batches =
        static_cast<int64_t>(out.size()) / std::max<int64_t>(1, m * n);
    if (m * n == 0)
      return out;
    std::vector<double> x = toDoubles(lhs), y = toDoubles(rhs), row(n);
    for (int64_t batch = 0; batch < batches; ++batch) {
      const double *xb = x.data() + batch * m * k,
                   *yb = y.data() + batch * k * n;
      for (int64_t i = 0; i < m; ++i) {
        std::fill(row.begin(), row.end(), 0.0);
        for (int64_t p = 0; p < k; ++p) {
          double xv = transposeLhs ? xb[p * m + i] : xb[i * k + p];
          for (int64_t j = 0; j < n; ++j)
            row[j] += xv * (transposeRhs ? yb[j * k + p] : yb[p * n + j]);
        }
        for (int64_t j = 0; j < n; ++j)
          out[(batch * m + i) * n + j] = alpha * row[j];
      }
    }
    return out;
  }

  HostArray softmax(Operation *op, int64_t dim, bool log) {
    const HostArray &x = get(op->getOperand(0));
    HostArray out = resultArray(op);
    AxisView view(x.shape(), dim);
    for (int64_t a = 0; a < view.outer; ++a)
      for (int64_t b = 0; b < view.inner; ++b) {
        double max = -INFINITY, sum = 0;
        for (int64_t k = 0; k < view.size; ++k)
          max = std::max(max, x.getDouble(view.at(a, k, b)));
        for (int64_t k = 0; k < view.size; ++k)
          sum += std::exp(x.getDouble(view.at(a, k, b)) - max);
        for (int64_t k = 0; k < view.size; ++k) {
          double shifted = x.getDouble(view.at(a, k, b)) - max;
          out.setDouble(view.at(a, k, b), log ? shifted - std::log(sum)
                                              : std::exp(shifted) / sum);
        }
      }
    return out;
  }

  HostArray normalize(Operation *op, Value weight, Value bias, double epsilon,
                      bool rms) {
    const HostArray &x = get(op->getOperand(0));
    HostArray out = resultArray(op);
    int64_t channels = x.shape().back();
    int64_t rows = channels == 0 ? 0 : x.numel() / channels;
    for (int64_t r = 0; r < rows; ++r) {
      double mean = 0, var = 0;
      if (!rms) {
        for (int64_t c = 0; c < channels; ++c)
          mean += x.getDouble(r * channels + c);
        mean /= channels;
      }
      for (int64_t c = 0; c < channels; ++c) {
        double d = x.getDouble(r * channels + c) - mean;
        var += d * d;
      }
      double scale = 1.0 / std::sqrt(var / channels + epsilon);
      for (int64_t c = 0; c < channels; ++c) {
        double y = (x.getDouble(r * channels + c) - mean) * scale;
        if (weight)
          y *= get(weight).getDouble(c);
        if (bias)
          y += get(bias).getDouble(c);
        out.setDouble(r * channels + c, y);
      }
    }
    return out;
  }

  HostArray rope(RopeOp o) {
    const HostArray &x = get(o.getOperand()), &cos = get(o.getCos()),
                    &sin = get(o.getSin());
    HostArray out = resultArray(o);
    int64_t dim = x.shape().back(), half = dim / 2;
    int64_t table = cos.numel();
    for (int64_t i = 0; i < x.numel(); ++i) {
      int64_t d = i % dim, t = i % table;
      double rotated =
          d < half ? -x.getDouble(i + half) : x.getDouble(i - half);
      out.setDouble(i, x.getDouble(i) * cos.getDouble(t) +
                           rotated * sin.getDouble(t));
    }
    return out;
  }

  AttentionInputs attentionInputs(Value q, Value k, Value v, Value mask,
                                  bool causal, const llvm::APFloat &scale) {
    return {get(q), get(k),
            get(v), mask ? &get(mask) : nullptr,
            causal, scale.convertToDouble()};
  }

  HostArray attention(AttentionOp o) {
    HostArray out = resultArray(o);
    evaluateAttention(attentionInputs(o.getQuery(), o.getKey(), o.getValue(),
                                      o.getMask(), o.getCausal(), o.getScale()),
                      out, nullptr);
    return out;
  }

  /// The 16-bit cache is read widened: the evaluator reads every element as
  /// a double.
  HostArray decodeAttention(DecodeAttentionOp o) {
    HostArray out = resultArray(o);
    evaluateAttention(attentionInputs(o.getQuery(), o.getKey(), o.getValue(),
                                      o.getMask(), o.getCausal(), o.getScale()),
                      out, nullptr);
    return out;
  }

  std::vector<HostArray> fusedAttention(FusedAttentionOp o) {
    std::vector<HostArray> results = {resultArray(o, 0), resultArray(o, 1)};
    evaluateAttention(attentionInputs(o.getQuery(), o.getKey(), o.getValue(),
                                      Value(), o.getCausal(), o.getScale()),
                      results[0], &results[1]);
    return results;
  }

  std::vector<HostArray> packedAttention(PackedAttentionOp o) {
    std::vector<HostArray> results = {resultArray(o, 0), resultArray(o, 1)};
    evaluatePackedAttention(get(o.getQkv()), o.getQueryHeads(), o.getKvHeads(),
                            o.getCausal(), o.getScale().convertToDouble(),
                            results[0], results[1]);
    return results;
  }

  HostArray packedAttentionGrad(PackedAttentionGradOp o) {
    HostArray result = resultArray(o);
    evaluatePackedAttentionGrad(
        get(o.getQkv()), get(o.getOutGrad()), o.getQueryHeads(), o.getKvHeads(),
        o.getCausal(), o.getScale().convertToDouble(), result);
    return result;
  }

  /// What cross_entropy, its gradient and their fused form read.
  struct LossOperands {
    Operation *op;
    const HostArray &logits, &labels;
    int64_t ignore;
    double smoothing;
    LossReduction reduction;
  };

  template <typename LossOp>
  LossOperands lossOperands(LossOp o, LossReduction reduction) {
    return {o,
            get(o.getLogits()),
            get(o.getLabels()),
            static_cast<int64_t>(o.getIgnoreIndex()),
            o.getLabelSmoothing().convertToDouble(),
            reduction};
  }

  HostArray crossEntropy(CrossEntropyOp o) {
    return crossEntropyOf(lossOperands(o, o.getReduction()), resultArray(o));
  }

  HostArray crossEntropyGrad(CrossEntropyGradOp o) {
    return crossEntropyGradOf(lossOperands(o, o.getReduction()),
                              get(o.getLossGrad()), resultArray(o));
  }

  std::vector<HostArray> crossEntropyWithGrad(CrossEntropyWithGradOp o) {
    LossOperands operands = lossOperands(o, LossReduction::none);
    return {
        crossEntropyOf(operands, resultArray(o, 0)),
        crossEntropyGradOf(operands, get(o.getLossGrad()), resultArray(o, 1))};
  }

  HostArray crossEntropyOf(const LossOperands &in, HostArray out) {
    const HostArray &logits = in.logits, &labels = in.labels;
    int64_t n = logits.shape()[0], classes = logits.shape()[1];
    double smoothing = in.smoothing;
    double total = 0;
    int64_t counted = 0;
    int64_t ignore = in.ignore;
    for (int64_t r = 0; r < n; ++r) {
      int64_t label = checkedLabel(in.op, labels, r, classes, ignore);
      double loss = 0;
      if (label != ignore) {
        double max = -INFINITY, sum = 0, sumLogits = 0;
        for (int64_t c = 0; c < classes; ++c)
          max = std::max(max, logits.getDouble(r * classes + c));
        for (int64_t c = 0; c < classes; ++c) {
          sum += std::exp(logits.getDouble(r * classes + c) - max);
          sumLogits += logits.getDouble(r * classes + c);
        }
        double logSumExp = max + std::log(sum);
        double nll = logSumExp - logits.getDouble(r * classes + label);
        double uniform = logSumExp - sumLogits / classes;
        loss = (1 - smoothing) * nll + smoothing * uniform;
        ++counted;
      }
      total += loss;
      if (in.reduction == LossReduction::none)
        out.setDouble(r, loss);
    }
    if (in.reduction == LossReduction::sum)
      out.setDouble(0, total);
    else if (in.reduction == LossReduction::mean)
      out.setDouble(0, total / static_cast<double>(counted));
    return out;
  }

  /// Rows of `logits` with a label that is not ignored; reports labels out
  /// of range.
  int64_t checkedLabel(Operation *op, const HostArray &labels, int64_t row,
                       int64_t classes, int64_t ignoreIndex) {
    int64_t label = labels.getInt(row);
    if (label != ignoreIndex && (label < 0 || label >= classes))
      fail(op, "label " + std::to_string(label) + " of row " +
                   std::to_string(row) + " is out of range [0, " +
                   std::to_string(classes) + ") and is not ignore_index " +
                   std::to_string(ignoreIndex));
    return label;
  }

  HostArray crossEntropyGradOf(const LossOperands &in,
                               const HostArray &lossGrad, HostArray out) {
    const HostArray &logits = in.logits, &labels = in.labels;
    int64_t n = logits.shape()[0], classes = logits.shape()[1];
    int64_t ignore = in.ignore;
    double smoothing = in.smoothing;
    int64_t counted = 0;
    for (int64_t r = 0; r < n; ++r)
      counted += checkedLabel(in.op, labels, r, classes, ignore) != ignore;
    for (int64_t r = 0; r < n; ++r) {
      int64_t label = labels.getInt(r);
      if (label == ignore)
        continue;
      double weight =
          in.reduction == LossReduction::none ? lossGrad.getDouble(r)
          : in.reduction == LossReduction::sum
              ? lossGrad.getDouble(0)
              : lossGrad.getDouble(0) / static_cast<double>(counted);
      double max = -INFINITY, sum = 0;
      for (int64_t c = 0; c < classes; ++c)
        max = std::max(max, logits.getDouble(r * classes + c));
      for (int64_t c = 0; c < classes; ++c)
        sum += std::exp(logits.getDouble(r * classes + c) - max);
      for (int64_t c = 0; c < classes; ++c) {
        double p = std::exp(logits.getDouble(r * classes + c) - max) / sum;
        double target = (c == label ? 1 - smoothing : 0) + smoothing / classes;
        out.setDouble(r * classes + c, weight * (p - target));
      }
    }
    return out;
  }

  std::vector<HostArray> attentionGrad(AttentionGradOp o) {
    std::vector<HostArray> results = {resultArray(o, 0), resultArray(o, 1),
                                      resultArray(o, 2)};
    evaluateAttentionGrad(
        attentionInputs(o.getQuery(), o.getKey(), o.getValue(), o.getMask(),
                        o.getCausal(), o.getScale()),
        get(o.getOutGrad()), results[0], results[1], results[2]);
    return results;
  }

  /// The probabilities are recomputed from q and k, so `out` and
  /// `logsumexp` are not read: the gradient of the exact attention.
  std::vector<HostArray> fusedAttentionGrad(FusedAttentionGradOp o) {
    std::vector<HostArray> results = {resultArray(o, 0), resultArray(o, 1),
                                      resultArray(o, 2)};
    evaluateAttentionGrad(
        attentionInputs(o.getQuery(), o.getKey(), o.getValue(), Value(),
                        o.getCausal(), o.getScale()),
        get(o.getOutGrad()), results[0], results[1], results[2]);
    return results;
  }

  HostArray dropout(DropoutOp o) {
    const HostArray &x = get(o.getOperand());
    HostArray out = resultArray(o);
    auto seed = static_cast<uint64_t>(get(o.getSeed()).getInt(0));
    double p = o.getProbability().convertToDouble();
    auto offset = static_cast<uint64_t>(o.getOffset());
    for (int64_t i = 0; i < x.numel(); ++i) {
      bool keep = philoxUniform(seed, offset + static_cast<uint64_t>(i)) >= p;
      out.setDouble(i, keep ? x.getDouble(i) / (1.0 - p) : 0.0);
    }
    return out;
  }

  HostArray libraryCall(LibraryCallOp o) {
    // The epilogue applies to the unrounded GEMM result; only the final
    // value is rounded to the result dtype.
    std::vector<double> gemm =
        matmulDoubles(o, get(o.getLhs()), get(o.getRhs()), o.getTransposeLhs(),
                      o.getTransposeRhs(), o.getAlpha().convertToDouble());
    HostArray out = resultArray(o);
    GemmEpilogue epilogue = o.getEpilogue();
    int64_t n = out.shape().back();
    for (int64_t i = 0; i < out.numel(); ++i) {
      double y = gemm[i];
      if (o.getBias())
        y += get(o.getBias()).getDouble(i % n);
      if (epilogue == GemmEpilogue::relu || epilogue == GemmEpilogue::bias_relu)
        y = std::isnan(y) || y > 0 ? y : 0.0; // NaN propagates, as genesis.relu
      if (epilogue == GemmEpilogue::gelu || epilogue == GemmEpilogue::bias_gelu)
        y = geluTanh(y);
      if (epilogue == GemmEpilogue::dgelu)
        y *= geluTanhDerivative(get(o.getAux()).getDouble(i));
      out.setDouble(i, y);
    }
    return out;
  }

  std::vector<HostArray> sgd(SgdUpdateOp o) {
    const HostArray &param = get(o.getParam()), &grad = get(o.getGrad());
    double lr = get(o.getLr()).getDouble(0);
    double decay = o.getWeightDecay().convertToDouble();
    HostArray out = resultArray(o);
    for (int64_t i = 0; i < param.numel(); ++i) {
      double g = grad.getDouble(i) + decay * param.getDouble(i);
      out.setDouble(i, param.getDouble(i) - lr * g);
    }
    return {out};
  }

  std::vector<HostArray> sgdMomentum(SgdMomentumUpdateOp o) {
    const HostArray &param = get(o.getParam()), &grad = get(o.getGrad()),
                    &buffer = get(o.getMomentumBuffer());
    double lr = get(o.getLr()).getDouble(0);
    bool firstStep = get(o.getStep()).getInt(0) <= 1;
    double momentum = o.getMomentum().convertToDouble(),
           dampening = o.getDampening().convertToDouble(),
           decay = o.getWeightDecay().convertToDouble();
    HostArray newParam = resultArray(o, 0), newBuffer = resultArray(o, 1);
    for (int64_t i = 0; i < param.numel(); ++i) {
      double g = grad.getDouble(i) + decay * param.getDouble(i);
      double buf =
          firstStep ? g : momentum * buffer.getDouble(i) + (1 - dampening) * g;
      newBuffer.setDouble(i, buf);
      buf = newBuffer.getDouble(i);
      double direction = o.getNesterov() ? g + momentum * buf : buf;
      newParam.setDouble(i, param.getDouble(i) - lr * direction);
    }
    return {newParam, newBuffer};
  }

  template <typename AdamOp>
  std::vector<HostArray> adam(AdamOp o, bool decoupled) {
    const HostArray &param = get(o.getParam()), &grad = get(o.getGrad()),
                    &m = get(o.getExpAvg()), &v = get(o.getExpAvgSq());
    double lr = get(o.getLr()).getDouble(0);
    auto step = static_cast<double>(get(o.getStep()).getInt(0));
    double beta1 = o.getBeta1().convertToDouble(),
           beta2 = o.getBeta2().convertToDouble(),
           epsilon = o.getEpsilon().convertToDouble(),
           decay = o.getWeightDecay().convertToDouble();
    double correction1 = 1 - std::pow(beta1, step),
           correction2 = 1 - std::pow(beta2, step);
    HostArray newParam = resultArray(o, 0), newM = resultArray(o, 1),
              newV = resultArray(o, 2);
    for (int64_t i = 0; i < param.numel(); ++i) {
      double p = param.getDouble(i), g = grad.getDouble(i);
      if (decoupled)
        p *= 1 - lr * decay;
      else
        g += decay * p;
      newM.setDouble(i, beta1 * m.getDouble(i) + (1 - beta1) * g);
      newV.setDouble(i, beta2 * v.getDouble(i) + (1 - beta2) * g * g);
      double denom =
          std::sqrt(newV.getDouble(i)) / std::sqrt(correction2) + epsilon;
      newParam.setDouble(i, p - lr / correction1 * newM.getDouble(i) / denom);
    }
    return {newParam, newM, newV};
  }

  std::vector<HostArray> runFusion(FusionOp fusion) {
    Block &body = fusion.getBody().front();
    for (auto [argument, input] :
         llvm::zip(body.getArguments(), fusion.getInputs())) {
      // Copy before inserting: growing `values` moves the input's array.
      HostArray array = get(input);
      values[argument] = std::move(array);
    }
    return runBlock(body);
  }

  std::vector<HostArray> runCall(func::CallOp call) {
    auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
        call, call.getCalleeAttr());
    if (!callee)
      fail(call, "calls unknown function @" + call.getCallee().str());
    std::vector<HostArray> arguments;
    for (Value operand : call.getOperands())
      arguments.push_back(get(operand));
    return Interpreter(check_).run(callee, arguments);
  }

  llvm::DenseMap<Value, HostArray> values;
  NumericsCheck check_;
};

} // namespace

std::vector<HostArray> evaluate(func::FuncOp function,
                                const std::vector<HostArray> &arguments,
                                NumericsCheck check) {
  return Interpreter(check).run(function, arguments);
}

} // namespace genesis
