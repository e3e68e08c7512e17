//===- GenesisAttentionOps.td - Attention ops of genesis ---*- tablegen -*-===//
//
// Scaled dot-product attention: the op users trace and its gradient, kept
// whole for codegen and autodiff, and the fused form the CUDA pipeline
// hands to cuDNN's flash attention, which saves the log-sum-exp of each
// score row for the backward instead of the [S, T] probabilities.
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_DIALECT_IR_GENESISATTENTIONOPS_TD
#define GENESIS_DIALECT_IR_GENESISATTENTIONOPS_TD

include "dialect/IR/GenesisBase.td"
include "dialect/IR/GenesisInterfaces.td"

def Genesis_AttentionOp : Genesis_InferredOp<"attention", [Genesis_Differentiable]> {
  let summary = "Scaled dot-product attention with causal masking and GQA";
  let description = [{
    `query` is `[B, Hq, S, D]`, `key` is `[B, Hkv, T, D]`, `value` is
    `[B, Hkv, T, Dv]`, with `Hq` a multiple of `Hkv`: query head `h` reads
    key/value head `h / (Hq / Hkv)` (grouped-query attention, no copy of
    K/V). `scores = scale * q k^T (+ mask)`; with `causal`, query `i` sees
    keys `j <= i + T - S` (aligned to the end, so a decoding step with
    S = 1 sees the whole cache; equal to PyTorch's `is_causal` when S = T).
    `result = softmax(scores) v`, shape `[B, Hq, S, Dv]`. The optional
    additive `mask` is `[B, Hq, S, T]`. A row whose keys are all masked
    yields zeros.

    ```mlir
    %o = genesis.attention %q, %k, %v causal scale 0.125
           : (tensor<1x4x8x64xf32>, tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>)
             -> tensor<1x4x8x64xf32>
    ```
  }];
  let arguments = (ins Genesis_FloatTensor:$query, Genesis_FloatTensor:$key,
                       Genesis_FloatTensor:$value,
                       Optional<Genesis_FloatTensor>:$mask,
                       UnitAttr:$causal, F64Attr:$scale);
  let results = (outs Genesis_FloatTensor:$result);
  let assemblyFormat = [{
    $query `,` $key `,` $value (`mask` $mask^)? (`causal` $causal^)?
    `scale` $scale attr-dict `:` functional-type(operands, results)
  }];
}

def Genesis_AttentionGradOp : Genesis_InferredOp<"attention_grad",
    [Genesis_NonDifferentiable]> {
  let summary = "Cotangents of genesis.attention's query, key and value";
  let description = [{
    Given the operands and result `out` of a `genesis.attention` with the
    same `causal` and `scale`, and the cotangent `out_grad` of its result,
    returns `(query_grad, key_grad, value_grad)` with the shapes of query,
    key and value. With P the attention probabilities and dP = dO V^T:
    `dS = P * (dP - rowsum(dO * O))`, `dQ = scale dS K`, `dK = scale dS^T Q`,
    `dV = P^T dO`, where dK and dV sum over the query heads that share a
    key/value head. The mask is a constant.
  }];
  let arguments = (ins Genesis_FloatTensor:$query, Genesis_FloatTensor:$key,
                       Genesis_FloatTensor:$value,
                       Optional<Genesis_FloatTensor>:$mask,
                       Genesis_FloatTensor:$out, Genesis_FloatTensor:$out_grad,
                       UnitAttr:$causal, F64Attr:$scale);
  let results = (outs Genesis_FloatTensor:$query_grad,
                      Genesis_FloatTensor:$key_grad,
                      Genesis_FloatTensor:$value_grad);
  let assemblyFormat = [{
    $query `,` $key `,` $value (`mask` $mask^)? `,` $out `,` $out_grad
    (`causal` $causal^)? `scale` $scale attr-dict `:`
    functional-type(operands, results)
  }];
}

def Genesis_FusedAttentionOp : Genesis_InferredOp<"fused_attention",
    [Genesis_NonDifferentiable]> {
  let summary = "Attention without a mask, saving each row's log-sum-exp";
  let description = [{
    `genesis.attention` without a mask, on 16-bit `query` `[B, Hq, S, D]`,
    `key` and `value` `[B, Hkv, T, D]` (one head dimension D for all three;
    f32 accumulation), with a second result `logsumexp`, f32 `[B, Hq, S]`:
    `log(sum_j exp(scale * q_i . k_j))` over the keys query `i` sees (minus
    infinity where it sees none). It is what the backward needs instead of
    the probabilities: `P = exp(scale q k^T - logsumexp)`.
    `genesis-fused-attention` forms it; the CUDA plan runs it as one cuDNN
    flash attention step, so no `[B, Hq, S, T]` tensor exists.

    ```mlir
    %o, %lse = genesis.fused_attention %q, %k, %v causal scale 0.125
        : (tensor<2x4x8x64xbf16>, tensor<2x2x8x64xbf16>, tensor<2x2x8x64xbf16>)
          -> (tensor<2x4x8x64xbf16>, tensor<2x4x8xf32>)
    ```
  }];
  let arguments = (ins Genesis_Float16Tensor:$query,
                       Genesis_Float16Tensor:$key,
                       Genesis_Float16Tensor:$value,
                       UnitAttr:$causal, F64Attr:$scale);
  let results = (outs Genesis_Float16Tensor:$result, Genesis_F32Tensor:$logsumexp);
  let assemblyFormat = [{
    $query `,` $key `,` $value (`causal` $causal^)? `scale` $scale attr-dict
    `:` functional-type(operands, results)
  }];
}

def Genesis_FusedAttentionGradOp : Genesis_InferredOp<"fused_attention_grad",
    [Genesis_NonDifferentiable]> {
  let summary = "Cotangents of genesis.fused_attention's query, key and value";
  let description = [{
    `genesis.attention_grad` (without a mask) of a `genesis.fused_attention`
    with the same operands, `causal` and `scale`, given its results `out`
    and `logsumexp`: the probabilities are recomputed block by block from
    `logsumexp`, never stored. Returns `(query_grad, key_grad, value_grad)`
    in the operands' types; `key_grad` and `value_grad` sum over the query
    heads that share a key/value head.

    ```mlir
    %dq, %dk, %dv = genesis.fused_attention_grad %q, %k, %v, %o, %do, %lse
        causal scale 0.125
        : (tensor<2x4x8x64xbf16>, tensor<2x2x8x64xbf16>, tensor<2x2x8x64xbf16>,
           tensor<2x4x8x64xbf16>, tensor<2x4x8x64xbf16>, tensor<2x4x8xf32>)
          -> (tensor<2x4x8x64xbf16>, tensor<2x2x8x64xbf16>, tensor<2x2x8x64xbf16>)
    ```
  }];
  let arguments = (ins Genesis_Float16Tensor:$query,
                       Genesis_Float16Tensor:$key,
                       Genesis_Float16Tensor:$value,
                       Genesis_Float16Tensor:$out,
                       Genesis_Float16Tensor:$out_grad,
                       Genesis_F32Tensor:$logsumexp,
                       UnitAttr:$causal, F64Attr:$scale);
  let results = (outs Genesis_Float16Tensor:$query_grad,
                      Genesis_Float16Tensor:$key_grad,
                      Genesis_Float16Tensor:$value_grad);
  let assemblyFormat = [{
    $query `,` $key `,` $value `,` $out `,` $out_grad `,` $logsumexp
    (`causal` $causal^)? `scale` $scale attr-dict `:`
    functional-type(operands, results)
  }];
}

def Genesis_PackedAttentionOp : Genesis_InferredOp<"packed_attention",
    [Genesis_NonDifferentiable]> {
  let summary = "Fused attention reading query, key and value from one tensor";
  let description = [{
    `genesis.fused_attention` (self-attention, S = T) whose query, key and
    value are the three parts of each token's row of `qkv`,
    `[B, S, (Hq + 2 Hkv) D]`: the `query_heads` query heads, then the
    `kv_heads` key heads, then the value heads, each `D` wide, as one
    projection GEMM writes them (GPT-2's `c_attn`). `result` is
    `[B, S, Hq D]`, token-major as the output projection reads it;
    `logsumexp` is f32 `[B, Hq, S]`. `genesis-pack-attention` forms it so
    that no transposed copies of q, k, v or the result exist: the CUDA plan
    hands cuDNN strided views of the packed rows.

    ```mlir
    %o, %lse = genesis.packed_attention %qkv heads 4 kv_heads 2 causal
        scale 0.125
        : (tensor<2x8x512xbf16>) -> (tensor<2x8x256xbf16>, tensor<2x4x8xf32>)
    ```
  }];
  let arguments = (ins Genesis_Float16Tensor:$qkv, I64Attr:$query_heads,
                       I64Attr:$kv_heads, UnitAttr:$causal, F64Attr:$scale);
  let results = (outs Genesis_Float16Tensor:$result, Genesis_F32Tensor:$logsumexp);
  let assemblyFormat = [{
    $qkv `heads` $query_heads `kv_heads` $kv_heads (`causal` $causal^)?
    `scale` $scale attr-dict `:` functional-type(operands, results)
  }];
}

def Genesis_PackedAttentionGradOp : Genesis_InferredOp<"packed_attention_grad",
    [Genesis_NonDifferentiable]> {
  let summary = "Cotangent of genesis.packed_attention's packed operand";
  let description = [{
    `genesis.fused_attention_grad` in the packed layout: given the operand
    `qkv`, the result `out` and `logsumexp` of a `genesis.packed_attention`
    with the same heads, `causal` and `scale`, and `out_grad` (`out`'s type),
    returns the cotangent of `qkv` in its type, the query, key and value
    gradients side by side in each token's row.

    ```mlir
    %dqkv = genesis.packed_attention_grad %qkv, %o, %do, %lse heads 4
        kv_heads 2 causal scale 0.125
        : (tensor<2x8x512xbf16>, tensor<2x8x256xbf16>, tensor<2x8x256xbf16>,
           tensor<2x4x8xf32>) -> tensor<2x8x512xbf16>
    ```
  }];
  let arguments = (ins Genesis_Float16Tensor:$qkv,
                       Genesis_Float16Tensor:$out,
                       Genesis_Float16Tensor:$out_grad,
                       Genesis_F32Tensor:$logsumexp,
                       I64Attr:$query_heads, I64Attr:$kv_heads,
                       UnitAttr:$causal, F64Attr:$scale);
  let results = (outs Genesis_Float16Tensor:$qkv_grad);
  let assemblyFormat = [{
    $qkv `,` $out `,` $out_grad `,` $logsumexp `heads` $query_heads
    `kv_heads` $kv_heads (`causal` $causal^)? `scale` $scale attr-dict `:`
    functional-type(operands, results)
  }];
}

def Genesis_DecodeAttentionOp : Genesis_InferredOp<"decode_attention",
    [Genesis_NonDifferentiable]> {
  let summary = "Attention of a few f32 query rows against a (16-bit) cache";
  let description = [{
    `genesis.attention` of f32 `query` `[B, Hq, S, D]` (and f32 `mask`) whose
    `key` `[B, Hkv, T, D]` and `value` `[B, Hkv, T, Dv]` may be stored in
    bf16 or f16: they are read widened to f32, which is the attention of
    the widened cache (a decode step's KV cache is read where it lies, with
    no f32 copy). Same `causal`, `scale` and mask semantics, and the same
    zeros for a row that sees no key. `genesis-decode-attention` forms it
    for the CUDA pipeline, where one kernel computes it (a block per
    key/value head, the keys split over its warps and merged).

    ```mlir
    %o = genesis.decode_attention %q, %k, %v mask %m scale 0.125
        : (tensor<1x14x1x64xf32>, tensor<1x2x1024x64xbf16>,
           tensor<1x2x1024x64xbf16>, tensor<1x14x1x1024xf32>)
          -> tensor<1x14x1x64xf32>
    ```
  }];
  let arguments = (ins Genesis_F32Tensor:$query, Genesis_FloatTensor:$key,
                       Genesis_FloatTensor:$value,
                       Optional<Genesis_F32Tensor>:$mask,
                       UnitAttr:$causal, F64Attr:$scale);
  let results = (outs Genesis_F32Tensor:$result);
  let assemblyFormat = [{
    $query `,` $key `,` $value (`mask` $mask^)? (`causal` $causal^)?
    `scale` $scale attr-dict `:` functional-type(operands, results)
  }];
}

#endif // GENESIS_DIALECT_IR_GENESISATTENTIONOPS_TD
