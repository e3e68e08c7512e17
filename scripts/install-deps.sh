#!/usr/bin/env bash
# Installs everything Genesis needs on a fresh Debian 12 machine. Idempotent:
# packages already present are left alone, so a second run costs seconds.
set -euo pipefail

APT_PACKAGES=(
  cmake ninja-build ccache g++ git python3 python3-pip
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools
  libgtest-dev googletest
  nlohmann-json3-dev
  libflatbuffers-dev flatbuffers-compiler
  libopenblas-dev  # BLAS for the CPU runtime's GEMM steps
  pkg-config  # finds OpenBLAS
  libpcre2-dev libicu-dev  # the BPE tokenizer's pre-tokenizer patterns and NFC
  zlib1g-dev
  dataset-fashion-mnist
  gnuplot-nox  # the training programs' PNG plots
  clang-14 libclang-rt-14-dev  # libFuzzer targets of the plan and checkpoint readers
  clang-format clang-tidy  # scripts/lint.sh: style check (in the test suite) and MLIR's lint checks
  python3-numpy  # the evaluator's numpy cross-check runs under lit's /usr/bin/python3
)

missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

if [ "${#missing[@]}" -gt 0 ]; then
  echo "[install-deps] installing: ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "[install-deps] all apt packages present"
fi

# cudnn-frontend: cuDNN's C++ graph API, header-only, from its PyPI wheel
# (the fused attention steps of cuda plans; runtime/cuda/CudnnAttention.cpp).
# Installed beside the build, not into the system's Python.
CUDNN_FRONTEND_VERSION=1.32.0
CUDNN_FRONTEND_DIR="${GENESIS_DEPS_DIR:-$HOME/.cache/genesis}/cudnn-frontend-$CUDNN_FRONTEND_VERSION"
if [ ! -f "$CUDNN_FRONTEND_DIR/include/cudnn_frontend.h" ]; then
  echo "[install-deps] installing nvidia-cudnn-frontend==$CUDNN_FRONTEND_VERSION into $CUDNN_FRONTEND_DIR"
  python3 -m pip install -q --no-deps --target "$CUDNN_FRONTEND_DIR" \
    "nvidia-cudnn-frontend==$CUDNN_FRONTEND_VERSION"
else
  echo "[install-deps] cudnn-frontend $CUDNN_FRONTEND_VERSION present"
fi

echo "[install-deps] done"
