#!/usr/bin/env python3
"""GPU benchmarks of Genesis cuda plans against PyTorch eager and
torch.compile, run side by side on the GPU machine.

For each plan in CARRY/bench (compiled on the build machine by
scripts/gpu/build-carry.sh) it draws random inputs with numpy, times
`genesis-run PLAN --bench N` (CUDA-graph replays on device-resident inputs,
mean wall time per run after warm-up) and the same computation in PyTorch
(CUDA events around 10 back-to-back calls, median of 15 samples after
warm-up). Memory-bound kernels report
achieved bandwidth (the fewest bytes: each input read once, each output
written once) over the measured device-to-device copy bandwidth. Prints a
markdown table last and writes bench.tsv and bench.png to OUT.

GENESIS_BEFORE=<carry> adds a column: the same rows' plans from another
carry folder (the same layout, compiled by an earlier compiler), timed in
the same run, so a compiler change is measured before and after on one
GPU."""
import json
import os
import re
import struct
import subprocess
import sys
import tempfile

import numpy as np
import torch
import torch.nn.functional as F

CARRY = sys.argv[1]
OUT = sys.argv[2] if len(sys.argv) > 2 else "."
GENESIS_RUN = os.path.join(CARRY, "bin", "genesis-run")
BENCH = os.path.join(CARRY, "bench")
DEV = "cuda"
rng = np.random.default_rng(0)
# BENCH_ROWS (a regular expression) keeps only the rows whose names match.
ONLY = re.compile(os.environ.get("BENCH_ROWS", ""))
BEFORE = os.environ.get("GENESIS_BEFORE")


def wanted(name):
    return bool(ONLY.search(name))


def cuda_time(fn, warmup=5, repeat=15, inner=10):
    """Milliseconds per fn() call: the median over `repeat` samples of
    `inner` back-to-back calls between CUDA events, so the host's launch
    overhead overlaps the device work as it does for Genesis's graph
    replays (timed the same way, `--bench` replays back to back)."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeat):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(inner):
            fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / inner)
    return float(np.median(times))


def copy_bandwidth():
    x = torch.empty(1 << 28, dtype=torch.float32, device=DEV)  # 1 GiB
    y = torch.empty_like(x)
    ms = cuda_time(lambda: y.copy_(x))
    return 2 * x.numel() * 4 / (ms * 1e-3)


def write_safetensors(path, tensors):
    """tensors: name -> (safetensors dtype, shape, raw bytes)."""
    header, offset = {}, 0
    for name, (dtype, shape, raw) in tensors.items():
        header[name] = {"dtype": dtype, "shape": list(shape),
                        "data_offsets": [offset, offset + len(raw)]}
        offset += len(raw)
    text = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        for _, _, raw in tensors.values():
            f.write(raw)


def genesis(plan, inputs, extra=(), bench=20, function=None):
    """Mean ms per replay and the peak device bytes genesis-run reports;
    inputs are numpy arrays (bound in order) or one safetensors path."""
    with tempfile.TemporaryDirectory() as tmp:
        args = [GENESIS_RUN, plan]
        if function:
            args += ["-f", function]
        for i, array in enumerate(inputs):
            if isinstance(array, str):
                args += ["-i", array]
                continue
            path = os.path.join(tmp, f"in{i}.npy")
            np.save(path, array)
            args += ["-i", path]
        args += list(extra) + ["-o", os.path.join(tmp, "out.safetensors"),
                               "--bench", str(bench)]
        run = subprocess.run(args, capture_output=True, text=True)
    if run.returncode != 0:
        print(f"genesis-run failed on {plan}: {run.stderr.strip()[-400:]}", flush=True)
        return float("nan"), 0
    ms = float(re.search(r"bench: ([0-9.]+) ms", run.stdout).group(1))
    peak = int(re.search(r"peak (\d+) B", run.stdout).group(1))
    return ms, peak


def torch_pair(fn, *args):
    eager = cuda_time(lambda: fn(*args))
    try:
        compiled_fn = torch.compile(fn)
        compiled = cuda_time(lambda: compiled_fn(*args))
    except Exception as error:  # report the rest even if one compile fails
        print(f"torch.compile failed: {error}", flush=True)
        compiled = float("nan")
    return eager, compiled


rows = []  # (name, genesis_ms, eager_ms, compile_ms, bytes or None, flops or None)
before_ms = {}  # name -> ms of the GENESIS_BEFORE carry's plan


def time_before(name, path, inputs, **kwargs):
    """Times `path` (relative to a carry folder) from GENESIS_BEFORE."""
    if BEFORE:
        before_ms[name], _ = genesis(os.path.join(BEFORE, path), inputs, **kwargs)


def before_init(folder):
    """The GENESIS_BEFORE carry's initial weights for `folder`, or this
    carry's when it has none (the same seed draws the same weights)."""
    path = os.path.join(BEFORE, folder, "init.safetensors")
    return path if os.path.exists(path) else os.path.join(CARRY, folder, "init.safetensors")


def memory_bound(name, plan, inputs, torch_fn, nbytes, compile=True, function=None):
    if not wanted(name):
        return
    ms, _ = genesis(os.path.join(BENCH, plan), inputs, function=function)
    time_before(name, os.path.join("bench", plan), inputs, function=function)
    args = [torch.from_numpy(a).to(DEV) for a in inputs]
    if compile:
        eager, compiled = torch_pair(torch_fn, *args)
    else:
        eager, compiled = cuda_time(lambda: torch_fn(*args)), None
    rows.append((name, ms, eager, compiled, nbytes, None))
    print(f"{name}: genesis {ms:.3f} ms, eager {eager:.3f}, compile {compiled}", flush=True)


# The tiny GPT of the GPT row, as scripts/gpu/build-carry.sh compiles it.
GPT = dict(layers=4, heads=4, width=256, vocab=4096, seq=256, batch=16)


class GptBlock(torch.nn.Module):
    """models/gpt2/Gpt2.cpp's block: pre-LN, fused qkv, causal attention,
    a 4x MLP with tanh GELU."""

    def __init__(self, width, heads):
        super().__init__()
        self.heads = heads
        self.ln_1, self.ln_2 = torch.nn.LayerNorm(width), torch.nn.LayerNorm(width)
        self.c_attn = torch.nn.Linear(width, 3 * width)
        self.attn_proj = torch.nn.Linear(width, width)
        self.c_fc = torch.nn.Linear(width, 4 * width)
        self.mlp_proj = torch.nn.Linear(4 * width, width)

    def forward(self, x):
        b, s, c = x.shape
        q, k, v = (t.view(b, s, self.heads, c // self.heads).transpose(1, 2)
                   for t in self.c_attn(self.ln_1(x)).split(c, dim=-1))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.attn_proj(y.transpose(1, 2).reshape(b, s, c))
        return x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))


class Gpt(torch.nn.Module):
    """Learned positions, a final LN, the LM head tied to the token embedding."""

    def __init__(self, layers, heads, width, vocab, seq):
        super().__init__()
        self.wte, self.wpe = torch.nn.Embedding(vocab, width), torch.nn.Embedding(seq, width)
        self.h = torch.nn.ModuleList(GptBlock(width, heads) for _ in range(layers))
        self.ln_f = torch.nn.LayerNorm(width)

    def forward(self, ids):
        x = self.wte(ids) + self.wpe(torch.arange(ids.shape[1], device=ids.device))
        for block in self.h:
            x = block(x)
        return F.linear(self.ln_f(x), self.wte.weight)


def gpt_train_step():
    """The tiny-GPT row: next-token cross-entropy, AdamW (weight decay 0.01
    but on 1-D parameters), Genesis's cuda plan against the same model."""
    vocab, batch, seq = GPT["vocab"], GPT["batch"], GPT["seq"]
    ids = rng.integers(0, vocab, (batch, seq)).astype(np.int64)
    targets = rng.integers(0, vocab, (batch, seq)).astype(np.int64)
    with tempfile.TemporaryDirectory() as tmp:
        lr_path = os.path.join(tmp, "lr.safetensors")
        write_safetensors(lr_path, {"lr": ("F32", [], struct.pack("<f", 1e-3))})
        ms, peak = genesis(os.path.join(CARRY, "gpt", "gpt.gplan"), [ids, targets],
                           extra=["--params", os.path.join(CARRY, "gpt", "init.safetensors"),
                                  "--params", lr_path], function="train_step")
        name = (f"tiny GPT train step {GPT['layers']}L w{GPT['width']} "
                f"v{vocab} b{batch}x{seq}")
        if BEFORE:
            time_before(name, os.path.join("gpt", "gpt.gplan"), [ids, targets],
                        extra=["--params", before_init("gpt"),
                               "--params", lr_path], function="train_step")
    # Earlier rows leave tensors allocated (the GEMM inputs, the MLP): the
    # peaks count only what this row allocates, as Genesis's does.
    base = torch.cuda.memory_allocated()
    model = Gpt(**{k: GPT[k] for k in ("layers", "heads", "width", "vocab", "seq")}).to(DEV)
    decay = [p for p in model.parameters() if p.dim() > 1]
    rest = [p for p in model.parameters() if p.dim() == 1]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01},
                             {"params": rest, "weight_decay": 0.0}], lr=1e-3)
    ti, tt = torch.from_numpy(ids).to(DEV), torch.from_numpy(targets).to(DEV)

    def step(x, y):
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x).view(-1, vocab), y.view(-1))
        loss.backward()
        opt.step()
        return loss
    torch.cuda.reset_peak_memory_stats()
    eager = cuda_time(lambda: step(ti, tt))
    eager_peak = torch.cuda.max_memory_allocated() - base
    try:  # keep the eager numbers if the compile fails
        compiled_step = torch.compile(step)
        torch.cuda.reset_peak_memory_stats()
        compiled = cuda_time(lambda: compiled_step(ti, tt))
        compiled_peak = torch.cuda.max_memory_allocated() - base
    except Exception as error:
        print(f"torch.compile failed: {error}", flush=True)
        compiled, compiled_peak = float("nan"), 0
    rows.append((name, ms, eager, compiled, None, None))
    print(f"tiny GPT: genesis {ms:.3f} ms (peak {peak} B), eager {eager:.3f} (peak {eager_peak} B), "
          f"compile {compiled:.3f} (peak {compiled_peak} B)", flush=True)


def main():
    bandwidth = copy_bandwidth()
    print(f"device-to-device copy: {bandwidth / 1e12:.2f} TB/s", flush=True)
    f32 = np.float32

    n = 4096
    a, b, c = (rng.standard_normal((n, n), dtype=f32),
               rng.standard_normal((n, n), dtype=f32), rng.standard_normal(n, dtype=f32))
    memory_bound("elementwise relu(a*b+c) 2^24", "ew_chain.gplan", [a, b, c],
                 lambda x, y, z: torch.relu(x * y + z), 3 * a.nbytes)
    del a, b, c

    m = 8192
    x = rng.standard_normal((m, m), dtype=f32)
    w, bias = rng.standard_normal(m, dtype=f32), rng.standard_normal(m, dtype=f32)
    memory_bound("softmax 8192x8192", "softmax.gplan", [x],
                 lambda t: torch.softmax(t, dim=1), 2 * x.nbytes)
    memory_bound("log_softmax 8192x8192", "log_softmax.gplan", [x],
                 lambda t: torch.log_softmax(t, dim=1), 2 * x.nbytes)
    memory_bound("layer_norm 8192x8192", "layer_norm.gplan", [x, w, bias],
                 lambda t, u, v: F.layer_norm(t, (m,), u, v, 1e-5), 2 * x.nbytes)
    memory_bound("rms_norm 8192x8192", "rms_norm.gplan", [x, w],
                 lambda t, u: F.rms_norm(t, (m,), u, 1e-6), 2 * x.nbytes)
    y = torch.softmax(torch.from_numpy(x), dim=1).numpy()
    g = rng.standard_normal((m, m), dtype=f32)
    memory_bound("softmax backward 8192x8192", "softmax_backward.gplan", [y, g],
                 lambda t, u: torch._softmax_backward_data(u, t, 1, torch.float32),
                 3 * x.nbytes)
    del y

    # Norm backwards: dx only, as the plans (bench/*_backward.mlir, the VJPs'
    # ops) compute it; PyTorch's kernels skip dw when w needs no gradient.
    def norm_dx(norm):
        def dx(t, go, u):
            t = t.detach().requires_grad_(True)
            return torch.autograd.grad(norm(t, u), t, go)[0]
        return dx
    memory_bound("layer_norm backward 8192x8192", "layer_norm_backward.gplan", [x, g, w],
                 norm_dx(lambda t, u: F.layer_norm(t, (m,), u, None, 1e-5)), 3 * x.nbytes)
    memory_bound("rms_norm backward 8192x8192", "rms_norm_backward.gplan", [x, g, w],
                 norm_dx(lambda t, u: F.rms_norm(t, (m,), u, 1e-6)), 3 * x.nbytes)
    del g
    labels = rng.integers(0, m, m).astype(np.int64)

    def ce_and_grad(t, lab):
        t = t.detach().requires_grad_(True)
        loss = F.cross_entropy(t, lab)
        (grad,) = torch.autograd.grad(loss, t)
        return loss, grad
    memory_bound("cross_entropy fwd+bwd 8192x8192", "cross_entropy_grad.gplan",
                 [x, labels], ce_and_grad, 2 * x.nbytes, function="loss_grad")
    del x

    if wanted("gemm"):
        k = 4096
        ga, gb = rng.standard_normal((k, k), dtype=f32), rng.standard_normal((k, k), dtype=f32)
        flops = 2 * k ** 3
        for name, plan, dtype, tf32 in [("gemm 4096^3 f32 (exact)", "gemm_f32.gplan", torch.float32, False),
                                        ("gemm 4096^3 tf32", "gemm_tf32.gplan", torch.float32, True),
                                        ("gemm 4096^3 bf16", "gemm_bf16.gplan", torch.bfloat16, False)]:
            inputs = [ga, gb]
            tmp = None
            if dtype == torch.bfloat16:
                # numpy has no bf16: the inputs go in a safetensors file.
                tmp = tempfile.TemporaryDirectory()
                path = os.path.join(tmp.name, "ab.safetensors")
                write_safetensors(path, {name: ("BF16", t.shape, torch.from_numpy(t).to(torch.bfloat16)
                                                .view(torch.int16).numpy().tobytes())
                                         for name, t in (("a", ga), ("b", gb))})
                inputs = [path]
            ms, _ = genesis(os.path.join(BENCH, plan), inputs)
            torch.backends.cuda.matmul.allow_tf32 = tf32
            ta, tb = (torch.from_numpy(t).to(DEV, dtype) for t in (ga, gb))
            eager = cuda_time(lambda: ta @ tb)
            rows.append((name, ms, eager, None, None, flops))
            print(f"{name}: genesis {ms:.3f} ms, torch.matmul {eager:.3f}", flush=True)
        torch.backends.cuda.matmul.allow_tf32 = False
        # The GEMM inputs must not count in the train steps' peak memory.
        del ta, tb, ga, gb
        torch.cuda.empty_cache()

    if wanted("MLP train step"):
        # The MLP train step, batch 4096, AdamW (weight decay 0.01 but on biases).
        batch = 4096
        images = rng.random((batch, 784), dtype=f32)
        digits = rng.integers(0, 10, batch).astype(np.int64)
        with tempfile.TemporaryDirectory() as tmp:
            lr_path = os.path.join(tmp, "lr.safetensors")
            write_safetensors(lr_path, {"lr": ("F32", [], struct.pack("<f", 1e-3))})
            ms, peak = genesis(os.path.join(CARRY, "mlp4096", "mlp.gplan"), [images, digits],
                               extra=["--params", os.path.join(CARRY, "mlp4096", "init.safetensors"),
                                      "--params", lr_path], function="train_step")
            if BEFORE:
                time_before("MLP train step b4096", os.path.join("mlp4096", "mlp.gplan"),
                            [images, digits],
                            extra=["--params", before_init("mlp4096"),
                                   "--params", lr_path], function="train_step")
        model = torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(),
                                    torch.nn.Linear(256, 128), torch.nn.ReLU(),
                                    torch.nn.Linear(128, 10)).to(DEV)
        decay = [p for p in model.parameters() if p.dim() > 1]
        rest = [p for p in model.parameters() if p.dim() == 1]
        opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01},
                                 {"params": rest, "weight_decay": 0.0}], lr=1e-3)
        ti, td = torch.from_numpy(images).to(DEV), torch.from_numpy(digits).to(DEV)

        def step(x, y):
            opt.zero_grad(set_to_none=True)
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            return loss
        # Peaks count what the step allocates beyond what was live before it
        # (the model, its optimizer state and the batch count, as in Genesis).
        base = torch.cuda.memory_allocated() - sum(
            p.numel() * p.element_size() for p in model.parameters()) - ti.nbytes - td.nbytes
        torch.cuda.reset_peak_memory_stats()
        eager = cuda_time(lambda: step(ti, td))
        eager_peak = torch.cuda.max_memory_allocated() - base
        compiled_step = torch.compile(step)
        torch.cuda.reset_peak_memory_stats()
        compiled = cuda_time(lambda: compiled_step(ti, td))
        compiled_peak = torch.cuda.max_memory_allocated() - base
        rows.append(("MLP train step b4096", ms, eager, compiled, None, None))
        print(f"MLP: genesis {ms:.3f} ms (peak {peak} B), eager {eager:.3f} (peak {eager_peak} B), "
              f"compile {compiled:.3f} (peak {compiled_peak} B)", flush=True)

    try:
        if wanted("tiny GPT"):
            gpt_train_step()
    except Exception as error:  # the table stands without this row
        print(f"tiny GPT row failed: {error}", flush=True)

    with open(os.path.join(OUT, "bench.tsv"), "w") as f:
        f.write("name\tgenesis_ms\teager_ms\tcompile_ms\tbandwidth_fraction\ttflops\n")
        for name, g, e, c, nbytes, fl in rows:
            frac = nbytes / (g * 1e-3) / bandwidth if nbytes else ""
            tfl = fl / (g * 1e-3) / 1e12 if fl else ""
            f.write(f"{name}\t{g}\t{e}\t{c if c is not None else ''}\t{frac}\t{tfl}\n")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        mem = [r for r in rows if r[4]]
        fig, ax = plt.subplots(figsize=(10, 4))
        xs = np.arange(len(mem))
        for i, (label, idx) in enumerate([("Genesis", 1), ("PyTorch eager", 2), ("torch.compile", 3)]):
            ax.bar(xs + (i - 1) * 0.27, [r[4] / (r[idx] * 1e-3) / bandwidth if r[idx] else 0
                                         for r in mem], 0.27, label=label)
        ax.set_xticks(xs, [r[0] for r in mem], rotation=20, ha="right", fontsize=8)
        ax.set_ylabel("fraction of D2D copy bandwidth")
        ax.axhline(0.85, ls="--", c="grey")
        ax.axhline(0.75, ls=":", c="grey")
        ax.legend()
        fig.tight_layout()
        fig.savefig(os.path.join(OUT, "bench.png"), dpi=120)
    except Exception as error:  # the table stands without the plot
        print(f"plot not written: {error}")

    print(f"\ncopy bandwidth {bandwidth / 1e12:.2f} TB/s; device {torch.cuda.get_device_name()}")
    before_head = " Genesis before ms | before/after |" if BEFORE else ""
    print("| benchmark | Genesis ms | eager ms | compile ms | Genesis/eager | Genesis/compile "
          "| BW % or TFLOP/s |" + before_head)
    print("| --- | --- | --- | --- | --- | --- | --- |" + (" --- | --- |" if BEFORE else ""))
    for name, g, e, c, nbytes, fl in rows:
        perf = (f"{100 * nbytes / (g * 1e-3) / bandwidth:.0f}%" if nbytes
                else f"{fl / (g * 1e-3) / 1e12:.0f} TF/s" if fl else "-")
        cs = f"{c:.3f}" if c is not None else "-"
        speed_c = f"{c / g:.2f}x" if c is not None else "-"
        before = ""
        if BEFORE:
            b = before_ms.get(name)
            before = f" {b:.3f} | {b / g:.2f}x |" if b is not None else " - | - |"
        print(f"| {name} | {g:.3f} | {e:.3f} | {cs} | {e / g:.2f}x | {speed_c} | {perf} |{before}")


if __name__ == "__main__":
    main()
