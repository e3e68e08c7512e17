//===- ChatTemplate.h - tokenizer_config.json chat templates ----*- C++ -*-===//
//
// A Hub model's chat format lives in its tokenizer_config.json as a Jinja2
// template (`chat_template`), which transformers' apply_chat_template renders
// with jinja2 (trim_blocks and lstrip_blocks on). ChatTemplate renders the
// subset of Jinja2 that chat templates use, to the same text; a template
// outside the subset is refused when it is read, naming the construct and
// its line, so a conversation never gets a silently different prompt.
//
// The subset:
//  - text, {{ expression }}, {% statement %}, {# comments #}, with `-`
//    whitespace control on either side, trim_blocks and lstrip_blocks; line
//    ends read as \n and one trailing newline dropped, as jinja2 does;
//  - {% if %} / {% elif %} / {% else %} / {% endif %}; {% for x in seq %} /
//    {% endfor %} with loop.index, index0, revindex, revindex0, first, last,
//    length, previtem, nextitem, depth and depth0; {% set name = expression %}
//    (local to the loop it is in);
//  - literals (strings with Python's escapes, 64-bit integers, true / false
//    / none in either case, lists, mappings), names, `a.b`, `a[i]`, `a[i:j]`
//    (strings by code point), `not`, `and`, `or`, chained == != < <= > >=,
//    `in`, `not in`, + - * % ~ and unary - with Jinja's precedence (integer
//    overflow is an error), string and list repetition, `x if c else y`;
//  - tests `is [not] defined / none / string / number / mapping / sequence`;
//  - filters trim, tojson, length, count, lower, upper (Unicode, through
//    ICU), string, first, last;
//  - raise_exception(message) (an error naming the message) and the string
//    methods strip(), lstrip(), rstrip(), startswith(s), endswith(s).
// Values print as Python's str() prints them (lists and mappings as
// repr()). Undefined values are Jinja's: an attribute or item that is
// missing is undefined, prints as nothing and is false. Blocks and
// expressions nest at most 128 deep.
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_MODELS_COMMON_CHATTEMPLATE_H
#define GENESIS_MODELS_COMMON_CHATTEMPLATE_H

#include <nlohmann/json.hpp>

#include <memory>
#include <optional>
#include <string>

namespace genesis::text {

class ChatTemplate {
public:
  /// Parses `source`. Throws genesis::Error starting with `where` ("file:
  /// chat_template") and naming the line of the first construct outside the
  /// subset, or of a syntax error.
  ChatTemplate(const std::string &source, std::string where);
  ChatTemplate(ChatTemplate &&) noexcept;
  ChatTemplate &operator=(ChatTemplate &&) noexcept;
  ~ChatTemplate();

  /// The text of `messages` (a JSON array of {"role": ..., "content": ...}),
  /// as apply_chat_template(messages, add_generation_prompt=...) gives it;
  /// `variables` (an object: bos_token, eos_token, tools, ...) are defined
  /// too. Ordered JSON, as Python's dicts: tojson keeps the keys' order.
  /// Throws genesis::Error naming the line for an error while rendering (a
  /// type error, or the template's own raise_exception).
  std::string render(const nlohmann::ordered_json &messages,
                     bool addGenerationPrompt,
                     const nlohmann::ordered_json &variables =
                         nlohmann::ordered_json::object()) const;

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// What a model directory's tokenizer_config.json says about chats.
struct TokenizerConfig {
  /// `chat_template`: the string, or the entry named "default" of a list of
  /// {"name", "template"}.
  std::optional<ChatTemplate> chatTemplate;
  /// `bos_token` and `eos_token`: a string or an object with "content".
  std::optional<std::string> bosToken, eosToken;
};

/// Reads `path`. Throws genesis::Error naming the file and the key for a file
/// that is not a JSON object, a key of the wrong type, or a chat template
/// outside ChatTemplate's subset.
TokenizerConfig loadTokenizerConfig(const std::string &path);

} // namespace genesis::text

#endif // GENESIS_MODELS_COMMON_CHATTEMPLATE_H
