//===- GenesisInterfaces.h - Differentiation interfaces ---------*- C++ -*-===//

#ifndef GENESIS_DIALECT_IR_GENESISINTERFACES_H
#define GENESIS_DIALECT_IR_GENESISINTERFACES_H

#include "mlir/IR/OpDefinition.h"

namespace genesis::OpTrait {
/// Marks an op through which no gradient flows (see GenesisInterfaces.td).
template <typename ConcreteType>
class NonDifferentiable
    : public mlir::OpTrait::TraitBase<ConcreteType, NonDifferentiable> {};
} // namespace genesis::OpTrait

#include "dialect/IR/GenesisInterfaces.h.inc"

#endif // GENESIS_DIALECT_IR_GENESISINTERFACES_H
