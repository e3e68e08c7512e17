//===- NonFiniteKernel.h - Finding NaNs and infinities on the GPU -*- C++
//-*-===//
//
// The device side of numerics checks (Session::setCheckNumerics): one small
// kernel per element width, written in PTX here so that the runtime needs no
// compiler, finds the first element of a tensor whose bits fail
// NonFinite.h's test. Each thread strides over the tensor and lowers a
// 64-bit word to the smallest failing index with an atomic min, so the
// answer is the first index whatever the schedule. Only the backend's
// sources include this header; the context must be current.
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_RUNTIME_NONFINITEKERNEL_H
#define GENESIS_RUNTIME_NONFINITEKERNEL_H

#include "runtime/cuda/CudaApi.h"
#include "runtime/support/DType.h"
#include "runtime/support/NonFinite.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace genesis::cuda {

class NonFiniteFinder {
public:
  /// Loads the kernels (JIT-compiled by the driver for the device).
  NonFiniteFinder(const Api &api, const std::string &where);
  ~NonFiniteFinder();
  NonFiniteFinder(const NonFiniteFinder &) = delete;
  NonFiniteFinder &operator=(const NonFiniteFinder &) = delete;

  struct Region {
    CUdeviceptr address;
    uint64_t count;
    DType dtype;
  };
  /// For each region, the first element `check` reports, or std::nullopt
  /// (always for integer dtypes). Enqueued on `stream` after the work
  /// already there, and waited for.
  std::vector<std::optional<uint64_t>> find(const std::vector<Region> &regions,
                                            NumericsCheck check,
                                            CUstream stream,
                                            const std::string &where);

private:
  const Api &api_;
  CUmodule module_ = nullptr;
  /// For elements of 2, 4 and 8 bytes.
  CUfunction kernels_[3] = {};
  /// One 64-bit answer per region of the largest find() so far.
  CUdeviceptr answers_ = 0;
  size_t answerCapacity_ = 0;
};

} // namespace genesis::cuda

#endif // GENESIS_RUNTIME_NONFINITEKERNEL_H
