#!/usr/bin/env python3
"""Extracts the sm_90 cubin of a cuda plan and counts, per kernel, the
128-bit global loads and stores in its SASS (cuobjdump -sass, on a machine
with the CUDA toolkit's cuobjdump). Usage: sass_check.py PLAN.gplan"""
import re
import struct
import subprocess
import sys
import tempfile

data = open(sys.argv[1], "rb").read()
start = data.find(b"\x7fELF")
if start < 0:
    sys.exit("no cubin (ELF image) in " + sys.argv[1])
# The image ends where the last of its sections, section table, program
# headers and program segments ends.
phoff, shoff = struct.unpack_from("<QQ", data, start + 0x20)
phentsize, phnum, shentsize, shnum = struct.unpack_from("<HHHH", data, start + 0x36)
end = max(shoff + shentsize * shnum, phoff + phentsize * phnum)
for i in range(shnum):
    kind, = struct.unpack_from("<I", data, start + shoff + i * shentsize + 4)
    offset, size = struct.unpack_from("<QQ", data, start + shoff + i * shentsize + 0x18)
    if kind != 8:  # SHT_NOBITS occupies no bytes
        end = max(end, offset + size)
for i in range(phnum):
    offset, _, _, size = struct.unpack_from("<QQQQ", data, start + phoff + i * phentsize + 8)
    end = max(end, offset + size)
cubin = data[start:start + end]
with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
    f.write(cubin)
    f.flush()
    run = subprocess.run(["cuobjdump", "-sass", f.name], capture_output=True,
                         text=True)
    if run.returncode != 0:
        sys.exit("cuobjdump failed: " + run.stderr.strip() + run.stdout[-300:])
    sass = run.stdout
kernel = None
counts = {}
for line in sass.splitlines():
    m = re.search(r"Function : (\S+)", line)
    if m:
        kernel = m.group(1)
        counts[kernel] = [0, 0]
    elif kernel and re.search(r"\bLDG\.E\.(128|ENL2\.256|128\.CONSTANT)", line):
        counts[kernel][0] += 1
    elif kernel and re.search(r"\bSTG\.E\.128", line):
        counts[kernel][1] += 1
print("| kernel | LDG.E.128 | STG.E.128 |\n| --- | --- | --- |")
for name, (loads, stores) in counts.items():
    print(f"| {name} | {loads} | {stores} |")
