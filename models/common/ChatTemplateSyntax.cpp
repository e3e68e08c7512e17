//===- ChatTemplateSyntax.cpp - Chat templates parsed
//----------------------===//
//
// The template is cut into text and tags with jinja2's whitespace rules
// (the `-` modifiers, trim_blocks, lstrip_blocks) and the tags are parsed
// into a tree of statements and expressions by recursive descent with
// Jinja's precedence (or < and < not < comparisons and tests < ~ < + - < *
// % < unary - < filters and postfix).
//
//===----------------------------------------------------------------------===//

#include "models/common/ChatTemplateSyntax.h"
#include "models/common/Tokenizer.h"

#include "runtime/support/Error.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <set>

namespace genesis::text::chat {
namespace {

//===----------------------------------------------------------------------===//
// Cutting the source into text and tags
//===----------------------------------------------------------------------===//

struct Piece {
  enum Kind { Text, Expression, Statement } kind;
  std::string text;
  int line;
};

bool isBlank(char c) { return c == ' ' || c == '\t'; }
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

} // namespace

std::vector<Node> parseTemplate(const std::string &text,
                                const std::string &where) {
  return TemplateParser(cut(text, where), where).parse();
}

} // namespace genesis::text::chat
