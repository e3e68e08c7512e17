//===- config_fuzzer.cpp - Hugging Face config.json fuzzing ---------------===//
//
// Feeds each input, as a file (FuzzInput.h), to readGpt2Config and
// readQwen2Config: the JSON parser, each key's type and range, the settings
// that are refused (RoPE scaling, sliding windows, layer kinds) and the size
// check that refuses absurd models before anything is allocated. Only
// genesis::Error may come out.
//
//===----------------------------------------------------------------------===//

#include "FuzzInput.h"

#include "models/gpt2/Gpt2Config.h"
#include "models/qwen2/Qwen2Config.h"
#include "runtime/support/Error.h"

using namespace genesis;
using namespace genesis::models;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::string &path = fuzz::inputFile(data, size);
  try {
    (void)readGpt2Config(path);
  } catch (const Error &) {
  }
  try {
    (void)readQwen2Config(path);
  } catch (const Error &) {
  }
  return 0;
}
