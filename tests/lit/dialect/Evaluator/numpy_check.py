#!/usr/bin/env python3
"""Cross-checks every op of the genesis dialect in the reference evaluator
against an independent NumPy implementation of its spec (GenesisOps.td).

For each case the script writes a small .mlir function and fresh random
inputs (np.random with a fixed seed derived from the case name; random
inputs are never all zeros -- zeros, NaN or infinities appear only where a
case inserts them on purpose), runs `genesis-eval`, and compares every result
with a reference computed in float64 and then rounded to the result dtype.
It also checks the dtype and shape of every result.

Tolerances (the evaluator computes in f64 and rounds once; so does the
reference):
  EXACT  bitwise equality (NaN matches NaN; the sign of a zero must match).
         Used for ops whose f64 value is exact or correctly rounded before the
         single rounding to the result dtype: neg abs sign relu add sub mul div
         sqrt max min compare select cast not and or, every shape op, iota,
         take, scatter_add, reduce_max/min, argmax, constant, all_reduce,
         dropout (one division), sgd_update on f32/f16 (the reference
         evaluates the same f64 expression in the same order, so the single
         rounding agrees; f64 results use ULP1), and every integer/bool
         result.
         (+ - * / sqrt of f32/f16 operands are correctly rounded when computed
         in f64 and rounded to f32/f16, as 53 >= 2 * 24 + 2.)
  ULP1   transcendental and compound ops, where libm and NumPy, or two
         summation orders, may differ in the last f64 bit: for f32/f16/bf16
         results at most 1 ulp of the result dtype; for f64 results a
         relative error of at most 1e-12, the denominator floored at
         1e-3 * max|reference| of the tensor (cancellation to near-zero
         elements, e.g. 1 + tanh(..) of gelu-tanh at x ~ -3, amplifies the
         last-bit differences of libm and NumPy beyond 1e-12 relative).
         Used for exp log rsqrt tanh sigmoid gelu silu sin cos pow
         reduce_sum matmul softmax log_softmax layer_norm rms_norm rope
         attention decode_attention cross_entropy sgd_momentum_update
         adam_update
         adamw_update global_norm library_call fusion. (In practice every
         f32/f16 result of these matched exactly.)

bf16 cannot be stored in .npy (genesis-eval's .npy writer refuses it), so no
function here takes or returns bf16. bf16 is still covered inside the
functions: a case casts its f32/f64/i64 input to bf16, computes in bf16 and
casts back to f32 (exact), and the reference rounds to bf16 with its own
round-to-nearest-even (round_to_format below).

Prints "ok  <op> <dtype> max_rel_err=..." per case (the relative error uses
the same 1e-3 * max|reference| floor as the f64 tolerance) and exits non-zero
with a list of the failures. Runs in about 15 s (mostly process start-up).
"""

import argparse
import math
import os
import subprocess
import sys
import zlib

import numpy as np

F16, F32, F64 = np.float16, np.float32, np.float64
I32, I64, BOOL = np.int32, np.int64, np.bool_

MLIR_DTYPE = {
    np.dtype(F16): "f16", np.dtype(F32): "f32", np.dtype(F64): "f64",
    np.dtype(I32): "i32", np.dtype(I64): "i64", np.dtype(BOOL): "i1",
}

EXACT = "exact"
ULP1 = "ulp1"
BF16_EXACT = "bf16-exact"  # an f32 result holding bf16 values, exact
BF16_ULP1 = "bf16-ulp1"    # an f32 result holding bf16 values, <= 1 bf16 ulp


# ---------------------------------------------------------------------------
# Helpers: types, rounding
# ---------------------------------------------------------------------------

def ttype(shape, dtype):
    """MLIR tensor type of a shape and a NumPy dtype (or an MLIR name)."""
    name = dtype if isinstance(dtype, str) else MLIR_DTYPE[np.dtype(dtype)]
    dims = "".join(f"{d}x" for d in shape)
    return f"tensor<{dims}{name}>"


def ty(array):
    return ttype(array.shape, array.dtype)


def round_to_format(x, fraction_bits, emin, emax):
    """Rounds f64 values to a binary float format with `fraction_bits`
    explicit fraction bits and normal exponents [emin, emax], to nearest,
    ties to even, with subnormals and overflow to infinity. Exact: every
    intermediate is a power-of-two scaling of a double."""
    x = np.asarray(x, F64)
    with np.errstate(invalid="ignore", over="ignore"):
        _, e = np.frexp(x)
        lead = np.maximum(e - 1, emin)  # exponent of the leading bit
        quantum = lead - fraction_bits
        r = np.ldexp(np.rint(np.ldexp(x, -quantum)), quantum)
        largest = (2.0 - 2.0 ** -fraction_bits) * 2.0 ** emax
        r = np.where(np.abs(r) > largest, np.copysign(np.inf, x), r)
        return np.where(np.isfinite(x), r, x)


def bf16(x):
    """f64 -> bf16 (round to nearest even), returned as f32 values."""
    return round_to_format(x, 7, -126, 127).astype(F32)


def round_int(n, bits):
    """Python int rounded to `bits` significant bits, ties to even."""
    sign, m = (-1 if n < 0 else 1), abs(n)
    shift = m.bit_length() - bits
    if shift <= 0:
        return n
    q, r = divmod(m, 1 << shift)
    half = 1 << (shift - 1)
    if r > half or (r == half and q & 1):
        q += 1
    return sign * (q << shift)


def to_dtype(ref, dtype):
    """Rounds a float64 reference to `dtype` (NumPy's conversions to f32 and
    f16 from f64 are direct and correctly rounded)."""
    with np.errstate(over="ignore", invalid="ignore"):
        return np.asarray(ref, F64).astype(dtype)


def ordinal(a):
    """Maps floats to integers whose distance is the ulp distance."""
    itype = {2: np.int16, 4: np.int32, 8: np.int64}[a.dtype.itemsize]
    i = a.view(itype).astype(np.int64)
    lowest = np.int64(np.iinfo(itype).min)
    return np.where(i < 0, lowest - i, i)


def rel_err(got, ref):
    g, r = np.asarray(got, F64), np.asarray(ref, F64)
    both = np.isfinite(g) & np.isfinite(r)
    if not both.any():
        return 0.0
    scale = np.max(np.abs(r[both]))
    denom = np.maximum(np.abs(r[both]), max(scale * 1e-3, 1e-300))
    return float(np.max(np.abs(g[both] - r[both]) / denom))


def compare(got, ref, tol):
    """Returns (ok, max_rel_err, detail)."""
    if got.dtype != ref.dtype:
        return False, math.inf, f"dtype {got.dtype} != expected {ref.dtype}"
    if got.shape != ref.shape:
        return False, math.inf, f"shape {got.shape} != expected {ref.shape}"
    if got.dtype.kind in "biu":
        bad = got != ref
        err = 0.0 if not bad.any() else math.inf
        if bad.any():
            i = np.argwhere(bad)[0]
            return False, err, (f"{bad.sum()} elements differ, first at "
                                f"{tuple(i)}: got {got[tuple(i)]}, "
                                f"expected {ref[tuple(i)]}")
        return True, 0.0, ""
    err = rel_err(got, ref)
    nan_g, nan_r = np.isnan(got), np.isnan(ref)
    if (nan_g != nan_r).any():
        i = tuple(np.argwhere(nan_g != nan_r)[0])
        return False, err, f"NaN mismatch at {i}: got {got[i]}, expected {ref[i]}"
    g, r = got[~nan_g], ref[~nan_r]
    if tol == EXACT:
        bad = (g != r) | (np.signbit(g) != np.signbit(r))
    elif tol in (BF16_EXACT, BF16_ULP1):
        # bf16 values are f32 values whose 16 low bits are zero.
        low = (g.view(np.uint32) & 0xFFFF) != 0
        if low.any():
            return False, err, "result is not a bf16 value"
        limit = 0 if tol == BF16_EXACT else 1
        bad = np.abs(ordinal(g) - ordinal(r)) > limit * 65536
    elif tol == ULP1:
        if got.dtype == F64:
            gf, rf = g.astype(F64), r.astype(F64)
            scale = np.max(np.abs(rf)) if rf.size else 0.0
            denom = np.maximum(np.abs(rf), max(scale * 1e-3, 1e-300))
            with np.errstate(invalid="ignore"):
                bad = ~((gf == rf) | (np.abs(gf - rf) <= 1e-12 * denom))
        else:
            bad = np.abs(ordinal(g) - ordinal(r)) > 1
    else:
        raise ValueError(tol)
    if bad.any():
        k = int(np.argmax(bad))
        return False, err, (f"{int(bad.sum())}/{bad.size} elements off "
                            f"(tolerance {tol}); first: got {g.flat[k]!r}, "
                            f"expected {r.flat[k]!r}")
    return True, err, ""


# ---------------------------------------------------------------------------
# The harness
# ---------------------------------------------------------------------------

class Harness:
    def __init__(self, tool, workdir):
        self.tool = tool
        self.workdir = workdir
        self.passed = 0
        self.failures = []
        os.makedirs(workdir, exist_ok=True)

    @staticmethod
    def rng(name):
        return np.random.default_rng(zlib.crc32(name.encode()))

    def check(self, op, label, inputs, body, outs):
        """Runs `body` (MLIR lines reading %a0, %a1, ... bound to `inputs`)
        and compares each (ssa value, reference array, tolerance) of `outs`.
        The result types of the function are those of the references, so the
        verifier checks them against the op's shape rule."""
        case = f"{op} {label}"
        tag = "".join(c if c.isalnum() else "_" for c in case)
        mlir = os.path.join(self.workdir, tag + ".mlir")
        args = ", ".join(f"%a{i}: {ty(a)}" for i, a in enumerate(inputs))
        results = ", ".join(ty(r) for _, r, _ in outs)
        names = ", ".join(v for v, _, _ in outs)
        with open(mlir, "w") as f:
            f.write(f"func.func @main({args}) -> ({results}) {{\n")
            for line in body.strip().splitlines():
                f.write("  " + line.strip() + "\n")
            f.write(f"  return {names} : {results}\n}}\n")
        command = [self.tool, mlir, "-f", "main"]
        for i, a in enumerate(inputs):
            path = os.path.join(self.workdir, f"{tag}.in{i}.npy")
            np.save(path, a)
            command += ["-i", path]
        out_paths = [os.path.join(self.workdir, f"{tag}.out{i}.npy")
                     for i in range(len(outs))]
        for path in out_paths:
            if os.path.exists(path):
                os.remove(path)
            command += ["-o", path]
        proc = subprocess.run(command, capture_output=True, text=True)
        if proc.returncode != 0:
            self.fail(case, "genesis-eval failed: " + proc.stderr.strip())
            return None
        worst, problems, got_all = 0.0, [], []
        for i, ((_, ref, tol), path) in enumerate(zip(outs, out_paths)):
            got = np.load(path)
            got_all.append(got)
            ok, err, detail = compare(got, ref, tol)
            worst = max(worst, err)
            if not ok:
                problems.append(f"result #{i}: {detail}")
        if problems:
            self.fail(case, "; ".join(problems))
        else:
            self.passed += 1
            print(f"ok  {case} max_rel_err={worst:.3g}")
        return got_all

    def fail(self, case, message):
        self.failures.append(case)
        print(f"FAIL  {case}: {message}")

    def expect(self, case, condition, message, info=""):
        """A check computed by the script itself (self-tests, dropout
        statistics); `info` is printed after the usual fields."""
        if condition:
            self.passed += 1
            print(f"ok  {case} max_rel_err=0 {info}".rstrip())
        else:
            self.fail(case, message)


def f64(a):
    return np.asarray(a, F64)


def fa(x):
    """An f64 attribute value: MLIR float literals need a '.'; 17
    significant digits give back the same double."""
    return "%.16e" % x


def normal(rng, shape, dtype=F32, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(dtype)


def positive(rng, shape, dtype=F32, lo=0.05, hi=5.0):
    return rng.uniform(lo, hi, shape).astype(dtype)


# ---------------------------------------------------------------------------
# Reference implementations (float64)
# ---------------------------------------------------------------------------

_erf = np.vectorize(math.erf, otypes=[F64])


def gelu_erf(x):
    return x * 0.5 * (1.0 + _erf(x / math.sqrt(2.0)))


def gelu_tanh(x):
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) *
                                    (x + 0.044715 * x ** 3)))


def gelu_tanh_derivative(x):
    """d/dx gelu_tanh: (1 + t)/2 + x/2 (1 - t^2) c (1 + 3k x^2)."""
    c, k = math.sqrt(2.0 / math.pi), 0.044715
    t = np.tanh(c * (x + k * x ** 3))
    return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * c * (1.0 + 3.0 * k * x * x)


def sign_ref(x):
    with np.errstate(invalid="ignore"):
        return np.where(np.isnan(x), x, np.where(x > 0, 1.0,
                                                  np.where(x < 0, -1.0, 0.0)))


def relu_ref(x):
    with np.errstate(invalid="ignore"):
        return np.where(np.isnan(x) | (x > 0), x, 0.0)


def softmax_ref(x, axis):
    m = x.max(axis=axis, keepdims=True)
    e = np.exp(x - m)
    return e / e.sum(axis=axis, keepdims=True)


def log_softmax_ref(x, axis):
    m = x.max(axis=axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))


def attention_ref(q, k, v, mask, causal, scale):
    _, hq, s, _ = q.shape
    hkv, t = k.shape[1], k.shape[2]
    group = hq // hkv
    kk = np.repeat(k, group, axis=1)  # query head h reads kv head h // group
    vv = np.repeat(v, group, axis=1)
    scores = scale * (q @ kk.swapaxes(-1, -2))
    if mask is not None:
        scores = scores + mask
    if causal:
        i = np.arange(s)[:, None]
        j = np.arange(t)[None, :]
        scores = np.where(j <= i + t - s, scores, -np.inf)
    m = scores.max(axis=-1, keepdims=True)
    dead = ~np.isfinite(m) & (m < 0)
    m = np.where(dead, 0.0, m)
    p = np.where(dead, 0.0, np.exp(scores - m))
    total = p.sum(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = (p @ vv) / total
    return np.where(dead, 0.0, out)


def cross_entropy_ref(x, labels, ignore_index, smoothing, reduction):
    n, c = x.shape
    logp = log_softmax_ref(x, 1)
    losses = np.zeros(n)
    counted = 0
    for r in range(n):
        if labels[r] == ignore_index:
            continue
        nll = -logp[r, labels[r]]
        uniform = -logp[r].mean()
        losses[r] = (1 - smoothing) * nll + smoothing * uniform
        counted += 1
    if reduction == "none":
        return losses
    if reduction == "sum":
        return np.array(losses.sum())
    with np.errstate(invalid="ignore"):
        return np.array(losses.sum() / counted if counted else np.nan)


# Philox-4x32-10 (Salmon et al. 2011), written from the paper / Random123.
PHILOX_M0, PHILOX_M1 = 0xD2511F53, 0xCD9E8D57
PHILOX_W0, PHILOX_W1 = 0x9E3779B9, 0xBB67AE85
MASK32 = np.uint64(0xFFFFFFFF)


def philox4x32_10(counter, key):
    c0, c1, c2, c3 = (np.asarray(w, dtype=np.uint64) & MASK32 for w in counter)
    k0, k1 = np.uint64(key[0]), np.uint64(key[1])
    for _ in range(10):
        p0 = np.uint64(PHILOX_M0) * c0
        p1 = np.uint64(PHILOX_M1) * c2
        c0, c1, c2, c3 = ((p1 >> np.uint64(32)) ^ c1 ^ k0, p1 & MASK32,
                          (p0 >> np.uint64(32)) ^ c3 ^ k1, p0 & MASK32)
        k0 = (k0 + np.uint64(PHILOX_W0)) & MASK32
        k1 = (k1 + np.uint64(PHILOX_W1)) & MASK32
    return c0, c1, c2, c3


def philox_self_test():
    """Known-answer vectors of Random123 (kat_vectors, philox4x32 10)."""
    vectors = [
        ((0, 0, 0, 0), (0, 0), (0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8)),
        ((0xffffffff,) * 4, (0xffffffff, 0xffffffff),
         (0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd)),
        ((0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344),
         (0xa4093822, 0x299f31d0),
         (0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1)),
    ]
    for counter, key, expected in vectors:
        got = tuple(int(w) for w in philox4x32_10(counter, key))
        if got != expected:
            return False
    return True


def dropout_uniform(seed, offset, count):
    c = np.uint64(offset) + np.arange(count, dtype=np.uint64)
    key = (seed & 0xFFFFFFFF, (seed >> 32) & 0xFFFFFFFF)
    zero = np.zeros(count, np.uint64)
    w0, _, _, _ = philox4x32_10((c & MASK32, c >> np.uint64(32), zero, zero), key)
    return (w0 >> np.uint64(8)).astype(F64) * 2.0 ** -24


# ---------------------------------------------------------------------------
# The cases
# ---------------------------------------------------------------------------

def check_constant(h):
    rng = h.rng("constant")
    v32 = normal(rng, (2, 3), F32) * 100
    body_vals = ", ".join("[" + ", ".join(repr(float(x)) for x in row) + "]"
                          for row in v32)
    v64 = rng.standard_normal(4)
    vals64 = ", ".join(repr(float(x)) for x in v64)
    ints = rng.integers(-2**62, 2**62, 3)
    vals_i = ", ".join(str(int(x)) for x in ints)
    h.check("constant", "f32/f64/i64/i1/f16-splat", [], f"""
        %0 = genesis.constant dense<[{body_vals}]> : tensor<2x3xf32>
        %1 = genesis.constant dense<[{vals64}]> : tensor<4xf64>
        %2 = genesis.constant dense<[{vals_i}]> : tensor<3xi64>
        %3 = genesis.constant dense<[true, false, true]> : tensor<3xi1>
        %4 = genesis.constant dense<0.1> : tensor<2x2xf16>
        %5 = genesis.constant dense<0.1> : tensor<f32>
    """, [("%0", v32, EXACT), ("%1", v64, EXACT), ("%2", ints.astype(I64), EXACT),
          ("%3", np.array([True, False, True]), EXACT),
          ("%4", np.full((2, 2), F16("0.1")), EXACT),
          ("%5", np.array(F32("0.1")), EXACT)])


UNARY_FLOAT = [
    # op, reference, tolerance, input kind
    ("neg", lambda x: -x, EXACT, "normal"),
    ("abs", np.abs, EXACT, "normal"),
    ("sign", sign_ref, EXACT, "special"),
    ("exp", np.exp, ULP1, "normal"),
    ("log", np.log, ULP1, "positive"),
    ("sqrt", np.sqrt, EXACT, "positive"),
    ("rsqrt", lambda x: 1.0 / np.sqrt(x), ULP1, "positive"),
    ("tanh", np.tanh, ULP1, "normal"),
    ("sigmoid", lambda x: 1.0 / (1.0 + np.exp(-x)), ULP1, "normal"),
    ("relu", relu_ref, EXACT, "special"),
    ("gelu", gelu_erf, ULP1, "normal"),
    ("gelu approximate = erf", gelu_erf, ULP1, "normal"),
    ("gelu approximate = tanh", gelu_tanh, ULP1, "normal"),
    ("silu", lambda x: x / (1.0 + np.exp(-x)), ULP1, "normal"),
    ("sin", np.sin, ULP1, "wide"),
    ("cos", np.cos, ULP1, "wide"),
]


def unary_input(rng, kind, dtype):
    shape = (3, 17)
    if kind == "positive":
        return positive(rng, shape, dtype)
    if kind == "wide":
        return normal(rng, shape, dtype, scale=4.0)
    x = normal(rng, shape, dtype, scale=2.0)
    if kind == "special":
        x.flat[:4] = [0.0, -0.0, np.nan, -np.inf]
    return x


def check_unary(h):
    for op, ref, tol, kind in UNARY_FLOAT:
        for dtype in (F32, F64, F16):
            label = MLIR_DTYPE[np.dtype(dtype)]
            rng = h.rng(f"{op} {label}")
            x = unary_input(rng, kind, dtype)
            mnemonic, _, attr = op.partition(" ")
            with np.errstate(all="ignore"):
                expected = to_dtype(ref(f64(x)), dtype)
            attr = " " + attr if attr else ""
            h.check(op, label, [x],
                    f"%0 = genesis.{mnemonic} %a0{attr} : {ty(x)}",
                    [("%0", expected, tol)])
    # Integer unary ops wrap (two's complement): neg/abs of INT_MIN is INT_MIN.
    for dtype in (I32, I64):
        info = np.iinfo(dtype)
        for op, ref in (("neg", lambda x: -x), ("abs", np.abs),
                        ("sign", np.sign), ("relu", lambda x: np.maximum(x, 0))):
            rng = h.rng(f"{op} {dtype.__name__}")
            x = rng.integers(info.min, info.max, (4, 9), dtype=dtype,
                             endpoint=True)
            x.flat[:3] = [info.min, info.max, 0]
            with np.errstate(over="ignore"):
                expected = ref(x).astype(dtype)  # NumPy wraps like hardware
            h.check(op, MLIR_DTYPE[np.dtype(dtype)], [x],
                    f"%0 = genesis.{op} %a0 : {ty(x)}", [("%0", expected, EXACT)])
    rng = h.rng("not")
    b = rng.random((5, 7)) < 0.5
    h.check("not", "i1", [b], f"%0 = genesis.not %a0 : {ty(b)}",
            [("%0", ~b, EXACT)])


def check_binary(h):
    ops = [("add", np.add, EXACT), ("sub", np.subtract, EXACT),
           ("mul", np.multiply, EXACT), ("div", np.divide, EXACT),
           ("pow", np.power, ULP1), ("max", np.maximum, EXACT),
           ("min", np.minimum, EXACT)]
    for op, ref, tol in ops:
        for dtype in (F32, F64, F16):
            label = MLIR_DTYPE[np.dtype(dtype)]
            rng = h.rng(f"{op} {label}")
            if op == "pow":
                a = positive(rng, (4, 13), dtype, 0.1, 4.0)
                b = normal(rng, (4, 13), dtype, 2.0)
            else:
                a = normal(rng, (4, 13), dtype, 3.0)
                b = normal(rng, (4, 13), dtype, 3.0)
            if op in ("max", "min"):  # NaN in either operand gives NaN
                a.flat[0], b.flat[1] = np.nan, np.nan
                a.flat[2] = b.flat[2] = np.nan
            with np.errstate(all="ignore"):
                expected = to_dtype(ref(f64(a), f64(b)), dtype)
            h.check(op, label, [a, b],
                    f"%0 = genesis.{op} %a0, %a1 : {ty(a)}",
                    [("%0", expected, tol)])
    # Integers: full-range operands so add/sub/mul wrap; division truncates
    # toward zero.
    for dtype in (I32, I64):
        info = np.iinfo(dtype)
        label = MLIR_DTYPE[np.dtype(dtype)]
        for op in ("add", "sub", "mul", "div", "max", "min"):
            rng = h.rng(f"{op} {label}")
            a = rng.integers(info.min, info.max, (5, 11), dtype=dtype)
            b = rng.integers(info.min, info.max, (5, 11), dtype=dtype)
            if op == "div":
                b = rng.integers(-1000, 1000, (5, 11), dtype=dtype)
                b[b == 0] = 7
                a.flat[:4] = [7, -7, 7, -7]
                b.flat[:4] = [2, 2, -2, -2]
            with np.errstate(over="ignore"):
                if op == "add":
                    expected = a + b
                elif op == "sub":
                    expected = a - b
                elif op == "mul":
                    expected = a * b
                elif op == "div":
                    q = np.abs(a.astype(object)) // np.abs(b.astype(object))
                    sign = np.sign(a.astype(object)) * np.sign(b.astype(object))
                    expected = (q * sign).astype(dtype)
                elif op == "max":
                    expected = np.maximum(a, b)
                else:
                    expected = np.minimum(a, b)
            h.check(op, label, [a, b], f"%0 = genesis.{op} %a0, %a1 : {ty(a)}",
                    [("%0", expected.astype(dtype), EXACT)])
    rng = h.rng("and/or")
    a, b = rng.random((6, 5)) < 0.5, rng.random((6, 5)) < 0.5
    h.check("and", "i1", [a, b], f"%0 = genesis.and %a0, %a1 : {ty(a)}",
            [("%0", a & b, EXACT)])
    h.check("or", "i1", [a, b], f"%0 = genesis.or %a0, %a1 : {ty(a)}",
            [("%0", a | b, EXACT)])
    # bf16 arithmetic inside the function: f32 -> bf16, op, -> f32.
    rng = h.rng("bf16 arithmetic")
    a, b = normal(rng, (4, 16)), normal(rng, (4, 16))
    ab, bb = f64(bf16(a)), f64(bf16(b))
    t32, t16 = ty(a), ttype(a.shape, "bf16")
    h.check("add/mul/div/exp", "bf16 (via casts)", [a, b], f"""
        %0 = genesis.cast %a0 : {t32} to {t16}
        %1 = genesis.cast %a1 : {t32} to {t16}
        %2 = genesis.add %0, %1 : {t16}
        %3 = genesis.mul %0, %1 : {t16}
        %4 = genesis.div %0, %1 : {t16}
        %5 = genesis.exp %0 : {t16}
        %6 = genesis.cast %2 : {t16} to {t32}
        %7 = genesis.cast %3 : {t16} to {t32}
        %8 = genesis.cast %4 : {t16} to {t32}
        %9 = genesis.cast %5 : {t16} to {t32}
    """, [("%6", bf16(ab + bb), BF16_EXACT), ("%7", bf16(ab * bb), BF16_EXACT),
          ("%8", bf16(ab / bb), BF16_EXACT), ("%9", bf16(np.exp(ab)), BF16_ULP1)])


def check_compare_select(h):
    directions = {"eq": np.equal, "ne": np.not_equal, "lt": np.less,
                  "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal}
    for dtype in (F32, F16, F64, I32, I64):
        label = MLIR_DTYPE[np.dtype(dtype)]
        rng = h.rng(f"compare {label}")
        if np.dtype(dtype).kind == "f":
            a = normal(rng, (6, 8), dtype)
            b = normal(rng, (6, 8), dtype)
            b.flat[::5] = a.flat[::5]          # some equal pairs
            a.flat[1], b.flat[2] = np.nan, np.nan
            a.flat[3] = b.flat[3] = np.nan
            a.flat[4], b.flat[4] = 0.0, -0.0  # equal
        else:
            a = rng.integers(-5, 5, (6, 8), dtype=dtype)
            b = rng.integers(-5, 5, (6, 8), dtype=dtype)
        for direction, ref in directions.items():
            with np.errstate(invalid="ignore"):
                expected = ref(a, b)
            h.check("compare", f"{direction} {label}", [a, b],
                    f"%0 = genesis.compare {direction}, %a0, %a1 : {ty(a)}",
                    [("%0", expected, EXACT)])
    for dtype in (F32, I64, BOOL):
        label = MLIR_DTYPE[np.dtype(dtype)]
        rng = h.rng(f"select {label}")
        c = rng.random((3, 10)) < 0.5
        if dtype == BOOL:
            t, f = rng.random((3, 10)) < 0.5, rng.random((3, 10)) < 0.5
        elif dtype == I64:
            t = rng.integers(-2**62, 2**62, (3, 10))
            f = rng.integers(-2**62, 2**62, (3, 10))
        else:
            t, f = normal(rng, (3, 10)), normal(rng, (3, 10))
        h.check("select", label, [c, t, f],
                f"%0 = genesis.select %a0, %a1, %a2 : {ty(c)}, {ty(t)}",
                [("%0", np.where(c, t, f), EXACT)])


def float_to_int_ref(x, dtype):
    info = np.iinfo(dtype)
    x = f64(x)
    with np.errstate(invalid="ignore"):
        t = np.trunc(np.nan_to_num(x, nan=0.0, posinf=np.inf, neginf=-np.inf))
        t = np.clip(t, float(info.min), float(info.max))
    out = np.empty(x.shape, dtype)
    for i, v in enumerate(t.flat):
        out.flat[i] = max(info.min, min(info.max, int(v)))
    return out


def check_cast(h):
    def cast(label, x, to_dtype_name, expected, tol=EXACT, via=None):
        to_type = ttype(x.shape, to_dtype_name)
        if via:  # x -> via -> to (the case checks the cast into `via`)
            mid = ttype(x.shape, via)
            body = f"""
                %0 = genesis.cast %a0 : {ty(x)} to {mid}
                %1 = genesis.cast %0 : {mid} to {to_type}"""
            h.check("cast", label, [x], body, [("%1", expected, tol)])
        else:
            h.check("cast", label, [x],
                    f"%0 = genesis.cast %a0 : {ty(x)} to {to_type}",
                    [("%0", expected, tol)])

    rng = h.rng("cast float")
    x32 = normal(rng, (5, 12), F32, 3.0)
    x64 = rng.standard_normal((5, 12)) * 3.0
    x16 = normal(rng, (5, 12), F16, 3.0)
    cast("f32->f64", x32, "f64", f64(x32))
    cast("f64->f32", x64, "f32", x64.astype(F32))
    cast("f64->f16", x64, "f16", x64.astype(F16))
    cast("f32->f16", x32, "f16", x32.astype(F16))
    cast("f16->f32", x16, "f32", x16.astype(F32))
    cast("f16->f64", x16, "f64", x16.astype(F64))
    big = x32 * np.float32(1e4)
    big.flat[:3] = [70000.0, -65520.0, 65519.0]  # f16 overflow and its edge
    cast("f32->f16 (overflow)", big, "f16", to_dtype(big, F16))
    # bf16: round-to-nearest-even from the exact source value.
    cast("f32->bf16", x32, "f32", bf16(x32), BF16_EXACT, via="bf16")
    y64 = x64.copy()
    # Direct rounding from f64: 1 + 2^-8 + 2^-40 rounds up in bf16, but via
    # f32 (1 + 2^-8, a tie) it would round to even (1.0).
    y64.flat[:4] = [1 + 2**-8 + 2**-40, -(1 + 2**-8 + 2**-40), 1 + 2**-8,
                    1 + 3 * 2**-8]
    cast("f64->bf16", y64, "f32", bf16(y64), BF16_EXACT, via="bf16")
    cast("bf16->f16", x32, "f16", to_dtype(bf16(x32), F16), EXACT, via="bf16")

    # float -> int truncates toward zero, saturates, NaN -> 0.
    rng = h.rng("cast float->int")
    xf = normal(rng, (4, 16), F32, 50.0)
    xf.flat[:12] = [-0.5, 0.5, -1.99, 1.99, np.nan, np.inf, -np.inf, 3e9,
                    -3e9, 2147483520.0, -2147483648.0, 1e20]
    cast("f32->i32", xf, "i32", float_to_int_ref(xf, I32))
    cast("f32->i64", xf, "i64", float_to_int_ref(xf, I64))
    xd = rng.standard_normal((3, 7)) * 1e3
    xd.flat[:4] = [2147483647.9, -2147483648.9, 9.3e18, -9.3e18]
    cast("f64->i32", xd, "i32", float_to_int_ref(xd, I32))
    cast("f64->i64", xd, "i64", float_to_int_ref(xd, I64))
    xh = normal(rng, (3, 7), F16, 100.0)
    xh.flat[:2] = [np.nan, -np.inf]
    cast("f16->i32", xh, "i32", float_to_int_ref(xh, I32))

    # int -> float rounds to nearest (ties to even), exactly.
    rng = h.rng("cast int->float")
    n64 = rng.integers(-2**62, 2**62, (4, 10), dtype=I64)
    n64.flat[:4] = [2**60 + 2**52 + 1, 2**24 + 1, 2**24 + 3, -(2**53 + 1)]
    exact32 = np.array([float(round_int(int(v), 24)) for v in n64.flat]
                       ).reshape(n64.shape).astype(F32)
    cast("i64->f32", n64, "f32", exact32)
    cast("i64->f64", n64, "f64",
         np.array([float(int(v)) for v in n64.flat]).reshape(n64.shape))
    exact_bf16 = np.array([float(round_int(int(v), 8)) for v in n64.flat]
                          ).reshape(n64.shape).astype(F32)
    cast("i64->bf16", n64, "f32", exact_bf16, BF16_EXACT, via="bf16")
    n32 = rng.integers(-2**31, 2**31, (4, 10), dtype=I32)
    cast("i32->f32", n32, "f32",
         np.array([float(round_int(int(v), 24)) for v in n32.flat]
                  ).reshape(n32.shape).astype(F32))
    s32 = rng.integers(-70000, 70000, (4, 10), dtype=I32)
    s32.flat[:3] = [65519, 65520, 2049]
    cast("i32->f16", s32, "f16", to_dtype(s32, F16))  # |v| < 2^53: exact f64
    cast("i32->i64", n32, "i64", n32.astype(I64))
    small = rng.integers(-2**31, 2**31, (4, 10), dtype=I64)
    cast("i64->i32", small, "i32", small.astype(I32))

    # Anything -> i1 is x != 0 (zeros inserted on purpose); i1 -> 0 or 1.
    rng = h.rng("cast i1")
    zf = normal(rng, (3, 8), F32)
    zf.flat[:4] = [0.0, -0.0, np.nan, 1e-45]
    cast("f32->i1", zf, "i1", zf != 0)
    zh = normal(rng, (3, 8), F16)
    zh.flat[:2] = [0.0, -0.0]
    cast("f16->i1", zh, "i1", zh != 0)
    zi = rng.integers(-3, 3, (3, 8), dtype=I32)
    cast("i32->i1", zi, "i1", zi != 0)
    zl = rng.integers(-3, 3, (3, 8), dtype=I64)
    zl.flat[0] = 2**40  # non-zero though its low 32 bits are zero
    cast("i64->i1", zl, "i1", zl != 0)
    bb = rng.random((3, 8)) < 0.5
    cast("i1->f32", bb, "f32", bb.astype(F32))
    cast("i1->i64", bb, "i64", bb.astype(I64))
    cast("i1->f16", bb, "f16", bb.astype(F16))


def check_shape_ops(h):
    rng = h.rng("shape ops")
    for dtype in (F32, I64, BOOL, F16):
        label = MLIR_DTYPE[np.dtype(dtype)]
        if dtype == BOOL:
            x = rng.random((2, 3, 4)) < 0.5
        elif dtype == I64:
            x = rng.integers(-2**62, 2**62, (2, 3, 4))
        else:
            x = normal(rng, (2, 3, 4), dtype)
        y = x.reshape(6, 4)
        h.check("reshape", label, [x],
                f"%0 = genesis.reshape %a0 : {ty(x)} -> {ty(y)}",
                [("%0", y, EXACT)])
        for perm in ([2, 0, 1], [1, 0, 2], [0, 2, 1]):
            y = x.transpose(perm)
            h.check("transpose", f"{label} {perm}", [x],
                    f"%0 = genesis.transpose %a0, {perm} : {ty(x)}",
                    [("%0", np.ascontiguousarray(y), EXACT)])
    x = normal(rng, (5, 7, 9))
    for start, limit, stride in (([0, 1, 2], [5, 6, 9], [2, 1, 3]),
                                 ([1, 0, 0], [4, 7, 9], [1, 3, 4]),
                                 ([4, 6, 8], [5, 7, 9], [3, 3, 3]),
                                 ([0, 0, 0], [5, 7, 9], [1, 1, 1])):
        ref = x[tuple(slice(s, l, st) for s, l, st in zip(start, limit, stride))]
        h.check("slice", f"f32 {start}:{limit}:{stride}", [x],
                f"%0 = genesis.slice %a0 start {start} limit {limit} "
                f"stride {stride} : {ty(x)}",
                [("%0", np.ascontiguousarray(ref), EXACT)])
    xi = rng.integers(-100, 100, (6, 5), dtype=I32)
    h.check("slice", "i32 strided", [xi],
            f"%0 = genesis.slice %a0 start [1, 0] limit [6, 5] stride [2, 2] "
            f": {ty(xi)}", [("%0", np.ascontiguousarray(xi[1:6:2, 0:5:2]), EXACT)])
    for dim in (0, 1, 2):
        shapes = [[2, 3, 4], [2, 3, 4], [2, 3, 4]]
        for i, extra in enumerate((1, 2, 3)):
            shapes[i][dim] = extra
        parts = [normal(rng, s) for s in shapes]
        h.check("concat", f"f32 dim {dim}", parts,
                f"%0 = genesis.concat %a0, %a1, %a2 dim {dim} : "
                + ", ".join(ty(p) for p in parts),
                [("%0", np.concatenate(parts, axis=dim), EXACT)])
    parts = [rng.integers(0, 9, (2, k), dtype=I64) for k in (1, 4)]
    h.check("concat", "i64 dim 1", parts,
            f"%0 = genesis.concat %a0, %a1 dim 1 : {ty(parts[0])}, {ty(parts[1])}",
            [("%0", np.concatenate(parts, axis=1), EXACT)])
    for xs, out, dims in (((3,), (2, 3, 4), [1]),
                          ((3, 1), (3, 5), [0, 1]),
                          ((1, 4), (2, 3, 4), [1, 2]),
                          ((2, 1, 4), (2, 5, 4), [0, 1, 2]),
                          ((), (2, 3), []),
                          ((4,), (4, 2), [0])):
        x = normal(rng, xs)
        shape = [1] * len(out)
        for i, d in enumerate(dims):
            shape[d] = xs[i]
        ref = np.broadcast_to(x.reshape(shape), out)
        h.check("broadcast_in_dim", f"f32 {list(xs)}->{list(out)} {dims}", [x],
                f"%0 = genesis.broadcast_in_dim %a0, {dims} : {ty(x)} -> "
                f"{ttype(out, F32)}", [("%0", np.ascontiguousarray(ref), EXACT)])
    for dtype, dim in ((I64, 0), (F32, 1), (I32, 2), (F16, 1)):
        shape = (3, 4, 5)
        ref = np.broadcast_to(
            np.arange(shape[dim]).reshape([-1 if d == dim else 1
                                           for d in range(3)]), shape)
        h.check("iota", f"{MLIR_DTYPE[np.dtype(dtype)]} dim {dim}", [],
                f"%0 = genesis.iota dim {dim} : {ttype(shape, dtype)}",
                [("%0", np.ascontiguousarray(ref).astype(dtype), EXACT)])


def check_take_scatter(h):
    rng = h.rng("take")
    table = normal(rng, (10, 4))
    ids = rng.integers(0, 10, (2, 3), dtype=I64)
    h.check("take", "f32 axis 0 (embedding)", [table, ids],
            f"%0 = genesis.take %a0, %a1 axis 0 : {ty(table)}, {ty(ids)}",
            [("%0", np.take(table, ids, axis=0), EXACT)])
    x = rng.integers(-50, 50, (3, 6, 2), dtype=I32)
    ids = rng.integers(0, 6, (4,), dtype=I32)
    h.check("take", "i32 axis 1", [x, ids],
            f"%0 = genesis.take %a0, %a1 axis 1 : {ty(x)}, {ty(ids)}",
            [("%0", np.take(x, ids, axis=1), EXACT)])
    x = normal(rng, (3, 5), F64)
    ids = rng.integers(0, 5, (2, 2), dtype=I64)
    h.check("take", "f64 axis 1 (last)", [x, ids],
            f"%0 = genesis.take %a0, %a1 axis 1 : {ty(x)}, {ty(ids)}",
            [("%0", np.take(x, ids, axis=1), EXACT)])

    # scatter_add: repeated indices must sum (reference: np.add.at in f64,
    # rounded once).
    for dtype, axis, shape, ids in (
            (F32, 0, (6, 4), np.array([[1, 3, 1], [1, 5, 3]])),
            (F64, 1, (2, 5, 3), np.array([4, 0, 4, 4])),
            (F16, 0, (4, 8), np.array([2, 2, 2, 2, 0])),
            (I64, 0, (5, 3), np.array([[0, 0], [4, 0]])),
            (I32, 1, (3, 4), np.array([1, 1, 3]))):
        label = MLIR_DTYPE[np.dtype(dtype)]
        rng = h.rng(f"scatter_add {label}")
        ids = ids.astype(I64 if dtype != I32 else I32)
        upd_shape = shape[:axis] + ids.shape + shape[axis + 1:]
        if np.dtype(dtype).kind == "f":
            base = normal(rng, shape, dtype)
            upd = normal(rng, upd_shape, dtype)
            acc = f64(base).copy()
            idx = [slice(None)] * axis + [ids]
            np.add.at(acc, tuple(idx), f64(upd))
            expected = to_dtype(acc, dtype)
        else:
            info = np.iinfo(dtype)
            base = rng.integers(info.min // 2, info.max // 2, shape, dtype=dtype)
            upd = rng.integers(info.min // 2, info.max // 2, upd_shape,
                               dtype=dtype)
            expected = base.copy()
            idx = [slice(None)] * axis + [ids]
            with np.errstate(over="ignore"):
                np.add.at(expected, tuple(idx), upd)  # wraps like hardware
        h.check("scatter_add", f"{label} axis {axis} repeated indices",
                [base, ids, upd],
                f"%0 = genesis.scatter_add %a0, %a1, %a2 axis {axis} : "
                f"{ty(base)}, {ty(ids)}, {ty(upd)}", [("%0", expected, EXACT)])
    # Sums of repeated rows where rounding after each addition would differ
    # from rounding the exact sum once: 1 + 2^-24 + 2^-24 (+ 0) in f32.
    base = np.ones((1, 3), F32)
    ids = np.array([0, 0], I64)
    upd = np.full((2, 3), 2.0 ** -24, F32)
    h.check("scatter_add", "f32 rounds once", [base, ids, upd],
            f"%0 = genesis.scatter_add %a0, %a1, %a2 axis 0 : "
            f"{ty(base)}, {ty(ids)}, {ty(upd)}",
            [("%0", np.full((1, 3), 1 + 2.0 ** -23, F32), EXACT)])


def check_reductions(h):
    for op, ref, tol in (("reduce_sum", np.sum, ULP1),
                         ("reduce_max", np.max, EXACT),
                         ("reduce_min", np.min, EXACT)):
        for dtype in (F32, F64, F16, I32, I64):
            label = MLIR_DTYPE[np.dtype(dtype)]
            rng = h.rng(f"{op} {label}")
            if np.dtype(dtype).kind == "f":
                x = normal(rng, (3, 4, 5), dtype)
            else:
                info = np.iinfo(dtype)
                x = rng.integers(info.min, info.max, (3, 4, 5), dtype=dtype)
            for dims, keep in (([1], False), ([0, 2], True), ([0, 1, 2], False),
                               ([2], True), ([], False)):
                kd = " keepdim" if keep else ""
                if np.dtype(dtype).kind == "f":
                    expected = to_dtype(ref(f64(x), axis=tuple(dims),
                                            keepdims=keep), dtype)
                else:
                    with np.errstate(over="ignore"):
                        expected = np.asarray(ref(x, axis=tuple(dims),
                                                  keepdims=keep)).astype(dtype)
                h.check(op, f"{label} dims {dims}{kd}", [x],
                        f"%0 = genesis.{op} %a0 dims {dims}{kd} : {ty(x)}",
                        [("%0", expected, tol)])
    rng = h.rng("reduce nan")
    x = normal(rng, (3, 6))
    x[1, 2] = np.nan
    for op, ref in (("reduce_max", np.max), ("reduce_min", np.min),
                    ("reduce_sum", np.sum)):
        h.check(op, "f32 NaN wins", [x],
                f"%0 = genesis.{op} %a0 dims [1] : {ty(x)}",
                [("%0", to_dtype(ref(f64(x), axis=1), F32), EXACT)])

    # argmax: ties go to the first occurrence; NaN counts as the largest.
    rng = h.rng("argmax")
    x = rng.integers(-3, 3, (4, 6, 5)).astype(F32)  # many ties
    x[0, 3, 1] = np.nan
    x[2, 1, 4] = np.nan
    x[2, 4, 4] = np.nan
    for dim, keep in ((0, False), (1, True), (2, False), (1, False)):
        kd = " keepdim" if keep else ""
        h.check("argmax", f"f32 dim {dim}{kd}", [x],
                f"%0 = genesis.argmax %a0 dim {dim}{kd} : {ty(x)}",
                [("%0", np.argmax(x, axis=dim, keepdims=keep).astype(I64),
                  EXACT)])
    xi = rng.integers(-3, 3, (5, 7), dtype=I32)
    h.check("argmax", "i32 dim 1", [xi], f"%0 = genesis.argmax %a0 dim 1 : {ty(xi)}",
            [("%0", np.argmax(xi, axis=1).astype(I64), EXACT)])
    xl = np.array([[2**53, 2**53 + 1, 5], [7, -2**62, 2**62 + 1]], I64)
    h.check("argmax", "i64 beyond 2^53", [xl],
            f"%0 = genesis.argmax %a0 dim 1 : {ty(xl)}",
            [("%0", np.argmax(xl, axis=1).astype(I64), EXACT)])
    xh = normal(rng, (3, 9), F16)
    h.check("argmax", "f16 dim 0", [xh], f"%0 = genesis.argmax %a0 dim 0 : {ty(xh)}",
            [("%0", np.argmax(xh, axis=0).astype(I64), EXACT)])


def check_matmul(h):
    cases = [((4, 5), (5, 3), False, False, F32),
             ((2, 4, 5), (2, 5, 3), False, False, F32),
             ((2, 5, 4), (2, 5, 3), True, False, F32),
             ((2, 4, 5), (2, 3, 5), False, True, F32),
             ((2, 3, 5, 4), (2, 3, 6, 5), True, True, F32),
             ((3, 4, 7), (3, 7, 2), False, False, F64),
             ((4, 9), (3, 9), False, True, F16)]
    for ls, rs, tl, tr, dtype in cases:
        rng = h.rng(f"matmul {ls} {rs} {tl} {tr}")
        a, b = normal(rng, ls, dtype), normal(rng, rs, dtype)
        x, y = f64(a), f64(b)
        if tl:
            x = x.swapaxes(-1, -2)
        if tr:
            y = y.swapaxes(-1, -2)
        flags = (" transpose_lhs" if tl else "") + (" transpose_rhs" if tr else "")
        h.check("matmul", f"{MLIR_DTYPE[np.dtype(dtype)]} {list(ls)}x{list(rs)}{flags}",
                [a, b], f"%0 = genesis.matmul %a0, %a1{flags} : {ty(a)}, {ty(b)}",
                [("%0", to_dtype(x @ y, dtype), ULP1)])


def check_softmax_norms(h):
    for op, ref in (("softmax", softmax_ref), ("log_softmax", log_softmax_ref)):
        for dtype in (F32, F64, F16):
            label = MLIR_DTYPE[np.dtype(dtype)]
            rng = h.rng(f"{op} {label}")
            x = normal(rng, (3, 5, 7), dtype, 3.0)
            for dim in (0, 1, 2):
                h.check(op, f"{label} dim {dim}", [x],
                        f"%0 = genesis.{op} %a0 dim {dim} : {ty(x)}",
                        [("%0", to_dtype(ref(f64(x), dim), dtype), ULP1)])
        rng = h.rng(f"{op} large")
        x = normal(rng, (2, 6), F32, 1.0) + np.float32(1000.0)  # stability
        h.check(op, "f32 large logits", [x], f"%0 = genesis.{op} %a0 dim 1 : {ty(x)}",
                [("%0", to_dtype(ref(f64(x), 1), F32), ULP1)])

    for dtype in (F32, F64, F16):
        label = MLIR_DTYPE[np.dtype(dtype)]
        rng = h.rng(f"layer_norm {label}")
        x = normal(rng, (2, 3, 16), dtype, 2.0) + dtype(0.5)
        w, b = normal(rng, (16,), dtype), normal(rng, (16,), dtype)
        eps = 1e-5
        xd = f64(x)
        mean = xd.mean(-1, keepdims=True)
        var = ((xd - mean) ** 2).mean(-1, keepdims=True)
        norm = (xd - mean) / np.sqrt(var + eps)
        tx, tw = ty(x), ty(w)
        variants = [("weight+bias", [x, w, b], f"weight %a1 : {tw} bias %a2 : {tw}",
                     norm * f64(w) + f64(b)),
                    ("no affine", [x], "", norm),
                    ("weight only", [x, w], f"weight %a1 : {tw}", norm * f64(w)),
                    ("bias only", [x, b], f"bias %a1 : {tw}", norm + f64(b))]
        for name, inputs, operands, ref in variants:
            h.check("layer_norm", f"{label} {name}", inputs,
                    f"%0 = genesis.layer_norm %a0 {operands} eps 1.0e-05 : {tx}",
                    [("%0", to_dtype(ref, dtype), ULP1)])
        rng = h.rng(f"rms_norm {label}")
        x = normal(rng, (4, 3, 16), dtype, 2.0)
        w = normal(rng, (16,), dtype)
        xd = f64(x)
        ref = xd / np.sqrt((xd ** 2).mean(-1, keepdims=True) + 1e-6) * f64(w)
        h.check("rms_norm", label, [x, w],
                f"%0 = genesis.rms_norm %a0, %a1 eps 1.0e-06 : {ty(x)}, {ty(w)}",
                [("%0", to_dtype(ref, dtype), ULP1)])

    for dtype, shape in ((F32, (2, 3, 5, 8)), (F64, (4, 6)), (F16, (2, 4, 6))):
        label = MLIR_DTYPE[np.dtype(dtype)]
        rng = h.rng(f"rope {label}")
        x = normal(rng, shape, dtype)
        s, d = shape[-2], shape[-1]
        pos = np.arange(s)[:, None] * (10000.0 ** (-np.arange(d // 2) * 2 / d))
        ang = np.concatenate([pos, pos], axis=1) + rng.uniform(0, 1, (s, d))
        cos, sin = np.cos(ang).astype(dtype), np.sin(ang).astype(dtype)
        xd = f64(x)
        half = d // 2
        rot = np.concatenate([-xd[..., half:], xd[..., :half]], axis=-1)
        ref = xd * f64(cos) + rot * f64(sin)
        h.check("rope", label, [x, cos, sin],
                f"%0 = genesis.rope %a0, %a1, %a2 : ({ty(x)}, {ty(cos)}, "
                f"{ty(sin)}) -> {ty(x)}", [("%0", to_dtype(ref, dtype), ULP1)])


def check_attention(h):
    cases = [
        # name, B, Hq, Hkv, S, T, D, Dv, causal, mask, dtype
        ("plain", 2, 2, 2, 5, 5, 4, 3, False, False, F32),
        ("causal S=T", 1, 2, 2, 6, 6, 4, 4, True, False, F32),
        ("GQA Hq=4 Hkv=2", 2, 4, 2, 3, 5, 8, 6, False, False, F32),
        ("GQA causal S=3 T=7", 1, 4, 2, 3, 7, 4, 5, True, False, F32),
        ("causal S=5 T=3 (rows see no key)", 1, 2, 1, 5, 3, 4, 2, True, False, F32),
        ("GQA causal + mask", 2, 4, 2, 4, 6, 4, 3, True, True, F32),
        ("mask, not causal", 1, 2, 2, 3, 4, 2, 2, False, True, F32),
        ("GQA causal + mask", 1, 4, 2, 3, 5, 4, 3, True, True, F64),
        ("GQA causal", 1, 4, 2, 4, 4, 8, 8, True, False, F16),
    ]
    for name, b, hq, hkv, s, t, d, dv, causal, use_mask, dtype in cases:
        label = MLIR_DTYPE[np.dtype(dtype)]
        rng = h.rng(f"attention {name} {label}")
        q = normal(rng, (b, hq, s, d), dtype)
        k = normal(rng, (b, hkv, t, d), dtype)
        v = normal(rng, (b, hkv, t, dv), dtype)
        scale = 1.0 / math.sqrt(d) * 1.3
        inputs = [q, k, v]
        mask = None
        if use_mask:
            mask = normal(rng, (b, hq, s, t), dtype)
            mask[rng.random(mask.shape) < 0.2] = -np.inf
            mask[0, 1, 1, :] = -np.inf  # a row whose keys are all masked
            inputs.append(mask)
        ref = attention_ref(f64(q), f64(k), f64(v),
                            None if mask is None else f64(mask), causal, scale)
        out = np.zeros((b, hq, s, dv), dtype)
        extra = " mask %a3" if use_mask else ""
        extra += " causal" if causal else ""
        types = ", ".join(ty(a) for a in inputs)
        h.check("attention", f"{label} {name}", inputs,
                f"%0 = genesis.attention %a0, %a1, %a2{extra} scale {fa(scale)} : "
                f"({types}) -> {ty(out)}", [("%0", to_dtype(ref, dtype), ULP1)])


def check_decode_attention(h):
    # f32 query and mask; the cache f32 or f16, read widened (the reference
    # widens it exactly).
    cases = [
        # name, B, Hq, Hkv, S, T, D, Dv, causal, cache dtype
        ("GQA mask", 1, 6, 2, 1, 9, 8, 8, False, F16),
        ("causal S=2 mask", 2, 4, 2, 2, 7, 4, 6, True, F32),
    ]
    for name, b, hq, hkv, s, t, d, dv, causal, cache in cases:
        label = MLIR_DTYPE[np.dtype(cache)]
        rng = h.rng(f"decode_attention {name} {label}")
        q = normal(rng, (b, hq, s, d), F32)
        k = normal(rng, (b, hkv, t, d), cache)
        v = normal(rng, (b, hkv, t, dv), cache)
        mask = normal(rng, (b, hq, s, t), F32)
        mask[..., t - 3:] = -np.inf  # a decode step's empty cache positions
        mask[0, 1, 0, :] = -np.inf  # a row that sees no key
        scale = 1.0 / math.sqrt(d)
        ref = attention_ref(f64(q), f64(k), f64(v), f64(mask), causal, scale)
        out = np.zeros((b, hq, s, dv), F32)
        extra = " mask %a3" + (" causal" if causal else "")
        inputs = [q, k, v, mask]
        types = ", ".join(ty(a) for a in inputs)
        h.check("decode_attention", f"{label} cache {name}", inputs,
                f"%0 = genesis.decode_attention %a0, %a1, %a2{extra} scale "
                f"{fa(scale)} : ({types}) -> {ty(out)}",
                [("%0", to_dtype(ref, F32), ULP1)])


def check_cross_entropy(h):
    for dtype, label_dtype in ((F32, I64), (F64, I32), (F16, I64)):
        label = MLIR_DTYPE[np.dtype(dtype)]
        rng = h.rng(f"cross_entropy {label}")
        n, c = 9, 6
        x = normal(rng, (n, c), dtype, 2.0)
        y = rng.integers(0, c, (n,)).astype(label_dtype)
        y[[1, 4]] = -100
        for reduction, code in (("mean", 1), ("sum", 2), ("none", 0)):
            for smoothing in (0.0, 0.1):
                for ignore in (-100, 2):
                    yy = y.copy()
                    if ignore != -100:
                        yy[[1, 4]] = 3  # only the class-2 rows are ignored
                    ref = cross_entropy_ref(f64(x), yy, ignore, smoothing,
                                            reduction)
                    attrs = (f"{{ignore_index = {ignore} : i64, label_smoothing"
                             f" = {fa(smoothing)}, reduction = {code} : i32}}")
                    # 16-bit logits give an f32 loss (autocast's rule).
                    out = to_dtype(ref, F32 if dtype == F16 else dtype)
                    h.check("cross_entropy",
                            f"{label} {reduction} s={smoothing} ignore={ignore}",
                            [x, yy],
                            f"%0 = genesis.cross_entropy %a0, %a1 {attrs} : "
                            f"({ty(x)}, {ty(yy)}) -> {ty(out)}",
                            [("%0", out, ULP1)])
    # Default attributes (mean, ignore_index -100, no smoothing); all ignored.
    rng = h.rng("cross_entropy defaults")
    x = normal(rng, (4, 3))
    y = np.array([-100, -100, -100, -100], I64)
    h.check("cross_entropy", "f32 all rows ignored -> NaN", [x, y],
            f"%0 = genesis.cross_entropy %a0, %a1 : ({ty(x)}, {ty(y)}) -> "
            "tensor<f32>", [("%0", np.array(np.nan, F32), EXACT)])
    y = np.array([0, 2, 1, -100], I64)
    h.check("cross_entropy", "f32 default attributes", [x, y],
            f"%0 = genesis.cross_entropy %a0, %a1 : ({ty(x)}, {ty(y)}) -> "
            "tensor<f32>",
            [("%0", to_dtype(cross_entropy_ref(f64(x), y, -100, 0.0, "mean"),
                             F32), ULP1)])


def check_dropout(h):
    h.expect("dropout philox-4x32-10 known-answer self-test", philox_self_test(),
             "the script's own Philox implementation is wrong")
    # Big tensor: kept elements are x / (1 - p), dropped are 0, the kept
    # fraction is near 1 - p, and the mask is exactly the Philox one.
    for seed, offset, p, shape, dtype in (
            (0x123456789ABCDEF0, 12345, 0.3, (256, 256), F32),
            (42, 0, 0.5, (64, 64), F64),
            (2**63 - 25, 2**32 - 100, 0.1, (8, 25), F32),  # counter crosses 2^32
            (7, 5 * 2**32 + 3, 0.9, (4, 50), F16),
            (99, 0, 0.0, (3, 5), F32)):
        label = MLIR_DTYPE[np.dtype(dtype)]
        case = f"{label} p={p} seed={seed:#x} offset={offset}"
        rng = h.rng(f"dropout {case}")
        x = normal(rng, shape, dtype)
        s = np.array(seed, I64)
        u = dropout_uniform(seed, offset, x.size).reshape(shape)
        keep = u >= p
        ref = np.where(keep, f64(x) / (1.0 - p), 0.0)
        got = h.check("dropout", case, [x, s],
                      f"%0 = genesis.dropout %a0, %a1 {{probability = {fa(p)}, "
                      f"offset = {offset} : i64}} : ({ty(x)}, {ty(s)}) -> {ty(x)}",
                      [("%0", to_dtype(ref, dtype), EXACT)])
        if got is None:
            continue
        y = got[0]
        kept = y != 0
        scaled = to_dtype(f64(x) / (1.0 - p), dtype)
        ok_values = np.array_equal(y[kept], scaled[kept])
        fraction = kept.mean()
        sigma = math.sqrt(max(p * (1 - p), 1e-12) / x.size)
        h.expect(f"dropout {case} statistics",
                 ok_values and abs(fraction - (1 - p)) <= 5 * sigma,
                 f"kept values scaled: {ok_values}, kept fraction {fraction:.4f} "
                 f"vs {1 - p} (5 sigma = {5 * sigma:.4f})",
                 f"kept_fraction={fraction:.4f} (1-p={1 - p:.4g}, "
                 f"5 sigma={5 * sigma:.2g})")
    # Same seed and offset twice in one function: identical masks; another
    # offset: a different mask.
    rng = h.rng("dropout determinism")
    x = positive(rng, (32, 32))
    s = np.array(1234, I64)
    ref = [np.where(dropout_uniform(1234, off, x.size).reshape(x.shape) >= 0.5,
                    f64(x) * 2, 0.0).astype(F32) for off in (0, 0, 1024)]
    got = h.check("dropout", "determinism (same seed/offset, other offset)",
                  [x, s], f"""
        %0 = genesis.dropout %a0, %a1 {{probability = 0.5, offset = 0 : i64}} : ({ty(x)}, {ty(s)}) -> {ty(x)}
        %1 = genesis.dropout %a0, %a1 {{probability = 0.5, offset = 0 : i64}} : ({ty(x)}, {ty(s)}) -> {ty(x)}
        %2 = genesis.dropout %a0, %a1 {{probability = 0.5, offset = 1024 : i64}} : ({ty(x)}, {ty(s)}) -> {ty(x)}
    """, [("%0", ref[0], EXACT), ("%1", ref[1], EXACT), ("%2", ref[2], EXACT)])
    if got is not None:
        h.expect("dropout masks differ across offsets",
                 not np.array_equal(got[0] != 0, got[2] != 0),
                 "offset 0 and offset 1024 gave the same mask")


def check_optimizers(h):
    for dtype in (F32, F64, F16):
        label = MLIR_DTYPE[np.dtype(dtype)]
        rng = h.rng(f"sgd {label}")
        p, g = normal(rng, (5, 7), dtype), normal(rng, (5, 7), dtype)
        lr = np.array(0.05, F32)
        lrd = float(lr)
        tp = ty(p)
        for wd in (0.0, 0.01):
            ref = f64(p) - lrd * (f64(g) + wd * f64(p))
            # One rounding of an f64 expression whose intermediate products
            # may round in f64: exact for f32/f16 results except in
            # astronomically rare ties, so ULP1 is stated for f64.
            h.check("sgd_update", f"{label} wd={wd}", [p, g, lr],
                    f"%0 = genesis.sgd_update %a0, %a1, %a2 {{weight_decay = {fa(wd)}}} "
                    f": ({tp}, {tp}, tensor<f32>) -> {tp}",
                    [("%0", to_dtype(ref, dtype),
                      EXACT if dtype != F64 else ULP1)])

        # Momentum: step 1 sets buf = g (the given buffer is ignored); later
        # steps buf = momentum * buf + (1 - dampening) * g. The new buffer is
        # stored in the parameter dtype before it is used (as PyTorch does).
        rng = h.rng(f"sgd_momentum {label}")
        p, g, buf = (normal(rng, (4, 9), dtype) for _ in range(3))
        tp = ty(p)
        for step, damp, wd, nesterov in ((1, 0.0, 0.0, False), (1, 0.1, 0.01, True),
                                         (5, 0.1, 0.0, False), (3, 0.0, 0.02, True),
                                         (2, 0.0, 0.0, False)):
            if nesterov:
                damp = 0.0
            st = np.array(step, I64)
            gg = f64(g) + wd * f64(p)
            nb = gg if step == 1 else 0.9 * f64(buf) + (1 - damp) * gg
            nb_r = to_dtype(nb, dtype)
            d = gg + 0.9 * f64(nb_r) if nesterov else f64(nb_r)
            newp = to_dtype(f64(p) - lrd * d, dtype)
            attrs = f"momentum = 0.9, dampening = {fa(damp)}, weight_decay = {fa(wd)}"
            attrs += ", nesterov" if nesterov else ""
            h.check("sgd_momentum_update",
                    f"{label} step={step} damp={damp} wd={wd} nesterov={nesterov}",
                    [p, g, buf, lr, st],
                    f"%0, %1 = genesis.sgd_momentum_update %a0, %a1, %a2, %a3, %a4 "
                    f"{{{attrs}}} : ({tp}, {tp}, {tp}, tensor<f32>, tensor<i64>) "
                    f"-> ({tp}, {tp})",
                    [("%0", newp, ULP1), ("%1", nb_r, ULP1)])

        # Adam / AdamW: the new moments are stored in the parameter dtype
        # before the parameter update uses them (as PyTorch does).
        rng = h.rng(f"adam {label}")
        p, g = normal(rng, (6, 5), dtype), normal(rng, (6, 5), dtype)
        m = normal(rng, (6, 5), dtype, 0.1)
        v = positive(rng, (6, 5), dtype, 0.01, 0.5)
        tp = ty(p)
        for op in ("adam_update", "adamw_update"):
            for step, wd, b1, b2, eps in ((1, 0.0, 0.9, 0.999, 1e-8),
                                          (10, 0.01, 0.8, 0.99, 1e-6),
                                          (1000, 0.1, 0.9, 0.999, 1e-8)):
                st = np.array(step, I64)
                pp, gg = f64(p), f64(g)
                if op == "adamw_update":
                    pp = pp * (1 - lrd * wd)
                else:
                    gg = gg + wd * pp
                nm = to_dtype(b1 * f64(m) + (1 - b1) * gg, dtype)
                nv = to_dtype(b2 * f64(v) + (1 - b2) * gg * gg, dtype)
                c1, c2 = 1 - b1 ** step, 1 - b2 ** step
                denom = np.sqrt(f64(nv)) / math.sqrt(c2) + eps
                newp = to_dtype(pp - lrd / c1 * f64(nm) / denom, dtype)
                attrs = (f"beta1 = {fa(b1)}, beta2 = {fa(b2)}, epsilon = "
                         f"{fa(eps)}, weight_decay = {fa(wd)}")
                h.check(op, f"{label} step={step} wd={wd}", [p, g, m, v, lr, st],
                        f"%0, %1, %2 = genesis.{op} %a0, %a1, %a2, %a3, %a4, %a5 "
                        f"{{{attrs}}} : ({tp}, {tp}, {tp}, {tp}, tensor<f32>, "
                        f"tensor<i64>) -> ({tp}, {tp}, {tp})",
                        [("%0", newp, ULP1), ("%1", nm, ULP1), ("%2", nv, ULP1)])
    # Default attributes of adam (beta1 0.9, beta2 0.999, eps 1e-8, wd 0).
    rng = h.rng("adam defaults")
    p, g, m = (normal(rng, (3, 4)) for _ in range(3))
    v = positive(rng, (3, 4), F32, 0.01, 0.5)
    lr, st = np.array(0.001, F32), np.array(3, I64)
    nm = to_dtype(0.9 * f64(m) + 0.1 * f64(g), F32)
    nv = to_dtype(0.999 * f64(v) + 0.001 * f64(g) ** 2, F32)
    newp = to_dtype(f64(p) - float(lr) / (1 - 0.9 ** 3) * f64(nm) /
                    (np.sqrt(f64(nv)) / math.sqrt(1 - 0.999 ** 3) + 1e-8), F32)
    tp = ty(p)
    h.check("adam_update", "f32 default attributes", [p, g, m, v, lr, st],
            f"%0, %1, %2 = genesis.adam_update %a0, %a1, %a2, %a3, %a4, %a5 : "
            f"({tp}, {tp}, {tp}, {tp}, tensor<f32>, tensor<i64>) -> ({tp}, {tp}, {tp})",
            [("%0", newp, ULP1), ("%1", nm, ULP1), ("%2", nv, ULP1)])

    rng = h.rng("global_norm")
    a, b, c = normal(rng, (4, 8)), normal(rng, (8,), F64), normal(rng, (3, 3), F16)
    ref = math.sqrt(sum(float((f64(t) ** 2).sum()) for t in (a, b, c)))
    # An f64 input makes the result f64; otherwise it is f32.
    h.check("global_norm", "f32+f64+f16", [a, b, c],
            f"%0 = genesis.global_norm %a0, %a1, %a2 : {ty(a)}, {ty(b)}, {ty(c)}",
            [("%0", np.array(ref, F64), ULP1)])
    h.check("global_norm", "f32+f16", [a, c],
            f"%0 = genesis.global_norm %a0, %a1 : {ty(a)}, {ty(c)}",
            [("%0", np.array(math.sqrt(float((f64(a) ** 2).sum()) +
                                        float((f64(c) ** 2).sum())), F32), ULP1)])
    h.check("global_norm", "f32 single", [a],
            f"%0 = genesis.global_norm %a0 : {ty(a)}",
            [("%0", np.array(np.sqrt((f64(a) ** 2).sum()), F32), ULP1)])


def check_structure(h):
    rng = h.rng("all_reduce")
    x = normal(rng, (3, 5))
    xi = rng.integers(-100, 100, (4,), dtype=I32)
    h.check("all_reduce", "sum/mean f32/i32 (single rank: identity)", [x, xi], f"""
        %0 = genesis.all_reduce sum, %a0 : {ty(x)}
        %1 = genesis.all_reduce mean, %a0 : {ty(x)}
        %2 = genesis.all_reduce sum, %a1 : {ty(xi)}
    """, [("%0", x, EXACT), ("%1", x, EXACT), ("%2", xi, EXACT)])

    rng = h.rng("fusion")
    a, b = normal(rng, (4, 6)), normal(rng, (4, 6))
    t = ty(a)
    s = f64(a) + f64(b)
    s32 = to_dtype(s, F32)
    prod = to_dtype(f64(s32) * f64(a), F32)
    e = to_dtype(np.exp(f64(prod)), F32)
    h.check("fusion", "f32 two results", [a, b], f"""
        %0:2 = genesis.fusion %a0, %a1 : ({t}, {t}) -> ({t}, {t}) {{
        ^bb0(%x: {t}, %y: {t}):
          %s = genesis.add %x, %y : {t}
          %p = genesis.mul %s, %x : {t}
          %e = genesis.exp %p : {t}
          genesis.yield %s, %e : {t}, {t}
        }}
        %1 = genesis.neg %0#1 : {t}
    """, [("%0#0", s32, EXACT), ("%1", -e, ULP1)])

    cases = [("none", (5, 7), (7, 4), False, False, 1.0),
             ("bias", (5, 7), (4, 7), False, True, 0.5),
             ("relu", (7, 5), (7, 4), True, False, 1.0),
             ("bias_relu", (2, 5, 7), (2, 4, 7), False, True, 1.0),
             ("gelu", (5, 7), (7, 4), False, False, 2.0),
             ("bias_gelu", (7, 5), (4, 7), True, True, 0.75),
             ("dgelu", (5, 7), (4, 7), False, True, 1.5)]
    for epilogue, ls, rs, tl, tr, alpha in cases:
        for dtype in (F32, F64):
            label = MLIR_DTYPE[np.dtype(dtype)]
            rng = h.rng(f"library_call {epilogue} {label}")
            a, b = normal(rng, ls, dtype), normal(rng, rs, dtype)
            x, y = f64(a), f64(b)
            if tl:
                x = x.swapaxes(-1, -2)
            if tr:
                y = y.swapaxes(-1, -2)
            r = alpha * (x @ y)
            inputs = [a, b]
            flags = (" transpose_lhs" if tl else "") + (" transpose_rhs" if tr else "")
            if epilogue.startswith("bias"):
                bias = normal(rng, (r.shape[-1],), dtype)
                inputs.append(bias)
                flags += " bias %a2"
                r = r + f64(bias)
            if epilogue.endswith("relu"):
                r = np.maximum(r, 0.0)
            if epilogue == "dgelu":
                aux = normal(rng, r.shape, dtype)
                inputs.append(aux)
                flags += f" aux %a{len(inputs) - 1}"
                r = r * gelu_tanh_derivative(f64(aux))
            elif epilogue.endswith("gelu"):
                r = gelu_tanh(r)  # cuBLASLt's gelu is the tanh approximation
            out = to_dtype(r, dtype)
            types = ", ".join(ty(i) for i in inputs)
            h.check("library_call", f"{label} {epilogue} alpha={alpha}{flags}",
                    inputs,
                    f"%0 = genesis.library_call {epilogue} %a0, %a1{flags} "
                    f"{{alpha = {fa(alpha)}}} : ({types}) -> {ty(out)}",
                    [("%0", out, ULP1)])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--genesis-eval", default="genesis-eval")
    parser.add_argument("--workdir", required=True)
    args = parser.parse_args()
    h = Harness(args.genesis_eval, args.workdir)
    # Self-test of the reference rounding against NumPy's own f16/f32 casts.
    rng = h.rng("round_to_format")
    sample = np.concatenate([rng.standard_normal(4000) * 10.0 ** rng.integers(
        -9, 9, 4000), [1e-8, 6e-5, 65519.9, 65520.0, 1e39, -0.0]])
    h.expect("round_to_format self-test f16/f32",
             np.array_equal(round_to_format(sample, 10, -14, 15).astype(F16),
                            to_dtype(sample, F16)) and
             np.array_equal(round_to_format(sample, 23, -126, 127),
                            f64(to_dtype(sample, F32))),
             "the script's own rounding disagrees with NumPy")
    for group in (check_constant, check_unary, check_binary, check_compare_select,
                  check_cast, check_shape_ops, check_take_scatter,
                  check_reductions, check_matmul, check_softmax_norms,
                  check_attention, check_decode_attention,
                  check_cross_entropy, check_dropout,
                  check_optimizers, check_structure):
        group(h)
    total = h.passed + len(h.failures)
    print(f"numpy-check: {h.passed} of {total} checks passed, "
          f"{len(h.failures)} failed")
    if h.failures:
        print("failures:\n  " + "\n  ".join(h.failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
