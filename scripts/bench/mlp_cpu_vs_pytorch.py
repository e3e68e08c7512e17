#!/usr/bin/env python3
"""The MLP training step on the CPU: Genesis's compiled plan against PyTorch.

Both run the same step in this one script with the same thread count: a
784-256-128-10 MLP, cross-entropy, AdamW (weight decay on the weights only),
batch 256, random data. The two alternate for ROUNDS rounds so that a change
in machine load hits both; prints each round's ratio, the median
milliseconds per step of each system over all rounds and the median ratio. PyTorch: Debian's python3-torch (apt-get install
python3-torch). Usage: scripts/bench/mlp_cpu_vs_pytorch.py [build/bin]

Both run with the same glibc malloc policy: mlp-train-step-bench sets it
itself (retainFreedMemory there), and this script for PyTorch. By default
glibc may return the freed top of the heap to the system after a step and
page-fault it back in during the next, which, depending on the heap's
layout, slowed either system by up to a quarter.
"""
import ctypes
import ctypes.util
import os
import subprocess
import sys
import time

import torch

BIN = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(__file__), "..", "..", "build", "bin")
THREADS = os.cpu_count()
BATCH, STEPS, WARMUP, ROUNDS = 256, 100, 20, 5


def retain_freed_memory():
    """retainFreedMemory of models/mlp/mlp_train_step_bench.cpp, here."""
    libc = ctypes.CDLL(ctypes.util.find_library("c"))
    m_trim_threshold, m_mmap_threshold = -1, -3  # <malloc.h>
    libc.mallopt(m_mmap_threshold, 32 << 20)
    libc.mallopt(m_trim_threshold, 64 << 20)


def torch_ms_per_step():
    torch.set_num_threads(THREADS)
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(),
                                torch.nn.Linear(256, 128), torch.nn.ReLU(),
                                torch.nn.Linear(128, 10))
    decay = [p for p in model.parameters() if p.dim() > 1]
    no_decay = [p for p in model.parameters() if p.dim() == 1]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01},
                                   {"params": no_decay, "weight_decay": 0.0}],
                                  lr=1e-3)
    images = torch.rand(BATCH, 784)
    labels = torch.randint(0, 10, (BATCH,))
    times = []
    for step in range(WARMUP + STEPS):
        start = time.perf_counter()
        optimizer.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(model(images), labels)
        loss.backward()
        optimizer.step()
        if step >= WARMUP:
            times.append((time.perf_counter() - start) * 1e3)
    times.sort()
    return times[len(times) // 2]


def genesis_ms_per_step():
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(THREADS))
    out = subprocess.run(
        [os.path.join(BIN, "mlp-train-step-bench"), f"--batch={BATCH}",
         f"--steps={STEPS}", f"--warmup={WARMUP}"],
        check=True, capture_output=True, text=True, env=env).stdout
    return float(out.split("genesis_ms_per_step")[1])


def main():
    retain_freed_memory()
    genesis, reference = [], []
    for round_ in range(ROUNDS):
        genesis.append(genesis_ms_per_step())
        reference.append(torch_ms_per_step())
        print(f"round {round_ + 1}: PyTorch {reference[-1]:.3f} ms, "
              f"Genesis {genesis[-1]:.3f} ms, ratio "
              f"{reference[-1] / genesis[-1]:.2f}x", flush=True)
    ratios = sorted(r / g for r, g in zip(reference, genesis))
    g, r = sorted(genesis)[ROUNDS // 2], sorted(reference)[ROUNDS // 2]
    print(f"MLP 784-256-128-10 train step (AdamW), batch {BATCH}, "
          f"{THREADS} threads, {ROUNDS} rounds of {STEPS} steps (medians)")
    print("| system | ms/step | samples/s |")
    print("| --- | --- | --- |")
    print(f"| PyTorch {torch.__version__} eager | {r:.3f} | {BATCH / r * 1e3:.0f} |")
    print(f"| Genesis CPU plan | {g:.3f} | {BATCH / g * 1e3:.0f} |")
    print(f"speedup of Genesis over PyTorch: {ratios[ROUNDS // 2]:.2f}x "
          f"(median of the rounds' ratios; range {ratios[0]:.2f}-{ratios[-1]:.2f})")


if __name__ == "__main__":
    main()
