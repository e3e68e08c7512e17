//===- ToolSupport.cpp - Shared pieces of the genesis tools ---------------===//

#include "tools/ToolSupport.h"
#include "dialect/IR/GenesisDialect.h"
#include "dialect/Utils/DiagnosticCapture.h"
#include "runtime/support/Error.h"

#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;

namespace genesis {

OwningOpRef<ModuleOp> parseGenesisFile(const std::string &path,
                                       MLIRContext &context) {
  context.loadDialect<GenesisDialect, func::FuncDialect>();
  std::string message;
  std::unique_ptr<llvm::MemoryBuffer> file = openInputFile(path, &message);
  if (!file)
    throw Error("cannot open '" + path + "': " + message);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  DiagnosticCapture capture(&context);
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(sourceMgr, ParserConfig(&context));
  if (!module)
    throw Error(capture.firstError("'" + path + "' is not a valid module"));
  return module;
}

func::FuncOp lookupFunction(ModuleOp module, const std::string &name) {
  std::string available;
  for (auto function : module.getOps<func::FuncOp>()) {
    if (name.empty() || function.getSymName() == name)
      return function;
    available +=
        (available.empty() ? "@" : ", @") + function.getSymName().str();
  }
  if (name.empty())
    throw Error("the module has no function");
  throw Error("no function @" + name + " in the module (it has " +
              (available.empty() ? std::string("none") : available) + ")");
}

} // namespace genesis
