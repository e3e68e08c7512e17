//===- GenesisDialect.h - Genesis dialect -----------------------*- C++ -*-===//
//
// The genesis dialect class, its enums and attributes.
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_DIALECT_IR_GENESISDIALECT_H
#define GENESIS_DIALECT_IR_GENESISDIALECT_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/Location.h"

#include <string>

#include "dialect/IR/GenesisDialect.h.inc"
#include "dialect/IR/GenesisEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialect/IR/GenesisAttrs.h.inc"

namespace genesis {
/// "file:line:col" of the first file location inside `loc` (traced ops carry
/// the user's C++ call site), or "<unknown location>".
std::string describeLocation(mlir::Location loc);

/// The names of the discardable attributes the compiler puts on ops, which
/// the dialect verifies: the kernel an op runs as (a symbol reference) and
/// its launch (LaunchAttr, CUDA only).
inline constexpr llvm::StringLiteral kKernelAttrName = "genesis.kernel";
inline constexpr llvm::StringLiteral kLaunchAttrName = "genesis.launch";
} // namespace genesis

#endif // GENESIS_DIALECT_IR_GENESISDIALECT_H
