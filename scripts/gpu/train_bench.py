"""The side-by-side training benchmark that gpt2_train_bench.py and
qwen2_train_bench.py run for their model (a Spec): one process per system,
all on this GPU in one run, Genesis's bf16 AdamW train step (the plan's
`train_step`, run by CARRY/bin/genesis-run) and the PyTorch model of the spec
(autocast bf16, fused AdamW, TF32 allowed) in eager mode and under
torch.compile.

Same start: the parent draws the weights once (torch.manual_seed(0), the
spec's init) and saves them as init.safetensors for Genesis (Hugging Face
names and layouts: spec.hf_state) and as init.pt for the PyTorch children.
Same AdamW: lr 3e-4 (Genesis: lr.safetensors), betas (0.9, 0.999), eps 1e-8,
weight decay 0.01 on 2-D parameters only (the Genesis plans decay the same).
Same data: the bytes of the Python standard library sources; step i trains on
BATCH windows of SEQ + 1 tokens, starts drawn up front (STEPS x BATCH) from
np.random.default_rng(1234), ids = window[:, :-1], targets = window[:, 1:].
Genesis gets all batches at once (ids.npy, targets.npy [STEPS, BATCH, SEQ],
genesis-run --batches: run r binds slice r); PyTorch copies batch i to the GPU
inside step i.

Measured per system: the loss of every step (shown at steps 1, 10, STEPS);
the step time, Genesis's as the mean of 20 CUDA-graph replays after the STEPS
runs (genesis-run --bench 20, last batch), PyTorch's as the median of CUDA
events around steps 11..STEPS (1-10: warm-up, compilation); tokens/s = BATCH
x SEQ / step time; MFU = (6 N + 12 L S d) FLOPs/token (N parameters, L
layers, S sequence, d width) x tokens/s / 989 TFLOP/s
(H100 SXM dense bf16); peak memory, Genesis's arena plus persistent tensors
(genesis-run's "peak"), PyTorch's max_memory_allocated from the first step on
(weights, gradients, AdamW state, activations); torch.compile's first step
wall time (a cold compile: fresh inductor cache).

Loss agreement: the systems round bf16 GEMMs and reductions differently and
the differences compound over the steps, so the losses are not bit-equal; the
tolerance is 0.05 absolute (PyTorch eager and torch.compile differ from each
other by amounts of this order; their difference is printed as the
reference). <PREFIX>_BEFORE_PLAN=<plan> adds a "Genesis before" row (an
earlier compiler's plan, same inputs), <PREFIX>_BEFORE_ENV="NAME=VALUE ..."
runs that row (the same plan unless BEFORE_PLAN names one) with these
settings (GENESIS_TUNING=0, say); with a before row,
<PREFIX>_AB_ROUNDS=N runs only the two Genesis rows, N times in alternating
order, and prints their times and the ratio of the medians, <PREFIX>_STEPS sets STEPS (default
50). <PREFIX>_PROFILE=1 runs only Genesis's plan, once with every step timed
alone (genesis-run --profile), prints each kernel kind's total and the 25
slowest steps, and writes the whole profile to OUT/<key>_profile.txt.
<PREFIX>_NUMERICS=1 runs only Genesis's plan, with and without
--check-numerics, and prints the cost per run. <PREFIX>_DETERMINISM=1 runs only Genesis's plan, twice in the default mode
and twice with GENESIS_DETERMINISTIC=1, and prints whether each pair's
losses (as genesis-run prints them, 6 significant digits) and final
parameters and optimizer state (bitwise) are equal. The table and per-step losses go to OUT/<key>_train_bench.json, bars and
loss curves to OUT/<key>_train_bench.png."""
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np
import torch
from safetensors.torch import save_file

from stdlib_corpus import stdlib_tokens

WARMUP = 10  # PyTorch steps left out of the timing
LR, BETAS, EPS, DECAY = 3e-4, (0.9, 0.999), 1e-8, 0.01
PEAK_FLOPS = 989e12
TOLERANCE = 0.05
TIMEOUT_S = 1800


@dataclass
class Spec:
    title: str  # "GPT-2 124M"
    key: str  # names the output files and the environment prefix
    batch: int
    seq: int
    layers: int
    width: int
    plan: str  # the Genesis plan, relative to CARRY
    make_model: Callable  # () -> nn.Module, forward(ids, targets) -> loss
    hf_state: Callable  # model -> {Hugging Face name: f32 tensor}

    def env(self, name, default=None):
        return os.environ.get(f"{self.key.upper()}_{name}", default)

    @property
    def steps(self):
        return int(self.env("STEPS", "50"))


def child(spec, mode, tmp):
    """One PyTorch system (eager or compile) in its own process."""
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    ids = torch.from_numpy(np.load(os.path.join(tmp, "ids.npy"))).pin_memory()
    targets = torch.from_numpy(np.load(os.path.join(tmp, "targets.npy"))).pin_memory()
    model = spec.make_model()
    model.load_state_dict(torch.load(os.path.join(tmp, "init.pt"), weights_only=True))
    model.cuda()
    params = list(model.parameters())  # tied weights once
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
    run = subprocess.run([sys.executable, os.path.abspath(sys.argv[0]), "--child", mode, tmp],
                         capture_output=True, text=True, env=env, timeout=TIMEOUT_S)
    if run.returncode != 0:
        raise RuntimeError((run.stderr or run.stdout).strip()[-1500:])
    with open(os.path.join(tmp, f"result_{mode}.json")) as f:
        return json.load(f)


def run_genesis(spec, genesis_run, plan, tmp, env_settings=None, save_state=None,
                extra_args=()):
    """env_settings: "NAME=VALUE ..." added to the environment of this run;
    save_state: a checkpoint of the parameters and optimizer state after the
    runs (genesis-run --save-state); extra_args: more genesis-run options."""
    steps = spec.steps
    env = dict(os.environ)
    env.update(item.split("=", 1) for item in (env_settings or "").split())
    args = [genesis_run, plan, "-f", "train_step",
            "-i", os.path.join(tmp, "ids.npy"), "-i", os.path.join(tmp, "targets.npy"),
            "--batches", "--repeat", str(steps),
            "--params", os.path.join(tmp, "init.safetensors"),
            "--params", os.path.join(tmp, "lr.safetensors"), "--bench", "20"]
    if save_state:
        args += ["--save-state", save_state]
    args += list(extra_args)
    wall = time.perf_counter()
    run = subprocess.run(args, capture_output=True, text=True, timeout=TIMEOUT_S, env=env)
    wall = time.perf_counter() - wall
    if run.returncode != 0:
        raise RuntimeError(run.stderr.strip()[-1500:])
    out = run.stdout
    losses = {int(r): float(v) for r, v in re.findall(r"^run (\d+): loss = (\S+)", out, re.M)}
    bench = re.search(r"bench: ([0-9.]+) ms", out)
    peaks = re.findall(r"peak (\d+) B", out)
    if sorted(losses) != list(range(1, steps + 1)) or not bench or not peaks:
        raise RuntimeError("expected 'run R: loss = X' for R = 1.."
                           f"{steps}, 'bench: <ms> ms' and 'peak <bytes> B' in:\n{out[-1500:]}")
    runs = re.search(r"runs: ([0-9.]+) ms per run", out)
    return {"ms": float(bench.group(1)), "peak": int(peaks[-1]),
            "run_ms": float(runs.group(1)) if runs else None,
            "losses": [losses[r] for r in range(1, steps + 1)], "wall_s": wall}


def compare_genesis(spec, genesis_run, systems, tmp, rounds):
    """The two Genesis rows alone, `rounds` times in alternating order (the
    first in each pair runs on a GPU warmed by the other): each time and the
    ratio of the medians."""
    times = {name: [] for name, _ in systems}
    for r in range(rounds):
        for name, plan in (systems if r % 2 == 0 else systems[::-1]):
            env = spec.env("BEFORE_ENV") if name == "Genesis before" else None
            times[name].append(run_genesis(spec, genesis_run, plan, tmp, env)["ms"])
        print(f"round {r + 1}: " + ", ".join(f"{n} {t[-1]:.2f} ms" for n, t in times.items()),
              flush=True)
    median = {n: sorted(t)[len(t) // 2] for n, t in times.items()}
    print("medians: " + ", ".join(f"{n} {m:.2f} ms" for n, m in median.items())
          + f"; Genesis / before speed {median['Genesis before'] / median['Genesis']:.3f}x",
          flush=True)


def state_tensors(path):
    """{name: raw bytes} of a .safetensors file."""
    with open(path, "rb") as f:
        header_size = int.from_bytes(f.read(8), "little")
        header = json.loads(f.read(header_size))
        data = f.read()
    return {name: data[entry["data_offsets"][0]:entry["data_offsets"][1]]
            for name, entry in header.items() if name != "__metadata__"}


def check_determinism(spec, genesis_run, plan, tmp):
    """Genesis's plan twice in the default mode and twice with
    GENESIS_DETERMINISTIC=1: whether each pair's losses and final parameters
    and optimizer state are the same bits, and each mode's time."""
    print("| mode | ms/step (2 runs) | peak GiB | losses equal (as printed, 6 digits) | max abs loss diff | "
          "state tensors equal |\n| --- | --- | --- | --- | --- | --- |", flush=True)
    for mode, env in (("default", None), ("deterministic", "GENESIS_DETERMINISTIC=1")):
        runs, states = [], []
        for r in range(2):
            path = os.path.join(tmp, f"state_{mode}_{r}.safetensors")
            runs.append(run_genesis(spec, genesis_run, plan, tmp, env, save_state=path))
            states.append(state_tensors(path))
        diff = max(abs(a - b) for a, b in zip(runs[0]["losses"], runs[1]["losses"]))
        same = sum(states[0][n] == states[1].get(n) for n in states[0])
        print(f"| {mode} | {runs[0]['ms']:.2f}, {runs[1]['ms']:.2f} | "
              f"{runs[0]['peak'] / 2**30:.2f} | "
              f"{runs[0]['losses'] == runs[1]['losses']} | {diff:.3g} | {same}/{len(states[0])} |",
              flush=True)


def check_numerics_cost(spec, genesis_run, plan, tmp):
    """Genesis's plan with and without --check-numerics, twice each in
    alternating order: genesis-run's wall time per run of runs 3-N of the
    --repeat loop (runs with host transfers, not replays: the check runs
    there) and the losses. The default mode is not bitwise deterministic
    (cuDNN's attention backward), so losses may differ in the last digits."""
    print("| mode | ms per run, runs 3-N (2 processes) | losses equal to the unchecked run |\n"
          "| --- | --- | --- |", flush=True)
    results = {"plain": [], "checked": []}
    for r in range(2):
        for mode in (("plain", "checked") if r == 0 else ("checked", "plain")):
            extra = ["--check-numerics"] if mode == "checked" else []
            results[mode].append(run_genesis(spec, genesis_run, plan, tmp, extra_args=extra))
    for mode, runs in results.items():
        equal = runs[0]["losses"] == results["plain"][0]["losses"]
        print(f"| {mode} | {runs[0]['run_ms']:.2f}, {runs[1]['run_ms']:.2f} | {equal} |",
              flush=True)
    best = {m: min(x["run_ms"] for x in v) for m, v in results.items()}
    print(f"check cost: {best['checked'] - best['plain']:.2f} ms per run "
          f"({best['checked'] / best['plain']:.3f}x; the faster process of each mode)",
          flush=True)


def profile_genesis(genesis_run, plan, steps, tmp, out_dir, key):
    """Every step of one train step timed alone; totals per kernel kind."""
    args = [genesis_run, plan, "-f", "train_step",
            "-i", os.path.join(tmp, "ids.npy"), "-i", os.path.join(tmp, "targets.npy"),
            "--batches", "--repeat", str(steps),
            "--params", os.path.join(tmp, "init.safetensors"),
            "--params", os.path.join(tmp, "lr.safetensors"), "--bench", "1", "--profile"]
    run = subprocess.run(args, capture_output=True, text=True, timeout=TIMEOUT_S)
    if run.returncode != 0:
        raise RuntimeError(run.stderr.strip()[-1500:])
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, f"{key}_profile.txt"), "w") as f:
        f.write(run.stdout)
    steps = re.findall(r"#\d+\s+([0-9.]+) ms\s+(\S+) (\S+)\s+@ (.*)", run.stdout)
    kinds = {}
    for t, kind, what, _ in steps:
        name = kind + " " + re.sub(r"\d+$", "", what)
        kinds[name] = kinds.get(name, 0.0) + float(t)
    print(f"{len(steps)} steps, {sum(float(s[0]) for s in steps):.2f} ms in all")
    for name, t in sorted(kinds.items(), key=lambda kv: -kv[1])[:15]:
        print(f"  total {t:8.2f} ms  {name}")
    for t, kind, what, where in sorted(steps, key=lambda s: -float(s[0]))[:25]:
        print(f"  {float(t):8.3f} ms  {kind} {what}  @ {where}")


def plot(spec, rows, path):
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
    fig.suptitle(f"{spec.title} train step, batch {spec.batch}x{spec.seq}, bf16, {spec.steps} steps")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"plot: {path}")


def main(spec, usage):
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        child(spec, sys.argv[2], sys.argv[3])
        return 0
    if len(sys.argv) not in (2, 3):
        print(usage)
        return 2
    carry, out_dir = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "."
    steps, batch, seq = spec.steps, spec.batch, spec.seq
    genesis_run = os.path.join(carry, "bin", "genesis-run")
    systems = [("Genesis", os.path.join(carry, spec.plan))]
    if spec.env("BEFORE_PLAN") or spec.env("BEFORE_ENV"):
        systems.append(("Genesis before", spec.env("BEFORE_PLAN") or systems[0][1]))
    systems += [("PyTorch eager", "eager"), ("torch.compile", "compile")]

    torch.manual_seed(0)
    model = spec.make_model()
    params = sum(p.numel() for p in model.parameters())
    flops_per_token = 6 * params + 12 * spec.layers * seq * spec.width
    tokens = stdlib_tokens()
    starts = np.random.default_rng(1234).integers(0, len(tokens) - seq, size=(steps, batch))
    windows = tokens[starts[..., None] + np.arange(seq + 1)]  # [STEPS, BATCH, SEQ + 1]
    print(f"{spec.title}: {params / 1e6:.1f}M parameters, batch {batch}x{seq}, {steps} steps, "
          f"{flops_per_token / 1e6:.0f} MFLOP/token, {len(tokens):,} stream tokens", flush=True)

    rows = []
    device = None
    with tempfile.TemporaryDirectory() as tmp:
        np.save(os.path.join(tmp, "ids.npy"), np.ascontiguousarray(windows[..., :-1]))
        np.save(os.path.join(tmp, "targets.npy"), np.ascontiguousarray(windows[..., 1:]))
        save_file(spec.hf_state(model), os.path.join(tmp, "init.safetensors"))
        save_file({"lr": torch.tensor(LR, dtype=torch.float32)}, os.path.join(tmp, "lr.safetensors"))
        torch.save(model.state_dict(), os.path.join(tmp, "init.pt"))
        del model
        if spec.env("PROFILE"):
            profile_genesis(genesis_run, systems[0][1], steps, tmp, out_dir, spec.key)
            return 0
        if spec.env("DETERMINISM"):
            check_determinism(spec, genesis_run, systems[0][1], tmp)
            return 0
        if spec.env("NUMERICS"):
            check_numerics_cost(spec, genesis_run, systems[0][1], tmp)
            return 0
        if spec.env("AB_ROUNDS") and len(systems) > 3:
            compare_genesis(spec, genesis_run, systems[:2], tmp, int(spec.env("AB_ROUNDS")))
            return 0
        for name, what in systems:
            try:
                if name.startswith("Genesis"):
                    before_env = spec.env("BEFORE_ENV") if name == "Genesis before" else None
                    result = run_genesis(spec, genesis_run, what, tmp, before_env)
                else:
                    result = run_child(what, tmp)
                    device = device or result.get("device")
            except Exception as error:  # the other systems still run
                print(f"{name} failed: {error}", flush=True)
                continue
            rate = batch * seq / (result["ms"] * 1e-3)
            result.update(system=name, tokens_per_s=rate, mfu=rate * flops_per_token / PEAK_FLOPS,
                          peak_gib=result["peak"] / 2**30)
            rows.append(result)
            extra = (f", first step (compile) {result['first_step_s']:.1f} s"
                     if what == "compile" else "")
            print(f"{name}: {result['ms']:.2f} ms/step, {rate:,.0f} tokens/s, "
                  f"peak {result['peak_gib']:.2f} GiB, loss {result['losses'][0]:.4f} -> "
                  f"{result['losses'][-1]:.4f}{extra}", flush=True)

    check = sorted({s for s in (1, 10, steps) if s <= steps})
    lines = [f"{spec.title} train step, batch {batch}x{seq}, bf16, {steps} steps, "
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
    with open(os.path.join(out_dir, f"{spec.key}_train_bench.json"), "w") as f:
        json.dump({"device": device, "steps": steps, "batch": batch, "seq": seq,
                   "parameters": params, "flops_per_token": flops_per_token,
                   "peak_flops": PEAK_FLOPS, "tolerance": TOLERANCE, "check_steps": check,
                   "rows": rows, "ratios": ratios, "table": "\n".join(lines)}, f, indent=1)
    print("\n" + "\n".join(lines), flush=True)
    if rows:
        try:
            plot(spec, rows, os.path.join(out_dir, f"{spec.key}_train_bench.png"))
        except Exception as error:  # the table is already out
            print(f"plot failed: {error}")
    return 0 if genesis else 1
