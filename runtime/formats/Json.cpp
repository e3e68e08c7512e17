//===- Json.cpp - JSON parsing with a depth limit -------------------------===//

#include "runtime/formats/Json.h"
#include "runtime/support/Error.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

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

nlohmann::json readJsonObject(const std::string &path,
                              const std::string &where) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error))
    throw Error("cannot open '" + path + "': " +
                (std::filesystem::exists(path, error) ? "not a regular file"
                                                      : "no such file"));
  std::ifstream stream(path, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(stream)),
                   std::istreambuf_iterator<char>());
  if (!stream && !stream.eof())
    throw Error("cannot read '" + path + "': " + std::strerror(errno));
  nlohmann::json json = parseJson(text, where);
  if (!json.is_object())
    throw Error(where + " is not a JSON object");
  return json;
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
