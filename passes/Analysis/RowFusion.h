//===- RowFusion.h - Which fusions a block per row computes -----*- C++ -*-===//
//
// The shape test shared by genesis-merge-row-fusions (which merges fusions
// while the result passes it) and genesis-lower-cuda's row fusion emitter
// (which takes the fusions that pass it).
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_PASSES_ANALYSIS_ROWFUSION_H
#define GENESIS_PASSES_ANALYSIS_ROWFUSION_H

#include "mlir/IR/Block.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace genesis {

/// The widest row a block per row holds: 1024 threads of 64 values each.
/// The row emitters unroll over a thread's values, so their code, and the
/// compile time, grow with the row; wider rows go to the loop and reduction
/// emitters, whose code does not depend on the sizes.
inline constexpr int64_t kMaxBlockRowColumns = 1024 * 64;

/// The row shape [rows..., C] of a fusion body that a block per row can
/// compute: it has a reduction; every reduction is an f32 sum or max over
/// the last dimension of an operand of that shape (no reduce_min: the row
/// kernel combines sums and maxima only); a value computed from a reduction
/// reaches the row only through elementwise ops and broadcasts along the
/// last dimension (the block's one reduced scalar then serves all of its
/// columns); every yielded value has the row shape or is per row ([rows...]
/// or [rows..., 1]); the row has at most kMaxBlockRowColumns elements.
/// std::nullopt for any other body.
std::optional<llvm::SmallVector<int64_t>> rowFusionShape(mlir::Block &body);

} // namespace genesis

#endif // GENESIS_PASSES_ANALYSIS_ROWFUSION_H
