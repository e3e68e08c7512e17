//===- Passes.h - Genesis passes --------------------------------*- C++ -*-===//

#ifndef GENESIS_PASSES_PASSES_H
#define GENESIS_PASSES_PASSES_H

#include "dialect/IR/GenesisDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

#include <memory>

namespace genesis {

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

/// Builds `@<forward>_grad` (see the genesis-autodiff pass) differentiating
/// `forward`'s first result with respect to the arguments `wrt`. Emits a
/// diagnostic and fails when the loss is not a float scalar, an argument is
/// not a float tensor, or a non-differentiable op lies on the path.
mlir::FailureOr<mlir::func::FuncOp>
differentiate(mlir::func::FuncOp forward, llvm::ArrayRef<unsigned> wrt);

/// Builds `@train_step` next to `loss` (see the genesis-train-step pass).
mlir::FailureOr<mlir::func::FuncOp>
buildTrainStep(mlir::func::FuncOp loss, const GenesisTrainStepOptions &options);

#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

} // namespace genesis

#endif // GENESIS_PASSES_PASSES_H
