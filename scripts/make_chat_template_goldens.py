#!/usr/bin/env python3
"""Writes tests/data/chat/goldens.json: chat templates as Hub models ship
them in tokenizer_config.json, conversations, and the text jinja2 renders
for each, configured as transformers' apply_chat_template configures it
(ImmutableSandboxedEnvironment, trim_blocks, lstrip_blocks, its tojson and
raise_exception). ChatTemplateTest checks that Genesis renders the same.

usage: python3 scripts/make_chat_template_goldens.py (needs jinja2)
"""
import json
import os

import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment

QWEN25 = """{%- if tools %}
    {{- '<|im_start|>system\\n' }}
    {%- if messages[0]['role'] == 'system' %}
        {{- messages[0]['content'] }}
    {%- else %}
        {{- 'You are Qwen, created by Alibaba Cloud. You are a helpful assistant.' }}
    {%- endif %}
    {{- "\\n\\n# Tools\\n\\nYou may call one or more functions to assist with the user query.\\n\\nYou are provided with function signatures within <tools></tools> XML tags:\\n<tools>" }}
    {%- for tool in tools %}
        {{- "\\n" }}
        {{- tool | tojson }}
    {%- endfor %}
    {{- "\\n</tools>\\n\\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\\n<tool_call>\\n{\\"name\\": <function-name>, \\"arguments\\": <args-json-object>}\\n</tool_call><|im_end|>\\n" }}
{%- else %}
    {%- if messages[0]['role'] == 'system' %}
        {{- '<|im_start|>system\\n' + messages[0]['content'] + '<|im_end|>\\n' }}
    {%- else %}
        {{- '<|im_start|>system\\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\\n' }}
    {%- endif %}
{%- endif %}
{%- for message in messages %}
    {%- if (message.role == "user") or (message.role == "system" and not loop.first) or (message.role == "assistant" and not message.tool_calls) %}
        {{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>' + '\\n' }}
    {%- elif message.role == "assistant" %}
        {{- '<|im_start|>' + message.role }}
        {%- if message.content %}
            {{- '\\n' + message.content }}
        {%- endif %}
        {%- for tool_call in message.tool_calls %}
            {%- if tool_call.function is defined %}
                {%- set tool_call = tool_call.function %}
            {%- endif %}
            {{- '\\n<tool_call>\\n{"name": "' }}
            {{- tool_call.name }}
            {{- '", "arguments": ' }}
            {{- tool_call.arguments | tojson }}
            {{- '}\\n</tool_call>' }}
        {%- endfor %}
        {{- '<|im_end|>\\n' }}
    {%- elif message.role == "tool" %}
        {%- if (loop.index0 == 0) or (messages[loop.index0 - 1].role != "tool") %}
            {{- '<|im_start|>user' }}
        {%- endif %}
        {{- '\\n<tool_response>\\n' }}
        {{- message.content }}
        {{- '\\n</tool_response>' }}
        {%- if loop.last or (messages[loop.index0 + 1].role != "tool") %}
            {{- '<|im_end|>\\n' }}
        {%- endif %}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|im_start|>assistant\\n' }}
{%- endif %}
"""

QWEN2 = ("{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}"
         "{{ '<|im_start|>system\\nYou are a helpful assistant.<|im_end|>\\n' }}{% endif %}"
         "{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}"
         "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}")

MISTRAL = ("{{ bos_token }}{% for message in messages %}"
           "{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}"
           "{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}"
           "{% if message['role'] == 'user' %}{{ '[INST] ' + message['content'] + ' [/INST]' }}"
           "{% elif message['role'] == 'assistant' %}{{ message['content'] + eos_token}}"
           "{% else %}{{ raise_exception('Only user and assistant roles are supported!') }}{% endif %}{% endfor %}")

LLAMA2 = ("{% if messages[0]['role'] == 'system' %}{% set loop_messages = messages[1:] %}"
          "{% set system_message = messages[0]['content'] %}{% else %}{% set loop_messages = messages %}"
          "{% set system_message = false %}{% endif %}{% for message in loop_messages %}"
          "{% if loop.index0 == 0 and system_message != false %}"
          "{% set content = '<<SYS>>\\n' + system_message + '\\n<</SYS>>\\n\\n' + message['content'] %}"
          "{% else %}{% set content = message['content'] %}{% endif %}"
          "{% if message['role'] == 'user' %}{{ bos_token + '[INST] ' + content.strip() + ' [/INST]' }}"
          "{% elif message['role'] == 'assistant' %}{{ ' '  + content.strip() + ' ' + eos_token }}{% endif %}{% endfor %}")

# Whitespace without `-`: trim_blocks and lstrip_blocks decide the layout.
LAYOUT = """{% for message in messages %}
  {% if message.role == 'user' %}
    User: {{ message.content | trim }}
  {% else %}
    {{ message.role | upper }}: {{ message.content }}
  {% endif %}
{# a comment #}
{% endfor %}
{% if add_generation_prompt %}Assistant:{% endif %}
"""

EXPRESSIONS = ("{{ messages | length }}|{{ 'x' ~ 3 }}|{{ -2 % 3 }}|{{ 7 % -3 }}|{{ 'a' in 'cat' }}|"
               "{{ 'z' not in ['a', 'b'] }}|{{ [1, 2] + [3] }}|{{ none }}|{{ True }}|{{ messages[-1].role }}|"
               "{{ (messages | last).content }}|{{ (messages | first)['role'] }}|{{ x if false }}|"
               "{{ 'a' if true else 'b' }}|{{ messages[0].content.startswith('He') }}|"
               "{{ messages[0].content.endswith('!') }}|{{ '  pad  '.lstrip() }}.{{ '  pad  '.rstrip() }}.|"
               "{{ 'MiXeD' | lower }}{{ 'MiXeD' | upper }}|{{ messages[0].missing is defined }}|"
               "{{ messages[0].missing is not defined }}|{{ none is none }}|{{ 'ü' | length }}|"
               "{{ messages[0] is mapping }}|{{ messages is sequence }}|{{ 3 is number }}|{{ 'a' is string }}|"
               "{{ 2 * 3 - 1 }}|{{ 1 < 2 and 'b' >= 'a' }}|{{ not messages }}|{{ '' or 'fallback' }}|"
               "{{ messages[5] is defined }}|{{ 'abc'[1] }}|{{ 'abcdef'[1:3] }}|{{ messages[:1] | length }}|"
               "{% set n = 4 %}{% for m in messages %}{% set n = loop.index %}{{ loop.revindex }}{% endfor %}{{ n }}|"
               "{{ {'k': [1, true, none, 'v']} | tojson }}|{{ '\\u00e9\\t' | tojson }}|{# gone #}"
               "{{ 'h\\u00e9llo'[1] }}|{{ 'h\\u00e9llo'[:2] }}|{{ 'h\\u00e9llo'[-1] }}|{{ 'abc' | first }}"
               "{{ 'abc' | last }}|{{ none | trim }}|{{ 5 | upper }}|{{ '\\u00c9a' | lower }}|{{ 1 == 1 == 1 }}|"
               "{{ 1 < 2 < 2 }}|{{ [1, 'a', true, none] }}|{{ {'a': \"it's\"} }}|{{ '\\101\\012' }}|"
               "{{ 1 in {'a': 1} }}|{{ true is number }}|{{ '=' * 3 }}{{ 2 * 'ab' }}|{{ [0] * 2 }}|"
               "{{ 9223372036854775806 + 1 }}|{{ 'x' ~ 2 * 3 }}|{{ -7 % 2 }}|"
               "{% for x in [1, 2, 3] %}{{ loop.previtem }}:{{ loop.nextitem }};{% endfor %}|end")

# Windows line ends and a trailing newline, which jinja2 reads as \n and drops.
CRLF = "{% for m in messages %}\r\n{{ m.role }}: {{ m.content }}\r\n{% endfor %}\r\nend\r\n"

TEMPLATES = {"qwen2.5": QWEN25, "qwen2": QWEN2, "mistral": MISTRAL, "llama2": LLAMA2,
             "layout": LAYOUT, "expressions": EXPRESSIONS, "crlf": CRLF}

USER = [{"role": "user", "content": "Hello!"}]
SYSTEM = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hello!"}]
TURNS = [{"role": "user", "content": "Hello!"}, {"role": "assistant", "content": "Hi, how can I help?"},
         {"role": "user", "content": "  Tell me a joke.  "}]
SYSTEM_TURNS = [{"role": "system", "content": "Be brief."}] + TURNS
TOOLS = [{"role": "user", "content": "Weather in Paris?"},
         {"role": "assistant", "content": "",
          "tool_calls": [{"type": "function", "function": {"name": "weather", "arguments": {"city": "Paris", "days": 2}}}]},
         {"role": "tool", "content": "{\"sky\": \"clear\"}"},
         {"role": "tool", "content": "{\"wind\": 3}"},
         {"role": "system", "content": "Answer in French."},
         {"role": "assistant", "content": "Il fait beau."}]
TOOL_LIST = [{"type": "function", "function": {"name": "weather", "description": "Forecast",
              "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]
SPECIAL = {"bos_token": "<s>", "eos_token": "</s>"}

CASES = [
    ("qwen2.5", USER, True, {}), ("qwen2.5", SYSTEM, True, {}), ("qwen2.5", TURNS, True, {}),
    ("qwen2.5", SYSTEM_TURNS, False, {}), ("qwen2.5", TOOLS, True, {}),
    ("qwen2.5", USER, True, {"tools": TOOL_LIST}), ("qwen2.5", SYSTEM, False, {"tools": TOOL_LIST}),
    ("qwen2", USER, True, {}), ("qwen2", SYSTEM_TURNS, True, {}), ("qwen2", TURNS, False, {}),
    ("mistral", USER, False, SPECIAL), ("mistral", TURNS, False, SPECIAL),
    ("llama2", SYSTEM_TURNS, False, SPECIAL), ("llama2", TURNS, False, SPECIAL),
    ("layout", TURNS, True, {}), ("layout", SYSTEM, False, {}),
    ("expressions", SYSTEM_TURNS, True, {}), ("expressions", USER, False, {}),
    ("crlf", TURNS, False, {}),
]


def raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                      sort_keys=sort_keys)


def main():
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    cases = []
    for name, messages, add_generation_prompt, variables in CASES:
        text = env.from_string(TEMPLATES[name]).render(
            messages=messages, add_generation_prompt=add_generation_prompt, **variables)
        cases.append({"template": name, "messages": messages,
                      "add_generation_prompt": add_generation_prompt,
                      "variables": variables, "expected": text})
    out = os.path.join(os.path.dirname(__file__), "..", "tests", "data", "chat", "goldens.json")
    with open(out, "w") as f:
        json.dump({"generator": "jinja2 " + jinja2.__version__, "templates": TEMPLATES,
                   "cases": cases}, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print("wrote", os.path.normpath(out), len(cases), "cases")


if __name__ == "__main__":
    main()
