//===- FuseGeluGradient.cpp - GELU's gradient as a GEMM epilogue ----------===//
//
// Implements genesis-fuse-gelu-gradient; Passes.td states the algorithm.
//
//===----------------------------------------------------------------------===//

#include "dialect/IR/GenesisOps.h"
#include "dialect/IR/Provenance.h"
#include "passes/Passes.h"
#include "runtime/support/Gelu.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <optional>

namespace genesis {
#define GEN_PASS_DEF_GENESISFUSEGELUGRADIENT
#include "passes/Passes.h.inc"
} // namespace genesis

using namespace mlir;
using namespace genesis;

namespace {

/// Where the derivative is compared: kSamplePoints points spread over
/// [-kSampleBound, kSampleBound], which covers both of GELU's tails.
constexpr int kSamplePoints = 24;
constexpr double kSampleBound = 8.0;
/// The derivative's constants are f32 splats (sqrt(2/pi) rounded to f32 is
/// 3e-8 off); another function differs by far more at some point.
constexpr double kRelativeTolerance = 1e-6;
/// cuBLASLt's aux leading dimension (the last one) is a multiple of this.
constexpr int64_t kAuxAlignment = 8;

/// `value` read back through reshapes and at most one widening cast (from
/// bf16 or f16); the
/// ops passed, from `value` towards the source, go to `path` when given.
Value sourceThroughWidening(Value value,
                            SmallVectorImpl<Operation *> *path = nullptr) {
  bool widened = false;
  while (Operation *op = value.getDefiningOp()) {
    bool widening = widenedFrom(value) != nullptr;
    if (!isa<ReshapeOp>(op) && !(widening && !widened))
      break;
    widened |= widening;
    if (path)
      path->push_back(op);
    value = op->getOperand(0);
  }
  return value;
}

/// An elementwise expression of one tensor (its leaf) and splat constants,
/// evaluated as a scalar function in f64 (casts and reshapes pass values
/// through: rounding is ignored, the function is what is compared).
class ScalarExpression {
public:
  /// The expression computing `root` from `leaf`, or nullopt when it reads
  /// anything else but splat constants through the ops it knows.
  static std::optional<ScalarExpression> of(Value root, Value leaf) {
    ScalarExpression expression(root, leaf);
    llvm::DenseSet<Value> checked;
    if (!expression.readsOnlyLeaf(root, 0, checked))
      return std::nullopt;
    return expression;
  }

  /// The values `root`'s expression reads, nearest first (breadth first,
  /// at most kMaxCandidates): the candidates for its leaf.
  static SmallVector<Value> candidateLeaves(Value root) {
    SmallVector<Value> values{root};
    for (size_t i = 0; i < values.size() && values.size() < kMaxCandidates;
         ++i) {
      Operation *op = values[i].getDefiningOp();
      if (!op || !isKnown(op))
        continue;
      for (Value operand : op->getOperands())
        if (!splatFloat(operand) && !llvm::is_contained(values, operand))
          values.push_back(operand);
    }
    return values;
  }

  double at(double x) const {
    llvm::DenseMap<Value, double> values;
    return evaluate(root_, x, values);
  }

private:
  ScalarExpression(Value root, Value leaf) : root_(root), leaf_(leaf) {}

  static constexpr int kMaxDepth = 64;
  static constexpr size_t kMaxCandidates = 64;

  static bool isKnown(Operation *op) {
    return isa<AddOp, SubOp, MulOp, DivOp, NegOp, TanhOp, ExpOp, ReshapeOp>(
               op) ||
           (isa<CastOp>(op) &&
            isa<FloatType>(getElementTypeOrSelf(op->getOperand(0).getType())) &&
            isa<FloatType>(getElementTypeOrSelf(op->getResult(0).getType())));
  }

  /// `checked` holds the values already found to read only the leaf (an
  /// expression is a DAG: x^2 feeds several ops).
  bool readsOnlyLeaf(Value value, int depth,
                     llvm::DenseSet<Value> &checked) const {
    if (value == leaf_ || checked.contains(value) || splatFloat(value))
      return true;
    Operation *op = value.getDefiningOp();
    if (depth > kMaxDepth || !op || !isKnown(op) ||
        !llvm::all_of(op->getOperands(), [&](Value operand) {
          return readsOnlyLeaf(operand, depth + 1, checked);
        }))
      return false;
    checked.insert(value);
    return true;
  }

  double evaluate(Value value, double x,
                  llvm::DenseMap<Value, double> &values) const {
    if (value == leaf_)
      return x;
    if (std::optional<double> constant = splatFloat(value))
      return *constant;
    auto known = values.find(value);
    if (known != values.end())
      return known->second;
    Operation *op = value.getDefiningOp();
    auto operand = [&](unsigned i) {
      return evaluate(op->getOperand(i), x, values);
    };
    double result =
        llvm::TypeSwitch<Operation *, double>(op)
            .Case([&](AddOp) { return operand(0) + operand(1); })
            .Case([&](SubOp) { return operand(0) - operand(1); })
            .Case([&](MulOp) { return operand(0) * operand(1); })
            .Case([&](DivOp) { return operand(0) / operand(1); })
            .Case([&](NegOp) { return -operand(0); })
            .Case([&](TanhOp) { return std::tanh(operand(0)); })
            .Case([&](ExpOp) { return std::exp(operand(0)); })
            .Default([&](Operation *) { return operand(0); }); // cast, reshape
    values[value] = result;
    return result;
  }

  Value root_;
  Value leaf_;
};

/// Whether `expression` is the tanh GELU's derivative at its sample points.
bool isGeluTanhDerivative(const ScalarExpression &expression) {
  for (int i = 0; i < kSamplePoints; ++i) {
    double x = -kSampleBound + 2 * kSampleBound * (i + 0.5) / kSamplePoints;
    double expected = geluTanhDerivative(x), actual = expression.at(x);
    if (!(std::abs(actual - expected) <=
          kRelativeTolerance * std::max(1.0, std::abs(expected))))
      return false;
  }
  return true;
}

/// The x of `derivative` = gelu'(x), read back to a value of `gemmType`'s
/// element type and count (through reshapes and a widening cast); null when
/// `derivative` is not GELU's derivative of such a value. The leaf nearest
/// the root wins: x itself may be computed elementwise.
Value geluInputOf(Value derivative, RankedTensorType gemmType) {
  for (Value leaf : ScalarExpression::candidateLeaves(derivative)) {
    Value input = sourceThroughWidening(leaf);
    auto inputType = cast<RankedTensorType>(input.getType());
    if (inputType.getElementType() != gemmType.getElementType() ||
        inputType.getNumElements() != gemmType.getNumElements())
      continue;
    std::optional<ScalarExpression> expression =
        ScalarExpression::of(derivative, leaf);
    if (expression && isGeluTanhDerivative(*expression))
      return input;
  }
  return {};
}

/// Rewrites `product` = dy * gelu'(x) (either operand order) when dy is a
/// matmul the DGELU epilogue can take; returns whether it did.
bool fuseIntoGemm(MulOp product) {
  for (unsigned side : {0u, 1u}) {
    SmallVector<Operation *> path;
    Value cotangent = sourceThroughWidening(product->getOperand(side), &path);
    auto matmul = cotangent.getDefiningOp<MatmulOp>();
    if (!matmul || !matmul.getResult().hasOneUse() ||
        llvm::any_of(
            path, [](Operation *op) { return !op->getResult(0).hasOneUse(); }))
      continue;
    // cuBLASLt's DGELU computes tanh approximately (5.4e-4 relative
    // measured in f32 on the H200): within a 16-bit GEMM's rounding only.
    auto gemmType = cast<RankedTensorType>(matmul.getType());
    // An empty product (K = 0) is 0, as no GEMM step computes it.
    auto lhsType = cast<RankedTensorType>(matmul.getLhs().getType());
    if (gemmType.getRank() != 2 ||
        !isa<BFloat16Type, Float16Type>(gemmType.getElementType()) ||
        gemmType.getDimSize(1) % kAuxAlignment != 0 ||
        lhsType.getNumElements() == 0)
      continue;
    Value input = geluInputOf(product->getOperand(1 - side), gemmType);
    if (!input)
      continue;
    // The input and the matmul's operands are defined before the product.
    OpBuilder builder(product);
    Location loc =
        builder.getFusedLoc({memberLocation(matmul), memberLocation(product)});
    Value aux = input.getType() == gemmType
                    ? input
                    : ReshapeOp::create(builder, loc, gemmType, input);
    Value gradient = LibraryCallOp::create(
        builder, loc, gemmType, GemmEpilogue::dgelu, matmul.getLhs(),
        matmul.getRhs(), /*bias=*/Value(), aux, matmul.getTransposeLhs(),
        matmul.getTransposeRhs(), APFloat(1.0));
    // Reshaped back to the product's shape (genesis-plan-memory aliases a
    // reshape's buffer), then widened.
    auto productType = cast<RankedTensorType>(product.getType());
    if (productType.getShape() != gemmType.getShape())
      gradient = ReshapeOp::create(
          builder, loc, productType.clone(gemmType.getElementType()), gradient);
    if (productType.getElementType() != gemmType.getElementType())
      gradient = CastOp::create(builder, loc, productType, gradient);
    product.replaceAllUsesWith(gradient);
    product.erase();
    for (Operation *op : path)
      op->erase();
    matmul.erase();
    return true;
  }
  return false;
}

struct GenesisFuseGeluGradientPass
    : public genesis::impl::GenesisFuseGeluGradientBase<
          GenesisFuseGeluGradientPass> {
  void runOnOperation() override {
    // Before genesis-fuse: the products are ops of the top-level block.
    Block &body = getOperation().getBody().front();
    SmallVector<MulOp> products;
    for (Operation &op : body)
      if (auto product = dyn_cast<MulOp>(op))
        products.push_back(product);
    bool fused = false;
    for (MulOp product : products)
      fused |= fuseIntoGemm(product);
    if (!fused)
      return;
    // The derivatives' ops, now unread: one sweep from the end erases each
    // after its readers (canonicalization left no other dead op).
    for (Operation &op : llvm::make_early_inc_range(llvm::reverse(body)))
      if (isOpTriviallyDead(&op))
        op.erase();
  }
};

} // namespace
