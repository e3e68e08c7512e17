//===- ToolSupport.cpp - Shared pieces of the genesis tools ---------------===//

#include "tools/ToolSupport.h"
#include "dialect/IR/GenesisDialect.h"
#include "dialect/Utils/DiagnosticCapture.h"
#include "runtime/support/Error.h"

#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include <cerrno>
#include <cstring>
#include <vector>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace mlir;

namespace genesis {

namespace {

/// Reads the pipe `fd` to its end into a memfd, refusing more than
/// kMaxSourceBytes; returns the memfd, positioned at its start.
int drainPipe(int fd, const std::string &what) {
  int copy = memfd_create("genesis-source", MFD_CLOEXEC);
  if (copy < 0)
    throw Error("cannot buffer " + what + ": " + std::strerror(errno));
  std::vector<char> chunk(1 << 20);
  uint64_t total = 0;
  auto fail = [&](const std::string &message) {
    close(copy);
    throw Error(message);
  };
  while (true) {
    ssize_t got = read(fd, chunk.data(), chunk.size());
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0)
      fail("cannot read " + what + ": " + std::strerror(errno));
    if (got == 0)
      break;
    total += static_cast<uint64_t>(got);
    if (total > kMaxSourceBytes)
      fail(what + " holds more than " + std::to_string(kMaxSourceBytes) +
           " bytes, the largest source the tools read");
    for (ssize_t done = 0; done < got;) {
      ssize_t put = write(copy, chunk.data() + done, got - done);
      if (put < 0 && errno == EINTR)
        continue;
      if (put < 0)
        fail("cannot buffer " + what + ": " + std::strerror(errno));
      done += put;
    }
  }
  if (lseek(copy, 0, SEEK_SET) != 0)
    fail("cannot buffer " + what + ": " + std::strerror(errno));
  return copy;
}

} // namespace

std::string readableSourcePath(const std::string &path) {
  struct stat status {};
  bool standardInput = path == "-";
  if ((standardInput ? fstat(STDIN_FILENO, &status)
                     : stat(path.c_str(), &status)) != 0)
    return path;
  std::string what = standardInput ? "standard input" : "'" + path + "'";
  if (S_ISDIR(status.st_mode))
    throw Error(what + " is a directory, not a source file");
  bool terminal = standardInput && isatty(STDIN_FILENO);
  bool device = S_ISCHR(status.st_mode) || S_ISBLK(status.st_mode) ||
                S_ISSOCK(status.st_mode);
  if (device && !terminal)
    throw Error(what + " is a device or socket, not a source file: it is "
                       "read whole, and a device such as /dev/zero never ends");
  if (S_ISREG(status.st_mode) &&
      static_cast<uint64_t>(status.st_size) > kMaxSourceBytes)
    throw Error(what + " has " + std::to_string(status.st_size) +
                " bytes, more than the " + std::to_string(kMaxSourceBytes) +
                " of the largest source the tools read");
  if (!S_ISFIFO(status.st_mode))
    return path;
  if (standardInput) {
    int copy = drainPipe(STDIN_FILENO, what);
    bool moved = dup2(copy, STDIN_FILENO) == STDIN_FILENO;
    close(copy);
    if (!moved)
      throw Error("cannot buffer standard input: " +
                  std::string(std::strerror(errno)));
    return path;
  }
  int fifo = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fifo < 0)
    return path; // the reader names the problem
  int copy = -1;
  try {
    copy = drainPipe(fifo, what);
  } catch (...) {
    close(fifo);
    throw;
  }
  close(fifo);
  // The memfd stays open for the process's life: the reader opens it by name.
  return "/dev/fd/" + std::to_string(copy);
}

OwningOpRef<ModuleOp> parseGenesisFile(const std::string &path,
                                       MLIRContext &context) {
  context.loadDialect<GenesisDialect, func::FuncDialect>();
  std::string message;
  std::string readable = readableSourcePath(path);
  std::unique_ptr<llvm::MemoryBuffer> file = openInputFile(readable, &message);
  if (!file)
    throw Error("cannot open '" + path + "': " + message);
  if (readable != path) // a FIFO's copy: diagnostics name the FIFO
    file = llvm::MemoryBuffer::getMemBufferCopy(file->getBuffer(), path);
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
