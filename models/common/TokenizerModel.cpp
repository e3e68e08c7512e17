//===- TokenizerModel.cpp - Encoding and decoding with a BPE model --------===//
//
// Reproduces the encode path of Hugging Face `tokenizers` for BPE models:
// the normalised pieces between added tokens are split by the
// pre-tokenizer, spelt in GPT-2's byte alphabet (ByteLevel) or as their own
// code points with "▁" for spaces (Metaspace, SentencePiece-style), and merged
// by rank; a character the vocabulary lacks becomes its UTF-8 bytes as
// "<0xXX>" tokens (byte_fallback) or the unknown token. Oniguruma runs the
// patterns there and PCRE2 here; both take the GPT-2-family patterns with the
// same meaning (docs/generation.md lists the differences in their Unicode
// tables).
//
//===----------------------------------------------------------------------===//

#include "models/common/TokenizerModel.h"

#include "models/common/Tokenizer.h"
#include "runtime/support/Error.h"

#include <unicode/bytestream.h>
#include <unicode/utypes.h>

#include <climits>
#include <queue>

namespace genesis::text::detail {

//===----------------------------------------------------------------------===//
// Unicode helpers
//===----------------------------------------------------------------------===//

const std::array<char32_t, 256> &byteToCodePoint() {
  static const std::array<char32_t, 256> table = [] {
    std::array<char32_t, 256> result{};
    char32_t next = 256;
    for (int byte = 0; byte < 256; ++byte) {
      bool printable = (byte >= '!' && byte <= '~') ||
                       (byte >= 0xA1 && byte <= 0xAC) || byte >= 0xAE;
      result[byte] = printable ? static_cast<char32_t>(byte) : next++;
    }
    return result;
  }();
  return table;
}

int byteOfCodePoint(char32_t codePoint) {
  // The alphabet lies below U+0144.
  static const std::array<int16_t, 0x144> table = [] {
    std::array<int16_t, 0x144> result;
    result.fill(-1);
    for (int byte = 0; byte < 256; ++byte)
      result[byteToCodePoint()[byte]] = static_cast<int16_t>(byte);
    return result;
  }();
  return codePoint < table.size() ? table[codePoint] : -1;
}

std::string byteLevelSpelling(std::string_view bytes) {
  std::string spelling;
  for (unsigned char byte : bytes)
    appendUtf8(spelling, byteToCodePoint()[byte]);
  return spelling;
}

size_t utf8SequenceLength(unsigned char lead) {
  if (lead >= 0xF0)
    return 4;
  if (lead >= 0xE0)
    return 3;
  if (lead >= 0xC0)
    return 2;
  return 1;
}

size_t invalidUtf8Offset(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    auto lead = static_cast<unsigned char>(text[i]);
    if (lead < 0x80) {
      ++i;
      continue;
    }
    size_t length = utf8SequenceLength(lead);
    if (length == 1 || lead > 0xF4 || text.size() - i < length)
      return i;
    char32_t codePoint = lead & (0x7F >> length);
    for (size_t k = 1; k < length; ++k) {
      auto byte = static_cast<unsigned char>(text[i + k]);
      if ((byte & 0xC0) != 0x80)
        return i;
      codePoint = (codePoint << 6) | (byte & 0x3F);
    }
    constexpr char32_t kSmallest[] = {0, 0, 0x80, 0x800, 0x10000};
    if (codePoint < kSmallest[length] || codePoint > 0x10FFFF ||
        (codePoint >= 0xD800 && codePoint <= 0xDFFF))
      return i;
    i += length;
  }
  return std::string_view::npos;
}

std::vector<char32_t> codePointsOf(std::string_view text) {
  std::vector<char32_t> codePoints;
  for (size_t i = 0; i < text.size();) {
    size_t length = utf8SequenceLength(static_cast<unsigned char>(text[i]));
    char32_t codePoint = static_cast<unsigned char>(text[i]) &
                         (length == 1 ? 0x7F : 0x7F >> length);
    for (size_t k = 1; k < length; ++k)
      codePoint = (codePoint << 6) | (text[i + k] & 0x3F);
    codePoints.push_back(codePoint);
    i += length;
  }
  return codePoints;
}

std::string nfcOf(const icu::Normalizer2 &nfc, std::string_view text,
                  const std::string &origin) {
  if (text.size() > static_cast<size_t>(INT32_MAX))
    throw Error(origin + ": NFC takes pieces shorter than 2 GiB");
  std::string normalized;
  icu::StringByteSink<std::string> sink(&normalized,
                                        static_cast<int32_t>(text.size()));
  UErrorCode status = U_ZERO_ERROR;
  nfc.normalizeUTF8(
      0, icu::StringPiece(text.data(), static_cast<int32_t>(text.size())), sink,
      nullptr, status);
  if (U_FAILURE(status))
    throw Error(origin + ": NFC failed: " + u_errorName(status));
  return normalized;
}

std::string replaceAll(std::string_view text, std::string_view pattern,
                       std::string_view replacement) {
  std::string result;
  size_t from = 0;
  for (size_t at = text.find(pattern); at != std::string_view::npos;
       at = text.find(pattern, from)) {
    result.append(text.substr(from, at - from));
    result.append(replacement);
    from = at + pattern.size();
  }
  result.append(text.substr(from));
  return result;
}

int byteOfByteToken(std::string_view token) {
  if (token.size() != 6 || token.substr(0, 3) != "<0x" || token[5] != '>')
    return -1;
  int byte = 0;
  for (char digit : token.substr(3, 2)) {
    int value = digit >= '0' && digit <= '9'   ? digit - '0'
                : digit >= 'a' && digit <= 'f' ? digit - 'a' + 10
                : digit >= 'A' && digit <= 'F' ? digit - 'A' + 10
                                               : -1;
    if (value < 0)
      return -1;
    byte = byte * 16 + value;
  }
  return byte;
}

//===----------------------------------------------------------------------===//
// Pre-tokenizer patterns
//===----------------------------------------------------------------------===//

const char *const kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

namespace {

std::string pcre2Message(int code) {
  PCRE2_UCHAR buffer[256];
  int length = pcre2_get_error_message(code, buffer, sizeof(buffer));
  if (length < 0)
    return "PCRE2 error " + std::to_string(code);
  return std::string(reinterpret_cast<const char *>(buffer), length);
}

} // namespace

SplitPattern::SplitPattern(const std::string &pattern, bool literal,
                           std::string where)
    : where_(std::move(where)) {
  // A literal pattern takes no UCP (PCRE2 refuses the combination); it
  // needs no character classes anyway.
  uint32_t options = PCRE2_UTF | (literal ? PCRE2_LITERAL : PCRE2_UCP);
  int errorCode = 0;
  PCRE2_SIZE errorOffset = 0;
  code_.reset(pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()),
                            pattern.size(), options, &errorCode, &errorOffset,
                            nullptr));
  if (!code_)
    throw Error(where_ + ": cannot compile pattern at offset " +
                std::to_string(errorOffset) + ": " + pcre2Message(errorCode));
  // The JIT only speeds matching up; without it PCRE2 interprets.
  pcre2_jit_compile(code_.get(), PCRE2_JIT_COMPLETE);
}

void SplitPattern::split(std::string_view text, pcre2_match_data *match,
                         std::vector<std::string_view> &pieces) const {
  auto subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  size_t gapStart = 0, searchFrom = 0;
  size_t lastMatchEnd = std::string_view::npos;
  while (searchFrom <= text.size()) {
    int status = pcre2_match(code_.get(), subject, text.size(), searchFrom,
                             PCRE2_NO_UTF_CHECK, match, nullptr);
    if (status == PCRE2_ERROR_NOMATCH)
      break;
    if (status < 0)
      throw Error(where_ + ": matching failed: " + pcre2Message(status));
    const PCRE2_SIZE *offsets = pcre2_get_ovector_pointer(match);
    size_t start = offsets[0], end = offsets[1];
    if (start == end && end == lastMatchEnd) {
      if (end == text.size())
        break;
      searchFrom =
          end + utf8SequenceLength(static_cast<unsigned char>(text[end]));
      continue;
    }
    if (gapStart < start)
      pieces.push_back(text.substr(gapStart, start - gapStart));
    if (start < end)
      pieces.push_back(text.substr(start, end - start));
    gapStart = lastMatchEnd = searchFrom = end;
  }
  if (gapStart < text.size())
    pieces.push_back(text.substr(gapStart));
}

//===----------------------------------------------------------------------===//
// Added tokens
//===----------------------------------------------------------------------===//

void AddedTokenMatcher::add(std::string pattern, int64_t id) {
  auto &bucket = byFirstByte_[static_cast<unsigned char>(pattern[0])];
  bucket.push_back({std::move(pattern), id});
  std::stable_sort(bucket.begin(), bucket.end(),
                   [](const Entry &a, const Entry &b) {
                     return a.pattern.size() > b.pattern.size();
                   });
}

std::vector<Segment> AddedTokenMatcher::split(std::string_view text) const {
  std::vector<Segment> segments;
  size_t gapStart = 0;
  for (size_t i = 0; i < text.size();) {
    const Entry *found = nullptr;
    for (const Entry &entry :
         byFirstByte_[static_cast<unsigned char>(text[i])]) {
      if (text.substr(i, entry.pattern.size()) == entry.pattern) {
        found = &entry;
        break;
      }
    }
    if (!found) {
      ++i;
      continue;
    }
    if (gapStart < i)
      segments.push_back({text.substr(gapStart, i - gapStart)});
    segments.push_back({text.substr(i, found->pattern.size()), found->id});
    i += found->pattern.size();
    gapStart = i;
  }
  if (gapStart < text.size())
    segments.push_back({text.substr(gapStart)});
  return segments;
}

//===----------------------------------------------------------------------===//
// Encoding
//===----------------------------------------------------------------------===//

std::string BpeModel::normalize(std::string_view text) const {
  std::string result(text);
  for (const NormalizerStage &stage : normalizer) {
    switch (stage.kind) {
    case NormalizerStage::Kind::Nfc:
      result = nfcOf(*stage.nfc, result, origin);
      break;
    case NormalizerStage::Kind::Prepend:
      if (!result.empty())
        result.insert(0, stage.content);
      break;
    case NormalizerStage::Kind::Replace:
      result = replaceAll(result, stage.pattern, stage.content);
      break;
    }
  }
  return result;
}

void BpeModel::encodePiece(std::string_view piece, bool atTextStart,
                           pcre2_match_data *match,
                           std::vector<int64_t> &ids) const {
  if (metaspace) {
    std::string spaced = replaceAll(piece, " ", metaspace->replacement);
    bool prepend =
        metaspace->prepend == Metaspace::Prepend::Always ||
        (metaspace->prepend == Metaspace::Prepend::First && atTextStart);
    if (prepend && spaced.compare(0, metaspace->replacement.size(),
                                  metaspace->replacement) != 0)
      spaced.insert(0, metaspace->replacement);
    if (!metaspace->split) {
      encodeWord(spaced, ids);
      return;
    }
    // Each replacement character starts a word (MergedWithNext).
    std::string_view rest = spaced;
    while (!rest.empty()) {
      size_t next = rest.find(metaspace->replacement, 1);
      encodeWord(rest.substr(0, next), ids);
      rest = next == std::string_view::npos ? std::string_view()
                                            : rest.substr(next);
    }
    return;
  }

  std::vector<std::string_view> pieces{piece}, next;
  for (const SplitPattern &split : splits) {
    next.clear();
    for (std::string_view part : pieces)
      split.split(part, match, next);
    pieces.swap(next);
  }
  std::string prefixed;
  std::vector<std::string_view> words;
  for (std::string_view part : pieces) {
    // As in `tokenizers`, the space goes before every piece that reaches
    // the ByteLevel stage, not only the first of the text.
    if (addPrefixSpace && !part.empty() && part.front() != ' ') {
      prefixed = " ";
      prefixed += part;
      part = prefixed;
    }
    if (!byteLevelPattern) {
      encodeWord(part, ids);
      continue;
    }
    words.clear();
    byteLevelPattern->split(part, match, words);
    for (std::string_view word : words)
      encodeWord(word, ids);
  }
}

void BpeModel::encodeWord(std::string_view word,
                          std::vector<int64_t> &ids) const {
  if (ignoreMerges) {
    auto it =
        vocab.find(byteLevel ? byteLevelSpelling(word) : std::string(word));
    if (it != vocab.end()) {
      ids.push_back(it->second);
      return;
    }
  }
  std::vector<int64_t> symbols;
  initialSymbols(word, symbols);
  merge(symbols, ids);
}

void BpeModel::initialSymbols(std::string_view word,
                              std::vector<int64_t> &symbols) const {
  symbols.reserve(word.size());
  // As in `tokenizers`, an unknown character waits until the next known one
  // (byte-fallback tokens go in meanwhile), and with fuse_unk one unknown
  // token stands for a run of them. Without unk_token it is dropped.
  std::optional<int64_t> pendingUnknown;
  auto known = [&](int64_t id) {
    if (pendingUnknown)
      symbols.push_back(*pendingUnknown);
    pendingUnknown.reset();
    symbols.push_back(id);
  };
  auto missing = [&](std::string_view spelling) {
    if (byteFallback &&
        std::all_of(spelling.begin(), spelling.end(), [&](char byte) {
          return byteTokenIds[static_cast<unsigned char>(byte)] >= 0;
        })) {
      for (char byte : spelling)
        symbols.push_back(byteTokenIds[static_cast<unsigned char>(byte)]);
      return;
    }
    if (!unknownId)
      return;
    if (pendingUnknown && !fuseUnknown)
      symbols.push_back(*pendingUnknown);
    pendingUnknown = unknownId;
  };
  if (byteLevel) {
    for (unsigned char byte : word) {
      if (byteIds[byte] >= 0) {
        known(byteIds[byte]);
        continue;
      }
      std::string spelling;
      appendUtf8(spelling, byteToCodePoint()[byte]);
      missing(spelling);
    }
  } else {
    for (size_t i = 0; i < word.size();) {
      size_t length = utf8SequenceLength(static_cast<unsigned char>(word[i]));
      std::string_view spelling = word.substr(i, length);
      auto it = characterIds.find(codePointsOf(spelling).front());
      if (it != characterIds.end())
        known(it->second);
      else
        missing(spelling);
      i += length;
    }
  }
  if (pendingUnknown)
    symbols.push_back(*pendingUnknown);
}

void BpeModel::merge(const std::vector<int64_t> &symbolIds,
                     std::vector<int64_t> &ids) const {
  // The word as a linked list of symbols.
  struct Symbol {
    int64_t id;
    int64_t prev, next;
    bool mergedAway;
  };
  std::vector<Symbol> symbols;
  symbols.reserve(symbolIds.size());
  for (int64_t id : symbolIds) {
    auto index = static_cast<int64_t>(symbols.size());
    symbols.push_back({id, index - 1, -1, false});
    if (index > 0)
      symbols[index - 1].next = index;
  }

  // Apply merges lowest rank first, leftmost among equal ranks; entries made
  // stale by an earlier merge are recognised and skipped when popped.
  struct Candidate {
    uint32_t rank;
    int64_t pos;
    int64_t merged;
    bool operator>(const Candidate &other) const {
      return rank != other.rank ? rank > other.rank : pos > other.pos;
    }
  };
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> queue;
  auto pushPair = [&](int64_t pos) {
    const Symbol &left = symbols[pos];
    if (left.next < 0)
      return;
    auto it = merges.find(pairKey(left.id, symbols[left.next].id));
    if (it != merges.end())
      queue.push({it->second.rank, pos, it->second.merged});
  };
  for (int64_t pos = 0; pos + 1 < static_cast<int64_t>(symbols.size()); ++pos)
    pushPair(pos);
  while (!queue.empty()) {
    Candidate top = queue.top();
    queue.pop();
    Symbol &left = symbols[top.pos];
    if (left.mergedAway || left.next < 0)
      continue;
    Symbol &right = symbols[left.next];
    auto it = merges.find(pairKey(left.id, right.id));
    if (it == merges.end() || it->second.merged != top.merged)
      continue;
    left.id = top.merged;
    left.next = right.next;
    right.mergedAway = true;
    if (left.next >= 0)
      symbols[left.next].prev = top.pos;
    if (left.prev >= 0)
      pushPair(left.prev);
    pushPair(top.pos);
  }
  // The first symbol only ever absorbs its right neighbours.
  for (int64_t pos = symbols.empty() ? -1 : 0; pos >= 0;
       pos = symbols[pos].next)
    ids.push_back(symbols[pos].id);
}

//===----------------------------------------------------------------------===//
// Decoding
//===----------------------------------------------------------------------===//

const std::string &BpeModel::textOf(int64_t id, size_t index) const {
  auto it = tokenText.find(id);
  if (it == tokenText.end())
    throw Error(origin + ": decode: ids[" + std::to_string(index) + "] = " +
                std::to_string(id) + " names no token (vocabulary size " +
                std::to_string(vocabSize) + ")");
  return it->second;
}

std::string BpeModel::decode(const std::vector<int64_t> &ids,
                             bool continuation) const {
  if (byteLevel) {
    std::string text;
    for (size_t i = 0; i < ids.size(); ++i)
      text += textOf(ids[i], i);
    return text;
  }
  std::vector<std::string> tokens;
  tokens.reserve(ids.size());
  for (size_t i = 0; i < ids.size(); ++i)
    tokens.push_back(textOf(ids[i], i));
  for (const DecoderStage &stage : decoder) {
    switch (stage.kind) {
    case DecoderStage::Kind::Replace:
      for (std::string &token : tokens)
        token = replaceAll(token, stage.pattern, stage.content);
      break;
    case DecoderStage::Kind::ByteFallback: {
      // A run of byte tokens becomes its bytes. `tokenizers` writes U+FFFD
      // for each byte of a run that is not valid UTF-8; the bytes are kept
      // here, so a text decoded token by token equals the text decoded whole.
      std::vector<std::string> merged;
      bool inRun = false;
      for (std::string &token : tokens) {
        int byte = byteOfByteToken(token);
        if (byte < 0) {
          merged.push_back(std::move(token));
          inRun = false;
          continue;
        }
        if (!inRun)
          merged.emplace_back();
        merged.back().push_back(static_cast<char>(byte));
        inRun = true;
      }
      tokens.swap(merged);
      break;
    }
    case DecoderStage::Kind::Fuse: {
      std::string fused;
      for (const std::string &token : tokens)
        fused += token;
      tokens.clear();
      tokens.push_back(std::move(fused));
      break;
    }
    case DecoderStage::Kind::Strip:
      // The loader accepts Strip only after Fuse: it strips the text's
      // start, which a continuation does not have.
      if (!continuation)
        for (std::string &token : tokens)
          for (size_t k = 0;
               k < stage.start &&
               token.compare(0, stage.content.size(), stage.content) == 0;
               ++k)
            token.erase(0, stage.content.size());
      break;
    case DecoderStage::Kind::Metaspace:
      for (size_t k = 0; k < tokens.size(); ++k)
        tokens[k] =
            replaceAll(tokens[k], stage.pattern,
                       k == 0 && stage.stripFirst && !continuation ? "" : " ");
      break;
    }
  }
  std::string text;
  for (const std::string &token : tokens)
    text += token;
  return text;
}

} // namespace genesis::text::detail
