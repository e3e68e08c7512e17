#!/usr/bin/env python3
"""Writes the Hugging Face tokenizer goldens of the BPE tokenizer tests.

Trains two small byte-level BPE tokenizers with the Hugging Face `tokenizers`
library on the fixed text below and saves their tokenizer.json files:

  gpt2_style.json   GPT-2's form: pre_tokenizer ByteLevel with its built-in
                    regex, <|endoftext|> in the vocabulary and in added_tokens,
                    merges written as "a b" strings (as GPT-2's own file);
  qwen2_style.json  Qwen2's form: normalizer NFC, pre_tokenizer
                    Sequence[Split{Qwen2's regex}, ByteLevel{use_regex: false}],
                    the special tokens <|endoftext|>, <|im_start|>, <|im_end|>
                    added after the vocabulary, merges written as [a, b] pairs.

and one SentencePiece-style BPE tokenizer:

  llama_style.json  Llama 2's and Mistral's form: code points, not bytes;
                    normalizer Sequence[Prepend("▁"), Replace(" ", "▁")], no
                    pre-tokenizer, byte_fallback with the 256 <0xXX> tokens in
                    the vocabulary (a small alphabet, so that many characters
                    fall back to bytes), <unk> <s> </s> added, decoder
                    Sequence[Replace("▁", " "), ByteFallback, Fuse, Strip].

goldens.json then holds, for each case (a tokenizer file plus an optional JSON
merge patch, RFC 7386, applied to it before loading), the test strings, the
ids `tokenizers` encodes them to (add_special_tokens=False) and the text it
decodes those ids back to (skip_special_tokens=False). The C++ test
(tests/unit/models/TokenizerTest.cpp) applies the same patches and compares;
it does not need Python.

Needs `tokenizers` 0.23.3 from PyPI:
  /usr/bin/python3 -m venv /work/venv-tok
  /work/venv-tok/bin/pip install tokenizers==0.23.3
Usage: /work/venv-tok/bin/python scripts/golden/tokenizer_goldens.py [out dir]
"""
import copy
import json
import os
import sys

import tokenizers
from tokenizers import (Regex, Tokenizer, decoders, models, normalizers,
                        pre_tokenizers, processors, trainers)

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(__file__), "..", "..", "tests", "data", "tokenizer")
VOCAB_SIZE = 500

QWEN2_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|"
                 r"\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")

# Prose with contractions, digits, whitespace runs, newlines and a little of
# several scripts, so the merges cover more than ASCII letters.
TRAINING_TEXT = """\
The quick brown fox jumps over the lazy dog. It's the dog's day, isn't it?
I'm sure we'll see; they'd've known. You're right, we've got 12 apples and
3456 oranges in 2024 -- that's 3468 fruits, or 17.5% more than in 2023.
    Indented lines keep    their spaces,	tabs	and trailing blanks   
and blank lines:


def tokenize(text):
    return [word for word in text.split() if word]  # comment

Numbers: 0 1 2 3 4 5 6 7 8 9 10 100 1000 3.14159 2.71828 1e-6 0x1F 42nd.
Café, naïve, façade, Zürich, Ærøskøbing, señor, crème brûlée, déjà vu.
Привет, мир! Как дела? Всё хорошо, спасибо.
東京は日本の首都です。今日は良い天気ですね。
Γειά σου κόσμε. שלום עולם. مرحبا بالعالم.
नमस्ते दुनिया। 안녕하세요 세계.
Emoji: 👍 🎉 🚀 — and “quotes”, ‘single’, «guillemets», … ellipsis.
THE END? IT'S NOT. WE'LL SEE. They'RE here; I'D say so.
"""

TEST_TEXTS = [
    "",
    "Hello world",
    "The quick brown fox jumps over the lazy dog.",
    "I'm sure it's fine; we'll see, they'd've said.",
    "IT'S LOUD, WE'LL SEE, They'RE here",
    "In 2024, 1234567 apples cost $3.50 (17.5%).",
    "a   b\t\tc  \n\n  d   ",
    "line one\r\nline two\n\n\nline three\n",
    "   leading and trailing   ",
    "Café naïve Zürich crème brûlée",
    "cafe\u0301 and e\u0301te\u0301 decomposed",
    "東京は日本の首都です。",
    "Привет, мир!",
    "नमस्ते दुनिया",
    "👍🏽 🎉🚀 family: 👨‍👩‍👧",
    "x\u00a0y\u3000z\u2028w\x85v",
    "!!!!!!!!!!!!!!!!???...,,,;;;",
    "$hello -world _under_score ٣٤٥ ½ Ⅻ",
    "\x00\x01\x1f\x7f control",
    "<|im_start|>user\nHi there!<|im_end|>\n<|im_start|>assistant\n",
    "text<|endoftext|><|endoftext|>more <|im_start <|endoftext|",
    "def f(x):\n    return x ** 2  # square\n",
    "<s>Hello</s> world<unk>!",
    "\u2581already \u2581\u2581spaced\u2581",
    "<0x41> is not a byte token in text",
]


def merge_patch(target, patch):
    """RFC 7386 JSON merge patch, as nlohmann::json::merge_patch applies."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = copy.deepcopy(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def train_gpt2_style():
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.post_processor = processors.ByteLevel(trim_offsets=True)
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB_SIZE, special_tokens=["<|endoftext|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False)
    tokenizer.train_from_iterator(TRAINING_TEXT.splitlines(True), trainer)
    config = json.loads(tokenizer.to_str())
    # GPT-2's own tokenizer.json writes each merge as one "a b" string and
    # marks <|endoftext|> normalized.
    config["model"]["merges"] = [
        " ".join(pair) for pair in config["model"]["merges"]]
    config["added_tokens"][0]["normalized"] = True
    return config


def train_qwen2_style():
    tokenizer = Tokenizer(models.BPE())
    tokenizer.normalizer = normalizers.NFC()
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(QWEN2_PATTERN), behavior="isolated",
                             invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=False,
                                 use_regex=False),
    ])
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB_SIZE,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False)
    tokenizer.train_from_iterator(TRAINING_TEXT.splitlines(True), trainer)
    # As in Qwen2, the special tokens come after the BPE vocabulary.
    tokenizer.add_special_tokens(
        ["<|endoftext|>", "<|im_start|>", "<|im_end|>"])
    return json.loads(tokenizer.to_str())


def train_llama_style():
    tokenizer = Tokenizer(models.BPE(byte_fallback=True, unk_token="<unk>",
                                     fuse_unk=True))
    tokenizer.normalizer = normalizers.Sequence([
        normalizers.Prepend("\u2581"), normalizers.Replace(" ", "\u2581")])
    tokenizer.decoder = decoders.Sequence([
        decoders.Replace("\u2581", " "), decoders.ByteFallback(),
        decoders.Fuse(), decoders.Strip(" ", 1, 0)])
    byte_tokens = ["<0x%02X>" % byte for byte in range(256)]
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB_SIZE + 256,
        special_tokens=["<unk>", "<s>", "</s>"] + byte_tokens,
        limit_alphabet=80, show_progress=False)
    tokenizer.train_from_iterator(TRAINING_TEXT.splitlines(True), trainer)
    config = json.loads(tokenizer.to_str())
    # As in Llama's file, the byte tokens are in the vocabulary only.
    config["added_tokens"] = [token for token in config["added_tokens"]
                              if token["content"] not in byte_tokens]
    return config


METASPACE_SEQUENCE_DECODER = {
    "type": "Sequence", "decoders": [
        {"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "},
        {"type": "ByteFallback"}, {"type": "Fuse"},
        {"type": "Strip", "content": " ", "start": 1, "stop": 0}]}


def metaspace(scheme, split):
    return {"type": "Metaspace", "replacement": "\u2581",
            "prepend_scheme": scheme, "split": split}


# Variants of the files that exercise the loader's other options.
CASES = [
    ("gpt2", "gpt2_style.json", None),
    ("qwen2", "qwen2_style.json", None),
    ("gpt2_prefix_space", "gpt2_style.json",
     {"pre_tokenizer": {"add_prefix_space": True}}),
    ("qwen2_no_normalizer", "qwen2_style.json", {"normalizer": None}),
    # ByteLevel puts the space before every piece that the Split made.
    ("qwen2_prefix_space", "qwen2_style.json",
     {"pre_tokenizer": {"pretokenizers": [
         {"type": "Split", "pattern": {"Regex": QWEN2_PATTERN},
          "behavior": "Isolated", "invert": False},
         {"type": "ByteLevel", "add_prefix_space": True,
          "trim_offsets": False, "use_regex": False}]}}),
    ("qwen2_ignore_merges", "qwen2_style.json",
     {"model": {"ignore_merges": True}}),
    # A pattern with empty matches and gaps the pattern does not cover,
    # followed by ByteLevel's own regex.
    ("split_then_gpt2_regex", "qwen2_style.json",
     {"pre_tokenizer": {"pretokenizers": [
         {"type": "Split", "pattern": {"Regex": r"\d*"},
          "behavior": "Isolated", "invert": False},
         {"type": "ByteLevel", "add_prefix_space": False,
          "trim_offsets": False, "use_regex": True}]}}),
    ("split_on_string", "qwen2_style.json",
     {"pre_tokenizer": {"pretokenizers": [
         {"type": "Split", "pattern": {"String": "e"},
          "behavior": "Isolated", "invert": False},
         {"type": "ByteLevel", "add_prefix_space": False,
          "trim_offsets": False, "use_regex": False}]}}),
    ("llama", "llama_style.json", None),
    # Llama and Mistral files converted with legacy=false.
    ("llama_metaspace_first", "llama_style.json",
     {"normalizer": None, "pre_tokenizer": metaspace("first", False)}),
    ("metaspace_always_split", "llama_style.json",
     {"normalizer": None, "pre_tokenizer": metaspace("always", True),
      "decoder": metaspace("always", True)}),
    ("metaspace_never_split", "llama_style.json",
     {"normalizer": None, "pre_tokenizer": metaspace("never", True),
      "decoder": metaspace("never", True)}),
    ("llama_unknown_fused", "llama_style.json",
     {"model": {"byte_fallback": False}}),
    ("llama_unknown_unfused", "llama_style.json",
     {"model": {"byte_fallback": False, "fuse_unk": False}}),
    ("llama_no_unknown", "llama_style.json",
     {"model": {"byte_fallback": False, "unk_token": None}}),
    # An added token looked for in the normalised text, with the prefix the
    # normalizer puts before it. Its id follows the vocabulary (`tokenizers`
    # numbers added tokens so whatever the file says; main checks).
    ("llama_normalized_added_token", "llama_style.json",
     {"added_tokens": [
         {"id": 0, "content": "<unk>", "single_word": False, "lstrip": False,
          "rstrip": False, "normalized": False, "special": True},
         {"id": VOCAB_SIZE + 256, "content": "world", "single_word": False,
          "lstrip": False, "rstrip": False, "normalized": True,
          "special": False}]}),
]


def main():
    os.makedirs(OUT, exist_ok=True)
    files = {"gpt2_style.json": train_gpt2_style(),
             "qwen2_style.json": train_qwen2_style(),
             "llama_style.json": train_llama_style()}
    for name, config in files.items():
        with open(os.path.join(OUT, name), "w", encoding="utf-8") as f:
            json.dump(config, f, ensure_ascii=False, separators=(",", ":"))
            f.write("\n")

    cases = []
    for name, file, patch in CASES:
        config = files[file] if patch is None else merge_patch(files[file],
                                                               patch)
        tokenizer = Tokenizer.from_str(json.dumps(config))
        for token in config.get("added_tokens", []):
            assert tokenizer.token_to_id(token["content"]) == token["id"], name
        ids = [tokenizer.encode(text, add_special_tokens=False).ids
               for text in TEST_TEXTS]
        decoded = [tokenizer.decode(i, skip_special_tokens=False)
                   for i in ids]
        cases.append({"name": name, "file": file, "patch": patch,
                      "vocab_size": tokenizer.get_vocab_size(),
                      "ids": ids, "decoded": decoded})
    goldens = {"tokenizers_version": tokenizers.__version__,
               "texts": TEST_TEXTS, "cases": cases}
    with open(os.path.join(OUT, "goldens.json"), "w", encoding="utf-8") as f:
        json.dump(goldens, f, ensure_ascii=False, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main()
