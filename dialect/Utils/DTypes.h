//===- DTypes.h - MLIR element types and runtime dtypes ---------*- C++ -*-===//

#ifndef GENESIS_DIALECT_UTILS_DTYPES_H
#define GENESIS_DIALECT_UTILS_DTYPES_H

#include "runtime/support/DType.h"

#include "mlir/IR/BuiltinTypes.h"

#include <optional>

namespace genesis {

/// The runtime dtype of a genesis element type; none for a type outside the
/// dialect's set (which verified genesis IR never has).
inline std::optional<DType> toDType(mlir::Type elementType) {
  if (elementType.isF32())
    return DType::F32;
  if (elementType.isF16())
    return DType::F16;
  if (elementType.isBF16())
    return DType::BF16;
  if (elementType.isF64())
    return DType::F64;
  if (elementType.isInteger(1))
    return DType::I1;
  if (elementType.isInteger(32))
    return DType::I32;
  if (elementType.isInteger(64))
    return DType::I64;
  return std::nullopt;
}

} // namespace genesis

#endif // GENESIS_DIALECT_UTILS_DTYPES_H
