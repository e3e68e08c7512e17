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
// regular file (/dev/null, a FIFO) is written in place, since renaming over
// a device would replace it; a failed write there (/dev/full) is an error all
// the same. A symbolic link is written through: the regular file it leads to
// is replaced (so /dev/stdout redirected to a file fills that file), anything
// else it leads to is written in place.
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

  /// Appends `size` bytes; throws genesis::Error naming the file on failure.
  void write(const void *data, size_t size);
  /// Makes the written bytes the content of the target path.
  void commit();

private:
  [[noreturn]] void fail(const char *step);

  struct FileCloser {
    void operator()(std::FILE *file) const { std::fclose(file); }
  };

  /// The path as given (for messages) and the file it names, a symbolic
  /// link resolved.
  std::string path_;
  std::string target_;
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
