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
#include <vector>

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

/// One build of the kernel module: for the chip of compute capability
/// `chip` (90: sm_90).
struct KernelImage {
  uint32_t chip = 0;
  std::string bytes;
  /// Every kernel waits (griddepcontrol.wait, chips from
  /// kFirstProgrammaticLaunchChip on) before it touches memory that earlier
  /// kernels may write: the session may launch it with programmatic
  /// dependent launch.
  bool waitsForPrerequisiteGrids = false;
};

/// The builds of one kernel module: a cubin per chip, and the PTX of the
/// oldest chip, which the driver compiles for any later chip.
struct KernelImages {
  std::vector<KernelImage> cubins;
  KernelImage ptx;
};

/// Lowers the `genesis_kernels` gpu.module of `module` (in place) to NVVM
/// and serialises it with gpu-module-to-binary to PTX for each of `chips`
/// (compute capabilities, ascending; isSupportedChip), which the toolkit's
/// ptxas (found under $GENESIS_CUDA_PATH, else /usr/local/cuda) assembles
/// into a cubin for that chip. Index arithmetic is 32-bit
/// (genesis-lower-cuda refuses larger tensors). Emits a diagnostic and
/// fails when a conversion leaves an op behind, a chip is not supported or
/// ptxas is missing or fails.
mlir::FailureOr<KernelImages>
compileCudaKernels(mlir::ModuleOp module, llvm::ArrayRef<uint32_t> chips);

} // namespace genesis::cuda

#endif // GENESIS_PASSES_CONVERSION_CUDAKERNELS_H
