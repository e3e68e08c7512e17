#!/usr/bin/env bash
# The main job: installs what is missing, builds, then traces the Fashion-MNIST
# MLP, prints its genesis IR and runs it with the reference evaluator.
# Arguments go to the model program (see build/bin/mlp-fashion-mnist --help).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
./scripts/build.sh
exec build/bin/mlp-fashion-mnist "$@"
