//===- ChatTemplateTest.cpp - tokenizer_config.json chat templates --------===//
//
// tests/data/chat/goldens.json holds chat templates as Hub models ship them
// (Qwen2.5-Instruct's with its tool calls, Qwen2's, Mistral's, Llama 2's,
// one laid out by trim_blocks and lstrip_blocks, one of expressions) and the
// text jinja2 renders for conversations, configured as transformers'
// apply_chat_template configures it (scripts/make_chat_template_goldens.py).
//
//===----------------------------------------------------------------------===//

#include "models/common/ChatTemplate.h"
#include "runtime/support/Error.h"
#include "tests/unit/TestSupport.h"

#include <gtest/gtest.h>

#include <functional>
#include <sstream>

using namespace genesis;
using namespace genesis::text;

namespace {

std::string errorOf(const std::function<void()> &body) {
  try {
    body();
  } catch (const Error &error) {
    return error.what();
  }
  return "";
}

std::string parseError(const std::string &source) {
  return errorOf([&] { ChatTemplate(source, "t"); });
}

std::string writeFile(const std::string &text) {
  return test::writeTempFile("genesis-tokenizer-config", text);
}

const nlohmann::ordered_json kUser =
    nlohmann::ordered_json::parse(R"([{"role": "user", "content": "Hi"}])");

} // namespace

TEST(ChatTemplate, RendersWhatJinja2Renders) {
  std::ifstream file(GENESIS_TEST_DATA_DIR "/chat/goldens.json");
  ASSERT_TRUE(file) << "missing tests/data/chat/goldens.json";
  nlohmann::ordered_json goldens = nlohmann::ordered_json::parse(file);
  ASSERT_GE(goldens["cases"].size(), 19u);
  for (const nlohmann::ordered_json &golden : goldens["cases"]) {
    std::string name = golden["template"].get<std::string>();
    SCOPED_TRACE(name + " " + golden["messages"].dump());
    ChatTemplate chat(goldens["templates"][name].get<std::string>(), name);
    EXPECT_EQ(chat.render(golden["messages"],
                          golden["add_generation_prompt"].get<bool>(),
                          golden["variables"]),
              golden["expected"].get<std::string>());
  }
}

TEST(ChatTemplate, TemplatesOutsideTheSubsetAreRefusedWhenRead) {
  const std::pair<const char *, const char *> cases[] = {
      {"{{ x | join(', ') }}",
       "t: line 1: the filter 'join' is not implemented"},
      {"{{ x | trim(1) }}", "t: line 1: arguments to the filter 'trim'"},
      {"{{ x | replace }}",
       "t: line 1: the filter 'replace' is not implemented"},
      {"{{ x is even }}", "t: line 1: the test 'even' is not implemented"},
      {"{% macro m() %}{% endmacro %}",
       "t: line 1: the statement 'macro' is not implemented"},
      {"{% set ns = namespace(a=1) %}",
       "t: line 1: the function 'namespace' is not implemented"},
      {"\n{% set ns.a = 1 %}", "t: line 2: setting an attribute"},
      {"{% for m in messages if m.role %}{% endfor %}",
       "loop filters and recursive loops are not implemented"},
      {"{% for k, v in d.items() %}{% endfor %}",
       "unpacking several loop variables is not implemented"},
      {"{{ x.items() }}", "the method 'items' is not implemented"},
      {"{{ strftime_now('%Y') }}", "the function 'strftime_now'"},
      {"{{ 1.5 }}", "floats are not implemented"},
      {"{{ 7 // 2 }}", "the operator '//' is not implemented"},
      {"a\n\n{% if x %}", "t: line 3: the template ends inside a block "
                          "(expected 'endif')"},
      {"{% endif %}", "'endif' without its opening statement"},
      {"{{ x", "t: line 1: '{{' is never closed by '}}'"},
      {"{{ 'abc }}", "t: line 1: '{{' is never closed by '}}'"},
      {"{{ x y }}", "t: line 1: unexpected 'y'"},
      {"{{ }}", "an expression is missing"},
      {"{{ a @ b }}", "unexpected character '@'"},
  };
  for (auto [source, error] : cases) {
    SCOPED_TRACE(source);
    std::string message = parseError(source);
    EXPECT_NE(message.find(error), std::string::npos) << message;
  }
  // Nesting is bounded, not followed down the stack: parentheses, and
  // chains of operators, which nest one level each.
  std::string deep(100000, '(');
  EXPECT_NE(parseError("{{ " + deep + " }}").find("nest deeper than 128"),
            std::string::npos);
  std::string chain = "1";
  for (int i = 0; i < 200000; ++i)
    chain += "+1";
  EXPECT_NE(parseError("{{ " + chain + " }}").find("nest deeper than 128"),
            std::string::npos);
  std::string blocks;
  for (int i = 0; i < 1000; ++i)
    blocks += "{% if x %}";
  EXPECT_NE(parseError(blocks).find("blocks nest deeper than 128"),
            std::string::npos);
}

TEST(ChatTemplate, RenderErrorsNameTheLine) {
  ChatTemplate mistral(
      "{% for message in messages %}\n"
      "{% if message.role != 'user' %}"
      "{{ raise_exception('Only user roles are supported!') }}{% endif %}"
      "{% endfor %}",
      "mistral");
  EXPECT_EQ(mistral.render(kUser, false), "");
  auto system =
      nlohmann::ordered_json::parse(R"([{"role": "system", "content": "S"}])");
  EXPECT_EQ(errorOf([&] { mistral.render(system, false); }),
            "mistral: line 2: the template raised an exception: Only user "
            "roles are supported!");
  ChatTemplate undefinedAttribute("{{ nothing.role }}", "u");
  EXPECT_EQ(errorOf([&] { undefinedAttribute.render(kUser, false); }),
            "u: line 1: the attribute 'role' of an undefined value");
  ChatTemplate badTypes("{{ messages + 'x' }}", "b");
  EXPECT_EQ(errorOf([&] { badTypes.render(kUser, false); }),
            "b: line 1: cannot apply '+' to a list and a string");
  ChatTemplate modulo("{{ 3 % 0 }}", "m");
  EXPECT_EQ(errorOf([&] { modulo.render(kUser, false); }),
            "m: line 1: integer modulo by zero");
  // 64-bit integers: overflow is an error (jinja2 has big integers), and
  // x % -1 is 0 even for the smallest x.
  for (const char *overflow :
       {"{{ 9223372036854775807 + 1 }}", "{{ -9223372036854775807 - 2 }}",
        "{{ 4611686018427387904 * 2 }}", "{{ -(-9223372036854775807 - 1) }}"})
    EXPECT_NE(errorOf([&] {
                ChatTemplate(overflow, "o").render(kUser, false);
              }).find("overflows 64 bits"),
              std::string::npos)
        << overflow;
  EXPECT_EQ(ChatTemplate("{{ (-9223372036854775807 - 1) % -1 }}", "m")
                .render(kUser, false),
            "0");
  // Jinja's precedence: + binds less tightly than ~, so 'x' ~ 1 + 2 adds a
  // number to a string (jinja2: TypeError).
  EXPECT_EQ(errorOf([] {
              ChatTemplate("{{ 'x' ~ 1 + 2 }}", "p").render(kUser, false);
            }),
            "p: line 1: cannot apply '+' to a string and a number");
  EXPECT_NE(errorOf([] {
              ChatTemplate("{{ 'ab' * 100000000 }}", "r").render(kUser, false);
            }).find("is longer than"),
            std::string::npos);
  EXPECT_NE(errorOf([] {
              ChatTemplate("{{ 'abc'[:x] }}", "s").render(kUser, false);
            }).find("a slice's bounds must be integers or none"),
            std::string::npos);
  // Bytes that are not UTF-8 (a message cut mid-character) are replaced in
  // tojson, never thrown past the caller.
  auto cut = nlohmann::ordered_json::array(
      {{{"role", "user"}, {"content", std::string("caf\xc3")}}});
  EXPECT_EQ(ChatTemplate("{{ messages[0].content | tojson }}", "j")
                .render(cut, false),
            "\"caf\xef\xbf\xbd\"");
}

TEST(ChatTemplate, TokenizerConfigs) {
  TokenizerConfig qwen = loadTokenizerConfig(writeFile(R"({
    "bos_token": null, "eos_token": "<|im_end|>",
    "chat_template": "{{ messages[0].content }}{{ eos_token }}"})"));
  ASSERT_TRUE(qwen.chatTemplate);
  EXPECT_EQ(qwen.chatTemplate->render(kUser, true, {{"eos_token", "E"}}),
            "HiE");
  EXPECT_FALSE(qwen.bosToken);
  EXPECT_EQ(qwen.eosToken, "<|im_end|>");
  // A list of named templates (the "default" one is the chat's), and
  // special tokens written as objects, as older tokenizers save them.
  TokenizerConfig named = loadTokenizerConfig(writeFile(R"({
    "bos_token": {"content": "<s>", "lstrip": false},
    "chat_template": [{"name": "tool_use", "template": "T"},
                      {"name": "default", "template": "D"}]})"));
  EXPECT_EQ(named.chatTemplate->render(kUser, false), "D");
  EXPECT_EQ(named.bosToken, "<s>");
  EXPECT_FALSE(loadTokenizerConfig(writeFile("{}")).chatTemplate);

  auto configError = [](const std::string &text) {
    return errorOf([&] { loadTokenizerConfig(writeFile(text)); });
  };
  EXPECT_NE(configError(R"({"chat_template": 3})")
                .find("'chat_template' must be a string or a list"),
            std::string::npos);
  EXPECT_NE(configError(R"({"chat_template": [{"name": "x", "template": ""}]})")
                .find("'chat_template' is a list without a \"default\""),
            std::string::npos);
  EXPECT_NE(configError(R"({"eos_token": 7})").find("'eos_token' must be"),
            std::string::npos);
  std::string unsupported =
      configError(R"({"chat_template": "{% macro m() %}{% endmacro %}"})");
  EXPECT_NE(unsupported.find("tokenizer config '"), std::string::npos);
  EXPECT_NE(unsupported.find(": chat_template: line 1: the statement 'macro' "
                             "is not implemented"),
            std::string::npos)
      << unsupported;
  EXPECT_NE(configError("[1]").find("is not a JSON object"), std::string::npos);
}
