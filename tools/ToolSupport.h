//===- ToolSupport.h - Shared pieces of the genesis tools -------*- C++ -*-===//

#ifndef GENESIS_TOOLS_TOOLSUPPORT_H
#define GENESIS_TOOLS_TOOLSUPPORT_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <string>

namespace genesis {

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
