//===- TokenizerModel.h - The BPE model behind BpeTokenizer -----*- C++ -*-===//
//
// Internal to GenesisText: what a tokenizer.json says, in the form the
// encoder and decoder use (BpeModel), and the Unicode and pattern helpers
// they share with the loader. TokenizerLoader.cpp fills a BpeModel;
// Tokenizer.cpp wraps it as BpeTokenizer.
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_MODELS_COMMON_TOKENIZERMODEL_H
#define GENESIS_MODELS_COMMON_TOKENIZERMODEL_H

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <unicode/normalizer2.h>

#include "models/common/Tokenizer.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace genesis::text::detail {

//===----------------------------------------------------------------------===//
// Unicode helpers
//===----------------------------------------------------------------------===//

/// GPT-2's byte-to-unicode table: printable Latin-1 bytes stand for
/// themselves and the others, in order, for U+0100 upward, so every byte is a
/// visible character in the vocabulary.
const std::array<char32_t, 256> &byteToCodePoint();
/// The byte a character of GPT-2's byte alphabet stands for, or -1.
int byteOfCodePoint(char32_t codePoint);
/// The byte-level spelling of `bytes`: each byte as its character.
std::string byteLevelSpelling(std::string_view bytes);
/// The length of the UTF-8 sequence that `lead` starts (1 for a byte that
/// starts none).
size_t utf8SequenceLength(unsigned char lead);
/// The offset of the first byte that does not start a valid UTF-8 sequence
/// (RFC 3629: no overlong forms, surrogates or code points past U+10FFFF),
/// or npos if there is none.
size_t invalidUtf8Offset(std::string_view text);
/// The code points of valid UTF-8 `text`.
std::vector<char32_t> codePointsOf(std::string_view text);
/// `text` in NFC; errors name `origin`.
std::string nfcOf(const icu::Normalizer2 &nfc, std::string_view text,
                  const std::string &origin);
/// `text` with every occurrence of non-empty `pattern` replaced by
/// `replacement`, left to right.
std::string replaceAll(std::string_view text, std::string_view pattern,
                       std::string_view replacement);
/// The byte a SentencePiece byte token ("<0x41>", either case of hex digit)
/// stands for, or -1 for another token.
int byteOfByteToken(std::string_view token);

//===----------------------------------------------------------------------===//
// Pre-tokenizer patterns
//===----------------------------------------------------------------------===//

/// The pattern of GPT-2's ByteLevel pre-tokenizer (use_regex: true).
extern const char *const kGpt2Pattern;

struct MatchDataDeleter {
  void operator()(pcre2_match_data *data) const { pcre2_match_data_free(data); }
};
using MatchData = std::unique_ptr<pcre2_match_data, MatchDataDeleter>;

/// One pattern of the pre-tokenizer, splitting as Hugging Face's Split with
/// behavior Isolated: the matches and the gaps between them become pieces.
class SplitPattern {
public:
  /// `where` names the pattern's file and key in error messages.
  SplitPattern(const std::string &pattern, bool literal, std::string where);

  /// Appends the pieces of non-empty, valid UTF-8 `text` to `pieces`,
  /// leaving out empty ones. Matches are enumerated as the Oniguruma iterator
  /// of `tokenizers` does: an empty match where the previous match ended is
  /// skipped by one character, other empty matches split the gap they fall in.
  void split(std::string_view text, pcre2_match_data *match,
             std::vector<std::string_view> &pieces) const;

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
  void add(std::string pattern, int64_t id);
  std::vector<Segment> split(std::string_view text) const;

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
// The model
//===----------------------------------------------------------------------===//

struct MergeRule {
  uint32_t rank;
  int64_t merged;
};

/// The key of a merge: the ids of its two tokens (both below 2^31).
inline uint64_t pairKey(int64_t left, int64_t right) {
  return (static_cast<uint64_t>(left) << 32) | static_cast<uint64_t>(right);
}

/// One stage of the normalizer, applied in order.
struct NormalizerStage {
  enum class Kind { Nfc, Prepend, Replace };
  Kind kind;
  /// Nfc: ICU's normalizer.
  const icu::Normalizer2 *nfc = nullptr;
  /// Replace: the literal replaced.
  std::string pattern;
  /// Prepend: what goes before a non-empty text; Replace: the replacement.
  std::string content;
};

/// The Metaspace pre-tokenizer: spaces become `replacement`, which is put
/// before pieces as `prependScheme` says and, with `split`, starts a word.
struct Metaspace {
  enum class Prepend { Always, First, Never };
  std::string replacement;
  Prepend prepend = Prepend::Always;
  bool split = true;
};

/// One stage of a SentencePiece-style decoder, applied in order to the list
/// of token strings as `tokenizers`' decode_chain does.
struct DecoderStage {
  enum class Kind { Replace, ByteFallback, Fuse, Strip, Metaspace };
  Kind kind;
  /// Replace: the literal replaced; Metaspace: the replacement character.
  std::string pattern;
  /// Replace: the replacement; Strip: the character stripped.
  std::string content;
  /// Strip: how many leading `content` characters go.
  size_t start = 0;
  /// Metaspace: the first token loses its replacement characters.
  bool stripFirst = false;
};

/// Everything a tokenizer.json says, ready to encode and decode with.
struct BpeModel {
  std::string origin;

  /// Whether words are spelt in GPT-2's byte alphabet (a ByteLevel
  /// pre-tokenizer) or as the text's own code points (SentencePiece-style).
  bool byteLevel = true;

  // Model.
  std::unordered_map<std::string, int64_t> vocab;
  /// Byte-level: the id of each byte's character, -1 where the vocabulary
  /// lacks it.
  std::array<int64_t, 256> byteIds{};
  /// Code points: the ids of the vocabulary's one-character tokens.
  std::unordered_map<char32_t, int64_t> characterIds;
  /// With byte_fallback: the ids of "<0x00>".."<0xFF>", -1 where missing.
  std::array<int64_t, 256> byteTokenIds{};
  bool byteFallback = false;
  std::unordered_map<uint64_t, MergeRule> merges;
  std::optional<int64_t> unknownId;
  bool fuseUnknown = false;
  bool ignoreMerges = false;

  // Normalizer and pre-tokenizer.
  std::vector<NormalizerStage> normalizer;
  std::vector<SplitPattern> splits;
  bool addPrefixSpace = false;
  std::optional<SplitPattern> byteLevelPattern;
  std::optional<Metaspace> metaspace;

  // Added tokens and decoding.
  AddedTokenMatcher rawAddedTokens, normalizedAddedTokens;
  std::unordered_map<std::string, int64_t> addedIds;
  /// Byte-level: the bytes each id decodes to; code points: each id's token
  /// string, which the decoder stages turn into text.
  std::unordered_map<int64_t, std::string> tokenText;
  std::vector<DecoderStage> decoder;
  int64_t vocabSize = 0;

  /// `text` through the normalizer stages.
  std::string normalize(std::string_view text) const;
  /// Appends the ids of `piece`, a stretch of normalised text without added
  /// tokens; `atTextStart`: the piece begins the encoded text.
  void encodePiece(std::string_view piece, bool atTextStart,
                   pcre2_match_data *match, std::vector<int64_t> &ids) const;
  /// Appends the BPE ids of one pre-token.
  void encodeWord(std::string_view word, std::vector<int64_t> &ids) const;
  /// The text of `ids`; `continuation`: they follow earlier tokens of the
  /// same text, so what a decoder does only at a text's start is left out.
  std::string decode(const std::vector<int64_t> &ids, bool continuation) const;

private:
  /// The symbols a word starts as, before merges.
  void initialSymbols(std::string_view word,
                      std::vector<int64_t> &symbols) const;
  /// Merges the symbols of `symbolIds` by rank and appends the result to
  /// `ids`.
  void merge(const std::vector<int64_t> &symbolIds,
             std::vector<int64_t> &ids) const;
  const std::string &textOf(int64_t id, size_t index) const;
};

} // namespace genesis::text::detail

namespace genesis::text {
struct BpeTokenizer::Impl : detail::BpeModel {};
} // namespace genesis::text

#endif // GENESIS_MODELS_COMMON_TOKENIZERMODEL_H
