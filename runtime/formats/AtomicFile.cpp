//===- AtomicFile.cpp - All-or-nothing file replacement -------------------===//

#include "runtime/formats/AtomicFile.h"
#include "runtime/support/Error.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>

namespace genesis {

namespace {

std::string directoryOf(const std::string &path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos)
    return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

} // namespace

AtomicFileWriter::AtomicFileWriter(const std::string &path)
    : path_(path), target_(path) {
  // A symbolic link is written through, as the shell's > does: the regular
  // file it leads to is replaced (a user's link, or /dev/stdout redirected to
  // a file); anything else it leads to (a pipe) is written in place.
  struct stat link;
  if (lstat(path_.c_str(), &link) == 0 && S_ISLNK(link.st_mode)) {
    std::error_code error;
    std::filesystem::path resolved = std::filesystem::canonical(path_, error);
    struct stat resolvedInfo;
    if (!error && stat(resolved.c_str(), &resolvedInfo) == 0 &&
        S_ISREG(resolvedInfo.st_mode))
      target_ = resolved.string();
  }
  tempPath_ = target_ + ".tmp." + std::to_string(getpid());
  struct stat info;
  if (stat(path_.c_str(), &info) == 0) {
    if (S_ISDIR(info.st_mode))
      throw Error("cannot write '" + path_ + "': it is a directory");
    if (access(path_.c_str(), W_OK) != 0) {
      int savedErrno = errno;
      throw Error("cannot write '" + path_ + "': " + std::strerror(savedErrno));
    }
    if (!S_ISREG(info.st_mode)) {
      inPlace_ = true;
      tempPath_ = path_;
    }
  }
  file_.reset(std::fopen(tempPath_.c_str(), "wb"));
  if (!file_) {
    int savedErrno = errno;
    throw Error("cannot write '" + path_ + "': cannot create '" + tempPath_ +
                "': " + std::strerror(savedErrno));
  }
}

AtomicFileWriter::~AtomicFileWriter() {
  if (committed_)
    return;
  file_.reset();
  if (!inPlace_)
    std::remove(tempPath_.c_str());
}

void AtomicFileWriter::write(const void *data, size_t size) {
  if (size != 0 && std::fwrite(data, 1, size, file_.get()) != size)
    fail("write");
}

void AtomicFileWriter::commit() {
  if (std::fflush(file_.get()) != 0)
    fail("flush");
  if (inPlace_) {
    if (std::fclose(file_.release()) != 0)
      fail("close");
    committed_ = true;
    return;
  }
  if (fsync(fileno(file_.get())) != 0)
    fail("fsync");
  if (std::fclose(file_.release()) != 0)
    fail("close");
  if (std::rename(tempPath_.c_str(), target_.c_str()) != 0)
    fail("rename");
  committed_ = true;
  // The new file is complete either way; syncing the directory only makes
  // the rename durable, so a directory that cannot be opened is no error.
  int directory = open(directoryOf(target_).c_str(), O_RDONLY | O_DIRECTORY);
  if (directory >= 0) {
    fsync(directory);
    close(directory);
  }
}

void AtomicFileWriter::fail(const char *step) {
  int savedErrno = errno;
  if (inPlace_)
    throw Error("cannot write '" + path_ + "': " + step +
                " failed: " + std::strerror(savedErrno));
  throw Error("cannot write '" + path_ + "': " + step + " of '" + tempPath_ +
              "' failed: " + std::strerror(savedErrno));
}

void createDirectories(const std::string &path) {
  std::error_code error;
  std::filesystem::create_directories(path, error);
  if (error)
    throw Error("cannot create directory '" + path + "': " + error.message());
}

void writeFileAtomically(const std::string &path, const void *data,
                         size_t size) {
  AtomicFileWriter writer(path);
  writer.write(data, size);
  writer.commit();
}

} // namespace genesis
