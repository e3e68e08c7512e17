#!/usr/bin/env python3
"""Batched greedy decoding of a Qwen2.5-0.5B-shaped model with bf16 weights on
the GPU: Genesis's batched generation plans against the gpt-fast-style
PyTorch decoder of qwen_decode_torch.py under torch.compile(mode=
"reduce-overhead") (CUDA graphs), at each batch size, in one script.

The weights are drawn by transformers (Qwen2ForCausalLM of the published
0.5B configuration, seed 0), rounded to bf16 and saved; Genesis binds that
model.safetensors. Every sequence decodes the same prompt (the prompt's
bytes: the plans use the byte tokenizer), so PyTorch's decoder keeps one
position for all rows; Genesis still runs each row at its own position.
Throughput: new tokens of all sequences per second of the decode phase
(Genesis prints it for --batch-file; PyTorch: B x NEW tokens after a warm-up
of 8 steps, CUDA-synchronised). Memory: the plan's (genesis-run --memory:
weights, caches and temporaries, static) and PyTorch's
max_memory_allocated. Also counts, per batch, the rows whose greedy ids
equal Genesis's batch-1 ids for the first 16 tokens.

usage: qwen_decode_batch_bench.py CARRY B...
  CARRY/bin/genesis-generate-runtime, CARRY/bin/genesis-run, CARRY/lib and
  CARRY/qb<B>/generate.gplan for each B (genesis-generate
  --random=qwen2.5-0.5b --compile-only --target=cuda --dtype=bf16
  --max-len=1024 --batch B). QWEN_NEW_TOKENS (default 128)."""
import os
import re
import subprocess
import sys
import tempfile
import time

import torch
from transformers import Qwen2ForCausalLM

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import qwen_decode_torch  # noqa: E402

CARRY = sys.argv[1]
BATCHES = [int(b) for b in sys.argv[2:]]
RUNTIME = os.path.join(CARRY, "bin", "genesis-generate-runtime")
NEW = int(os.environ.get("QWEN_NEW_TOKENS", "128"))
qwen_decode_torch.NEW = NEW
# One line: --batch-file reads a prompt a line.
PROMPT = "def fibonacci(n): return"


def progress(message):
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def genesis(batch, weights, work):
    """Decode tokens/s of the batch, the plan's memory in GiB, each row's ids."""
    plan = os.path.join(CARRY, f"qb{batch}", "generate.gplan")
    prompts = os.path.join(work, f"prompts{batch}.txt")
    with open(prompts, "w") as f:
        f.write((PROMPT + "\n") * batch)
    run = subprocess.run([RUNTIME, "--plan", plan, "--weights", weights, "--batch-file",
                          prompts, "--max-new-tokens", str(NEW), "--temperature", "0",
                          "--print-ids"], capture_output=True, text=True, errors="replace")
    match = re.search(r"decode: \d+ tokens in [0-9.]+ s, ([0-9.]+) tokens/s", run.stdout)
    if not match:
        print(run.stdout[-2000:], run.stderr[-2000:], flush=True)
        return None, None, []
    ids = [[int(t) for t in m.group(1).split()]
           for m in re.finditer(r"^\[\d+\] ids: ([0-9 ]+)$", run.stderr, re.M)]
    memory = subprocess.run([os.path.join(CARRY, "bin", "genesis-run"), plan, "--memory"],
                            capture_output=True, text=True)
    found = re.search(r"\(cuda\): ([0-9.]+) (MiB|GiB)", memory.stdout + memory.stderr)
    if not found:
        print(memory.stdout[-1000:], memory.stderr[-1000:], flush=True)
    gib = (float(found.group(1)) / (1024 if found.group(2) == "MiB" else 1)
           if found else None)
    return float(match.group(1)), gib, ids


def main():
    torch.manual_seed(0)
    hf = Qwen2ForCausalLM(qwen_decode_torch.qwen2_5_0_5b_config()).eval().to(torch.bfloat16)
    rows = []
    with tempfile.TemporaryDirectory() as work:
        hf.save_pretrained(work, safe_serialization=True)
        weights = os.path.join(work, "model.safetensors")
        reference = None
        for i, batch in enumerate(BATCHES):
            progress(f"Genesis batch {batch} ({i + 1}/{len(BATCHES)})")
            rate, gib, ids = genesis(batch, weights, work)
            if reference is None and ids:
                reference = ids[0][:16]
            same = sum(1 for row in ids if row[:16] == reference)
            rows.append([batch, rate, gib, f"{same}/{len(ids)}"])
    hf = hf.float()
    prompt = list(PROMPT.encode())
    with torch.no_grad():
        for i, row in enumerate(rows):
            progress(f"torch.compile batch {row[0]} ({i + 1}/{len(rows)})")
            torch._dynamo.reset()
            torch.cuda.empty_cache()
            torch.cuda.reset_peak_memory_stats()
            decoder = qwen_decode_torch.Decoder(hf, torch.bfloat16, batch=row[0])
            step = torch.compile(decoder, mode="reduce-overhead", fullgraph=True)
            rate, _ = qwen_decode_torch.run(decoder, step, prompt)
            row += [rate, torch.cuda.max_memory_allocated() / 2**30]
            del decoder, step
    print(f"\nQwen2.5-0.5B-shaped model, bf16 weights and KV cache (1024 positions), greedy, "
          f"{NEW} new tokens a sequence, {torch.cuda.get_device_name()}")
    print("| batch | Genesis tokens/s | Genesis GiB | rows with batch 1's first 16 ids | "
          "torch.compile tokens/s | torch.compile GiB | Genesis / torch.compile |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for batch, rate, gib, same, torch_rate, torch_gib in rows:
        ratio = f"{rate / torch_rate:.2f}x" if rate else "-"
        print(f"| {batch} | {rate or 0:,.1f} | {gib or 0:.2f} | {same} | {torch_rate:,.1f} | "
              f"{torch_gib:.2f} | {ratio} |")


if __name__ == "__main__":
    main()
