//===- Ops.cpp - Frontend op builders -------------------------------------===//
//
// Each builder normalises PyTorch-style arguments (negative dims, implicit
// broadcasting, scalars), then emits genesis ops through Trace::insert, which
// applies the dialect's own shape rules. Errors name the user's line.
//
//===----------------------------------------------------------------------===//

#include "dialect/Evaluator/Evaluator.h"
#include "dialect/IR/GenesisOps.h"
#include "frontend/Trace.h"
#include "frontend/nn/Module.h"

#include <algorithm>
#include <cmath>
#include <numeric>

using namespace mlir;

namespace genesis {

namespace {

RankedTensorType typeOf(const Tensor &t) {
  return cast<RankedTensorType>(t.value().getType());
}

std::string describe(const Tensor &t) { return typeString(typeOf(t)); }

/// The trace all `tensors` belong to; they must be defined and share it.
Trace &traceOf(std::initializer_list<const Tensor *> tensors, Site site) {
  Trace *trace = nullptr;
  for (const Tensor *t : tensors) {
    if (!t->defined())
      throw Error(std::string(site.file) + ":" + std::to_string(site.line) +
                  ": an undefined tensor is used");
    if (trace && &t->trace() != trace)
      trace->fail(site, "tensors from different traces are combined");
    trace = &t->trace();
  }
  return *trace;
}

/// Emits an op whose result type the dialect infers.
template <typename OpT, typename... Args>
Tensor emit(Trace &trace, Site site, Args &&...args) {
  OperationState state(trace.location(site), OpT::getOperationName());
  Type placeholder = trace.builder().getNoneType();
  OpT::build(trace.builder(), state, TypeRange(placeholder),
             std::forward<Args>(args)...);
  return Tensor(trace.insert(state)->getResult(0), &trace);
}

/// Emits an op whose result type is given.
template <typename OpT, typename... Args>
Tensor emitTyped(Trace &trace, Site site, Type resultType, Args &&...args) {
  OperationState state(trace.location(site), OpT::getOperationName());
  OpT::build(trace.builder(), state, resultType, std::forward<Args>(args)...);
  return Tensor(trace.insert(state)->getResult(0), &trace);
}

int64_t normalizeDim(Trace &trace, Site site, int64_t d, int64_t rank) {
  int64_t normalized = d < 0 ? d + rank : d;
  if (normalized < 0 || normalized >= std::max<int64_t>(rank, 1))
    trace.fail(site, "dimension " + std::to_string(d) +
                         " is out of range for rank " + std::to_string(rank));
  return normalized;
}

/// Sorted, de-duplicated, non-negative dims; empty means all dimensions.
std::vector<int64_t> normalizeDims(Trace &trace, Site site,
                                   std::vector<int64_t> dims, int64_t rank) {
  if (dims.empty()) {
    dims.resize(rank);
    std::iota(dims.begin(), dims.end(), 0);
    return dims;
  }
  for (int64_t &d : dims)
    d = normalizeDim(trace, site, d, rank);
  std::sort(dims.begin(), dims.end());
  dims.erase(std::unique(dims.begin(), dims.end()), dims.end());
  return dims;
}

/// NumPy broadcast of two shapes; `what` describes the operands in errors.
Shape broadcastShapes(Trace &trace, Site site, const Shape &x, const Shape &y,
                      const std::string &what) {
  size_t rank = std::max(x.size(), y.size());
  Shape result(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t p = i < rank - x.size() ? 1 : x[i - (rank - x.size())];
    int64_t q = i < rank - y.size() ? 1 : y[i - (rank - y.size())];
    if (p != q && p != 1 && q != 1)
      trace.fail(site, "cannot broadcast " + what);
    result[i] = p == 1 ? q : p;
  }
  return result;
}

Shape broadcastShape(Trace &trace, Site site, const Tensor &a,
                     const Tensor &b) {
  return broadcastShapes(trace, site, a.shape(), b.shape(),
                         describe(a) + " with " + describe(b));
}

void checkSameDType(Trace &trace, Site site, const Tensor &a, const Tensor &b,
                    const char *what) {
  if (a.dtype() != b.dtype())
    trace.fail(site, std::string(what) + ": dtypes differ (" + describe(a) +
                         " vs " + describe(b) + "); cast one with .to() first");
}

/// The trace and values of a non-empty list of tensors of one trace.
std::pair<Trace *, SmallVector<Value>>
valuesOf(const std::vector<Tensor> &tensors, Site site, const char *what) {
  if (tensors.empty())
    throw Error(std::string(site.file) + ":" + std::to_string(site.line) +
                ": " + what + " needs at least one tensor");
  SmallVector<Value> values;
  for (const Tensor &t : tensors) {
    traceOf({&tensors.front(), &t}, site);
    values.push_back(t.value());
  }
  return {&tensors.front().trace(), values};
}

template <typename OpT>
Tensor broadcastBinary(const Tensor &a, const Tensor &b, Site site,
                       const char *what) {
  Trace &trace = traceOf({&a, &b}, site);
  checkSameDType(trace, site, a, b, what);
  Shape shape = broadcastShape(trace, site, a, b);
  return emit<OpT>(trace, site, broadcast_to(a, shape, site).value(),
                   broadcast_to(b, shape, site).value());
}

Tensor compare(const Tensor &a, const Tensor &b, CompareDirection direction,
               Site site) {
  Trace &trace = traceOf({&a, &b}, site);
  checkSameDType(trace, site, a, b, "comparison");
  Shape shape = broadcastShape(trace, site, a, b);
  return emit<CompareOp>(trace, site, direction,
                         broadcast_to(a, shape, site).value(),
                         broadcast_to(b, shape, site).value());
}

template <typename OpT> Tensor unaryOp(const Tensor &x, Site site) {
  return emit<OpT>(traceOf({&x}, site), site, x.value());
}

void checkFloat(const Tensor &x, Site site, const char *what) {
  if (!isFloatDType(x.dtype()))
    x.trace().fail(site, std::string(what) +
                             " needs a floating-point tensor, "
                             "got " +
                             describe(x));
}

Tensor reduceTo(const Tensor &loss, Reduction reduction, Site site) {
  switch (reduction) {
  case Reduction::None:
    return loss;
  case Reduction::Sum:
    return sum(loss, {}, false, site);
  case Reduction::Mean:
    return mean(loss, {}, false, site);
  }
  return loss;
}

FloatAttr f64(Trace &trace, double value) {
  return trace.builder().getF64FloatAttr(value);
}

} // namespace

//===----------------------------------------------------------------------===//
// Tensor
//===----------------------------------------------------------------------===//

Trace &Tensor::trace() const {
  if (!trace_)
    throw Error("an undefined tensor is used");
  return *trace_;
}

DType Tensor::dtype() const { return dtypeOf(typeOf(*this).getElementType()); }

Shape Tensor::shape() const {
  ArrayRef<int64_t> shape = typeOf(*this).getShape();
  return Shape(shape.begin(), shape.end());
}

int64_t Tensor::dim() const { return typeOf(*this).getRank(); }

int64_t Tensor::size(int64_t d) const {
  return shape()[normalizeDim(trace(), Site::current(), d, dim())];
}

int64_t Tensor::numel() const { return typeOf(*this).getNumElements(); }

Tensor Tensor::reshape(Shape shape, Site site) const {
  Trace &tr = traceOf({this}, site);
  int64_t known = 1, inferred = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1 && inferred < 0)
      inferred = static_cast<int64_t>(i);
    else if (shape[i] < 0)
      tr.fail(site,
              "reshape: invalid target dimension " + std::to_string(shape[i]));
    else
      known *= shape[i];
  }
  if (inferred >= 0 && known != 0 && numel() % known == 0)
    shape[inferred] = numel() / known;
  if (HostArray::numelOf(shape) != numel() || (inferred >= 0 && known == 0))
    tr.fail(site,
            "cannot reshape " + describe(*this) + " to " + shapeString(shape));
  if (shape == this->shape())
    return *this;
  return emitTyped<ReshapeOp>(tr, site, typeOf(*this).clone(shape), value_);
}

Tensor Tensor::permute(Shape dims, Site site) const {
  Trace &tr = traceOf({this}, site);
  for (int64_t &d : dims)
    d = normalizeDim(tr, site, d, dim());
  // A permutation that moves only dimensions of size 1 (a decode step's
  // heads, [1, 1, H, D] -> [1, H, 1, D]) keeps the row-major order: a
  // reshape, which costs no kernel.
  Shape sorted = dims;
  std::sort(sorted.begin(), sorted.end());
  bool isPermutation =
      std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end() &&
      static_cast<int64_t>(dims.size()) == dim();
  if (isPermutation) {
    Shape permuted, kept;
    for (int64_t d : dims) {
      permuted.push_back(size(d));
      if (size(d) != 1)
        kept.push_back(d);
    }
    if (std::is_sorted(kept.begin(), kept.end()))
      return reshape(permuted, site);
  }
  return emit<TransposeOp>(tr, site, value_, ArrayRef<int64_t>(dims));
}

Tensor Tensor::transpose(int64_t dim0, int64_t dim1, Site site) const {
  Trace &tr = traceOf({this}, site);
  Shape dims(dim());
  std::iota(dims.begin(), dims.end(), 0);
  std::swap(dims[normalizeDim(tr, site, dim0, dim())],
            dims[normalizeDim(tr, site, dim1, dim())]);
  return permute(dims, site);
}

Tensor Tensor::t(Site site) const {
  if (dim() != 2)
    trace().fail(site, "t() expects a 2-D tensor, got " + describe(*this));
  return transpose(0, 1, site);
}

Tensor Tensor::unsqueeze(int64_t d, Site site) const {
  Shape shape = this->shape();
  int64_t at =
      normalizeDim(trace(), site, d < 0 ? d + dim() + 1 : d, dim() + 1);
  shape.insert(shape.begin() + at, 1);
  return reshape(shape, site);
}

Tensor Tensor::squeeze(int64_t d, Site site) const {
  Shape shape = this->shape();
  int64_t at = normalizeDim(trace(), site, d, dim());
  if (shape[at] != 1)
    return *this; // torch.squeeze leaves a dimension of size > 1 alone
  shape.erase(shape.begin() + at);
  return reshape(shape, site);
}

Tensor Tensor::flatten(int64_t start, int64_t end, Site site) const {
  if (dim() == 0)
    return reshape({1}, site);
  int64_t first = normalizeDim(trace(), site, start, dim());
  int64_t last = normalizeDim(trace(), site, end, dim());
  Shape shape = this->shape(), result(shape.begin(), shape.begin() + first);
  int64_t merged = 1;
  for (int64_t d = first; d <= last; ++d)
    merged *= shape[d];
  result.push_back(merged);
  result.insert(result.end(), shape.begin() + last + 1, shape.end());
  return reshape(result, site);
}

Tensor Tensor::expand(Shape shape, Site site) const {
  int64_t offset = static_cast<int64_t>(shape.size()) - dim();
  for (int64_t i = 0; i < static_cast<int64_t>(shape.size()); ++i)
    if (shape[i] == -1 && i >= offset)
      shape[i] = this->shape()[i - offset];
  return broadcast_to(*this, shape, site);
}

Tensor Tensor::to(DType dtype, Site site) const {
  Trace &tr = traceOf({this}, site);
  if (dtype == this->dtype())
    return *this;
  return emitTyped<CastOp>(
      tr, site, typeOf(*this).clone(elementTypeOf(&tr.context(), dtype)),
      value_);
}

Tensor Tensor::slice(int64_t d, int64_t start, int64_t end, int64_t step,
                     Site site) const {
  Trace &tr = traceOf({this}, site);
  int64_t axis = normalizeDim(tr, site, d, dim());
  int64_t size = shape()[axis];
  if (step < 1)
    tr.fail(site, "slice step must be >= 1, got " + std::to_string(step));
  // Python slicing: negative bounds count from the end, then clamp.
  auto clampBound = [size](int64_t bound) {
    bound = bound < 0 ? bound + size : bound;
    return std::clamp<int64_t>(bound, 0, size);
  };
  start = clampBound(start);
  end = std::max(start, clampBound(end));
  Shape starts(dim(), 0), limits = shape(), strides(dim(), 1);
  starts[axis] = start;
  limits[axis] = end;
  strides[axis] = step;
  return emit<SliceOp>(tr, site, value_, ArrayRef<int64_t>(starts),
                       ArrayRef<int64_t>(limits), ArrayRef<int64_t>(strides));
}

Tensor Tensor::sum(std::vector<int64_t> dims, bool keepdim, Site site) const {
  return genesis::sum(*this, std::move(dims), keepdim, site);
}

Tensor Tensor::mean(std::vector<int64_t> dims, bool keepdim, Site site) const {
  return genesis::mean(*this, std::move(dims), keepdim, site);
}

TensorAt::TensorAt(const nn::Parameter &parameter, Site site)
    : tensor(parameter.tensor(site)), site(site) {}

//===----------------------------------------------------------------------===//
// Creation
//===----------------------------------------------------------------------===//

Tensor constant(Trace &trace, const HostArray &data, Site site) {
  auto type = RankedTensorType::get(
      data.shape(), elementTypeOf(&trace.context(), data.dtype()));
  DenseElementsAttr value;
  if (data.dtype() == DType::I1) {
    SmallVector<bool> bits;
    for (int64_t i = 0; i < data.numel(); ++i)
      bits.push_back(data.getInt(i) != 0);
    value = DenseElementsAttr::get(type, bits);
  } else {
    value = DenseElementsAttr::getFromRawBuffer(
        type,
        ArrayRef<char>(static_cast<const char *>(data.data()), data.nbytes()));
  }
  return emit<ConstantOp>(trace, site, cast<ElementsAttr>(value));
}

Tensor full(Trace &trace, Shape shape, double value, DType dtype, Site site) {
  for (int64_t size : shape)
    if (size < 0)
      trace.fail(site, "full: negative dimension in " + shapeString(shape));
  Type element = elementTypeOf(&trace.context(), dtype);
  auto type = RankedTensorType::get(shape, element);
  Attribute scalar;
  if (isFloatDType(dtype))
    scalar = trace.builder().getFloatAttr(element, value);
  else if (!std::isfinite(value) || std::trunc(value) != value)
    trace.fail(site, "full: " + std::to_string(value) + " is not a valid " +
                         dtypeName(dtype) + " value");
  else
    scalar = trace.builder().getIntegerAttr(
        element, dtype == DType::I1 ? value != 0 : static_cast<int64_t>(value));
  return emit<ConstantOp>(
      trace, site, cast<ElementsAttr>(DenseElementsAttr::get(type, scalar)));
}

Tensor zeros(Trace &trace, Shape shape, DType dtype, Site site) {
  return full(trace, std::move(shape), 0.0, dtype, site);
}

Tensor ones(Trace &trace, Shape shape, DType dtype, Site site) {
  return full(trace, std::move(shape), 1.0, dtype, site);
}

Tensor arange(Trace &trace, int64_t n, DType dtype, Site site) {
  if (n < 0)
    trace.fail(site, "arange: negative length " + std::to_string(n));
  auto type =
      RankedTensorType::get({n}, elementTypeOf(&trace.context(), dtype));
  return emitTyped<IotaOp>(trace, site, type, uint64_t{0});
}

Tensor full_like(const Tensor &like, double value, Site site) {
  return full(traceOf({&like}, site), like.shape(), value, like.dtype(), site);
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

Tensor add(const Tensor &a, const Tensor &b, Site site) {
  return broadcastBinary<AddOp>(a, b, site, "add");
}
Tensor sub(const Tensor &a, const Tensor &b, Site site) {
  return broadcastBinary<SubOp>(a, b, site, "sub");
}
Tensor mul(const Tensor &a, const Tensor &b, Site site) {
  return broadcastBinary<MulOp>(a, b, site, "mul");
}
Tensor div(const Tensor &a, const Tensor &b, Site site) {
  return broadcastBinary<DivOp>(a, b, site, "div");
}
Tensor pow(const Tensor &a, const Tensor &b, Site site) {
  return broadcastBinary<PowOp>(a, b, site, "pow");
}
Tensor pow(const Tensor &a, double exponent, Site site) {
  return pow(a, full_like(a, exponent, site), site);
}
Tensor maximum(const Tensor &a, const Tensor &b, Site site) {
  return broadcastBinary<MaxOp>(a, b, site, "maximum");
}
Tensor minimum(const Tensor &a, const Tensor &b, Site site) {
  return broadcastBinary<MinOp>(a, b, site, "minimum");
}

Tensor clamp(const Tensor &x, std::optional<double> min,
             std::optional<double> max, Site site) {
  Tensor y = x;
  if (min)
    y = maximum(y, full_like(y, *min, site), site);
  if (max)
    y = minimum(y, full_like(y, *max, site), site);
  return y;
}

Tensor operator+(TensorAt a, const Tensor &b) {
  return add(a.tensor, b, a.site);
}
Tensor operator-(TensorAt a, const Tensor &b) {
  return sub(a.tensor, b, a.site);
}
Tensor operator*(TensorAt a, const Tensor &b) {
  return mul(a.tensor, b, a.site);
}
Tensor operator/(TensorAt a, const Tensor &b) {
  return div(a.tensor, b, a.site);
}
Tensor operator+(TensorAt a, double b) {
  return add(a.tensor, full_like(a.tensor, b, a.site), a.site);
}
Tensor operator-(TensorAt a, double b) {
  return sub(a.tensor, full_like(a.tensor, b, a.site), a.site);
}
Tensor operator*(TensorAt a, double b) {
  return mul(a.tensor, full_like(a.tensor, b, a.site), a.site);
}
Tensor operator/(TensorAt a, double b) {
  return div(a.tensor, full_like(a.tensor, b, a.site), a.site);
}
Tensor operator+(double a, TensorAt b) {
  return add(full_like(b.tensor, a, b.site), b.tensor, b.site);
}
Tensor operator-(double a, TensorAt b) {
  return sub(full_like(b.tensor, a, b.site), b.tensor, b.site);
}
Tensor operator*(double a, TensorAt b) {
  return mul(full_like(b.tensor, a, b.site), b.tensor, b.site);
}
Tensor operator/(double a, TensorAt b) {
  return div(full_like(b.tensor, a, b.site), b.tensor, b.site);
}
Tensor operator-(TensorAt a) { return neg(a.tensor, a.site); }

Tensor neg(const Tensor &x, Site site) { return unaryOp<NegOp>(x, site); }
Tensor abs(const Tensor &x, Site site) { return unaryOp<AbsOp>(x, site); }
Tensor sign(const Tensor &x, Site site) { return unaryOp<SignOp>(x, site); }
Tensor exp(const Tensor &x, Site site) { return unaryOp<ExpOp>(x, site); }
Tensor log(const Tensor &x, Site site) { return unaryOp<LogOp>(x, site); }
Tensor sqrt(const Tensor &x, Site site) { return unaryOp<SqrtOp>(x, site); }
Tensor rsqrt(const Tensor &x, Site site) { return unaryOp<RsqrtOp>(x, site); }
Tensor tanh(const Tensor &x, Site site) { return unaryOp<TanhOp>(x, site); }
Tensor sigmoid(const Tensor &x, Site site) {
  return unaryOp<SigmoidOp>(x, site);
}
Tensor relu(const Tensor &x, Site site) { return unaryOp<ReluOp>(x, site); }
Tensor silu(const Tensor &x, Site site) { return unaryOp<SiluOp>(x, site); }
Tensor sin(const Tensor &x, Site site) { return unaryOp<SinOp>(x, site); }
Tensor cos(const Tensor &x, Site site) { return unaryOp<CosOp>(x, site); }
Tensor erf(const Tensor &x, Site site) { return unaryOp<ErfOp>(x, site); }
Tensor detach(const Tensor &x, Site site) {
  return unaryOp<StopGradientOp>(x, site);
}

Tensor gelu(const Tensor &x, const std::string &approximate, Site site) {
  Trace &trace = traceOf({&x}, site);
  if (approximate != "none" && approximate != "tanh")
    trace.fail(site, "gelu: approximate must be \"none\" or \"tanh\", got \"" +
                         approximate + "\"");
  return emit<GeluOp>(trace, site, x.value(),
                      approximate == "tanh" ? GeluApproximation::tanh
                                            : GeluApproximation::erf);
}

Tensor eq(const Tensor &a, const Tensor &b, Site site) {
  return compare(a, b, CompareDirection::eq, site);
}
Tensor ne(const Tensor &a, const Tensor &b, Site site) {
  return compare(a, b, CompareDirection::ne, site);
}
Tensor lt(const Tensor &a, const Tensor &b, Site site) {
  return compare(a, b, CompareDirection::lt, site);
}
Tensor le(const Tensor &a, const Tensor &b, Site site) {
  return compare(a, b, CompareDirection::le, site);
}
Tensor gt(const Tensor &a, const Tensor &b, Site site) {
  return compare(a, b, CompareDirection::gt, site);
}
Tensor ge(const Tensor &a, const Tensor &b, Site site) {
  return compare(a, b, CompareDirection::ge, site);
}

Tensor logical_and(const Tensor &a, const Tensor &b, Site site) {
  return broadcastBinary<AndOp>(a, b, site, "logical_and");
}
Tensor logical_or(const Tensor &a, const Tensor &b, Site site) {
  return broadcastBinary<OrOp>(a, b, site, "logical_or");
}
Tensor logical_not(const Tensor &x, Site site) {
  return unaryOp<NotOp>(x, site);
}

Tensor isnan(const Tensor &x, Site site) { return ne(x, x, site); }

Tensor where(const Tensor &condition, const Tensor &a, const Tensor &b,
             Site site) {
  Trace &trace = traceOf({&condition, &a, &b}, site);
  if (condition.dtype() != DType::I1)
    trace.fail(site, "where: condition must be bool (i1), got " +
                         describe(condition));
  checkSameDType(trace, site, a, b, "where");
  Shape shape = broadcastShape(trace, site, a, b);
  Tensor shaped = broadcast_to(a, shape, site);
  shape = broadcastShape(trace, site, condition, shaped);
  return emit<SelectOp>(trace, site,
                        broadcast_to(condition, shape, site).value(),
                        broadcast_to(a, shape, site).value(),
                        broadcast_to(b, shape, site).value());
}

//===----------------------------------------------------------------------===//
// Shape
//===----------------------------------------------------------------------===//

Tensor broadcast_to(const Tensor &x, const Shape &shape, Site site) {
  Trace &trace = traceOf({&x}, site);
  Shape from = x.shape();
  if (from == shape)
    return x;
  size_t offset = shape.size() - from.size();
  bool valid = from.size() <= shape.size();
  for (size_t i = 0; valid && i < from.size(); ++i)
    valid = from[i] == 1 || from[i] == shape[offset + i];
  if (!valid)
    trace.fail(site,
               "cannot broadcast " + describe(x) + " to " + shapeString(shape));
  Shape dims(from.size());
  std::iota(dims.begin(), dims.end(), static_cast<int64_t>(offset));
  return emitTyped<BroadcastInDimOp>(trace, site, typeOf(x).clone(shape),
                                     x.value(), ArrayRef<int64_t>(dims));
}

Tensor cat(const std::vector<Tensor> &tensors, int64_t dim, Site site) {
  auto [trace, values] = valuesOf(tensors, site, "cat");
  uint64_t axis = normalizeDim(*trace, site, dim, tensors.front().dim());
  return emit<ConcatOp>(*trace, site, ValueRange(values), axis);
}

Tensor stack(const std::vector<Tensor> &tensors, int64_t dim, Site site) {
  valuesOf(tensors, site, "stack");
  int64_t axis = dim < 0 ? dim + tensors.front().dim() + 1 : dim;
  std::vector<Tensor> expanded;
  expanded.reserve(tensors.size());
  for (const Tensor &t : tensors)
    expanded.push_back(t.unsqueeze(axis, site));
  return cat(expanded, axis, site);
}

std::vector<Tensor> split(const Tensor &x, int64_t size, int64_t dim,
                          Site site) {
  Trace &trace = traceOf({&x}, site);
  if (size < 1)
    trace.fail(site, "split size must be >= 1, got " + std::to_string(size));
  int64_t length = x.shape()[normalizeDim(trace, site, dim, x.dim())];
  std::vector<Tensor> pieces;
  for (int64_t start = 0; start < length; start += size)
    pieces.push_back(
        x.slice(dim, start, std::min(start + size, length), 1, site));
  return pieces;
}

std::vector<Tensor> chunk(const Tensor &x, int64_t chunks, int64_t dim,
                          Site site) {
  Trace &trace = traceOf({&x}, site);
  if (chunks < 1)
    trace.fail(site, "chunk count must be >= 1, got " + std::to_string(chunks));
  int64_t length = x.shape()[normalizeDim(trace, site, dim, x.dim())];
  return split(x, std::max<int64_t>(1, (length + chunks - 1) / chunks), dim,
               site);
}

Tensor index_select(const Tensor &x, int64_t dim, const Tensor &index,
                    Site site) {
  Trace &trace = traceOf({&x, &index}, site);
  uint64_t axis = normalizeDim(trace, site, dim, x.dim());
  return emit<TakeOp>(trace, site, x.value(), index.value(), axis);
}

Tensor index_add(const Tensor &x, int64_t dim, const Tensor &index,
                 const Tensor &source, Site site) {
  Trace &trace = traceOf({&x, &index, &source}, site);
  uint64_t axis = normalizeDim(trace, site, dim, x.dim());
  return emit<ScatterAddOp>(trace, site, x.value(), index.value(),
                            source.value(), axis);
}

Tensor pad(const Tensor &x, const Shape &low, const Shape &high, Site site) {
  Trace &trace = traceOf({&x}, site);
  Shape interior(x.dim(), 0);
  return emit<PadOp>(trace, site, x.value(), ArrayRef<int64_t>(low),
                     ArrayRef<int64_t>(high), ArrayRef<int64_t>(interior));
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

template <typename OpT>
static Tensor reduceOp(const Tensor &x, std::vector<int64_t> dims, bool keepdim,
                       Site site) {
  Trace &trace = traceOf({&x}, site);
  dims = normalizeDims(trace, site, std::move(dims), x.dim());
  Tensor input = x.dtype() == DType::I1 ? x.to(DType::I64, site) : x;
  return emit<OpT>(trace, site, input.value(), ArrayRef<int64_t>(dims),
                   keepdim);
}

Tensor sum(const Tensor &x, std::vector<int64_t> dims, bool keepdim,
           Site site) {
  return reduceOp<ReduceSumOp>(x, std::move(dims), keepdim, site);
}

Tensor amax(const Tensor &x, std::vector<int64_t> dims, bool keepdim,
            Site site) {
  return reduceOp<ReduceMaxOp>(x, std::move(dims), keepdim, site);
}

Tensor amin(const Tensor &x, std::vector<int64_t> dims, bool keepdim,
            Site site) {
  return reduceOp<ReduceMinOp>(x, std::move(dims), keepdim, site);
}

Tensor mean(const Tensor &x, std::vector<int64_t> dims, bool keepdim,
            Site site) {
  checkFloat(x, site, "mean");
  Trace &trace = traceOf({&x}, site);
  dims = normalizeDims(trace, site, std::move(dims), x.dim());
  int64_t count = 1;
  for (int64_t d : dims)
    count *= x.shape()[d];
  Tensor total = sum(x, dims, keepdim, site);
  return total / static_cast<double>(count);
}

Tensor var(const Tensor &x, std::vector<int64_t> dims, int64_t correction,
           bool keepdim, Site site) {
  checkFloat(x, site, "var");
  Trace &trace = traceOf({&x}, site);
  dims = normalizeDims(trace, site, std::move(dims), x.dim());
  int64_t count = 1;
  for (int64_t d : dims)
    count *= x.shape()[d];
  Tensor centered = sub(x, mean(x, dims, /*keepdim=*/true, site), site);
  Tensor squares = sum(mul(centered, centered, site), dims, keepdim, site);
  return div(squares,
             full_like(squares, static_cast<double>(count - correction), site),
             site);
}

Tensor logsumexp(const Tensor &x, std::vector<int64_t> dims, bool keepdim,
                 Site site) {
  checkFloat(x, site, "logsumexp");
  Tensor max = amax(x, dims, /*keepdim=*/true, site);
  // An infinite maximum would give inf - inf = NaN; shift by 0 instead, as
  // torch.logsumexp does, so all -inf rows give -inf.
  Tensor infinite = eq(abs(max, site), full_like(max, INFINITY, site), site);
  Tensor shift = where(infinite, full_like(max, 0.0, site), max, site);
  Tensor total = sum(exp(sub(x, shift, site), site), dims, true, site);
  Tensor result = add(log(total, site), shift, site);
  if (keepdim)
    return result;
  Trace &trace = traceOf({&x}, site);
  dims = normalizeDims(trace, site, std::move(dims), x.dim());
  Shape shape;
  for (int64_t d = 0; d < x.dim(); ++d)
    if (!std::binary_search(dims.begin(), dims.end(), d))
      shape.push_back(x.shape()[d]);
  return result.reshape(shape, site);
}

Tensor argmax(const Tensor &x, int64_t dim, bool keepdim, Site site) {
  Trace &trace = traceOf({&x}, site);
  uint64_t axis = normalizeDim(trace, site, dim, x.dim());
  return emit<ArgmaxOp>(trace, site, x.value(), axis, keepdim);
}

//===----------------------------------------------------------------------===//
// Neural-network functions
//===----------------------------------------------------------------------===//

Tensor global_norm(const std::vector<Tensor> &tensors, Site site) {
  auto [trace, values] = valuesOf(tensors, site, "global_norm");
  return emit<GlobalNormOp>(*trace, site, ValueRange(values));
}

/// rows-of-x @ w (or w^T): an N-D by 2-D product as one flattened GEMM.
static Tensor rowsTimesMatrix(const Tensor &x, const Tensor &w, bool transposeW,
                              Site site) {
  Trace &trace = traceOf({&x, &w}, site);
  Shape shape = x.shape();
  int64_t k = shape.back();
  Tensor rows = x.reshape({x.numel() / std::max<int64_t>(k, 1), k}, site);
  Tensor product = emit<MatmulOp>(trace, site, rows.value(), w.value(),
                                  /*transpose_lhs=*/false, transposeW);
  shape.back() = product.shape().back();
  return product.reshape(shape, site);
}

Tensor matmul(const Tensor &a, const Tensor &b, Site site) {
  Trace &trace = traceOf({&a, &b}, site);
  checkSameDType(trace, site, a, b, "matmul");
  if (a.dim() == 0 || b.dim() == 0)
    trace.fail(site, "matmul does not take scalars (" + describe(a) + ", " +
                         describe(b) + ")");
  if (a.dim() == 1 && b.dim() == 1)
    return matmul(a.unsqueeze(0, site), b, site).reshape({}, site);
  if (a.dim() == 1)
    return matmul(a.unsqueeze(0, site), b, site).squeeze(-2, site);
  if (b.dim() == 1)
    return matmul(a, b.unsqueeze(-1, site), site).squeeze(-1, site);
  if (a.shape().back() != b.shape()[b.dim() - 2])
    trace.fail(site, "matmul: inner dimensions differ (" + describe(a) + " @ " +
                         describe(b) + ")");
  if (b.dim() == 2)
    return rowsTimesMatrix(a, b, /*transposeW=*/false, site);
  // Batched: broadcast the batch dimensions of both operands.
  Shape shapeA = a.shape(), shapeB = b.shape();
  Shape batchA(shapeA.begin(), shapeA.end() - 2),
      batchB(shapeB.begin(), shapeB.end() - 2);
  Shape batch = broadcastShapes(trace, site, batchA, batchB,
                                "the batch dimensions of " + describe(a) +
                                    " and " + describe(b));
  auto withBatch = [&](const Tensor &t) {
    Shape shape = batch;
    shape.push_back(t.shape()[t.dim() - 2]);
    shape.push_back(t.shape().back());
    return broadcast_to(t, shape, site);
  };
  return emit<MatmulOp>(trace, site, withBatch(a).value(), withBatch(b).value(),
                        false, false);
}

Tensor linear(const Tensor &x, const Tensor &weight,
              const std::optional<Tensor> &bias, Site site) {
  Trace &trace = traceOf({&x, &weight}, site);
  checkSameDType(trace, site, x, weight, "linear");
  if (weight.dim() != 2 || x.dim() < 1 || x.shape().back() != weight.shape()[1])
    trace.fail(site, "linear: input " + describe(x) +
                         " does not match weight " + describe(weight) +
                         " ([out_features, in_features])");
  Tensor y = x.dim() == 1
                 ? rowsTimesMatrix(x.unsqueeze(0, site), weight, true, site)
                       .squeeze(0, site)
                 : rowsTimesMatrix(x, weight, /*transposeW=*/true, site);
  return bias ? add(y, *bias, site) : y;
}

Tensor softmax(const Tensor &x, int64_t dim, Site site) {
  Trace &trace = traceOf({&x}, site);
  return emit<SoftmaxOp>(trace, site, x.value(),
                         uint64_t(normalizeDim(trace, site, dim, x.dim())));
}

Tensor log_softmax(const Tensor &x, int64_t dim, Site site) {
  Trace &trace = traceOf({&x}, site);
  return emit<LogSoftmaxOp>(trace, site, x.value(),
                            uint64_t(normalizeDim(trace, site, dim, x.dim())));
}

Tensor layer_norm(const Tensor &x, const std::optional<Tensor> &weight,
                  const std::optional<Tensor> &bias, double eps, Site site) {
  Trace &trace = traceOf({&x}, site);
  return emit<LayerNormOp>(trace, site, x.value(),
                           weight ? weight->value() : Value(),
                           bias ? bias->value() : Value(), f64(trace, eps));
}

Tensor rms_norm(const Tensor &x, const Tensor &weight, double eps, Site site) {
  Trace &trace = traceOf({&x, &weight}, site);
  return emit<RmsNormOp>(trace, site, x.value(), weight.value(),
                         f64(trace, eps));
}

Tensor dropout(const Tensor &x, double p, bool training, Site site) {
  Trace &trace = traceOf({&x}, site);
  if (!(p >= 0.0 && p < 1.0))
    trace.fail(site, "dropout probability must be in [0, 1), got " +
                         std::to_string(p));
  if (!training || p == 0.0)
    return x;
  int64_t offset = trace.reserve_rng_offsets(x.numel());
  return emit<DropoutOp>(trace, site, x.value(), trace.rng_seed().value(),
                         f64(trace, p),
                         trace.builder().getI64IntegerAttr(offset));
}

std::pair<Tensor, Tensor> rope_tables(Trace &trace, int64_t seq,
                                      int64_t head_dim, double theta,
                                      DType dtype, int64_t offset, Site site) {
  Tensor positions = arange(trace, seq, DType::F32, site);
  if (offset != 0)
    positions = positions + static_cast<double>(offset);
  return rope_tables(positions, head_dim, theta, dtype, site);
}

std::pair<Tensor, Tensor> rope_tables(const Tensor &positions, int64_t head_dim,
                                      double theta, DType dtype, Site site) {
  Trace &trace = traceOf({&positions}, site);
  if (head_dim <= 0 || head_dim % 2 != 0)
    trace.fail(site, "rope_tables: head_dim must be even and positive, got " +
                         std::to_string(head_dim));
  if (positions.dim() != 1)
    trace.fail(site, "rope_tables: positions must be 1-D, got " +
                         describe(positions));
  // Hugging Face computes the inverse frequencies in f32:
  // 1 / theta^(arange(0, D, 2) / D). They are ops rather than a constant
  // table because compiled plans hold no non-splat constants.
  int64_t half = head_dim / 2;
  auto filled = [&](double value) {
    return full(trace, {half}, value, DType::F32, site);
  };
  Tensor exponents =
      div(mul(arange(trace, half, DType::F32, site), filled(2.0), site),
          filled(static_cast<double>(head_dim)), site);
  Tensor inverse = div(filled(1.0), pow(filled(theta), exponents, site), site);
  Tensor freqs = mul(positions.to(DType::F32, site).unsqueeze(1, site),
                     inverse.unsqueeze(0, site), site);
  Tensor angles = cat({freqs, freqs}, -1, site);
  return {cos(angles, site).to(dtype, site), sin(angles, site).to(dtype, site)};
}

Tensor apply_rotary(const Tensor &x, const Tensor &cos, const Tensor &sin,
                    Site site) {
  Trace &trace = traceOf({&x, &cos, &sin}, site);
  if (cos.dim() != 3)
    return emit<RopeOp>(trace, site, x.value(), cos.value(), sin.value());
  // Tables per row: genesis.rope broadcasts [S, D] tables over leading
  // dimensions, so the rows join the sequence: x [B, H, S, D] as
  // [H, B * S, D] against tables [B * S, D].
  if (x.dim() != 4 || cos.shape() != sin.shape() ||
      cos.shape() != Shape{x.size(0), x.size(2), x.size(3)})
    trace.fail(site, "apply_rotary: tables of each row's positions must be "
                     "[B, S, D] for x [B, H, S, D], got x " +
                         describe(x) + ", cos " + describe(cos) + ", sin " +
                         describe(sin));
  int64_t batch = x.size(0), heads = x.size(1), seq = x.size(2),
          dim = x.size(3);
  Shape rows = {batch * seq, dim};
  Tensor joined =
      x.transpose(0, 1, site).reshape({heads, batch * seq, dim}, site);
  Tensor rotated =
      emit<RopeOp>(trace, site, joined.value(), cos.reshape(rows, site).value(),
                   sin.reshape(rows, site).value());
  return rotated.reshape({heads, batch, seq, dim}, site).transpose(0, 1, site);
}

Tensor scaled_dot_product_attention(const Tensor &q, const Tensor &k,
                                    const Tensor &v,
                                    const std::optional<Tensor> &mask,
                                    bool is_causal, std::optional<double> scale,
                                    Site site) {
  Trace &trace = traceOf({&q, &k, &v}, site);
  if (q.dim() != 4 || k.dim() != 4 || v.dim() != 4)
    trace.fail(site, "scaled_dot_product_attention expects [B, H, S, D] "
                     "tensors, got " +
                         describe(q) + ", " + describe(k) + ", " + describe(v));
  double s = scale ? *scale : 1.0 / std::sqrt(static_cast<double>(q.size(-1)));
  Value maskValue;
  if (mask) {
    Tensor additive = *mask;
    if (mask->dtype() == DType::I1) // torch: true means "may attend"
      additive =
          where(*mask, full(trace, mask->shape(), 0.0, q.dtype(), site),
                full(trace, mask->shape(), -INFINITY, q.dtype(), site), site);
    maskValue = broadcast_to(additive,
                             {q.size(0), q.size(1), q.size(2), k.size(2)}, site)
                    .value();
  }
  return emit<AttentionOp>(
      trace, site, q.value(), k.value(), v.value(), maskValue,
      is_causal ? trace.builder().getUnitAttr() : UnitAttr(), f64(trace, s));
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

Tensor cross_entropy(const Tensor &logits, const Tensor &target,
                     int64_t ignore_index, Reduction reduction,
                     double label_smoothing, Site site) {
  Trace &trace = traceOf({&logits, &target}, site);
  if (logits.dim() != 2 || target.dim() != 1)
    trace.fail(site, "cross_entropy expects logits [N, C] and target [N], "
                     "got " +
                         describe(logits) + " and " + describe(target));
  LossReduction kind = reduction == Reduction::None  ? LossReduction::none
                       : reduction == Reduction::Sum ? LossReduction::sum
                                                     : LossReduction::mean;
  return emit<CrossEntropyOp>(trace, site, logits.value(), target.value(),
                              trace.builder().getI64IntegerAttr(ignore_index),
                              f64(trace, label_smoothing),
                              LossReductionAttr::get(&trace.context(), kind));
}

Tensor mse_loss(const Tensor &input, const Tensor &target, Reduction reduction,
                Site site) {
  Tensor d = sub(input, target, site);
  return reduceTo(mul(d, d, site), reduction, site);
}

Tensor l1_loss(const Tensor &input, const Tensor &target, Reduction reduction,
               Site site) {
  return reduceTo(abs(sub(input, target, site), site), reduction, site);
}

Tensor binary_cross_entropy(const Tensor &input, const Tensor &target,
                            Reduction reduction, Site site) {
  Tensor logP = clamp(log(input, site), -100.0, std::nullopt, site);
  Tensor logNotP =
      clamp(log(1.0 - TensorAt(input, site), site), -100.0, std::nullopt, site);
  Tensor loss = neg(add(mul(target, logP, site),
                        mul(1.0 - TensorAt(target, site), logNotP, site), site),
                    site);
  return reduceTo(loss, reduction, site);
}

Tensor binary_cross_entropy_with_logits(const Tensor &input,
                                        const Tensor &target,
                                        Reduction reduction, Site site) {
  // max(x, 0) - x*y + log(1 + exp(-|x|)): stable for large |x|.
  Tensor positive = relu(input, site);
  Tensor softplus =
      log(1.0 + TensorAt(exp(neg(abs(input, site), site), site), site), site);
  Tensor loss =
      add(sub(positive, mul(input, target, site), site), softplus, site);
  return reduceTo(loss, reduction, site);
}

} // namespace genesis
