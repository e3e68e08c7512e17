//===- GenesisExpansions.h - Ops written as simpler ops ---------*- C++ -*-===//
//
// Compound ops rewritten as the elementwise ops and reductions their VJPs
// build, for passes that want the backend to fuse them.
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_DIALECT_IR_GENESISEXPANSIONS_H
#define GENESIS_DIALECT_IR_GENESISEXPANSIONS_H

#include "dialect/IR/GenesisOps.h"

namespace genesis {

/// `norm`'s result built at the insertion point as (x - mean) r w + b, with
/// the row statistics built op for op as LayerNormOp's VJP builds them (so
/// CSE shares them between forward and backward). The ops carry `norm`'s
/// location.
mlir::Value expandLayerNorm(mlir::OpBuilder &builder, LayerNormOp norm);

/// `norm`'s result built at the insertion point as x r w, r = 1/sqrt(mean(x^2)
/// + eps) built as RmsNormOp's VJP builds it; the ops carry `norm`'s
/// location.
mlir::Value expandRmsNorm(mlir::OpBuilder &builder, RmsNormOp norm);

} // namespace genesis

#endif // GENESIS_DIALECT_IR_GENESISEXPANSIONS_H
