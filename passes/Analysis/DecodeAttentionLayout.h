//===- DecodeAttentionLayout.h - How one block runs decode attention -*- C++
//-*-===//
//
// The work split of genesis.decode_attention's CUDA kernel, shared by
// genesis-decode-attention (which forms the op only where the split exists)
// and the decode attention emitter of genesis-lower-cuda (which follows it).
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_PASSES_ANALYSIS_DECODEATTENTIONLAYOUT_H
#define GENESIS_PASSES_ANALYSIS_DECODEATTENTIONLAYOUT_H

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <optional>

namespace genesis {

/// `rowBlocks` blocks per (batch, key/value head) each hold `blockRows` of
/// the `rows` query rows of that head's group (Hq / Hkv heads times S
/// queries; whole heads, so that every block's rows start at a head) and
/// split the T keys over `warps` warps, `keysPerLane` keys per lane (lane l
/// of warp w has keys `(i * warps + w) * 32 + l`, so the first keys, which a
/// decode step sees, spread over all warps): each lane keeps its keys'
/// scores for every row of its block in registers, the warps' outputs are
/// merged through shared memory. The group's rows are split over blocks
/// while the grid stays under one block per SM: each block then reads the
/// head's keys and values again (from L2), but its lanes' chains of
/// multiply-adds and shuffles are `rowBlocks` times shorter (a decode step
/// of Qwen2 ran 2 blocks of 7 rows each).
struct DecodeAttentionLayout {
  int64_t batch = 0, heads = 0, kvHeads = 0, queries = 0, keys = 0;
  int64_t depth = 0, valueDepth = 0;
  int64_t rows = 0;        // (heads / kvHeads) * queries
  int64_t rowBlocks = 0;   // blocks per (batch, key/value head)
  int64_t blockRows = 0;   // rows / rowBlocks, a multiple of queries
  int64_t warps = 0;       // a block of warps * 32 threads
  int64_t keysPerLane = 0; // ceil(keys / (warps * 32))
  /// Shared memory: the rows' queries, two statistics per row and warp, and
  /// each warp's partial outputs.
  int64_t sharedBytes() const {
    return 4 * (blockRows * depth + 2 * blockRows * warps +
                warps * blockRows * valueDepth);
  }
};

/// Blocks of decode attention at most when the rows are split (one per SM
/// of an H100).
inline constexpr int64_t kDecodeAttentionMaxBlocks = 132;
/// Query rows per key/value head at most (a decode step's group of heads;
/// longer prefills are decomposed or run by cuDNN).
inline constexpr int64_t kDecodeAttentionMaxRows = 16;
/// Scores a lane keeps in registers at most (rows x keysPerLane), and
/// output values (rows x ceil(Dv / 32)).
inline constexpr int64_t kDecodeAttentionMaxScores = 64;
/// Multiply-adds the kernel unrolls at most, in the scores (rows x D x
/// keysPerLane) and in the walk over the values (keysPerLane x 32 x rows x
/// ceil(Dv / 32)): the code, and the compile time, grow with them.
inline constexpr int64_t kDecodeAttentionMaxUnrolled = 16384;
/// Static shared memory of the kernel at most (no dynamic opt-in).
inline constexpr int64_t kDecodeAttentionMaxSharedBytes = 48 * 1024;
/// Head dimensions at most.
inline constexpr int64_t kDecodeAttentionMaxDepth = 256;
/// Shared memory for the warps' partial outputs at most.
inline constexpr int64_t kDecodeAttentionMaxPartialBytes = 32 * 1024;

/// The layout for query [B, Hq, S, D], key [B, Hkv, T, D] and value
/// [B, Hkv, T, Dv] (shapes as genesis.attention checks them), or
/// std::nullopt where one block per key/value head cannot hold it, or where
/// there are more queries than keys (a decode step never has; causal
/// queries would then see no key, left to the decomposition).
std::optional<DecodeAttentionLayout>
decodeAttentionLayout(llvm::ArrayRef<int64_t> query,
                      llvm::ArrayRef<int64_t> key,
                      llvm::ArrayRef<int64_t> value);

} // namespace genesis

#endif // GENESIS_PASSES_ANALYSIS_DECODEATTENTIONLAYOUT_H
