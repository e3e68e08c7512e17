#!/usr/bin/env python3
"""Batch-1 greedy decoding of a Qwen2.5-0.5B-shaped model (random weights) on
the GPU: Genesis's compiled prefill/decode plan with its static KV cache
(`genesis-generate --random=qwen2.5-0.5b --compile-only --target=cuda`,
carried as CARRY/qwen/generate.gplan or named by QWEN_PLAN, run by
genesis-generate-runtime) next
to Hugging Face transformers' generate() on the same weights, in one script.

The weights are drawn here by transformers (Qwen2ForCausalLM of the
published 0.5B configuration, seed 0, f32) and saved with save_pretrained;
Genesis binds that model.safetensors by Hugging Face's names. Both decode
greedily in f32 from the same prompt ids (the prompt's bytes: the plan uses
the byte tokenizer). Decode tokens/s: Genesis prints it (decode phase only);
for transformers, (time of NEW new tokens - time of 1 new token) / (NEW - 1),
CUDA-synchronised, median of 3. Also reports how many of the generated ids
agree (f32 on both sides; random weights make near-ties likely late).

QWEN_DTYPE=bf16 (or f16): the weights are drawn in f32, rounded to that type
and saved so (the plan must be compiled with the same --dtype); both systems
then decode from those 16-bit weights, transformers in that type. Both
sample only the byte tokenizer's 257 ids (transformers: suppress_tokens), so
their greedy ids compare one to one."""
import os
import re
import subprocess
import sys
import tempfile
import time

import torch
from transformers import Qwen2Config, Qwen2ForCausalLM

CARRY = sys.argv[1]
RUNTIME = os.path.join(CARRY, "bin", "genesis-generate-runtime")
PLAN = os.environ.get("QWEN_PLAN", os.path.join(CARRY, "qwen", "generate.gplan"))
NEW = int(os.environ.get("QWEN_NEW_TOKENS", "128"))
# QWEN_PROFILE=1: Genesis also decodes once with --profile (every step timed
# alone, without the CUDA graph) and prints its slowest steps.
PROFILE = os.environ.get("QWEN_PROFILE") == "1"
# QWEN_ARGS: more genesis-generate-runtime flags (e.g. --host-greedy).
EXTRA_ARGS = os.environ.get("QWEN_ARGS", "").split()
PROMPT = "def fibonacci(n):\n    "
DTYPE = os.environ.get("QWEN_DTYPE", "f32")
TORCH_DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}
SAMPLABLE = 257  # Genesis's byte tokenizer: 256 bytes and end-of-text


def hf_generate(model, ids, new_tokens):
    torch.cuda.synchronize()
    start = time.perf_counter()
    out = model.generate(ids, max_new_tokens=new_tokens, min_new_tokens=new_tokens,
                         do_sample=False, pad_token_id=0,
                         suppress_tokens=list(range(SAMPLABLE, model.config.vocab_size)))
    torch.cuda.synchronize()
    return time.perf_counter() - start, out[0, ids.shape[1]:].tolist()


def main():
    torch.manual_seed(0)
    config = Qwen2Config(vocab_size=151936, hidden_size=896, intermediate_size=4864,
                         num_hidden_layers=24, num_attention_heads=14, num_key_value_heads=2,
                         max_position_embeddings=32768, rope_theta=1e6, rms_norm_eps=1e-6,
                         tie_word_embeddings=True, use_sliding_window=False)
    model = Qwen2ForCausalLM(config).cuda().eval().to(TORCH_DTYPES[DTYPE])
    ids = torch.tensor([list(PROMPT.encode())], device="cuda")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        model.save_pretrained(tmp, safe_serialization=True)
        run = subprocess.run([RUNTIME, "--plan", PLAN, "--weights",
                              os.path.join(tmp, "model.safetensors"), "--prompt", PROMPT,
                              "--max-new-tokens", str(NEW), "--temperature", "0",
                              "--print-ids"] + EXTRA_ARGS,
                             capture_output=True, text=True, errors="replace")
        if PROFILE:
            profiled = subprocess.run(
                [RUNTIME, "--plan", PLAN, "--weights",
                 os.path.join(tmp, "model.safetensors"), "--prompt", PROMPT,
                 "--max-new-tokens", "16", "--temperature", "0", "--profile"] + EXTRA_ARGS,
                capture_output=True, text=True, errors="replace")
            print(profiled.stdout[-6000:], profiled.stderr[-3000:], flush=True)
    print(run.stdout[-1500:], run.stderr[-1500:], flush=True)
    match = re.search(r"decode: (\d+) tokens?, ([0-9.]+) tokens/s", run.stdout + run.stderr)
    if match:
        rows.append(("Genesis (static KV cache, CUDA graphs)", float(match.group(2))))
    with torch.no_grad():
        hf_generate(model, ids, 4)  # warm-up
        one = sorted(hf_generate(model, ids, 1)[0] for _ in range(3))[1]
        runs = [hf_generate(model, ids, NEW) for _ in range(3)]
        full = sorted(t for t, _ in runs)[1]
        rows.append((f"transformers generate ({DTYPE}, eager)", (NEW - 1) / (full - one)))
    hf_ids = runs[0][1]
    print(f"transformers' first 16 ids: {hf_ids[:16]}")
    ids_line = re.search(r"^ids: ([0-9 ]+)$", run.stderr, re.M)
    if ids_line:
        ours = [int(t) for t in ids_line.group(1).split()]
        same = next((i for i, (a, b) in enumerate(zip(ours, hf_ids)) if a != b),
                    min(len(ours), len(hf_ids)))
        print(f"Genesis's first 16 ids:      {ours[:16]}")
        print(f"greedy ids equal to transformers' ({DTYPE}): the first {same} of "
              f"{min(len(ours), len(hf_ids))}")
    print(f"\nQwen2.5-0.5B-shaped model, {DTYPE} weights, batch 1, greedy, {NEW} new tokens, "
          f"{torch.cuda.get_device_name()}")
    print("| system | decode tokens/s |\n| --- | --- |")
    for name, rate in rows:
        print(f"| {name} | {rate:,.1f} |")
    if len(rows) == 2:
        print(f"Genesis / transformers: {rows[0][1] / rows[1][1]:.2f}x")


if __name__ == "__main__":
    main()
