//===- Tokenizer.h - Text to token ids and back -----------------*- C++ -*-===//
//
// Tokenizers of the language models. ByteTokenizer gives every byte its own
// id, for models trained from scratch here; BpeTokenizer loads a Hugging Face
// tokenizer.json with a BPE model, byte-level (GPT-2's and Qwen2's forms) or
// SentencePiece-style (Llama's and Mistral's), and encodes as the
// `tokenizers` library does. docs/generation.md describes the
// choices.
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_MODELS_COMMON_TOKENIZER_H
#define GENESIS_MODELS_COMMON_TOKENIZER_H

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace genesis::text {

/// Appends the UTF-8 encoding of `codePoint` (at most U+10FFFF) to `out`.
void appendUtf8(std::string &out, char32_t codePoint);

class Tokenizer {
public:
  virtual ~Tokenizer();

  /// The ids of `text`. No special tokens are added around it (Hugging Face's
  /// add_special_tokens=False).
  virtual std::vector<int64_t> encode(const std::string &text) const = 0;

  /// The text of `ids` as a whole text (SentencePiece-style decoders drop
  /// the space that starts it). Throws genesis::Error for an id that names
  /// no token.
  virtual std::string decode(const std::vector<int64_t> &ids) const = 0;

  /// The bytes `ids` add to a text that already holds earlier tokens:
  /// decode(a) + decodeContinuation(b) == decode(a + b) for a that decodes
  /// to a non-empty text, and decoding ids one at a time this way gives the
  /// same bytes as decoding them together, so a generator can print each
  /// token as it comes. The bytes of a prefix need not be valid UTF-8, since
  /// a token can end inside a character.
  virtual std::string
  decodeContinuation(const std::vector<int64_t> &ids) const {
    return decode(ids);
  }

  /// One more than the largest id.
  virtual int64_t vocabSize() const = 0;

  /// The id that ends a document, if the vocabulary has one.
  virtual std::optional<int64_t> endOfTextId() const = 0;
};

/// Ids 0..255 are the bytes; id 256 is end-of-text. encode never emits 256
/// (callers append it between documents) and decode writes nothing for it.
/// Every byte string round-trips, valid UTF-8 or not.
class ByteTokenizer final : public Tokenizer {
public:
  static constexpr int64_t kEndOfTextId = 256;

  std::vector<int64_t> encode(const std::string &text) const override;
  std::string decode(const std::vector<int64_t> &ids) const override;
  int64_t vocabSize() const override { return kEndOfTextId + 1; }
  std::optional<int64_t> endOfTextId() const override { return kEndOfTextId; }
};

/// A BPE tokenizer read from a Hugging Face tokenizer.json. Supported:
/// model BPE (merges as "a b" strings or [a, b] pairs, ignore_merges,
/// unk_token, fuse_unk, byte_fallback); normalizer none, NFC, Prepend,
/// Replace of a string, or a Sequence of those; added_tokens matched
/// verbatim before pre-tokenisation. Byte-level: pre_tokenizer ByteLevel, or
/// a Sequence of Split{Regex or String, Isolated} stages ending in one
/// ByteLevel, and decoder ByteLevel. SentencePiece-style (words of code
/// points): pre_tokenizer none or Metaspace, and decoder Metaspace or a
/// Sequence of Replace, ByteFallback, Fuse and Strip (of the whole text's
/// start). Anything else is refused with a genesis::Error naming the file
/// and the key. The post_processor, truncation and padding are ignored:
/// encode returns exactly the ids of the text.
class BpeTokenizer final : public Tokenizer {
public:
  /// Reads and verifies `path`.
  static BpeTokenizer fromFile(const std::string &path);

  BpeTokenizer(BpeTokenizer &&other) noexcept;
  BpeTokenizer &operator=(BpeTokenizer &&other) noexcept;
  ~BpeTokenizer() override;

  /// Throws genesis::Error if `text` is not valid UTF-8.
  std::vector<int64_t> encode(const std::string &text) const override;
  /// Byte-level: added tokens decode to their content, vocabulary tokens to
  /// the bytes their characters stand for in GPT-2's byte-to-unicode table.
  /// SentencePiece-style: every token's string goes through the decoder
  /// stages; a run of byte tokens decodes to its bytes even where they are
  /// not valid UTF-8 (`tokenizers` writes U+FFFD for each), so that decoding
  /// token by token gives the same bytes.
  std::string decode(const std::vector<int64_t> &ids) const override;
  std::string
  decodeContinuation(const std::vector<int64_t> &ids) const override;
  int64_t vocabSize() const override;
  /// The id of "<|endoftext|>", if the file has that token.
  std::optional<int64_t> endOfTextId() const override;

  /// The id of an added token ("<|im_end|>") or of a vocabulary entry as
  /// the vocabulary spells it ("Ġthe", "▁the").
  std::optional<int64_t> tokenId(const std::string &token) const;

private:
  struct Impl;
  explicit BpeTokenizer(std::unique_ptr<Impl> impl);

  std::unique_ptr<Impl> impl_;
};

} // namespace genesis::text

#endif // GENESIS_MODELS_COMMON_TOKENIZER_H
