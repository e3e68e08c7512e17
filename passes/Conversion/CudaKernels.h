//===- CudaKernels.h - Pieces of genesis-lower-cuda -------------*- C++ -*-===//
//
// What genesis-lower-cuda records on each op it gives a kernel, read by the
// plan emitter, and the codegen of the kernel module to a cubin and PTX.
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_PASSES_CONVERSION_CUDAKERNELS_H
#define GENESIS_PASSES_CONVERSION_CUDAKERNELS_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Operation.h"

#include <array>
#include <cstdint>
#include <string>

namespace genesis::cuda {

/// The gpu.module holding every kernel of a lowered module.
inline constexpr const char *kKernelModuleName = "genesis_kernels";

/// A launch: `grid` blocks (x, y, z) of `block` threads (x, y, z) with
/// `sharedMemoryBytes` of dynamic shared memory.
struct Launch {
  std::array<int64_t, 3> grid = {1, 1, 1};
  std::array<int64_t, 3> block = {1, 1, 1};
  int64_t sharedMemoryBytes = 0;
};

/// Records `launch` on `op` as `genesis.launch = #genesis.launch<...>`;
/// emits an error on `op` and fails when the launch exceeds CUDA's limits.
mlir::LogicalResult setLaunchAttr(mlir::Operation *op, const Launch &launch);
/// The launch recorded on `op`, if any.
std::optional<Launch> getLaunchAttr(mlir::Operation *op);

/// The kernel images of one module: a cubin for `chip` and its PTX.
struct KernelImages {
  std::string cubin;
  std::string ptx;
};

/// Lowers the `genesis_kernels` gpu.module of `module` (in place) to NVVM
/// and serialises it with gpu-module-to-binary: PTX always, a cubin through
/// the toolkit's ptxas (found under $GENESIS_CUDA_PATH, else
/// /usr/local/cuda). Index arithmetic is 32-bit (genesis-lower-cuda refuses
/// larger tensors). Emits a diagnostic and fails when a conversion leaves an
/// op behind or ptxas is missing or fails.
mlir::FailureOr<KernelImages>
compileCudaKernels(mlir::ModuleOp module, llvm::StringRef chip = "sm_90");

} // namespace genesis::cuda

#endif // GENESIS_PASSES_CONVERSION_CUDAKERNELS_H
