//===- DecodeAttentionLayout.cpp - How one block runs decode attention ----===//

#include "passes/Analysis/DecodeAttentionLayout.h"

#include <algorithm>

namespace genesis {

std::optional<DecodeAttentionLayout>
decodeAttentionLayout(llvm::ArrayRef<int64_t> query,
                      llvm::ArrayRef<int64_t> key,
                      llvm::ArrayRef<int64_t> value) {
  if (query.size() != 4 || key.size() != 4 || value.size() != 4 ||
      key[1] <= 0 || query[1] % key[1] != 0)
    return std::nullopt;
  DecodeAttentionLayout layout;
  layout.batch = query[0];
  layout.heads = query[1];
  layout.queries = query[2];
  layout.depth = query[3];
  layout.kvHeads = key[1];
  layout.keys = key[2];
  layout.valueDepth = value[3];
  layout.rows = layout.heads / layout.kvHeads * layout.queries;
  if (layout.batch <= 0 || layout.rows <= 0 || layout.keys <= 0 ||
      layout.rows > kDecodeAttentionMaxRows || layout.depth <= 0 ||
      layout.depth > kDecodeAttentionMaxDepth || layout.valueDepth <= 0 ||
      layout.valueDepth > kDecodeAttentionMaxDepth ||
      layout.queries > layout.keys)
    return std::nullopt;
  // The most blocks per (batch, key/value head) under one block per SM,
  // splitting the group's heads evenly.
  int64_t group = layout.heads / layout.kvHeads;
  layout.rowBlocks = 1;
  for (int64_t split = group; split > 1; --split)
    if (group % split == 0 &&
        layout.batch * layout.kvHeads * split <= kDecodeAttentionMaxBlocks) {
      layout.rowBlocks = split;
      break;
    }
  layout.blockRows = layout.rows / layout.rowBlocks;
  // About 64 keys a warp (2 a lane): the warps' loads are in flight
  // together; the warps' partial outputs bound their count.
  int64_t partialBytesPerWarp = 4 * layout.blockRows * layout.valueDepth;
  layout.warps = std::clamp<int64_t>(
      std::min<int64_t>((layout.keys + 63) / 64,
                        kDecodeAttentionMaxPartialBytes / partialBytesPerWarp),
      1, 32);
  layout.keysPerLane =
      (layout.keys + layout.warps * 32 - 1) / (layout.warps * 32);
  // Registers: a lane's scores, and its share of the output rows (a lane
  // per output column, 32 columns apart).
  if (layout.blockRows * layout.keysPerLane > kDecodeAttentionMaxScores ||
      layout.blockRows * ((layout.valueDepth + 31) / 32) >
          kDecodeAttentionMaxScores)
    return std::nullopt;
  // Code: the kernel unrolls a lane's scores and its warp's walk over the
  // values.
  if (layout.blockRows * layout.depth * layout.keysPerLane >
          kDecodeAttentionMaxUnrolled ||
      layout.keysPerLane * 32 * layout.blockRows *
              ((layout.valueDepth + 31) / 32) >
          kDecodeAttentionMaxUnrolled)
    return std::nullopt;
  // The kernel's shared buffers are static: 48 KiB at most.
  if (layout.sharedBytes() > kDecodeAttentionMaxSharedBytes)
    return std::nullopt;
  return layout;
}

} // namespace genesis
