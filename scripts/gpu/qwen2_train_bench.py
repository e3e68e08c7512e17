#!/usr/bin/env python3
"""A Qwen2.5-0.5B-shaped model (24 layers, width 896, 14 query heads over 2
key/value heads, SwiGLU 4864, vocabulary 151936, tied embedding, RoPE theta
1e6) trained for STEPS steps (QWEN2_STEPS, default 50) on a stream of
batches, one process per system, all on this GPU in one run: Genesis's bf16
AdamW train step (CARRY/qwen05-b<BATCH>/lm.gplan, function train_step, run by
CARRY/bin/genesis-run) and the same model in PyTorch as its experts write it
(torchtitan / gpt-fast style: F.rms_norm, RoPE from a precomputed table,
scaled_dot_product_attention with enable_gqa, autocast bf16, fused AdamW) in
eager mode and under torch.compile.

usage: qwen2_train_bench.py CARRY [OUT]

Batch QWEN2_BATCH (default 8) x 1024: the largest that both PyTorch systems
and Genesis fit on an 80 GB H100 (docs/performance.md). The weights follow
Hugging Face's Qwen2 init (normal std 0.02 for matrices and the embedding,
zero biases, unit norms) and reach Genesis with HF's Qwen2ForCausalLM names
(nn.Linear layout). The method (same weights, AdamW and batches; timing, MFU,
peak memory, loss tolerance) is train_bench.py's; QWEN2_BEFORE_PLAN=<plan>
adds a "Genesis before" row. The table goes to OUT/qwen2_train_bench.json,
the plot to OUT/qwen2_train_bench.png."""
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

import train_bench

BATCH, SEQ = int(os.environ.get("QWEN2_BATCH", "8")), 1024
LAYERS, WIDTH, HEADS, KV_HEADS, FFN, VOCAB = 24, 896, 14, 2, 4864, 151936
HEAD_DIM = WIDTH // HEADS
THETA, EPS = 1e6, 1e-6


def rotate_half(x):
    first, second = x.chunk(2, dim=-1)
    return torch.cat((-second, first), dim=-1)


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.q_proj = nn.Linear(WIDTH, HEADS * HEAD_DIM)
        self.k_proj = nn.Linear(WIDTH, KV_HEADS * HEAD_DIM)
        self.v_proj = nn.Linear(WIDTH, KV_HEADS * HEAD_DIM)
        self.o_proj = nn.Linear(HEADS * HEAD_DIM, WIDTH, bias=False)

    def forward(self, x, cos, sin):
        b, t, _ = x.shape
        q = self.q_proj(x).view(b, t, HEADS, HEAD_DIM).transpose(1, 2)
        k = self.k_proj(x).view(b, t, KV_HEADS, HEAD_DIM).transpose(1, 2)
        v = self.v_proj(x).view(b, t, KV_HEADS, HEAD_DIM).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        return self.o_proj(y.transpose(1, 2).reshape(b, t, HEADS * HEAD_DIM))


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.gate_proj = nn.Linear(WIDTH, FFN, bias=False)
        self.up_proj = nn.Linear(WIDTH, FFN, bias=False)
        self.down_proj = nn.Linear(FFN, WIDTH, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class RMSNorm(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(WIDTH))

    def forward(self, x):
        return F.rms_norm(x, (WIDTH,), self.weight, EPS)


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.input_layernorm, self.self_attn = RMSNorm(), Attention()
        self.post_attention_layernorm, self.mlp = RMSNorm(), MLP()

    def forward(self, x, cos, sin):
        x = x + self.self_attn(self.input_layernorm(x), cos, sin)
        return x + self.mlp(self.post_attention_layernorm(x))


class Qwen2(nn.Module):
    """HF's Qwen2ForCausalLM names: model.embed_tokens, model.layers.i.*,
    model.norm; lm_head tied to the embedding."""

    def __init__(self):
        super().__init__()
        self.model = nn.Module()
        self.model.embed_tokens = nn.Embedding(VOCAB, WIDTH)
        self.model.layers = nn.ModuleList([Layer() for _ in range(LAYERS)])
        self.model.norm = RMSNorm()
        self.lm_head = nn.Linear(WIDTH, VOCAB, bias=False)
        self.lm_head.weight = self.model.embed_tokens.weight  # tied
        for module in self.modules():
            if isinstance(module, (nn.Linear, nn.Embedding)):
                nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if isinstance(module, nn.Linear) and module.bias is not None:
                nn.init.zeros_(module.bias)
        inv_freq = 1.0 / THETA ** (torch.arange(0, HEAD_DIM, 2, dtype=torch.float32) / HEAD_DIM)
        angles = torch.outer(torch.arange(SEQ, dtype=torch.float32), inv_freq)
        angles = torch.cat((angles, angles), dim=-1)
        self.register_buffer("cos", angles.cos(), persistent=False)
        self.register_buffer("sin", angles.sin(), persistent=False)

    def forward(self, idx, targets):
        x = self.model.embed_tokens(idx)
        t = idx.shape[1]
        cos, sin = self.cos[:t].to(torch.bfloat16), self.sin[:t].to(torch.bfloat16)
        for layer in self.model.layers:
            x = layer(x, cos, sin)
        logits = self.lm_head(self.model.norm(x))
        return F.cross_entropy(logits.float().view(-1, VOCAB), targets.view(-1))


def hf_state(model):
    """Qwen2ForCausalLM's names; the tied lm_head.weight is not stored."""
    return {key: value.detach().float().contiguous()
            for key, value in model.state_dict().items() if key != "lm_head.weight"}


SPEC = train_bench.Spec(title="Qwen2.5-0.5B-shaped", key="qwen2", batch=BATCH, seq=SEQ,
                        layers=LAYERS, width=WIDTH, plan=f"qwen05-b{BATCH}/lm.gplan", make_model=Qwen2,
                        hf_state=hf_state)

if __name__ == "__main__":
    sys.exit(train_bench.main(SPEC, __doc__.split("\n\n")[1]))
