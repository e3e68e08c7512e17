//===- GenesisOps.td - Genesis dialect ops -----------------*- tablegen -*-===//
//
// Every op of the genesis dialect. Shape rules live in each op's
// `inferReturnTypes` (GenesisOps.cpp); the descriptions below are the spec
// the reference evaluator implements.
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_DIALECT_IR_GENESISOPS_TD
#define GENESIS_DIALECT_IR_GENESISOPS_TD

include "dialect/IR/GenesisAttrs.td"
include "dialect/IR/GenesisAttentionOps.td"
include "dialect/IR/GenesisBase.td"
include "dialect/IR/GenesisInterfaces.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

def Genesis_ConstantOp : Genesis_InferredOp<"constant", [Genesis_NonDifferentiable, ConstantLike]> {
  let summary = "A tensor of known values";
  let description = [{
    Produces the tensor held by `value`; the result type is the type of
    `value`. Splat constants (`dense<1.0> : tensor<4x4xf32>`) are how scalars
    enter a traced graph.

    ```mlir
    %0 = genesis.constant dense<1.0> : tensor<2x3xf32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Genesis_Tensor:$result);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise unary ops
//===----------------------------------------------------------------------===//

def Genesis_NegOp : Genesis_UnaryOp<"neg", Genesis_NumericTensor, [Genesis_Differentiable]> {
  let summary = "Elementwise negation: -x";
  let description = [{
    `result[i] = -operand[i]`. For integers this wraps on the most negative
    value (two's complement). Folds `neg(neg(x))` to `x`.
  }];
  let hasFolder = 1;
}

def Genesis_AbsOp : Genesis_UnaryOp<"abs", Genesis_NumericTensor, [Genesis_Differentiable]> {
  let summary = "Elementwise absolute value: |x|";
  let description = [{ `result[i] = |operand[i]|`; `abs(-0.0) = +0.0`. }];
}

def Genesis_SignOp : Genesis_UnaryOp<"sign", Genesis_NumericTensor, [Genesis_NonDifferentiable]> {
  let summary = "Elementwise sign: -1, 0 or 1";
  let description = [{
    `result[i]` is -1 for negative, +1 for positive and 0 for zero inputs
    (of either sign); NaN maps to NaN. Its derivative is zero everywhere.
  }];
}

def Genesis_ExpOp : Genesis_UnaryOp<"exp", Genesis_FloatTensor, [Genesis_Differentiable]> {
  let summary = "Elementwise natural exponential: e^x";
  let description = [{ `result[i] = exp(operand[i])`. }];
}

def Genesis_LogOp : Genesis_UnaryOp<"log", Genesis_FloatTensor, [Genesis_Differentiable]> {
  let summary = "Elementwise natural logarithm: ln(x)";
  let description = [{
    `result[i] = log(operand[i])`; `log(0) = -inf`, negative inputs give NaN.
  }];
}

def Genesis_SqrtOp : Genesis_UnaryOp<"sqrt", Genesis_FloatTensor, [Genesis_Differentiable]> {
  let summary = "Elementwise square root";
  let description = [{ `result[i] = sqrt(operand[i])`, correctly rounded. }];
}

def Genesis_RsqrtOp : Genesis_UnaryOp<"rsqrt", Genesis_FloatTensor, [Genesis_Differentiable]> {
  let summary = "Elementwise reciprocal square root: 1/sqrt(x)";
  let description = [{ `result[i] = 1 / sqrt(operand[i])`. }];
}

def Genesis_TanhOp : Genesis_UnaryOp<"tanh", Genesis_FloatTensor, [Genesis_Differentiable]> {
  let summary = "Elementwise hyperbolic tangent";
  let description = [{ `result[i] = tanh(operand[i])`. }];
}

def Genesis_SigmoidOp : Genesis_UnaryOp<"sigmoid", Genesis_FloatTensor, [Genesis_Differentiable]> {
  let summary = "Elementwise logistic sigmoid: 1/(1+e^-x)";
  let description = [{ `result[i] = 1 / (1 + exp(-operand[i]))`. }];
}

def Genesis_ReluOp : Genesis_UnaryOp<"relu", Genesis_NumericTensor, [Genesis_Differentiable]> {
  let summary = "Elementwise rectified linear unit: max(x, 0)";
  let description = [{
    `result[i] = operand[i] > 0 ? operand[i] : 0`; NaN propagates. The
    derivative at 0 is taken as 0, as in PyTorch.
  }];
}

def Genesis_GeluOp : Genesis_UnaryOp<"gelu", Genesis_FloatTensor, [Genesis_Differentiable]> {
  let summary = "Elementwise Gaussian error linear unit";
  let description = [{
    With `approximate = erf` (the default):
    `result = x * 0.5 * (1 + erf(x / sqrt(2)))`.
    With `approximate = tanh` (GPT-2's "gelu_new"):
    `result = 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))`.

    ```mlir
    %1 = genesis.gelu %0 approximate = tanh : tensor<8x16xf32>
    ```
  }];
  let arguments = (ins Genesis_FloatTensor:$operand,
      DefaultValuedAttr<Genesis_GeluApproximation,
                        "::genesis::GeluApproximation::erf">:$approximate);
  let assemblyFormat = [{
    $operand (`approximate` `=` $approximate^)? attr-dict `:` type($operand)
  }];
}

def Genesis_SiluOp : Genesis_UnaryOp<"silu", Genesis_FloatTensor, [Genesis_Differentiable]> {
  let summary = "Elementwise sigmoid linear unit: x * sigmoid(x)";
  let description = [{ `result[i] = x / (1 + exp(-x))` with `x = operand[i]`. }];
}

def Genesis_SinOp : Genesis_UnaryOp<"sin", Genesis_FloatTensor, [Genesis_Differentiable]> {
  let summary = "Elementwise sine (radians)";
  let description = [{ `result[i] = sin(operand[i])`. }];
}

def Genesis_CosOp : Genesis_UnaryOp<"cos", Genesis_FloatTensor, [Genesis_Differentiable]> {
  let summary = "Elementwise cosine (radians)";
  let description = [{ `result[i] = cos(operand[i])`. }];
}

def Genesis_ErfOp : Genesis_UnaryOp<"erf", Genesis_FloatTensor, [Genesis_Differentiable]> {
  let summary = "Elementwise Gauss error function";
  let description = [{ `result[i] = erf(operand[i])`; used by the exact GELU's derivative. }];
}

def Genesis_StopGradientOp : Genesis_UnaryOp<"stop_gradient", Genesis_Tensor, [Genesis_NonDifferentiable]> {
  let summary = "The identity, treated as a constant by differentiation";
  let description = [{
    `result = operand`; genesis-autodiff propagates no cotangent through it
    (`jax.lax.stop_gradient`, `torch.Tensor.detach`). It has no folder, so it
    survives canonicalization until differentiation is done.
  }];
}

def Genesis_NotOp : Genesis_UnaryOp<"not", Genesis_BoolTensor, [Genesis_NonDifferentiable]> {
  let summary = "Elementwise logical not of an i1 tensor";
  let description = [{ `result[i] = !operand[i]`. }];
}

//===----------------------------------------------------------------------===//
// Elementwise binary ops
//===----------------------------------------------------------------------===//

def Genesis_AddOp : Genesis_BinaryOp<"add", Genesis_NumericTensor, [Genesis_Differentiable, Commutative]> {
  let summary = "Elementwise addition";
  let description = [{
    `result[i] = lhs[i] + rhs[i]`. Operands must have identical types
    (broadcast explicitly). Folds `x + 0` for integers and `x + (-0.0)` for
    floats; `x + 0.0` is kept because it turns `-0.0` into `+0.0`.
    Canonicalizes `pad(a) + pad(b)`, where the pads (one dimension, no
    interior padding) place `a` and `b` side by side, to
    `pad(concat(a + 0, b + 0))` (no padded copies summed; the same bits).

    ```mlir
    %2 = genesis.add %0, %1 : tensor<4x8xf32>
    ```
  }];
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Genesis_SubOp : Genesis_BinaryOp<"sub", Genesis_NumericTensor, [Genesis_Differentiable]> {
  let summary = "Elementwise subtraction";
  let description = [{ `result[i] = lhs[i] - rhs[i]`. Folds `x - 0`. }];
  let hasFolder = 1;
}

def Genesis_MulOp : Genesis_BinaryOp<"mul", Genesis_NumericTensor, [Genesis_Differentiable, Commutative]> {
  let summary = "Elementwise multiplication";
  let description = [{ `result[i] = lhs[i] * rhs[i]`. Folds `x * 1`. }];
  let hasFolder = 1;
}

def Genesis_DivOp : Genesis_BinaryOp<"div", Genesis_NumericTensor, [Genesis_Differentiable]> {
  let summary = "Elementwise division";
  let description = [{
    `result[i] = lhs[i] / rhs[i]`. Integer division truncates toward zero;
    an integer division by zero is an error the evaluator reports. Folds
    `x / 1`.
  }];
  let hasFolder = 1;
}

def Genesis_PowOp : Genesis_BinaryOp<"pow", Genesis_FloatTensor, [Genesis_Differentiable]> {
  let summary = "Elementwise power: lhs^rhs";
  let description = [{ `result[i] = pow(lhs[i], rhs[i])`, C `pow` semantics. }];
}

def Genesis_MaxOp : Genesis_BinaryOp<"max", Genesis_NumericTensor, [Genesis_Differentiable, Commutative]> {
  let summary = "Elementwise maximum";
  let description = [{
    `result[i] = max(lhs[i], rhs[i])`; NaN in either operand gives NaN (as
    `torch.maximum`). When the operands are equal, the gradient is split
    evenly between them.
  }];
}

def Genesis_MinOp : Genesis_BinaryOp<"min", Genesis_NumericTensor, [Genesis_Differentiable, Commutative]> {
  let summary = "Elementwise minimum";
  let description = [{
    `result[i] = min(lhs[i], rhs[i])`; NaN in either operand gives NaN.
  }];
}

def Genesis_AndOp : Genesis_BinaryOp<"and", Genesis_BoolTensor, [Genesis_NonDifferentiable, Commutative]> {
  let summary = "Elementwise logical and of i1 tensors";
  let description = [{ `result[i] = lhs[i] && rhs[i]`. }];
}

def Genesis_OrOp : Genesis_BinaryOp<"or", Genesis_BoolTensor, [Genesis_NonDifferentiable, Commutative]> {
  let summary = "Elementwise logical or of i1 tensors";
  let description = [{ `result[i] = lhs[i] || rhs[i]`. }];
}

def Genesis_CompareOp : Genesis_InferredOp<"compare", [Genesis_NonDifferentiable, Elementwise]> {
  let summary = "Elementwise comparison producing i1";
  let description = [{
    `result[i] = lhs[i] <direction> rhs[i]` with direction one of
    `eq ne lt le gt ge`. Every comparison with NaN is false except `ne`,
    which is true (IEEE unordered semantics, as in PyTorch).

    ```mlir
    %m = genesis.compare lt, %a, %b : tensor<4xf32>
    ```
  }];
  let arguments = (ins Genesis_CompareDirection:$direction,
                       Genesis_Tensor:$lhs, Genesis_Tensor:$rhs);
  let results = (outs Genesis_BoolTensor:$result);
  let assemblyFormat = [{
    $direction `,` $lhs `,` $rhs attr-dict `:`
    custom<SameOperandTypes>(type($lhs), type($rhs))
  }];
}

def Genesis_SelectOp : Genesis_InferredOp<"select", [Genesis_Differentiable, Elementwise]> {
  let summary = "Elementwise choice between two tensors";
  let description = [{
    `result[i] = condition[i] ? on_true[i] : on_false[i]`. `condition` is
    an i1 tensor of the same shape as the two choices, which have identical
    types.
  }];
  let arguments = (ins Genesis_BoolTensor:$condition, Genesis_Tensor:$on_true,
                       Genesis_Tensor:$on_false);
  let results = (outs Genesis_Tensor:$result);
  let assemblyFormat = [{
    $condition `,` $on_true `,` $on_false attr-dict `:` type($condition) `,`
    custom<SameOperandTypes>(type($on_true), type($on_false))
  }];
}

def Genesis_CastOp : Genesis_Op<"cast", [Genesis_Differentiable, Pure, Elementwise]> {
  let summary = "Elementwise conversion to another element type";
  let description = [{
    Converts each element to the result element type; shapes must match.
    float -> float rounds to nearest, ties to even. float -> integer
    truncates toward zero, saturates at the integer range and maps NaN to 0.
    integer -> float rounds to nearest. Anything -> i1 is `x != 0`; i1 -> any
    is 0 or 1. A cast to the operand's own type folds away.

    ```mlir
    %1 = genesis.cast %0 : tensor<4xf32> to tensor<4xbf16>
    ```
  }];
  let arguments = (ins Genesis_Tensor:$operand);
  let results = (outs Genesis_Tensor:$result);
  let assemblyFormat = "$operand attr-dict `:` type($operand) `to` type($result)";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Shape ops
//===----------------------------------------------------------------------===//

def Genesis_ReshapeOp : Genesis_Op<"reshape", [Genesis_Differentiable, Pure]> {
  let summary = "Reinterprets a tensor with a new shape";
  let description = [{
    The row-major sequence of elements is unchanged; only the shape differs.
    Element types and element counts must match. `reshape(reshape(x))`
    becomes one reshape, and a reshape to the operand's type folds away.

    ```mlir
    %1 = genesis.reshape %0 : tensor<2x3x4xf32> -> tensor<6x4xf32>
    ```
  }];
  let arguments = (ins Genesis_Tensor:$operand);
  let results = (outs Genesis_Tensor:$result);
  let assemblyFormat = "$operand attr-dict `:` type($operand) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Genesis_TransposeOp : Genesis_InferredOp<"transpose", [Genesis_Differentiable]> {
  let summary = "Permutes the dimensions of a tensor";
  let description = [{
    `result.shape[i] = operand.shape[permutation[i]]` and
    `result[j_0, ..., j_n] = operand[k]` where `k[permutation[i]] = j_i`.
    `permutation` is a permutation of `[0, rank)`. Two transposes in a row
    compose into one; the identity permutation folds away.

    ```mlir
    %1 = genesis.transpose %0, [1, 0] : tensor<2x3xf32>
    ```
  }];
  let arguments = (ins Genesis_Tensor:$operand, DenseI64ArrayAttr:$permutation);
  let results = (outs Genesis_Tensor:$result);
  let assemblyFormat = "$operand `,` $permutation attr-dict `:` type($operand)";
  let hasFolder = 1;
}

def Genesis_SliceOp : Genesis_InferredOp<"slice", [Genesis_Differentiable]> {
  let summary = "Extracts a strided box of a tensor";
  let description = [{
    For each dimension d, takes indices `start[d], start[d] + stride[d], ...`
    below `limit[d]`, so `result.shape[d] = ceil((limit[d] - start[d]) /
    stride[d])`. Requires `0 <= start[d] <= limit[d] <= shape[d]` and
    `stride[d] >= 1`. A slice of the whole tensor folds away.

    ```mlir
    %1 = genesis.slice %0 start [0, 2] limit [4, 8] stride [1, 2] : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Genesis_Tensor:$operand, DenseI64ArrayAttr:$start,
                       DenseI64ArrayAttr:$limit, DenseI64ArrayAttr:$stride);
  let results = (outs Genesis_Tensor:$result);
  let assemblyFormat = [{
    $operand `start` $start `limit` $limit `stride` $stride attr-dict `:`
    type($operand)
  }];
  let hasFolder = 1;
}

def Genesis_PadOp : Genesis_InferredOp<"pad", [Genesis_Differentiable]> {
  let summary = "Surrounds and interleaves a tensor with zeros";
  let description = [{
    Along dimension d, places operand element `i` at
    `low[d] + i * (interior[d] + 1)` of a zero tensor of size
    `low[d] + high[d] + n + max(n - 1, 0) * interior[d]`. All amounts are
    non-negative. It is the transpose of `genesis.slice` (its gradient) and
    vice versa.

    ```mlir
    %1 = genesis.pad %0 low [1, 0] high [0, 2] interior [0, 1] : tensor<2x3xf32>
    ```
  }];
  let arguments = (ins Genesis_NumericTensor:$operand, DenseI64ArrayAttr:$low,
                       DenseI64ArrayAttr:$high, DenseI64ArrayAttr:$interior);
  let results = (outs Genesis_NumericTensor:$result);
  let assemblyFormat = [{
    $operand `low` $low `high` $high `interior` $interior attr-dict `:`
    type($operand)
  }];
}

def Genesis_ConcatOp : Genesis_InferredOp<"concat", [Genesis_Differentiable]> {
  let summary = "Joins tensors along one dimension";
  let description = [{
    All inputs have the same rank and element type and agree on every
    dimension except `dim`; the result's `dim` is the sum of theirs. A
    concat of a single input folds to that input; adjacent slices of one
    tensor join into one slice (see GenesisCanonicalize.cpp).

    ```mlir
    %2 = genesis.concat %0, %1 dim 1 : tensor<2x3xf32>, tensor<2x5xf32>
    ```
  }];
  let arguments = (ins Variadic<Genesis_Tensor>:$inputs, I64Attr:$dim);
  let results = (outs Genesis_Tensor:$result);
  let assemblyFormat = "$inputs `dim` $dim attr-dict `:` type($inputs)";
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Genesis_BroadcastInDimOp : Genesis_Op<"broadcast_in_dim", [Genesis_Differentiable, Pure]> {
  let summary = "Expands a tensor to a larger shape";
  let description = [{
    Operand dimension `i` maps to result dimension
    `broadcast_dimensions[i]`; the mapping is strictly increasing, and each
    mapped operand dimension either equals the result dimension or is 1
    (then it is repeated). Unmapped result dimensions repeat the operand.
    This is the only way an operand is broadcast in the genesis dialect.

    ```mlir
    %1 = genesis.broadcast_in_dim %0, [1] : tensor<8xf32> -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Genesis_Tensor:$operand,
                       DenseI64ArrayAttr:$broadcast_dimensions);
  let results = (outs Genesis_Tensor:$result);
  let assemblyFormat = [{
    $operand `,` $broadcast_dimensions attr-dict `:` type($operand) `->`
    type($result)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Genesis_IotaOp : Genesis_Op<"iota", [Genesis_NonDifferentiable, Pure]> {
  let summary = "A tensor counting along one dimension";
  let description = [{
    `result[j_0, ..., j_n] = j_dim`, converted to the result element type.

    ```mlir
    %0 = genesis.iota dim 0 : tensor<16xi64>
    ```
  }];
  let arguments = (ins I64Attr:$dim);
  let results = (outs Genesis_NumericTensor:$result);
  let assemblyFormat = "`dim` $dim attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Genesis_TakeOp : Genesis_InferredOp<"take", [Genesis_Differentiable]> {
  let summary = "Gathers slices of a tensor at integer indices (embedding)";
  let description = [{
    NumPy `take`: `result.shape = operand.shape[:axis] + indices.shape +
    operand.shape[axis+1:]` and
    `result[a..., i..., b...] = operand[a..., indices[i...], b...]`.
    An embedding lookup is `take` along axis 0. Each index must lie in
    `[0, operand.shape[axis])`; the evaluator reports one that does not.
    A take of a cast that gives no more elements than the cast's operand
    canonicalizes to the cast of the take (the same values: a cast acts on
    each element alone), so a lookup in a 16-bit table widens its rows, not
    the table.

    ```mlir
    %1 = genesis.take %table, %ids axis 0 : tensor<100x16xf32>, tensor<4x8xi64>
    ```
  }];
  let arguments = (ins Genesis_Tensor:$operand, Genesis_IndexTensor:$indices,
                       I64Attr:$axis);
  let results = (outs Genesis_Tensor:$result);
  let assemblyFormat = [{
    $operand `,` $indices `axis` $axis attr-dict `:` type($operand) `,`
    type($indices)
  }];
  let hasCanonicalizer = 1;
}

def Genesis_ScatterAddOp : Genesis_InferredOp<"scatter_add", [Genesis_Differentiable]> {
  let summary = "Adds slices into a tensor at integer indices (transpose of take)";
  let description = [{
    The transpose of `genesis.take`: starts from `operand` and, for every
    index position `i...`, adds `updates[a..., i..., b...]` into
    `result[a..., indices[i...], b...]`. Repeated indices accumulate (their
    rows are summed, never overwritten), in row-major order of `i`.
    `updates` has the shape `genesis.take` would give for the same operands.

    ```mlir
    %1 = genesis.scatter_add %zeros, %ids, %rows axis 0
           : tensor<100x16xf32>, tensor<4x8xi64>, tensor<4x8x16xf32>
    ```
  }];
  let arguments = (ins Genesis_NumericTensor:$operand,
                       Genesis_IndexTensor:$indices,
                       Genesis_NumericTensor:$updates, I64Attr:$axis);
  let results = (outs Genesis_NumericTensor:$result);
  let assemblyFormat = [{
    $operand `,` $indices `,` $updates `axis` $axis attr-dict `:`
    type($operand) `,` type($indices) `,` type($updates)
  }];
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

class Genesis_ReduceOp<string mnemonic, string what>
    : Genesis_InferredOp<mnemonic, [Genesis_Differentiable]> {
  let summary = "Reduces dimensions by " # what;
  let description = [{
    Combines the elements along each dimension listed in `dims` (strictly
    increasing, each below the rank). Without `keepdim` the reduced
    dimensions are removed; with it they are kept with size 1. Reducing no
    dimension is the identity.

    ```mlir
    %1 = genesis.}] # mnemonic # [{ %0 dims [1] keepdim : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Genesis_NumericTensor:$operand,
                       DenseI64ArrayAttr:$dims, UnitAttr:$keepdim);
  let results = (outs Genesis_NumericTensor:$result);
  let assemblyFormat = [{
    $operand `dims` $dims (`keepdim` $keepdim^)? attr-dict `:` type($operand)
  }];
}

def Genesis_ReduceSumOp : Genesis_ReduceOp<"reduce_sum", "summation"> {
  // A sum over an empty dimension is a zero tensor (as in PyTorch).
  let hasCanonicalizer = 1;
}
def Genesis_ReduceMaxOp : Genesis_ReduceOp<"reduce_max", "maximum (NaN wins)">;
def Genesis_ReduceMinOp : Genesis_ReduceOp<"reduce_min", "minimum (NaN wins)">;

def Genesis_ArgmaxOp : Genesis_InferredOp<"argmax", [Genesis_NonDifferentiable]> {
  let summary = "Index of the largest element along one dimension";
  let description = [{
    Returns, as i64, the index along `dim` of the maximum; ties go to the
    first occurrence and NaN counts as larger than every number (as
    `torch.argmax`). `keepdim` keeps `dim` with size 1. Not differentiable.

    ```mlir
    %1 = genesis.argmax %0 dim 1 : tensor<64x10xf32>
    ```
  }];
  let arguments = (ins Genesis_NumericTensor:$operand, I64Attr:$dim,
                       UnitAttr:$keepdim);
  let results = (outs StaticShapeTensorOf<[I64]>:$result);
  let assemblyFormat = [{
    $operand `dim` $dim (`keepdim` $keepdim^)? attr-dict `:` type($operand)
  }];
}

//===----------------------------------------------------------------------===//
// Compound ops
//===----------------------------------------------------------------------===//

def Genesis_MatmulOp : Genesis_InferredOp<"matmul", [Genesis_Differentiable]> {
  let summary = "Batched matrix multiplication";
  let description = [{
    Operands have equal rank r >= 2, equal leading (batch) dimensions and
    equal element types. With the optional transposes applied to the last
    two dimensions, `lhs` is `[..., M, K]`, `rhs` is `[..., K, N]` and
    `result[..., m, n] = sum_k lhs[..., m, k] * rhs[..., k, n]`. Batch
    broadcasting is explicit (`genesis.broadcast_in_dim`).

    ```mlir
    %2 = genesis.matmul %x, %w transpose_rhs : tensor<64x784xf32>, tensor<256x784xf32>
    ```
  }];
  let arguments = (ins Genesis_FloatTensor:$lhs, Genesis_FloatTensor:$rhs,
                       UnitAttr:$transpose_lhs, UnitAttr:$transpose_rhs);
  let results = (outs Genesis_FloatTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs (`transpose_lhs` $transpose_lhs^)?
    (`transpose_rhs` $transpose_rhs^)? attr-dict `:` type($lhs) `,` type($rhs)
  }];
}

class Genesis_SoftmaxLikeOp<string mnemonic, string formula>
    : Genesis_InferredOp<mnemonic, [Genesis_Differentiable]> {
  let description = [{
    Along dimension `dim`: `}] # formula # [{`, computed stably by
    subtracting the maximum along `dim` first.

    ```mlir
    %1 = genesis.}] # mnemonic # [{ %0 dim 1 : tensor<4x10xf32>
    ```
  }];
  let arguments = (ins Genesis_FloatTensor:$operand, I64Attr:$dim);
  let results = (outs Genesis_FloatTensor:$result);
  let assemblyFormat = "$operand `dim` $dim attr-dict `:` type($operand)";
}

def Genesis_SoftmaxOp : Genesis_SoftmaxLikeOp<"softmax",
    "result = exp(x - max) / sum(exp(x - max))"> {
  let summary = "Softmax along one dimension";
}

def Genesis_LogSoftmaxOp : Genesis_SoftmaxLikeOp<"log_softmax",
    "result = x - max - log(sum(exp(x - max)))"> {
  let summary = "Log-softmax along one dimension";
}

def Genesis_LayerNormOp : Genesis_InferredOp<"layer_norm",
    [Genesis_Differentiable, AttrSizedOperandSegments]> {
  let summary = "Layer normalisation over the last dimension";
  let description = [{
    For each row `x` along the last dimension (size C):
    `mean = sum(x)/C`, `var = sum((x - mean)^2)/C` (biased, as PyTorch),
    `result = (x - mean) / sqrt(var + epsilon) * weight + bias`. The optional
    `weight` and `bias` are 1-D of size C and the operand's element type.

    ```mlir
    %1 = genesis.layer_norm %x weight %w : tensor<16xf32> bias %b : tensor<16xf32>
           eps 1.0e-05 : tensor<4x16xf32>
    ```
  }];
  let arguments = (ins Genesis_FloatTensor:$operand,
                       Optional<Genesis_FloatTensor>:$weight,
                       Optional<Genesis_FloatTensor>:$bias, F64Attr:$epsilon);
  let results = (outs Genesis_FloatTensor:$result);
  let assemblyFormat = [{
    $operand (`weight` $weight^ `:` type($weight))?
    (`bias` $bias^ `:` type($bias))? `eps` $epsilon attr-dict `:`
    type($operand)
  }];
}

def Genesis_RmsNormOp : Genesis_InferredOp<"rms_norm", [Genesis_Differentiable]> {
  let summary = "Root-mean-square normalisation over the last dimension";
  let description = [{
    For each row `x` along the last dimension (size C):
    `result = x / sqrt(sum(x^2)/C + epsilon) * weight`, `weight` 1-D of
    size C (LLaMA/Qwen2 RMSNorm).

    ```mlir
    %1 = genesis.rms_norm %x, %w eps 1.0e-06 : tensor<4x16xf32>, tensor<16xf32>
    ```
  }];
  let arguments = (ins Genesis_FloatTensor:$operand,
                       Genesis_FloatTensor:$weight, F64Attr:$epsilon);
  let results = (outs Genesis_FloatTensor:$result);
  let assemblyFormat = [{
    $operand `,` $weight `eps` $epsilon attr-dict `:` type($operand) `,`
    type($weight)
  }];
}

def Genesis_RopeOp : Genesis_InferredOp<"rope", [Genesis_Differentiable]> {
  let summary = "Rotary position embedding (rotate-half convention)";
  let description = [{
    `operand` is `[..., S, D]` with D even; `cos` and `sin` are `[S, D]`.
    With `rotate_half(x) = concat(-x[..., D/2:], x[..., :D/2])`:
    `result = operand * cos + rotate_half(operand) * sin`, broadcasting
    `cos`/`sin` over the leading dimensions (the Hugging Face GPT-NeoX /
    LLaMA / Qwen2 convention). The tables are inputs, so any base (theta),
    scaling or position offset is the frontend's choice.
  }];
  let arguments = (ins Genesis_FloatTensor:$operand, Genesis_FloatTensor:$cos,
                       Genesis_FloatTensor:$sin);
  let results = (outs Genesis_FloatTensor:$result);
  let assemblyFormat = [{
    $operand `,` $cos `,` $sin attr-dict `:` functional-type(operands, results)
  }];
}

def Genesis_CrossEntropyOp : Genesis_InferredOp<"cross_entropy", [Genesis_Differentiable]> {
  let summary = "Softmax cross-entropy against class indices";
  let description = [{
    `logits` is `[N, C]`, `labels` is `[N]` of class indices. For each row
    with `label != ignore_index`:
    `loss = (1 - s) * (-log_softmax(x)[label]) + s * mean_c(-log_softmax(x)[c])`
    with `s = label_smoothing`; ignored rows contribute 0. `reduction = none`
    returns the `[N]` losses, `sum` their sum, `mean` their sum divided by
    the number of rows not ignored (PyTorch semantics: NaN if every row is
    ignored). A label outside `[0, C)` that is not `ignore_index` is an error
    the evaluator reports. Never materialises a one-hot matrix. The loss has
    the logits' element type, except that 16-bit logits give an f32 loss
    (computed in f32, as under PyTorch's autocast).

    ```mlir
    %l = genesis.cross_entropy %logits, %labels {ignore_index = -100 : i64}
           : (tensor<64x10xf32>, tensor<64xi64>) -> tensor<f32>
    ```
  }];
  let arguments = (ins Genesis_FloatTensor:$logits,
                       Genesis_IndexTensor:$labels,
                       DefaultValuedAttr<I64Attr, "-100">:$ignore_index,
                       DefaultValuedAttr<F64Attr, "0.0">:$label_smoothing,
                       DefaultValuedAttr<Genesis_LossReduction,
                           "::genesis::LossReduction::mean">:$reduction);
  let results = (outs Genesis_FloatTensor:$result);
  let assemblyFormat = [{
    $logits `,` $labels attr-dict `:` functional-type(operands, results)
  }];
}

def Genesis_CrossEntropyGradOp : Genesis_InferredOp<"cross_entropy_grad",
    [Genesis_NonDifferentiable]> {
  let summary = "Cotangent of genesis.cross_entropy's logits";
  let description = [{
    For rows whose label is not `ignore_index`:
    `logits_grad[r, c] = w_r * (softmax(x_r)[c] - (1 - s) [c == label_r] - s / C)`
    where `w_r` is `loss_grad[r]` (reduction none), `loss_grad` (sum) or
    `loss_grad / count` (mean over the rows not ignored); ignored rows get 0.
    No one-hot matrix is formed.
  }];
  let arguments = (ins Genesis_FloatTensor:$logits,
                       Genesis_IndexTensor:$labels,
                       Genesis_FloatTensor:$loss_grad,
                       DefaultValuedAttr<I64Attr, "-100">:$ignore_index,
                       DefaultValuedAttr<F64Attr, "0.0">:$label_smoothing,
                       DefaultValuedAttr<Genesis_LossReduction,
                           "::genesis::LossReduction::mean">:$reduction);
  let results = (outs Genesis_FloatTensor:$logits_grad);
  let assemblyFormat = [{
    $logits `,` $labels `,` $loss_grad attr-dict `:`
    functional-type(operands, results)
  }];
}

def Genesis_CrossEntropyWithGradOp
    : Genesis_InferredOp<"cross_entropy_with_grad", [Genesis_NonDifferentiable]> {
  let summary = "Each row's cross-entropy and its logits' cotangent in one pass";
  let description = [{
    `loss` is `genesis.cross_entropy` with reduction none, `[N]` (f32 for
    16-bit logits), and `logits_grad` is `genesis.cross_entropy_grad` with
    reduction none and per-row cotangents `loss_grad` (the loss's type), of
    the same logits, labels, `ignore_index` and `label_smoothing`.
    `genesis-fuse-cross-entropy-gradient` forms it from the two when the
    cotangents do not depend on the loss (a training step's mean), so that
    one kernel reads each row of logits for both, and writes the gradient
    over them.

    ```mlir
    %loss, %dlogits = genesis.cross_entropy_with_grad %logits, %labels, %w
        : (tensor<4x1024xbf16>, tensor<4xi64>, tensor<4xf32>)
          -> (tensor<4xf32>, tensor<4x1024xbf16>)
    ```
  }];
  let arguments = (ins Genesis_FloatTensor:$logits,
                       Genesis_IndexTensor:$labels,
                       Genesis_FloatTensor:$loss_grad,
                       DefaultValuedAttr<I64Attr, "-100">:$ignore_index,
                       DefaultValuedAttr<F64Attr, "0.0">:$label_smoothing);
  let results = (outs Genesis_FloatTensor:$loss,
                      Genesis_FloatTensor:$logits_grad);
  let assemblyFormat = [{
    $logits `,` $labels `,` $loss_grad attr-dict `:`
    functional-type(operands, results)
  }];
}

def Genesis_DropoutOp : Genesis_InferredOp<"dropout", [Genesis_Differentiable]> {
  let summary = "Inverted dropout driven by a counter-based Philox RNG";
  let description = [{
    Element `i` (row-major) is kept when `u_i >= probability` and then
    scaled by `1 / (1 - probability)`; otherwise it is 0. `u_i` is the first
    32-bit word of Philox-4x32-10 with key `(seed mod 2^32, seed >> 32)` and
    counter `(c mod 2^32, c >> 32, 0, 0)`, `c = offset + i`, mapped to
    `[0, 1)` as `(word >> 8) * 2^-24`. Distinct dropout ops in one graph get
    disjoint `offset` ranges, so their streams never overlap, and the same
    `seed` always reproduces the same mask (the backward pass recomputes it
    instead of storing it).

    ```mlir
    %1 = genesis.dropout %0, %seed {probability = 1.0e-01, offset = 0 : i64}
           : (tensor<4x8xf32>, tensor<i64>) -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Genesis_FloatTensor:$operand, Genesis_ScalarI64:$seed,
                       F64Attr:$probability, I64Attr:$offset);
  let results = (outs Genesis_FloatTensor:$result);
  let assemblyFormat = [{
    $operand `,` $seed attr-dict `:` functional-type(operands, results)
  }];
}

//===----------------------------------------------------------------------===//
// Optimizer ops
//===----------------------------------------------------------------------===//

def Genesis_SgdUpdateOp : Genesis_InferredOp<"sgd_update", [Genesis_NonDifferentiable]> {
  let summary = "Plain SGD step (no momentum)";
  let description = [{
    PyTorch `torch.optim.SGD` with `momentum = 0`:
    `g = grad + weight_decay * param`, `result = param - lr * g`.
    `lr` is a scalar f32 tensor so schedules need no recompilation.
  }];
  let arguments = (ins Genesis_FloatTensor:$param, Genesis_FloatTensor:$grad,
                       Genesis_ScalarF32:$lr,
                       DefaultValuedAttr<F64Attr, "0.0">:$weight_decay);
  let results = (outs Genesis_FloatTensor:$new_param);
  let assemblyFormat = [{
    $param `,` $grad `,` $lr attr-dict `:` functional-type(operands, results)
  }];
}

def Genesis_SgdMomentumUpdateOp : Genesis_InferredOp<"sgd_momentum_update", [Genesis_NonDifferentiable]> {
  let summary = "SGD step with momentum, dampening and Nesterov";
  let description = [{
    PyTorch `torch.optim.SGD` with `momentum > 0`, where `step` is the
    1-based step count: `g = grad + weight_decay * param`; on step 1
    `buf = g`, afterwards `buf = momentum * buf + (1 - dampening) * g`;
    `d = nesterov ? g + momentum * buf : buf`; `param = param - lr * d`.
    Returns the new parameter and the new momentum buffer.
  }];
  let arguments = (ins Genesis_FloatTensor:$param, Genesis_FloatTensor:$grad,
                       Genesis_FloatTensor:$momentum_buffer,
                       Genesis_ScalarF32:$lr, Genesis_ScalarI64:$step,
                       F64Attr:$momentum,
                       DefaultValuedAttr<F64Attr, "0.0">:$dampening,
                       DefaultValuedAttr<F64Attr, "0.0">:$weight_decay,
                       UnitAttr:$nesterov);
  let results = (outs Genesis_FloatTensor:$new_param,
                      Genesis_FloatTensor:$new_momentum_buffer);
  let assemblyFormat = [{
    $param `,` $grad `,` $momentum_buffer `,` $lr `,` $step attr-dict `:`
    functional-type(operands, results)
  }];
}

class Genesis_AdamLikeOp<string mnemonic, string decay>
    : Genesis_InferredOp<mnemonic, [Genesis_NonDifferentiable]> {
  let description = [{
    One step of PyTorch's `}] # decay # [{`, where `step` is the 1-based
    step count `t`:
    `m = beta1 * m + (1 - beta1) * g`, `v = beta2 * v + (1 - beta2) * g^2`,
    `param = param - lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + epsilon)`.
    Returns the new parameter, first moment and second moment.
  }];
  let arguments = (ins Genesis_FloatTensor:$param, Genesis_FloatTensor:$grad,
                       Genesis_FloatTensor:$exp_avg,
                       Genesis_FloatTensor:$exp_avg_sq,
                       Genesis_ScalarF32:$lr, Genesis_ScalarI64:$step,
                       DefaultValuedAttr<F64Attr, "0.9">:$beta1,
                       DefaultValuedAttr<F64Attr, "0.999">:$beta2,
                       DefaultValuedAttr<F64Attr, "1e-08">:$epsilon,
                       DefaultValuedAttr<F64Attr, "0.0">:$weight_decay);
  let results = (outs Genesis_FloatTensor:$new_param,
                      Genesis_FloatTensor:$new_exp_avg,
                      Genesis_FloatTensor:$new_exp_avg_sq);
  let assemblyFormat = [{
    $param `,` $grad `,` $exp_avg `,` $exp_avg_sq `,` $lr `,` $step attr-dict
    `:` functional-type(operands, results)
  }];
}

def Genesis_AdamUpdateOp : Genesis_AdamLikeOp<"adam_update",
    "torch.optim.Adam; weight decay is L2: g = grad + weight_decay * param"> {
  let summary = "Adam step (L2 weight decay)";
}

def Genesis_AdamWUpdateOp : Genesis_AdamLikeOp<"adamw_update",
    "torch.optim.AdamW; weight decay is decoupled: param = param * (1 - lr * weight_decay) before the update, g = grad"> {
  let summary = "AdamW step (decoupled weight decay)";
}

def Genesis_GlobalNormOp : Genesis_InferredOp<"global_norm", [Genesis_Differentiable]> {
  let summary = "Euclidean norm of a set of tensors taken together";
  let description = [{
    `result = sqrt(sum over all inputs and elements of x^2)`, the quantity
    `clip_grad_norm_` compares against its maximum, as a scalar of at least
    f32 precision: f64 when an input is f64, f32 otherwise.

    ```mlir
    %n = genesis.global_norm %g0, %g1 : tensor<4x8xf32>, tensor<8xf32>
    ```
  }];
  let arguments = (ins Variadic<Genesis_FloatTensor>:$inputs);
  let results = (outs 0DTensorOf<[F32, F64]>:$result);
  let assemblyFormat = "$inputs attr-dict `:` type($inputs)";
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

def Genesis_AllReduceOp : Genesis_Op<"all_reduce", [Genesis_Differentiable, InferTypeOpAdaptor]> {
  let summary = "Combines a tensor across data-parallel ranks";
  let description = [{
    Every rank receives the elementwise `sum` (or `mean`) of `operand` over
    all ranks. With a single rank it is the identity. It communicates, so it
    is not pure and is never removed or reordered by generic transforms.
  }];
  let arguments = (ins Genesis_AllReduceKind:$kind,
                       Genesis_NumericTensor:$operand);
  let results = (outs Genesis_NumericTensor:$result);
  let assemblyFormat = "$kind `,` $operand attr-dict `:` type($operand)";
}

//===----------------------------------------------------------------------===//
// Structure ops
//===----------------------------------------------------------------------===//

def Genesis_FusionOp : Genesis_Op<"fusion", [IsolatedFromAbove,
    RecursiveMemoryEffects, SingleBlock]> {
  let summary = "A group of ops computed by one kernel";
  let description = [{
    The body's block arguments are bound to `inputs` (same count and types);
    its `genesis.yield` gives the results. Backends compile each fusion into
    one kernel; the evaluator runs the body as it is.

    ```mlir
    %r = genesis.fusion %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
    ^bb0(%x: tensor<4xf32>, %y: tensor<4xf32>):
      %s = genesis.add %x, %y : tensor<4xf32>
      genesis.yield %s : tensor<4xf32>
    }
    ```
  }];
  let arguments = (ins Variadic<Genesis_Tensor>:$inputs);
  let results = (outs Variadic<Genesis_Tensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $inputs attr-dict `:` functional-type($inputs, results) $body
  }];
  let hasRegionVerifier = 1;
}

def Genesis_YieldOp : Genesis_Op<"yield", [Pure, Terminator, ReturnLike,
    HasParent<"FusionOp">]> {
  let summary = "Returns the results of a genesis.fusion body";
  let description = [{ Its operand types are the fusion's result types. }];
  let arguments = (ins Variadic<Genesis_Tensor>:$values);
  let assemblyFormat = "attr-dict ($values^ `:` type($values))?";
}

def Genesis_LibraryCallOp : Genesis_InferredOp<"library_call",
    [AttrSizedOperandSegments]> {
  let summary = "A GEMM with a fused epilogue, run by a vendor library";
  let description = [{
    `result = epilogue(alpha * matmul(lhs, rhs) + bias)` with the shape
    rules of `genesis.matmul`; `bias` is 1-D over the last result dimension
    and is present exactly when the epilogue names it (`bias`, `bias_relu`,
    `bias_gelu`). `gelu` is the tanh approximation, as cuBLASLt computes it.
    `dgelu` is the tanh GELU's gradient: `result = alpha * matmul(lhs, rhs) *
    gelu'(aux)`, where `aux` (present exactly with `dgelu`, of the result's
    type) holds the GELU's input; the matmul is then the gradient of that
    GELU's output (cuBLASLt's DGELU epilogue, whose aux operand the forward's
    GELU_AUX writes). Lowered to cuBLASLt on CUDA and to BLAS on the CPU.

    ```mlir
    %y = genesis.library_call bias_relu %x, %w transpose_rhs bias %b
           : (tensor<64x784xf32>, tensor<256x784xf32>, tensor<256xf32>) -> tensor<64x256xf32>
    %dx = genesis.library_call dgelu %dy, %w transpose_rhs aux %x
           : (tensor<64x256xf32>, tensor<784x256xf32>, tensor<64x784xf32>) -> tensor<64x784xf32>
    ```
  }];
  let arguments = (ins Genesis_GemmEpilogue:$epilogue,
                       Genesis_FloatTensor:$lhs, Genesis_FloatTensor:$rhs,
                       Optional<Genesis_FloatTensor>:$bias,
                       Optional<Genesis_FloatTensor>:$aux,
                       UnitAttr:$transpose_lhs, UnitAttr:$transpose_rhs,
                       DefaultValuedAttr<F64Attr, "1.0">:$alpha);
  let results = (outs Genesis_FloatTensor:$result);
  let assemblyFormat = [{
    $epilogue $lhs `,` $rhs (`transpose_lhs` $transpose_lhs^)?
    (`transpose_rhs` $transpose_rhs^)? (`bias` $bias^)? (`aux` $aux^)?
    attr-dict `:` functional-type(operands, results)
  }];
}

#endif // GENESIS_DIALECT_IR_GENESISOPS_TD
