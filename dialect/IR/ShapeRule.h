//===- ShapeRule.h - Reporting the shape errors of genesis ops -*- C++ -*-===//
//
// Internal to dialect/IR: the helper every shape rule (inferReturnTypes) of
// the genesis ops reports through, shared by the files that define them.
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_DIALECT_IR_SHAPERULE_H
#define GENESIS_DIALECT_IR_SHAPERULE_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Value.h"

#include <optional>

namespace genesis {

using mlir::ArrayRef;
using mlir::FailureOr;
using mlir::Location;
using mlir::LogicalResult;
using mlir::RankedTensorType;
using mlir::StringRef;
using mlir::Type;
using mlir::Value;

/// Reports shape errors of one op. Inference runs without a location when a
/// caller only probes whether types are valid; then errors stay silent.
class ShapeRule {
public:
  ShapeRule(std::optional<Location> loc, StringRef opName)
      : loc(loc), opName(opName) {}

  template <typename... Args> LogicalResult fail(Args &&...args) const {
    return mlir::emitOptionalError(loc, "'", opName, "' op ",
                                   std::forward<Args>(args)...);
  }

  /// The operand as a ranked tensor type; ODS constraints guarantee this for
  /// verified ops, but the parser and builders infer before verification.
  FailureOr<RankedTensorType> ranked(Value value, StringRef name) const {
    auto type = mlir::dyn_cast<RankedTensorType>(value.getType());
    if (!type || !type.hasStaticShape()) {
      (void)fail(name, " must be a statically shaped ranked tensor, got ",
                 value.getType());
      return mlir::failure();
    }
    return type;
  }

  LogicalResult checkDim(int64_t dim, int64_t rank, StringRef name) const {
    if (dim < 0 || dim >= rank)
      return fail(name, " ", dim, " is out of range for rank ", rank);
    return mlir::success();
  }

  /// `actual` must be the 1-D tensor of size `size` and element type `elt`
  /// (the per-channel weights of the normalisations, GEMM biases).
  LogicalResult checkVector(Value actual, int64_t size, Type elt,
                            StringRef name) const {
    auto expected = RankedTensorType::get({size}, elt);
    if (actual.getType() != expected)
      return fail(name, " must have type ", expected, ", got ",
                  actual.getType());
    return mlir::success();
  }

  LogicalResult checkSameType(Value lhs, Value rhs, StringRef lhsName,
                              StringRef rhsName) const {
    if (lhs.getType() != rhs.getType())
      return fail(lhsName, " and ", rhsName, " must have the same type, got ",
                  lhs.getType(), " and ", rhs.getType());
    return mlir::success();
  }

  /// Three per-dimension attribute arrays (slice bounds, pad amounts) must
  /// each have one entry per dimension of a rank-`rank` operand.
  LogicalResult checkPerDimension(int64_t rank, ArrayRef<int64_t> a,
                                  ArrayRef<int64_t> b, ArrayRef<int64_t> c,
                                  StringRef names) const {
    for (ArrayRef<int64_t> array : {a, b, c})
      if (static_cast<int64_t>(array.size()) != rank)
        return fail(names, " need one entry per dimension of the rank-", rank,
                    " operand");
    return mlir::success();
  }

  LogicalResult checkUnitInterval(double value, StringRef name,
                                  bool closedAbove) const {
    if (!(value >= 0.0 && (closedAbove ? value <= 1.0 : value < 1.0)))
      return fail(name, " must be in [0, 1", closedAbove ? "]" : ")", ", got ",
                  value);
    return mlir::success();
  }

private:
  std::optional<Location> loc;
  StringRef opName;
};

} // namespace genesis

#endif // GENESIS_DIALECT_IR_SHAPERULE_H
