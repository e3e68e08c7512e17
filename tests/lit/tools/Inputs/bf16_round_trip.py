"""Inputs and the expected bits of an f32 -> bf16 -> f32 round trip.

`make DIR` writes DIR/a.npy: random f32 bit patterns plus the hard cases
(ties to even both ways, the largest values that round to infinity or not,
subnormals, signed zeros, infinities, NaNs). `check DIR/a.npy OUT.npy...`
compares each output's bits with round-to-nearest-even computed here in
integers; NaNs only need to stay NaNs.
"""
import sys

import numpy as np


def make(directory):
    rng = np.random.default_rng(20261126)
    special = np.array(
        [0x3F808000, 0x3F818000, 0x3F807FFF, 0x3F808001,  # ties to even, near
         0x7F7FFFFF, 0x7F7F7FFF, 0x7F7F8000, 0x00000001,  # max, overflow, tiny
         0x007FFFFF, 0x80008000, 0x00000000, 0x80000000,  # subnormals, zeros
         0x7F800000, 0xFF800000, 0x7FC00000, 0x7F800001,  # infinities, NaNs
         0xFFFFFFFF, 0x3F7FFFFF],
        dtype=np.uint32)
    bits = rng.integers(0, 2**32, size=4096, dtype=np.uint64).astype(np.uint32)
    bits[:special.size] = special
    np.save(f"{directory}/a.npy", bits.view(np.float32))


def expected(values):
    bits = values.view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16
    return rounded.astype(np.uint32)


def check(inputs, outputs):
    a = np.load(inputs)
    want = expected(a)
    nan = np.isnan(a)
    for path in outputs:
        got = np.load(path).view(np.uint32)
        bad = ~nan & (got != want) | nan & ~np.isnan(got.view(np.float32))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            sys.exit(f"{path}: {int(bad.sum())} values differ; first at {i}: "
                     f"input {a.view(np.uint32)[i]:#010x} gave {got[i]:#010x}, "
                     f"want {want[i]:#010x}")
        print(f"{path}: all {a.size} round trips are round-to-nearest-even")


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(sys.argv[2])
    else:
        check(sys.argv[2], sys.argv[3:])
