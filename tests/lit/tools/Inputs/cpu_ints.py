"""Inputs for cpu-integer-and-16bit.test and the comparison of the compiled
plan's outputs with the evaluator's.

`make DIR` writes the inputs; `compare RUN.npy EVAL.npy` checks that two
integer outputs are equal.
"""
import sys

import numpy as np


def make(directory):
    rng = np.random.default_rng(14)
    a = rng.integers(-2**31, 2**31, size=64, dtype=np.int64).astype(np.int32)
    b = rng.integers(-5, 6, size=64).astype(np.int32)
    a[:4] = [-2**31, -2**31, 7, -7]
    b[:4] = [-1, 0, -2, 2]
    np.save(f"{directory}/a.npy", a)
    np.save(f"{directory}/b.npy", b)
    big = rng.integers(-2**62, 2**62, size=(4, 16), dtype=np.int64)
    np.save(f"{directory}/big.npy", big)
    np.save(f"{directory}/empty.npy", np.zeros((3, 0), np.int32))
    np.save(f"{directory}/p.npy", np.array([False, True, False, True]))
    np.save(f"{directory}/q.npy", np.array([False, False, True, True]))
    np.save(f"{directory}/wide.npy",
            np.array([1 + 2**-8 + 2**-30, 1 + 2**-8 - 2**-30, 3.14159,
                      -1e300, np.nan]))


def compare(run, evaluated):
    got, want = np.load(run), np.load(evaluated)
    bad = (got != want) if got.shape == want.shape else np.ones(1, bool)
    print(f"{run}: {int(bad.sum())} of {want.size} differ")


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(sys.argv[2])
    else:
        compare(sys.argv[2], sys.argv[3])
