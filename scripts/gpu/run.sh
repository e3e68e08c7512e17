#!/usr/bin/env bash
# Runs on the GPU machine over a carry folder from build-carry.sh: the CUDA
# runtime tests, the CUDA backend cases against the evaluator, the MLP trained
# on Fashion-MNIST with the CUDA plan, and the benchmarks against PyTorch.
# Logs, tables and plots go to $OUT (or ./gpu-out); the tables print last.
set -uo pipefail
CARRY="${1:-gpu-carry}"
OUT="${OUT:-$PWD/gpu-out}"
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
status=0
echo "== CudaSessionTest"
"$CARRY"/bin/CudaSessionTest 2>&1 | tail -3 || status=1
echo "== CUDA backend cases vs the evaluator"
python3 scripts/gpu/check_cases.py "$CARRY/cases" "$CARRY/bin/genesis-run" > "$OUT/cases.md" || status=1
tail -1 "$OUT/cases.md"
echo "== MLP on Fashion-MNIST, CUDA plan, 5 epochs"
GENESIS_FASHION_MNIST_DIR="$CARRY/data" "$CARRY"/bin/mlp-train \
  "$CARRY/mlp/mlp.gplan" "$CARRY/mlp/init.safetensors" --out "$OUT/mlp" \
  > "$OUT/mlp.md" 2> "$OUT/mlp.log" || status=1
echo "== benchmarks"
timeout "${BENCH_SECONDS:-420}" python3 scripts/gpu/bench.py "$CARRY" "$OUT" > "$OUT/bench.log" 2>&1 || status=1
grep -v "^|" "$OUT/bench.log" | tail -15
echo; cat "$OUT/cases.md"
echo; cat "$OUT/mlp.md"
echo; grep "^|\|copy bandwidth" "$OUT/bench.log"
exit $status
