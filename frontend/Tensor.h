//===- Tensor.h - Traced tensors and the ops that build them ----*- C++ -*-===//
//
// A genesis::Tensor is a value of a trace in progress: an SSA value of the
// genesis dialect with a static shape and dtype. The free functions and
// operators here append ops to the trace; they broadcast like NumPy/PyTorch
// by inserting explicit genesis.broadcast_in_dim ops, accept negative
// dimensions, and check shapes at once, throwing genesis::Error that names the
// user's source line. Each op records that line (the `Site` default argument
// is evaluated at the caller) as its MLIR location.
//
// Public names follow libtorch (snake_case, torch argument order).
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_FRONTEND_TENSOR_H
#define GENESIS_FRONTEND_TENSOR_H

#include "runtime/support/HostArray.h"

#include "mlir/IR/Value.h"

#include <optional>
#include <string>
#include <vector>

namespace genesis {

class Trace;
namespace nn {
class Parameter;
}

/// A source position in user code, captured by default arguments.
struct Site {
  const char *file = "";
  int line = 0;
  static constexpr Site current(const char *file = __builtin_FILE(),
                                int line = __builtin_LINE()) {
    return {file, line};
  }
};

using Shape = std::vector<int64_t>;

class Tensor {
public:
  Tensor() = default;
  Tensor(mlir::Value value, Trace *trace) : value_(value), trace_(trace) {}

  mlir::Value value() const { return value_; }
  Trace &trace() const;
  bool defined() const { return static_cast<bool>(value_); }

  DType dtype() const;
  Shape shape() const;
  int64_t dim() const;
  /// Size of dimension `d`; negative `d` counts from the end.
  int64_t size(int64_t d) const;
  int64_t numel() const;

  Tensor reshape(Shape shape, Site site = Site::current()) const;
  Tensor view(Shape shape, Site site = Site::current()) const {
    return reshape(std::move(shape), site);
  }
  Tensor transpose(int64_t dim0, int64_t dim1,
                   Site site = Site::current()) const;
  Tensor permute(Shape dims, Site site = Site::current()) const;
  /// Transpose of a 2-D tensor.
  Tensor t(Site site = Site::current()) const;
  Tensor unsqueeze(int64_t d, Site site = Site::current()) const;
  Tensor squeeze(int64_t d, Site site = Site::current()) const;
  Tensor flatten(int64_t start = 0, int64_t end = -1,
                 Site site = Site::current()) const;
  Tensor expand(Shape shape, Site site = Site::current()) const;
  Tensor to(DType dtype, Site site = Site::current()) const;
  Tensor slice(int64_t dim, int64_t start, int64_t end, int64_t step = 1,
               Site site = Site::current()) const;
  Tensor sum(std::vector<int64_t> dims = {}, bool keepdim = false,
             Site site = Site::current()) const;
  Tensor mean(std::vector<int64_t> dims = {}, bool keepdim = false,
              Site site = Site::current()) const;

private:
  mlir::Value value_;
  Trace *trace_ = nullptr;
};

/// A tensor operand that remembers where the user wrote it: operators cannot
/// take a defaulted Site, but the implicit conversion to this type can.
struct TensorAt {
  TensorAt(const Tensor &tensor, Site site = Site::current())
      : tensor(tensor), site(site) {}
  TensorAt(const nn::Parameter &parameter, Site site = Site::current());
  Tensor tensor;
  Site site;
};

enum class Reduction { None, Mean, Sum };

//===----------------------------------------------------------------------===//
// Creation
//===----------------------------------------------------------------------===//

/// A constant holding `data` (embedded in the graph: use for small tables).
Tensor constant(Trace &trace, const HostArray &data,
                Site site = Site::current());
/// A tensor of `shape` whose elements all equal `value`.
Tensor full(Trace &trace, Shape shape, double value, DType dtype = DType::F32,
            Site site = Site::current());
Tensor zeros(Trace &trace, Shape shape, DType dtype = DType::F32,
             Site site = Site::current());
Tensor ones(Trace &trace, Shape shape, DType dtype = DType::F32,
            Site site = Site::current());
/// 0, 1, ..., n-1.
Tensor arange(Trace &trace, int64_t n, DType dtype = DType::I64,
              Site site = Site::current());
/// A tensor like `like` filled with `value`.
Tensor full_like(const Tensor &like, double value, Site site = Site::current());

//===----------------------------------------------------------------------===//
// Elementwise (NumPy broadcasting)
//===----------------------------------------------------------------------===//

Tensor add(const Tensor &a, const Tensor &b, Site site = Site::current());
Tensor sub(const Tensor &a, const Tensor &b, Site site = Site::current());
Tensor mul(const Tensor &a, const Tensor &b, Site site = Site::current());
Tensor div(const Tensor &a, const Tensor &b, Site site = Site::current());
Tensor pow(const Tensor &a, const Tensor &b, Site site = Site::current());
Tensor pow(const Tensor &a, double exponent, Site site = Site::current());
Tensor maximum(const Tensor &a, const Tensor &b, Site site = Site::current());
Tensor minimum(const Tensor &a, const Tensor &b, Site site = Site::current());
Tensor clamp(const Tensor &x, std::optional<double> min,
             std::optional<double> max, Site site = Site::current());

Tensor operator+(TensorAt a, const Tensor &b);
Tensor operator-(TensorAt a, const Tensor &b);
Tensor operator*(TensorAt a, const Tensor &b);
Tensor operator/(TensorAt a, const Tensor &b);
Tensor operator+(TensorAt a, double b);
Tensor operator-(TensorAt a, double b);
Tensor operator*(TensorAt a, double b);
Tensor operator/(TensorAt a, double b);
Tensor operator+(double a, TensorAt b);
Tensor operator-(double a, TensorAt b);
Tensor operator*(double a, TensorAt b);
Tensor operator/(double a, TensorAt b);
Tensor operator-(TensorAt a);

Tensor neg(const Tensor &x, Site site = Site::current());
Tensor abs(const Tensor &x, Site site = Site::current());
Tensor sign(const Tensor &x, Site site = Site::current());
Tensor exp(const Tensor &x, Site site = Site::current());
Tensor log(const Tensor &x, Site site = Site::current());
Tensor sqrt(const Tensor &x, Site site = Site::current());
Tensor rsqrt(const Tensor &x, Site site = Site::current());
Tensor tanh(const Tensor &x, Site site = Site::current());
Tensor sigmoid(const Tensor &x, Site site = Site::current());
Tensor relu(const Tensor &x, Site site = Site::current());
/// `approximate` is "none" (erf, the default) or "tanh", as torch.
Tensor gelu(const Tensor &x, const std::string &approximate = "none",
            Site site = Site::current());
Tensor silu(const Tensor &x, Site site = Site::current());
Tensor sin(const Tensor &x, Site site = Site::current());
Tensor erf(const Tensor &x, Site site = Site::current());
Tensor cos(const Tensor &x, Site site = Site::current());

Tensor eq(const Tensor &a, const Tensor &b, Site site = Site::current());
Tensor ne(const Tensor &a, const Tensor &b, Site site = Site::current());
Tensor lt(const Tensor &a, const Tensor &b, Site site = Site::current());
Tensor le(const Tensor &a, const Tensor &b, Site site = Site::current());
Tensor gt(const Tensor &a, const Tensor &b, Site site = Site::current());
Tensor ge(const Tensor &a, const Tensor &b, Site site = Site::current());
Tensor logical_and(const Tensor &a, const Tensor &b,
                   Site site = Site::current());
Tensor logical_or(const Tensor &a, const Tensor &b,
                  Site site = Site::current());
Tensor logical_not(const Tensor &x, Site site = Site::current());
Tensor isnan(const Tensor &x, Site site = Site::current());
/// `condition ? a : b`, broadcasting all three.
Tensor where(const Tensor &condition, const Tensor &a, const Tensor &b,
             Site site = Site::current());

//===----------------------------------------------------------------------===//
// Shape
//===----------------------------------------------------------------------===//

Tensor cat(const std::vector<Tensor> &tensors, int64_t dim = 0,
           Site site = Site::current());
Tensor stack(const std::vector<Tensor> &tensors, int64_t dim = 0,
             Site site = Site::current());
/// Pieces of `size` along `dim` (the last may be smaller).
std::vector<Tensor> split(const Tensor &x, int64_t size, int64_t dim = 0,
                          Site site = Site::current());
std::vector<Tensor> chunk(const Tensor &x, int64_t chunks, int64_t dim = 0,
                          Site site = Site::current());
/// Broadcasts `x` to `shape` (NumPy rules).
Tensor broadcast_to(const Tensor &x, const Shape &shape,
                    Site site = Site::current());
/// Rows of `x` along `dim` at integer `index` (any shape), numpy.take.
Tensor index_select(const Tensor &x, int64_t dim, const Tensor &index,
                    Site site = Site::current());
/// torch.index_add: `x` plus `source` added at rows `index` along `dim`;
/// repeated indices accumulate.
Tensor index_add(const Tensor &x, int64_t dim, const Tensor &index,
                 const Tensor &source, Site site = Site::current());
/// Zero padding: `low[d]` elements before and `high[d]` after dimension d
/// (explicit per dimension, unlike torch.nn.functional.pad's reversed pairs).
Tensor pad(const Tensor &x, const Shape &low, const Shape &high,
           Site site = Site::current());
/// The same values, treated as a constant by differentiation (torch detach,
/// jax.lax.stop_gradient).
Tensor detach(const Tensor &x, Site site = Site::current());

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

/// Reductions over `dims` (all dimensions when empty).
Tensor sum(const Tensor &x, std::vector<int64_t> dims = {},
           bool keepdim = false, Site site = Site::current());
Tensor mean(const Tensor &x, std::vector<int64_t> dims = {},
            bool keepdim = false, Site site = Site::current());
Tensor amax(const Tensor &x, std::vector<int64_t> dims = {},
            bool keepdim = false, Site site = Site::current());
Tensor amin(const Tensor &x, std::vector<int64_t> dims = {},
            bool keepdim = false, Site site = Site::current());
/// Variance with `correction` (1 = unbiased, torch's default).
Tensor var(const Tensor &x, std::vector<int64_t> dims = {},
           int64_t correction = 1, bool keepdim = false,
           Site site = Site::current());
Tensor logsumexp(const Tensor &x, std::vector<int64_t> dims,
                 bool keepdim = false, Site site = Site::current());
Tensor argmax(const Tensor &x, int64_t dim, bool keepdim = false,
              Site site = Site::current());

//===----------------------------------------------------------------------===//
// Neural-network functions
//===----------------------------------------------------------------------===//

/// sqrt of the sum of squares of all elements of all tensors (what
/// clip_grad_norm_ compares with its maximum); f64 if a tensor is f64, else
/// f32.
Tensor global_norm(const std::vector<Tensor> &tensors,
                   Site site = Site::current());
/// torch.matmul: 1-D operands, batch broadcasting; an N-D @ 2-D product is
/// one GEMM over the flattened rows, without copying the matrix.
Tensor matmul(const Tensor &a, const Tensor &b, Site site = Site::current());
/// x @ weight^T + bias (torch.nn.functional.linear).
Tensor linear(const Tensor &x, const Tensor &weight,
              const std::optional<Tensor> &bias = std::nullopt,
              Site site = Site::current());
Tensor softmax(const Tensor &x, int64_t dim, Site site = Site::current());
Tensor log_softmax(const Tensor &x, int64_t dim, Site site = Site::current());
Tensor layer_norm(const Tensor &x, const std::optional<Tensor> &weight,
                  const std::optional<Tensor> &bias, double eps = 1e-5,
                  Site site = Site::current());
Tensor rms_norm(const Tensor &x, const Tensor &weight, double eps = 1e-6,
                Site site = Site::current());
/// Inverted dropout; the identity when `!training` or `p == 0`. Draws from
/// the trace's seed input with an offset range of its own.
Tensor dropout(const Tensor &x, double p, bool training,
               Site site = Site::current());
/// cos and sin tables [seq, head_dim] for rotary embeddings with base
/// `theta`, computed in the graph from positions `offset .. offset+seq-1`.
std::pair<Tensor, Tensor> rope_tables(Trace &trace, int64_t seq,
                                      int64_t head_dim, double theta,
                                      DType dtype = DType::F32,
                                      int64_t offset = 0,
                                      Site site = Site::current());
/// rope_tables at the positions held by a 1-D integer or float tensor (e.g.
/// `position + arange(seq)` for the tokens of a decoding step).
std::pair<Tensor, Tensor> rope_tables(const Tensor &positions, int64_t head_dim,
                                      double theta, DType dtype = DType::F32,
                                      Site site = Site::current());
/// Rotary embedding of x [..., seq, head_dim] (rotate-half convention) with
/// tables cos, sin [seq, head_dim]; or, for x [B, H, seq, head_dim], tables
/// [B, seq, head_dim] of each row's own positions (batched decoding).
Tensor apply_rotary(const Tensor &x, const Tensor &cos, const Tensor &sin,
                    Site site = Site::current());
/// q [B, Hq, S, D], k/v [B, Hkv, T, D]: GQA when Hkv < Hq, without copying
/// K/V. `scale` defaults to 1/sqrt(D); `mask` is additive, broadcast to
/// [B, Hq, S, T].
Tensor scaled_dot_product_attention(const Tensor &q, const Tensor &k,
                                    const Tensor &v,
                                    const std::optional<Tensor> &mask = {},
                                    bool is_causal = false,
                                    std::optional<double> scale = std::nullopt,
                                    Site site = Site::current());

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

/// logits [N, C], target [N] class indices.
Tensor cross_entropy(const Tensor &logits, const Tensor &target,
                     int64_t ignore_index = -100,
                     Reduction reduction = Reduction::Mean,
                     double label_smoothing = 0.0, Site site = Site::current());
Tensor mse_loss(const Tensor &input, const Tensor &target,
                Reduction reduction = Reduction::Mean,
                Site site = Site::current());
Tensor l1_loss(const Tensor &input, const Tensor &target,
               Reduction reduction = Reduction::Mean,
               Site site = Site::current());
/// Binary cross-entropy of probabilities; log terms are clamped at -100 as
/// in PyTorch.
Tensor binary_cross_entropy(const Tensor &input, const Tensor &target,
                            Reduction reduction = Reduction::Mean,
                            Site site = Site::current());
Tensor binary_cross_entropy_with_logits(const Tensor &input,
                                        const Tensor &target,
                                        Reduction reduction = Reduction::Mean,
                                        Site site = Site::current());

} // namespace genesis

#endif // GENESIS_FRONTEND_TENSOR_H
