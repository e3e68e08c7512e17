//===- genesis-opt.cpp - Genesis optimizer driver -------------------------===//
//
// mlir-opt for Genesis: the genesis dialect, its passes and its registered
// pipelines (genesis-cpu-pipeline, genesis-cuda-pipeline: exactly what
// genesis-compile runs), plus the upstream dialects, extensions and passes.
//
//===----------------------------------------------------------------------===//

#include "dialect/IR/GenesisDialect.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "passes/Passes.h"
#include "passes/Pipelines.h"
#include "runtime/support/Error.h"
#include "tools/ToolSupport.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registry.insert<genesis::GenesisDialect>();
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::registerAllPasses();
  genesis::registerGenesisPasses();
  genesis::registerGenesisPipelines();
  auto [input, output] = mlir::registerAndParseCLIOptions(
      argc, argv, "Genesis optimizer driver\n", registry);
  // MLIR reads its input whole: refuse what never ends or cannot fit first
  // (unless the options print something else and never read it).
  mlir::MlirOptMainConfig config =
      mlir::MlirOptMainConfig::createFromCLOptions();
  try {
    if (!config.shouldShowDialects() && !config.shouldListPasses())
      input = genesis::readableSourcePath(input);
  } catch (const genesis::Error &error) {
    llvm::errs() << "genesis-opt: error: " << error.what() << "\n";
    return 1;
  }
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, input, output, registry));
}
