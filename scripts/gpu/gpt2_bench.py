#!/usr/bin/env python3
"""GPT-2 124M trained in bf16 on the GPU: Genesis's compiled AdamW train step
(gpt2-plan --precision=bf16, carried in CARRY/gpt124) next to Hugging Face's
GPT2LMHeadModel in PyTorch eager and torch.compile under autocast(bf16), in
one script: same batch (16 x 1024 tokens), same initial weights (drawn here
by transformers and given to Genesis under its Hugging Face names), same
AdamW (lr 3e-4, betas 0.9/0.999, eps 1e-8, weight decay 0.01 except 1-D
parameters).

The tokens are the bytes of this machine's Python standard library sources
(ids < 256 of GPT-2's 50257). Each system first trains STEPS steps on one
fixed batch from the same weights (the loss must fall; both start at the
same loss), then the step time is measured: Genesis by CUDA-graph replays
(genesis-run --bench), PyTorch by CUDA events around each step. tokens/s =
16384 / step time; MFU = 6 N + 12 L S d FLOPs per token (N parameters, L
layers, S sequence, d width; PaLM's count) x tokens/s / 989 TFLOP/s (H100
SXM dense bf16). Peak memory: Genesis's arena plus persistent tensors
(genesis-run's "peak"), PyTorch's max_memory_allocated over the steps
(weights, gradients, optimizer state and activations in both). With
GPT2_PROFILE=1 it prints Genesis's slowest steps instead of the PyTorch
rows. GPT2_BEFORE_PLAN=<plan> adds a row for that plan (an earlier
compiler's) with the same weights and batch, timed in the same run.
GPT2_GENESIS_ONLY=1 skips the PyTorch rows."""
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import torch
import torch.nn.functional as F
from safetensors.torch import save_file
from transformers import GPT2Config, GPT2LMHeadModel

from stdlib_corpus import stdlib_tokens

CARRY = sys.argv[1]
OUT = sys.argv[2] if len(sys.argv) > 2 else "."
GENESIS_RUN = os.path.join(CARRY, "bin", "genesis-run")
PLAN = os.path.join(CARRY, "gpt124", "gpt.gplan")
BATCH, SEQ, LAYERS, WIDTH, VOCAB = 16, 1024, 12, 768, 50257
STEPS = int(os.environ.get("GPT2_STEPS", "20"))
LR = 3e-4
PEAK_FLOPS = 989e12


def genesis_run(args, plan=PLAN):
    run = subprocess.run([GENESIS_RUN, plan, "-f", "train_step"] + args,
                         capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(run.stderr.strip()[-800:])
    return run.stdout


def main():
    torch.manual_seed(0)
    config = GPT2Config(n_layer=LAYERS, n_head=12, n_embd=WIDTH, vocab_size=VOCAB,
                        n_positions=SEQ, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
    model = GPT2LMHeadModel(config).cuda()
    params = sum(p.numel() for p in model.parameters())
    flops_per_token = 6 * params + 12 * LAYERS * SEQ * WIDTH
    tokens = stdlib_tokens()
    rng = np.random.default_rng(0)
    starts = rng.integers(0, len(tokens) - SEQ - 1, BATCH)
    window = np.stack([tokens[s:s + SEQ + 1] for s in starts])
    ids, targets = window[:, :-1].copy(), window[:, 1:].copy()
    print(f"GPT-2 {params / 1e6:.1f}M parameters, batch {BATCH}x{SEQ}, "
          f"{flops_per_token / 1e6:.0f} MFLOP/token", flush=True)

    rows = []  # (system, ms, peak bytes, first loss, last loss)
    with tempfile.TemporaryDirectory() as tmp:
        # Genesis binds Hugging Face's names without the "transformer." prefix
        # and ties lm_head to wte, as GPT2Model's state_dict has them.
        state = {k[len("transformer."):]: v.detach().float().contiguous().cpu()
                 for k, v in model.state_dict().items()
                 if k.startswith("transformer.") and not k.endswith((".attn.bias", ".attn.masked_bias"))}
        save_file(state, os.path.join(tmp, "init.safetensors"))
        save_file({"lr": torch.tensor(LR, dtype=torch.float32)}, os.path.join(tmp, "lr.safetensors"))
        np.save(os.path.join(tmp, "ids.npy"), ids)
        np.save(os.path.join(tmp, "targets.npy"), targets)
        common = ["-i", os.path.join(tmp, "ids.npy"), "-i", os.path.join(tmp, "targets.npy"),
                  "--params", os.path.join(tmp, "init.safetensors"),
                  "--params", os.path.join(tmp, "lr.safetensors")]
        try:
            first = float(re.search(r"loss: f32\[\] = \[([-0-9.e+na]+)\]",
                                    genesis_run(common)).group(1))
            out = genesis_run(common + ["--repeat", str(STEPS), "--bench", "10"])
            last = float(re.search(r"loss: f32\[\] = \[([-0-9.e+na]+)\]", out).group(1))
            ms = float(re.search(r"bench: ([0-9.]+) ms", out).group(1))
            peak = int(re.search(r"peak (\d+) B", out).group(1))
            rows.append(("Genesis (bf16 GEMMs)", ms, peak, first, last))
            if os.environ.get("GPT2_PROFILE"):
                # The 25 slowest steps of one profiled run, and each kind's total.
                profile = genesis_run(common + ["--bench", "1", "--profile"])
                with open(os.path.join(OUT, "gpt2-profile.txt"), "w") as f:
                    f.write(profile)  # every step, for a per-kernel look
                steps = re.findall(r"#\d+\s+([0-9.]+) ms\s+(\S+) (\S+)\s+@ (.*)", profile)
                kinds = {}
                for t, kind, what, _ in steps:
                    key = kind + " " + re.sub(r"\d+$", "", what)
                    kinds[key] = kinds.get(key, 0.0) + float(t)
                for key, t in sorted(kinds.items(), key=lambda kv: -kv[1])[:15]:
                    print(f"  total {t:8.2f} ms  {key}")
                for t, kind, what, where in sorted(steps, key=lambda s: -float(s[0]))[:25]:
                    print(f"  {float(t):8.3f} ms  {kind} {what}  @ {where}")
                return  # GPT2_PROFILE: Genesis's profile only
            print(f"Genesis: {ms:.2f} ms/step, loss {first:.4f} -> {last:.4f} "
                  f"after {STEPS} steps, peak {peak / 2**30:.2f} GiB", flush=True)
        except Exception as error:  # the PyTorch rows still print
            print(f"Genesis failed: {error}", flush=True)
        before = os.environ.get("GPT2_BEFORE_PLAN")
        if before:
            try:
                b_first = float(re.search(r"loss: f32\[\] = \[([-0-9.e+na]+)\]",
                                          genesis_run(common, before)).group(1))
                out = genesis_run(common + ["--repeat", str(STEPS), "--bench", "10"], before)
                b_last = float(re.search(r"loss: f32\[\] = \[([-0-9.e+na]+)\]", out).group(1))
                b_ms = float(re.search(r"bench: ([0-9.]+) ms", out).group(1))
                b_peak = int(re.search(r"peak (\d+) B", out).group(1))
                rows.append(("Genesis before (bf16 GEMMs)", b_ms, b_peak, b_first, b_last))
                print(f"Genesis before: {b_ms:.2f} ms/step, loss {b_first:.4f} -> {b_last:.4f}",
                      flush=True)
            except Exception as error:
                print(f"Genesis before failed: {error}", flush=True)
    if os.environ.get("GPT2_GENESIS_ONLY"):
        systems = []
    else:
        systems = [("PyTorch eager (autocast bf16)", False),
                   ("torch.compile (autocast bf16)", True)]
    init = {k: v.clone() for k, v in model.state_dict().items()}

    x, y = torch.from_numpy(ids).cuda(), torch.from_numpy(targets).cuda()
    for name, compiled in systems:
        model.load_state_dict(init)
        decay = [p for p in model.parameters() if p.dim() > 1]
        rest = [p for p in model.parameters() if p.dim() <= 1]
        opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01},
                                 {"params": rest, "weight_decay": 0.0}], lr=LR)
        forward = torch.compile(model) if compiled else model

        def step():
            opt.zero_grad(set_to_none=True)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logits = forward(x).logits
            loss = F.cross_entropy(logits.float().view(-1, VOCAB), y.view(-1))
            loss.backward()
            opt.step()
            return loss
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        losses = [step().item() for _ in range(STEPS)]
        times = []
        for _ in range(10):
            begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            begin.record()
            step()
            end.record()
            end.synchronize()
            times.append(begin.elapsed_time(end))
        ms = float(np.median(times))
        peak = torch.cuda.max_memory_allocated()
        rows.append((name, ms, peak, losses[0], losses[-1]))
        print(f"{name}: {ms:.2f} ms/step, loss {losses[0]:.4f} -> {losses[-1]:.4f}, "
              f"peak {peak / 2**30:.2f} GiB", flush=True)
        del opt, forward
        torch.cuda.empty_cache()

    print(f"\nGPT-2 124M train step, batch {BATCH}x{SEQ}, bf16, {torch.cuda.get_device_name()}")
    print("| system | ms/step | tokens/s | MFU | peak GiB | loss step 1 | "
          f"loss step {STEPS} |\n| --- | --- | --- | --- | --- | --- | --- |")
    for name, ms, peak, first, last in rows:
        rate = BATCH * SEQ / (ms * 1e-3)
        print(f"| {name} | {ms:.2f} | {rate:,.0f} | {rate * flops_per_token / PEAK_FLOPS:.1%} | "
              f"{peak / 2**30:.2f} | {first:.4f} | {last:.4f} |")
    if rows and rows[0][0].startswith("Genesis"):
        for name, ms, *_ in rows[1:]:
            print(f"Genesis / {name}: {ms / rows[0][1]:.2f}x")


if __name__ == "__main__":
    main()
