//===- CudaBackendUnavailable.cpp - CudaBackend without CUDA --------------===//
//
// Compiled instead of CudaBackend.cpp when the runtime is built without the
// CUDA toolkit.
//
//===----------------------------------------------------------------------===//

#include "runtime/cuda/CudaBackend.h"
#include "runtime/support/Error.h"

namespace genesis {

std::unique_ptr<CudaBackend> CudaBackend::create(const PlanFile &,
                                                 const std::string &planWhere,
                                                 const std::string &) {
  throw Error(planWhere +
              ": cannot run a cuda plan: " + cudaUnavailableReason());
}

std::string cudaUnavailableReason() {
  return "this runtime was built without CUDA (no toolkit at /usr/local/cuda)";
}

std::optional<uint32_t> cudaDeviceChip() { return std::nullopt; }

} // namespace genesis
