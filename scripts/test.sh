#!/usr/bin/env bash
# The whole test suite on a fresh Debian 12 machine: installs what is missing,
# checks the C++ formatting (scripts/lint.sh), builds with -Wall -Wextra
# -Werror, runs every GoogleTest and lit test, runs them again built with
# ASan and UBSan, fuzzes every loader briefly, and prints the wall times.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
./scripts/install-deps.sh
./scripts/lint.sh
./scripts/build.sh
built=$(date +%s)
ctest --test-dir build --output-on-failure -j"$(nproc)"
tested=$(date +%s)
# The same unit and lit suite built with AddressSanitizer and UBSan in
# build-sanitize/ (GENESIS_SANITIZE_SUITE=0 skips it); warnings are the
# main build's business (GCC's instrumented code warns falsely of
# uninitialised values in LLVM's headers). -O1, as ASan's documentation
# advises: it compiles in about half the time of -O3. Leaks are not checked
# (LLVM's and the CUDA driver's allocations live as long as the process);
# allocations beyond memory return null, so that the out-of-memory tests see
# std::bad_alloc as without ASan; and LLVM's allocators may not poison
# memory, since Debian's uninstrumented libLLVM and libMLIR write what their
# code inlined into our instrumented objects poisoned (scripts/fuzz.sh).
if [ "${GENESIS_SANITIZE_SUITE:-1}" != 0 ]; then
  if [ ! -f build-sanitize/build.ninja ]; then
    cmake -G Ninja -S . -B build-sanitize -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_CXX_FLAGS_RELEASE="-O1 -DNDEBUG" \
      -DCMAKE_C_FLAGS_RELEASE="-O1 -DNDEBUG" \
      -DGENESIS_SANITIZE=ON -DGENESIS_WERROR=OFF
  fi
  ninja -C build-sanitize -j"$(nproc)"
  ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1:allow_user_poisoning=0 \
    UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir build-sanitize --output-on-failure -j"$(nproc)"
fi
sanitized=$(date +%s)
# A short fuzzing run of every loader (libFuzzer, ASan, UBSan); a crash
# fails the suite.
./scripts/fuzz.sh "${GENESIS_FUZZ_SECONDS:-15}"
end=$(date +%s)
echo "[test] build $((built - start)) s, tests $((tested - built)) s, sanitized build and tests $((sanitized - tested)) s, fuzzing $((end - sanitized)) s, total $(( (end - start) / 60 )) min $(( (end - start) % 60 )) s"
