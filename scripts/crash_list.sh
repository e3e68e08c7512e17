#!/usr/bin/env bash
# Re-runs the inputs of issue 14's crash hunt ("No crash, no silently wrong
# answer") with the built tools and prints, for each, the exit status and the
# first line of the tool's output: every case must end with 0 (a right
# answer) or 1/2 (a clear error), never a signal (>= 128) or a timeout (124).
# usage: scripts/crash_list.sh [BUILD_DIR]
set -uo pipefail
cd "$(dirname "$0")/.."
bin=$(realpath "${1:-build}")/bin
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
bad=0
run() { # NAME COMMAND...
  local name=$1
  shift
  timeout 60 "$@" > out.txt 2>&1
  local rc=$?
  local line
  line=$(grep -v '^\s*$' out.txt | grep -iE 'error|refus|wrote|= |must|not ' | head -1 | cut -c1-150)
  [ -z "$line" ] && line=$(head -1 out.txt | cut -c1-150)
  [ "$rc" -ge 124 ] && bad=$((bad + 1))
  printf '| %s | %s | %s |\n' "$name" "$rc" "${line//|/\\|}"
}
mlir() { printf '%s\n' "$2" > "$1"; }
npy() { # FILE DESCR SHAPE: an .npy of zeros, or only a header when the
  # shape claims more than 1 MiB
  python3 - "$@" <<'EOF'
import ast, math, struct, sys
path, descr, shape = sys.argv[1:4]
header = ("{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape)).ljust(118) + "\n"
size = math.prod(ast.literal_eval(shape)) * int(descr[2:])
data = b"\0" * size if size <= 1 << 20 else b""
open(path, "wb").write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + data)
EOF
}
arg='{genesis.name = "x", genesis.role = "input"}'
echo "| case | exit | output |"
echo "| --- | --- | --- |"
mlir exp0.mlir "func.func @f(%x: tensor<3x0xf32> $arg) -> tensor<3x0xf32> { %0 = genesis.exp %x : tensor<3x0xf32>
  return %0 : tensor<3x0xf32> }"
run "exp of tensor<3x0xf32>: genesis-compile" "$bin/genesis-compile" exp0.mlir -o exp0.gplan
mlir tr0.mlir "func.func @f(%x: tensor<0x3xf32> $arg) -> tensor<3x0xf32> { %0 = genesis.transpose %x, [1, 0] : tensor<0x3xf32>
  return %0 : tensor<3x0xf32> }"
run "transpose of tensor<0x3xf32>: genesis-compile" "$bin/genesis-compile" tr0.mlir -o tr0.gplan
run "gpt2-plan --vocab 0" "$bin/gpt2-plan" --vocab 0 --layers 1 --heads 1 --width 8 --seq 4 --batch 1 --out gp
run "gpt2-plan --seq 0" "$bin/gpt2-plan" --vocab 16 --layers 1 --heads 1 --width 8 --seq 0 --batch 1 --out gp
mlir am0.mlir "func.func @f(%x: tensor<3x0xf32> $arg) -> tensor<3xi64> { %0 = genesis.argmax %x dim 1 : tensor<3x0xf32>
  return %0 : tensor<3xi64> }"
run "argmax over an empty dim: genesis-eval" "$bin/genesis-eval" am0.mlir
mlir take0.mlir "func.func @f(%x: tensor<0x3xf32> $arg, %i: tensor<2xi64> {genesis.name = \"i\", genesis.role = \"input\"}) -> tensor<2x3xf32> { %0 = genesis.take %x, %i axis 0 : tensor<0x3xf32>, tensor<2xi64>
  return %0 : tensor<2x3xf32> }"
run "take from tensor<0x3xf32>: genesis-compile" "$bin/genesis-compile" take0.mlir -o take0.gplan
mlir mm0.mlir "func.func @f(%a: tensor<2x0xf32> {genesis.name = \"a\", genesis.role = \"input\"}, %b: tensor<0x3xf32> {genesis.name = \"b\", genesis.role = \"input\"}) -> tensor<2x3xf32> { %0 = genesis.matmul %a, %b : tensor<2x0xf32>, tensor<0x3xf32>
  return %0 : tensor<2x3xf32> }"
npy a.npy '<f4' '(2, 0)'; npy b.npy '<f4' '(0, 3)'
"$bin/genesis-compile" mm0.mlir -o mm0.gplan > /dev/null 2>&1
run "matmul with K = 0: genesis-run" "$bin/genesis-run" mm0.gplan -i a.npy -i b.npy
mlir big.mlir "func.func @f(%x: tensor<f32> $arg) -> tensor<1099511627776xf32> { %0 = genesis.broadcast_in_dim %x, [] : tensor<f32> -> tensor<1099511627776xf32>
  return %0 : tensor<1099511627776xf32> }"
npy s.npy '<f4' '()'
run "broadcast to 2^40 elements: genesis-eval" "$bin/genesis-eval" big.mlir -i s.npy
npy huge.npy '<f4' '(3, 2147483648)'
mlir id.mlir "func.func @f(%x: tensor<3x2147483648xf32> $arg) -> tensor<3x2147483648xf32> { return %x : tensor<3x2147483648xf32> }"
run ".npy claiming f32[3, 2^31]: genesis-eval" "$bin/genesis-eval" id.mlir -i huge.npy
mlir loss.mlir "func.func @loss(%w: tensor<4xf32> {genesis.name = \"w\", genesis.role = \"parameter\"}) -> tensor<f32> { %0 = genesis.reduce_sum %w dims [0] : tensor<4xf32>
  return %0 : tensor<f32> }"
run "train step accumulation=2000000" "$bin/genesis-opt" loss.mlir '--genesis-train-step=accumulation=2000000'
run "train step accumulation=2^62" "$bin/genesis-opt" loss.mlir '--genesis-train-step=accumulation=4611686018427387904'
run "train step beta1=1" "$bin/genesis-opt" loss.mlir '--genesis-train-step=optimizer=adamw beta1=1'
run "train step beta2=1.0" "$bin/genesis-opt" loss.mlir '--genesis-train-step=optimizer=adamw beta2=1.0'
run "train step momentum=-1" "$bin/genesis-opt" loss.mlir '--genesis-train-step=optimizer=sgd momentum=-1'
run "train step nesterov with dampening" "$bin/genesis-opt" loss.mlir '--genesis-train-step=optimizer=sgd momentum=0.9 nesterov=true dampening=0.5'
run "train step weight-decay=nan" "$bin/genesis-opt" loss.mlir '--genesis-train-step=optimizer=adamw weight-decay=nan'
run "train step clip-grad-norm=-1" "$bin/genesis-opt" loss.mlir '--genesis-train-step=optimizer=adamw clip-grad-norm=-1'
mlir sm.mlir "func.func @f(%x: tensor<1x1073741824xf32> $arg) -> tensor<1x1073741824xf32> { %0 = genesis.softmax %x dim 1 : tensor<1x1073741824xf32>
  return %0 : tensor<1x1073741824xf32> }"
run "cuda softmax of a 2^30 row: compile time" "$bin/genesis-compile" sm.mlir --target=cuda -o sm.gplan
mlir sm0.mlir "func.func @f(%x: tensor<0x4294967296xf32> $arg) -> tensor<0x4294967296xf32> { %0 = genesis.softmax %x dim 1 : tensor<0x4294967296xf32>
  return %0 : tensor<0x4294967296xf32> }"
run "cuda softmax of tensor<0x2^32>" "$bin/genesis-compile" sm0.mlir --target=cuda -o sm0.gplan
run "lm-compile --layers=100000" "$bin/lm-compile" --layers=100000 --out lm
run "genesis-opt /dev/zero" "$bin/genesis-opt" /dev/zero
run "cat /dev/zero into genesis-opt (a pipe)" bash -c "cat /dev/zero | \"$bin/genesis-opt\""
run "gpt2-plan --layers=-1" "$bin/gpt2-plan" --layers=-1 --out gp
run "genesis-generate --max-len=-1" "$bin/genesis-generate" --random gpt2-tiny --max-len=-1 --prompt hi
run "lm-train --min-lr -1" "$bin/lm-train" --min-lr -1
run "lm-train --warmup -5" "$bin/lm-train" --warmup -5
run "lm-train --weight-decay -1" "$bin/lm-train" --weight-decay -1
python3 -c "print('func.func @f(%x: tensor<4xf32> {genesis.name = \"x\", genesis.role = \"input\"}) -> tensor<4xf32> {'); [print(f'  %v{i+1} = genesis.add %v{i}, %v{i} : tensor<4xf32>'.replace('%v0', '%x')) for i in range(30000)]; print('  return %v30000 : tensor<4xf32>\n}')" > chain.mlir
run "chain of 30,000 adds: genesis-compile" "$bin/genesis-compile" chain.mlir -o chain.gplan
python3 -c "
import struct
deep = '[' * 100000 + ']' * 100000
header = ('{\"x\": ' + deep + '}').encode()
open('deep.safetensors', 'wb').write(struct.pack('<Q', len(header)) + header)
import os; os.makedirs('deepmodel', exist_ok=True)
open('deepmodel/config.json', 'w').write('{\"a\": ' + deep + '}')
open('deep-tokenizer.json', 'w').write('{\"model\": ' + deep + '}')"
run "safetensors header nested 100,000 deep" "$bin/genesis-eval" id.mlir -i deep.safetensors
run "config.json nested 100,000 deep" "$bin/genesis-generate" --model deepmodel --prompt hi
run "tokenizer.json nested 100,000 deep" "$bin/genesis-generate" --random gpt2-tiny --tokenizer deep-tokenizer.json --prompt hi
mkdir -p dirmodel/config.json
run "config.json that is a folder" "$bin/genesis-generate" --model dirmodel --prompt hi
run "genesis-generate --out /dev/null/x" "$bin/genesis-generate" --random gpt2-tiny --compile-only --out /dev/null/x
mlir dup.mlir "func.func @f(%a: tensor<2xf32> {genesis.name = \"x\", genesis.role = \"input\"}, %b: tensor<2xf32> {genesis.name = \"x\", genesis.role = \"input\"}) -> tensor<2xf32> { %0 = genesis.sub %a, %b : tensor<2xf32>
  return %0 : tensor<2xf32> }"
run "two arguments named x: genesis-compile" "$bin/genesis-compile" dup.mlir -o dup.gplan
cp exp0.mlir noext
run "--emit=exe of an input without extension" "$bin/genesis-compile" noext --emit=exe
cmp -s noext exp0.mlir && echo "| input without extension unchanged | 0 | yes |" || { echo "| input without extension unchanged | 1 | OVERWRITTEN |"; bad=$((bad + 1)); }
run "genesis-compile -o /dev/full" "$bin/genesis-compile" exp0.mlir -o /dev/full
npy x4.npy '<f4' '(4,)'
mlir one.mlir "func.func @f(%x: tensor<4xf32> $arg) -> tensor<4xf32> { %0 = genesis.exp %x : tensor<4xf32>
  return %0 : tensor<4xf32> }"
echo keep > first.npy
run "more -o files than results: genesis-eval" "$bin/genesis-eval" one.mlir -i x4.npy -o first.npy -o second.npy
grep -q keep first.npy && echo "| first -o file untouched | 0 | yes |" || { echo "| first -o file untouched | 1 | REPLACED |"; bad=$((bad + 1)); }
echo old > ro.gplan && chmod 0444 ro.gplan
run "-o onto a read-only file" "$bin/genesis-compile" one.mlir -o ro.gplan
mlir rope.mlir "func.func @loss(%x: tensor<4x8xf32> {genesis.name = \"x\", genesis.role = \"parameter\"}, %c: tensor<4x8xf32> {genesis.name = \"c\", genesis.role = \"input\"}) -> tensor<f32> { %0 = genesis.rope %x, %c, %c : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = genesis.reduce_sum %0 dims [0, 1] : tensor<4x8xf32>
  return %1 : tensor<f32> }"
"$bin/genesis-opt" rope.mlir --genesis-autodiff > rope-grad.mlir 2>&1
run "gradient of rope on rank 2: genesis-compile" "$bin/genesis-compile" rope-grad.mlir --function=loss_grad -o rope.gplan
mlir ln.mlir "func.func @loss(%x: tensor<4x1xf32> {genesis.name = \"x\", genesis.role = \"parameter\"}) -> tensor<f32> { %0 = genesis.layer_norm %x eps 1.0e-05 : tensor<4x1xf32>
  %1 = genesis.reduce_sum %0 dims [0, 1] : tensor<4x1xf32>
  return %1 : tensor<f32> }"
"$bin/genesis-opt" ln.mlir --genesis-autodiff > ln-grad.mlir 2>&1
run "gradient of layer_norm with last dim 1: genesis-compile" "$bin/genesis-compile" ln-grad.mlir --function=loss_grad -o ln.gplan
mlir rm.mlir "func.func @loss(%x: tensor<f32> {genesis.name = \"x\", genesis.role = \"parameter\"}) -> tensor<f32> { %0 = genesis.reduce_max %x dims [] : tensor<f32>
  return %0 : tensor<f32> }"
"$bin/genesis-opt" rm.mlir --genesis-autodiff > rm-grad.mlir 2>&1
run "gradient of reduce_max of rank 0: genesis-compile" "$bin/genesis-compile" rm-grad.mlir --function=loss_grad -o rm.gplan
echo "$bad case(s) ended with a signal, a timeout or a lost file"
[ "$bad" -eq 0 ]
