//===- CudaApi.h - CUDA driver and cuBLASLt, loaded at run time -*- C++ -*-===//
//
// The runtime links neither libcuda nor libcublasLt: binaries built with
// CUDA must still start on machines without a GPU driver (the build and CI
// machines), and libcublasLt is half a gigabyte that CPU-only programs should
// not map. Both libraries are dlopen'ed when the first cuda plan is opened,
// and every function the CUDA backend calls is resolved then, by the
// versioned symbol (cuMemAlloc_v2, ...) whose ABI this toolkit's cuda.h
// declares. Only the backend's sources (runtime/cuda/*.cpp) include this
// header.
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_RUNTIME_CUDAAPI_H
#define GENESIS_RUNTIME_CUDAAPI_H

#include <cublasLt.h>
#include <cuda.h>

#include <string>
#include <utility>

// The driver functions the backend calls, by their exported symbols.
#define GENESIS_CUDA_DRIVER_FUNCTIONS(X)                                       \
  X(cuInit)                                                                    \
  X(cuDriverGetVersion)                                                        \
  X(cuDeviceGet)                                                               \
  X(cuDeviceGetCount)                                                          \
  X(cuDeviceGetAttribute)                                                      \
  X(cuDevicePrimaryCtxRetain)                                                  \
  X(cuDevicePrimaryCtxRelease_v2)                                              \
  X(cuCtxPushCurrent_v2)                                                       \
  X(cuCtxPopCurrent_v2)                                                        \
  X(cuGetErrorName)                                                            \
  X(cuGetErrorString)                                                          \
  X(cuModuleLoadDataEx)                                                        \
  X(cuModuleUnload)                                                            \
  X(cuModuleGetFunction)                                                       \
  X(cuFuncGetParamInfo)                                                        \
  X(cuFuncSetAttribute)                                                        \
  X(cuLaunchKernelEx)                                                          \
  X(cuMemAlloc_v2)                                                             \
  X(cuMemFree_v2)                                                              \
  X(cuMemGetInfo_v2)                                                           \
  X(cuMemcpyHtoDAsync_v2)                                                      \
  X(cuMemcpyDtoHAsync_v2)                                                      \
  X(cuMemcpyDtoDAsync_v2)                                                      \
  X(cuMemsetD8Async)                                                           \
  X(cuMemsetD16Async)                                                          \
  X(cuMemsetD32Async)                                                          \
  X(cuMemsetD2D32Async)                                                        \
  X(cuStreamCreate)                                                            \
  X(cuStreamDestroy_v2)                                                        \
  X(cuStreamSynchronize)                                                       \
  X(cuStreamBeginCapture_v2)                                                   \
  X(cuStreamEndCapture)                                                        \
  X(cuGraphInstantiateWithFlags)                                               \
  X(cuGraphLaunch)                                                             \
  X(cuGraphExecDestroy)                                                        \
  X(cuGraphDestroy)                                                            \
  X(cuEventCreate)                                                             \
  X(cuEventDestroy_v2)                                                         \
  X(cuEventRecord)                                                             \
  X(cuEventElapsedTime_v2)

#define GENESIS_CUBLASLT_FUNCTIONS(X)                                          \
  X(cublasLtCreate)                                                            \
  X(cublasLtDestroy)                                                           \
  X(cublasLtGetStatusName)                                                     \
  X(cublasLtGetStatusString)                                                   \
  X(cublasLtMatmulDescCreate)                                                  \
  X(cublasLtMatmulDescDestroy)                                                 \
  X(cublasLtMatmulDescSetAttribute)                                            \
  X(cublasLtMatrixLayoutCreate)                                                \
  X(cublasLtMatrixLayoutDestroy)                                               \
  X(cublasLtMatrixLayoutSetAttribute)                                          \
  X(cublasLtMatmulPreferenceCreate)                                            \
  X(cublasLtMatmulPreferenceDestroy)                                           \
  X(cublasLtMatmulPreferenceSetAttribute)                                      \
  X(cublasLtMatmulAlgoGetHeuristic)                                            \
  X(cublasLtMatmul)

namespace genesis::cuda {

/// Pointers to the loaded functions, each named after its symbol.
struct Api {
// NOLINTNEXTLINE(bugprone-macro-parentheses): `symbol` is a name, not a value.
#define GENESIS_DECLARE_FUNCTION(symbol) decltype(&::symbol) symbol = nullptr;
  GENESIS_CUDA_DRIVER_FUNCTIONS(GENESIS_DECLARE_FUNCTION)
  GENESIS_CUBLASLT_FUNCTIONS(GENESIS_DECLARE_FUNCTION)
#undef GENESIS_DECLARE_FUNCTION
};

/// Owns a driver or cuBLASLt handle and destroys it with `destroy`.
template <typename Handle, typename Result> class Owned {
public:
  Owned() = default;
  Owned(Handle handle, Result (*destroy)(Handle))
      : handle_(handle), destroy_(destroy) {}
  Owned(Owned &&other) noexcept
      : handle_(std::exchange(other.handle_, nullptr)),
        destroy_(other.destroy_) {}
  Owned &operator=(Owned &&other) noexcept {
    if (this != &other) {
      reset();
      handle_ = std::exchange(other.handle_, nullptr);
      destroy_ = other.destroy_;
    }
    return *this;
  }
  ~Owned() { reset(); }

  Handle get() const { return handle_; }
  explicit operator bool() const { return handle_ != nullptr; }

private:
  void reset() {
    if (handle_)
      destroy_(handle_);
    handle_ = nullptr;
  }

  Handle handle_ = nullptr;
  Result (*destroy_)(Handle) = nullptr;
};

/// The API, loaded on first use (once per process): libcuda.so.1, cuInit, at
/// least one device, a driver for CUDA 13 or later, and libcublasLt.so.13.
/// Throws genesis::Error prefixed by `where` saying which of these failed.
const Api &api(const std::string &where);

/// Whether sessions time the candidate algorithms of cuBLASLt GEMMs and keep
/// the fastest (GENESIS_TUNING is not "0" and the mode is not deterministic).
bool tuningEnabled();

/// Whether sessions run deterministically (GENESIS_DETERMINISTIC is "1";
/// genesis-run and lm-train --deterministic set it): every GEMM takes the
/// heuristic's first algorithm, which depends only on the shape, the GPU
/// and the library, and cuDNN's attention backward its deterministic
/// algorithm (on Hopper the dP-workspace one: b h s_q s_kv 16-bit values of
/// workspace). Genesis's own kernels use no atomics and fixed reduction
/// orders in both modes.
bool deterministicMode();

/// Why api() fails, or "" when it succeeds.
std::string unavailableReason();

/// "CUDA_ERROR_OUT_OF_MEMORY (out of memory)".
std::string resultName(CUresult result);

/// Throws "<what>: <call> failed: <result name>" unless `result` is success.
void check(CUresult result, const char *call, const std::string &what);
void check(cublasStatus_t status, const char *call, const std::string &what);

} // namespace genesis::cuda

#endif // GENESIS_RUNTIME_CUDAAPI_H
