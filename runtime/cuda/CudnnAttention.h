//===- CudnnAttention.h - Fused attention steps through cuDNN -*- C++ -*-===//
//
// A plan's Attention steps run cuDNN's fused flash attention (the kernels
// llm.c and XLA call), built with cudnn-frontend's graph API. libcudnn.so.9
// is dlopen'ed when the first session with such a step is created, so
// binaries still start, and plans without attention still run, where cuDNN is
// missing. One execution plan is built per distinct shape when the session
// loads and reused by every step of that shape.
//
// Only runtime/cuda/CudaBackend.cpp includes this header.
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_RUNTIME_CUDNNATTENTION_H
#define GENESIS_RUNTIME_CUDNNATTENTION_H

#include "runtime/plan/PlanFile.h"
#include "runtime/support/DType.h"

#include <cuda.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>

namespace genesis::cuda {

/// The device addresses an attention step reads and writes, in this order.
/// A forward step uses the first five.
enum AttentionOperand {
  kQuery,
  kKey,
  kValue,
  kOut,
  kLogSumExp,
  kOutGrad,
  kQueryGrad,
  kKeyGrad,
  kValueGrad,
  kAttentionOperandCount
};
using AttentionPointers = std::array<CUdeviceptr, kAttentionOperandCount>;

/// A cuDNN handle bound to one stream and the execution plans built on it.
class CudnnAttention {
public:
  /// Loads cuDNN (once per process) and creates a handle that enqueues on
  /// `stream`. Throws genesis::Error prefixed by `where` when cuDNN is
  /// missing, too old, or this runtime was built without cudnn-frontend.
  CudnnAttention(CUstream stream, const std::string &where);
  ~CudnnAttention();
  CudnnAttention(const CudnnAttention &) = delete;
  CudnnAttention &operator=(const CudnnAttention &) = delete;

  /// Builds the execution plan for the sizes of `step` (its tensors of
  /// `dtype`, bf16 or f16) unless one exists; returns its index. Throws,
  /// naming `where` and the shape, when cuDNN supports none.
  size_t prepare(const AttentionDesc &step, DType dtype,
                 const std::string &where);
  /// Scratch bytes that plan `index` needs during a run.
  uint64_t workspaceBytes(size_t index) const;
  /// Enqueues plan `index` on the stream.
  void run(size_t index, const AttentionPointers &pointers,
           CUdeviceptr workspace, const std::string &where);

  /// Why cuDNN cannot be used here, or "" when it can.
  static std::string unavailableReason();

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace genesis::cuda

#endif // GENESIS_RUNTIME_CUDNNATTENTION_H
