//===- Evaluator.h - Reference evaluator of the genesis dialect -*- C++ -*-===//
//
// Interprets a genesis function on host arrays in plain C++, like XLA's
// HloEvaluator. Every op computes in f64 (int64 for integer tensors) and
// rounds once to its result element type, so f32/f16/bf16 results of the
// basic arithmetic ops are the correctly rounded IEEE values and reductions
// are more accurate than any backend's. It is the oracle for finite-difference
// gradient checks and for every backend.
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_DIALECT_EVALUATOR_EVALUATOR_H
#define GENESIS_DIALECT_EVALUATOR_EVALUATOR_H

#include "runtime/support/HostArray.h"
#include "runtime/support/NonFinite.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"

#include <string>
#include <vector>

namespace genesis {

/// The runtime dtype of a genesis element type; throws genesis::Error for a
/// type outside the dialect's set.
DType dtypeOf(mlir::Type elementType);

/// The MLIR element type of a runtime dtype.
mlir::Type elementTypeOf(mlir::MLIRContext *context, DType dtype);

/// "f32[2, 3]", the notation HostArray::typeString uses.
std::string typeString(mlir::RankedTensorType type);

/// A value of a constant attribute as a host array.
HostArray toHostArray(mlir::ElementsAttr value);

/// Runs `function` on `arguments` (one per function argument, whose dtype and
/// shape must match) and returns its results. Throws genesis::Error naming
/// the argument or the op (with its source location) on bad input or a
/// run-time error such as an out-of-range index. With a numerics check, an
/// op whose result holds a value the check reports (NonFinite.h) is an
/// error naming the op, its provenance (source line, forward or backward)
/// and the element: the first such op, the evaluator running one op at a
/// time.
std::vector<HostArray> evaluate(mlir::func::FuncOp function,
                                const std::vector<HostArray> &arguments,
                                NumericsCheck check = NumericsCheck::Off);

} // namespace genesis

#endif // GENESIS_DIALECT_EVALUATOR_EVALUATOR_H
