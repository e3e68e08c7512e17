//===- CpuCodegen.cpp - CPU kernels to a shared object --------------------===//
//
// Lowers the kernels genesis-lower-cpu emitted (scf/arith/math on memrefs)
// to the LLVM dialect with upstream conversions, translates them to LLVM IR,
// optimises at O3 for the host CPU (the loop vectoriser turns the innermost
// contiguous loops into SIMD code), emits an object and links it into a
// shared object with the system C compiler driver.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/IR/Builders.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"

#include <cstdlib>

using namespace mlir;

namespace {

/// `void k(void **args)` and `void k_range(void **args, i64 begin, i64 end)`
/// calling the lowered kernel `k_impl(ptr..., begin, end)`.
void addEntryPoints(ModuleOp module, LLVM::LLVMFuncOp impl, StringRef name,
                    int64_t outerExtent) {
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  Location loc = impl.getLoc();
  auto ptr = LLVM::LLVMPointerType::get(b.getContext());
  auto i64 = b.getI64Type();
  unsigned numPointers = impl.getNumArguments() - 2;
  auto voidType = LLVM::LLVMVoidType::get(b.getContext());

  auto range = LLVM::LLVMFuncOp::create(
      b, loc, (name + "_range").str(),
      LLVM::LLVMFunctionType::get(voidType, {ptr, i64, i64}));
  {
    OpBuilder body = OpBuilder::atBlockBegin(range.addEntryBlock(b));
    SmallVector<Value> arguments;
    for (unsigned i = 0; i < numPointers; ++i) {
      Value slot =
          LLVM::GEPOp::create(body, loc, ptr, ptr, range.getArgument(0),
                              ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(i)});
      arguments.push_back(LLVM::LoadOp::create(body, loc, ptr, slot));
    }
    arguments.push_back(range.getArgument(1));
    arguments.push_back(range.getArgument(2));
    LLVM::CallOp::create(body, loc, impl, arguments);
    LLVM::ReturnOp::create(body, loc, ValueRange());
  }
  auto whole = LLVM::LLVMFuncOp::create(
      b, loc, name, LLVM::LLVMFunctionType::get(voidType, {ptr}));
  OpBuilder body = OpBuilder::atBlockBegin(whole.addEntryBlock(b));
  Value begin =
      LLVM::ConstantOp::create(body, loc, i64, b.getI64IntegerAttr(0));
  Value end = LLVM::ConstantOp::create(body, loc, i64,
                                       b.getI64IntegerAttr(outerExtent));
  LLVM::CallOp::create(body, loc, range,
                       ValueRange{whole.getArgument(0), begin, end});
  LLVM::ReturnOp::create(body, loc, ValueRange());
}

/// The bare-pointer calling convention cannot pass a memref with a 0-sized
/// dimension (it leaves such a function unconverted). Each one is declared
/// with those dimensions 1 and viewed with its own shape by a
/// reinterpret_cast at entry; the kernel never touches an element of it.
void declareEmptyArgumentsNonEmpty(func::FuncOp kernel) {
  Block &entry = kernel.getBody().front();
  OpBuilder b = OpBuilder::atBlockBegin(&entry);
  SmallVector<Type> inputs(kernel.getArgumentTypes());
  for (BlockArgument argument : entry.getArguments()) {
    auto type = dyn_cast<MemRefType>(argument.getType());
    if (!type || !type.hasStaticShape() || type.getNumElements() != 0)
      continue;
    SmallVector<int64_t> declared(type.getShape()), strides(type.getRank());
    for (int64_t &d : declared)
      d = std::max<int64_t>(d, 1);
    int64_t stride = 1;
    for (int64_t d = type.getRank() - 1; d >= 0; --d) {
      strides[d] = stride;
      stride *= declared[d];
    }
    auto declaredType = MemRefType::get(declared, type.getElementType());
    argument.setType(declaredType);
    inputs[argument.getArgNumber()] = declaredType;
    auto view = memref::ReinterpretCastOp::create(
        b, kernel.getLoc(),
        MemRefType::get(type.getShape(), type.getElementType(),
                        StridedLayoutAttr::get(b.getContext(), 0, strides)),
        argument, 0, type.getShape(), strides);
    argument.replaceAllUsesExcept(view, view);
  }
  kernel.setFunctionType(b.getFunctionType(inputs, kernel.getResultTypes()));
}

} // namespace

FailureOr<std::string> genesis::compileCpuKernels(ModuleOp source) {
  MLIRContext *context = source.getContext();
  context->loadDialect<LLVM::LLVMDialect>();
  OwningOpRef<ModuleOp> module = ModuleOp::create(source.getLoc());
  SmallVector<std::pair<std::string, int64_t>> kernels;
  OpBuilder builder = OpBuilder::atBlockEnd(module->getBody());
  for (auto function : source.getOps<func::FuncOp>()) {
    if (!function->hasAttr(kKernelAttrName))
      continue;
    auto clone = cast<func::FuncOp>(builder.clone(*function));
    std::string name = function.getSymName().str();
    clone.setSymName(name + "_impl");
    declareEmptyArgumentsNonEmpty(clone);
    kernels.emplace_back(
        name,
        function->getAttrOfType<IntegerAttr>("genesis.outer_extent").getInt());
  }
  if (kernels.empty())
    return source.emitError("genesis cpu codegen: the module has no kernel");

  // LLVM lowers an f32 -> bf16 truncation to a call of __truncsfbf2, which
  // the libgcc that loads the kernels (GCC 12) lacks; MLIR's integer
  // expansion rounds to nearest even and keeps NaNs, as the evaluator does.
  // The x86 backend also calls __truncsfbf2 itself where it moves a bf16
  // value through f32 registers (a broadcast's copy): the kernels define
  // it, as the same expansion of one truncation.
  {
    OpBuilder b = OpBuilder::atBlockEnd(module->getBody());
    Location loc = source.getLoc();
    auto truncate = func::FuncOp::create(
        b, loc, "__truncsfbf2",
        b.getFunctionType({b.getF32Type()}, {b.getBF16Type()}));
    OpBuilder body = OpBuilder::atBlockBegin(truncate.addEntryBlock());
    func::ReturnOp::create(body, loc,
                           arith::TruncFOp::create(body, loc, b.getBF16Type(),
                                                   truncate.getArgument(0))
                               .getResult());
  }
  RewritePatternSet bf16Casts(context);
  arith::populateExpandBFloat16Patterns(bf16Casts);
  if (failed(applyPatternsGreedily(*module, std::move(bf16Casts))))
    return source.emitError("genesis cpu codegen: expanding bf16 casts failed");

  PassManager pm(context);
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  ConvertFuncToLLVMPassOptions funcOptions;
  funcOptions.useBarePtrCallConv = true;
  pm.addPass(createConvertFuncToLLVMPass(funcOptions));
  pm.addPass(createReconcileUnrealizedCastsPass());
  if (failed(pm.run(*module)))
    return failure();
  for (auto &[name, extent] : kernels) {
    auto impl = module->lookupSymbol<LLVM::LLVMFuncOp>(name + "_impl");
    if (!impl)
      return source.emitError("genesis cpu codegen: kernel '")
             << name << "' did not lower to LLVM";
    addEntryPoints(*module, impl, name, extent);
  }

  registerBuiltinDialectTranslation(*context);
  registerLLVMDialectTranslation(*context);
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(*module, llvmContext, "genesis_cpu_kernels");
  if (!llvmModule)
    return source.emitError(
        "genesis cpu codegen: translation to LLVM IR failed");

  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  std::string triple = llvm::sys::getDefaultTargetTriple(), message;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(llvm::Triple(triple), message);
  if (!target)
    return source.emitError("genesis cpu codegen: ") << message;
  // Plans travel (a plan built here may run on the GPU machine's CPU), so
  // x86-64 kernels target the portable x86-64-v3 level (AVX2, FMA) unless
  // GENESIS_CPU_NATIVE=1 asks for every feature of the build machine.
  std::string cpu = "x86-64-v3", features;
  const char *native = std::getenv("GENESIS_CPU_NATIVE");
  if (!llvm::Triple(triple).isX86() || (native && std::string(native) == "1")) {
    cpu = llvm::sys::getHostCPUName().str();
    for (const auto &feature : llvm::sys::getHostCPUFeatures())
      features += (feature.second ? "+" : "-") + feature.first().str() + ",";
  }
  llvm::TargetOptions options;
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      llvm::Triple(triple), cpu, features, options, llvm::Reloc::PIC_,
      std::nullopt, llvm::CodeGenOptLevel::Aggressive));
  llvmModule->setDataLayout(machine->createDataLayout());
  llvmModule->setTargetTriple(llvm::Triple(triple));
  for (llvm::Function &function : *llvmModule)
    for (unsigned i = 0; i < function.arg_size(); ++i)
      if (function.getArg(i)->getType()->isPointerTy() &&
          function.getName().ends_with("_impl"))
        function.addParamAttr(i, llvm::Attribute::NoAlias);

  // O3: inlining of the _impl bodies into the entry points, loop
  // vectorisation of the contiguous innermost loops.
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder passBuilder(machine.get());
  passBuilder.registerModuleAnalyses(mam);
  passBuilder.registerCGSCCAnalyses(cam);
  passBuilder.registerFunctionAnalyses(fam);
  passBuilder.registerLoopAnalyses(lam);
  passBuilder.crossRegisterProxies(lam, fam, cam, mam);
  passBuilder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3)
      .run(*llvmModule, mam);

  llvm::SmallString<128> objectPath, libraryPath;
  if (llvm::sys::fs::createTemporaryFile("genesis-kernels", "o", objectPath) ||
      llvm::sys::fs::createTemporaryFile("genesis-kernels", "so", libraryPath))
    return source.emitError(
        "genesis cpu codegen: cannot create temporary files");
  llvm::scope_exit cleanup([&] {
    llvm::sys::fs::remove(objectPath);
    llvm::sys::fs::remove(libraryPath);
  });
  {
    std::error_code error;
    llvm::raw_fd_ostream object(objectPath, error);
    if (error)
      return source.emitError("genesis cpu codegen: ") << error.message();
    llvm::legacy::PassManager emit;
    if (machine->addPassesToEmitFile(emit, object, nullptr,
                                     llvm::CodeGenFileType::ObjectFile))
      return source.emitError(
          "genesis cpu codegen: cannot emit an object file");
    emit.run(*llvmModule);
  }
  llvm::ErrorOr<std::string> compiler = llvm::sys::findProgramByName("cc");
  if (!compiler)
    return source.emitError(
        "genesis cpu codegen: no C compiler driver 'cc' on PATH to link the "
        "kernels into a shared object");
  std::string error;
  int status = llvm::sys::ExecuteAndWait(
      *compiler,
      {*compiler, "-shared", "-o", libraryPath.str(), objectPath.str(), "-lm"},
      std::nullopt, {}, 0, 0, &error);
  if (status != 0)
    return source.emitError("genesis cpu codegen: linking failed: ") << error;
  auto library = llvm::MemoryBuffer::getFile(libraryPath);
  if (!library)
    return source.emitError("genesis cpu codegen: ")
           << library.getError().message();
  return (*library)->getBuffer().str();
}
