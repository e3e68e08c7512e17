#!/usr/bin/env python3
"""Writes transformers' greedy generate() goldens for
tests/unit/models/GenerationTest.cpp: for each tiny Hugging Face model of
tests/data/hf (gpt2-tiny, qwen2-tiny, qwen2-tiny-v5), the new tokens that
`generate` picks after a fixed 3-token prompt, greedily, with
repetition_penalty 1.3 and without it (1.0), 12 new tokens, no EOS stop, the
weights widened to f32 and run on the CPU. Output: OUT/<model>/generate.json
({"prompt", "cases": [{"repetition_penalty", "new_tokens"}],
"transformers_version"}); copy each into tests/data/hf/<model>/.

Run on the GPU machine, whose PyTorch carries transformers 5.x:
  python3 scripts/golden/hf_generate.py $OUT
"""
import json
import os
import sys

import torch
import transformers
from transformers import AutoModelForCausalLM

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "..", "tests", "data", "hf")
NEW_TOKENS = 12


def main():
    out = sys.argv[1]
    for name in ("gpt2-tiny", "qwen2-tiny", "qwen2-tiny-v5"):
        model = AutoModelForCausalLM.from_pretrained(
            os.path.join(DATA, name), torch_dtype=torch.float32,
            attn_implementation="eager").eval()
        vocab = model.config.vocab_size
        # The same prompt as the test's someTokens(3, vocab).
        prompt = [(37 * i + 11) % vocab for i in range(3)]
        cases = []
        for penalty in (1.3, 1.0):
            with torch.no_grad():
                ids = model.generate(
                    torch.tensor([prompt]), max_new_tokens=NEW_TOKENS,
                    min_new_tokens=NEW_TOKENS, do_sample=False,
                    repetition_penalty=penalty, eos_token_id=None,
                    pad_token_id=0)
            cases.append({"repetition_penalty": penalty,
                          "new_tokens": ids[0, len(prompt):].tolist()})
        os.makedirs(os.path.join(out, name), exist_ok=True)
        with open(os.path.join(out, name, "generate.json"), "w") as f:
            json.dump({"prompt": prompt, "cases": cases,
                       "transformers_version": transformers.__version__}, f)
            f.write("\n")
        print(name, json.dumps(cases))


if __name__ == "__main__":
    main()
