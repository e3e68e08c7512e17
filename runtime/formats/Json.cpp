//===- Json.cpp - JSON parsing with a depth limit -------------------------===//

#include "runtime/formats/Json.h"
#include "runtime/support/Error.h"

namespace genesis {

nlohmann::json parseJson(const std::string &text, const std::string &where,
                         const nlohmann::json::parser_callback_t &callback) {
  auto limitDepth = [&](int depth, nlohmann::json::parse_event_t event,
                        nlohmann::json &parsed) {
    if (depth > kMaxJsonDepth)
      throw Error(where + " nests JSON deeper than " +
                  std::to_string(kMaxJsonDepth) + " levels");
    return callback ? callback(depth, event, parsed) : true;
  };
  try {
    return nlohmann::json::parse(text, limitDepth);
  } catch (const nlohmann::json::exception &error) {
    throw Error(where + " is not valid JSON: " + error.what());
  }
}

std::string describeJson(const nlohmann::json &value, size_t maxChars) {
  std::string text = value.dump();
  if (text.size() <= maxChars || maxChars < 4)
    return text;
  size_t cut = maxChars - 3;
  while (cut > 0 && (text[cut] & 0xC0) == 0x80)
    --cut;
  return text.substr(0, cut) + "...";
}

} // namespace genesis
