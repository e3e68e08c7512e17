#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz with clang, AddressSanitizer and
# UBSan in build-fuzz/, generates their seed corpora, and runs each fuzzer for
# SECONDS (default 30). Exits non-zero if a fuzzer finds a crash; the input
# that caused it is saved under build-fuzz/fuzz-artifacts/.
#
# usage: scripts/fuzz.sh [SECONDS [FUZZER...]]  (default: every fuzzer)
# Set GENESIS_BUILD_LOCK to a lock file to hold it (flock) while building.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-30}
build=build-fuzz
fuzzers=(plan_loader_fuzzer safetensors_fuzzer npy_fuzzer tokenizer_fuzzer
         generation_config_fuzzer config_fuzzer mlir_fuzzer)
if [ $# -gt 1 ]; then fuzzers=("${@:2}"); fi

lock=()
if [ -n "${GENESIS_BUILD_LOCK:-}" ]; then lock=(flock "$GENESIS_BUILD_LOCK"); fi

# Instrumenting every object (fuzzer-no-link) gives libFuzzer coverage of the
# runtime itself, not only of the fuzz targets.
flags="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
if [ ! -f "$build/build.ninja" ]; then
  "${lock[@]}" cmake -G Ninja -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
    -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" \
    -DGENESIS_BUILD_FUZZERS=ON -DGENESIS_WERROR=OFF
fi
"${lock[@]}" ninja -C "$build" "${fuzzers[@]}" genesis-fuzz-corpus

corpus="$build/fuzz-corpus"
rm -rf "$corpus"
"$build/bin/genesis-fuzz-corpus" "$corpus"
# The text and array loaders start from the test data's files.
mkdir -p "$corpus/npy_fuzzer" "$corpus/tokenizer_fuzzer" \
  "$corpus/generation_config_fuzzer" "$corpus/config_fuzzer" \
  "$corpus/mlir_fuzzer"
for f in tests/data/hf/*/*.npy; do
  cp "$f" "$corpus/npy_fuzzer/$(echo "$f" | tr / _)"
done
cp tests/data/tokenizer/*_style.json "$corpus/tokenizer_fuzzer/"
for f in tests/data/hf/*/generation_config.json; do
  cp "$f" "$corpus/generation_config_fuzzer/$(echo "$f" | tr / _)"
done
for f in tests/data/hf/*/config.json; do
  cp "$f" "$corpus/config_fuzzer/$(echo "$f" | tr / _)"
done
# The .mlir files of the genesis lit tests (their RUN and CHECK lines are
# comments to the parser).
for f in tests/lit/dialect/IR/*.mlir tests/lit/passes/*.mlir; do
  cp "$f" "$corpus/mlir_fuzzer/$(echo "$f" | tr / _)"
done
mkdir -p "$build/fuzz-artifacts"
for fuzzer in "${fuzzers[@]}"; do
  echo "[fuzz] $fuzzer for $seconds s"
  # mlir_fuzzer: LLVM's allocators poison and unpoison their memory in code
  # inlined into our instrumented objects, which Debian's uninstrumented
  # libMLIR then writes: ASan would take that for a use after poisoning.
  options=()
  if [ "$fuzzer" = mlir_fuzzer ]; then options=(env ASAN_OPTIONS=allow_user_poisoning=0); fi
  "${options[@]}" "$build/bin/$fuzzer" "$corpus/$fuzzer" -max_total_time="$seconds" \
    -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
    -artifact_prefix="$build/fuzz-artifacts/$fuzzer-"
done
echo "[fuzz] no crashes"
