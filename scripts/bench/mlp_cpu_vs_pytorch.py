#!/usr/bin/env python3
"""The MLP training step on the CPU: Genesis's compiled plan against PyTorch.

Both run the same step in this one script, one after the other, with the same
thread count: a 784-256-128-10 MLP, cross-entropy, AdamW (weight decay on the
weights only), batch 256, random data. Prints the median milliseconds per
step of each and the ratio. PyTorch: Debian's python3-torch (apt-get install
python3-torch). Usage: scripts/bench/mlp_cpu_vs_pytorch.py [build/bin]
"""
import os
import subprocess
import sys
import time

import torch

BIN = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(__file__), "..", "..", "build", "bin")
THREADS = os.cpu_count()
BATCH, STEPS, WARMUP = 256, 200, 20


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
    genesis = genesis_ms_per_step()
    reference = torch_ms_per_step()
    print(f"MLP 784-256-128-10 train step (AdamW), batch {BATCH}, "
          f"{THREADS} threads, median of {STEPS} steps")
    print("| system | ms/step | samples/s |")
    print("| --- | --- | --- |")
    print(f"| PyTorch {torch.__version__} eager | {reference:.3f} | "
          f"{BATCH / reference * 1e3:.0f} |")
    print(f"| Genesis CPU plan | {genesis:.3f} | {BATCH / genesis * 1e3:.0f} |")
    print(f"speedup of Genesis over PyTorch: {reference / genesis:.2f}x")


if __name__ == "__main__":
    main()
