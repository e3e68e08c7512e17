#!/usr/bin/env bash
# Packs the differential fuzzer for the GPU machine's CPU cores (issue 14):
# genesis-diff-fuzz (stripped) and every shared library it loads, the loader
# and libc included (that machine runs another distribution), xz-compressed
# into gpu-fz/ (git-ignored). LLVM and MLIR alone exceed one carry (64 MiB),
# so the pack is two parts, carried by two calls made back to back (the
# machine stays warm 30 s): gpu-fz/a (libLLVM, libMLIR), then gpu-fz/b (the
# rest) with the run:
#   run: bash scripts/gpu/diff_fuzz.sh unpack            carry: gpu-fz/a
#   run: bash scripts/gpu/diff_fuzz.sh fuzz 4000 450 6000 carry: gpu-fz/b
# (per process 4000 graphs at most, 450 s, seeds 6000 + core).
set -euo pipefail
cd "$(dirname "$0")/../.."
ninja -C build genesis-diff-fuzz > /dev/null
exclude=$(git rev-parse --git-path info/exclude)
mkdir -p "$(dirname "$exclude")"
grep -qx "/gpu-fz/" "$exclude" 2>/dev/null || echo "/gpu-fz/" >> "$exclude"
rm -rf gpu-fz && mkdir -p gpu-fz/a gpu-fz/b
strip -o gpu-fz/genesis-diff-fuzz build/bin/genesis-diff-fuzz
xz -9 -c gpu-fz/genesis-diff-fuzz > gpu-fz/b/genesis-diff-fuzz.xz
rm gpu-fz/genesis-diff-fuzz
for lib in $(ldd build/bin/genesis-diff-fuzz | awk '/=>/ {print $3}') /lib64/ld-linux-x86-64.so.2; do
  case $(basename "$lib") in
  libLLVM* | libMLIR*) part=a ;;
  *) part=b ;;
  esac
  xz -9 -T2 -c "$lib" > "gpu-fz/$part/$(basename "$lib").xz"
done
du -sh gpu-fz/a gpu-fz/b
