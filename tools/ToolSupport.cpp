//===- ToolSupport.cpp - Shared pieces of the genesis tools ---------------===//

#include "tools/ToolSupport.h"
#include "dialect/IR/GenesisDialect.h"
#include "dialect/Utils/DiagnosticCapture.h"
#include "runtime/support/Error.h"
#include "runtime/support/HostArray.h"

#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include <sys/stat.h>
#include <unistd.h>

using namespace mlir;

namespace genesis {

void checkSourceFile(const std::string &path) {
  struct stat status {};
  bool standardInput = path == "-";
  if ((standardInput ? fstat(STDIN_FILENO, &status)
                     : stat(path.c_str(), &status)) != 0)
    return;
  std::string what = standardInput ? "standard input" : "'" + path + "'";
  if (S_ISDIR(status.st_mode))
    throw Error(what + " is a directory, not a source file");
  bool device = S_ISCHR(status.st_mode) || S_ISBLK(status.st_mode) ||
                S_ISSOCK(status.st_mode);
  if (device && !(standardInput && isatty(STDIN_FILENO)))
    throw Error(what + " is a device or socket, not a source file: it is "
                       "read whole, and a device such as /dev/zero never ends");
  if (S_ISREG(status.st_mode) &&
      static_cast<uint64_t>(status.st_size) > HostArray::physicalMemoryBytes())
    throw Error(what + " has " + std::to_string(status.st_size) +
                " bytes, more than this machine's " +
                std::to_string(HostArray::physicalMemoryBytes()) +
                " bytes of memory");
}

OwningOpRef<ModuleOp> parseGenesisFile(const std::string &path,
                                       MLIRContext &context) {
  context.loadDialect<GenesisDialect, func::FuncDialect>();
  checkSourceFile(path);
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
