//===- TokenizerLoader.cpp - Reading tokenizer.json -----------------------===//
//
// Fills a BpeModel from a Hugging Face tokenizer.json, verifying every value
// it uses before trusting it: each problem is a genesis::Error naming the
// file and the key. Two families of files are accepted: byte-level BPE
// (GPT-2, Qwen2: a ByteLevel pre-tokenizer and decoder) and SentencePiece-
// style BPE (Llama, Mistral: code points, "▁" for spaces, byte_fallback,
// a Prepend/Replace normalizer or a Metaspace pre-tokenizer, and a decoder of
// Replace, ByteFallback, Fuse and Strip stages or Metaspace).
//
//===----------------------------------------------------------------------===//

#include "models/common/Tokenizer.h"
#include "models/common/TokenizerModel.h"

#include "runtime/formats/Json.h"
#include "runtime/support/Error.h"

#include <nlohmann/json.hpp>
#include <unicode/utypes.h>

#include <climits>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace genesis::text {

using namespace detail;

namespace {

using Json = nlohmann::json;

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

  /// The non-empty array `name` of `object`.
  const Json &stagesAt(const Json &object, const char *name,
                       const std::string &key) const {
    const Json *stages = find(object, name);
    if (!stages || !stages->is_array() || stages->empty())
      fail(key, "expected a non-empty array");
    return *stages;
  }

  /// `type` of the object at `key`, which must be one of `supported`.
  std::string typeOf(const Json &object, const std::string &key,
                     const std::vector<std::string> &supported,
                     const std::string &what) const;
  /// The literal of a Replace stage's {"String": ...} pattern.
  std::string literalPatternAt(const Json &stage, const std::string &key) const;
  /// Metaspace's replacement character (one code point).
  std::string replacementAt(const Json &stage, const std::string &key) const;
  /// Metaspace's prepend_scheme, or the add_prefix_space of older files.
  Metaspace::Prepend prependSchemeAt(const Json &stage,
                                     const std::string &key) const;

  void loadModel(const Json &root, BpeModel &bpe) const;
  void loadMerges(const Json &model, BpeModel &bpe) const;
  std::vector<AddedToken> loadAddedTokens(const Json &root,
                                          BpeModel &bpe) const;
  void loadNormalizer(const Json &root, BpeModel &bpe) const;
  void loadNormalizerStage(const Json &stage, const std::string &key,
                           BpeModel &bpe) const;
  void loadPreTokenizer(const Json &root, BpeModel &bpe) const;
  void loadByteLevel(const Json &stage, const std::string &key,
                     BpeModel &bpe) const;
  SplitPattern loadSplit(const Json &stage, const std::string &key) const;
  void loadDecoder(const Json &root, BpeModel &bpe) const;
  DecoderStage loadDecoderStage(const Json &stage, const std::string &key,
                                bool afterFuse) const;
  /// The alphabet tables and each vocabulary token's text, once the
  /// pre-tokenizer has said how words are spelt.
  static void spellVocabulary(BpeModel &bpe);

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

std::string Loader::literalPatternAt(const Json &stage,
                                     const std::string &key) const {
  const Json &pattern = objectAt(stage, "pattern", key + ".pattern");
  if (pattern.size() != 1 || !find(pattern, "String"))
    fail(key + ".pattern",
         "expected {\"String\": ...} (a Regex is not supported), got " +
             show(pattern));
  std::string literal = stringAt(pattern, "String", key + ".pattern.String");
  if (literal.empty())
    fail(key + ".pattern.String", "empty");
  return literal;
}

std::string Loader::replacementAt(const Json &stage,
                                  const std::string &key) const {
  std::string replacement =
      stringAt(stage, "replacement", key + ".replacement");
  if (invalidUtf8Offset(replacement) != std::string_view::npos ||
      codePointsOf(replacement).size() != 1)
    fail(key + ".replacement",
         "expected one character, got " + show(Json(replacement)));
  return replacement;
}

Metaspace::Prepend Loader::prependSchemeAt(const Json &stage,
                                           const std::string &key) const {
  if (!find(stage, "prepend_scheme"))
    return boolAt(stage, "add_prefix_space", key + ".add_prefix_space", true)
               ? Metaspace::Prepend::Always
               : Metaspace::Prepend::Never;
  std::string scheme =
      stringAt(stage, "prepend_scheme", key + ".prepend_scheme");
  if (scheme == "always")
    return Metaspace::Prepend::Always;
  if (scheme == "first")
    return Metaspace::Prepend::First;
  if (scheme == "never")
    return Metaspace::Prepend::Never;
  fail(key + ".prepend_scheme",
       "expected \"always\", \"first\" or \"never\", got " +
           show(Json(scheme)));
}

void Loader::load(const Json &root, BpeModel &bpe) {
  if (!root.is_object())
    fail("", "expected a JSON object at the top level, got " + show(root));
  bpe.origin = origin_;
  loadModel(root, bpe);
  std::vector<AddedToken> addedTokens = loadAddedTokens(root, bpe);
  loadNormalizer(root, bpe);
  // As in `tokenizers`, tokens marked normalized are looked for in the
  // normalised text, the others in the text as given.
  for (size_t i = 0; i < addedTokens.size(); ++i) {
    AddedToken &token = addedTokens[i];
    if (!token.normalized) {
      bpe.rawAddedTokens.add(std::move(token.content), token.id);
      continue;
    }
    std::string normalized = bpe.normalize(token.content);
    if (normalized.empty())
      fail("added_tokens[" + std::to_string(i) + "].content",
           Json(token.content).dump() + " is empty once normalised");
    // `tokenizers` keeps the normalised form, and decodes it.
    bpe.tokenText[token.id] = normalized;
    bpe.normalizedAddedTokens.add(std::move(normalized), token.id);
  }
  loadPreTokenizer(root, bpe);
  loadDecoder(root, bpe);
  spellVocabulary(bpe);
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
  bpe.byteFallback =
      boolAt(model, "byte_fallback", "model.byte_fallback", false);
  for (const char *affix : {"continuing_subword_prefix", "end_of_word_suffix"})
    if (const Json *value = find(model, affix);
        value && !(value->is_string() && value->get<std::string>().empty()))
      fail(std::string("model.") + affix, "not supported, got " + show(*value));
  bpe.fuseUnknown = boolAt(model, "fuse_unk", "model.fuse_unk", false);
  bpe.ignoreMerges =
      boolAt(model, "ignore_merges", "model.ignore_merges", false);

  const Json &vocab = objectAt(model, "vocab", "model.vocab");
  if (vocab.empty())
    fail("model.vocab", "empty");
  for (auto it = vocab.begin(); it != vocab.end(); ++it) {
    std::string key = "model.vocab[" + Json(it.key()).dump() + "]";
    int64_t id = idOf(it.value(), key);
    if (!bpe.tokenText.emplace(id, it.key()).second)
      fail(key, "id " + std::to_string(id) + " is taken twice");
    bpe.vocab.emplace(it.key(), id);
    bpe.vocabSize = std::max(bpe.vocabSize, id + 1);
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
    if (!inVocab && bpe.tokenText.count(id))
      fail(key + ".id", std::to_string(id) + " already names another token");
    if (!bpe.addedIds.emplace(content, id).second)
      fail(key, Json(content).dump() + " is added twice");
    bpe.tokenText[id] = content;
    bpe.vocabSize = std::max(bpe.vocabSize, id + 1);
    tokens.push_back({std::move(content), id, normalized});
  }
  return tokens;
}

void Loader::loadNormalizer(const Json &root, BpeModel &bpe) const {
  const Json *normalizer = find(root, "normalizer");
  if (!normalizer)
    return;
  if (!normalizer->is_object())
    fail("normalizer", "expected an object or null, got " + show(*normalizer));
  if (typeOf(*normalizer, "normalizer",
             {"NFC", "Prepend", "Replace", "Sequence"},
             "normalizer") != "Sequence") {
    loadNormalizerStage(*normalizer, "normalizer", bpe);
    return;
  }
  const Json &stages =
      stagesAt(*normalizer, "normalizers", "normalizer.normalizers");
  for (size_t i = 0; i < stages.size(); ++i) {
    std::string key = "normalizer.normalizers[" + std::to_string(i) + "]";
    if (!stages[i].is_object())
      fail(key, "expected an object, got " + show(stages[i]));
    loadNormalizerStage(stages[i], key, bpe);
  }
}

void Loader::loadNormalizerStage(const Json &stage, const std::string &key,
                                 BpeModel &bpe) const {
  std::string type =
      typeOf(stage, key, {"NFC", "Prepend", "Replace"}, "normalizer");
  NormalizerStage result;
  if (type == "NFC") {
    result.kind = NormalizerStage::Kind::Nfc;
    UErrorCode status = U_ZERO_ERROR;
    result.nfc = icu::Normalizer2::getNFCInstance(status);
    if (U_FAILURE(status))
      fail(key, std::string("ICU has no NFC data: ") + u_errorName(status));
  } else if (type == "Prepend") {
    result.kind = NormalizerStage::Kind::Prepend;
    result.content = stringAt(stage, "prepend", key + ".prepend");
  } else {
    result.kind = NormalizerStage::Kind::Replace;
    result.pattern = literalPatternAt(stage, key);
    result.content = stringAt(stage, "content", key + ".content");
  }
  bpe.normalizer.push_back(std::move(result));
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
  // Without a pre-tokenizer each normalised piece is one word of code
  // points, as in Llama 2's tokenizer.json.
  const Json *preTokenizer = find(root, "pre_tokenizer");
  if (!preTokenizer) {
    bpe.byteLevel = false;
    return;
  }
  if (!preTokenizer->is_object())
    fail("pre_tokenizer",
         "expected an object or null, got " + show(*preTokenizer));
  std::string type =
      typeOf(*preTokenizer, "pre_tokenizer",
             {"ByteLevel", "Sequence", "Metaspace"}, "pre_tokenizer");
  if (type == "Metaspace") {
    bpe.byteLevel = false;
    Metaspace metaspace;
    metaspace.replacement = replacementAt(*preTokenizer, "pre_tokenizer");
    metaspace.prepend = prependSchemeAt(*preTokenizer, "pre_tokenizer");
    metaspace.split =
        boolAt(*preTokenizer, "split", "pre_tokenizer.split", true);
    bpe.metaspace = std::move(metaspace);
    return;
  }
  bpe.byteLevel = true;
  if (type == "ByteLevel") {
    loadByteLevel(*preTokenizer, "pre_tokenizer", bpe);
    return;
  }
  const Json &stages =
      stagesAt(*preTokenizer, "pretokenizers", "pre_tokenizer.pretokenizers");
  // Splits refine the pieces; the ByteLevel stage must come last, since
  // after it the pieces are spelt in the byte alphabet.
  for (size_t i = 0; i < stages.size(); ++i) {
    const Json &stage = stages[i];
    std::string key = "pre_tokenizer.pretokenizers[" + std::to_string(i) + "]";
    if (!stage.is_object())
      fail(key, "expected an object, got " + show(stage));
    bool last = i + 1 == stages.size();
    typeOf(stage, key, {last ? "ByteLevel" : "Split"},
           last ? "last stage" : "stage before the last");
    if (last)
      loadByteLevel(stage, key, bpe);
    else
      bpe.splits.push_back(loadSplit(stage, key));
  }
}

void Loader::loadDecoder(const Json &root, BpeModel &bpe) const {
  const Json &decoder = objectAt(root, "decoder", "decoder");
  if (bpe.byteLevel) {
    typeOf(decoder, "decoder", {"ByteLevel"},
           "decoder for a ByteLevel pre-tokenizer");
    return;
  }
  const std::vector<std::string> stageTypes = {
      "Replace", "ByteFallback", "Fuse", "Strip", "Metaspace", "Sequence"};
  if (typeOf(decoder, "decoder", stageTypes,
             "decoder for a model spelt in code points") != "Sequence") {
    bpe.decoder.push_back(loadDecoderStage(decoder, "decoder", false));
    return;
  }
  const Json &stages = stagesAt(decoder, "decoders", "decoder.decoders");
  bool afterFuse = false;
  for (size_t i = 0; i < stages.size(); ++i) {
    std::string key = "decoder.decoders[" + std::to_string(i) + "]";
    if (!stages[i].is_object())
      fail(key, "expected an object, got " + show(stages[i]));
    bpe.decoder.push_back(loadDecoderStage(stages[i], key, afterFuse));
    afterFuse |= bpe.decoder.back().kind == DecoderStage::Kind::Fuse;
  }
}

DecoderStage Loader::loadDecoderStage(const Json &stage, const std::string &key,
                                      bool afterFuse) const {
  std::string type = typeOf(
      stage, key, {"Replace", "ByteFallback", "Fuse", "Strip", "Metaspace"},
      "decoder stage");
  DecoderStage result;
  if (type == "Replace") {
    result.kind = DecoderStage::Kind::Replace;
    result.pattern = literalPatternAt(stage, key);
    result.content = stringAt(stage, "content", key + ".content");
  } else if (type == "ByteFallback") {
    result.kind = DecoderStage::Kind::ByteFallback;
  } else if (type == "Fuse") {
    result.kind = DecoderStage::Kind::Fuse;
  } else if (type == "Strip") {
    // Decoding a text token by token must give the text decoded whole: a
    // Strip of the whole text's start (after Fuse) is left out of
    // continuations; one of every token's, or of the text's end, would
    // change a text by where it was cut.
    result.kind = DecoderStage::Kind::Strip;
    result.content = stringAt(stage, "content", key + ".content");
    if (codePointsOf(result.content).size() != 1 ||
        invalidUtf8Offset(result.content) != std::string_view::npos)
      fail(key + ".content",
           "expected one character, got " + show(Json(result.content)));
    const Json *start = find(stage, "start");
    const Json *stop = find(stage, "stop");
    if (!start || !start->is_number_unsigned() || start->get<uint64_t>() > 64)
      fail(key + ".start", "expected a count in [0, 64], got " +
                               (start ? show(*start) : "nothing"));
    if (!stop || !stop->is_number_unsigned() || stop->get<uint64_t>() != 0)
      fail(key + ".stop",
           "only 0 is supported, got " + (stop ? show(*stop) : "nothing"));
    if (!afterFuse && start->get<uint64_t>() != 0)
      fail(key, "a Strip of each token's start is not supported (only of "
                "the whole text's, after a Fuse stage)");
    result.start = start->get<uint64_t>();
  } else {
    result.kind = DecoderStage::Kind::Metaspace;
    result.pattern = replacementAt(stage, key);
    result.stripFirst =
        prependSchemeAt(stage, key) != Metaspace::Prepend::Never;
  }
  return result;
}

void Loader::spellVocabulary(BpeModel &bpe) {
  bpe.byteIds.fill(-1);
  bpe.byteTokenIds.fill(-1);
  for (int byte = 0; byte < 256; ++byte) {
    char name[8];
    std::snprintf(name, sizeof(name), "<0x%02X>", byte);
    if (auto it = bpe.vocab.find(name); it != bpe.vocab.end())
      bpe.byteTokenIds[byte] = it->second;
  }
  if (!bpe.byteLevel) {
    // Tokens keep their spelling: the decoder stages make text of it.
    for (const auto &[token, id] : bpe.vocab) {
      std::vector<char32_t> codePoints = codePointsOf(token);
      if (codePoints.size() == 1)
        bpe.characterIds.emplace(codePoints.front(), id);
    }
    return;
  }
  for (int byte = 0; byte < 256; ++byte) {
    std::string spelling;
    appendUtf8(spelling, byteToCodePoint()[byte]);
    auto it = bpe.vocab.find(spelling);
    bpe.byteIds[byte] = it == bpe.vocab.end() ? -1 : it->second;
  }
  for (const auto &[token, id] : bpe.vocab) {
    // An added token decodes to its content, even where all its characters
    // belong to the byte alphabet; as the ByteLevel decoder of `tokenizers`,
    // a token with a character outside the alphabet decodes to its own
    // UTF-8 text.
    if (bpe.addedIds.count(token))
      continue;
    std::string bytes;
    for (char32_t codePoint : codePointsOf(token)) {
      int byte = byteOfCodePoint(codePoint);
      if (byte < 0) {
        bytes = token;
        break;
      }
      bytes.push_back(static_cast<char>(byte));
    }
    bpe.tokenText[id] = std::move(bytes);
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
