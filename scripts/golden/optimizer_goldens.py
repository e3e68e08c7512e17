#!/usr/bin/env python3
"""Writes the PyTorch golden files of the optimizer tests.

A 784-32-10 MLP (torch.nn.Sequential(Linear, ReLU, Linear), the layout of
the Fashion-MNIST MLP with a narrower hidden layer so the files stay small)
gets seeded weights and a batch of 16 Fashion-MNIST test images; then three
training steps on that batch are taken with each optimizer configuration and
the loss of every step, the final weights and the final optimizer state are
saved. The C++ test (tests/unit/frontend/OptimTest.cpp) replays the same steps
with compile_train_step and compares; it does not need PyTorch.

Needs PyTorch (Debian: apt-get install python3-torch) and numpy.
Usage: scripts/golden/optimizer_goldens.py [output dir]
"""
import gzip
import os
import struct
import sys

import numpy as np
import torch

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(__file__), "..", "..", "tests", "data", "optim")
DATA = os.environ.get("GENESIS_FASHION_MNIST_DIR",
                      "/usr/share/datasets/fashion-mnist")
STEPS = 3
LR = 0.05

CONFIGS = {
    "sgd": dict(kind="sgd", lr=LR),
    "sgd_momentum": dict(kind="sgd", lr=LR, momentum=0.9, dampening=0.1,
                         weight_decay=1e-3),
    "sgd_nesterov": dict(kind="sgd", lr=LR, momentum=0.9, nesterov=True),
    "adam": dict(kind="adam", lr=1e-3, betas=(0.8, 0.99), weight_decay=1e-2),
    "adamw": dict(kind="adamw", lr=1e-3, weight_decay=0.1),
    "sgd_clip_norm": dict(kind="sgd", lr=LR, momentum=0.5, clip_norm=0.25),
}


def load_batch(count):
    with gzip.open(os.path.join(DATA, "t10k-images-idx3-ubyte.gz")) as f:
        f.read(16)
        images = np.frombuffer(f.read(count * 784), dtype=np.uint8)
    with gzip.open(os.path.join(DATA, "t10k-labels-idx1-ubyte.gz")) as f:
        f.read(8)
        labels = np.frombuffer(f.read(count), dtype=np.uint8)
    return (images.reshape(count, 784).astype(np.float32) / 255.0,
            labels.astype(np.int64))


def save_safetensors(path, tensors):
    header, blobs, offset = {}, [], 0
    for name, array in tensors.items():
        array = np.ascontiguousarray(array)
        dtype = {np.float32: "F32", np.int64: "I64"}[array.dtype.type]
        raw = array.tobytes()
        header[name] = {"dtype": dtype, "shape": list(array.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    import json
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def make_model(initial):
    model = torch.nn.Sequential(torch.nn.Linear(784, 32), torch.nn.ReLU(),
                                torch.nn.Linear(32, 10))
    model.load_state_dict({k: torch.from_numpy(v) for k, v in initial.items()})
    return model


def make_optimizer(config, model):
    kind = config["kind"]
    if kind == "sgd":
        return torch.optim.SGD(model.parameters(), lr=config["lr"],
                               momentum=config.get("momentum", 0.0),
                               dampening=config.get("dampening", 0.0),
                               weight_decay=config.get("weight_decay", 0.0),
                               nesterov=config.get("nesterov", False))
    cls = torch.optim.Adam if kind == "adam" else torch.optim.AdamW
    return cls(model.parameters(), lr=config["lr"],
               betas=config.get("betas", (0.9, 0.999)),
               weight_decay=config.get("weight_decay", 0.0))


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.default_rng(2026)
    bound0, bound2 = 1 / np.sqrt(784), 1 / np.sqrt(32)
    initial = {
        "0.weight": rng.uniform(-bound0, bound0, (32, 784)).astype(np.float32),
        "0.bias": rng.uniform(-bound0, bound0, (32,)).astype(np.float32),
        "2.weight": rng.uniform(-bound2, bound2, (10, 32)).astype(np.float32),
        "2.bias": rng.uniform(-bound2, bound2, (10,)).astype(np.float32),
    }
    images, labels = load_batch(16)
    save_safetensors(os.path.join(OUT, "initial.safetensors"),
                     dict(initial, images=images, labels=labels))
    for name, config in CONFIGS.items():
        model = make_model(initial)
        optimizer = make_optimizer(config, model)
        losses = []
        for _ in range(STEPS):
            optimizer.zero_grad()
            loss = torch.nn.functional.cross_entropy(
                model(torch.from_numpy(images)), torch.from_numpy(labels))
            loss.backward()
            if "clip_norm" in config:
                torch.nn.utils.clip_grad_norm_(model.parameters(),
                                               config["clip_norm"])
            optimizer.step()
            losses.append(loss.item())
        result = {k: v.detach().numpy() for k, v in model.state_dict().items()}
        result["losses"] = np.array(losses, dtype=np.float32)
        names = [k for k, _ in model.named_parameters()]
        for param, state in zip(names, optimizer.state.values()):
            for key, value in state.items():
                if key in ("momentum_buffer", "exp_avg", "exp_avg_sq") and value is not None:
                    result[f"{param}.{key}"] = value.numpy()
        save_safetensors(os.path.join(OUT, f"{name}.safetensors"), result)
        print(f"{name}: losses {losses}")


def schedules():
    """Learning rates of torch's schedulers over 20 steps (base lr 0.1)."""
    def trace(make):
        param = torch.nn.Parameter(torch.zeros(1))
        optimizer = torch.optim.SGD([param], lr=0.1)
        scheduler = make(optimizer)
        rates = []
        for _ in range(20):
            rates.append(optimizer.param_groups[0]["lr"])
            optimizer.step()
            scheduler.step()
        return np.array(rates, dtype=np.float32)
    sched = torch.optim.lr_scheduler
    save_safetensors(os.path.join(OUT, "schedules.safetensors"), {
        "step_lr": trace(lambda o: sched.StepLR(o, step_size=6, gamma=0.5)),
        "exponential_lr": trace(lambda o: sched.ExponentialLR(o, gamma=0.9)),
        "cosine_annealing_lr": trace(
            lambda o: sched.CosineAnnealingLR(o, T_max=15, eta_min=0.01)),
        "lambda_lr": trace(
            lambda o: sched.LambdaLR(o, lambda step: 1.0 / (1 + step))),
    })


if __name__ == "__main__":
    schedules()
    main()
