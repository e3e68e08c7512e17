//===- Checkpoint.h - Saving and restoring training state -------*- C++ -*-===//
//
// A checkpoint is one .safetensors file holding a session's checkpointed
// tensors (parameters, optimizer state, buffers) under their plan names,
// with "__metadata__":
//
//   genesis.checkpoint_version  kCheckpointVersion
//   genesis.model_hash          the plan's model hash
//   genesis.step                the session's step count
//   genesis.rng_seed            the session's RNG state (Philox seed and
//   genesis.rng_offset          offset)
//
// Saving is atomic (runtime/formats/AtomicFile.h): a crash mid-save leaves the
// previous checkpoint intact. Loading checks everything before it changes
// anything: the version, the model hash, and that the file holds exactly the
// plan's checkpointed tensors with the plan's dtypes and shapes. On any
// error the session is unchanged.
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_RUNTIME_CHECKPOINT_H
#define GENESIS_RUNTIME_CHECKPOINT_H

#include "runtime/session/Session.h"

#include <string>

namespace genesis {

constexpr uint32_t kCheckpointVersion = 1;

void saveCheckpoint(const Session &session, const std::string &path);

void loadCheckpoint(Session &session, const std::string &path);

} // namespace genesis

#endif // GENESIS_RUNTIME_CHECKPOINT_H
