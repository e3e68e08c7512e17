#!/usr/bin/env bash
# Runs on the GPU machine: a compiler change measured before and after in one
# lease. CARRY holds the new compiler's plans and binaries (build-carry.sh);
# BEFORE the same plans compiled by an earlier compiler (same folder layout:
# bench/, mlp4096/, gpt124/). Prints, tables last:
#   - CudaSessionTest and the CUDA backend cases against the evaluator;
#   - bench.py's memory-bound kernel and MLP rows, with a "before" column;
#   - GPT-2 124M bf16 (gpt2_bench.py) with a "Genesis before" row.
# usage: scripts/gpu/before_after.sh CARRY BEFORE   (OUT: the output folder)
set -uo pipefail
CARRY="$1"
BEFORE="$2"
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
echo "== memory-bound kernels and the MLP train step, before and after"
GENESIS_BEFORE="$BEFORE" \
  BENCH_ROWS='^(elementwise|softmax|log_softmax|layer_norm|rms_norm|cross_entropy|MLP)' \
  timeout 400 python3 scripts/gpu/bench.py "$CARRY" "$OUT" > "$OUT/bench.log" 2>&1 || status=1
echo "== GPT-2 124M bf16, before and after"
GPT2_BEFORE_PLAN="$BEFORE/gpt124/gpt.gplan" timeout 400 \
  python3 scripts/gpu/gpt2_bench.py "$CARRY" "$OUT" > "$OUT/gpt2.log" 2>&1 || status=1
echo; grep "^|\|copy bandwidth\|failed" "$OUT/bench.log"
echo; grep -A8 "^GPT-2 124M train step" "$OUT/gpt2.log"; grep "failed\|Error" "$OUT/gpt2.log"
exit $status
