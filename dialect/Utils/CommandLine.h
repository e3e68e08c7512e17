//===- CommandLine.h - Showing a program's own options ----------*- C++ -*-===//
//
// Programs that link LLVM inherit hundreds of its command-line options
// (--aarch64-neon-syntax, ...); --help should list only the program's own.
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_DIALECT_UTILS_COMMANDLINE_H
#define GENESIS_DIALECT_UTILS_COMMANDLINE_H

#include "llvm/Support/CommandLine.h"

#include <initializer_list>

namespace genesis {

/// Puts `options` in one category named `title` and hides every other
/// option from --help (they still parse). Call before
/// ParseCommandLineOptions.
inline void showOnlyOptions(const char *title,
                            std::initializer_list<llvm::cl::Option *> options) {
  static llvm::cl::OptionCategory category(title);
  for (llvm::cl::Option *option : options)
    option->addCategory(category);
  llvm::cl::HideUnrelatedOptions(category);
}

} // namespace genesis

#endif // GENESIS_DIALECT_UTILS_COMMANDLINE_H
