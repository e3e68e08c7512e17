//===- CudaSessionChecks.cpp - Numerics checks of cuda sessions -----------===//
//
// Session::setCheckNumerics on the device: saving and restoring what a run
// updates in place, finding non-finite values with NonFiniteKernel.h's
// kernels, and the steps of the rerun, one at a time.
//
//===----------------------------------------------------------------------===//

#include "runtime/cuda/CudaSession.h"

namespace genesis::cuda_session {

void CudaSession::saveUpdated(uint32_t index) {
  CurrentContext current(api_, context_.context());
  State &state = *state_;
  DeviceFunction &function = state.functions[index];
  if (function.savedCopies.empty())
    for (uint32_t tensor : function.updatedPersistent)
      function.savedCopies.push_back(
          state.bytes[tensor] == 0 ? 0
                                   : allocate(state, state.bytes[tensor],
                                              "the numerics check's copy of '" +
                                                  state.names[tensor] + "'"));
  for (size_t i = 0; i < function.updatedPersistent.size(); ++i) {
    uint32_t tensor = function.updatedPersistent[i];
    if (state.bytes[tensor] != 0)
      check(api_.cuMemcpyDtoDAsync_v2(function.savedCopies[i],
                                      state.addresses[tensor],
                                      state.bytes[tensor], state.stream.get()),
            "cuMemcpyDtoDAsync",
            function.where + ": saving '" + state.names[tensor] + "'");
  }
}

void CudaSession::restoreUpdated(uint32_t index) {
  CurrentContext current(api_, context_.context());
  State &state = *state_;
  DeviceFunction &function = state.functions[index];
  for (size_t i = 0; i < function.savedCopies.size(); ++i) {
    uint32_t tensor = function.updatedPersistent[i];
    if (state.bytes[tensor] != 0)
      check(api_.cuMemcpyDtoDAsync_v2(state.addresses[tensor],
                                      function.savedCopies[i],
                                      state.bytes[tensor], state.stream.get()),
            "cuMemcpyDtoDAsync",
            function.where + ": restoring '" + state.names[tensor] + "'");
    state.deviceNewer[tensor] = true;
  }
}

std::vector<std::optional<uint64_t>>
CudaSession::findNonFinite(const std::vector<uint32_t> &tensors,
                           NumericsCheck check) {
  CurrentContext current(api_, context_.context());
  State &state = *state_;
  if (!state.nonFiniteFinder)
    state.nonFiniteFinder =
        std::make_unique<cuda::NonFiniteFinder>(api_, sessionWhere_);
  std::vector<cuda::NonFiniteFinder::Region> regions;
  for (uint32_t tensor : tensors)
    regions.push_back({state.addresses[tensor],
                       state.bytes[tensor] / dtypeSize(state.dtypes[tensor]),
                       state.dtypes[tensor]});
  return state.nonFiniteFinder->find(regions, check, state.stream.get(),
                                     sessionWhere_);
}

void CudaSession::prepareSteps(uint32_t index,
                               const std::map<uint32_t, HostArray> &io,
                               uint64_t step, Generator::State rng) {
  CurrentContext current(api_, context_.context());
  DeviceFunction &function = state_->functions[index];
  uploadInputs(function, io);
  feed(function, step, rng);
}

void CudaSession::runStep(uint32_t index, size_t step) {
  CurrentContext current(api_, context_.context());
  enqueue(state_->functions[index].steps[step]);
}

void CudaSession::readBytes(uint32_t tensor, uint64_t offset, void *out,
                            uint64_t bytes) {
  CurrentContext current(api_, context_.context());
  State &state = *state_;
  std::string what = sessionWhere_ + ": reading " + std::to_string(bytes) +
                     " bytes of '" + state.names[tensor] + "'";
  check(api_.cuMemcpyDtoHAsync_v2(out, state.addresses[tensor] + offset, bytes,
                                  state.stream.get()),
        "cuMemcpyDtoHAsync", what);
  check(api_.cuStreamSynchronize(state.stream.get()), "cuStreamSynchronize",
        what);
}

} // namespace genesis::cuda_session
