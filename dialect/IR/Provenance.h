//===- Provenance.h - Where a plan step's ops came from ---------*- C++ -*-===//
//
// A plan step may run many ops: a fusion of forward ops, a VJP's arithmetic,
// the optimizer's updates. Its provenance lists each member's source line
// with the op and the phase, so that a profile or a numerics report can say
// "model.cpp:12 backward of genesis.log" rather than only "model.cpp:12".
//
// The phases come from the locations the passes record: the autodiff pass
// names a VJP's ops "backward:<forward op>" (GenesisGradients.cpp), the
// train-step pass names the optimizer's ops "optimizer", and every fusing
// pass records a member by memberLocation(), a NameLoc of the member's op
// name around its location. A pass that replaces an op by others (a matmul
// by a library call, attention by its decomposition) gives them
// memberLocation(op) too; the innermost name is the one reported, the op the
// user wrote.
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_DIALECT_IR_PROVENANCE_H
#define GENESIS_DIALECT_IR_PROVENANCE_H

#include "mlir/IR/Location.h"
#include "mlir/IR/Operation.h"

#include <string>

namespace genesis {

/// The NameLoc name the train-step pass gives the optimizer's ops.
constexpr const char *kOptimizerLocationName = "optimizer";
/// The prefix of the NameLoc name the autodiff pass gives a VJP's ops.
constexpr const char *kBackwardLocationPrefix = "backward:";
/// At most this many distinct entries, then "and N more".
constexpr unsigned kProvenanceEntries = 6;

/// Distinct entries "<file:line> [backward of ]<op>" (or
/// "optimizer <op>") of `op` and its fused members, joined by "; ", e.g.
///   "model.cpp:12 genesis.log; model.cpp:14 backward of genesis.exp".
std::string describeProvenance(mlir::Operation *op);

/// The location a fusing pass records for member `op`: its location named
/// after its op; a location that already names its members (a fusion's, a
/// FusedLoc) or its op (a NameLoc of an op name) stays as it is.
mlir::Location memberLocation(mlir::Operation *op);

} // namespace genesis

#endif // GENESIS_DIALECT_IR_PROVENANCE_H
