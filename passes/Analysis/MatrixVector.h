//===- MatrixVector.h - GEMMs that run as matrix-vector kernels -*- C++ -*-===//
//
// Which genesis.library_call GEMMs the CUDA matrix-vector emitter runs (a
// warp per output column), and which fusions of them it runs in one kernel:
// shared by genesis-fuse-matrix-vector (which forms those fusions) and the
// emitter of genesis-lower-cuda (which follows them).
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_PASSES_ANALYSIS_MATRIXVECTOR_H
#define GENESIS_PASSES_ANALYSIS_MATRIXVECTOR_H

#include "dialect/IR/GenesisOps.h"

#include "llvm/ADT/SmallVector.h"

#include <optional>

#include <cstdint>

namespace genesis {

/// The most lhs rows of a matrix-vector product (a decode step's tokens).
inline constexpr int64_t kMaxGemvRows = 8;
/// Warps per block of a matrix-vector kernel; each computes one column.
inline constexpr int64_t kGemvWarps = 8;
/// The most GEMMs one matrix-vector fusion computes.
inline constexpr int64_t kMaxGemvFusionCalls = 8;

/// Elements of one vector load along K: up to 16 bytes, dividing K.
int64_t gemvVectorWidth(mlir::Type element, int64_t depth);

/// The most 16-byte vector loads of the weights one lane of a warp keeps in
/// flight (all unrolled) for the GEMMs it computes together.
inline constexpr int64_t kMaxGemvLoadsPerLane = 64;

/// The vector loads of `call`'s weight row one lane makes.
int64_t gemvLoadsPerLane(LibraryCallOp call);

/// A GEMM whose lhs [M, K] has at most kMaxGemvRows rows against a weight
/// [N, K] (transpose_rhs), in f32, bf16 or f16, with no epilogue or a bias
/// and ReLU, K at most kMaxGemvLoadsPerLane vectors a lane (16384 16-bit
/// values): a read of
/// the weight that cuBLASLt's tiles spread over too few SMs.
bool isMatrixVectorProduct(mlir::Operation *op);

/// The GEMMs of a matrix-vector fusion that one warp computes together
/// (one output column of each) and the yielded values it computes from
/// them: those of `epilogue`, computed element by element from the GEMMs'
/// results at that column.
struct GemvSegment {
  llvm::SmallVector<LibraryCallOp> calls;
  int64_t columns = 0;
  llvm::SmallVector<unsigned> epilogueYields;
};

/// The most bytes of a matrix-vector fusion's lhs that a prologue computes
/// into each block's shared memory.
inline constexpr int64_t kMaxGemvPrologueBytes = 24 * 1024;

/// A fusion computing a matrix-vector fusion's lhs, which every block of the
/// kernel computes into its shared memory before the products (a decode
/// step's residual add and RMSNorm, the cast of attention's output): the
/// lhs is result `lhsResult` of `fusion`, read through a reshape.
struct GemvPrologue {
  FusionOp fusion;
  unsigned lhsResult = 0;
  /// With reductions: the row shape [rows..., C] (rowFusionShape) whose
  /// rows the block computes in turn, `fusion`'s result of that shape. Without:
  /// the result's shape, computed element by element.
  llvm::SmallVector<int64_t> rowShape;
  bool reduces = false;
  /// The indices of the outer fusion's yields of `fusion`'s results, which
  /// the kernel's first block stores.
  llvm::SmallVector<unsigned> yields;
};

/// The prologue that computes `lhsType` (the products' [M, K] lhs) as
/// result `result` of `fusion`, or nothing: `fusion` holds no GEMM or
/// fusion, is a row fusion (rowFusionShape, at most kMaxGemvRows rows, the
/// result a full row) or computes element by element over the result's
/// shape (isElementwiseFusion), and the lhs takes at most
/// kMaxGemvPrologueBytes.
std::optional<GemvPrologue> gemvPrologue(FusionOp fusion, unsigned result,
                                         mlir::RankedTensorType lhsType);

/// What the matrix-vector emitter computes for a fusion.
struct MatrixVectorFusion {
  llvm::SmallVector<GemvSegment> segments;
  std::optional<GemvPrologue> prologue;
};

/// The segments (and prologue) of a matrix-vector fusion
/// (genesis-fuse-matrix-vector), or nothing for any other fusion: its body
/// holds 1 to kMaxGemvFusionCalls matrix-vector products of one lhs whose
/// other operands are body arguments, at most kMaxGemvLoadsPerLane loads a
/// lane in each segment, then elementwise ops, broadcasts, splat constants
/// and reshapes. The lhs is a body argument, or (through a reshape) a
/// result of a nested fusion, the prologue (gemvPrologue), whose results
/// nothing but that reshape and the yield reads. A yield of a GEMM's result
/// is stored from its warp, one of the prologue's by the first block; any
/// other yield is an epilogue value of M * N elements computed from the
/// results of GEMMs of N columns only, read element for element. The GEMMs
/// an epilogue reads form one segment; the others form one segment per
/// column count.
std::optional<MatrixVectorFusion> matrixVectorFusion(FusionOp fusion);

} // namespace genesis

#endif // GENESIS_PASSES_ANALYSIS_MATRIXVECTOR_H
