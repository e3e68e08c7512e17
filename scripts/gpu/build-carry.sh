#!/usr/bin/env bash
# Builds everything here and writes gpu-carry/ (git-ignored): the
# runtime-only binaries (genesis-run, mlp-train, CudaSessionTest, lm-train,
# genesis-generate-runtime), the
# CUDA backend cases (plans, inputs, evaluator outputs) that CudaBackendTests
# writes, the benchmark plans, the MLP plans and the tiny-GPT train step
# (bench.py's GPT row) with their initial weights, GPT-2 124M's bf16 train
# step (gpt2_bench.py), the f16 loss-scale check's tiny GPT, the Qwen2.5-0.5B
# generation plan, lm-train's plans, ICU for the tokenizers, and Fashion-MNIST.
# It is more than one carry holds (64 MiB): carry the folders a run needs,
# e.g. bin, cases, bench, gpt and mlp4096 for scripts/gpu/run.sh (tests, cases,
# benchmarks); bin, attention for attention_bench.py; bin, gpt124 for gpt2_bench.py; bin, qwen, lib for
# qwen_decode_bench.py; bin, gptf16 for loss_scale_check.py; bin, lm-bf16,
# lm-tf32 and lib for lm-train (docs/performance.md lists the commands).
set -euo pipefail
cd "$(dirname "$0")/../.."
./scripts/build.sh >/dev/null
BUILD=build
CARRY=gpu-carry
grep -qx "/$CARRY/" .git/info/exclude 2>/dev/null || echo "/$CARRY/" >> .git/info/exclude
rm -rf "$CARRY" && mkdir -p "$CARRY"/{bin,cases,bench,attention,data,mlp,mlp4096,gpt,gpt124,gptf16,qwen,lib}
cp "$BUILD"/bin/{genesis-run,mlp-train,CudaSessionTest,lm-train,genesis-generate-runtime} "$CARRY"/bin/
# The tokenizers link ICU 72, which the GPU machine lacks: LD_LIBRARY_PATH=gpu-carry/lib.
cp -L /lib/x86_64-linux-gnu/libicu{uc,data}.so.72 "$CARRY"/lib/
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
# Attention forward and backward alone (attention_bench.py): cuDNN's fused steps.
"$BUILD"/bin/genesis-compile scripts/gpu/attention/attention.mlir --target=cuda --precision=bf16 \
  -o "$CARRY/attention/attention.gplan" >/dev/null
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
# The tiny GPT in f16 with the dynamic loss scale (loss_scale_check.py).
"$BUILD"/bin/gpt2-plan --target=cuda --precision=f16 --loss-scale=dynamic --out "$CARRY/gptf16" >/dev/null
# Qwen2.5-0.5B-shaped generation plan (qwen_decode_bench.py; weights drawn there).
tmp=$(mktemp -d)
"$BUILD"/bin/genesis-generate --random=qwen2.5-0.5b --compile-only --target=cuda --max-len 512 \
  --out "$tmp" >/dev/null
cp "$tmp/generate.gplan" "$CARRY/qwen/" && rm -rf "$tmp"
# lm-train's 4 x 256 GPT in f32+TF32 and bf16 (docs/training.md); same weights.
for variant in "tf32 --tf32" "bf16 --precision bf16"; do
  set -- $variant
  "$BUILD"/bin/lm-train --compile-only --target cuda "${@:2}" --layers 4 --heads 4 --width 256 \
    --seq 128 --out "$CARRY/lm-$1" >/dev/null
done
cp /usr/share/datasets/fashion-mnist/*.gz "$CARRY/data/"
du -sh "$CARRY"
