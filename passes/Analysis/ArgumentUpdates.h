//===- ArgumentUpdates.h - Updates written in place -------------*- C++ -*-===//
//
// Which returned values the plan writes straight into the tensor of the
// argument they update (a parameter, an optimizer state): shared by
// genesis-plan-memory, which gives them no arena space, and the plan
// emitter, which binds them to the argument's tensor.
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_PASSES_ANALYSIS_ARGUMENTUPDATES_H
#define GENESIS_PASSES_ANALYSIS_ARGUMENTUPDATES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseSet.h"

namespace genesis {

/// The values of `function`'s return, taken in order, that update an
/// argument in place: the result's `genesis.name` is an argument's and its
/// type the argument's; an op of the top-level block produces it, after
/// every other top-level read of the old argument; that op neither is nor
/// holds a reduction or a GEMM (whose kernels read an operand's other
/// elements after writing results);
/// it is not a splat constant; and no earlier result returned it. (The
/// updates of one genesis-group-optimizer-updates group read no tensor of
/// another's, so only its own update reads an updated argument there.)
llvm::DenseSet<mlir::Value> argumentUpdates(mlir::func::FuncOp function);

} // namespace genesis

#endif // GENESIS_PASSES_ANALYSIS_ARGUMENTUPDATES_H
