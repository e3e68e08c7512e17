//===- ChatTemplateSyntax.h - Chat templates parsed ---------------*- C++
//-*-===//
//
// Internal to ChatTemplate.cpp: the tree a chat template parses into, and
// the parser (ChatTemplateSyntax.cpp), kept apart from the interpreter.
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_MODELS_COMMON_CHATTEMPLATESYNTAX_H
#define GENESIS_MODELS_COMMON_CHATTEMPLATESYNTAX_H

#include <nlohmann/json.hpp>

#include <cctype>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace genesis::text::chat {

using Json = nlohmann::ordered_json;

/// Deeper nesting (of blocks or of expressions) is refused rather than
/// followed down the stack.
constexpr int kMaxDepth = 128;

/// Python's str.isspace for ASCII, as the whitespace rules and strip() use.
inline bool isSpace(char c) {
  return std::isspace(static_cast<unsigned char>(c));
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

/// Parses `text` (line ends already \n) with jinja2's whitespace rules;
/// throws genesis::Error naming `where`, the line and the construct for
/// anything outside the supported subset.
std::vector<Node> parseTemplate(const std::string &text,
                                const std::string &where);

} // namespace genesis::text::chat

#endif // GENESIS_MODELS_COMMON_CHATTEMPLATESYNTAX_H
