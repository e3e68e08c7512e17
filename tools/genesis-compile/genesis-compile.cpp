//===- genesis-compile.cpp - The Genesis compiler driver ----------------===//
//
// Compiles functions of a genesis module (a traced model, e.g. after
// genesis-autodiff and genesis-train-step) for a target: `--emit=mlir` prints
// the lowered module (fusions and their kernels), `--emit=plan` writes a
// .gplan file for the runtime (genesis-run, or the C++ Session), and
// `--emit=exe` a standalone executable: genesis-run's command line (library
// GenesisRunTool) with the plan built in. Errors are one
// "genesis-compile: error: ..." line naming the op and its source line.
//
// An exe is the plan written to a temporary directory, an assembler file that
// `.incbin`s it (fast for any plan size, unlike a C array), and a one-line
// main calling genesis::runEmbeddedPlanTool, compiled and linked by the
// system `c++` against the static GenesisRunTool and GenesisRuntime libraries
// and OpenBLAS (paths from the build: ExeConfig.h). A cuda plan's exe is the
// same: the runtime opens the CUDA driver, cuBLASLt and cuDNN at run time, so
// the exe needs them where it runs, as genesis-run does, and no toolkit to
// link.
//
//===----------------------------------------------------------------------===//

#include "dialect/Utils/CommandLine.h"
#include "passes/Passes.h"
#include "runtime/formats/AtomicFile.h"
#include "runtime/support/Error.h"
#include "tools/ToolSupport.h"

#include "dialect/Utils/DiagnosticCapture.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include "ExeConfig.h"

#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>

using namespace mlir;
using namespace genesis;

static llvm::cl::opt<std::string> inputFile(llvm::cl::Positional,
                                            llvm::cl::desc("<input.mlir>"),
                                            llvm::cl::Required);
static llvm::cl::opt<std::string>
    target("target", llvm::cl::init("cpu"),
           llvm::cl::desc("Target: cpu or cuda (kernels for sm_90)"));
static llvm::cl::opt<bool>
    allowTf32("allow-tf32", llvm::cl::init(false),
              llvm::cl::desc("cuda: let f32 GEMMs use TF32 tensor cores "
                             "(~1e-3 relative error)"));
static llvm::cl::opt<std::string> cudaArch(
    "cuda-arch", llvm::cl::init("sm_90"),
    llvm::cl::desc("cuda: the chips to compile kernels for, e.g. "
                   "sm_80,sm_89,sm_90 (a cubin each, and the oldest one's "
                   "PTX for later chips), or native (this machine's GPU)"));
static llvm::cl::opt<std::string> precision(
    "precision", llvm::cl::init(""),
    llvm::cl::desc("cuda: bf16 or f16 mixed precision (GEMMs and attention "
                   "in 16 bits, f32 accumulation; as PyTorch's autocast)"));
static llvm::cl::opt<std::string>
    emit("emit", llvm::cl::init("plan"),
         llvm::cl::desc("What to write: mlir (the lowered module), plan, "
                        "exe (a standalone executable running the plan), "
                        "or ptx (the kernels' PTX; cuda)"));
static llvm::cl::list<std::string>
    functions("function", llvm::cl::desc("Function to compile (repeatable; "
                                         "default: every function)"));
static llvm::cl::opt<std::string>
    outputFile("o", llvm::cl::init(""),
               llvm::cl::desc("Output file (default: stdout for mlir, "
                              "<input>.gplan for a plan, <input> without "
                              "its extension for an exe)"));
static llvm::cl::opt<bool>
    timing("timing", llvm::cl::init(false),
           llvm::cl::desc("Print per-pass times to stderr"));

namespace {

/// Removes a temporary directory and the files in it when it goes.
struct TempDir {
  llvm::SmallString<128> path;
  std::vector<std::string> files;
  ~TempDir() {
    for (const std::string &file : files)
      llvm::sys::fs::remove(file);
    if (!path.empty())
      llvm::sys::fs::remove(path);
  }
  std::string add(llvm::StringRef name) {
    llvm::SmallString<128> file(path);
    llvm::sys::path::append(file, name);
    files.push_back(std::string(file));
    return files.back();
  }
};

void writeText(const std::string &path, const std::string &text) {
  writeFileAtomically(path, text.data(), text.size());
}

/// The first line of `path` that names an error (the linker's own line rather
/// than collect2's summary), else its first line.
std::string firstErrorLine(const std::string &path) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return "";
  llvm::SmallVector<llvm::StringRef> lines;
  (*buffer)->getBuffer().split(lines, '\n', -1, false);
  for (llvm::StringRef line : lines)
    if (!line.starts_with("collect2") &&
        (line.contains("error") || line.contains("ld: ") ||
         line.contains("undefined reference")))
      return line.trim().str();
  return lines.empty() ? "" : lines.front().trim().str();
}

/// Links `plan` (a complete .gplan container) into the executable `path`.
void writeExecutable(const std::string &path,
                     const std::vector<uint8_t> &plan) {
  llvm::ErrorOr<std::string> compiler = llvm::sys::findProgramByName("c++");
  if (!compiler)
    throw genesis::Error(
        "--emit=exe needs a C++ compiler: no 'c++' on the PATH");
  TempDir temp;
  if (std::error_code error =
          llvm::sys::fs::createUniqueDirectory("genesis-exe", temp.path))
    throw genesis::Error("cannot create a temporary directory: " +
                         error.message());
  std::string planPath = temp.add("plan.gplan");
  std::string asmPath = temp.add("plan.S");
  std::string mainPath = temp.add("main.cpp");
  std::string logPath = temp.add("c++.log");
  writeFileAtomically(planPath, plan.data(), plan.size());
  std::string quoted;
  for (char c : planPath) {
    if (c == '"' || c == '\\')
      quoted += '\\';
    quoted += c;
  }
  writeText(asmPath, "  .section .rodata\n"
                     "  .balign 16\n"
                     "  .globl genesis_embedded_plan\n"
                     "genesis_embedded_plan:\n"
                     "  .incbin \"" +
                         quoted +
                         "\"\n"
                         "  .globl genesis_embedded_plan_end\n"
                         "genesis_embedded_plan_end:\n"
                         "  .section .note.GNU-stack,\"\",@progbits\n");
  writeText(
      mainPath,
      "// Generated by genesis-compile --emit=exe.\n"
      "#include \"tools/genesis-run/RunTool.h\"\n"
      "extern \"C\" const unsigned char genesis_embedded_plan[];\n"
      "extern \"C\" const unsigned char genesis_embedded_plan_end[];\n"
      "int main(int argc, char **argv) {\n"
      "  return genesis::runEmbeddedPlanTool(\n"
      "      argc, argv, genesis_embedded_plan,\n"
      "      size_t(genesis_embedded_plan_end - genesis_embedded_plan));\n"
      "}\n");

  std::vector<std::string> args = {*compiler};
  for (const char *flag : kExeCompileFlags)
    args.emplace_back(flag);
  for (const char *dir : kExeIncludeDirs)
    args.push_back(std::string("-I") + dir);
  args.insert(args.end(), {mainPath, asmPath, "-o", path});
  for (const char *flag : kExeLinkFlags)
    args.emplace_back(flag);
  std::vector<llvm::StringRef> argRefs(args.begin(), args.end());
  std::optional<llvm::StringRef> redirects[] = {
      std::nullopt, llvm::StringRef(logPath), llvm::StringRef(logPath)};
  std::string message;
  int status = llvm::sys::ExecuteAndWait(*compiler, argRefs, std::nullopt,
                                         redirects, 0, 0, &message);
  if (status != 0) {
    std::string detail = firstErrorLine(logPath);
    throw genesis::Error(
        "building the executable '" + path + "' with " + *compiler + " failed" +
        (status < 0 ? " (" + message + ")"
                    : " (exit " + std::to_string(status) + ")") +
        (detail.empty() ? "" : ": " + detail));
  }
}

/// Compiling never writes over its own input.
void refuseInputAsOutput(const std::string &path) {
  std::error_code error;
  if (std::filesystem::equivalent(path, inputFile.getValue(), error))
    throw genesis::Error("the output '" + path +
                         "' is the input file; name another with -o");
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  // --mlir-timing, --mlir-print-ir-after-all and the rest of MLIR's pass
  // manager options apply to the compile pipeline (lowerForTarget); --help
  // lists only genesis-compile's own.
  // First: --mlir-print-ir-after=<pass> lists the passes registered when
  // it is created.
  genesis::registerGenesisPasses();
  mlir::registerPassManagerCLOptions();
  mlir::registerDefaultTimingManagerCLOptions();
  showOnlyOptions("genesis-compile options",
                  {std::addressof(inputFile), std::addressof(target),
                   std::addressof(allowTf32), std::addressof(precision),
                   std::addressof(emit), std::addressof(functions),
                   std::addressof(outputFile), std::addressof(timing)});
  llvm::cl::ParseCommandLineOptions(argc, argv, "Genesis compiler driver\n");
  try {
    if (target != "cpu" && target != "cuda")
      throw genesis::Error("--target must be cpu or cuda, got '" + target +
                           "'");
    if (emit != "mlir" && emit != "plan" && emit != "exe" && emit != "ptx")
      throw genesis::Error("--emit must be mlir, plan, exe or ptx, got '" +
                           emit + "'");
    if (!precision.empty() && precision != "bf16" && precision != "f16")
      throw genesis::Error("--precision must be bf16 or f16, got '" +
                           precision + "'");
    if (!precision.empty() && target != "cuda")
      throw genesis::Error("--precision needs --target=cuda (the CPU "
                           "kernels compute in f32 and f64)");
    if (target != "cuda" && cudaArch.getNumOccurrences())
      throw genesis::Error("--cuda-arch needs --target=cuda");
    if (target != "cuda" && emit == "ptx")
      throw genesis::Error("--emit=ptx needs --target=cuda");
    if (!outputFile.empty())
      refuseInputAsOutput(outputFile);
    MLIRContext context;
    OwningOpRef<ModuleOp> module = parseGenesisFile(inputFile, context);
    std::vector<std::string> names(functions.begin(), functions.end());
    if (names.empty())
      for (auto function : module->getOps<func::FuncOp>())
        names.push_back(function.getSymName().str());
    DiagnosticCapture capture(&context);
    auto start = std::chrono::steady_clock::now();
    PlanOptions options;
    options.target = target == "cuda" ? plan::Target::Cuda : plan::Target::Cpu;
    options.timing = timing;
    options.allowTf32 = allowTf32;
    options.mixedPrecision = precision;
    options.cudaChips = parseCudaArchs(cudaArch);
    if (emit == "mlir") {
      if (failed(lowerForTarget(*module, names, options)))
        throw genesis::Error(capture.firstError("lowering failed"));
      std::string text;
      llvm::raw_string_ostream os(text);
      module->print(os);
      if (outputFile.empty())
        std::cout << text;
      else
        writeFileAtomically(outputFile, text.data(), text.size());
      return 0;
    }
    FailureOr<std::vector<uint8_t>> plan = compilePlan(*module, names, options);
    if (failed(plan))
      throw genesis::Error(capture.firstError("compilation failed"));
    if (emit == "ptx") {
      PlanFile planFile = PlanFile::fromBytes(plan->data(), plan->size());
      std::string ptx;
      for (const plan::KernelImage *image : *planFile.plan().images())
        if (image->format() == plan::ImageFormat::Ptx)
          ptx.assign(image->bytes()->begin(), image->bytes()->end());
      if (outputFile.empty())
        std::cout << ptx;
      else
        writeFileAtomically(outputFile, ptx.data(), ptx.size());
      return 0;
    }
    std::string path = outputFile;
    if (path.empty() && emit == "exe") {
      llvm::SmallString<128> stem(inputFile);
      llvm::sys::path::replace_extension(stem, "");
      // An input without an extension keeps its name: the executable
      // gets one instead of replacing the input.
      path = stem == inputFile ? inputFile + ".exe" : std::string(stem);
    } else if (path.empty()) {
      path = inputFile + ".gplan";
    }
    refuseInputAsOutput(path);
    if (emit == "exe")
      writeExecutable(path, *plan);
    else
      writeFileAtomically(path, plan->data(), plan->size());
    if (timing)
      std::cerr << "genesis-compile: "
                << std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - start)
                       .count()
                << " s in all\n";
    if (emit == "exe")
      std::cout << "wrote " << path << " (executable, plan of " << plan->size()
                << " bytes)\n";
    else
      std::cout << "wrote " << path << " (" << plan->size() << " bytes)\n";
  } catch (const genesis::Error &error) {
    llvm::errs() << "genesis-compile: error: " << error.what() << "\n";
    return 1;
  }
  return 0;
}
