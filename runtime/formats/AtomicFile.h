//===- AtomicFile.h - All-or-nothing file replacement -----------*- C++ -*-===//
//
// Files that must never be seen half-written (arrays, plans, checkpoints) are
// written to "<path>.tmp.<pid>", flushed to disk with fsync and renamed over
// the target; the directory is then synced so that the rename itself
// survives a power loss. A failure (or a destructor run before commit())
// removes the temporary file; a process killed mid-write leaves the target
// untouched and at most a stale "<path>.tmp.<pid>" beside it.
//
// The target's permissions are honoured as the shell's `>` would: a file the
// caller may not write (a 0444 file for a non-root user) is refused, not
// replaced, and a directory is refused. A target that exists but is not a
// regular file (/dev/null, /dev/stdout, a FIFO) is written in place, since
// renaming over a device would replace it; a failed write there (/dev/full)
// is an error all the same.
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_RUNTIME_ATOMICFILE_H
#define GENESIS_RUNTIME_ATOMICFILE_H

#include <cstddef>
#include <cstdio>
#include <memory>
#include <string>

namespace genesis {

class AtomicFileWriter {
public:
  /// Creates the temporary file; throws genesis::Error
  /// "cannot write '<path>': ..." if it cannot.
  explicit AtomicFileWriter(const std::string &path);
  AtomicFileWriter(const AtomicFileWriter &) = delete;
  AtomicFileWriter &operator=(const AtomicFileWriter &) = delete;
  /// Removes the temporary file unless commit() succeeded.
  ~AtomicFileWriter();

  void write(const void *data, size_t size);
  /// Makes the written bytes the content of the target path.
  void commit();

private:
  [[noreturn]] void fail(const char *step);

  struct FileCloser {
    void operator()(std::FILE *file) const { std::fclose(file); }
  };

  std::string path_;
  std::string tempPath_;
  std::unique_ptr<std::FILE, FileCloser> file_;
  bool committed_ = false;
  /// Written in place: the target is a device or FIFO, not a regular file.
  bool inPlace_ = false;
};

/// Creates the directory `path` and its missing parents (nothing if it
/// exists); throws genesis::Error naming the path and the reason otherwise.
void createDirectories(const std::string &path);

/// Writes `size` bytes as the whole content of `path`, atomically.
void writeFileAtomically(const std::string &path, const void *data,
                         size_t size);

} // namespace genesis

#endif // GENESIS_RUNTIME_ATOMICFILE_H
