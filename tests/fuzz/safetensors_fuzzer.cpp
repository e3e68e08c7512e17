//===- safetensors_fuzzer.cpp - libFuzzer target for safetensors reading --===//
//
// Feeds each input, as a file (FuzzInput.h), to
// loadCheckpoint against a small plan: the safetensors reader, then the
// checks of names, dtypes, shapes and metadata. Only genesis::Error may come
// out.
//
//===----------------------------------------------------------------------===//

#include "FuzzInput.h"
#include "FuzzPlans.h"

#include "runtime/formats/ArrayIO.h"
#include "runtime/session/Checkpoint.h"

#include <cstddef>
#include <cstdint>

using namespace genesis;

namespace {

Session &checkpointSession() {
  static Session session = [] {
    std::vector<uint8_t> bytes = fuzz::checkpointPlan().bytes();
    return Session(PlanFile::fromBytes(bytes.data(), bytes.size()));
  }();
  return session;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::string &path = fuzz::inputFile(data, size);
  // Reads the whole file with loadSafetensors, then checks it as a
  // checkpoint of the plan.
  try {
    loadCheckpoint(checkpointSession(), path);
  } catch (const Error &) {
  }
  return 0;
}
