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
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

#include <fcntl.h>
#include <sys/mman.h>
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

[[noreturn]] void failWithErrno(const std::string &what) {
  int error = errno;
  throw Error(what + ": " + std::strerror(error));
}

/// Reads `fd` (a pipe) to its end, passing each chunk to `sink`, and refuses
/// more than sourceLimit() bytes.
void drainPipe(int fd, const std::string &what,
               const std::function<void(const char *, size_t)> &sink) {
  std::vector<char> chunk(1 << 20);
  uint64_t total = 0, limit = sourceLimit();
  while (true) {
    ssize_t got = read(fd, chunk.data(), chunk.size());
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0)
      failWithErrno("cannot read " + what);
    if (got == 0)
      return;
    total += static_cast<uint64_t>(got);
    if (total > limit)
      throw Error(what + " holds more than " + std::to_string(limit) +
                  " bytes, the largest source the tools read");
    sink(chunk.data(), static_cast<size_t>(got));
  }
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
      failWithErrno("cannot open '" + path + "'");
  }
}

/// The whole of the pipe `path` ("-": standard input), within the limit.
std::string readPipe(const std::string &path) {
  bool standardInput = path == "-";
  std::string what = standardInput ? "standard input" : "'" + path + "'";
  int fd = standardInput ? STDIN_FILENO : openFifo(path);
  std::string text;
  try {
    drainPipe(fd, what,
              [&](const char *data, size_t size) { text.append(data, size); });
  } catch (...) {
    if (!standardInput)
      close(fd);
    throw;
  }
  if (!standardInput)
    close(fd);
  return text;
}

} // namespace

std::string readableSourcePath(const std::string &path) {
  if (!checkSource(path))
    return path;
  std::string text = readPipe(path);
  int copy = memfd_create("genesis-source", MFD_CLOEXEC);
  if (copy < 0)
    failWithErrno("cannot buffer the source");
  for (size_t done = 0; done < text.size();) {
    ssize_t put = write(copy, text.data() + done, text.size() - done);
    if (put < 0 && errno == EINTR)
      continue;
    if (put < 0) {
      int error = errno;
      close(copy);
      errno = error;
      failWithErrno("cannot buffer the source");
    }
    done += static_cast<size_t>(put);
  }
  if (lseek(copy, 0, SEEK_SET) != 0) {
    int error = errno;
    close(copy);
    errno = error;
    failWithErrno("cannot buffer the source");
  }
  if (path != "-") // the memfd stays open: the reader opens it by name
    return "/dev/fd/" + std::to_string(copy);
  if (dup2(copy, STDIN_FILENO) != STDIN_FILENO) {
    int error = errno;
    close(copy);
    errno = error;
    failWithErrno("cannot buffer standard input");
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
