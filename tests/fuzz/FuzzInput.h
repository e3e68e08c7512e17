//===- FuzzInput.h - A fuzzer's input as a file ---------------*- C++ -*-===//
//
// The loaders read files by path, as users give them; a fuzz input reaches
// them as the contents of one memfd, rewritten for each input and named by
// its /proc path.
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_TESTS_FUZZ_FUZZINPUT_H
#define GENESIS_TESTS_FUZZ_FUZZINPUT_H

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <sys/mman.h>
#include <unistd.h>

namespace genesis::fuzz {

/// Writes `data` as the whole of the fuzzer's input file and returns its
/// path; aborts (a fuzzer-visible failure) if the memfd cannot be written.
inline const std::string &inputFile(const uint8_t *data, size_t size) {
  struct Memfd {
    int fd;
    std::string path;
  };
  static const Memfd file = [] {
    int fd = memfd_create("genesis-fuzz-input", 0);
    if (fd < 0)
      std::abort();
    return Memfd{fd, "/proc/self/fd/" + std::to_string(fd)};
  }();
  if (ftruncate(file.fd, 0) != 0 ||
      pwrite(file.fd, data, size, 0) != static_cast<ssize_t>(size))
    std::abort();
  return file.path;
}

} // namespace genesis::fuzz

#endif // GENESIS_TESTS_FUZZ_FUZZINPUT_H
