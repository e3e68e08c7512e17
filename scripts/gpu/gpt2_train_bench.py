#!/usr/bin/env python3
"""GPT-2 124M trained for STEPS steps (GPT2_STEPS, default 50) on a stream
of batches, one process per system, all on this GPU in one run: Genesis's
bf16 AdamW train step (CARRY/gpt124/gpt.gplan, function train_step, run by
CARRY/bin/genesis-run) and a nanoGPT-style PyTorch GPT-2 (causal
scaled_dot_product_attention, GELU tanh, autocast bf16, fused AdamW, TF32
allowed as nanoGPT does) in eager mode and under torch.compile.

usage: gpt2_train_bench.py CARRY [OUT]

Batch 16 x 1024. The weights follow nanoGPT's init (normal std 0.02, c_proj
weights 0.02/sqrt(2 L), zero biases, LayerNorm 1/0, lm_head tied to wte) and
reach Genesis with Hugging Face GPT2Model names without "transformer." in the
Conv1D layout [in, out] (the nn.Linear weights are transposed on export). The
method (same weights, AdamW and batches; timing, MFU, peak memory, loss
tolerance) is train_bench.py's; GPT2_BEFORE_PLAN=<plan> adds a "Genesis
before" row. The table goes to OUT/gpt2_train_bench.json, the plot to
OUT/gpt2_train_bench.png."""
import math
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

import train_bench

BATCH, SEQ, LAYERS, HEADS, WIDTH, VOCAB = 16, 1024, 12, 12, 768, 50257
CONV1D = ("attn.c_attn.weight", "attn.c_proj.weight", "mlp.c_fc.weight", "mlp.c_proj.weight")


class CausalSelfAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.c_attn = nn.Linear(WIDTH, 3 * WIDTH)
        self.c_proj = nn.Linear(WIDTH, WIDTH)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = (z.view(b, t, HEADS, c // HEADS).transpose(1, 2)
                   for z in self.c_attn(x).split(WIDTH, dim=2))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.c_proj(y.transpose(1, 2).contiguous().view(b, t, c))


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.c_fc = nn.Linear(WIDTH, 4 * WIDTH)
        self.gelu = nn.GELU(approximate="tanh")
        self.c_proj = nn.Linear(4 * WIDTH, WIDTH)

    def forward(self, x):
        return self.c_proj(self.gelu(self.c_fc(x)))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln_1, self.attn = nn.LayerNorm(WIDTH), CausalSelfAttention()
        self.ln_2, self.mlp = nn.LayerNorm(WIDTH), MLP()

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    """nanoGPT's GPT-2 (no dropout, LayerNorm with bias, vocab 50257)."""

    def __init__(self):
        super().__init__()
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(VOCAB, WIDTH), wpe=nn.Embedding(SEQ, WIDTH),
            h=nn.ModuleList([Block() for _ in range(LAYERS)]), ln_f=nn.LayerNorm(WIDTH)))
        self.lm_head = nn.Linear(WIDTH, VOCAB, bias=False)
        self.transformer.wte.weight = self.lm_head.weight  # tied
        self.apply(self._init_weights)
        for name, p in self.named_parameters():
            if name.endswith("c_proj.weight"):
                nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * LAYERS))

    @staticmethod
    def _init_weights(module):
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
        if isinstance(module, nn.Linear) and module.bias is not None:
            nn.init.zeros_(module.bias)

    def forward(self, idx, targets):
        pos = torch.arange(idx.shape[1], device=idx.device)
        x = self.transformer.wte(idx) + self.transformer.wpe(pos)
        for block in self.transformer.h:
            x = block(x)
        logits = self.lm_head(self.transformer.ln_f(x))
        return F.cross_entropy(logits.float().view(-1, VOCAB), targets.view(-1))


def hf_state(model):
    """GPT2Model's names and Conv1D layout; lm_head.weight is wte.weight."""
    state = {}
    for key, value in model.state_dict().items():
        if key.startswith("transformer."):
            name = key[len("transformer."):]
            value = value.detach().float()
            state[name] = (value.t() if name.endswith(CONV1D) else value).contiguous()
    return state


SPEC = train_bench.Spec(title="GPT-2 124M", key="gpt2", batch=BATCH, seq=SEQ, layers=LAYERS,
                        width=WIDTH, plan="gpt124/gpt.gplan", make_model=GPT, hf_state=hf_state)

if __name__ == "__main__":
    sys.exit(train_bench.main(SPEC, __doc__.split("\n\n")[1]))
