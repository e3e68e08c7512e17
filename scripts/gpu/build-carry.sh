#!/usr/bin/env bash
# Builds everything here and writes gpu-carry/ (git-ignored, under 64 MiB):
# the runtime-only binaries (genesis-run, mlp-train, CudaSessionTest), the
# CUDA backend cases (plans, inputs, evaluator outputs) that CudaBackendTests
# writes, the benchmark plans, the MLP plans and the tiny-GPT train step
# (bench.py's GPT row) with their initial weights, GPT-2 124M's bf16 train
# step (gpt2_bench.py) and Fashion-MNIST. Then
# scripts/gpu/run.sh runs on the GPU machine:
#   device run: carry gpu-carry, command "scripts/gpu/run.sh gpu-carry"
set -euo pipefail
cd "$(dirname "$0")/../.."
./scripts/build.sh >/dev/null
BUILD=build
CARRY=gpu-carry
grep -qx "/$CARRY/" .git/info/exclude 2>/dev/null || echo "/$CARRY/" >> .git/info/exclude
rm -rf "$CARRY" && mkdir -p "$CARRY"/{bin,cases,bench,data,mlp,mlp4096,gpt,gpt124}
cp "$BUILD"/bin/{genesis-run,mlp-train,CudaSessionTest} "$CARRY"/bin/
GENESIS_GPU_CASES_DIR="$PWD/$CARRY/cases" "$BUILD"/bin/CudaBackendTests >/dev/null
for f in scripts/gpu/bench/*.mlir; do
  [ "$(basename "$f")" = cross_entropy.mlir ] && continue  # a loss: compiled with its gradient below
  "$BUILD"/bin/genesis-compile "$f" --target=cuda -o "$CARRY/bench/$(basename "${f%.mlir}").gplan" >/dev/null
done
# Cross-entropy forward and backward: the loss's gradient from genesis-autodiff.
"$BUILD"/bin/genesis-opt scripts/gpu/bench/cross_entropy.mlir --genesis-autodiff="function=loss wrt=x" \
  -o "$CARRY/bench/cross_entropy_grad.mlir"
"$BUILD"/bin/genesis-compile "$CARRY/bench/cross_entropy_grad.mlir" --target=cuda --function=loss_grad \
  -o "$CARRY/bench/cross_entropy_grad.gplan" >/dev/null
rm "$CARRY/bench/cross_entropy_grad.mlir"
"$BUILD"/bin/genesis-compile scripts/gpu/bench/gemm_f32.mlir --target=cuda --allow-tf32 \
  -o "$CARRY/bench/gemm_tf32.gplan" >/dev/null
"$BUILD"/bin/mlp-fashion-mnist --target=cuda --compile-only --out "$CARRY/mlp" >/dev/null
"$BUILD"/bin/mlp-fashion-mnist --target=cuda --compile-only --batch 4096 --out "$CARRY/mlp4096" >/dev/null
# bench.py builds the same model in PyTorch: keep its GPT sizes in step.
"$BUILD"/bin/gpt2-plan --target=cuda --layers 4 --heads 4 --width 256 --vocab 4096 \
  --seq 256 --batch 16 --out "$CARRY/gpt" >/dev/null
# GPT-2 124M in bf16 (scripts/gpu/gpt2_bench.py): its weights come from
# transformers on the GPU machine, so only the plan travels.
"$BUILD"/bin/gpt2-plan --target=cuda --precision=bf16 --layers 12 --heads 12 --width 768 \
  --vocab 50257 --seq 1024 --batch 16 --write-init=false --out "$CARRY/gpt124" >/dev/null
cp /usr/share/datasets/fashion-mnist/*.gz "$CARRY/data/"
du -sh "$CARRY"
