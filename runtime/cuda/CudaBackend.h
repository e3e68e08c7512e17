//===- CudaBackend.h - The device side of cuda sessions ---------*- C++ -*-===//
//
// A Session keeps what every target shares: the tensor table, the checks of
// inputs and bindings, host copies of the persistent tensors, the step count
// and the RNG state. For a cuda plan it hands the rest to a CudaBackend:
// device memory, kernel modules, cuBLASLt, the stream and the CUDA graphs.
// Session.h describes the behaviour; tensors are named by their index in the
// plan's tensor table and functions by theirs in its function list.
//
// Built with CUDA, CudaBackend.cpp implements it; without, create() throws.
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_RUNTIME_CUDABACKEND_H
#define GENESIS_RUNTIME_CUDABACKEND_H

#include "runtime/plan/PlanFile.h"
#include "runtime/session/Session.h"
#include "runtime/support/HostArray.h"
#include "runtime/support/NonFinite.h"
#include "runtime/support/Random.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace genesis {

class CudaBackend {
public:
  /// Loads the CUDA driver and cuBLASLt (once per process), retains the
  /// primary context of device 0, allocates the arena, the persistent
  /// tensors, the input and output buffers (all zeroed) and, for GEMMs, the
  /// cuBLASLt workspace; loads the kernel images, resolves and checks every
  /// launched kernel and picks every GEMM's algorithm. Messages about the
  /// plan start with `planWhere`, those about running it with
  /// `sessionWhere`.
  static std::unique_ptr<CudaBackend> create(const PlanFile &planFile,
                                             const std::string &planWhere,
                                             const std::string &sessionWhere);
  virtual ~CudaBackend() = default;

  /// Copies `value` into the device storage of persistent tensor `tensor`.
  virtual void upload(uint32_t tensor, const HostArray &value) = 0;
  /// Copies persistent tensor `tensor` into `mirror` when a run may have
  /// changed it since the last upload or download.
  virtual void download(uint32_t tensor, HostArray &mirror) = 0;

  /// Runs `function` and waits for it: copies the input-role arrays of `io`
  /// to their device buffers, feeds the step and RNG tensors with `step` and
  /// `rng`, executes the steps and copies the function's output-role and
  /// updated input-role tensors back into `io`.
  virtual void run(uint32_t function, std::map<uint32_t, HostArray> &io,
                   uint64_t step, Generator::State rng) = 0;
  /// Enqueues one more execution of `function` on its device buffers as the
  /// last execution left them, feeding `step` and `rng`; does not wait.
  virtual void replay(uint32_t function, uint64_t step,
                      Generator::State rng) = 0;
  /// Waits for everything enqueued.
  virtual void synchronize() = 0;

  // Numerics checks (Session::setCheckNumerics).
  /// Keeps a device copy of the persistent tensors `function` updates in
  /// place (allocated on first use and kept), for restoreUpdated().
  virtual void saveUpdated(uint32_t function) = 0;
  virtual void restoreUpdated(uint32_t function) = 0;
  /// Per tensor, the first element `check` reports, after the work queued.
  virtual std::vector<std::optional<uint64_t>>
  findNonFinite(const std::vector<uint32_t> &tensors, NumericsCheck check) = 0;
  /// For a rerun step by step: copies the input-role arrays of `io` and
  /// feeds `step` and `rng` as run() does, and executes nothing; runStep
  /// then enqueues step `step` of the function alone (no graph).
  virtual void prepareSteps(uint32_t function,
                            const std::map<uint32_t, HostArray> &io,
                            uint64_t step, Generator::State rng) = 0;
  virtual void runStep(uint32_t function, size_t step) = 0;
  /// Copies `bytes` bytes at `offset` of tensor `tensor` into `out`.
  virtual void readBytes(uint32_t tensor, uint64_t offset, void *out,
                         uint64_t bytes) = 0;

  virtual void setProfiling(bool on) = 0;
  virtual SessionStats stats() const = 0;
  virtual void resetStats() = 0;
};

} // namespace genesis

#endif // GENESIS_RUNTIME_CUDABACKEND_H
