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

usage: attention_bench.py CARRY"""
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


def main():
    carry = sys.argv[1]
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
