//===- ToolSupport.h - Shared pieces of the genesis tools -------*- C++ -*-===//

#ifndef GENESIS_TOOLS_TOOLSUPPORT_H
#define GENESIS_TOOLS_TOOLSUPPORT_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <cstdint>
#include <string>

namespace genesis {

/// The largest source the tools read. MLIR reads a source whole and the
/// parsed IR takes several times its text, so a limit must hold before any
/// byte is read; Genesis sources keep weights out of the text, so real ones
/// are far smaller.
constexpr uint64_t kMaxSourceBytes = uint64_t(1) << 31;

/// The path through which `path` can be read whole and safely, or throws
/// genesis::Error: a directory, a device or a socket (`/dev/zero` never ends)
/// is refused, and so is a file of more than kMaxSourceBytes (or
/// GENESIS_MAX_SOURCE_BYTES where that is lower). A pipe (standard input or
/// a FIFO), whose size cannot be known, is read here into memory within the
/// same limit (more is refused), and the path returned reads that copy: "-"
/// again for standard input, which now holds it, or "/dev/fd/N" for a FIFO.
/// A terminal on standard input is left as it is. Other problems (a missing
/// file, no permission) are left to the reader, which names them. For
/// genesis-opt, which hands MLIR a path; parseGenesisFile reads a pipe
/// itself.
std::string readableSourcePath(const std::string &path);

/// Parses and verifies a .mlir file with the genesis and func dialects;
/// throws genesis::Error with the first diagnostic ("file:line:col: ...").
mlir::OwningOpRef<mlir::ModuleOp> parseGenesisFile(const std::string &path,
                                                   mlir::MLIRContext &context);

/// The function called `name`, or when `name` is empty the module's only (or
/// first) function; throws genesis::Error listing what exists otherwise.
mlir::func::FuncOp lookupFunction(mlir::ModuleOp module,
                                  const std::string &name);

} // namespace genesis

#endif // GENESIS_TOOLS_TOOLSUPPORT_H
