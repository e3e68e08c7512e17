#!/usr/bin/env python3
"""f16 with the dynamic loss scale on the GPU: the tiny GPT's train step
compiled with `gpt2-plan --precision=f16 --loss-scale=dynamic` (carried in
CARRY/gptf16) runs with genesis-run, which writes the session's state after
the runs (--save-state).

1. Clean: 3 steps from the initial weights; the loss is finite and falls,
   the scale stays 65536 (the initial one), the growth tracker reads 3 and
   no step is skipped.
2. Injected overflow: the same step from weights whose token embedding is
   multiplied by 1e6. The LM head (ln_f output times the tied embedding, an
   f16 GEMM) then overflows f16's 65504, the loss is not finite, and the
   step must be skipped: every parameter keeps its initial value bit for
   bit, the scale halves to 32768, the tracker restarts and one step counts
   as skipped.
Prints a table; exits 1 if a check fails."""
import json
import os
import re
import struct
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_cases import load_safetensors  # noqa: E402

CARRY = sys.argv[1]
GENESIS_RUN = os.path.join(CARRY, "bin", "genesis-run")
PLAN = os.path.join(CARRY, "gptf16", "gpt.gplan")
INIT = os.path.join(CARRY, "gptf16", "init.safetensors")


def write_safetensors(path, arrays):
    header, offset, blobs = {}, 0, []
    for name, array in arrays.items():
        array = np.array(array, dtype=np.float32)  # keeps 0-d scalars 0-d
        header[name] = {"dtype": "F32", "shape": list(array.shape),
                        "data_offsets": [offset, offset + array.nbytes]}
        offset += array.nbytes
        blobs.append(array.tobytes())
    text = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def run(tmp, weights, steps):
    state = os.path.join(tmp, "state.safetensors")
    out = subprocess.run([GENESIS_RUN, PLAN, "-f", "train_step", "-i", os.path.join(tmp, "ids.npy"),
                          "-i", os.path.join(tmp, "targets.npy"), "--params", weights,
                          "--params", os.path.join(tmp, "lr.safetensors"),
                          "--repeat", str(steps), "--save-state", state],
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-800:])
    loss = float(re.search(r"loss: f32\[\] = \[([^\]]+)\]", out.stdout).group(1))
    return loss, load_safetensors(state)


def main():
    init = load_safetensors(INIT)
    rng = np.random.default_rng(0)
    vocab = init["wte.weight"].shape[0]
    checks = []
    with tempfile.TemporaryDirectory() as tmp:
        ids = rng.integers(0, vocab, (16, 256)).astype(np.int64)
        np.save(os.path.join(tmp, "ids.npy"), ids)
        np.save(os.path.join(tmp, "targets.npy"), np.roll(ids, -1, axis=1))
        write_safetensors(os.path.join(tmp, "lr.safetensors"), {"lr": np.float32(1e-3)})
        first, _ = run(tmp, INIT, 1)
        loss, state = run(tmp, INIT, 3)
        checks += [("clean: loss finite and falling", f"{first:.4f} -> {loss:.4f}",
                    np.isfinite(loss) and loss < first),
                   ("clean: scale", state["amp.loss_scale"].item(), state["amp.loss_scale"].item() == 65536.0),
                   ("clean: growth tracker", state["amp.growth_tracker"].item(),
                    state["amp.growth_tracker"].item() == 3.0),
                   ("clean: skipped steps", state["amp.skipped_steps"].item(),
                    state["amp.skipped_steps"].item() == 0.0)]
        hot = dict(init)
        hot["wte.weight"] = init["wte.weight"] * np.float32(1e6)
        hot_path = os.path.join(tmp, "hot.safetensors")
        write_safetensors(hot_path, hot)
        loss, state = run(tmp, hot_path, 1)
        unchanged = all(np.array_equal(state[name], hot[name]) for name in hot)
        checks += [("overflow: loss not finite", loss, not np.isfinite(loss)),
                   ("overflow: every parameter unchanged (bitwise)", unchanged, unchanged),
                   ("overflow: scale halved", state["amp.loss_scale"].item(),
                    state["amp.loss_scale"].item() == 32768.0),
                   ("overflow: growth tracker", state["amp.growth_tracker"].item(),
                    state["amp.growth_tracker"].item() == 0.0),
                   ("overflow: skipped steps", state["amp.skipped_steps"].item(),
                    state["amp.skipped_steps"].item() == 1.0)]
    print("| check | value | result |\n| --- | --- | --- |")
    for name, value, ok in checks:
        print(f"| {name} | {value} | {'ok' if ok else 'FAIL'} |")
    sys.exit(0 if all(ok for *_, ok in checks) else 1)


if __name__ == "__main__":
    main()
