//===- npy_fuzzer.cpp - libFuzzer target for .npy reading -----------------===//
//
// Feeds each input, as a file (FuzzInput.h), to loadNpy: the magic, the
// version, the header's Python-literal dictionary (dtype, order, shape) and
// the data's size. Only genesis::Error may come out.
//
//===----------------------------------------------------------------------===//

#include "FuzzInput.h"

#include "runtime/formats/ArrayIO.h"
#include "runtime/support/Error.h"

using namespace genesis;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::string &path = fuzz::inputFile(data, size);
  try {
    HostArray array = loadNpy(path);
    // Every element the loader vouched for is readable.
    for (int64_t i = 0; i < array.numel(); ++i)
      (void)array.getDouble(i);
  } catch (const Error &) {
  }
  return 0;
}
