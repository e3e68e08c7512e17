//===- Corpus.h - Text corpora as token ids for language models -*- C++ -*-===//
//
// A corpus is a file or a directory of text files read in a fixed order
// (sorted paths), capped at a byte count, tokenised file by file with an
// end-of-text token after each, and split into training and validation ids.
// The default corpus is this machine's Python standard library.
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_MODELS_LM_CORPUS_H
#define GENESIS_MODELS_LM_CORPUS_H

#include "models/common/Tokenizer.h"

#include <cstdint>
#include <string>
#include <vector>

namespace genesis::models {

/// The Python standard library sources of this machine: the directory
/// /usr/lib/python3.N with the highest N that holds os.py. Throws
/// genesis::Error naming where it looked when there is none.
std::string findPythonStandardLibrary();

/// `path` itself if it is a regular file; for a directory, the regular files
/// under it whose names end in `extension`, sorted by path (byte order), so
/// the order does not depend on the file system. Directories named
/// site-packages, dist-packages and __pycache__ are skipped (installed
/// third-party code and bytecode). Throws genesis::Error for a path that does
/// not exist or a directory without such files.
std::vector<std::string> listCorpusFiles(const std::string &path,
                                         const std::string &extension);

struct Corpus {
  /// The ids of every file read, each followed by the end-of-text id.
  std::vector<int32_t> tokens;
  int64_t files = 0;
  int64_t bytes = 0;
};

/// Reads `files` in order until `maxBytes` bytes are read (the last file is
/// cut there, before the UTF-8 character that would cross the cap) and
/// encodes each with `tokenizer`. The tokenizer must have an
/// end-of-text id. Throws genesis::Error naming the file that cannot be read
/// or encoded.
Corpus readCorpus(const std::vector<std::string> &files, int64_t maxBytes,
                  const text::Tokenizer &tokenizer);

struct TokenSplit {
  std::vector<int32_t> train;
  std::vector<int32_t> validation;
};

/// The last `validationFraction` of `tokens` for validation, the rest for
/// training (a contiguous split, so no window straddles both).
TokenSplit splitTokens(const std::vector<int32_t> &tokens,
                       double validationFraction);

/// The entropy, in nats, of the frequencies of the ids in `tokens`: the
/// cross-entropy of the best model that ignores context, which a language
/// model's loss (also in nats) must fall below to have learned anything
/// beyond token counts.
double unigramEntropy(const std::vector<int32_t> &tokens);

} // namespace genesis::models

#endif // GENESIS_MODELS_LM_CORPUS_H
