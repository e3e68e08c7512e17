#!/usr/bin/env bash
# The whole test suite on a fresh Debian 12 machine: installs what is missing,
# checks the C++ formatting (scripts/lint.sh), builds with -Wall -Wextra
# -Werror, runs every GoogleTest and lit test, and prints the wall time.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
./scripts/install-deps.sh
./scripts/lint.sh
./scripts/build.sh
built=$(date +%s)
ctest --test-dir build --output-on-failure -j"$(nproc)"
# A short fuzzing run of the plan loader and the safetensors/checkpoint
# reader (libFuzzer, ASan, UBSan); a crash fails the suite.
./scripts/fuzz.sh "${GENESIS_FUZZ_SECONDS:-15}"
end=$(date +%s)
echo "[test] build $((built - start)) s, tests $((end - built)) s, total $(( (end - start) / 60 )) min $(( (end - start) % 60 )) s"
