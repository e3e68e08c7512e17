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
#include "passes/Passes.h"
#include "runtime/plan/PlanFile.h"
#include "runtime/session/Session.h"
#include "runtime/support/Error.h"

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

#include <algorithm>
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

} // namespace genesis::cuda

namespace genesis {

/// The chips of isSupportedChip, ascending.
static constexpr uint32_t kSupportedChips[] = {80,  86,  87,  89, 90,
                                               100, 103, 120, 121};

bool isSupportedChip(uint32_t chip) {
  return llvm::is_contained(kSupportedChips, chip);
}

std::string supportedChipList() {
  std::string list;
  for (uint32_t chip : kSupportedChips)
    list += (list.empty() ? "sm_" : ", sm_") + std::to_string(chip);
  return list;
}

std::vector<uint32_t> parseCudaArchs(const std::string &value) {
  // "native": the GPU of this machine, through the newest supported chip
  // not above it (its PTX runs on later chips); sm_90 without a GPU, or
  // with one older than every supported chip (the session then names it).
  if (value == "native") {
    std::optional<uint32_t> device = cudaDeviceChip();
    if (!device || *device < kSupportedChips[0])
      return {90};
    uint32_t chosen = kSupportedChips[0];
    for (uint32_t chip : kSupportedChips)
      if (chip <= *device)
        chosen = chip;
    return {chosen};
  }
  std::vector<uint32_t> chips;
  llvm::SmallVector<llvm::StringRef> names;
  llvm::StringRef(value).split(names, ',');
  for (llvm::StringRef name : names) {
    uint32_t chip = 0;
    llvm::StringRef digits = name.trim();
    if (!digits.consume_front("sm_") || digits.getAsInteger(10, chip) ||
        !isSupportedChip(chip))
      throw Error("--cuda-arch: '" + name.str() +
                  "' is not a supported chip (" + supportedChipList() +
                  ") nor native");
    chips.push_back(chip);
  }
  llvm::sort(chips);
  chips.erase(std::unique(chips.begin(), chips.end()), chips.end());
  return chips;
}

} // namespace genesis

namespace genesis::cuda {

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
/// ("isa": PTX) and returns the bytes of its objects, one per target.
FailureOr<SmallVector<std::string>> serialize(ModuleOp module,
                                              StringRef format) {
  OwningOpRef<ModuleOp> copy = module.clone();
  PassManager pm(module.getContext());
  GpuModuleToBinaryPassOptions options;
  options.toolkitPath = toolkitPath();
  options.compilationTarget = format.str();
  pm.addPass(createGpuModuleToBinaryPass(options));
  if (failed(pm.run(*copy)))
    return failure();
  SmallVector<std::string> objects;
  copy->walk([&](gpu::BinaryOp binary) {
    for (Attribute object : binary.getObjects())
      objects.push_back(
          cast<gpu::ObjectAttr>(object).getObject().getValue().str());
  });
  if (objects.empty() || llvm::any_of(objects, [](const std::string &bytes) {
        return bytes.empty();
      }))
    return module.emitError("genesis cuda codegen: gpu-module-to-binary "
                            "produced no ")
           << format << " object";
  return objects;
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

/// Whether `function` places its own griddepcontrol.wait: one in its entry
/// block, which every thread runs before any branch (a matrix-vector kernel
/// loads its read-only weights, then waits). A wait anywhere else does not
/// count, so the kernel gets one at its start.
bool waitsItself(LLVM::LLVMFuncOp function) {
  return llvm::any_of(function.getBody().front(), [](Operation &op) {
    auto control = dyn_cast<NVVM::GriddepcontrolOp>(op);
    return control && control.getKind() == NVVM::GridDepActionKind::wait;
  });
}

/// Begins every kernel of the lowered `gpuModule` with griddepcontrol.wait
/// (nothing of the kernel runs before the grids launched ahead of it have
/// finished and their writes are visible), unless the kernel waits further
/// on itself (waitsItself), and then launch_dependents (the next kernel may
/// be scheduled once every block of this one has started).
/// With programmatic dependent launch, a kernel's launch then overlaps the
/// tail of the one before it instead of waiting for its completion. LLVM
/// keeps the kernels' loads after the wait (an intrinsic with side effects)
/// because their pointer arguments carry no noalias or readonly attribute;
/// adding those would let invariant loads move above it.
void beginKernelsWithGridDependencyWait(gpu::GPUModuleOp gpuModule) {
  gpuModule.walk([](LLVM::LLVMFuncOp function) {
    if (!function->hasAttr(NVVM::NVVMDialect::getKernelFuncAttrName()) ||
        function.getBody().empty())
      return;
    OpBuilder b = OpBuilder::atBlockBegin(&function.getBody().front());
    if (!waitsItself(function))
      NVVM::GriddepcontrolOp::create(b, function.getLoc(),
                                     NVVM::GridDepActionKind::wait);
    NVVM::GriddepcontrolOp::create(b, function.getLoc(),
                                   NVVM::GridDepActionKind::launch_dependents);
  });
}

/// Whether a kernel of `gpuModule` holds griddepcontrol (a wait it places
/// itself), which chips before sm_90 lack.
bool hasGridDependencyControl(gpu::GPUModuleOp gpuModule) {
  bool found = false;
  gpuModule.walk([&](NVVM::GriddepcontrolOp) { found = true; });
  return found;
}

/// `gpuModule` without griddepcontrol, for chips before sm_90.
void removeGridDependencyControl(gpu::GPUModuleOp gpuModule) {
  gpuModule.walk([](NVVM::GriddepcontrolOp op) { op.erase(); });
}

} // namespace

FailureOr<KernelImages> compileCudaKernels(ModuleOp module,
                                           ArrayRef<uint32_t> chips) {
  MLIRContext *context = module.getContext();
  registerCudaInterfaces(context);
  auto gpuModule = module.lookupSymbol<gpu::GPUModuleOp>(kKernelModuleName);
  if (!gpuModule)
    return module.emitError("genesis cuda codegen: the module has no @")
           << kKernelModuleName << " gpu.module";
  if (chips.empty() || !llvm::is_sorted(chips) ||
      llvm::any_of(chips, [](uint32_t chip) { return !isSupportedChip(chip); }))
    return module.emitError("genesis cuda codegen: the chips must be "
                            "supported ones (")
           << supportedChipList() << "), in ascending order";
  auto chipName = [](uint32_t chip) { return "sm_" + std::to_string(chip); };

  PassManager pm(context);
  GpuNVVMAttachTargetOptions target;
  target.chip = chipName(chips.front());
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

  // The NVVM module is the same for every chip but for the grid dependency
  // wait that chips from sm_90 on begin each kernel with; LLVM's code
  // generation runs once per chip (one target each), so each cubin is tuned
  // for its chip.
  auto first = cast<NVVM::NVVMTargetAttr>(gpuModule.getTargetsAttr()[0]);
  auto programmatic = llvm::partition_point(
      chips, [](uint32_t chip) { return chip < kFirstProgrammaticLaunchChip; });
  std::string ptxas = toolkitPath() + "/bin/ptxas";
  if (!llvm::sys::fs::can_execute(ptxas))
    return module.emitError("genesis cuda codegen: ptxas not found at ")
           << ptxas << " (set GENESIS_CUDA_PATH to the CUDA toolkit)";
  KernelImages images;
  for (ArrayRef<uint32_t> group :
       {ArrayRef<uint32_t>(chips.begin(), programmatic),
        ArrayRef<uint32_t>(programmatic, chips.end())}) {
    if (group.empty())
      continue;
    bool waits = group.front() >= kFirstProgrammaticLaunchChip;
    // Older chips compile a copy without the waits kernels place themselves.
    OwningOpRef<ModuleOp> copy;
    ModuleOp compiled = module;
    if (waits) {
      beginKernelsWithGridDependencyWait(gpuModule);
    } else if (hasGridDependencyControl(gpuModule)) {
      copy = module.clone();
      compiled = *copy;
      removeGridDependencyControl(
          compiled.lookupSymbol<gpu::GPUModuleOp>(kKernelModuleName));
    }
    SmallVector<Attribute> targets;
    for (uint32_t chip : group)
      targets.push_back(NVVM::NVVMTargetAttr::get(
          context, first.getO(), first.getTriple(), chipName(chip),
          first.getFeatures(), first.getFlags(), first.getLink()));
    compiled.lookupSymbol<gpu::GPUModuleOp>(kKernelModuleName)
        .setTargetsAttr(ArrayAttr::get(context, targets));
    FailureOr<SmallVector<std::string>> ptx = serialize(compiled, "isa");
    if (failed(ptx))
      return failure();
    if (ptx->size() != group.size())
      return module.emitError("genesis cuda codegen: ")
             << group.size() << " targets gave " << ptx->size()
             << " PTX objects";
    for (auto [chip, text] : llvm::zip(group, *ptx)) {
      FailureOr<std::string> cubin =
          assemble(compiled, ptxas, text, chipName(chip));
      if (failed(cubin))
        return failure();
      images.cubins.push_back({chip, std::move(*cubin), waits});
    }
    // The oldest chip's PTX: the driver compiles it for any later chip.
    if (images.ptx.bytes.empty())
      images.ptx = {group.front(), std::move(ptx->front()), waits};
  }
  return images;
}

} // namespace genesis::cuda
