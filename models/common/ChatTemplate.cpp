//===- ChatTemplate.cpp - tokenizer_config.json chat templates ------------===//
//
// The template is cut into text and tags with jinja2's whitespace rules
// (the `-` modifiers, trim_blocks, lstrip_blocks), the tags are parsed into
// a tree of statements and expressions by recursive descent with Jinja's
// precedence (or < and < not < comparisons and tests < ~ < + - < * % <
// unary - < filters and postfix), and the tree is interpreted over JSON
// values, with Jinja's undefined.
//
//===----------------------------------------------------------------------===//

#include "models/common/ChatTemplate.h"

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

using Json = nlohmann::ordered_json;

/// Deeper nesting (of blocks or of expressions) is refused rather than
/// followed down the stack.
constexpr int kMaxDepth = 128;
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

/// Python's json.dumps with its default separators (", ", ": "), as
/// transformers' tojson filter writes.
std::string toJson(const Json &j) {
  if (j.is_array()) {
    std::string text = "[";
    for (size_t i = 0; i < j.size(); ++i)
      text += (i ? ", " : "") + toJson(j[i]);
    return text + "]";
  }
  if (j.is_object()) {
    std::string text = "{";
    bool first = true;
    for (const auto &[key, item] : j.items()) {
      text += (first ? "" : ", ") + toJson(Json(key)) + ": " + toJson(item);
      first = false;
    }
    return text + "}";
  }
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
  if (j.is_array()) {
    std::string text = "[";
    for (size_t i = 0; i < j.size(); ++i)
      text += (i ? ", " : "") + pythonRepr(j[i]);
    return text + "]";
  }
  if (j.is_object()) {
    std::string text = "{";
    bool first = true;
    for (const auto &[key, item] : j.items()) {
      text +=
          (first ? "" : ", ") + pythonRepr(Json(key)) + ": " + pythonRepr(item);
      first = false;
    }
    return text + "}";
  }
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
// Cutting the source into text and tags
//===----------------------------------------------------------------------===//

struct Piece {
  enum Kind { Text, Expression, Statement } kind;
  std::string text;
  int line;
};

bool isBlank(char c) { return c == ' ' || c == '\t'; }
bool isSpace(char c) { return std::isspace(static_cast<unsigned char>(c)); }

std::string stripRight(std::string text) {
  while (!text.empty() && isSpace(text.back()))
    text.pop_back();
  return text;
}

std::vector<Piece> cut(const std::string &source, const std::string &where) {
  std::vector<Piece> pieces;
  size_t position = 0;
  bool stripNext = false;
  int line = 1;
  auto lineAt = [&](size_t from, size_t to) {
    for (size_t i = from; i < to; ++i)
      line += source[i] == '\n';
  };
  while (position <= source.size()) {
    size_t open = source.find('{', position);
    while (open != std::string::npos && open + 1 < source.size() &&
           source[open + 1] != '{' && source[open + 1] != '%' &&
           source[open + 1] != '#')
      open = source.find('{', open + 1);
    if (open != std::string::npos && open + 1 >= source.size())
      open = std::string::npos;
    std::string text =
        source.substr(position, open == std::string::npos ? std::string::npos
                                                          : open - position);
    if (stripNext) {
      size_t first = 0;
      while (first < text.size() && isSpace(text[first]))
        ++first;
      text.erase(0, first);
      stripNext = false;
    }
    if (open == std::string::npos) {
      if (!text.empty())
        pieces.push_back({Piece::Text, text, line});
      break;
    }
    char kind = source[open + 1];
    bool block = kind != '{';
    bool stripBefore = open + 2 < source.size() && source[open + 2] == '-';
    if (stripBefore) {
      text = stripRight(text);
    } else if (block) {
      // lstrip_blocks: blanks from the start of the line to a block tag.
      size_t start = text.find_last_of('\n');
      size_t from = start == std::string::npos ? 0 : start + 1;
      bool lineStart = start != std::string::npos || position == 0 ||
                       source[position - 1] == '\n';
      if (lineStart && std::all_of(text.begin() + from, text.end(), isBlank))
        text.erase(from);
    }
    if (!text.empty())
      pieces.push_back({Piece::Text, text, line});
    lineAt(position, open);
    int tagLine = line;
    std::string closer = kind == '{' ? "}}" : kind == '%' ? "%}" : "#}";
    size_t inner = open + 2 + (stripBefore ? 1 : 0);
    // The closer, outside string literals.
    size_t close = inner;
    char quote = 0;
    for (; close + 1 < source.size(); ++close) {
      char c = source[close];
      if (kind == '#') {
        if (source.compare(close, 2, closer) == 0)
          break;
        continue;
      }
      if (quote) {
        if (c == '\\')
          ++close;
        else if (c == quote)
          quote = 0;
      } else if (c == '\'' || c == '"') {
        quote = c;
      } else if (source.compare(close, 2, closer) == 0) {
        break;
      }
    }
    if (close + 1 >= source.size())
      throw Error(where + ": line " + std::to_string(tagLine) + ": '{" +
                  std::string(1, kind) + "' is never closed by '" + closer +
                  "'");
    bool stripAfter = close > inner && source[close - 1] == '-';
    std::string content =
        source.substr(inner, close - inner - (stripAfter ? 1 : 0));
    if (kind != '#')
      pieces.push_back({kind == '{' ? Piece::Expression : Piece::Statement,
                        content, tagLine});
    lineAt(open, close + 2);
    position = close + 2;
    stripNext = stripAfter;
    // trim_blocks: the newline after a block tag.
    if (block && !stripAfter && position < source.size() &&
        source[position] == '\n') {
      ++position;
      ++line;
    }
  }
  return pieces;
}

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

struct Token {
  enum Kind { Name, String, Integer, Operator, End } kind;
  std::string text;
};

void appendUtf8(std::string &out, uint32_t code) {
  if (code < 0x80) {
    out += static_cast<char>(code);
  } else if (code < 0x800) {
    out += static_cast<char>(0xC0 | (code >> 6));
    out += static_cast<char>(0x80 | (code & 0x3F));
  } else if (code < 0x10000) {
    out += static_cast<char>(0xE0 | (code >> 12));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (code >> 18));
    out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code & 0x3F));
  }
}

std::vector<Token> tokenize(const std::string &text, const std::string &where,
                            int line) {
  std::vector<Token> tokens;
  auto fail = [&](const std::string &problem) {
    throw Error(where + ": line " + std::to_string(line) + ": " + problem);
  };
  for (size_t i = 0; i < text.size();) {
    char c = text[i];
    if (isSpace(c)) {
      ++i;
    } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t start = i;
      while (
          i < text.size() &&
          (std::isalnum(static_cast<unsigned char>(text[i])) || text[i] == '_'))
        ++i;
      tokens.push_back({Token::Name, text.substr(start, i - start)});
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      size_t start = i;
      while (i < text.size() &&
             std::isdigit(static_cast<unsigned char>(text[i])))
        ++i;
      if (i < text.size() && text[i] == '.')
        fail("the number " + text.substr(start, i - start + 1) +
             "... is not an integer (floats are not implemented)");
      tokens.push_back({Token::Integer, text.substr(start, i - start)});
    } else if (c == '\'' || c == '"') {
      std::string value;
      size_t j = i + 1;
      for (; j < text.size() && text[j] != c; ++j) {
        if (text[j] != '\\' || j + 1 == text.size()) {
          value += text[j];
          continue;
        }
        char escaped = text[++j];
        if (escaped == 'x' || escaped == 'u' || escaped == 'U') {
          // Python's \xHH, \uHHHH and \UHHHHHHHH, written as UTF-8.
          size_t digits = escaped == 'x' ? 2 : escaped == 'u' ? 4 : 8;
          uint32_t code = 0;
          for (size_t k = 0; k < digits; ++k) {
            char h = j + 1 + k < text.size() ? text[j + 1 + k] : 'g';
            if (!std::isxdigit(static_cast<unsigned char>(h)))
              fail("a \\" + std::string(1, escaped) + " escape needs " +
                   std::to_string(digits) + " hex digits");
            code = code * 16 + static_cast<uint32_t>(
                                   std::isdigit(static_cast<unsigned char>(h))
                                       ? h - '0'
                                       : std::tolower(h) - 'a' + 10);
          }
          j += digits;
          if (code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF))
            fail("an escape names no character");
          appendUtf8(value, code);
          continue;
        }
        switch (escaped) {
        case 'n':
          value += '\n';
          break;
        case 'a':
          value += '\a';
          break;
        case 'b':
          value += '\b';
          break;
        case 'f':
          value += '\f';
          break;
        case 'v':
          value += '\v';
          break;
        case '0':
        case '1':
        case '2':
        case '3':
        case '4':
        case '5':
        case '6':
        case '7': {
          // Python's octal escape: up to three digits.
          uint32_t code = static_cast<uint32_t>(escaped - '0');
          for (int k = 0; k < 2 && j + 1 < text.size() && text[j + 1] >= '0' &&
                          text[j + 1] <= '7';
               ++k)
            code = code * 8 + static_cast<uint32_t>(text[++j] - '0');
          appendUtf8(value, code);
          break;
        }
        case 't':
          value += '\t';
          break;
        case 'r':
          value += '\r';
          break;
        case '\\':
        case '\'':
        case '"':
          value += escaped;
          break;
        default:
          value += '\\';
          value += escaped;
        }
      }
      if (j >= text.size())
        fail("a string literal is never closed");
      tokens.push_back({Token::String, value});
      i = j + 1;
    } else {
      static const char *const kOperators[] = {
          "==", "!=", "<=", ">=", "//", "**", "(", ")", "[", "]", "{", "}", ".",
          ",",  ":",  "|",  "+",  "-",  "*",  "/", "%", "~", "<", ">", "="};
      bool found = false;
      for (const char *op : kOperators)
        if (text.compare(i, std::strlen(op), op) == 0) {
          tokens.push_back({Token::Operator, op});
          i += std::strlen(op);
          found = true;
          break;
        }
      if (!found)
        fail("unexpected character '" + std::string(1, c) + "'");
    }
  }
  tokens.push_back({Token::End, ""});
  return tokens;
}

struct Expr;
using ExprPtr = std::shared_ptr<const Expr>;

struct Expr {
  enum Kind {
    Literal,
    Undefined,
    List,
    Dict,
    Name,
    Attribute,
    Item,
    Slice,
    Not,
    Negate,
    Binary,
    Conditional,
    Filter,
    Test,
    Call,
    Method
  } kind;
  Json value;       // Literal
  std::string name; // Name, Attribute, Binary's operator, Filter, Test, Call
  std::vector<ExprPtr> operands;
  bool negated = false; // Test: `is not`
  /// 1 + the deepest operand's: evaluation recurses this deep.
  int depth = 1;
};

ExprPtr make(Expr::Kind kind, std::vector<ExprPtr> operands = {},
             std::string name = "", Json value = Json()) {
  auto expr = std::make_shared<Expr>();
  expr->kind = kind;
  expr->operands = std::move(operands);
  expr->name = std::move(name);
  expr->value = std::move(value);
  for (const ExprPtr &operand : expr->operands)
    expr->depth = std::max(expr->depth, operand->depth + 1);
  return expr;
}

const std::set<std::string> kFilters = {"trim",   "tojson", "length",
                                        "count",  "lower",  "upper",
                                        "string", "first",  "last"};
const std::set<std::string> kTests = {"defined",  "undefined", "none",
                                      "string",   "number",    "mapping",
                                      "sequence", "iterable"};
const std::set<std::string> kMethods = {"strip", "lstrip", "rstrip",
                                        "startswith", "endswith"};

/// Recursive descent over one tag's tokens, with Jinja's precedence.
class ExpressionParser {
public:
  ExpressionParser(std::vector<Token> tokens, std::string where, int line)
      : tokens_(std::move(tokens)), where_(std::move(where)), line_(line) {}

  /// An expression; with `conditional`, `a if c else b` too (a for loop's
  /// sequence is parsed without, so that a loop filter is refused rather
  /// than read as one).
  ExprPtr expression(bool conditional = true) {
    Depth depth(*this);
    ExprPtr value = orExpression();
    if (conditional && acceptName("if")) {
      ExprPtr condition = orExpression();
      // Without `else`, Jinja's value is undefined.
      ExprPtr otherwise =
          acceptName("else") ? expression() : node(Expr::Undefined);
      return node(Expr::Conditional, {condition, value, otherwise});
    }
    return value;
  }

  bool atEnd() const { return peek().kind == Token::End; }
  const Token &peek() const { return tokens_[index_]; }
  bool acceptName(const std::string &name) {
    if (peek().kind == Token::Name && peek().text == name) {
      ++index_;
      return true;
    }
    return false;
  }
  bool acceptOperator(const std::string &op) {
    if (peek().kind == Token::Operator && peek().text == op) {
      ++index_;
      return true;
    }
    return false;
  }
  std::string name() {
    if (peek().kind != Token::Name)
      fail("expected a name, got '" + peek().text + "'");
    return tokens_[index_++].text;
  }
  void expectOperator(const std::string &op) {
    if (!acceptOperator(op))
      fail("expected '" + op + "', got '" + peek().text + "'");
  }
  void expectEnd() {
    if (!atEnd())
      fail("unexpected '" + peek().text + "'");
  }
  [[noreturn]] void fail(const std::string &problem) const {
    throw Error(where_ + ": line " + std::to_string(line_) + ": " + problem);
  }

private:
  /// make(), refusing expressions deeper than kMaxDepth (a chain such as
  /// 1 + 1 + ... nests one level per operator).
  ExprPtr node(Expr::Kind kind, std::vector<ExprPtr> operands = {},
               std::string name = "", Json value = Json()) {
    ExprPtr expr =
        make(kind, std::move(operands), std::move(name), std::move(value));
    if (expr->depth > kMaxDepth)
      fail("expressions nest deeper than " + std::to_string(kMaxDepth));
    return expr;
  }

  struct Depth {
    explicit Depth(ExpressionParser &parser) : parser(parser) {
      if (++parser.depth_ > kMaxDepth)
        parser.fail("expressions nest deeper than " +
                    std::to_string(kMaxDepth));
    }
    ~Depth() { --parser.depth_; }
    ExpressionParser &parser;
  };

  ExprPtr orExpression() {
    ExprPtr left = andExpression();
    while (acceptName("or"))
      left = node(Expr::Binary, {left, andExpression()}, "or");
    return left;
  }
  ExprPtr andExpression() {
    ExprPtr left = notExpression();
    while (acceptName("and"))
      left = node(Expr::Binary, {left, notExpression()}, "and");
    return left;
  }
  ExprPtr notExpression() {
    Depth depth(*this);
    if (acceptName("not"))
      return node(Expr::Not, {notExpression()});
    return comparison();
  }
  /// Comparisons chain as in Python: a < b < c is a < b and b < c.
  ExprPtr comparison() {
    ExprPtr left = sum();
    ExprPtr chain;
    while (true) {
      std::string op;
      for (const char *candidate : {"==", "!=", "<=", ">=", "<", ">"})
        if (acceptOperator(candidate)) {
          op = candidate;
          break;
        }
      if (op.empty() && acceptName("in"))
        op = "in";
      if (op.empty() && peek().kind == Token::Name && peek().text == "not" &&
          tokens_[index_ + 1].kind == Token::Name &&
          tokens_[index_ + 1].text == "in") {
        index_ += 2;
        op = "not in";
      }
      if (op.empty())
        return chain ? chain : left;
      ExprPtr right = sum();
      ExprPtr compared = node(Expr::Binary, {left, right}, op);
      chain = chain ? node(Expr::Binary, {chain, compared}, "and") : compared;
      left = right;
    }
  }
  // Jinja's order: + and - bind less tightly than ~, which binds less
  // tightly than * and %.
  ExprPtr sum() {
    ExprPtr left = concatenation();
    while (true) {
      if (acceptOperator("+"))
        left = node(Expr::Binary, {left, concatenation()}, "+");
      else if (acceptOperator("-"))
        left = node(Expr::Binary, {left, concatenation()}, "-");
      else
        return left;
    }
  }
  ExprPtr concatenation() {
    ExprPtr left = product();
    while (acceptOperator("~"))
      left = node(Expr::Binary, {left, product()}, "~");
    return left;
  }
  ExprPtr product() {
    ExprPtr left = unary();
    while (true) {
      if (acceptOperator("*"))
        left = node(Expr::Binary, {left, unary()}, "*");
      else if (acceptOperator("%"))
        left = node(Expr::Binary, {left, unary()}, "%");
      else if (peek().text == "/" || peek().text == "//" || peek().text == "**")
        fail("the operator '" + peek().text + "' is not implemented");
      else
        return left;
    }
  }
  ExprPtr unary() {
    Depth depth(*this);
    if (acceptOperator("-"))
      return node(Expr::Negate, {unary()});
    return filters(postfix(primary()));
  }
  ExprPtr primary() {
    Depth depth(*this);
    const Token token = peek();
    if (token.kind == Token::String) {
      ++index_;
      std::string text = token.text;
      // Adjacent literals concatenate, as in Python.
      while (peek().kind == Token::String)
        text += tokens_[index_++].text;
      return node(Expr::Literal, {}, "", Json(text));
    }
    if (token.kind == Token::Integer) {
      ++index_;
      try {
        return node(Expr::Literal, {}, "", Json(std::stoll(token.text)));
      } catch (const std::out_of_range &) {
        fail("the integer " + token.text + " is too large");
      }
    }
    if (token.kind == Token::Name) {
      ++index_;
      if (token.text == "true" || token.text == "True")
        return node(Expr::Literal, {}, "", Json(true));
      if (token.text == "false" || token.text == "False")
        return node(Expr::Literal, {}, "", Json(false));
      if (token.text == "none" || token.text == "None")
        return node(Expr::Literal, {}, "", Json());
      if (acceptOperator("(")) {
        if (token.text != "raise_exception")
          fail("the function '" + token.text + "' is not implemented");
        std::vector<ExprPtr> arguments = callArguments();
        return node(Expr::Call, std::move(arguments), token.text);
      }
      return node(Expr::Name, {}, token.text);
    }
    if (acceptOperator("(")) {
      ExprPtr inner = expression();
      if (acceptOperator(","))
        fail("tuples are not implemented");
      expectOperator(")");
      return inner;
    }
    if (acceptOperator("[")) {
      std::vector<ExprPtr> items;
      if (!acceptOperator("]")) {
        do
          items.push_back(expression());
        while (acceptOperator(","));
        expectOperator("]");
      }
      return node(Expr::List, std::move(items));
    }
    if (acceptOperator("{")) {
      // Keys and values alternate in the operands.
      std::vector<ExprPtr> entries;
      if (!acceptOperator("}")) {
        do {
          entries.push_back(expression());
          expectOperator(":");
          entries.push_back(expression());
        } while (acceptOperator(","));
        expectOperator("}");
      }
      return node(Expr::Dict, std::move(entries));
    }
    fail(token.kind == Token::End ? "an expression is missing"
                                  : "unexpected '" + token.text + "'");
  }
  std::vector<ExprPtr> callArguments() {
    std::vector<ExprPtr> arguments;
    if (acceptOperator(")"))
      return arguments;
    do {
      if (peek().kind == Token::Name && tokens_[index_ + 1].text == "=")
        fail("keyword arguments are not implemented");
      arguments.push_back(expression());
    } while (acceptOperator(","));
    expectOperator(")");
    return arguments;
  }
  ExprPtr postfix(ExprPtr value) {
    while (true) {
      if (acceptOperator(".")) {
        std::string attribute = name();
        if (acceptOperator("(")) {
          if (!kMethods.count(attribute))
            fail("the method '" + attribute + "' is not implemented");
          std::vector<ExprPtr> operands = {value};
          for (ExprPtr &argument : callArguments())
            operands.push_back(argument);
          value = node(Expr::Method, std::move(operands), attribute);
        } else {
          value = node(Expr::Attribute, {value}, attribute);
        }
      } else if (acceptOperator("[")) {
        ExprPtr none = node(Expr::Literal, {}, "", Json());
        ExprPtr first = peek().text == ":" ? none : expression();
        if (acceptOperator(":")) {
          ExprPtr last = peek().text == "]" ? none : expression();
          if (peek().text == ":")
            fail("slices with a step are not implemented");
          expectOperator("]");
          value = node(Expr::Slice, {value, first, last});
        } else {
          expectOperator("]");
          value = node(Expr::Item, {value, first});
        }
      } else if (peek().kind == Token::Operator && peek().text == "(") {
        fail("only raise_exception and string methods can be called");
      } else {
        return value;
      }
    }
  }
  ExprPtr filters(ExprPtr value) {
    while (true) {
      if (acceptOperator("|")) {
        std::string filter = name();
        if (!kFilters.count(filter))
          fail("the filter '" + filter + "' is not implemented");
        if (acceptOperator("("))
          fail("arguments to the filter '" + filter + "' are not implemented");
        value = node(Expr::Filter, {value}, filter);
      } else if (acceptName("is")) {
        bool negated = acceptName("not");
        std::string test = name();
        if (!kTests.count(test))
          fail("the test '" + test + "' is not implemented");
        auto tested = std::make_shared<Expr>(*node(Expr::Test, {value}, test));
        tested->negated = negated;
        value = tested;
      } else {
        return value;
      }
    }
  }

  std::vector<Token> tokens_;
  size_t index_ = 0;
  std::string where_;
  int line_;
  int depth_ = 0;
};

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

struct Node {
  enum Kind { Text, Output, If, For, Set } kind;
  Node(Kind kind, int line, std::string text = "")
      : kind(kind), line(line), text(std::move(text)) {}
  int line = 0;
  std::string text; // Text; the variable of For and Set
  ExprPtr value;    // Output, For's sequence, Set's value
  std::vector<std::pair<ExprPtr, std::vector<Node>>> branches; // If
  std::vector<Node> body;                                      // For, If's else
};

class TemplateParser {
public:
  TemplateParser(std::vector<Piece> pieces, std::string where)
      : pieces_(std::move(pieces)), where_(std::move(where)) {}

  std::vector<Node> parse() {
    std::string end;
    std::vector<Node> nodes = block({}, end);
    return nodes;
  }

private:
  /// Nodes up to a statement whose keyword is in `ends` (stored in `end`),
  /// or to the end of the template when `ends` is empty.
  std::vector<Node> block(const std::set<std::string> &ends, std::string &end) {
    if (++depth_ > kMaxDepth)
      fail(pieces_[index_ - 1].line,
           "blocks nest deeper than " + std::to_string(kMaxDepth));
    std::vector<Node> nodes;
    while (index_ < pieces_.size()) {
      const Piece &piece = pieces_[index_++];
      if (piece.kind == Piece::Text) {
        nodes.emplace_back(Node::Text, piece.line, piece.text);
        continue;
      }
      ExpressionParser parser(tokenize(piece.text, where_, piece.line), where_,
                              piece.line);
      if (piece.kind == Piece::Expression) {
        Node node{Node::Output, piece.line};
        node.value = parser.expression();
        parser.expectEnd();
        nodes.push_back(std::move(node));
        continue;
      }
      std::string keyword = parser.atEnd() ? "" : parser.name();
      if (ends.count(keyword)) {
        end = keyword;
        current_ = std::move(parser);
        --depth_;
        return nodes;
      }
      if (keyword == "if") {
        Node node{Node::If, piece.line};
        ExprPtr condition = parser.expression();
        parser.expectEnd();
        std::string next;
        while (true) {
          std::vector<Node> body = block({"elif", "else", "endif"}, next);
          node.branches.emplace_back(condition, std::move(body));
          if (next == "elif") {
            condition = current_->expression();
            current_->expectEnd();
            continue;
          }
          current_->expectEnd();
          if (next == "else") {
            node.body = block({"endif"}, next);
            current_->expectEnd();
          }
          break;
        }
        nodes.push_back(std::move(node));
      } else if (keyword == "for") {
        Node node{Node::For, piece.line};
        node.text = parser.name();
        if (parser.acceptOperator(","))
          parser.fail("unpacking several loop variables is not implemented");
        if (!parser.acceptName("in"))
          parser.fail("expected 'in' after the loop variable");
        node.value = parser.expression(/*conditional=*/false);
        if (!parser.atEnd())
          parser.fail("loop filters and recursive loops are not implemented");
        std::string next;
        node.body = block({"endfor", "else"}, next);
        if (next == "else")
          current_->fail("{% for %} ... {% else %} is not implemented");
        current_->expectEnd();
        nodes.push_back(std::move(node));
      } else if (keyword == "set") {
        Node node{Node::Set, piece.line};
        node.text = parser.name();
        if (parser.peek().text == ".")
          parser.fail("setting an attribute (namespace) is not implemented");
        parser.expectOperator("=");
        node.value = parser.expression();
        parser.expectEnd();
        nodes.push_back(std::move(node));
      } else if (keyword == "generation" || keyword == "endgeneration") {
        // transformers' marker of assistant text: renders as its body.
        parser.expectEnd();
      } else if (keyword.empty()) {
        parser.fail("an empty {% %} tag");
      } else if (keyword == "elif" || keyword == "else" ||
                 keyword.rfind("end", 0) == 0) {
        parser.fail("'" + keyword + "' without its opening statement");
      } else {
        parser.fail("the statement '" + keyword + "' is not implemented");
      }
    }
    if (!ends.empty())
      fail(pieces_.empty() ? 1 : pieces_.back().line,
           "the template ends inside a block (expected '" + *ends.rbegin() +
               "')");
    --depth_;
    return nodes;
  }

  [[noreturn]] void fail(int line, const std::string &problem) const {
    throw Error(where_ + ": line " + std::to_string(line) + ": " + problem);
  }

  std::vector<Piece> pieces_;
  size_t index_ = 0;
  std::string where_;
  int depth_ = 0;
  /// The parser of the statement that ended the last block.
  std::optional<ExpressionParser> current_;
};

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
  impl_->nodes = TemplateParser(cut(text, impl_->where), impl_->where).parse();
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
