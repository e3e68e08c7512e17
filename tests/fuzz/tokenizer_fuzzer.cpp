//===- tokenizer_fuzzer.cpp - libFuzzer target for tokenizer.json ---------===//
//
// Feeds each input, as a file (FuzzInput.h), to BpeTokenizer::fromFile: the
// JSON parser, then the model, normalizer, pre-tokenizer (PCRE2 patterns
// from the file), decoder and added tokens. A tokenizer that loads must
// encode and decode text without failing other than by genesis::Error (text
// that is not UTF-8, ids past the vocabulary). Only genesis::Error may come
// out.
//
//===----------------------------------------------------------------------===//

#include "FuzzInput.h"

#include "models/common/Tokenizer.h"
#include "runtime/support/Error.h"

using namespace genesis;
using namespace genesis::text;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::string &path = fuzz::inputFile(data, size);
  try {
    BpeTokenizer tokenizer = BpeTokenizer::fromFile(path);
    for (const std::string &text :
         {std::string("Hello, world! 123 \xc3\xa9t\xc3\xa9\n  <|endoftext|>"),
          std::string(reinterpret_cast<const char *>(data),
                      std::min<size_t>(size, 64))}) {
      try {
        std::vector<int64_t> ids = tokenizer.encode(text);
        (void)tokenizer.decode(ids);
        (void)tokenizer.decodeContinuation(ids);
      } catch (const Error &) {
      }
    }
    (void)tokenizer.decode({0, tokenizer.vocabSize() - 1});
  } catch (const Error &) {
  }
  return 0;
}
