#!/usr/bin/env python3
"""Batch-1 greedy decoding on the CPU: Genesis's generation plan against PyTorch.

Both decode a Qwen2.5-0.5B-shaped model (24 layers, width 896, 14 query heads
over 2 key/value heads, 151,936 ids, tied embeddings) with the same random f32
weights: genesis-generate draws them (--random=qwen2.5-0.5b, seed 0) and
writes model.safetensors, which this script loads into PyTorch. Both run
with the same thread count (every core), the same prompt (the byte
tokenizer's ids of PROMPT) and a static KV cache of MAX positions; PyTorch
decodes as gpt-fast writes it (a static cache written with index_copy_,
RoPE from a precomputed table, one decode call per token, in
torch.inference_mode; one-row products as torch.mv, its fastest form here),
with the attention written out (Debian's
python3-torch 1.13 has no scaled_dot_product_attention). Decode tokens/s:
the NEW - 1 tokens after the first, sampling included (genesis-generate's
own figure), alternating the two systems for ROUNDS rounds so that a change
in machine load hits both. Prints each round, the medians, the ratio and
how many greedy ids agree. PyTorch: Debian's python3-torch
(apt-get install python3-torch).

usage: scripts/bench/qwen_decode_cpu_vs_pytorch.py [build/bin] [work dir]
  (QWEN_CPU_NEW_TOKENS, default 32; QWEN_CPU_ROUNDS, default 3)
"""
import json
import os
import re
import statistics
import struct
import subprocess
import sys
import time

import numpy as np
import torch

BIN = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(__file__), "..", "..", "build", "bin")
WORK = sys.argv[2] if len(sys.argv) > 2 else "/tmp/genesis-qwen-cpu"
NEW = int(os.environ.get("QWEN_CPU_NEW_TOKENS", "32"))
ROUNDS = int(os.environ.get("QWEN_CPU_ROUNDS", "3"))
THREADS = os.cpu_count()
MAX = 512
# genesis-generate samples the byte tokenizer's ids (bytes and end-of-text)
# when the model's vocabulary is larger and no tokenizer comes with it.
SAMPLABLE = 257
PROMPT = "def fibonacci(n):"
LAYERS, HEADS, KV_HEADS, HEAD_DIM = 24, 14, 2, 64
EPS, THETA = 1e-6, 1e6


def progress(message):
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr,
          flush=True)


def compile_plan():
    plan = os.path.join(WORK, "generate.gplan")
    weights = os.path.join(WORK, "model.safetensors")
    if not (os.path.exists(plan) and os.path.exists(weights)):
        progress("genesis-generate --compile-only (draws 494M weights, ~1 min)")
        subprocess.run([os.path.join(BIN, "genesis-generate"),
                        "--random=qwen2.5-0.5b", "--compile-only",
                        "--target=cpu", "--dtype=f32", f"--max-len={MAX}",
                        "--out", WORK], check=True)
    return plan, weights


def genesis_round(plan, weights):
    """Decode tokens/s and the new ids of one genesis-generate run."""
    run = subprocess.run(
        [os.path.join(BIN, "genesis-generate"), "--plan", plan, "--weights",
         weights, "--prompt", PROMPT, f"--max-new-tokens={NEW}",
         "--temperature=0", "--print-ids"],
        check=True, capture_output=True, text=True)
    ids = [int(t) for t in re.search(r"ids: ([0-9 ]+)", run.stderr)
           .group(1).split()]
    rate = float(re.search(r"decode: \d+ tokens, ([0-9.]+) tokens/s",
                           run.stdout).group(1))
    return rate, ids


def load_safetensors(path):
    """The tensors of a safetensors file as torch tensors (read-only maps)."""
    with open(path, "rb") as f:
        size = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(size))
    data = np.memmap(path, dtype=np.uint8, mode="r", offset=8 + size)
    tensors = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        assert entry["dtype"] == "F32", (name, entry["dtype"])
        begin, end = entry["data_offsets"]
        array = np.frombuffer(data[begin:end], dtype=np.float32)
        tensors[name] = torch.from_numpy(array.reshape(entry["shape"]).copy())
    return tensors


class Decoder:
    """Qwen2 with a static cache, the attention written out."""

    def __init__(self, sd):
        self.sd = sd
        inv = 1.0 / (THETA ** (torch.arange(0, HEAD_DIM, 2).double() /
                               HEAD_DIM))
        freqs = torch.outer(torch.arange(MAX).double(), inv)
        emb = torch.cat([freqs, freqs], dim=-1)
        self.cos, self.sin = emb.cos().float(), emb.sin().float()
        self.k = torch.zeros(LAYERS, 1, KV_HEADS, MAX, HEAD_DIM)
        self.v = torch.zeros(LAYERS, 1, KV_HEADS, MAX, HEAD_DIM)
        self.mask = torch.tril(torch.ones(MAX, MAX, dtype=torch.bool))

    @staticmethod
    def linear(x, w, b=None):
        """F.linear, and torch.mv for one row: Debian's torch runs a one-row
        F.linear as a GEMM several times slower than its matrix-vector
        product."""
        if x.numel() != x.shape[-1]:
            return torch.nn.functional.linear(x, w, b)
        y = torch.mv(w, x.reshape(-1))
        return (y if b is None else y + b).view(*x.shape[:-1], -1)

    @staticmethod
    def norm(x, w):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS) * w

    def rope(self, x, pos):
        cos, sin = self.cos[pos], self.sin[pos]  # [S, D]
        half = HEAD_DIM // 2
        rotated = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
        return x * cos + rotated * sin

    def forward(self, ids, pos):
        """Logits after the last of `ids` [S] at positions `pos` [S]."""
        sd, s = self.sd, ids.shape[0]
        F = torch.nn.functional
        h = F.embedding(ids, sd["model.embed_tokens.weight"]).unsqueeze(0)
        mask = self.mask[pos].view(1, 1, s, MAX)
        for i in range(LAYERS):
            p = f"model.layers.{i}."
            x = self.norm(h, sd[p + "input_layernorm.weight"])

            def proj(name, heads):
                y = self.linear(x, sd[p + f"self_attn.{name}_proj.weight"],
                                sd[p + f"self_attn.{name}_proj.bias"])
                return y.view(1, s, heads, HEAD_DIM).transpose(1, 2)

            q = self.rope(proj("q", HEADS), pos)
            k = self.rope(proj("k", KV_HEADS), pos)
            v = proj("v", KV_HEADS)
            self.k[i].index_copy_(2, pos, k)
            self.v[i].index_copy_(2, pos, v)
            group = HEADS // KV_HEADS
            keys = self.k[i].repeat_interleave(group, dim=1)
            values = self.v[i].repeat_interleave(group, dim=1)
            scores = (q @ keys.transpose(-1, -2)) / HEAD_DIM ** 0.5
            scores = scores.masked_fill(~mask, float("-inf"))
            o = torch.softmax(scores, dim=-1) @ values
            o = o.transpose(1, 2).reshape(1, s, HEADS * HEAD_DIM)
            h = h + self.linear(o, sd[p + "self_attn.o_proj.weight"])
            x = self.norm(h, sd[p + "post_attention_layernorm.weight"])
            gate = self.linear(x, sd[p + "mlp.gate_proj.weight"])
            up = self.linear(x, sd[p + "mlp.up_proj.weight"])
            h = h + self.linear(F.silu(gate) * up,
                               sd[p + "mlp.down_proj.weight"])
        h = self.norm(h[:, -1], sd["model.norm.weight"])
        return self.linear(h, sd["model.embed_tokens.weight"])[0]


def torch_round(decoder):
    """Decode tokens/s (the NEW - 1 steps after the prefill's token, greedy
    argmax over the samplable ids included) and the new ids."""
    prompt = torch.tensor(list(PROMPT.encode()), dtype=torch.long)
    decoder.k.zero_()
    decoder.v.zero_()
    with torch.inference_mode():
        logits = decoder.forward(prompt, torch.arange(prompt.shape[0]))
        ids = [int(logits[:SAMPLABLE].argmax())]
        start = time.perf_counter()
        for step in range(NEW - 1):
            position = prompt.shape[0] + step
            logits = decoder.forward(torch.tensor([ids[-1]]),
                                     torch.tensor([position]))
            ids.append(int(logits[:SAMPLABLE].argmax()))
        seconds = time.perf_counter() - start
    return (NEW - 1) / seconds, ids


def main():
    os.makedirs(WORK, exist_ok=True)
    torch.set_num_threads(THREADS)
    plan, weights = compile_plan()
    progress("loading the weights into PyTorch")
    decoder = Decoder(load_safetensors(weights))
    genesis_rates, torch_rates = [], []
    for r in range(ROUNDS):
        started = time.time()
        rate, genesis_ids = genesis_round(plan, weights)
        genesis_rates.append(rate)
        rate, torch_ids = torch_round(decoder)
        torch_rates.append(rate)
        left = (time.time() - started) * (ROUNDS - r - 1)
        progress(f"round {r + 1}/{ROUNDS}: Genesis {genesis_rates[-1]:.2f}, "
                 f"PyTorch {torch_rates[-1]:.2f} tokens/s; ETA {left:.0f} s")
    same = 0
    while (same < min(len(genesis_ids), len(torch_ids))
           and genesis_ids[same] == torch_ids[same]):
        same += 1
    g, t = statistics.median(genesis_rates), statistics.median(torch_rates)
    print(f"Qwen2.5-0.5B shape, f32, batch 1, greedy, {NEW} new tokens, "
          f"cache {MAX}, {THREADS} threads, torch {torch.__version__}")
    print("| system | decode tokens/s (median of "
          f"{ROUNDS}) | rounds |")
    print("| --- | --- | --- |")
    print(f"| Genesis | {g:.2f} | "
          + ", ".join(f"{x:.2f}" for x in genesis_rates) + " |")
    print(f"| PyTorch | {t:.2f} | "
          + ", ".join(f"{x:.2f}" for x in torch_rates) + " |")
    print(f"Genesis / PyTorch: {g / t:.2f}x; greedy ids equal for the first "
          f"{same} of {len(genesis_ids)}")


if __name__ == "__main__":
    main()
