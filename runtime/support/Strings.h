//===- Strings.h - String prefix and suffix tests ---------------*- C++ -*-===//
//
// Prefix and suffix tests (C++20's starts_with/ends_with for C++17), used
// wherever a file name's extension or a tensor name's prefix decides what
// happens.
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_RUNTIME_SUPPORT_STRINGS_H
#define GENESIS_RUNTIME_SUPPORT_STRINGS_H

#include <string>

namespace genesis {

inline bool startsWith(const std::string &text, const std::string &prefix) {
  return text.compare(0, prefix.size(), prefix) == 0;
}

inline bool endsWith(const std::string &text, const std::string &suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

} // namespace genesis

#endif // GENESIS_RUNTIME_SUPPORT_STRINGS_H
