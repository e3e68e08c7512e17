//===- CublasLtGemm.h - A plan's GEMM steps through cuBLASLt ---*- C++ -*-===//
//
// A plan's Gemm step is one cuBLASLt matmul whose descriptor, layouts and
// candidate algorithms are made when the session loads. cuBLASLt's heuristic
// ranks algorithms without running them, and its first choice is not always
// the fastest on the device at hand; so the first time a step runs, its best
// few candidates are timed on the step's own operands and the fastest is kept
// for every GEMM of the same shape, layout and epilogue (as XLA's and
// PyTorch's GEMM autotuning do). GENESIS_TUNING=0 keeps the heuristic's
// first choice, so that every session of a plan runs the same algorithms.
//
// Only runtime/cuda/CudaBackend.cpp includes this header.
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_RUNTIME_CUBLASLTGEMM_H
#define GENESIS_RUNTIME_CUBLASLTGEMM_H

#include "runtime/cuda/CudaApi.h"
#include "runtime/plan/PlanFile.h"
#include "runtime/support/DType.h"

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace genesis::cuda {

using MatmulDesc = Owned<cublasLtMatmulDesc_t, cublasStatus_t>;
using MatrixLayout = Owned<cublasLtMatrixLayout_t, cublasStatus_t>;

/// The device addresses of a Gemm step's tensors (0 for those it lacks).
struct GemmAddresses {
  CUdeviceptr a = 0, b = 0, c = 0, bias = 0, aux = 0;
};

/// Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T, so
/// cuBLASLt's A is the plan's b and its B the plan's a; its D is c (n x m
/// column-major), whose rows are the bias vector's n elements.
struct GemmStep {
  MatmulDesc desc;
  MatrixLayout layoutA;
  MatrixLayout layoutB;
  MatrixLayout layoutC;
  /// The heuristic's algorithms, best first, each with its workspace bytes.
  std::vector<cublasLtMatmulHeuristicResult_t> candidates;
  /// The candidate that runs.
  size_t chosen = 0;
  /// Whether the candidates may be timed on the step's operands: not when C
  /// is also read (beta != 0), since each timed run would change it.
  bool tunable = false;
  /// Sizes, transposes, strides, epilogue, dtype and alignments: steps of
  /// one key share a choice.
  std::string key;
  CUdeviceptr a = 0;
  CUdeviceptr b = 0;
  CUdeviceptr c = 0;
  /// alpha and beta in the scale type (f64 for f64 GEMMs, else f32).
  std::array<unsigned char, 8> alpha{};
  std::array<unsigned char, 8> beta{};
};

/// The step of `gemm` (operands of `dtype`) on `handle`, with a workspace of
/// at most `workspaceBytes`. Throws, naming `what`, when cuBLASLt has no
/// algorithm for it.
GemmStep prepareGemm(const Api &api, cublasLtHandle_t handle,
                     const plan::Gemm &gemm, DType dtype,
                     const GemmAddresses &addresses, uint64_t workspaceBytes,
                     const std::string &what);

/// Enqueues `step`'s chosen algorithm on `stream`.
void enqueueGemm(const Api &api, cublasLtHandle_t handle, const GemmStep &step,
                 CUdeviceptr workspace, CUstream stream,
                 const std::string &where);

/// The fastest candidate of each key, found by timing the first step of it.
class GemmTuner {
public:
  /// Sets `step.chosen`: the choice made for its key before, or the fastest
  /// of its candidates, each run kTimedRuns times on `stream` after a
  /// warm-up, in two interleaved rounds (the shorter of its two times
  /// counts). Leaves C holding what a run writes and the stream idle; does
  /// nothing to an untunable step or one with a single candidate.
  void tune(const Api &api, cublasLtHandle_t handle, GemmStep &step,
            CUdeviceptr workspace, CUstream stream, const std::string &where);

private:
  std::map<std::string, size_t> choices_;
};

} // namespace genesis::cuda

#endif // GENESIS_RUNTIME_CUBLASLTGEMM_H
