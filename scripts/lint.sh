#!/usr/bin/env bash
# Style and lint checks of Genesis's C++ code.
#   scripts/lint.sh            clang-format check of every tracked C++ file
#                              (.clang-format; fails on the first difference)
#   scripts/lint.sh --tidy [FILES...]
#                              also clang-tidy (.clang-tidy, MLIR's checks)
#                              on FILES, default every tracked .cpp file;
#                              needs build/compile_commands.json
#                              (scripts/build.sh writes it).
# scripts/test.sh runs the clang-format check; clang-tidy over every file
# takes most of an hour on two cores, so it runs on request.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t sources < <(git ls-files '*.cpp' '*.h' '*.c')
clang-format --dry-run --Werror "${sources[@]}"
echo "[lint] clang-format: ${#sources[@]} files formatted"
if [ "${1:-}" = "--tidy" ]; then
  shift
  if [ $# -gt 0 ]; then
    files=("$@")
  else
    mapfile -t files < <(git ls-files '*.cpp' | grep -v '^tests/fuzz/')
  fi
  run-clang-tidy-14 -quiet -p build -j "$(nproc)" "${files[@]}"
  echo "[lint] clang-tidy: ${#files[@]} files clean"
fi
