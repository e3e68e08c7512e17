//===- Json.h - JSON parsing with a depth limit -----------------*- C++ -*-===//
//
// Every JSON file Genesis reads (safetensors headers, config.json,
// tokenizer.json) goes through parseJson, which
// refuses documents nested deeper than kMaxJsonDepth: nlohmann's parser is
// iterative, but printing or comparing a value recurses, so a 100,000-deep
// array would overflow the stack inside an error message.
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_RUNTIME_JSON_H
#define GENESIS_RUNTIME_JSON_H

#include <nlohmann/json.hpp>

#include <string>

namespace genesis {

/// The deepest nesting of arrays and objects accepted in a JSON file. Real
/// configs and tokenizers nest fewer than 10 levels.
inline constexpr int kMaxJsonDepth = 128;

/// Parses `text`, refusing nesting deeper than kMaxJsonDepth. `callback`,
/// when given, sees every parse event as nlohmann's parser callback does.
/// Errors are genesis::Error starting with `where`, a subject such as
/// "config file 'x.json'": "<where> is not valid JSON: ...".
nlohmann::json
parseJson(const std::string &text, const std::string &where,
          const nlohmann::json::parser_callback_t &callback = nullptr);

/// The JSON object in the file `path`; `where` names it in errors ("config
/// file 'x.json'"). Errors: no such file, not a regular file, unreadable,
/// not JSON (parseJson), not an object.
nlohmann::json readJsonObject(const std::string &path,
                              const std::string &where);

/// A JSON value for an error message: its text whole when it has at most
/// `maxChars` bytes, else cut between UTF-8 characters before `maxChars - 3`
/// bytes and ended with "...".
std::string describeJson(const nlohmann::json &value, size_t maxChars = 200);

} // namespace genesis

#endif // GENESIS_RUNTIME_JSON_H
