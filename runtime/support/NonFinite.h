//===- NonFinite.h - Finding NaNs and infinities in tensors -----*- C++ -*-===//
//
// What numerics checks look for (Session::setCheckNumerics, genesis-eval
// --check-numerics) and the one bit test every backend applies to it. An
// IEEE float whose bits without the sign are at least those of infinity is
// not finite, and above them it is a NaN; so both checks are an unsigned
// comparison of (bits & magnitudeMask) with a limit, for f16, bf16, f32 and
// f64 alike.
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_RUNTIME_NONFINITE_H
#define GENESIS_RUNTIME_NONFINITE_H

#include "runtime/support/DType.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace genesis {

enum class NumericsCheck : uint8_t {
  Off,
  /// NaNs only: for models that hold infinities by design (a boolean
  /// attention mask becomes -inf, as in PyTorch).
  NaN,
  /// NaNs and infinities.
  NonFinite,
};

/// "off", "nan" or "nonfinite" (the spelling tools accept).
const char *numericsCheckName(NumericsCheck check);
/// Parses numericsCheckName's spellings; anything else is an Error naming
/// `where`.
NumericsCheck parseNumericsCheck(const std::string &text,
                                 const std::string &where);

/// The tools' `--check-numerics[=MODE]`: `value` is what follows the '='
/// (empty for the flag alone, which means NonFinite); `flag` names the
/// option in the error for a bad mode.
NumericsCheck numericsCheckFlag(const std::string &value,
                                const std::string &flag = "--check-numerics");

/// An element of a float dtype, read as an unsigned integer of its size, is
/// reported when (bits & magnitudeMask) >= limit.
struct NonFiniteBits {
  uint64_t magnitudeMask = 0;
  uint64_t limit = 0;
};
/// For f16, bf16, f32 and f64; std::nullopt for other dtypes (which hold no
/// NaN) and for NumericsCheck::Off.
std::optional<NonFiniteBits> nonFiniteBits(DType dtype, NumericsCheck check);

/// The first of `count` elements of `dtype` at `data` that `check` reports.
std::optional<uint64_t> firstNonFinite(const void *data, uint64_t count,
                                       DType dtype, NumericsCheck check);

/// How reports name a found value and where it is: "nan", "inf" or "-inf";
/// element `element` of a row-major `shape` as "[i, j]" ("[]" for a scalar).
std::string nonFiniteName(double value);
std::string elementPosition(const std::vector<int64_t> &shape,
                            uint64_t element);

} // namespace genesis

#endif // GENESIS_RUNTIME_NONFINITE_H
