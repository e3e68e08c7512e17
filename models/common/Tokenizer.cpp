//===- Tokenizer.cpp - Text to token ids and back -------------------------===//
//
// ByteTokenizer, and BpeTokenizer's encode path as in Hugging Face
// `tokenizers`: added tokens are cut out first (those marked normalized after
// normalisation); the rest goes through the model (TokenizerModel.cpp) that
// TokenizerLoader.cpp read from tokenizer.json.
//
//===----------------------------------------------------------------------===//

#include "models/common/Tokenizer.h"
#include "models/common/TokenizerModel.h"

#include "runtime/support/Error.h"

#include <new>
#include <string_view>

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
// BpeTokenizer
//===----------------------------------------------------------------------===//

BpeTokenizer::BpeTokenizer(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}
BpeTokenizer::BpeTokenizer(BpeTokenizer &&other) noexcept = default;
BpeTokenizer &BpeTokenizer::operator=(BpeTokenizer &&other) noexcept = default;
BpeTokenizer::~BpeTokenizer() = default;

std::vector<int64_t> BpeTokenizer::encode(const std::string &text) const {
  size_t invalid = detail::invalidUtf8Offset(text);
  if (invalid != std::string_view::npos)
    throw Error(impl_->origin + ": encode: the text is not valid UTF-8 (byte " +
                std::to_string(invalid) + ")");
  detail::MatchData match(pcre2_match_data_create(1, nullptr));
  if (!match)
    throw std::bad_alloc();
  std::vector<int64_t> ids;
  for (const detail::Segment &raw : impl_->rawAddedTokens.split(text)) {
    if (raw.id >= 0) {
      ids.push_back(raw.id);
      continue;
    }
    std::string normalized = impl_->normalize(raw.text);
    for (const detail::Segment &segment :
         impl_->normalizedAddedTokens.split(normalized)) {
      if (segment.id >= 0) {
        ids.push_back(segment.id);
        continue;
      }
      // Metaspace's prepend_scheme "first" marks the piece that begins the
      // text as given.
      bool atTextStart = raw.text.data() == text.data() &&
                         segment.text.data() == normalized.data();
      impl_->encodePiece(segment.text, atTextStart, match.get(), ids);
    }
  }
  return ids;
}

std::string BpeTokenizer::decode(const std::vector<int64_t> &ids) const {
  return impl_->decode(ids, /*continuation=*/false);
}

std::string
BpeTokenizer::decodeContinuation(const std::vector<int64_t> &ids) const {
  return impl_->decode(ids, /*continuation=*/true);
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

} // namespace genesis::text
