//===- safetensors_fuzzer.cpp - libFuzzer target for safetensors reading --===//
//
// Feeds each input, as a file (a memfd reached by its /proc path), to
// loadCheckpoint against a small plan: the safetensors reader, then the
// checks of names, dtypes, shapes and metadata. Only genesis::Error may come
// out.
//
//===----------------------------------------------------------------------===//

#include "FuzzPlans.h"

#include "runtime/formats/ArrayIO.h"
#include "runtime/session/Checkpoint.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <sys/mman.h>
#include <unistd.h>

using namespace genesis;

namespace {

Session &checkpointSession() {
  static Session session = [] {
    std::vector<uint8_t> bytes = fuzz::checkpointPlan().bytes();
    return Session(PlanFile::fromBytes(bytes.data(), bytes.size()));
  }();
  return session;
}

struct Memfd {
  int fd;
  std::string path;
};

const Memfd &inputFile() {
  static const Memfd file = [] {
    int fd = memfd_create("safetensors-fuzz", 0);
    if (fd < 0)
      std::abort();
    return Memfd{fd, "/proc/self/fd/" + std::to_string(fd)};
  }();
  return file;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const Memfd &file = inputFile();
  if (ftruncate(file.fd, 0) != 0 ||
      pwrite(file.fd, data, size, 0) != static_cast<ssize_t>(size))
    std::abort();
  // Reads the whole file with loadSafetensors, then checks it as a
  // checkpoint of the plan.
  try {
    loadCheckpoint(checkpointSession(), file.path);
  } catch (const Error &) {
  }
  return 0;
}
