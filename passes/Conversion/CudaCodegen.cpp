//===- CudaCodegen.cpp - GPU kernels to a cubin and PTX -------------------===//
//
// Lowers the gpu.module genesis-lower-cuda filled (scf/arith/math/vector/gpu
// on memrefs) to NVVM with upstream conversions, then serialises it twice
// with gpu-module-to-binary: to PTX (no toolkit needed) and to a cubin for
// the chip through ptxas. Math functions become libdevice calls, which the
// NVVM target links from the toolkit.
//
//===----------------------------------------------------------------------===//

#include "dialect/IR/GenesisDialect.h"
#include "passes/Conversion/CudaKernels.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVM.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVM.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

using namespace mlir;

namespace genesis::cuda {

LogicalResult setLaunchAttr(Operation *op, const Launch &launch) {
  auto attr = LaunchAttr::getChecked(
      [&] { return op->emitOpError("genesis-lower-cuda: "); }, op->getContext(),
      ArrayRef<int64_t>(launch.grid), ArrayRef<int64_t>(launch.block),
      launch.sharedMemoryBytes);
  if (!attr)
    return failure();
  op->setAttr(kLaunchAttrName, attr);
  return success();
}

std::optional<Launch> getLaunchAttr(Operation *op) {
  auto attr = op->getAttrOfType<LaunchAttr>(kLaunchAttrName);
  if (!attr)
    return std::nullopt;
  Launch launch;
  llvm::copy(attr.getGrid(), launch.grid.begin());
  llvm::copy(attr.getBlock(), launch.block.begin());
  launch.sharedMemoryBytes = attr.getShared();
  return launch;
}

namespace {

/// Without these the conversions silently leave ops of other dialects
/// behind, and serialisation cannot translate NVVM to LLVM IR.
void registerCudaInterfaces(MLIRContext *context) {
  DialectRegistry registry;
  arith::registerConvertArithToLLVMInterface(registry);
  cf::registerConvertControlFlowToLLVMInterface(registry);
  registerConvertFuncToLLVMInterface(registry);
  index::registerConvertIndexToLLVMInterface(registry);
  registerConvertMathToLLVMInterface(registry);
  registerConvertMemRefToLLVMInterface(registry);
  ub::registerConvertUBToLLVMInterface(registry);
  vector::registerConvertVectorToLLVMInterface(registry);
  registerConvertNVVMToLLVMInterface(registry);
  NVVM::registerConvertGpuToNVVMInterface(registry);
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
  registerGPUDialectTranslation(registry);
  context->appendDialectRegistry(registry);
  context->loadDialect<NVVM::NVVMDialect, LLVM::LLVMDialect>();
}

std::string toolkitPath() {
  const char *path = std::getenv("GENESIS_CUDA_PATH");
  return path && *path ? path : "/usr/local/cuda";
}

/// Serialises the (lowered) gpu.module of a clone of `module` in `format`
/// ("isa": PTX) and returns the object's bytes.
FailureOr<std::string> serialize(ModuleOp module, StringRef format) {
  OwningOpRef<ModuleOp> copy = module.clone();
  PassManager pm(module.getContext());
  GpuModuleToBinaryPassOptions options;
  options.toolkitPath = toolkitPath();
  options.compilationTarget = format.str();
  pm.addPass(createGpuModuleToBinaryPass(options));
  if (failed(pm.run(*copy)))
    return failure();
  std::string bytes;
  copy->walk([&](gpu::BinaryOp binary) {
    auto object = cast<gpu::ObjectAttr>(binary.getObjects()[0]);
    bytes = object.getObject().getValue().str();
  });
  if (bytes.empty())
    return module.emitError("genesis cuda codegen: gpu-module-to-binary "
                            "produced no ")
           << format << " object";
  return bytes;
}

/// A temporary file removed when it goes out of scope.
struct TemporaryFile {
  llvm::SmallString<128> path;
  ~TemporaryFile() {
    if (!path.empty())
      llvm::sys::fs::remove(path);
  }
};

/// Assembles `ptx` into a cubin for `chip` with ptxas at -O3 (the command
/// gpu-module-to-binary's "bin" format runs, on every core) and returns its
/// bytes; a failure names ptxas's own message.
FailureOr<std::string> assemble(ModuleOp module, const std::string &ptxas,
                                StringRef ptx, StringRef chip) {
  TemporaryFile input, output, log;
  auto fail = [&](const Twine &message) {
    return module.emitError("genesis cuda codegen: ") << message;
  };
  if (llvm::sys::fs::createTemporaryFile("genesis-kernels", "ptx",
                                         input.path) ||
      llvm::sys::fs::createTemporaryFile("genesis-kernels", "cubin",
                                         output.path) ||
      llvm::sys::fs::createTemporaryFile("genesis-ptxas", "log", log.path))
    return fail("cannot create temporary files for ptxas");
  {
    std::error_code error;
    llvm::raw_fd_ostream os(input.path, error);
    if (error)
      return fail("cannot write " + input.path + ": " + error.message());
    os << ptx;
    os.close();
    if (os.has_error()) {
      std::string message = os.error().message();
      os.clear_error();
      return fail("cannot write " + input.path + ": " + message);
    }
  }
  std::string arch = chip.str();
  // --split-compile 0 optimises the kernels on every core: the same
  // machine code for each kernel (checked on GPT-2's 63), a cubin laid
  // out differently from one thread's. (ptxas of CUDA 13, which the
  // project requires, has the option.)
  SmallVector<StringRef> arguments = {
      ptxas,       "-arch",       arch, input.path,        "-o",
      output.path, "--opt-level", "3",  "--split-compile", "0"};
  std::optional<StringRef> redirects[] = {StringRef(""), log.path, log.path};
  std::string error;
  int status = llvm::sys::ExecuteAndWait(ptxas, arguments, std::nullopt,
                                         redirects, 0, 0, &error);
  if (status != 0) {
    auto message = llvm::MemoryBuffer::getFile(log.path);
    return fail(
        "ptxas failed (" +
        (error.empty() ? "exit status " + std::to_string(status) : error) +
        ")" + (message ? ": " + (*message)->getBuffer().rtrim() : ""));
  }
  auto cubin = llvm::MemoryBuffer::getFile(output.path, /*IsText=*/false,
                                           /*RequiresNullTerminator=*/false);
  if (!cubin || (*cubin)->getBufferSize() == 0)
    return fail("ptxas wrote no cubin to " + output.path);
  return (*cubin)->getBuffer().str();
}

} // namespace

FailureOr<KernelImages> compileCudaKernels(ModuleOp module, StringRef chip) {
  MLIRContext *context = module.getContext();
  registerCudaInterfaces(context);
  auto gpuModule = module.lookupSymbol<gpu::GPUModuleOp>(kKernelModuleName);
  if (!gpuModule)
    return module.emitError("genesis cuda codegen: the module has no @")
           << kKernelModuleName << " gpu.module";

  PassManager pm(context);
  GpuNVVMAttachTargetOptions target;
  target.chip = chip.str();
  target.optLevel = 3;
  pm.addPass(createGpuNVVMAttachTarget(target));
  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  kernels.addPass(createSCFToControlFlowPass());
  kernels.addPass(memref::createExpandStridedMetadataPass());
  kernels.addPass(createLowerAffinePass());
  ConvertGpuOpsToNVVMOpsOptions nvvm;
  nvvm.indexBitwidth = 32;
  nvvm.useBarePtrCallConv = true;
  // gpu.subgroup_reduce of i32 becomes one redux.sync (sm_80 and newer).
  nvvm.hasRedux = true;
  kernels.addPass(createConvertGpuOpsToNVVMOps(nvvm));
  kernels.addPass(createCanonicalizerPass());
  kernels.addPass(createCSEPass());
  kernels.addPass(createReconcileUnrealizedCastsPass());
  if (failed(pm.run(module)))
    return failure();
  // Anything not in the LLVM or NVVM dialects now was left behind.
  Operation *leftover = nullptr;
  gpuModule.walk([&](Operation *op) {
    if (op == gpuModule.getOperation() || leftover)
      return;
    StringRef dialect =
        op->getDialect() ? op->getDialect()->getNamespace() : "";
    if (dialect != "llvm" && dialect != "nvvm")
      leftover = op;
  });
  if (leftover)
    return leftover->emitError("genesis cuda codegen: '")
           << leftover->getName() << "' was not lowered to NVVM";

  KernelImages images;
  FailureOr<std::string> ptx = serialize(module, "isa");
  if (failed(ptx))
    return failure();
  images.ptx = std::move(*ptx);
  std::string ptxas = toolkitPath() + "/bin/ptxas";
  if (!llvm::sys::fs::can_execute(ptxas))
    return module.emitError("genesis cuda codegen: ptxas not found at ")
           << ptxas << " (set GENESIS_CUDA_PATH to the CUDA toolkit)";
  FailureOr<std::string> cubin = assemble(module, ptxas, images.ptx, chip);
  if (failed(cubin))
    return failure();
  images.cubin = std::move(*cubin);
  return images;
}

} // namespace genesis::cuda
