//===- ToolSupport.h - Shared pieces of the genesis tools -------*- C++ -*-===//

#ifndef GENESIS_TOOLS_TOOLSUPPORT_H
#define GENESIS_TOOLS_TOOLSUPPORT_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <string>

namespace genesis {

/// Throws genesis::Error when `path` cannot hold a source that fits in
/// memory: a directory, a device or socket (`/dev/zero` never ends), or a
/// file larger than the machine's memory. "-" (standard input) is refused
/// only when it is such a device and not a terminal. Other problems (a
/// missing file, no permission) are left to the reader, which names them.
void checkSourceFile(const std::string &path);

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
