//===- GenesisDialect.h - Genesis dialect -----------------------*- C++ -*-===//
//
// The genesis dialect class and its enums.
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_DIALECT_IR_GENESISDIALECT_H
#define GENESIS_DIALECT_IR_GENESISDIALECT_H

#include "mlir/IR/Dialect.h"
#include "mlir/IR/Location.h"

#include <string>

#include "dialect/IR/GenesisDialect.h.inc"
#include "dialect/IR/GenesisEnums.h.inc"

namespace genesis {
/// "file:line:col" of the first file location inside `loc` (traced ops carry
/// the user's C++ call site), or "<unknown location>".
std::string describeLocation(mlir::Location loc);
} // namespace genesis

#endif // GENESIS_DIALECT_IR_GENESISDIALECT_H
