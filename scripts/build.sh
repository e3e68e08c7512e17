#!/usr/bin/env bash
# Configures (once) and builds Genesis into build/ with ninja and ccache.
# Extra arguments are passed to the first cmake configure.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -f build/build.ninja ]; then
  cmake -G Ninja -S . -B build -DCMAKE_BUILD_TYPE=Release "$@"
fi
ninja -C build -j"$(nproc)"
