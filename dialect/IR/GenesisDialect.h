//===- GenesisDialect.h - Genesis dialect -----------------------*- C++ -*-===//
//
// The genesis dialect class and its enums.
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_DIALECT_IR_GENESISDIALECT_H
#define GENESIS_DIALECT_IR_GENESISDIALECT_H

#include "mlir/IR/Dialect.h"

#include "dialect/IR/GenesisDialect.h.inc"
#include "dialect/IR/GenesisEnums.h.inc"

#endif // GENESIS_DIALECT_IR_GENESISDIALECT_H
