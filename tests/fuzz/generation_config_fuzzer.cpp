//===- generation_config_fuzzer.cpp - generation_config.json fuzzing -----===//
//
// Feeds each input, as a file (FuzzInput.h), to loadGenerationConfig: the
// JSON parser, then each field's type and range. Only genesis::Error may
// come out.
//
//===----------------------------------------------------------------------===//

#include "FuzzInput.h"

#include "models/common/GenerationConfig.h"
#include "runtime/support/Error.h"

using namespace genesis;
using namespace genesis::text;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::string &path = fuzz::inputFile(data, size);
  try {
    (void)loadGenerationConfig(path);
  } catch (const Error &) {
  }
  return 0;
}
