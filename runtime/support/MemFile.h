//===- MemFile.h - In-memory files with a path ------------------*- C++ -*-===//
//
// A memfd: an anonymous file in memory that vanishes with the process and
// that a path (/proc/self/fd/N) can name, for readers that take only paths
// (dlopen, MLIR's input file).
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_RUNTIME_SUPPORT_MEMFILE_H
#define GENESIS_RUNTIME_SUPPORT_MEMFILE_H

#include <cstddef>
#include <string>

namespace genesis {

/// A memfd named `name` holding the `size` bytes at `data`, positioned at its
/// start; the caller closes it. Throws genesis::Error starting with `what`.
int createMemFile(const std::string &name, const void *data, size_t size,
                  const std::string &what);

} // namespace genesis

#endif // GENESIS_RUNTIME_SUPPORT_MEMFILE_H
