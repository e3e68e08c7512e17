//===- Tokenizer.cpp - Text to token ids and back -------------------------===//
//
// BpeTokenizer reproduces the encode path of Hugging Face `tokenizers` for
// byte-level BPE: added tokens are cut out first (those marked normalized
// after normalisation), the rest is normalised, split by the pre-tokenizer
// patterns, mapped to GPT-2's byte alphabet and merged by rank. Oniguruma
// runs the patterns there and PCRE2 here; both take the GPT-2-family
// patterns with the same meaning (docs/generation.md lists the differences in
// their Unicode tables).
//
//===----------------------------------------------------------------------===//

#include "models/common/Tokenizer.h"

#include "runtime/formats/Json.h"
#include "runtime/support/Error.h"

#include <nlohmann/json.hpp>
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <unicode/bytestream.h>
#include <unicode/normalizer2.h>
#include <unicode/utypes.h>

#include <algorithm>
#include <array>
#include <climits>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <queue>
#include <string_view>
#include <unordered_map>

namespace genesis::text {

void appendUtf8(std::string &out, char32_t codePoint) {
  if (codePoint < 0x80) {
    out.push_back(static_cast<char>(codePoint));
  } else if (codePoint < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (codePoint >> 6)));
    out.push_back(static_cast<char>(0x80 | (codePoint & 0x3F)));
  } else if (codePoint < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (codePoint >> 12)));
    out.push_back(static_cast<char>(0x80 | ((codePoint >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (codePoint & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (codePoint >> 18)));
    out.push_back(static_cast<char>(0x80 | ((codePoint >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((codePoint >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (codePoint & 0x3F)));
  }
}

Tokenizer::~Tokenizer() = default;

//===----------------------------------------------------------------------===//
// ByteTokenizer
//===----------------------------------------------------------------------===//

std::vector<int64_t> ByteTokenizer::encode(const std::string &text) const {
  std::vector<int64_t> ids;
  ids.reserve(text.size());
  for (unsigned char byte : text)
    ids.push_back(byte);
  return ids;
}

std::string ByteTokenizer::decode(const std::vector<int64_t> &ids) const {
  std::string text;
  text.reserve(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] == kEndOfTextId)
      continue;
    if (ids[i] < 0 || ids[i] > 255)
      throw Error("ByteTokenizer::decode: ids[" + std::to_string(i) +
                  "] = " + std::to_string(ids[i]) + " is outside [0, " +
                  std::to_string(vocabSize()) + ")");
    text.push_back(static_cast<char>(ids[i]));
  }
  return text;
}

//===----------------------------------------------------------------------===//
// Unicode helpers
//===----------------------------------------------------------------------===//

namespace {

using Json = nlohmann::json;

/// GPT-2's byte-to-unicode table: printable Latin-1 bytes stand for
/// themselves and the others, in order, for U+0100 upward, so every byte is a
/// visible character in the vocabulary.
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

/// The byte a character of GPT-2's byte alphabet stands for, or -1.
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

/// The byte-level spelling of `bytes`: each byte as its character.
std::string byteLevelSpelling(std::string_view bytes) {
  std::string spelling;
  for (unsigned char byte : bytes)
    appendUtf8(spelling, byteToCodePoint()[byte]);
  return spelling;
}

/// The length of the UTF-8 sequence that `lead` starts (1 for a byte that
/// starts none).
size_t utf8SequenceLength(unsigned char lead) {
  if (lead >= 0xF0)
    return 4;
  if (lead >= 0xE0)
    return 3;
  if (lead >= 0xC0)
    return 2;
  return 1;
}

/// The offset of the first byte that does not start a valid UTF-8 sequence
/// (RFC 3629: no overlong forms, surrogates or code points past U+10FFFF),
/// or npos if there is none.
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

/// The code points of valid UTF-8 `text`.
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

//===----------------------------------------------------------------------===//
// Pre-tokenizer patterns
//===----------------------------------------------------------------------===//

/// The pattern of GPT-2's ByteLevel pre-tokenizer (use_regex: true).
constexpr const char *kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

std::string pcre2Message(int code) {
  PCRE2_UCHAR buffer[256];
  int length = pcre2_get_error_message(code, buffer, sizeof(buffer));
  if (length < 0)
    return "PCRE2 error " + std::to_string(code);
  return std::string(reinterpret_cast<const char *>(buffer), length);
}

struct MatchDataDeleter {
  void operator()(pcre2_match_data *data) const { pcre2_match_data_free(data); }
};
using MatchData = std::unique_ptr<pcre2_match_data, MatchDataDeleter>;

/// One pattern of the pre-tokenizer, splitting as Hugging Face's Split with
/// behavior Isolated: the matches and the gaps between them become pieces.
class SplitPattern {
public:
  /// `where` names the pattern's file and key in error messages.
  SplitPattern(const std::string &pattern, bool literal, std::string where)
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

  /// Appends the pieces of non-empty, valid UTF-8 `text` to `pieces`,
  /// leaving out empty ones. Matches are enumerated as the Oniguruma iterator
  /// of `tokenizers` does: an empty match where the previous match ended is
  /// skipped by one character, other empty matches split the gap they fall in.
  void split(std::string_view text, pcre2_match_data *match,
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

private:
  struct CodeDeleter {
    void operator()(pcre2_code *code) const { pcre2_code_free(code); }
  };
  std::unique_ptr<pcre2_code, CodeDeleter> code_;
  std::string where_;
};

//===----------------------------------------------------------------------===//
// Added tokens
//===----------------------------------------------------------------------===//

/// A stretch of text, or an added token found in it (id >= 0).
struct Segment {
  std::string_view text;
  int64_t id = -1;
};

/// Cuts added tokens out of text, leftmost first and longest among those
/// starting at one place, as the Aho-Corasick automaton of `tokenizers`
/// (MatchKind::LeftmostLongest) does.
class AddedTokenMatcher {
public:
  void add(std::string pattern, int64_t id) {
    auto &bucket = byFirstByte_[static_cast<unsigned char>(pattern[0])];
    bucket.push_back({std::move(pattern), id});
    std::stable_sort(bucket.begin(), bucket.end(),
                     [](const Entry &a, const Entry &b) {
                       return a.pattern.size() > b.pattern.size();
                     });
  }

  std::vector<Segment> split(std::string_view text) const {
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

private:
  struct Entry {
    std::string pattern;
    int64_t id;
  };
  std::array<std::vector<Entry>, 256> byFirstByte_;
};

/// An entry of added_tokens.
struct AddedToken {
  std::string content;
  int64_t id;
  bool normalized;
};

//===----------------------------------------------------------------------===//
// Encoding
//===----------------------------------------------------------------------===//

struct MergeRule {
  uint32_t rank;
  int64_t merged;
};

/// The key of a merge: the ids of its two tokens (both below 2^31).
uint64_t pairKey(int64_t left, int64_t right) {
  return (static_cast<uint64_t>(left) << 32) | static_cast<uint64_t>(right);
}

/// Everything a tokenizer.json says, ready to encode and decode with.
struct BpeModel {
  std::string origin;

  // Model.
  std::unordered_map<std::string, int64_t> vocab;
  std::array<int64_t, 256> byteIds; ///< -1 where the vocabulary lacks a byte.
  std::unordered_map<uint64_t, MergeRule> merges;
  std::optional<int64_t> unknownId;
  bool fuseUnknown = false;
  bool ignoreMerges = false;

  // Normalizer and pre-tokenizer.
  const icu::Normalizer2 *nfc = nullptr;
  std::vector<SplitPattern> splits;
  bool addPrefixSpace = false;
  std::optional<SplitPattern> byteLevelPattern;

  // Added tokens and decoding.
  AddedTokenMatcher rawAddedTokens, normalizedAddedTokens;
  std::unordered_map<std::string, int64_t> addedIds;
  std::unordered_map<int64_t, std::string> tokenBytes;
  int64_t vocabSize = 0;

  /// Appends the ids of `piece`, a stretch of normalised text without added
  /// tokens.
  void encodePiece(std::string_view piece, pcre2_match_data *match,
                   std::vector<int64_t> &ids) const;
  /// Appends the BPE ids of one pre-token.
  void encodeWord(std::string_view word, std::vector<int64_t> &ids) const;
};

void BpeModel::encodePiece(std::string_view piece, pcre2_match_data *match,
                           std::vector<int64_t> &ids) const {
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
    auto it = vocab.find(byteLevelSpelling(word));
    if (it != vocab.end()) {
      ids.push_back(it->second);
      return;
    }
  }

  // The word as a linked list of symbols, one per byte to begin with.
  struct Symbol {
    int64_t id;
    int64_t prev, next;
    bool mergedAway;
  };
  std::vector<Symbol> symbols;
  symbols.reserve(word.size());
  bool previousUnknown = false;
  for (unsigned char byte : word) {
    int64_t id = byteIds[byte];
    if (id < 0) {
      // `tokenizers` drops a byte it has no token for when there is no
      // unk_token, and with fuse_unk one unk stands for a run of them.
      if (!unknownId || (fuseUnknown && previousUnknown))
        continue;
      id = *unknownId;
      previousUnknown = true;
    } else {
      previousUnknown = false;
    }
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

} // namespace

//===----------------------------------------------------------------------===//
// BpeTokenizer
//===----------------------------------------------------------------------===//

struct BpeTokenizer::Impl : BpeModel {};

BpeTokenizer::BpeTokenizer(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}
BpeTokenizer::BpeTokenizer(BpeTokenizer &&other) noexcept = default;
BpeTokenizer &BpeTokenizer::operator=(BpeTokenizer &&other) noexcept = default;
BpeTokenizer::~BpeTokenizer() = default;

std::vector<int64_t> BpeTokenizer::encode(const std::string &text) const {
  size_t invalid = invalidUtf8Offset(text);
  if (invalid != std::string_view::npos)
    throw Error(impl_->origin + ": encode: the text is not valid UTF-8 (byte " +
                std::to_string(invalid) + ")");
  MatchData match(pcre2_match_data_create(1, nullptr));
  if (!match)
    throw std::bad_alloc();
  std::vector<int64_t> ids;
  for (const Segment &raw : impl_->rawAddedTokens.split(text)) {
    if (raw.id >= 0) {
      ids.push_back(raw.id);
      continue;
    }
    std::string normalized = impl_->nfc
                                 ? nfcOf(*impl_->nfc, raw.text, impl_->origin)
                                 : std::string(raw.text);
    for (const Segment &segment :
         impl_->normalizedAddedTokens.split(normalized)) {
      if (segment.id >= 0)
        ids.push_back(segment.id);
      else
        impl_->encodePiece(segment.text, match.get(), ids);
    }
  }
  return ids;
}

std::string BpeTokenizer::decode(const std::vector<int64_t> &ids) const {
  std::string text;
  for (size_t i = 0; i < ids.size(); ++i) {
    auto it = impl_->tokenBytes.find(ids[i]);
    if (it == impl_->tokenBytes.end())
      throw Error(impl_->origin + ": decode: ids[" + std::to_string(i) +
                  "] = " + std::to_string(ids[i]) +
                  " names no token (vocabulary size " +
                  std::to_string(impl_->vocabSize) + ")");
    text += it->second;
  }
  return text;
}

int64_t BpeTokenizer::vocabSize() const { return impl_->vocabSize; }

std::optional<int64_t> BpeTokenizer::endOfTextId() const {
  return tokenId("<|endoftext|>");
}

std::optional<int64_t> BpeTokenizer::tokenId(const std::string &token) const {
  if (auto it = impl_->addedIds.find(token); it != impl_->addedIds.end())
    return it->second;
  if (auto it = impl_->vocab.find(token); it != impl_->vocab.end())
    return it->second;
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Loading tokenizer.json
//===----------------------------------------------------------------------===//

namespace {

/// Reads one tokenizer.json document, checking every value it uses; errors
/// name the file and the key.
class Loader {
public:
  explicit Loader(std::string origin) : origin_(std::move(origin)) {}

  /// Fills `bpe` from `root`.
  void load(const Json &root, BpeModel &bpe);

private:
  [[noreturn]] void fail(const std::string &key,
                         const std::string &what) const {
    throw Error(origin_ + ": " + (key.empty() ? "" : key + ": ") + what);
  }

  /// `value` shortened for an error message, cut between characters.
  static std::string show(const Json &value) { return describeJson(value, 60); }

  /// The member `name` of `object`, or nullptr if it is absent or null.
  static const Json *find(const Json &object, const char *name) {
    auto it = object.find(name);
    return it == object.end() || it->is_null() ? nullptr : &*it;
  }

  const Json &objectAt(const Json &object, const char *name,
                       const std::string &key) const {
    const Json *member = find(object, name);
    if (!member)
      fail(key, "missing");
    if (!member->is_object())
      fail(key, "expected an object, got " + show(*member));
    return *member;
  }

  std::string stringAt(const Json &object, const char *name,
                       const std::string &key) const {
    const Json *member = find(object, name);
    if (!member)
      fail(key, "missing");
    if (!member->is_string())
      fail(key, "expected a string, got " + show(*member));
    return member->get<std::string>();
  }

  bool boolAt(const Json &object, const char *name, const std::string &key,
              std::optional<bool> fallback) const {
    const Json *member = find(object, name);
    if (!member) {
      if (!fallback)
        fail(key, "missing");
      return *fallback;
    }
    if (!member->is_boolean())
      fail(key, "expected true or false, got " + show(*member));
    return member->get<bool>();
  }

  int64_t idOf(const Json &value, const std::string &key) const {
    if (!value.is_number_integer() || value.get<int64_t>() < 0 ||
        value.get<int64_t>() > INT32_MAX)
      fail(key, "expected an id (an integer in [0, 2^31)), got " + show(value));
    return value.get<int64_t>();
  }

  /// `type` of the object at `key`, which must be one of `supported`.
  std::string typeOf(const Json &object, const std::string &key,
                     const std::vector<std::string> &supported,
                     const std::string &what) const;

  void loadModel(const Json &root, BpeModel &bpe) const;
  void loadMerges(const Json &model, BpeModel &bpe) const;
  std::vector<AddedToken> loadAddedTokens(const Json &root,
                                          BpeModel &bpe) const;
  void loadPreTokenizer(const Json &root, BpeModel &bpe) const;
  void loadByteLevel(const Json &stage, const std::string &key,
                     BpeModel &bpe) const;
  SplitPattern loadSplit(const Json &stage, const std::string &key) const;

  std::string origin_;
};

std::string Loader::typeOf(const Json &object, const std::string &key,
                           const std::vector<std::string> &supported,
                           const std::string &what) const {
  std::string type = stringAt(object, "type", key + ".type");
  if (std::find(supported.begin(), supported.end(), type) != supported.end())
    return type;
  std::string list;
  for (const std::string &name : supported)
    list += (list.empty() ? "" : ", ") + name;
  fail(key + ".type",
       "unsupported " + what + " '" + type + "' (supported: " + list + ")");
}

void Loader::load(const Json &root, BpeModel &bpe) {
  if (!root.is_object())
    fail("", "expected a JSON object at the top level, got " + show(root));
  bpe.origin = origin_;
  loadModel(root, bpe);
  std::vector<AddedToken> addedTokens = loadAddedTokens(root, bpe);

  if (const Json *normalizer = find(root, "normalizer")) {
    if (!normalizer->is_object())
      fail("normalizer",
           "expected an object or null, got " + show(*normalizer));
    typeOf(*normalizer, "normalizer", {"NFC"}, "normalizer");
    UErrorCode status = U_ZERO_ERROR;
    bpe.nfc = icu::Normalizer2::getNFCInstance(status);
    if (U_FAILURE(status))
      fail("normalizer",
           std::string("ICU has no NFC data: ") + u_errorName(status));
  }
  // As in `tokenizers`, tokens marked normalized are looked for in the
  // normalised text, the others in the text as given.
  for (AddedToken &token : addedTokens) {
    if (!token.normalized)
      bpe.rawAddedTokens.add(std::move(token.content), token.id);
    else if (bpe.nfc)
      bpe.normalizedAddedTokens.add(nfcOf(*bpe.nfc, token.content, origin_),
                                    token.id);
    else
      bpe.normalizedAddedTokens.add(std::move(token.content), token.id);
  }
  loadPreTokenizer(root, bpe);

  const Json &decoder = objectAt(root, "decoder", "decoder");
  typeOf(decoder, "decoder", {"ByteLevel"}, "decoder");
}

void Loader::loadModel(const Json &root, BpeModel &bpe) const {
  const Json &model = objectAt(root, "model", "model");
  // Files written before `type` was serialised leave it out; `tokenizers`
  // then recognises BPE by its fields, as here.
  if (find(model, "type"))
    typeOf(model, "model", {"BPE"}, "model type");
  if (const Json *dropout = find(model, "dropout");
      dropout && !(dropout->is_number() && dropout->get<double>() == 0.0))
    fail("model.dropout", "BPE dropout makes encoding random; only null or 0 "
                          "is supported, got " +
                              show(*dropout));
  if (boolAt(model, "byte_fallback", "model.byte_fallback", false))
    fail("model.byte_fallback", "byte fallback is not supported");
  for (const char *affix : {"continuing_subword_prefix", "end_of_word_suffix"})
    if (const Json *value = find(model, affix);
        value && !(value->is_string() && value->get<std::string>().empty()))
      fail(std::string("model.") + affix,
           "not supported by a byte-level BPE, got " + show(*value));
  bpe.fuseUnknown = boolAt(model, "fuse_unk", "model.fuse_unk", false);
  bpe.ignoreMerges =
      boolAt(model, "ignore_merges", "model.ignore_merges", false);

  const Json &vocab = objectAt(model, "vocab", "model.vocab");
  if (vocab.empty())
    fail("model.vocab", "empty");
  for (auto it = vocab.begin(); it != vocab.end(); ++it) {
    std::string key = "model.vocab[" + Json(it.key()).dump() + "]";
    int64_t id = idOf(it.value(), key);
    auto [existing, inserted] = bpe.tokenBytes.emplace(id, std::string());
    if (!inserted)
      fail(key, "id " + std::to_string(id) + " is taken twice");
    bpe.vocab.emplace(it.key(), id);
    bpe.vocabSize = std::max(bpe.vocabSize, id + 1);
    // As the ByteLevel decoder of `tokenizers`: a token with a character
    // outside the byte alphabet decodes to its own UTF-8 text.
    std::string bytes;
    for (char32_t codePoint : codePointsOf(it.key())) {
      int byte = byteOfCodePoint(codePoint);
      if (byte < 0) {
        bytes = it.key();
        break;
      }
      bytes.push_back(static_cast<char>(byte));
    }
    existing->second = std::move(bytes);
  }
  for (int byte = 0; byte < 256; ++byte) {
    std::string spelling;
    appendUtf8(spelling, byteToCodePoint()[byte]);
    auto it = bpe.vocab.find(spelling);
    bpe.byteIds[byte] = it == bpe.vocab.end() ? -1 : it->second;
  }
  if (const Json *unknown = find(model, "unk_token")) {
    if (!unknown->is_string())
      fail("model.unk_token",
           "expected a string or null, got " + show(*unknown));
    auto it = bpe.vocab.find(unknown->get<std::string>());
    if (it == bpe.vocab.end())
      fail("model.unk_token", show(*unknown) + " is not in model.vocab");
    bpe.unknownId = it->second;
  }
  loadMerges(model, bpe);
}

void Loader::loadMerges(const Json &model, BpeModel &bpe) const {
  const Json *merges = find(model, "merges");
  if (!merges)
    fail("model.merges", "missing");
  if (!merges->is_array())
    fail("model.merges", "expected an array, got " + show(*merges));
  for (size_t rank = 0; rank < merges->size(); ++rank) {
    const Json &merge = (*merges)[rank];
    std::string key = "model.merges[" + std::to_string(rank) + "]";
    std::string left, right;
    if (merge.is_string()) {
      // The older form: one string, the two tokens separated by one space.
      std::string text = merge.get<std::string>();
      size_t space = text.find(' ');
      if (space == std::string::npos ||
          text.find(' ', space + 1) != std::string::npos)
        fail(key,
             "expected two tokens separated by one space, got " + show(merge));
      left = text.substr(0, space);
      right = text.substr(space + 1);
    } else if (merge.is_array() && merge.size() == 2 && merge[0].is_string() &&
               merge[1].is_string()) {
      left = merge[0].get<std::string>();
      right = merge[1].get<std::string>();
    } else {
      fail(key, "expected \"a b\" or [\"a\", \"b\"], got " + show(merge));
    }
    auto idOfToken = [&](const std::string &token, const char *role) {
      auto it = bpe.vocab.find(token);
      if (it == bpe.vocab.end())
        fail(key, std::string(role) + " " + Json(token).dump() +
                      " is not in model.vocab");
      return it->second;
    };
    int64_t leftId = idOfToken(left, "token");
    int64_t rightId = idOfToken(right, "token");
    int64_t merged = idOfToken(left + right, "merged token");
    // A repeated pair takes its last rank, as in `tokenizers`.
    bpe.merges[pairKey(leftId, rightId)] = {static_cast<uint32_t>(rank),
                                            merged};
  }
}

std::vector<AddedToken> Loader::loadAddedTokens(const Json &root,
                                                BpeModel &bpe) const {
  std::vector<AddedToken> tokens;
  const Json *added = find(root, "added_tokens");
  if (!added)
    return tokens;
  if (!added->is_array())
    fail("added_tokens", "expected an array, got " + show(*added));
  for (size_t i = 0; i < added->size(); ++i) {
    const Json &token = (*added)[i];
    std::string key = "added_tokens[" + std::to_string(i) + "]";
    if (!token.is_object())
      fail(key, "expected an object, got " + show(token));
    std::string content = stringAt(token, "content", key + ".content");
    if (content.empty())
      fail(key + ".content", "empty");
    const Json *idValue = find(token, "id");
    if (!idValue)
      fail(key + ".id", "missing");
    int64_t id = idOf(*idValue, key + ".id");
    for (const char *option : {"single_word", "lstrip", "rstrip"})
      if (boolAt(token, option, key + "." + option, false))
        fail(key + "." + option, "not supported (only false)");

    // Special tokens default to normalized: false, as `tokenizers`' own
    // AddedToken::from does.
    bool special = boolAt(token, "special", key + ".special", false);
    bool normalized =
        boolAt(token, "normalized", key + ".normalized", !special);

    auto vocabEntry = bpe.vocab.find(content);
    bool inVocab = vocabEntry != bpe.vocab.end();
    if (inVocab && vocabEntry->second != id)
      fail(key, Json(content).dump() + " has id " + std::to_string(id) +
                    " here but " + std::to_string(vocabEntry->second) +
                    " in model.vocab");
    if (!inVocab && bpe.tokenBytes.count(id))
      fail(key + ".id", std::to_string(id) + " already names another token");
    if (!bpe.addedIds.emplace(content, id).second)
      fail(key, Json(content).dump() + " is added twice");
    // An added token decodes to its content, even where all its characters
    // belong to the byte alphabet.
    bpe.tokenBytes[id] = content;
    bpe.vocabSize = std::max(bpe.vocabSize, id + 1);
    tokens.push_back({std::move(content), id, normalized});
  }
  return tokens;
}

void Loader::loadByteLevel(const Json &stage, const std::string &key,
                           BpeModel &bpe) const {
  bpe.addPrefixSpace =
      boolAt(stage, "add_prefix_space", key + ".add_prefix_space", {});
  if (boolAt(stage, "use_regex", key + ".use_regex", true))
    bpe.byteLevelPattern.emplace(kGpt2Pattern, false,
                                 origin_ + ": " + key + " (GPT-2 pattern)");
}

SplitPattern Loader::loadSplit(const Json &stage,
                               const std::string &key) const {
  std::string behavior = stringAt(stage, "behavior", key + ".behavior");
  if (behavior != "Isolated")
    fail(key + ".behavior",
         "unsupported behavior '" + behavior + "' (supported: Isolated)");
  if (boolAt(stage, "invert", key + ".invert", false))
    fail(key + ".invert", "not supported (only false)");
  const Json &pattern = objectAt(stage, "pattern", key + ".pattern");
  if (pattern.size() == 1 && find(pattern, "Regex"))
    return SplitPattern(stringAt(pattern, "Regex", key + ".pattern.Regex"),
                        false, origin_ + ": " + key + ".pattern.Regex");
  if (pattern.size() == 1 && find(pattern, "String")) {
    std::string literal = stringAt(pattern, "String", key + ".pattern.String");
    if (literal.empty())
      fail(key + ".pattern.String", "empty");
    return SplitPattern(literal, true,
                        origin_ + ": " + key + ".pattern.String");
  }
  fail(key + ".pattern",
       "expected {\"Regex\": ...} or {\"String\": ...}, got " + show(pattern));
}

void Loader::loadPreTokenizer(const Json &root, BpeModel &bpe) const {
  const Json &preTokenizer = objectAt(root, "pre_tokenizer", "pre_tokenizer");
  std::string type = typeOf(preTokenizer, "pre_tokenizer",
                            {"ByteLevel", "Sequence"}, "pre_tokenizer");
  if (type == "ByteLevel") {
    loadByteLevel(preTokenizer, "pre_tokenizer", bpe);
    return;
  }
  const Json *stages = find(preTokenizer, "pretokenizers");
  if (!stages || !stages->is_array() || stages->empty())
    fail("pre_tokenizer.pretokenizers", "expected a non-empty array");
  // Splits refine the pieces; the ByteLevel stage must come last, since
  // after it the pieces are spelt in the byte alphabet.
  for (size_t i = 0; i < stages->size(); ++i) {
    const Json &stage = (*stages)[i];
    std::string key = "pre_tokenizer.pretokenizers[" + std::to_string(i) + "]";
    if (!stage.is_object())
      fail(key, "expected an object, got " + show(stage));
    bool last = i + 1 == stages->size();
    typeOf(stage, key, {last ? "ByteLevel" : "Split"},
           last ? "last stage" : "stage before the last");
    if (last)
      loadByteLevel(stage, key, bpe);
    else
      bpe.splits.push_back(loadSplit(stage, key));
  }
}

} // namespace

BpeTokenizer BpeTokenizer::fromFile(const std::string &path) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error))
    throw Error(path + ": no such tokenizer file");
  std::ifstream stream(path, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(stream)),
                   std::istreambuf_iterator<char>());
  if (!stream.good() && !stream.eof())
    throw Error(path + ": cannot read the tokenizer file");
  Json root = parseJson(text, path);
  auto impl = std::make_unique<Impl>();
  Loader(path).load(root, *impl);
  return BpeTokenizer(std::move(impl));
}

} // namespace genesis::text
