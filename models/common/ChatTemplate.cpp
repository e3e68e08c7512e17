//===- ChatTemplate.cpp - tokenizer_config.json chat templates ------------===//
//
// The tree ChatTemplateSyntax parses a template into is interpreted over
// JSON values, with Jinja's undefined.
//
//===----------------------------------------------------------------------===//

#include "models/common/ChatTemplate.h"
#include "models/common/ChatTemplateSyntax.h"

#include "runtime/formats/Json.h"
#include "runtime/support/Error.h"

#include <unicode/unistr.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <set>
#include <vector>

namespace genesis::text {
namespace {

using namespace chat;
/// The longest string or list `*` may build.
constexpr uint64_t kMaxRepeat = 1 << 24;

//===----------------------------------------------------------------------===//
// Values
//===----------------------------------------------------------------------===//

/// A Jinja value: JSON, or undefined (a missing name, attribute or item).
struct Value {
  Json json;
  bool defined = true;
};

Value undefinedValue() { return {Json(), false}; }

bool truthy(const Value &value) {
  const Json &j = value.json;
  if (!value.defined || j.is_null())
    return false;
  if (j.is_boolean())
    return j.get<bool>();
  if (j.is_number_integer())
    return j.get<int64_t>() != 0;
  if (j.is_number())
    return j.get<double>() != 0;
  if (j.is_string())
    return !j.get_ref<const std::string &>().empty();
  if (j.is_array() || j.is_object())
    return !j.empty();
  return true;
}

/// A list or mapping as Python's repr() and json.dumps both lay it out
/// ("[a, b]", "{k: v}"), each key and item printed by `print`.
std::string printContainer(const Json &j, std::string (*print)(const Json &)) {
  std::string text;
  if (j.is_array()) {
    for (const Json &item : j)
      text += (text.empty() ? "" : ", ") + print(item);
    return "[" + text + "]";
  }
  for (const auto &[key, item] : j.items())
    text += (text.empty() ? "" : ", ") + print(Json(key)) + ": " + print(item);
  return "{" + text + "}";
}

/// Python's json.dumps with its default separators (", ", ": "), as
/// transformers' tojson filter writes.
std::string toJson(const Json &j) {
  if (j.is_array() || j.is_object())
    return printContainer(j, toJson);
  // Bytes that are not UTF-8 (a message cut mid-character) become U+FFFD.
  return j.dump(-1, ' ', /*ensure_ascii=*/false,
                Json::error_handler_t::replace);
}

/// Python's repr() of a value, as jinja2 prints lists and mappings:
/// ['a', 1, True, None], {'k': 'v'}.
std::string pythonRepr(const Json &j) {
  if (j.is_string()) {
    const std::string &text = j.get_ref<const std::string &>();
    char quote = text.find('\'') != std::string::npos &&
                         text.find('"') == std::string::npos
                     ? '"'
                     : '\'';
    std::string out(1, quote);
    for (unsigned char c : text) {
      if (c == '\\' || c == static_cast<unsigned char>(quote)) {
        out += '\\';
        out += static_cast<char>(c);
      } else if (c == '\n') {
        out += "\\n";
      } else if (c == '\r') {
        out += "\\r";
      } else if (c == '\t') {
        out += "\\t";
      } else if (c < 0x20 || c == 0x7f) {
        char hex[8];
        std::snprintf(hex, sizeof(hex), "\\x%02x", c);
        out += hex;
      } else {
        out += static_cast<char>(c);
      }
    }
    return out + quote;
  }
  if (j.is_null())
    return "None";
  if (j.is_boolean())
    return j.get<bool>() ? "True" : "False";
  if (j.is_array() || j.is_object())
    return printContainer(j, pythonRepr);
  return toJson(j);
}

/// Python's str() of a value; undefined prints as nothing.
std::string toText(const Value &value) {
  if (!value.defined)
    return "";
  if (value.json.is_string())
    return value.json.get<std::string>();
  return pythonRepr(value.json);
}

/// The byte offset of each code point of UTF-8 `text`, and its size last:
/// Python indexes strings by code point.
std::vector<size_t> codePointOffsets(const std::string &text) {
  std::vector<size_t> offsets;
  for (size_t i = 0; i < text.size(); ++i)
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80)
      offsets.push_back(i);
  offsets.push_back(text.size());
  return offsets;
}

/// Python's len(): code points of a string, items of a list or mapping.
int64_t lengthOf(const Value &value) {
  const Json &j = value.json;
  if (j.is_string()) {
    int64_t count = 0;
    for (unsigned char c : j.get_ref<const std::string &>())
      count += (c & 0xC0) != 0x80;
    return count;
  }
  if (j.is_array() || j.is_object())
    return static_cast<int64_t>(j.size());
  return 0;
}

//===----------------------------------------------------------------------===//
// Rendering
//===----------------------------------------------------------------------===//

class Renderer {
public:
  Renderer(std::string where, Json variables) : where_(std::move(where)) {
    scopes_.emplace_back();
    for (auto &[key, value] : variables.items())
      scopes_.back()[key] = {value, true};
  }

  void render(const std::vector<Node> &nodes, std::string &out) {
    for (const Node &node : nodes) {
      line_ = node.line;
      switch (node.kind) {
      case Node::Text:
        out += node.text;
        break;
      case Node::Output:
        out += toText(evaluate(*node.value));
        break;
      case Node::If: {
        bool taken = false;
        for (const auto &[condition, body] : node.branches) {
          line_ = node.line;
          if (truthy(evaluate(*condition))) {
            render(body, out);
            taken = true;
            break;
          }
        }
        if (!taken)
          render(node.body, out);
        break;
      }
      case Node::For:
        loop(node, out);
        break;
      case Node::Set:
        scopes_.back()[node.text] = evaluate(*node.value);
        break;
      }
    }
  }

private:
  void loop(const Node &node, std::string &out) {
    Value sequence = evaluate(*node.value);
    std::vector<Json> items;
    const Json &j = sequence.json;
    if (!sequence.defined || j.is_null()) {
      // Jinja iterates an undefined value as nothing.
    } else if (j.is_array()) {
      items.assign(j.begin(), j.end());
    } else if (j.is_object()) {
      for (const auto &[key, item] : j.items())
        items.emplace_back(key);
    } else {
      fail("cannot loop over " + describe(sequence));
    }
    auto length = static_cast<int64_t>(items.size());
    for (int64_t i = 0; i < length; ++i) {
      scopes_.emplace_back();
      scopes_.back()[node.text] = {items[i], true};
      Json loop{{"index", i + 1},
                {"index0", i},
                {"revindex", length - i},
                {"revindex0", length - i - 1},
                {"first", i == 0},
                {"last", i == length - 1},
                {"length", length},
                {"depth", 1},
                {"depth0", 0}};
      // previtem and nextitem stay undefined at the ends, as in Jinja.
      if (i > 0)
        loop["previtem"] = items[i - 1];
      if (i + 1 < length)
        loop["nextitem"] = items[i + 1];
      scopes_.back()["loop"] = {loop, true};
      render(node.body, out);
      scopes_.pop_back();
    }
  }

  [[noreturn]] void fail(const std::string &problem) const {
    throw Error(where_ + ": line " + std::to_string(line_) + ": " + problem);
  }

  static std::string describe(const Value &value) {
    if (!value.defined)
      return "an undefined value";
    const Json &j = value.json;
    std::string type = j.is_string()    ? "a string"
                       : j.is_number()  ? "a number"
                       : j.is_boolean() ? "a boolean"
                       : j.is_null()    ? "none"
                       : j.is_array()   ? "a list"
                                        : "a mapping";
    return type;
  }

  Value lookup(const std::string &name) const {
    for (auto scope = scopes_.rbegin(); scope != scopes_.rend(); ++scope)
      if (auto it = scope->find(name); it != scope->end())
        return it->second;
    return undefinedValue();
  }

  static int64_t integerOf(const Value &value) {
    return value.json.is_number_integer() ? value.json.get<int64_t>() : 0;
  }

  Value item(const Value &container, const Value &key) {
    const Json &j = container.json;
    if (!container.defined)
      fail("an item of an undefined value");
    if (j.is_object() && key.json.is_string()) {
      auto it = j.find(key.json.get<std::string>());
      return it == j.end() ? undefinedValue() : Value{*it, true};
    }
    if ((j.is_array() || j.is_string()) && key.json.is_number_integer()) {
      int64_t size = lengthOf(container), index = integerOf(key);
      if (index < 0)
        index += size;
      if (index < 0 || index >= size)
        return undefinedValue();
      if (j.is_array())
        return {j[static_cast<size_t>(index)], true};
      const std::string &text = j.get_ref<const std::string &>();
      std::vector<size_t> offsets = codePointOffsets(text);
      auto at = static_cast<size_t>(index);
      return {Json(text.substr(offsets[at], offsets[at + 1] - offsets[at])),
              true};
    }
    return undefinedValue();
  }

  Value slice(const Value &container, const Value &from, const Value &to) {
    const Json &j = container.json;
    if (!container.defined || !(j.is_array() || j.is_string()))
      fail("cannot slice " + describe(container));
    int64_t size = lengthOf(container);
    auto bound = [&](const Value &value, int64_t fallback) {
      if (value.defined && value.json.is_null())
        return fallback;
      if (!value.defined || !value.json.is_number_integer())
        fail("a slice's bounds must be integers or none, not " +
             describe(value));
      int64_t index = integerOf(value);
      if (index < 0)
        index += size;
      return std::clamp<int64_t>(index, 0, size);
    };
    int64_t begin = bound(from, 0), end = std::max(begin, bound(to, size));
    if (j.is_string()) {
      const std::string &text = j.get_ref<const std::string &>();
      std::vector<size_t> offsets = codePointOffsets(text);
      size_t first = offsets[static_cast<size_t>(begin)],
             last = offsets[static_cast<size_t>(end)];
      return {Json(text.substr(first, last - first)), true};
    }
    Json result = Json::array();
    for (int64_t i = begin; i < end; ++i)
      result.push_back(j[static_cast<size_t>(i)]);
    return {result, true};
  }

  bool equal(const Value &a, const Value &b) const {
    if (!a.defined || !b.defined)
      return a.defined == b.defined;
    if (a.json.is_number() && b.json.is_number())
      return a.json.get<double>() == b.json.get<double>();
    return a.json == b.json;
  }

  Value binary(const std::string &op, const Value &a, const Value &b) {
    const Json &x = a.json, &y = b.json;
    if (op == "==")
      return {Json(equal(a, b)), true};
    if (op == "!=")
      return {Json(!equal(a, b)), true};
    if (op == "in" || op == "not in") {
      bool found = false;
      if (y.is_array())
        found = std::any_of(y.begin(), y.end(), [&](const Json &e) {
          return equal({e, true}, a);
        });
      else if (y.is_object())
        found = x.is_string() && y.contains(x.get<std::string>());
      else if (y.is_string() && x.is_string())
        found = y.get<std::string>().find(x.get<std::string>()) !=
                std::string::npos;
      else if (b.defined)
        fail("'in' needs a list, mapping or string on its right, not " +
             describe(b));
      return {Json(op == "in" ? found : !found), true};
    }
    if (op == "~")
      return {Json(toText(a) + toText(b)), true};
    bool numbers = x.is_number_integer() && y.is_number_integer() &&
                   a.defined && b.defined;
    if (op == "<" || op == ">" || op == "<=" || op == ">=") {
      int order = 0;
      if (x.is_number() && y.is_number())
        order = x.get<double>() < y.get<double>()   ? -1
                : x.get<double>() > y.get<double>() ? 1
                                                    : 0;
      else if (x.is_string() && y.is_string())
        order = x.get<std::string>().compare(y.get<std::string>());
      else
        fail("cannot compare " + describe(a) + " with " + describe(b));
      bool result = op == "<"    ? order < 0
                    : op == ">"  ? order > 0
                    : op == "<=" ? order <= 0
                                 : order >= 0;
      return {Json(result), true};
    }
    if (op == "+" && x.is_string() && y.is_string() && a.defined && b.defined)
      return {Json(x.get<std::string>() + y.get<std::string>()), true};
    if (op == "+" && x.is_array() && y.is_array()) {
      Json joined = x;
      for (const Json &e : y)
        joined.push_back(e);
      return {joined, true};
    }
    if (numbers) {
      int64_t p = x.get<int64_t>(), q = y.get<int64_t>(), r = 0;
      bool overflow = false;
      if (op == "+")
        overflow = __builtin_add_overflow(p, q, &r);
      else if (op == "-")
        overflow = __builtin_sub_overflow(p, q, &r);
      else if (op == "*")
        overflow = __builtin_mul_overflow(p, q, &r);
      else if (q == 0)
        fail("integer modulo by zero");
      else if (q != -1) // x % -1 is 0; C++ leaves it undefined for INT64_MIN
        // Python's: the sign of the divisor.
        r = p % q != 0 && ((p % q < 0) != (q < 0)) ? p % q + q : p % q;
      if (overflow)
        fail("the integer " + op + " overflows 64 bits");
      return {Json(r), true};
    }
    // Python's repetition of a string or list by a count.
    if (op == "*" && a.defined && b.defined &&
        ((x.is_number_integer() && (y.is_string() || y.is_array())) ||
         (y.is_number_integer() && (x.is_string() || x.is_array())))) {
      const Json &sequence = x.is_number_integer() ? y : x;
      int64_t count =
          x.is_number_integer() ? x.get<int64_t>() : y.get<int64_t>();
      uint64_t size = sequence.is_string()
                          ? sequence.get_ref<const std::string &>().size()
                          : sequence.size();
      if (count > 0 && size > 0 &&
          static_cast<uint64_t>(count) > kMaxRepeat / size)
        fail("a repetition of " + std::to_string(count) +
             " copies is longer than " + std::to_string(kMaxRepeat));
      Json result = sequence.is_string() ? Json("") : Json::array();
      for (int64_t i = 0; i < count; ++i)
        if (sequence.is_string())
          result.get_ref<std::string &>() +=
              sequence.get_ref<const std::string &>();
        else
          for (const Json &item : sequence)
            result.push_back(item);
      return {result, true};
    }
    fail("cannot apply '" + op + "' to " + describe(a) + " and " + describe(b));
  }

  static std::string strip(const std::string &text, bool left, bool right) {
    size_t begin = 0, end = text.size();
    while (left && begin < end && isSpace(text[begin]))
      ++begin;
    while (right && end > begin && isSpace(text[end - 1]))
      --end;
    return text.substr(begin, end - begin);
  }

  Value filter(const std::string &name, const Value &value) {
    const Json &j = value.json;
    if (name == "tojson")
      return {Json(toJson(j)), true};
    if (name == "string")
      return {Json(toText(value)), true};
    if (name == "length" || name == "count")
      return {Json(lengthOf(value)), true};
    if (name == "first" || name == "last") {
      if (j.is_array())
        return j.empty() ? undefinedValue()
                         : Value{name == "first" ? j.front() : j.back(), true};
      if (j.is_string() && !j.get_ref<const std::string &>().empty()) {
        const std::string &text = j.get_ref<const std::string &>();
        std::vector<size_t> offsets = codePointOffsets(text);
        size_t at = name == "first" ? 0 : offsets.size() - 2;
        return {Json(text.substr(offsets[at], offsets[at + 1] - offsets[at])),
                true};
      }
      return undefinedValue();
    }
    // trim, lower and upper take the value's text, as Jinja's do.
    std::string text = toText(value);
    if (name == "trim")
      return {Json(strip(text, true, true)), true};
    icu::UnicodeString unicode = icu::UnicodeString::fromUTF8(text);
    std::string converted;
    (name == "lower" ? unicode.toLower() : unicode.toUpper())
        .toUTF8String(converted);
    return {Json(converted), true};
  }

  bool test(const std::string &name, const Value &value) {
    const Json &j = value.json;
    if (name == "defined")
      return value.defined;
    if (name == "undefined")
      return !value.defined;
    if (!value.defined)
      return false;
    if (name == "none")
      return j.is_null();
    if (name == "string")
      return j.is_string();
    if (name == "number")
      return j.is_number() || j.is_boolean(); // Python's bool is an int
    if (name == "mapping")
      return j.is_object();
    return j.is_array() || j.is_object() || j.is_string(); // sequence, iterable
  }

  Value method(const Expr &expr) {
    Value self = evaluate(*expr.operands[0]);
    if (!self.json.is_string() || !self.defined)
      fail("the method '" + expr.name + "' needs a string, not " +
           describe(self));
    std::string text = self.json.get<std::string>();
    std::vector<std::string> arguments;
    for (size_t i = 1; i < expr.operands.size(); ++i) {
      Value argument = evaluate(*expr.operands[i]);
      if (!argument.json.is_string())
        fail("the method '" + expr.name + "' takes strings");
      arguments.push_back(argument.json.get<std::string>());
    }
    bool affix = expr.name == "startswith" || expr.name == "endswith";
    if (arguments.size() != (affix ? 1u : 0u))
      fail("'" + expr.name + "' takes " + (affix ? "one argument" : "none"));
    if (expr.name == "startswith")
      return {Json(text.rfind(arguments[0], 0) == 0), true};
    if (expr.name == "endswith")
      return {Json(text.size() >= arguments[0].size() &&
                   text.compare(text.size() - arguments[0].size(),
                                arguments[0].size(), arguments[0]) == 0),
              true};
    return {Json(strip(text, expr.name != "rstrip", expr.name != "lstrip")),
            true};
  }

  Value evaluate(const Expr &expr) {
    switch (expr.kind) {
    case Expr::Literal:
      return {expr.value, true};
    case Expr::Undefined:
      return undefinedValue();
    case Expr::List: {
      Json list = Json::array();
      for (const ExprPtr &item : expr.operands)
        list.push_back(evaluate(*item).json);
      return {list, true};
    }
    case Expr::Dict: {
      Json dict = Json::object();
      for (size_t i = 0; i + 1 < expr.operands.size(); i += 2) {
        Value key = evaluate(*expr.operands[i]);
        if (!key.json.is_string())
          fail("a mapping's keys must be strings, not " + describe(key));
        dict[key.json.get<std::string>()] =
            evaluate(*expr.operands[i + 1]).json;
      }
      return {dict, true};
    }
    case Expr::Name:
      return lookup(expr.name);
    case Expr::Attribute: {
      Value object = evaluate(*expr.operands[0]);
      if (!object.defined)
        fail("the attribute '" + expr.name + "' of an undefined value");
      return item(object, {Json(expr.name), true});
    }
    case Expr::Item:
      return item(evaluate(*expr.operands[0]), evaluate(*expr.operands[1]));
    case Expr::Slice:
      return slice(evaluate(*expr.operands[0]), evaluate(*expr.operands[1]),
                   evaluate(*expr.operands[2]));
    case Expr::Not:
      return {Json(!truthy(evaluate(*expr.operands[0]))), true};
    case Expr::Negate: {
      Value value = evaluate(*expr.operands[0]);
      if (!value.json.is_number_integer())
        fail("cannot negate " + describe(value));
      int64_t negated = 0;
      if (__builtin_sub_overflow(int64_t{0}, value.json.get<int64_t>(),
                                 &negated))
        fail("the integer - overflows 64 bits");
      return {Json(negated), true};
    }
    case Expr::Binary: {
      Value left = evaluate(*expr.operands[0]);
      if (expr.name == "and")
        return truthy(left) ? evaluate(*expr.operands[1]) : left;
      if (expr.name == "or")
        return truthy(left) ? left : evaluate(*expr.operands[1]);
      return binary(expr.name, left, evaluate(*expr.operands[1]));
    }
    case Expr::Conditional:
      return truthy(evaluate(*expr.operands[0])) ? evaluate(*expr.operands[1])
                                                 : evaluate(*expr.operands[2]);
    case Expr::Filter:
      return filter(expr.name, evaluate(*expr.operands[0]));
    case Expr::Test:
      return {
          Json(test(expr.name, evaluate(*expr.operands[0])) != expr.negated),
          true};
    case Expr::Call: {
      std::string message =
          expr.operands.empty() ? "" : toText(evaluate(*expr.operands[0]));
      fail("the template raised an exception: " + message);
    }
    case Expr::Method:
      return method(expr);
    }
    fail("unknown expression");
  }

  std::string where_;
  int line_ = 0;
  std::vector<std::map<std::string, Value>> scopes_;
};

} // namespace

struct ChatTemplate::Impl {
  std::string where;
  std::vector<Node> nodes;
};

ChatTemplate::ChatTemplate(const std::string &source, std::string where)
    : impl_(std::make_unique<Impl>()) {
  impl_->where = std::move(where);
  // jinja2's defaults: line ends read as \n, one trailing newline dropped.
  std::string text;
  text.reserve(source.size());
  for (size_t i = 0; i < source.size(); ++i) {
    if (source[i] == '\r') {
      text += '\n';
      i += i + 1 < source.size() && source[i + 1] == '\n';
    } else {
      text += source[i];
    }
  }
  if (!text.empty() && text.back() == '\n')
    text.pop_back();
  impl_->nodes = parseTemplate(text, impl_->where);
}

ChatTemplate::ChatTemplate(ChatTemplate &&) noexcept = default;
ChatTemplate &ChatTemplate::operator=(ChatTemplate &&) noexcept = default;
ChatTemplate::~ChatTemplate() = default;

std::string
ChatTemplate::render(const nlohmann::ordered_json &messages,
                     bool addGenerationPrompt,
                     const nlohmann::ordered_json &variables) const {
  Json all = variables;
  all["messages"] = messages;
  all["add_generation_prompt"] = addGenerationPrompt;
  Renderer renderer(impl_->where, std::move(all));
  std::string out;
  try {
    renderer.render(impl_->nodes, out);
  } catch (const nlohmann::json::exception &error) {
    throw Error(impl_->where + ": " + error.what());
  }
  return out;
}

TokenizerConfig loadTokenizerConfig(const std::string &path) {
  std::string where = "tokenizer config '" + path + "'";
  nlohmann::json root = readJsonObject(path, where);
  TokenizerConfig config;
  auto fail = [&](const std::string &key, const std::string &problem) {
    throw Error(where + ": '" + key + "' " + problem);
  };
  if (auto it = root.find("chat_template");
      it != root.end() && !it->is_null()) {
    const nlohmann::json *source = nullptr;
    if (it->is_string()) {
      source = &*it;
    } else if (it->is_array()) {
      for (const nlohmann::json &entry : *it)
        if (entry.is_object() && entry.contains("name") &&
            entry["name"] == "default" && entry.contains("template") &&
            entry["template"].is_string())
          source = &entry["template"];
      if (!source)
        fail("chat_template", "is a list without a \"default\" template");
    } else {
      fail("chat_template", "must be a string or a list of named templates");
    }
    config.chatTemplate.emplace(source->get<std::string>(),
                                where + ": chat_template");
  }
  for (auto [key, token] : {std::pair{"bos_token", &config.bosToken},
                            std::pair{"eos_token", &config.eosToken}}) {
    auto it = root.find(key);
    if (it == root.end() || it->is_null())
      continue;
    const nlohmann::json &value =
        it->is_object() && it->contains("content") ? (*it)["content"] : *it;
    if (!value.is_string())
      fail(key, "must be a string or an object with a string \"content\"");
    *token = value.get<std::string>();
  }
  return config;
}

} // namespace genesis::text
