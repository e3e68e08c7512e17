//===- GenesisOps.h - Genesis dialect ops -----------------------*- C++ -*-===//
//
// The op classes generated from GenesisOps.td.
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_DIALECT_IR_GENESISOPS_H
#define GENESIS_DIALECT_IR_GENESISOPS_H

#include "dialect/IR/GenesisDialect.h"
#include "dialect/IR/GenesisInterfaces.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "dialect/IR/GenesisOps.h.inc"

#endif // GENESIS_DIALECT_IR_GENESISOPS_H
