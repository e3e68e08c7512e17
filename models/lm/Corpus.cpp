//===- Corpus.cpp - Text corpora as token ids for language models ---------===//

#include "models/lm/Corpus.h"
#include "runtime/support/Error.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <regex>

namespace fs = std::filesystem;

namespace genesis::models {

std::string findPythonStandardLibrary() {
  const fs::path root = "/usr/lib";
  const std::regex versioned("python3\\.([0-9]+)");
  std::string best;
  int bestMinor = -1;
  std::error_code error;
  for (const fs::directory_entry &entry : fs::directory_iterator(root, error)) {
    std::smatch match;
    std::string name = entry.path().filename().string();
    if (!std::regex_match(name, match, versioned) ||
        !fs::is_regular_file(entry.path() / "os.py", error))
      continue;
    int minor = std::stoi(match[1].str());
    if (minor > bestMinor) {
      bestMinor = minor;
      best = entry.path().string();
    }
  }
  if (best.empty())
    throw Error("no Python standard library found (looked for "
                "/usr/lib/python3.N/os.py); pass a text file or directory "
                "with --corpus");
  return best;
}

std::vector<std::string> listCorpusFiles(const std::string &path,
                                         const std::string &extension) {
  std::error_code error;
  fs::file_status status = fs::status(path, error);
  if (error || !fs::exists(status))
    throw Error("corpus '" + path + "' does not exist");
  if (fs::is_regular_file(status))
    return {path};
  if (!fs::is_directory(status))
    throw Error("corpus '" + path + "' is neither a file nor a directory");
  std::vector<std::string> files;
  auto endsWith = [](const std::string &name, const std::string &suffix) {
    return name.size() >= suffix.size() &&
           name.compare(name.size() - suffix.size(), suffix.size(), suffix) ==
               0;
  };
  fs::recursive_directory_iterator it(
      path, fs::directory_options::skip_permission_denied, error);
  if (error)
    throw Error("cannot list corpus directory '" + path +
                "': " + error.message());
  for (; it != fs::recursive_directory_iterator(); it.increment(error)) {
    if (error)
      throw Error("cannot list corpus directory '" + path +
                  "': " + error.message());
    std::string name = it->path().filename().string();
    if (it->is_directory(error)) {
      if (name == "site-packages" || name == "dist-packages" ||
          name == "__pycache__")
        it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file(error) && endsWith(name, extension))
      files.push_back(it->path().string());
  }
  if (files.empty())
    throw Error("corpus directory '" + path + "' has no files ending in '" +
                extension + "'");
  std::sort(files.begin(), files.end());
  return files;
}

Corpus readCorpus(const std::vector<std::string> &files, int64_t maxBytes,
                  const text::Tokenizer &tokenizer) {
  std::optional<int64_t> endOfText = tokenizer.endOfTextId();
  if (!endOfText)
    throw Error("the tokenizer has no end-of-text token to separate files");
  if (maxBytes <= 0)
    throw Error("the corpus byte cap must be positive, got " +
                std::to_string(maxBytes));
  Corpus corpus;
  for (const std::string &file : files) {
    std::ifstream in(file, std::ios::binary);
    if (!in)
      throw Error("cannot open corpus file '" + file + "'");
    std::string text((std::istreambuf_iterator<char>(in)),
                     std::istreambuf_iterator<char>());
    if (in.bad())
      throw Error("cannot read corpus file '" + file + "'");
    auto room = static_cast<size_t>(maxBytes - corpus.bytes);
    const bool last = text.size() >= room;
    if (text.size() > room) {
      // Cut at the start of a UTF-8 character so that the text stays valid
      // for tokenizers that require it.
      size_t cut = room;
      while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80)
        --cut;
      text.resize(cut);
    }
    std::vector<int64_t> ids;
    try {
      ids = tokenizer.encode(text);
    } catch (const Error &error) {
      throw Error("corpus file '" + file + "': " + error.what());
    }
    for (int64_t id : ids) {
      if (id < 0 || id > std::numeric_limits<int32_t>::max())
        throw Error("corpus file '" + file + "': token id " +
                    std::to_string(id) + " does not fit in 32 bits");
      corpus.tokens.push_back(static_cast<int32_t>(id));
    }
    corpus.tokens.push_back(static_cast<int32_t>(*endOfText));
    corpus.bytes += static_cast<int64_t>(text.size());
    ++corpus.files;
    if (last)
      break;
  }
  return corpus;
}

TokenSplit splitTokens(const std::vector<int32_t> &tokens,
                       double validationFraction) {
  if (!(validationFraction > 0 && validationFraction < 1))
    throw Error("the validation fraction must be in (0, 1), got " +
                std::to_string(validationFraction));
  auto validationCount = static_cast<size_t>(
      std::llround(validationFraction * static_cast<double>(tokens.size())));
  TokenSplit split;
  split.train.assign(tokens.begin(), tokens.end() - validationCount);
  split.validation.assign(tokens.end() - validationCount, tokens.end());
  return split;
}

double unigramEntropy(const std::vector<int32_t> &tokens) {
  std::map<int32_t, int64_t> counts;
  for (int32_t id : tokens)
    ++counts[id];
  double total = static_cast<double>(tokens.size()), entropy = 0;
  for (const auto &[id, count] : counts) {
    double p = static_cast<double>(count) / total;
    entropy -= p * std::log(p);
  }
  return entropy;
}

} // namespace genesis::models
