#!/usr/bin/env python3
"""GPT-2 124M trained for STEPS steps (GPT2_STEPS, default 50) on a stream
of batches, one process per system, all on this GPU in one run: Genesis's
bf16 AdamW train step (CARRY/gpt124/gpt.gplan, function train_step, run by
CARRY/bin/genesis-run) and a nanoGPT-style PyTorch GPT-2 (causal
scaled_dot_product_attention, GELU tanh, autocast bf16, fused AdamW, TF32
allowed as nanoGPT does) in eager mode and under torch.compile.

usage: gpt2_train_bench.py CARRY [OUT]

Same start: the parent draws the weights once (torch.manual_seed(0), nanoGPT's
init: normal std 0.02, c_proj weights 0.02/sqrt(2 L), zero biases, LayerNorm
1/0, lm_head tied to wte) and saves them as init.safetensors for Genesis
(Hugging Face GPT2Model names without "transformer.", Conv1D layout [in, out]:
the nn.Linear weights are transposed on export) and as init.pt for the PyTorch
children. Same AdamW: lr 3e-4 (Genesis: lr.safetensors), betas (0.9, 0.999),
eps 1e-8, weight decay 0.01 on 2-D parameters only. Same data: the bytes of
the Python standard library sources (ids < 256 of 50257); step i trains on 16
windows of 1025 tokens, starts drawn up front (STEPS x 16) from
np.random.default_rng(1234), ids = window[:, :-1], targets = window[:, 1:].
Genesis gets all batches at once (ids.npy, targets.npy [STEPS, 16, 1024],
genesis-run --batches: run r binds slice r); PyTorch copies batch i to the GPU
inside step i.

Measured per system: the loss of every step (shown at steps 1, 10, STEPS);
the step time, Genesis's as the mean of 20 CUDA-graph replays after the STEPS
runs (genesis-run --bench 20, last batch), PyTorch's as the median of CUDA
events around steps 11..STEPS (1-10: warm-up, compilation); tokens/s = 16384 /
step time; MFU = (6 N + 12 L S d) FLOPs/token (N parameters, L layers, S
sequence, d width) x tokens/s / 989 TFLOP/s (H100 SXM dense bf16); peak
memory, Genesis's arena plus persistent tensors (genesis-run's "peak"),
PyTorch's max_memory_allocated from the first step on (weights, gradients,
AdamW state, activations); torch.compile's first step wall time (a cold
compile: fresh inductor cache).

Loss agreement: the systems round bf16 GEMMs and reductions differently and
the differences compound over the steps, so the losses are not bit-equal; the
tolerance is 0.05 absolute on a loss falling from about 10.9 towards 3
(PyTorch eager and torch.compile differ from each other by amounts of this
order; their difference is printed as the reference). GPT2_BEFORE_PLAN=<plan>
adds a "Genesis before" row (an earlier compiler's plan, same inputs). The
table and per-step losses go to OUT/gpt2_train_bench.json, bars and loss
curves to OUT/gpt2_train_bench.png."""
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from safetensors.torch import save_file

from stdlib_corpus import stdlib_tokens

BATCH, SEQ, LAYERS, HEADS, WIDTH, VOCAB = 16, 1024, 12, 12, 768, 50257
STEPS = int(os.environ.get("GPT2_STEPS", "50"))
WARMUP = 10  # PyTorch steps left out of the timing
LR, BETAS, EPS, DECAY = 3e-4, (0.9, 0.999), 1e-8, 0.01
PEAK_FLOPS = 989e12
TOLERANCE = 0.05
TIMEOUT_S = 1800
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


def child(mode, tmp):
    """One PyTorch system (eager or compile) in its own process."""
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    ids = torch.from_numpy(np.load(os.path.join(tmp, "ids.npy"))).pin_memory()
    targets = torch.from_numpy(np.load(os.path.join(tmp, "targets.npy"))).pin_memory()
    model = GPT()
    model.load_state_dict(torch.load(os.path.join(tmp, "init.pt"), weights_only=True))
    model.cuda()
    params = list(model.parameters())  # the tied wte/lm_head once
    opt = torch.optim.AdamW([{"params": [p for p in params if p.dim() >= 2], "weight_decay": DECAY},
                             {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0}],
                            lr=LR, betas=BETAS, eps=EPS, fused=True)
    forward = torch.compile(model) if mode == "compile" else model

    def step(i):
        x = ids[i].to("cuda", non_blocking=True)
        y = targets[i].to("cuda", non_blocking=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = forward(x, y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss

    steps = ids.shape[0]
    warm = min(WARMUP, steps - 1)
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    losses, times, first_s = [], [], 0.0
    for i in range(steps):
        begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        wall = time.perf_counter()
        begin.record()
        loss = step(i)
        end.record()
        losses.append(loss.item())  # synchronizes
        if i == 0:
            first_s = time.perf_counter() - wall
        if i >= warm:
            end.synchronize()
            times.append(begin.elapsed_time(end))
    result = {"ms": float(np.median(times)), "peak": torch.cuda.max_memory_allocated(),
              "losses": losses, "first_step_s": first_s, "step_ms": times,
              "device": torch.cuda.get_device_name()}
    with open(os.path.join(tmp, f"result_{mode}.json"), "w") as f:
        json.dump(result, f)


def run_child(mode, tmp):
    env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=os.path.join(tmp, f"inductor_{mode}"))
    run = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", mode, tmp],
                         capture_output=True, text=True, env=env, timeout=TIMEOUT_S)
    if run.returncode != 0:
        raise RuntimeError((run.stderr or run.stdout).strip()[-1500:])
    with open(os.path.join(tmp, f"result_{mode}.json")) as f:
        return json.load(f)


def run_genesis(genesis_run, plan, tmp):
    args = [genesis_run, plan, "-f", "train_step",
            "-i", os.path.join(tmp, "ids.npy"), "-i", os.path.join(tmp, "targets.npy"),
            "--batches", "--repeat", str(STEPS),
            "--params", os.path.join(tmp, "init.safetensors"),
            "--params", os.path.join(tmp, "lr.safetensors"), "--bench", "20"]
    wall = time.perf_counter()
    run = subprocess.run(args, capture_output=True, text=True, timeout=TIMEOUT_S)
    wall = time.perf_counter() - wall
    if run.returncode != 0:
        raise RuntimeError(run.stderr.strip()[-1500:])
    out = run.stdout
    losses = {int(r): float(v) for r, v in re.findall(r"^run (\d+): loss = (\S+)", out, re.M)}
    bench = re.search(r"bench: ([0-9.]+) ms", out)
    peaks = re.findall(r"peak (\d+) B", out)
    if sorted(losses) != list(range(1, STEPS + 1)) or not bench or not peaks:
        raise RuntimeError("expected 'run R: loss = X' for R = 1.."
                           f"{STEPS}, 'bench: <ms> ms' and 'peak <bytes> B' in:\n{out[-1500:]}")
    return {"ms": float(bench.group(1)), "peak": int(peaks[-1]),
            "losses": [losses[r] for r in range(1, STEPS + 1)], "wall_s": wall}


def plot(rows, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not importable: no plot")
        return
    names = [r["system"] for r in rows]
    fig, axes = plt.subplots(1, 3, figsize=(16, 4.8))
    for ax, key, label, fmt in ((axes[0], "tokens_per_s", "tokens/s", "%.0f"),
                                (axes[1], "peak_gib", "peak memory (GiB)", "%.2f")):
        ax.bar_label(ax.bar(range(len(rows)), [r[key] for r in rows], color="C0"), fmt=fmt)
        ax.set_xticks(range(len(rows)), names, rotation=20, ha="right", fontsize=8)
        ax.set_title(label)
    for r in rows:
        axes[2].plot(range(1, len(r["losses"]) + 1), r["losses"], label=r["system"])
    axes[2].set_xlabel("step")
    axes[2].set_title("training loss")
    axes[2].legend(fontsize=8)
    fig.suptitle(f"GPT-2 124M train step, batch {BATCH}x{SEQ}, bf16, {STEPS} steps")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"plot: {path}")


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3])
        return 0
    if len(sys.argv) not in (2, 3):
        print(__doc__.split("\n\n")[1])
        return 2
    carry, out_dir = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "."
    genesis_run = os.path.join(carry, "bin", "genesis-run")
    systems = [("Genesis", os.path.join(carry, "gpt124", "gpt.gplan"))]
    if os.environ.get("GPT2_BEFORE_PLAN"):
        systems.append(("Genesis before", os.environ["GPT2_BEFORE_PLAN"]))
    systems += [("PyTorch eager", "eager"), ("torch.compile", "compile")]

    torch.manual_seed(0)
    model = GPT()
    params = sum(p.numel() for p in model.parameters())
    flops_per_token = 6 * params + 12 * LAYERS * SEQ * WIDTH
    tokens = stdlib_tokens()
    starts = np.random.default_rng(1234).integers(0, len(tokens) - SEQ, size=(STEPS, BATCH))
    windows = tokens[starts[..., None] + np.arange(SEQ + 1)]  # [STEPS, BATCH, SEQ + 1]
    print(f"GPT-2 {params / 1e6:.1f}M parameters, batch {BATCH}x{SEQ}, {STEPS} steps, "
          f"{flops_per_token / 1e6:.0f} MFLOP/token, {len(tokens):,} stream tokens", flush=True)

    rows = []
    device = None
    with tempfile.TemporaryDirectory() as tmp:
        np.save(os.path.join(tmp, "ids.npy"), np.ascontiguousarray(windows[..., :-1]))
        np.save(os.path.join(tmp, "targets.npy"), np.ascontiguousarray(windows[..., 1:]))
        save_file(hf_state(model), os.path.join(tmp, "init.safetensors"))
        save_file({"lr": torch.tensor(LR, dtype=torch.float32)}, os.path.join(tmp, "lr.safetensors"))
        torch.save(model.state_dict(), os.path.join(tmp, "init.pt"))
        del model
        for name, what in systems:
            try:
                if name.startswith("Genesis"):
                    result = run_genesis(genesis_run, what, tmp)
                else:
                    result = run_child(what, tmp)
                    device = device or result.get("device")
            except Exception as error:  # the other systems still run
                print(f"{name} failed: {error}", flush=True)
                continue
            rate = BATCH * SEQ / (result["ms"] * 1e-3)
            result.update(system=name, tokens_per_s=rate, mfu=rate * flops_per_token / PEAK_FLOPS,
                          peak_gib=result["peak"] / 2**30)
            rows.append(result)
            extra = (f", first step (compile) {result['first_step_s']:.1f} s"
                     if what == "compile" else "")
            print(f"{name}: {result['ms']:.2f} ms/step, {rate:,.0f} tokens/s, "
                  f"peak {result['peak_gib']:.2f} GiB, loss {result['losses'][0]:.4f} -> "
                  f"{result['losses'][-1]:.4f}{extra}", flush=True)

    check = sorted({s for s in (1, 10, STEPS) if s <= STEPS})
    lines = [f"GPT-2 124M train step, batch {BATCH}x{SEQ}, bf16, {STEPS} steps, "
             f"{device or 'GPU'}", "",
             "| system | ms/step | tokens/s | MFU | peak GiB | "
             + " | ".join(f"loss@{s}" for s in check) + " |",
             "| --- " * (5 + len(check)) + "|"]
    for r in rows:
        lines.append(f"| {r['system']} | {r['ms']:.2f} | {r['tokens_per_s']:,.0f} | {r['mfu']:.1%} | "
                     f"{r['peak_gib']:.2f} | "
                     + " | ".join(f"{r['losses'][s - 1]:.4f}" for s in check) + " |")
    lines.append("")

    def loss_diff(a, b):
        return max(abs(a["losses"][s - 1] - b["losses"][s - 1]) for s in check)
    ratios = []
    by_name = {r["system"]: r for r in rows}
    genesis = by_name.get("Genesis")
    steps_text = ", ".join(map(str, check))
    for r in rows:
        if genesis is None or r is genesis:
            continue
        diff = loss_diff(genesis, r)
        ratio = genesis["tokens_per_s"] / r["tokens_per_s"]
        ratios.append({"versus": r["system"], "tokens_per_s_ratio": ratio, "max_loss_diff": diff})
        lines.append(f"Genesis tokens/s / {r['system']} tokens/s: {ratio:.2f}x; max |loss diff| "
                     f"at steps {steps_text}: {diff:.4f} (tolerance {TOLERANCE}: "
                     f"{'ok' if diff <= TOLERANCE else 'OVER'})")
    if "PyTorch eager" in by_name and "torch.compile" in by_name:
        diff = loss_diff(by_name["PyTorch eager"], by_name["torch.compile"])
        lines.append(f"reference: PyTorch eager vs torch.compile max |loss diff| at steps "
                     f"{steps_text}: {diff:.4f}")
    if "torch.compile" in by_name:
        lines.append(f"torch.compile first step (cold compile): "
                     f"{by_name['torch.compile']['first_step_s']:.1f} s")

    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "gpt2_train_bench.json"), "w") as f:
        json.dump({"device": device, "steps": STEPS, "batch": BATCH, "seq": SEQ,
                   "parameters": params, "flops_per_token": flops_per_token,
                   "peak_flops": PEAK_FLOPS, "tolerance": TOLERANCE, "check_steps": check,
                   "rows": rows, "ratios": ratios, "table": "\n".join(lines)}, f, indent=1)
    print("\n" + "\n".join(lines), flush=True)
    if rows:
        try:
            plot(rows, os.path.join(out_dir, "gpt2_train_bench.png"))
        except Exception as error:  # the table is already out
            print(f"plot failed: {error}")
    return 0 if genesis else 1


if __name__ == "__main__":
    sys.exit(main())
