#!/usr/bin/env bash
# The main job: installs what is missing, builds, then compiles the
# Fashion-MNIST MLP's training step to a plan (CUDA when a GPU and the CUDA
# toolkit are here, else CPU; --target picks) and trains it for 5 epochs
# (table, PNG plot and checkpoint in mlp-run/). Arguments go to the program
# (build/bin/mlp-fashion-mnist --help), e.g. --resume mlp-run/checkpoint.safetensors.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
./scripts/build.sh
exec build/bin/mlp-fashion-mnist "$@"
