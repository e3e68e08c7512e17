//===- genesis-opt.cpp - Genesis optimizer driver --------------------------===//
//
// mlir-opt for Genesis: the genesis dialect and its passes, plus the upstream
// dialects, extensions and passes the CPU and CUDA pipelines are built from.
//
//===----------------------------------------------------------------------===//

#include "dialect/IR/GenesisDialect.h"
#include "passes/Passes.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registry.insert<genesis::GenesisDialect>();
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::registerAllPasses();
  genesis::registerGenesisPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "Genesis optimizer driver\n", registry));
}
