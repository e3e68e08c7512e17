//===- Strings.h - String prefix and suffix tests ---------------*- C++ -*-===//
//
// Prefix and suffix tests (C++20's starts_with/ends_with for C++17), used
// wherever a file name's extension or a tensor name's prefix decides what
// happens.
//
// A byte size as users write it ("7GiB", "6500MiB", "123456") for memory
// options.
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_RUNTIME_SUPPORT_STRINGS_H
#define GENESIS_RUNTIME_SUPPORT_STRINGS_H

#include "runtime/support/Error.h"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>

namespace genesis {

inline bool startsWith(const std::string &text, const std::string &prefix) {
  return text.compare(0, prefix.size(), prefix) == 0;
}

inline bool endsWith(const std::string &text, const std::string &suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// Bytes of `text`: a non-negative decimal number followed by nothing (bytes)
/// or a binary unit, KiB, MiB or GiB (also K, M, G); fractions round down.
/// std::nullopt for anything else or 2^62 bytes and more.
inline std::optional<int64_t> parseByteSize(const std::string &text) {
  const char *begin = text.c_str();
  char *end = nullptr;
  if (text.empty() || !(text[0] >= '0' && text[0] <= '9'))
    return std::nullopt;
  double number = std::strtod(begin, &end);
  std::string unit(end);
  double scale = 0;
  if (unit.empty())
    scale = 1;
  else if (unit == "KiB" || unit == "K")
    scale = 1024.0;
  else if (unit == "MiB" || unit == "M")
    scale = 1024.0 * 1024.0;
  else if (unit == "GiB" || unit == "G")
    scale = 1024.0 * 1024.0 * 1024.0;
  double bytes = number * scale;
  if (scale == 0 || !std::isfinite(bytes) || bytes >= std::ldexp(1.0, 62))
    return std::nullopt;
  return static_cast<int64_t>(bytes);
}

/// The bytes of a `--memory-budget` flag's value (parseByteSize): 0 for an
/// empty value (no budget); throws Error naming the flag otherwise.
inline int64_t memoryBudgetFlag(const std::string &text) {
  if (text.empty())
    return 0;
  std::optional<int64_t> bytes = parseByteSize(text);
  if (!bytes)
    throw Error("--memory-budget must be a size such as 6GiB, 6500MiB or a "
                "number of bytes, got '" +
                text + "'");
  return *bytes;
}

} // namespace genesis

#endif // GENESIS_RUNTIME_SUPPORT_STRINGS_H
