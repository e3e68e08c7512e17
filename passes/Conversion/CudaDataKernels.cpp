//===- CudaDataKernels.cpp - Data-movement GPU kernels ---------------------===//
//
// Part of genesis-lower-cuda: the transpose emitter.
//
//===----------------------------------------------------------------------===//

#include "dialect/IR/GenesisOps.h"
#include "passes/Conversion/CudaEmitters.h"

namespace genesis::cuda {

bool hasGpuTransposeKernel(Operation *) { return false; }

FailureOr<GpuKernel> emitTransposeKernel(Operation *op, StringRef,
                                         OpBuilder &) {
  return op->emitError("genesis-lower-cuda: no transpose emitter yet");
}

} // namespace genesis::cuda
