//===- DType.h - Element types of host tensors ------------------*- C++ -*-===//
//
// The element types Genesis tensors can hold, with their textual names (as
// used in type strings such as "f32[2, 3]") and storage sizes.
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_RUNTIME_DTYPE_H
#define GENESIS_RUNTIME_DTYPE_H

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace genesis {

enum class DType : uint8_t { F32, F16, BF16, F64, I1, I32, I64 };

/// Returns "f32", "f16", "bf16", "f64", "i1", "i32" or "i64".
const char *dtypeName(DType dtype);

/// Bytes per element; i1 is stored as one byte holding 0 or 1.
size_t dtypeSize(DType dtype);

/// Inverse of dtypeName; std::nullopt for any other string.
std::optional<DType> parseDType(std::string_view name);

bool isFloatDType(DType dtype);

/// True for i1, i32 and i64.
bool isIntegerDType(DType dtype);

} // namespace genesis

#endif // GENESIS_RUNTIME_DTYPE_H
