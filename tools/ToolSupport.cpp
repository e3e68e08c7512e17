//===- ToolSupport.cpp - Shared pieces of the genesis tools ---------------===//

#include "tools/ToolSupport.h"
#include "dialect/IR/GenesisDialect.h"
#include "dialect/Utils/DiagnosticCapture.h"
#include "runtime/support/Error.h"
#include "runtime/support/MemFile.h"

#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace mlir;

namespace genesis {

namespace {

/// kMaxSourceBytes, or GENESIS_MAX_SOURCE_BYTES where that is lower (tests
/// check the limit without reading gigabytes).
uint64_t sourceLimit() {
  const char *value = std::getenv("GENESIS_MAX_SOURCE_BYTES");
  if (!value || !*value)
    return kMaxSourceBytes;
  char *end = nullptr;
  unsigned long long limit = std::strtoull(value, &end, 10);
  return *end == '\0' && limit < kMaxSourceBytes ? limit : kMaxSourceBytes;
}

/// Refuses what cannot be a source (see readableSourcePath); whether `path`
/// is a pipe (standard input's or a FIFO) that must be read with a bound.
bool checkSource(const std::string &path) {
  struct stat status {};
  bool standardInput = path == "-";
  if ((standardInput ? fstat(STDIN_FILENO, &status)
                     : stat(path.c_str(), &status)) != 0)
    return false; // the reader names the problem
  std::string what = standardInput ? "standard input" : "'" + path + "'";
  if (S_ISDIR(status.st_mode))
    throw Error(what + " is a directory, not a source file");
  bool terminal = standardInput && isatty(STDIN_FILENO);
  bool device = S_ISCHR(status.st_mode) || S_ISBLK(status.st_mode) ||
                S_ISSOCK(status.st_mode);
  if (device && !terminal)
    throw Error(what + " is a device or socket, not a source file: it is "
                       "read whole, and a device such as /dev/zero never ends");
  uint64_t limit = sourceLimit();
  if (S_ISREG(status.st_mode) && static_cast<uint64_t>(status.st_size) > limit)
    throw Error(what + " has " + std::to_string(status.st_size) +
                " bytes, more than the " + std::to_string(limit) +
                " of the largest source the tools read");
  return S_ISFIFO(status.st_mode);
}

/// Opens the FIFO `path` for reading (waiting for a writer, as cat does).
int openFifo(const std::string &path) {
  while (true) {
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd >= 0)
      return fd;
    if (errno != EINTR)
      throw Error("cannot open '" + path + "': " + std::strerror(errno));
  }
}

/// The whole of the pipe `path` ("-": standard input), read to its end;
/// more than sourceLimit() bytes are refused.
std::string readPipe(const std::string &path) {
  bool standardInput = path == "-";
  std::string what = standardInput ? "standard input" : "'" + path + "'";
  int fd = standardInput ? STDIN_FILENO : openFifo(path);
  auto finish = [&] {
    if (!standardInput)
      close(fd);
  };
  std::string text;
  std::vector<char> chunk(1 << 20);
  uint64_t limit = sourceLimit();
  while (true) {
    ssize_t got = read(fd, chunk.data(), chunk.size());
    if (got < 0 && errno == EINTR)
      continue;
    if (got <= 0) {
      int error = errno;
      finish();
      if (got < 0)
        throw Error("cannot read " + what + ": " + std::strerror(error));
      return text;
    }
    if (text.size() + static_cast<size_t>(got) > limit) {
      finish();
      throw Error(what + " holds more than " + std::to_string(limit) +
                  " bytes, the largest source the tools read");
    }
    text.append(chunk.data(), static_cast<size_t>(got));
  }
}

} // namespace

std::string readableSourcePath(const std::string &path) {
  if (!checkSource(path))
    return path;
  std::string text = readPipe(path);
  int copy = createMemFile("genesis-source", text.data(), text.size(),
                           "cannot buffer the source");
  if (path != "-") // the memfd stays open: the reader opens it by name
    return "/dev/fd/" + std::to_string(copy);
  if (dup2(copy, STDIN_FILENO) != STDIN_FILENO) {
    int error = errno;
    close(copy);
    throw Error("cannot buffer standard input: " +
                std::string(std::strerror(error)));
  }
  close(copy);
  return path;
}

OwningOpRef<ModuleOp> parseGenesisFile(const std::string &path,
                                       MLIRContext &context) {
  context.loadDialect<GenesisDialect, func::FuncDialect>();
  std::unique_ptr<llvm::MemoryBuffer> file;
  if (checkSource(path)) {
    // A pipe: read here within the limit, named as given.
    file = llvm::MemoryBuffer::getMemBufferCopy(readPipe(path),
                                                path == "-" ? "<stdin>" : path);
  } else {
    std::string message;
    file = openInputFile(path, &message);
    if (!file)
      throw Error("cannot open '" + path + "': " + message);
  }
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
