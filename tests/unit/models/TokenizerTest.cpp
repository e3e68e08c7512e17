//===- TokenizerTest.cpp - Tests for the byte and BPE tokenizers ----------===//
//
// The BPE goldens come from Hugging Face `tokenizers`
// (scripts/golden/tokenizer_goldens.py): for every case, the tokenizer file
// with the case's JSON merge patch applied must encode each test string to
// exactly the ids `tokenizers` gave and decode them to the text it gave.
//
//===----------------------------------------------------------------------===//

#include "models/common/Tokenizer.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/unit/TestSupport.h"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <unistd.h>

using namespace genesis;
using namespace genesis::test;
using namespace genesis::text;
using Json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

const std::string kDataDir = GENESIS_TEST_DATA_DIR "/tokenizer";

std::string readFile(const std::string &path) {
  std::ifstream stream(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(stream), {}};
}

/// Writes `text` to `name` in this test's own temporary directory, which is
/// removed when the program exits.
std::string writeTemp(const std::string &name, const std::string &text) {
  static const struct TempDir {
    fs::path path = fs::temp_directory_path() /
                    ("genesis-tokenizer-test-" + std::to_string(getpid()));
    TempDir() { fs::create_directories(path); }
    ~TempDir() {
      std::error_code error;
      fs::remove_all(path, error);
    }
  } dir;
  std::string path = (dir.path / name).string();
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
  return path;
}

Json dataFile(const std::string &name) {
  return Json::parse(readFile(kDataDir + "/" + name));
}

/// The tokenizer of `file` with the JSON merge patch `patch` applied.
BpeTokenizer patched(const std::string &file, const Json &patch) {
  if (patch.is_null())
    return BpeTokenizer::fromFile(kDataDir + "/" + file);
  Json config = dataFile(file);
  config.merge_patch(patch);
  return BpeTokenizer::fromFile(writeTemp("patched.json", config.dump()));
}

/// A tokenizer over a hand-written vocabulary, spelt in the byte alphabet,
/// with GPT-2's pre-tokenizer.
BpeTokenizer handMade(const Json &vocab, const Json &merges,
                      const Json &modelPatch = Json::object()) {
  Json config = {
      {"pre_tokenizer", {{"type", "ByteLevel"}, {"add_prefix_space", false}}},
      {"decoder", {{"type", "ByteLevel"}}},
      {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", merges}}}};
  config["model"].merge_patch(modelPatch);
  return BpeTokenizer::fromFile(writeTemp("hand.json", config.dump()));
}

std::string randomBytes(std::mt19937 &random, size_t length) {
  std::uniform_int_distribution<int> byte(0, 255);
  std::string text;
  for (size_t i = 0; i < length; ++i)
    text.push_back(static_cast<char>(byte(random)));
  return text;
}

/// Random valid UTF-8 drawn from `ranges` of code points, with an added
/// token now and then.
std::string randomText(std::mt19937 &random,
                       const std::vector<std::pair<char32_t, char32_t>> &ranges,
                       size_t length) {
  std::uniform_int_distribution<size_t> pickRange(0, ranges.size() - 1);
  std::uniform_int_distribution<int> percent(0, 99);
  std::string text;
  for (size_t i = 0; i < length; ++i) {
    if (percent(random) == 0) {
      text += "<|endoftext|>";
      continue;
    }
    auto [low, high] = ranges[pickRange(random)];
    appendUtf8(text,
               std::uniform_int_distribution<char32_t>(low, high)(random));
  }
  return text;
}

/// Loads 400 mutations of `original` (a value, or the object or array
/// holding it, replaced by a value of another kind) and encodes and decodes
/// with each that loads; fails on any exception but genesis::Error.
void expectMutationsRefusedOrUsable(const Json &original) {
  Json flat = original.flatten();
  std::vector<std::string> pointers;
  for (auto it = flat.begin(); it != flat.end(); ++it)
    pointers.push_back(it.key());
  const std::vector<Json> replacements = {nullptr,
                                          true,
                                          -1,
                                          3,
                                          1.5,
                                          "",
                                          "x",
                                          "(",
                                          Json::array(),
                                          Json::object(),
                                          Json::array({"a", "b"})};
  std::mt19937 random(5);
  int refused = 0;
  for (int trial = 0; trial < 400; ++trial) {
    Json mutated = original;
    // Half the trials change a value, half the object or array holding it.
    Json::json_pointer pointer(pointers[std::uniform_int_distribution<size_t>(
        0, pointers.size() - 1)(random)]);
    if (trial % 2 && !pointer.empty())
      pointer = pointer.parent_pointer();
    mutated[pointer] = replacements[std::uniform_int_distribution<size_t>(
        0, replacements.size() - 1)(random)];
    std::string path = writeTemp("mutated.json", mutated.dump());
    try {
      BpeTokenizer tokenizer = BpeTokenizer::fromFile(path);
      tokenizer.decode(
          tokenizer.encode("Hello <|im_start|> <s>w\xC3\xB6rld 42"));
    } catch (const Error &) {
      ++refused;
    } catch (const std::exception &other) {
      ADD_FAILURE() << pointer.to_string() << " -> " << mutated[pointer].dump()
                    << ": " << other.what();
    }
  }
  EXPECT_GT(refused, 50);
}

} // namespace

//===----------------------------------------------------------------------===//
// ByteTokenizer
//===----------------------------------------------------------------------===//

TEST(ByteTokenizerTest, RoundTripsEveryByteString) {
  ByteTokenizer tokenizer;
  EXPECT_EQ(tokenizer.vocabSize(), 257);
  EXPECT_EQ(tokenizer.endOfTextId(), 256);
  std::mt19937 random(7);
  for (size_t length = 0; length < 200; ++length) {
    std::string text = randomBytes(random, length);
    std::vector<int64_t> ids = tokenizer.encode(text);
    ASSERT_EQ(ids.size(), text.size());
    for (size_t i = 0; i < ids.size(); ++i)
      EXPECT_EQ(ids[i], static_cast<unsigned char>(text[i]));
    EXPECT_EQ(tokenizer.decode(ids), text);
  }
}

TEST(ByteTokenizerTest, EndOfTextDecodesToNothing) {
  ByteTokenizer tokenizer;
  EXPECT_EQ(tokenizer.decode({'h', 256, 'i', 256}), "hi");
}

TEST(ByteTokenizerTest, RejectsIdsOutsideTheVocabulary) {
  ByteTokenizer tokenizer;
  EXPECT_TRUE(contains(errorFrom([&] {
                         tokenizer.decode({'a', 257});
                       }),
                       "ids[1] = 257 is outside [0, 257)"));
  EXPECT_TRUE(
      contains(errorFrom([&] { tokenizer.decode({-1}); }), "ids[0] = -1"));
}

//===----------------------------------------------------------------------===//
// BpeTokenizer against Hugging Face
//===----------------------------------------------------------------------===//

TEST(BpeTokenizerTest, MatchesHuggingFaceGoldens) {
  Json goldens = dataFile("goldens.json");
  const Json &texts = goldens["texts"];
  ASSERT_GE(texts.size(), 20u);
  ASSERT_GE(goldens["cases"].size(), 7u);
  for (const Json &golden : goldens["cases"]) {
    SCOPED_TRACE(golden["name"].get<std::string>());
    BpeTokenizer tokenizer = patched(golden["file"], golden["patch"]);
    EXPECT_EQ(tokenizer.vocabSize(), golden["vocab_size"].get<int64_t>());
    for (size_t i = 0; i < texts.size(); ++i) {
      SCOPED_TRACE("text " + std::to_string(i) + ": " + texts[i].dump());
      auto expected = golden["ids"][i].get<std::vector<int64_t>>();
      EXPECT_EQ(tokenizer.encode(texts[i]), expected);
      EXPECT_EQ(tokenizer.decode(expected),
                golden["decoded"][i].get<std::string>());
    }
  }
}

TEST(BpeTokenizerTest, GoldenTextsRoundTrip) {
  Json goldens = dataFile("goldens.json");
  for (const char *file : {"gpt2_style.json", "qwen2_style.json"}) {
    BpeTokenizer tokenizer = BpeTokenizer::fromFile(kDataDir + "/" + file);
    for (const std::string text : goldens["texts"]) {
      // NFC composes the decomposed accents of one text.
      if (std::string(file) == "qwen2_style.json" &&
          text.find("e\xCC\x81") != std::string::npos)
        continue;
      EXPECT_EQ(tokenizer.decode(tokenizer.encode(text)), text) << file;
    }
  }
}

TEST(BpeTokenizerTest, RandomTextRoundTrips) {
  std::mt19937 random(11);
  // Any code point for the file without a normalizer; for NFC, code points
  // that NFC leaves alone in any order (no marks, no conjoining jamo).
  BpeTokenizer gpt2 = BpeTokenizer::fromFile(kDataDir + "/gpt2_style.json");
  BpeTokenizer qwen2 = BpeTokenizer::fromFile(kDataDir + "/qwen2_style.json");
  std::vector<std::pair<char32_t, char32_t>> anything = {
      {0x00, 0x7F}, {0x80, 0x7FF}, {0x800, 0xD7FF}, {0xE000, 0x10FFFF},
      {' ', ' '},   {'a', 'z'},    {'0', '9'}};
  std::vector<std::pair<char32_t, char32_t>> nfcStable = {
      {0x00, 0x7F},     {0xA0, 0xFF},       {0x410, 0x44F}, {0x4E00, 0x9FFF},
      {0x3000, 0x3000}, {0x1F600, 0x1F64F}, {' ', ' '},     {'\n', '\n'}};
  for (int trial = 0; trial < 300; ++trial) {
    std::string text = randomText(random, anything, trial % 60);
    EXPECT_EQ(gpt2.decode(gpt2.encode(text)), text);
    text = randomText(random, nfcStable, trial % 60);
    EXPECT_EQ(qwen2.decode(qwen2.encode(text)), text);
  }
}

TEST(BpeTokenizerTest, DecodesTokenByToken) {
  BpeTokenizer tokenizer =
      BpeTokenizer::fromFile(kDataDir + "/qwen2_style.json");
  std::string text = "东京 👍🏽 Zürich<|im_end|>\n";
  std::vector<int64_t> ids = tokenizer.encode(text);
  std::string streamed;
  bool splitCharacter = false;
  for (int64_t id : ids) {
    std::string piece = tokenizer.decode({id});
    // A token that is a lone lead or continuation byte cannot stand alone.
    splitCharacter |= piece.size() == 1 && (piece[0] & 0x80);
    streamed += piece;
  }
  EXPECT_TRUE(splitCharacter);
  EXPECT_EQ(streamed, text);
}

TEST(BpeTokenizerTest, SentencePieceStyleRoundTripsAndStreams) {
  std::mt19937 random(12);
  // Any code point but "▁" (U+2581), which decodes to a space; the file's
  // small alphabet sends most of them through byte fallback.
  std::vector<std::pair<char32_t, char32_t>> noMetaspace = {
      {0x00, 0x7F},       {0x80, 0x7FF}, {0x800, 0x2580}, {0x2582, 0xD7FF},
      {0xE000, 0x10FFFF}, {' ', ' '},    {'a', 'z'}};
  Json patchedFile = dataFile("llama_style.json");
  patchedFile.merge_patch({{"normalizer", nullptr},
                           {"pre_tokenizer",
                            {{"type", "Metaspace"},
                             {"replacement", "\xE2\x96\x81"},
                             {"prepend_scheme", "always"},
                             {"split", true}}}});
  BpeTokenizer llama = BpeTokenizer::fromFile(kDataDir + "/llama_style.json");
  BpeTokenizer metaspace =
      BpeTokenizer::fromFile(writeTemp("metaspace.json", patchedFile.dump()));
  for (const BpeTokenizer *tokenizer : {&llama, &metaspace}) {
    for (int trial = 0; trial < 300; ++trial) {
      std::string text = randomText(random, noMetaspace, trial % 60);
      // Metaspace prepends nothing to a text that starts with a space, and
      // the decoder strips that space, as in `tokenizers`.
      if (tokenizer == &metaspace && !text.empty() && text[0] == ' ')
        text[0] = 'x';
      std::vector<int64_t> ids = tokenizer->encode(text);
      EXPECT_EQ(tokenizer->decode(ids), text);
      if (ids.empty())
        continue;
      // The first token as a text's start, every later one as a
      // continuation: the bytes of the whole, even where a character's
      // bytes are split over byte tokens.
      std::string streamed = tokenizer->decode({ids[0]});
      for (size_t i = 1; i < ids.size(); ++i)
        streamed += tokenizer->decodeContinuation({ids[i]});
      EXPECT_EQ(streamed, text);
    }
  }
  // A continuation keeps the space the text's start drops.
  std::vector<int64_t> ids = llama.encode("a b");
  EXPECT_EQ(llama.decode(ids), "a b");
  EXPECT_EQ(llama.decodeContinuation(ids), " a b");
  EXPECT_EQ(llama.tokenId("<s>"), 1);
  EXPECT_EQ(llama.tokenId("<0x41>"), 3 + 0x41);
}

TEST(BpeTokenizerTest, LooksUpTokens) {
  BpeTokenizer gpt2 = BpeTokenizer::fromFile(kDataDir + "/gpt2_style.json");
  BpeTokenizer qwen2 = BpeTokenizer::fromFile(kDataDir + "/qwen2_style.json");
  Json qwen2Config = dataFile("qwen2_style.json");
  EXPECT_EQ(gpt2.endOfTextId(), 0);
  EXPECT_EQ(qwen2.endOfTextId(), 500);
  EXPECT_EQ(qwen2.tokenId("<|im_start|>"), 501);
  EXPECT_EQ(qwen2.tokenId("<|im_end|>"), 502);
  EXPECT_EQ(qwen2.tokenId("\xC4\xA0t"), // "Ġt"
            qwen2Config["model"]["vocab"]["\xC4\xA0t"].get<int64_t>());
  EXPECT_EQ(qwen2.tokenId("<|im_middle|>"), std::nullopt);
  EXPECT_EQ(qwen2.encode("<|im_end|>"), std::vector<int64_t>{502});
}

TEST(BpeTokenizerTest, LongInputs) {
  BpeTokenizer gpt2 = BpeTokenizer::fromFile(kDataDir + "/gpt2_style.json");
  BpeTokenizer qwen2 = BpeTokenizer::fromFile(kDataDir + "/qwen2_style.json");
  for (const std::string &text :
       {std::string(1 << 20, 'a'), std::string(1 << 20, ' '),
        std::string(1 << 18, '!') + "x", std::string(1 << 18, '\n')}) {
    EXPECT_EQ(gpt2.decode(gpt2.encode(text)), text);
    EXPECT_EQ(qwen2.decode(qwen2.encode(text)), text);
  }
}

//===----------------------------------------------------------------------===//
// BPE model details, on hand-written vocabularies (expected ids from
// `tokenizers` 0.23.3)
//===----------------------------------------------------------------------===//

TEST(BpeTokenizerTest, MergesLowestRankFirstThenLeftmost) {
  BpeTokenizer tokenizer = handMade(
      {{"a", 0}, {"b", 1}, {"aa", 2}, {"ab", 3}, {"aab", 4}, {"aaa", 5}},
      {"a b", "a a", "aa b", "aa a"});
  EXPECT_EQ(tokenizer.encode("aab"), (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(tokenizer.encode("aaab"), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(tokenizer.encode("aaaa"), (std::vector<int64_t>{2, 2}));
}

TEST(BpeTokenizerTest, IgnoreMergesTakesWholeWordsFromTheVocabulary) {
  Json vocab = {{"a", 0}, {"b", 1}, {"c", 2}, {"ab", 3}, {"bc", 4}, {"abc", 5}};
  Json merges = {"a b", "b c", "a bc"};
  EXPECT_EQ(handMade(vocab, merges).encode("abc"),
            (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(handMade(vocab, merges, {{"ignore_merges", true}}).encode("abc"),
            (std::vector<int64_t>{5}));
}

TEST(BpeTokenizerTest, BytesOutsideTheVocabulary) {
  // The unknown token has a character outside the byte alphabet (" ").
  Json vocab = {{"a", 0}, {"b", 1}, {"ab", 2}, {"<\xC4\xA0unk >", 3}};
  Json merges = Json::array({Json::array({"a", "b"})});
  // Without unk_token the byte is dropped, letting its neighbours merge.
  BpeTokenizer dropping = handMade(vocab, merges);
  EXPECT_EQ(dropping.encode("accb"), (std::vector<int64_t>{2}));
  BpeTokenizer unknown =
      handMade(vocab, merges, {{"unk_token", "<\xC4\xA0unk >"}});
  EXPECT_EQ(unknown.encode("abc"), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(unknown.encode("acca"), (std::vector<int64_t>{0, 3, 3, 0}));
  BpeTokenizer fused = handMade(
      vocab, merges, {{"unk_token", "<\xC4\xA0unk >"}, {"fuse_unk", true}});
  EXPECT_EQ(fused.encode("acca"), (std::vector<int64_t>{0, 3, 0}));
  // Such a token decodes to its own text, as in `tokenizers`.
  EXPECT_EQ(unknown.decode({3, 0}), "<\xC4\xA0unk >a");
}

TEST(BpeTokenizerTest, RejectsInvalidUtf8) {
  BpeTokenizer tokenizer =
      BpeTokenizer::fromFile(kDataDir + "/gpt2_style.json");
  for (const char *bad : {"abc\xFF", "abc\xC0\x80", "abc\xED\xA0\x80",
                          "abc\xF4\x90\x80\x80", "abc\xE4\xB8"})
    EXPECT_TRUE(contains(errorFrom([&] { tokenizer.encode(bad); }),
                         "gpt2_style.json: encode: the text is not valid "
                         "UTF-8 (byte 3)"));
}

TEST(BpeTokenizerTest, RejectsIdsWithoutToken) {
  BpeTokenizer tokenizer =
      BpeTokenizer::fromFile(kDataDir + "/qwen2_style.json");
  EXPECT_TRUE(contains(errorFrom([&] {
                         tokenizer.decode({5, 503});
                       }),
                       "qwen2_style.json: decode: ids[1] = 503 names no "
                       "token (vocabulary size 503)"));
  EXPECT_TRUE(
      contains(errorFrom([&] { tokenizer.decode({-2}); }), "ids[0] = -2"));
}

//===----------------------------------------------------------------------===//
// Refusing bad files
//===----------------------------------------------------------------------===//

TEST(BpeTokenizerTest, RejectsMissingAndMalformedFiles) {
  EXPECT_TRUE(contains(
      errorFrom([] { BpeTokenizer::fromFile(kDataDir + "/missing.json"); }),
      "missing.json: no such tokenizer file"));
  EXPECT_TRUE(contains(errorFrom([] { BpeTokenizer::fromFile(kDataDir); }),
                       "no such tokenizer file"));
  std::string truncated = readFile(kDataDir + "/gpt2_style.json");
  truncated.resize(truncated.size() / 2);
  EXPECT_TRUE(contains(errorFrom([&] {
                         BpeTokenizer::fromFile(
                             writeTemp("truncated.json", truncated));
                       }),
                       "truncated.json is not valid JSON"));
  EXPECT_TRUE(contains(
      errorFrom([] { BpeTokenizer::fromFile(writeTemp("list.json", "[]")); }),
      "list.json: expected a JSON object at the top level"));
}

// Each patch of gpt2_style.json must be refused with a message naming the
// file, the key and the value.
TEST(BpeTokenizerTest, RejectsUnsupportedOrInconsistentContent) {
  const std::string byteLevelStage =
      R"({"type": "ByteLevel", "add_prefix_space": false})";
  const std::string sequence =
      R"({"pre_tokenizer": {"type": "Sequence", "pretokenizers": [)";
  std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"model": {"type": "WordPiece"}})",
       "model.type: unsupported model type 'WordPiece' (supported: BPE)"},
      {R"({"model": null})", "model: missing"},
      {R"({"model": {"vocab": null}})", "model.vocab: missing"},
      {R"({"model": {"vocab": {"a": 0}}})", // "<|endoftext|>" has id 0
       R"(model.vocab["a"]: id 0 is taken twice)"},
      {R"({"model": {"vocab": {"a": -1}}})",
       R"(model.vocab["a"]: expected an id (an integer in [0, 2^31)), got -1)"},
      {R"({"model": {"vocab": {"a": 1.5}}})",
       R"(model.vocab["a"]: expected an id)"},
      {R"({"model": {"vocab": {"a": 4294967296}}})",
       R"(model.vocab["a"]: expected an id)"},
      {R"({"model": {"merges": ["a n", "Ġ zq"]}})",
       R"(model.merges[1]: token "zq" is not in model.vocab)"},
      {R"({"model": {"merges": ["z q"]}})",
       R"(model.merges[0]: merged token "zq" is not in model.vocab)"},
      {R"({"model": {"merges": ["a n c"]}})",
       "model.merges[0]: expected two tokens separated by one space"},
      {R"({"model": {"merges": [["a"]]}})",
       R"(model.merges[0]: expected "a b" or ["a", "b"], got ["a"])"},
      {R"({"model": {"merges": 7}})", "model.merges: expected an array"},
      {R"({"model": {"dropout": 0.1}})", "model.dropout: BPE dropout"},
      {R"({"model": {"continuing_subword_prefix": "##"}})",
       "model.continuing_subword_prefix: not supported"},
      {R"({"model": {"unk_token": "<unk>"}})",
       R"(model.unk_token: "<unk>" is not in model.vocab)"},
      {R"({"model": {"ignore_merges": "yes"}})",
       R"(model.ignore_merges: expected true or false, got "yes")"},
      // Without a ByteLevel pre-tokenizer, words are spelt in code points.
      {R"({"pre_tokenizer": null})",
       "decoder.type: unsupported decoder for a model spelt in code points "
       "'ByteLevel' (supported: Replace, ByteFallback, Fuse, Strip, "
       "Metaspace, Sequence)"},
      {R"({"pre_tokenizer": {"type": "Whitespace"}})",
       "pre_tokenizer.type: unsupported pre_tokenizer 'Whitespace' "
       "(supported: ByteLevel, Sequence, Metaspace)"},
      {R"({"pre_tokenizer": {"add_prefix_space": null}})",
       "pre_tokenizer.add_prefix_space: missing"},
      {sequence + byteLevelStage + R"(, {"type": "Split"}]}})",
       "pre_tokenizer.pretokenizers[0].type: unsupported stage before the "
       "last 'ByteLevel' (supported: Split)"},
      {sequence +
           R"({"type": "Split", "pattern": {"Regex": "\\s+"},
               "behavior": "Removed"}, )" +
           byteLevelStage + "]}}",
       "pre_tokenizer.pretokenizers[0].behavior: unsupported behavior "
       "'Removed' (supported: Isolated)"},
      {sequence +
           R"({"type": "Split", "pattern": {"Regex": "(\\p{L}"},
               "behavior": "Isolated"}, )" +
           byteLevelStage + "]}}",
       "pre_tokenizer.pretokenizers[0].pattern.Regex: cannot compile "
       "pattern at offset 6: missing closing parenthesis"},
      {sequence +
           R"({"type": "Split", "pattern": {"Glob": "*"},
               "behavior": "Isolated"}, )" +
           byteLevelStage + "]}}",
       R"(pre_tokenizer.pretokenizers[0].pattern: expected {"Regex": ...} )"
       R"(or {"String": ...}, got {"Glob":"*"})"},
      {R"({"normalizer": {"type": "NFKC"}})",
       "normalizer.type: unsupported normalizer 'NFKC' (supported: NFC, "
       "Prepend, Replace, Sequence)"},
      {R"({"decoder": null})", "decoder: missing"},
      {R"({"decoder": {"type": "WordPiece"}})",
       "decoder.type: unsupported decoder for a ByteLevel pre-tokenizer "
       "'WordPiece' (supported: ByteLevel)"},
      {R"({"added_tokens": [{"id": 7, "content": "<|endoftext|>"}]})",
       R"(added_tokens[0]: "<|endoftext|>" has id 7 here but 0 in )"
       "model.vocab"},
      {R"({"added_tokens": [{"id": 7, "content": "<|new|>"}]})",
       "added_tokens[0].id: 7 already names another token"},
      {R"({"added_tokens": [{"id": 600, "content": "<|x|>"},
                            {"id": 601, "content": "<|x|>"}]})",
       R"(added_tokens[1]: "<|x|>" is added twice)"},
      {R"({"added_tokens": [{"id": 600, "content": ""}]})",
       "added_tokens[0].content: empty"},
      {R"({"added_tokens": [{"id": 600, "content": "<|x|>",
                             "lstrip": true}]})",
       "added_tokens[0].lstrip: not supported (only false)"},
      {R"({"added_tokens": [{"content": "<|x|>"}]})",
       "added_tokens[0].id: missing"},
      {R"({"pre_tokenizer": {"type": "Metaspace", "replacement": "__"}})",
       R"(pre_tokenizer.replacement: expected one character, got "__")"},
      {R"({"pre_tokenizer": {"type": "Metaspace", "replacement": "_",
                             "prepend_scheme": "sometimes"}})",
       R"(pre_tokenizer.prepend_scheme: expected "always", "first" or )"
       R"("never", got "sometimes")"},
      {R"({"normalizer": {"type": "Replace", "pattern": {"Regex": " +"},
                          "content": "_"}})",
       R"(normalizer.pattern: expected {"String": ...} (a Regex is not )"
       "supported)"},
      {R"({"normalizer": {"type": "Sequence", "normalizers": []}})",
       "normalizer.normalizers: expected a non-empty array"},
      {R"({"added_tokens": [{"id": 600, "content": "<|x|>",
                             "normalized": true}],
           "normalizer": {"type": "Replace", "pattern": {"String": "<|x|>"},
                          "content": ""}})",
       R"(added_tokens[0].content: "<|x|>" is empty once normalised)"},
  };
  for (const auto &[casePatch, message] : cases) {
    const auto &patch = casePatch; // lambdas capture variables, not bindings
    SCOPED_TRACE(patch);
    EXPECT_TRUE(contains(
        errorFrom([&] { patched("gpt2_style.json", Json::parse(patch)); }),
        "patched.json: " + message));
  }
}

TEST(BpeTokenizerTest, RejectsUnsupportedSentencePieceDecoders) {
  const std::string strip =
      R"({"type": "Strip", "content": " ", "start": 1, "stop": 0})";
  std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"decoder": {"type": "ByteLevel"}})",
       "decoder.type: unsupported decoder for a model spelt in code points "
       "'ByteLevel'"},
      {R"({"decoder": {"type": "Sequence", "decoders": [)" + strip + "]}}",
       "decoder.decoders[0]: a Strip of each token's start is not supported"},
      {R"({"decoder": {"type": "Sequence", "decoders": [{"type": "Fuse"},
           {"type": "Strip", "content": " ", "start": 1, "stop": 1}]}})",
       "decoder.decoders[1].stop: only 0 is supported, got 1"},
      {R"({"decoder": {"type": "Sequence", "decoders": [{"type": "Fuse"},
           {"type": "Strip", "content": "ab", "start": 1, "stop": 0}]}})",
       R"(decoder.decoders[1].content: expected one character, got "ab")"},
      {R"({"decoder": {"type": "Sequence", "decoders": [{"type": "Fuse"},
           {"type": "Strip", "content": " ", "start": -1, "stop": 0}]}})",
       "decoder.decoders[1].start: expected a count in [0, 64], got -1"},
      {R"({"decoder": {"type": "Sequence", "decoders": [{"type": "CTC"}]}})",
       "decoder.decoders[0].type: unsupported decoder stage 'CTC'"},
      {R"({"decoder": {"type": "Replace", "pattern": {"Regex": "_"},
                       "content": " "}})",
       R"(decoder.pattern: expected {"String": ...})"},
      {R"({"decoder": {"type": "Metaspace", "replacement": ""}})",
       R"(decoder.replacement: expected one character, got "")"},
  };
  for (const auto &[casePatch, message] : cases) {
    const auto &patch = casePatch;
    SCOPED_TRACE(patch);
    EXPECT_TRUE(contains(
        errorFrom([&] { patched("llama_style.json", Json::parse(patch)); }),
        "patched.json: " + message));
  }
  // A ByteLevel pre-tokenizer takes only the ByteLevel decoder.
  EXPECT_TRUE(contains(
      errorFrom([&] {
        patched("gpt2_style.json", {{"decoder", {{"type", "ByteFallback"}}}});
      }),
      "decoder.type: unsupported decoder for a ByteLevel "
      "pre-tokenizer 'ByteFallback' (supported: ByteLevel)"));
}

// Replacing any value of a valid file by a value of another kind must give a
// tokenizer or a genesis::Error, never another exception or a crash.
TEST(BpeTokenizerTest, SurvivesMutatedFiles) {
  for (const char *file : {"qwen2_style.json", "llama_style.json"}) {
    SCOPED_TRACE(file);
    expectMutationsRefusedOrUsable(dataFile(file));
  }
}
