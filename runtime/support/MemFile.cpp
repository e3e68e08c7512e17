//===- MemFile.cpp - In-memory files with a path --------------------------===//

#include "runtime/support/MemFile.h"
#include "runtime/support/Error.h"

#include <cerrno>
#include <cstring>

#include <sys/mman.h>
#include <unistd.h>

namespace genesis {

int createMemFile(const std::string &name, const void *data, size_t size,
                  const std::string &what) {
  int fd = memfd_create(name.c_str(), MFD_CLOEXEC);
  if (fd < 0)
    throw Error(what + ": memfd_create failed: " + std::strerror(errno));
  auto fail = [&](const char *problem) {
    int savedErrno = errno;
    close(fd);
    throw Error(what + ": " + problem + ": " + std::strerror(savedErrno));
  };
  const auto *bytes = static_cast<const char *>(data);
  while (size != 0) {
    ssize_t written = write(fd, bytes, size);
    if (written < 0 && errno == EINTR)
      continue;
    if (written <= 0)
      fail("cannot write it to a memfd");
    bytes += written;
    size -= static_cast<size_t>(written);
  }
  if (lseek(fd, 0, SEEK_SET) != 0)
    fail("cannot rewind its memfd");
  return fd;
}

} // namespace genesis
