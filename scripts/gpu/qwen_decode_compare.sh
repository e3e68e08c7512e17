#!/usr/bin/env bash
# Qwen2.5-0.5B-shaped batch-1 decode of several Genesis plans, then
# gpt-fast-style PyTorch, in one device call (issue 15's same-call ratios).
#
# usage: qwen_decode_compare.sh CARRY RUN... 
#   CARRY holds bin/genesis-generate-runtime, bin/genesis-run, lib/ (the
#   runtime's shared libraries) and one directory per plan
#   (genesis-generate --compile-only --target=cuda --dtype=T --out CARRY/DIR);
#   CARRY/cases, if present, holds GPU cases checked first (check_cases.py).
#   RUN is DIR:DTYPE[:OPTION], OPTION one of
#     profile  also decode once with every step timed alone (no graph)
#     nopdl    GENESIS_CUDA_PDL=0: kernels launched without programmatic
#              dependent launch
#     hostgreedy  --host-greedy: greedy tokens picked on the host from the
#              logits (decode), not on the device (decode_greedy)
#   SKIP_TORCH=1 leaves PyTorch out.
set -u
scripts=$(cd "$(dirname "$0")" && pwd)
carry=$(cd "$1" && pwd)
shift
export LD_LIBRARY_PATH=$carry/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
if [ -d "$carry/cases" ]; then
  echo "== cases"
  python3 "$scripts/check_cases.py" "$carry/cases" "$carry/bin/genesis-run" 2>&1 | tail -12
fi
for run in "$@"; do
  IFS=: read -r plan dtype option <<< "$run:"
  echo "== decode $plan ($dtype) ${option:-}"
  env ${option:+$([ "$option" = nopdl ] && echo GENESIS_CUDA_PDL=0)} \
    ${option:+$([ "$option" = profile ] && echo QWEN_PROFILE=1)} \
    ${option:+$([ "$option" = hostgreedy ] && echo QWEN_ARGS=--host-greedy)} \
    QWEN_DTYPE="$dtype" QWEN_PLAN="$carry/$plan/generate.gplan" \
    python3 "$scripts/qwen_decode_bench.py" "$carry" 2>&1 |
    grep -v "Writing model" |
    grep -E "^  |prefill|slowest|by step|Genesis|transformers|greedy|Error|error" | head -45
done
[ -n "${SKIP_TORCH:-}" ] && exit 0
echo "== torch"
python3 "$scripts/qwen_decode_torch.py" 2>&1 | tail -8
