//===- genesis-compile.cpp - The Genesis compiler driver -------------------===//
//
// Compiles functions of a genesis module (a traced model, e.g. after
// genesis-autodiff and genesis-train-step) for a target: `--emit=mlir` prints
// the lowered module (fusions and their kernels), `--emit=plan` writes a
// .gplan file for the runtime (genesis-run, or the C++ Session). Errors are
// one "genesis-compile: error: ..." line naming the op and its source line.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"
#include "runtime/AtomicFile.h"
#include "runtime/Error.h"
#include "tools/ToolSupport.h"

#include "dialect/Utils/DiagnosticCapture.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"

#include <chrono>
#include <iostream>

using namespace mlir;
using namespace genesis;

static llvm::cl::opt<std::string> inputFile(llvm::cl::Positional,
                                            llvm::cl::desc("<input.mlir>"),
                                            llvm::cl::Required);
static llvm::cl::opt<std::string>
    target("target", llvm::cl::init("cpu"),
           llvm::cl::desc("Target: cpu (cuda is not built yet)"));
static llvm::cl::opt<std::string>
    emit("emit", llvm::cl::init("plan"),
         llvm::cl::desc("What to write: mlir (the lowered module) or plan"));
static llvm::cl::list<std::string>
    functions("function", llvm::cl::desc("Function to compile (repeatable; "
                                         "default: every function)"));
static llvm::cl::opt<std::string>
    outputFile("o", llvm::cl::init(""),
               llvm::cl::desc("Output file (default: stdout for mlir, "
                              "<input>.gplan for a plan)"));
static llvm::cl::opt<bool>
    timing("timing", llvm::cl::init(false),
           llvm::cl::desc("Print per-pass times to stderr"));

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  llvm::cl::ParseCommandLineOptions(argc, argv, "Genesis compiler driver\n");
  try {
    if (target != "cpu")
      throw genesis::Error("target '" + target + "' is not supported (only cpu is)");
    if (emit != "mlir" && emit != "plan")
      throw genesis::Error("--emit must be mlir or plan, got '" + emit + "'");
    MLIRContext context;
    OwningOpRef<ModuleOp> module = parseGenesisFile(inputFile, context);
    std::vector<std::string> names(functions.begin(), functions.end());
    if (names.empty())
      for (auto function : module->getOps<func::FuncOp>())
        names.push_back(function.getSymName().str());
    DiagnosticCapture capture(&context);
    auto start = std::chrono::steady_clock::now();
    if (emit == "mlir") {
      if (failed(lowerForCpu(*module, names, timing)))
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
    FailureOr<std::vector<uint8_t>> plan = compileCpuPlan(*module, names, timing);
    if (failed(plan))
      throw genesis::Error(capture.firstError("compilation failed"));
    std::string path = outputFile.empty() ? inputFile + ".gplan" : outputFile;
    writeFileAtomically(path, plan->data(), plan->size());
    if (timing)
      std::cerr << "genesis-compile: "
                << std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - start)
                       .count()
                << " s in all\n";
    std::cout << "wrote " << path << " (" << plan->size() << " bytes)\n";
  } catch (const genesis::Error &error) {
    llvm::errs() << "genesis-compile: error: " << error.what() << "\n";
    return 1;
  }
  return 0;
}
