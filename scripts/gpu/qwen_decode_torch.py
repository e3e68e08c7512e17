#!/usr/bin/env python3
"""Batch-1 greedy decoding of a Qwen2.5-0.5B-shaped model in PyTorch as
gpt-fast writes it: the weights of transformers' Qwen2ForCausalLM (the
published 0.5B configuration, seed 0, as qwen_decode_bench.py draws them), a
static KV cache [1, 2, MAX, 64] per layer written with index_copy_,
F.scaled_dot_product_attention over the whole cache with a boolean mask
(enable_gqa), RoPE from a precomputed table, one decode function called per
token with the position as a tensor; eager and under
torch.compile(mode="reduce-overhead", fullgraph=True) (CUDA graphs), in f32
and bf16. Decode tokens/s: NEW tokens after the prompt, CUDA-synchronised,
after a warm-up of 8 tokens (the compile). Prints a table.

usage: python3 qwen_decode_torch.py   (QWEN_NEW_TOKENS, default 128)"""
import os
import time

import torch
import torch.nn.functional as F
from transformers import Qwen2Config, Qwen2ForCausalLM

NEW = int(os.environ.get("QWEN_NEW_TOKENS", "128"))
MAX = 1024
THETA = 1e6  # rope_theta (transformers 5.x keeps it under rope_parameters)
PROMPT = "def fibonacci(n):\n    "


def qwen2_5_0_5b_config():
    """The published Qwen2.5-0.5B configuration, as transformers builds it."""
    return Qwen2Config(vocab_size=151936, hidden_size=896, intermediate_size=4864,
                       num_hidden_layers=24, num_attention_heads=14, num_key_value_heads=2,
                       max_position_embeddings=32768, rope_theta=THETA, rms_norm_eps=1e-6,
                       tie_word_embeddings=True, use_sliding_window=False)


class Decoder(torch.nn.Module):
    """The caches are module buffers, as gpt-fast keeps them, so that
    inductor's CUDA graphs accept their in-place updates."""

    def __init__(self, hf, dtype, batch=1):
        super().__init__()
        self.batch = batch
        c = hf.config
        self.heads, self.kv, self.dim = c.num_attention_heads, c.num_key_value_heads, c.hidden_size
        self.hd = self.dim // self.heads
        self.eps = c.rms_norm_eps
        sd = {k: v.detach().to("cuda", dtype) for k, v in hf.state_dict().items()}
        self.sd = sd
        self.layers = c.num_hidden_layers
        inv = 1.0 / (THETA ** (torch.arange(0, self.hd, 2, device="cuda").float() / self.hd))
        freqs = torch.outer(torch.arange(MAX, device="cuda").float(), inv)
        emb = torch.cat([freqs, freqs], dim=-1)
        self.cos, self.sin = emb.cos().to(dtype), emb.sin().to(dtype)
        shape = (self.layers, batch, self.kv, MAX, self.hd)
        self.register_buffer("k_cache", torch.zeros(shape, device="cuda", dtype=dtype))
        self.register_buffer("v_cache", torch.zeros(shape, device="cuda", dtype=dtype))
        self.mask = torch.tril(torch.ones(MAX, MAX, dtype=torch.bool, device="cuda"))

    def norm(self, x, w):
        return F.rms_norm(x, (x.shape[-1],), w, self.eps)

    def rope(self, x, pos):
        cos, sin = self.cos[pos].view(1, 1, 1, -1), self.sin[pos].view(1, 1, 1, -1)
        half = x.shape[-1] // 2
        rotated = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
        return x * cos + rotated * sin

    def forward(self, token, pos):
        sd = self.sd
        b = self.batch  # every sequence at position `pos`
        h = F.embedding(token, sd["model.embed_tokens.weight"])  # [b, 1, dim]
        mask = self.mask[pos].view(1, 1, 1, MAX)
        for i in range(self.layers):
            p = f"model.layers.{i}."
            r = self.norm(h, sd[p + "input_layernorm.weight"])
            q = F.linear(r, sd[p + "self_attn.q_proj.weight"], sd[p + "self_attn.q_proj.bias"])
            k = F.linear(r, sd[p + "self_attn.k_proj.weight"], sd[p + "self_attn.k_proj.bias"])
            v = F.linear(r, sd[p + "self_attn.v_proj.weight"], sd[p + "self_attn.v_proj.bias"])
            q = self.rope(q.view(b, 1, self.heads, self.hd).transpose(1, 2), pos)
            k = self.rope(k.view(b, 1, self.kv, self.hd).transpose(1, 2), pos)
            v = v.view(b, 1, self.kv, self.hd).transpose(1, 2)
            self.k_cache[i].index_copy_(2, pos, k)
            self.v_cache[i].index_copy_(2, pos, v)
            o = F.scaled_dot_product_attention(q, self.k_cache[i], self.v_cache[i], attn_mask=mask,
                                               enable_gqa=True)
            h = h + F.linear(o.transpose(1, 2).reshape(b, 1, self.dim), sd[p + "self_attn.o_proj.weight"])
            r = self.norm(h, sd[p + "post_attention_layernorm.weight"])
            gate = F.silu(F.linear(r, sd[p + "mlp.gate_proj.weight"]))
            h = h + F.linear(gate * F.linear(r, sd[p + "mlp.up_proj.weight"]), sd[p + "mlp.down_proj.weight"])
        h = self.norm(h, sd["model.norm.weight"])
        return F.linear(h, sd["model.embed_tokens.weight"]).argmax(-1)  # [b, 1]


def run(decoder, step, prompt):
    """Decode tokens/s of every sequence together (each decodes `prompt`)
    and the first sequence's first new ids."""
    decoder.k_cache.zero_()
    decoder.v_cache.zero_()
    token = None
    for i, t in enumerate(prompt):
        token = step(torch.full((decoder.batch, 1), t, device="cuda"),
                     torch.tensor([i], device="cuda")).clone()
    ids = []
    pos = len(prompt)
    # Warm-up (compilation, graph capture), then the timed tokens.
    for _ in range(8):
        token = step(token, torch.tensor([pos], device="cuda")).clone()
        ids.append(token[0].item())
        pos += 1
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(NEW):
        token = step(token, torch.tensor([pos], device="cuda")).clone()
        pos += 1
    torch.cuda.synchronize()
    return decoder.batch * NEW / (time.perf_counter() - start), ids


def main():
    torch.manual_seed(0)
    hf = Qwen2ForCausalLM(qwen2_5_0_5b_config()).eval()
    prompt = list(PROMPT.encode())
    rows = []
    with torch.no_grad():
        for dtype in (torch.float32, torch.bfloat16):
            decoder = Decoder(hf, dtype)
            for mode in ("eager", "compile"):
                step = decoder
                if mode == "compile":
                    torch._dynamo.reset()
                    step = torch.compile(decoder, mode="reduce-overhead", fullgraph=True)
                rate, ids = run(decoder, step, prompt)
                name = f"gpt-fast-style PyTorch, {str(dtype)[6:]}, {mode}"
                rows.append((name, rate))
                print(f"{name}: {rate:,.1f} tokens/s; first new ids {ids[:8]}", flush=True)
            del decoder
            torch.cuda.empty_cache()
    print(f"\nQwen2.5-0.5B-shaped model, batch 1, greedy, {NEW} new tokens, "
          f"{torch.cuda.get_device_name()}")
    print("| system | decode tokens/s |\n| --- | --- |")
    for name, rate in rows:
        print(f"| {name} | {rate:,.1f} |")


if __name__ == "__main__":
    main()
