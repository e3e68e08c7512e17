#!/usr/bin/env python3
"""Attention forward and backward alone on the GPU: Genesis's fused attention
steps (cuDNN flash attention, CARRY/attention/attention.gplan compiled from
scripts/gpu/attention/attention.mlir with --precision=bf16) against
torch.nn.functional.scaled_dot_product_attention in bf16, in one script.

Shape: B16 H12 T1024 D64 causal (GPT-2 124M's). Genesis: `genesis-run
--bench 20 --profile` times each step between CUDA events; the two
attention steps are reported (the plan's f32 <-> bf16 casts are not
attention). PyTorch: each backend SDPA offers (flash, cuDNN, efficient),
forward alone and forward plus backward timed with CUDA events (mean of 50
after 10 warm-ups); the backward is their difference, the best backend is
the reference. FLOPs (FlashAttention's count): forward 4 B H T^2 D / 2
(causal), backward 2.5 times that.

With a second argument, the CUDA backend cases folder (build-carry.sh's
cases/), it also computes torch's SDPA on the inputs of the
FusedAttentionMixedPrecision cases, in their precision, and prints its
scaled error against the evaluator next to Genesis's (check_cases.py's
metric: max |got - want| / max(1, |want|)): the 16-bit error budget of
attention is what PyTorch's own attention shows.

usage: attention_bench.py CARRY [CASES]"""
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

B, H, T, D = 16, 12, 1024, 64
FORWARD_FLOPS = 4 * B * H * T * T * D / 2
BACKWARD_FLOPS = 2.5 * FORWARD_FLOPS


def cuda_ms(fn, warmup=10, iters=50):
    for _ in range(warmup):
        fn()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    start.record()
    for _ in range(iters):
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / iters


def torch_rows():
    rows = []
    gen = torch.Generator(device="cuda").manual_seed(0)
    q, k, v, g = (torch.randn(B, H, T, D, device="cuda", dtype=torch.bfloat16,
                              generator=gen) for _ in range(4))
    for backend in (SDPBackend.FLASH_ATTENTION, SDPBackend.CUDNN_ATTENTION,
                    SDPBackend.EFFICIENT_ATTENTION):
        qa, ka, va = (x.clone().requires_grad_() for x in (q, k, v))
        try:
            with sdpa_kernel(backend):
                fwd = cuda_ms(lambda: F.scaled_dot_product_attention(
                    qa, ka, va, is_causal=True))

                def both():
                    out = F.scaled_dot_product_attention(qa, ka, va, is_causal=True)
                    out.backward(g)
                total = cuda_ms(both)
        except RuntimeError as error:
            print(f"torch SDPA {backend.name}: not available ({str(error)[:80]})")
            continue
        rows.append((f"torch SDPA ({backend.name.lower()})", fwd, total - fwd))
    return rows


def genesis_row(carry):
    plan = os.path.join(carry, "attention", "attention.gplan")
    run_binary = os.path.join(carry, "bin", "genesis-run")
    with tempfile.TemporaryDirectory() as tmp:
        args = [run_binary, plan]
        rng = np.random.default_rng(0)
        for name in "qkvg":
            path = os.path.join(tmp, name + ".npy")
            np.save(path, rng.standard_normal((B, H, T, D), dtype=np.float32))
            args += ["-i", path]
        args += ["-o", os.path.join(tmp, "out.safetensors"), "--bench", "20",
                 "--profile"]
        run = subprocess.run(args, capture_output=True, text=True)
    if run.returncode != 0:
        print("genesis-run failed:", run.stderr.strip()[-600:])
        return None
    forward = backward = None
    for line in run.stdout.splitlines():
        match = re.search(r"([0-9.]+) ms\s+attention (backward )?", line)
        if match:
            if match.group(2):
                backward = float(match.group(1))
            else:
                forward = float(match.group(1))
    if forward is None or backward is None:
        print("no attention steps in the profile:\n" + run.stdout[-2000:])
        return None
    return ("Genesis (cuDNN fused attention step)", forward, backward)


def load_safetensors(path):
    from safetensors.torch import load_file
    return load_file(path)


def scaled_error(got, want):
    return ((got.double() - want.double()).abs()
            / want.double().abs().clamp(min=1)).max().item()


def torch_case_errors(cases, genesis_run):
    """torch SDPA's error on each fused attention case, in its precision."""
    rows = []
    for name in sorted(os.listdir(cases)):
        if not (name.startswith("FusedAttentionMixedPrecision") and name.endswith(".gplan")):
            continue
        stem = os.path.join(cases, name[:-len(".gplan")])
        budget = float(open(stem + ".tolerance").read())
        dtype = torch.bfloat16 if budget > 1e-2 else torch.float16
        ins = load_safetensors(stem + ".in.safetensors")
        want = load_safetensors(stem + ".want.safetensors")
        listing = subprocess.run([genesis_run, os.path.join(cases, name), "--inspect"],
                                 capture_output=True, text=True).stdout
        causal = re.search(r"#\d+ attention [^:]*causal", listing) is not None
        q, k, v, g = (ins[f"a{i}"].cuda().to(dtype) for i in range(4))
        q.requires_grad_(), k.requires_grad_(), v.requires_grad_()
        out = F.scaled_dot_product_attention(q, k, v, is_causal=False,
                                             attn_mask=causal_mask(q, k) if causal else None,
                                             scale=0.125, enable_gqa=True)
        out.backward(g)
        got = [out, q.grad, k.grad, v.grad]
        error = max(scaled_error(x.float().cpu(), want[f"r{i}"]) for i, x in enumerate(got))
        rows.append((name, str(dtype).replace("torch.", ""), error, budget))
    return rows


def causal_mask(q, k):
    """Query i sees keys j <= i + T - S (aligned to the last key)."""
    s, t = q.shape[2], k.shape[2]
    i = torch.arange(s, device=q.device)[:, None]
    j = torch.arange(t, device=q.device)[None, :]
    return j <= i + t - s


def main():
    carry = sys.argv[1]
    if len(sys.argv) > 2:
        print("\n| case | dtype | torch SDPA scaled error | budget |\n| --- | --- | --- | --- |")
        for name, dtype, error, budget in torch_case_errors(sys.argv[2], os.path.join(carry, "bin", "genesis-run")):
            print(f"| {name} | {dtype} | {error:.2e} | {budget:.0e} |")
    print(torch.cuda.get_device_name(), "torch", torch.__version__,
          "cuDNN", torch.backends.cudnn.version())
    rows = torch_rows()
    genesis = genesis_row(carry)
    best_fwd = min(r[1] for r in rows)
    best_bwd = min(r[2] for r in rows)
    if genesis:
        rows.append(genesis)
    print(f"\nAttention B{B} H{H} T{T} D{D} causal, bf16\n")
    print("| system | forward ms | forward TFLOP/s | backward ms | backward TFLOP/s "
          "| forward vs best torch | backward vs best torch |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for name, fwd, bwd in rows:
        print(f"| {name} | {fwd:.3f} | {FORWARD_FLOPS / fwd / 1e9:.0f} | {bwd:.3f} "
              f"| {BACKWARD_FLOPS / bwd / 1e9:.0f} | {best_fwd / fwd:.2f}x "
              f"| {best_bwd / bwd:.2f}x |")
    return 0 if genesis else 1


if __name__ == "__main__":
    sys.exit(main())
