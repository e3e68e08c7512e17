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

/// The row shape [rows..., C] of a fusion body that a block per row can
/// compute: it has a reduction; every reduction is an f32 sum or max over
/// the last dimension of an operand of that shape (no reduce_min: the row
/// kernel combines sums and maxima only); a value computed from a reduction
/// reaches the row only through elementwise ops and broadcasts along the
/// last dimension (the block's one reduced scalar then serves all of its
/// columns); every yielded value has the row shape or is per row ([rows...]
/// or [rows..., 1]). std::nullopt for any other body.
std::optional<llvm::SmallVector<int64_t>> rowFusionShape(mlir::Block &body);

} // namespace genesis

#endif // GENESIS_PASSES_ANALYSIS_ROWFUSION_H
