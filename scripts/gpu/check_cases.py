#!/usr/bin/env python3
"""Runs the CUDA backend cases that CudaBackendTests wrote (plan, inputs and
the reference evaluator's outputs per case) with genesis-run on this GPU
machine and compares every output with the evaluator: |got - want| /
max(1, |want|) <= 1e-5 (the f32 budget CudaBackendTest.cpp states) or the
budget in the case's .tolerance file (mixed-precision cases), NaN where the
evaluator has NaN. A case's parameters and buffers, where it has them, are
bound from its .params.safetensors (genesis-run --params). Cases of the differential fuzzer (genesis-diff-fuzz
--cuda-cases) also carry the widened graph's outputs as a precision
reference. A case with a .numerics file (CheckNumericsTests) instead runs
genesis-run with that file's "args" and must fail with every string of its
"expect" in the error. Prints a table; exits 1 if any case fails."""
import json
import os
import struct
import subprocess
import sys
import tempfile

import numpy as np

DTYPES = {"F32": np.float32, "F64": np.float64, "F16": np.float16,
          "I32": np.int32, "I64": np.int64, "BOOL": np.bool_, "U8": np.uint8}


def load_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    (size,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + size])
    base = 8 + size
    arrays = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        raw = data[base + begin:base + end]
        if info["dtype"] == "BF16":  # numpy has no bf16: widen the bits
            bits = np.frombuffer(raw, dtype=np.uint16).astype(np.uint32) << 16
            arrays[name] = bits.view(np.float32).reshape(info["shape"])
            continue
        arrays[name] = np.frombuffer(raw, dtype=DTYPES[info["dtype"]]).reshape(info["shape"])
    return arrays


def check_numerics_case(stem, genesis_run):
    """Runs a numerics-check case; returns (passed, what was seen)."""
    with open(stem + ".numerics") as f:
        spec = json.load(f)
    run = subprocess.run([genesis_run, stem + ".gplan", "-i", stem + ".in.safetensors",
                          "--params", stem + ".params.safetensors"] + spec["args"],
                         capture_output=True, text=True)
    missing = [text for text in spec["expect"] if text not in run.stderr]
    if run.returncode == 0 or missing:
        return False, f"exit {run.returncode}, missing {missing}: {run.stderr.strip()[-300:]}"
    return True, "reported: " + run.stderr.strip()[-160:].replace("|", "/")


def main():
    cases, genesis_run = sys.argv[1], sys.argv[2]
    failed = 0
    rows = []
    for plan in sorted(p for p in os.listdir(cases) if p.endswith(".gplan")):
        stem = os.path.join(cases, plan[:-len(".gplan")])
        if os.path.exists(stem + ".numerics"):
            ok, detail = check_numerics_case(stem, genesis_run)
            failed += not ok
            rows.append((plan, "ok" if ok else "FAIL", detail))
            continue
        with tempfile.TemporaryDirectory() as tmp:
            got_path = os.path.join(tmp, "got.safetensors")
            params = []
            if os.path.exists(stem + ".params.safetensors"):
                params = ["--params", stem + ".params.safetensors"]
            run = subprocess.run([genesis_run, stem + ".gplan", "-i",
                                  stem + ".in.safetensors", "-o", got_path] + params,
                                 capture_output=True, text=True)
            if run.returncode != 0:
                rows.append((plan, "ERROR", run.stderr.strip()[-200:]))
                failed += 1
                continue
            got = load_safetensors(got_path)
        want = load_safetensors(stem + ".want.safetensors")
        # Differential-fuzzer cases carry the widened (f64) graph's outputs:
        # an element may differ by 8 |want - reference| more (the graph's
        # own sensitivity to rounding), and NaN/inf may differ where the
        # reference's class differs; integers must be equal.
        reference = {}
        if os.path.exists(stem + ".reference.safetensors"):
            reference = load_safetensors(stem + ".reference.safetensors")
        worst, problem = 0.0, ""
        for name, expected in want.items():
            if expected.dtype.kind in "iub":
                if not np.array_equal(got[name], expected):
                    problem = f"{name}: integers differ"
                continue
            actual = got[name].astype(np.float64)
            expected = expected.astype(np.float64)
            slack = np.zeros_like(expected)
            borderline = np.zeros(expected.shape, bool)
            if name in reference:
                ref = reference[name].astype(np.float64)
                with np.errstate(invalid="ignore"):
                    slack = np.where(np.isfinite(ref), 8 * np.abs(expected - ref), np.inf)
                borderline = (np.isnan(ref) != np.isnan(expected)) | (np.isinf(ref) != np.isinf(expected))
            finite = np.isfinite(expected) & np.isfinite(actual)
            same_class = ((np.isnan(expected) & np.isnan(actual)) | (expected == actual))
            if np.any(~finite & ~same_class & ~borderline):
                problem = f"{name}: NaN/inf pattern differs"
            with np.errstate(invalid="ignore"):
                diff = (np.abs(actual - expected) - slack) / np.maximum(1.0, np.abs(expected))
            diff = diff[finite & ~borderline]
            if diff.size:
                worst = max(worst, float(diff.max()))
        tolerance = 1e-5
        if os.path.exists(stem + ".tolerance"):
            with open(stem + ".tolerance") as f:
                tolerance = float(f.read())
        ok = worst <= tolerance and not problem
        failed += not ok
        rows.append((plan, "ok" if ok else "FAIL", f"{worst:.2e} {problem}"))
    print("| case | result | max scaled error |\n| --- | --- | --- |")
    for row in rows:
        print(f"| {row[0]} | {row[1]} | {row[2]} |")
    print(f"{len(rows) - failed}/{len(rows)} cases within their tolerance "
          f"(1e-5, or the case's .tolerance)")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
