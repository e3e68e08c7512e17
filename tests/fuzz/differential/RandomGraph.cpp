//===- RandomGraph.cpp - Random well-typed genesis functions --------------===//
//
// Each op kind has a maker that picks operands among the values built so far
// (or adds arguments of the types it needs) and states its result types
// from the op's documented shape rules. Inputs are kept inside each op's
// domain by the graph itself (log, sqrt, rsqrt and pow read |x| + 0.5,
// float divisors are |y| + 0.5, integer divisors max(|y|, 1)) so that the
// random values exercise the arithmetic instead of propagating NaN; indices
// and labels are arguments drawn inside their bounds.
//
//===----------------------------------------------------------------------===//

#include "tests/fuzz/differential/RandomGraph.h"

#include "runtime/support/Random.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <numeric>
#include <stdexcept>

namespace genesis::fuzz {

bool TensorSpec::isFloat() const {
  return element == "f32" || element == "f64" || element == "bf16" ||
         element == "f16";
}

bool TensorSpec::isInteger() const {
  return element == "i32" || element == "i64";
}

int64_t TensorSpec::numel() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::string TensorSpec::str(bool widen) const {
  std::string s = "tensor<";
  for (int64_t d : shape)
    s += std::to_string(d) + "x";
  return s + (widen && !fixed && isFloat() ? "f64" : element) + ">";
}

namespace {

std::string join(const std::vector<int64_t> &values) {
  std::string s;
  for (size_t i = 0; i < values.size(); ++i)
    s += (i ? ", " : "") + std::to_string(values[i]);
  return s;
}

std::string floatLiteral(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.6e", value);
  return buffer;
}

class Builder {
public:
  Builder(uint64_t seed, const GraphOptions &options)
      : rng(seed), options(options) {
    allowZero = uniform() < options.zeroSizeProbability;
  }

  Graph build() {
    int ops = static_cast<int>(randint(1, options.maxOps + 1));
    for (int made = 0, tries = 0; made < ops && tries < 8 * ops; ++tries)
      if (makeOne())
        ++made;
    chooseOutputs();
    graph.removeDeadNodes();
    return graph;
  }

private:
  using Predicate = std::function<bool(const TensorSpec &)>;

  Generator rng;
  GraphOptions options;
  Graph graph;
  bool allowZero = false;

  double uniform() { return rng.uniform(); }
  int64_t randint(int64_t low, int64_t high) { return rng.randint(low, high); }
  bool coin(double p = 0.5) { return uniform() < p; }
  template <typename T> const T &choose(const std::vector<T> &items) {
    return items[static_cast<size_t>(randint(0, items.size()))];
  }

  int64_t dimSize() {
    if (allowZero && coin(0.12))
      return 0;
    return choose<int64_t>({1, 1, 2, 3, 4, 5, 7, 8});
  }
  std::vector<int64_t> randomShape(int minRank = 0, int maxRank = 3) {
    std::vector<int64_t> shape(randint(minRank, maxRank + 1));
    for (int64_t &d : shape)
      d = dimSize();
    return shape;
  }
  std::string floatElement() {
    double u = uniform();
    return u < 0.7 ? "f32" : u < 0.8 ? "f64" : u < 0.9 ? "bf16" : "f16";
  }
  std::string intElement() { return coin() ? "i32" : "i64"; }
  std::string numericElement() {
    return coin(0.75) ? floatElement() : intElement();
  }
  std::string anyElement() {
    double u = uniform();
    return u < 0.6 ? floatElement() : u < 0.85 ? intElement() : "i1";
  }

  TensorSpec type(int v) const { return graph.values[v].type; }

  int addArgument(TensorSpec spec, Fill fill = Fill::Random,
                  int64_t bound = 0) {
    GraphValue value;
    value.type = std::move(spec);
    value.fill = fill;
    value.bound = bound;
    graph.values.push_back(value);
    return static_cast<int>(graph.values.size()) - 1;
  }

  /// Adds a node; returns the value of its first result.
  int addNode(const std::string &op, const std::string &text,
              std::vector<int> operands, std::vector<TensorSpec> results) {
    GraphNode node;
    node.op = op;
    node.text = text;
    node.operands = std::move(operands);
    int index = static_cast<int>(graph.nodes.size());
    for (size_t r = 0; r < results.size(); ++r) {
      GraphValue value;
      value.type = results[r];
      value.node = index;
      value.result = static_cast<int>(r);
      graph.values.push_back(value);
      node.results.push_back(static_cast<int>(graph.values.size()) - 1);
    }
    graph.nodes.push_back(std::move(node));
    return graph.nodes.back().results.front();
  }

  /// An existing value satisfying `accept` (recent ones more often), or -1.
  int pick(const Predicate &accept) {
    std::vector<int> candidates;
    for (int v = 0; v < static_cast<int>(graph.values.size()); ++v)
      if (!type(v).fixed && graph.values[v].fill != Fill::Index &&
          graph.values[v].fill != Fill::Label && accept(type(v)))
        candidates.push_back(v);
    if (candidates.empty())
      return -1;
    if (coin(0.5))
      return candidates.back();
    return choose(candidates);
  }

  /// An existing value satisfying `accept`, or a new argument of `make()`.
  int valueWith(const Predicate &accept,
                const std::function<TensorSpec()> &make) {
    if (coin(0.85))
      if (int v = pick(accept); v >= 0)
        return v;
    return addArgument(make());
  }
  int floatValue(int minRank = 0, int maxRank = 3) {
    return valueWith(
        [&](const TensorSpec &t) {
          return t.isFloat() && static_cast<int>(t.shape.size()) >= minRank &&
                 static_cast<int>(t.shape.size()) <= maxRank;
        },
        [&] {
          return TensorSpec{randomShape(minRank, maxRank), floatElement()};
        });
  }
  int numericValue(int minRank = 0) {
    return valueWith(
        [&](const TensorSpec &t) {
          return (t.isFloat() || t.isInteger()) &&
                 static_cast<int>(t.shape.size()) >= minRank;
        },
        [&] {
          return TensorSpec{randomShape(minRank, 3), numericElement()};
        });
  }
  int anyValue(int minRank = 0) {
    return valueWith(
        [&](const TensorSpec &t) {
          return static_cast<int>(t.shape.size()) >= minRank;
        },
        [&] {
          return TensorSpec{randomShape(minRank, 3), anyElement()};
        });
  }

  /// A value of exactly `spec`: an existing one, a broadcast of one of
  /// lower rank, or a new argument.
  int valueOfType(const TensorSpec &spec) {
    auto same = [&](const TensorSpec &t) {
      return t.shape == spec.shape && t.element == spec.element;
    };
    if (coin(0.6))
      if (int v = pick(same); v >= 0)
        return v;
    if (coin(0.3)) {
      int v = pick([&](const TensorSpec &t) {
        return t.element == spec.element && t.shape.size() < spec.shape.size();
      });
      if (v >= 0) {
        // Align the operand's dimensions with the trailing ones; a dimension
        // that differs must be 1 to broadcast.
        std::vector<int64_t> from = type(v).shape;
        size_t offset = spec.shape.size() - from.size();
        bool fits = true;
        std::vector<int64_t> dims;
        for (size_t i = 0; i < from.size(); ++i) {
          fits &= from[i] == spec.shape[offset + i] || from[i] == 1;
          dims.push_back(static_cast<int64_t>(offset + i));
        }
        if (fits)
          return addNode("genesis.broadcast_in_dim",
                         "genesis.broadcast_in_dim $0, [" + join(dims) +
                             "] : #0 -> @0",
                         {v}, {spec});
      }
    }
    return addArgument(spec);
  }

  int constant(const TensorSpec &spec, double value) {
    std::string literal = spec.isFloat() ? floatLiteral(value)
                          : spec.element == "i1"
                              ? std::string(value != 0 ? "true" : "false")
                              : std::to_string(static_cast<int64_t>(value));
    return addNode("genesis.constant",
                   "genesis.constant dense<" + literal + "> : @0", {}, {spec});
  }
  int unary(const std::string &op, int x) {
    return addNode("genesis." + op, "genesis." + op + " $0 : @0", {x},
                   {type(x)});
  }
  int binary(const std::string &op, int x, int y) {
    return addNode("genesis." + op, "genesis." + op + " $0, $1 : @0", {x, y},
                   {type(x)});
  }
  /// |x| + 0.5: inside the domain of log, sqrt, rsqrt and pow's base.
  int positive(int x) {
    return binary("add", unary("abs", x), constant(type(x), 0.5));
  }

  bool makeOne() {
    static const std::vector<bool (Builder::*)()> makers = {
        &Builder::makeUnaryFloat,
        &Builder::makeUnaryFloat,
        &Builder::makeUnaryInteger,
        &Builder::makeBinary,
        &Builder::makeBinary,
        &Builder::makeBinary,
        &Builder::makeCompare,
        &Builder::makeSelect,
        &Builder::makeCast,
        &Builder::makeReshape,
        &Builder::makeTranspose,
        &Builder::makeSlice,
        &Builder::makePad,
        &Builder::makeConcat,
        &Builder::makeBroadcast,
        &Builder::makeIota,
        &Builder::makeConstant,
        &Builder::makeTake,
        &Builder::makeScatterAdd,
        &Builder::makeReduce,
        &Builder::makeReduce,
        &Builder::makeArgmax,
        &Builder::makeMatmul,
        &Builder::makeSoftmax,
        &Builder::makeLayerNorm,
        &Builder::makeRmsNorm,
        &Builder::makeRope,
        &Builder::makeCrossEntropy,
        &Builder::makeCrossEntropyGrad,
        &Builder::makeOptimizer,
        &Builder::makeGlobalNorm,
        &Builder::makeAttention,
        &Builder::makeAllReduce};
    return (this->*choose(makers))();
  }

  bool makeUnaryFloat() {
    static const std::vector<std::string> ops = {
        "neg",   "abs",  "sign",    "exp",          "log",  "sqrt",
        "rsqrt", "tanh", "sigmoid", "relu",         "gelu", "silu",
        "sin",   "cos",  "erf",     "stop_gradient"};
    int x = floatValue();
    const std::string &op = choose(ops);
    if (op == "log" || op == "sqrt" || op == "rsqrt")
      x = positive(x);
    if (op == "gelu" && coin())
      return addNode("genesis.gelu", "genesis.gelu $0 approximate = tanh : @0",
                     {x}, {type(x)}) >= 0;
    return unary(op, x) >= 0;
  }

  bool makeUnaryInteger() {
    if (coin(0.25)) {
      int x = valueWith([](const TensorSpec &t) { return t.element == "i1"; },
                        [&] {
                          return TensorSpec{randomShape(), "i1"};
                        });
      return unary("not", x) >= 0;
    }
    int x = valueWith([](const TensorSpec &t) { return t.isInteger(); },
                      [&] {
                        return TensorSpec{randomShape(), intElement()};
                      });
    return unary(choose<std::string>({"neg", "abs", "sign", "relu"}), x) >= 0;
  }

  bool makeBinary() {
    int x = anyValue();
    int y = valueOfType(type(x));
    if (type(x).element == "i1")
      return binary(choose<std::string>({"and", "or"}), x, y) >= 0;
    if (type(x).isInteger()) {
      std::string op =
          choose<std::string>({"add", "sub", "mul", "max", "min", "div"});
      if (op == "div")
        y = binary("max", unary("abs", y), constant(type(y), 1));
      return binary(op, x, y) >= 0;
    }
    std::string op =
        choose<std::string>({"add", "sub", "mul", "div", "pow", "max", "min"});
    if (op == "div")
      y = positive(y);
    if (op == "pow")
      x = positive(x);
    return binary(op, x, y) >= 0;
  }

  bool makeCompare() {
    int x = anyValue();
    int y = valueOfType(type(x));
    std::string predicate =
        choose<std::string>({"eq", "ne", "lt", "le", "gt", "ge"});
    return addNode("genesis.compare",
                   "genesis.compare " + predicate + ", $0, $1 : #0", {x, y},
                   {TensorSpec{type(x).shape, "i1"}}) >= 0;
  }

  bool makeSelect() {
    int x = anyValue();
    int y = valueOfType(type(x));
    int condition = valueOfType(TensorSpec{type(x).shape, "i1"});
    return addNode("genesis.select", "genesis.select $0, $1, $2 : #0, #1",
                   {condition, x, y}, {type(x)}) >= 0;
  }

  bool makeCast() {
    int x = anyValue();
    std::string to;
    do
      to = anyElement();
    while (to == type(x).element);
    return addNode("genesis.cast", "genesis.cast $0 : #0 to @0", {x},
                   {TensorSpec{type(x).shape, to}}) >= 0;
  }

  bool makeReshape() {
    int x = anyValue();
    int64_t n = type(x).numel();
    std::vector<int64_t> shape;
    if (n == 0) {
      shape = randomShape(1, 3);
      shape[randint(0, shape.size())] = 0;
    } else {
      // Distribute n's prime factors over 1 to 4 dimensions.
      std::vector<int64_t> factors;
      for (int64_t f = 2, m = n; m > 1;)
        if (m % f == 0) {
          factors.push_back(f);
          m /= f;
        } else {
          ++f;
        }
      shape.assign(randint(factors.empty() ? 0 : 1, 5), 1);
      for (int64_t f : factors)
        shape[randint(0, shape.size())] *= f;
    }
    return addNode("genesis.reshape", "genesis.reshape $0 : #0 -> @0", {x},
                   {TensorSpec{shape, type(x).element}}) >= 0;
  }

  bool makeTranspose() {
    int x = anyValue(1);
    std::vector<int64_t> permutation(type(x).shape.size());
    std::iota(permutation.begin(), permutation.end(), 0);
    for (size_t i = permutation.size(); i > 1; --i)
      std::swap(permutation[i - 1], permutation[randint(0, i)]);
    TensorSpec result = type(x);
    for (size_t i = 0; i < permutation.size(); ++i)
      result.shape[i] = type(x).shape[permutation[i]];
    return addNode("genesis.transpose",
                   "genesis.transpose $0, [" + join(permutation) + "] : #0",
                   {x}, {result}) >= 0;
  }

  bool makeSlice() {
    int x = anyValue(1);
    std::vector<int64_t> start, limit, stride;
    TensorSpec result = type(x);
    for (size_t d = 0; d < result.shape.size(); ++d) {
      int64_t n = result.shape[d];
      start.push_back(randint(0, n + 1));
      limit.push_back(randint(start.back(), n + 1));
      stride.push_back(randint(1, 4));
      result.shape[d] = (limit[d] - start[d] + stride[d] - 1) / stride[d];
    }
    return addNode("genesis.slice",
                   "genesis.slice $0 start [" + join(start) + "] limit [" +
                       join(limit) + "] stride [" + join(stride) + "] : #0",
                   {x}, {result}) >= 0;
  }

  bool makePad() {
    int x = numericValue(1); // pad has no i1 form
    std::vector<int64_t> low, high, interior;
    TensorSpec result = type(x);
    for (int64_t &n : result.shape) {
      low.push_back(randint(0, 3));
      high.push_back(randint(0, 3));
      interior.push_back(randint(0, 2));
      n = low.back() + high.back() + n +
          std::max<int64_t>(n - 1, 0) * interior.back();
    }
    return addNode("genesis.pad",
                   "genesis.pad $0 low [" + join(low) + "] high [" +
                       join(high) + "] interior [" + join(interior) + "] : #0",
                   {x}, {result}) >= 0;
  }

  bool makeConcat() {
    int x = anyValue(1);
    int64_t dim = randint(0, type(x).shape.size());
    std::vector<int> operands = {x};
    TensorSpec result = type(x);
    for (int64_t k = randint(0, 3); k > 0; --k) {
      TensorSpec other = type(x);
      if (coin())
        other.shape[dim] = dimSize();
      operands.push_back(valueOfType(other));
      result.shape[dim] += other.shape[dim];
    }
    std::string uses, types;
    for (size_t i = 0; i < operands.size(); ++i) {
      uses += (i ? ", $" : "$") + std::to_string(i);
      types += (i ? ", #" : "#") + std::to_string(i);
    }
    return addNode("genesis.concat",
                   "genesis.concat " + uses + " dim " + std::to_string(dim) +
                       " : " + types,
                   operands, {result}) >= 0;
  }

  bool makeBroadcast() {
    int x = anyValue();
    std::vector<int64_t> from = type(x).shape;
    // At most rank 4, but never below the operand's (some ops make rank 5:
    // seed 6008 graph 57 read past `all` and broadcast rank 5 to rank 4).
    size_t rank = std::max<size_t>(
        from.size(), std::min<size_t>(4, from.size() + randint(0, 3)));
    // Which result dimensions the operand's map to: increasing.
    std::vector<int64_t> all(rank), dims;
    std::iota(all.begin(), all.end(), 0);
    for (size_t i = rank; i > 1; --i)
      std::swap(all[i - 1], all[randint(0, i)]);
    dims.assign(all.begin(), all.begin() + from.size());
    std::sort(dims.begin(), dims.end());
    TensorSpec result{std::vector<int64_t>(rank), type(x).element};
    for (size_t d = 0; d < rank; ++d)
      result.shape[d] = dimSize();
    for (size_t i = 0; i < from.size(); ++i)
      if (from[i] != 1 || coin())
        result.shape[dims[i]] = from[i];
    return addNode("genesis.broadcast_in_dim",
                   "genesis.broadcast_in_dim $0, [" + join(dims) +
                       "] : #0 -> @0",
                   {x}, {result}) >= 0;
  }

  bool makeIota() {
    TensorSpec result{randomShape(1, 3), numericElement()};
    int64_t dim = randint(0, result.shape.size());
    return addNode("genesis.iota",
                   "genesis.iota dim " + std::to_string(dim) + " : @0", {},
                   {result}) >= 0;
  }

  bool makeConstant() {
    TensorSpec spec{randomShape(), anyElement()};
    double value = spec.isFloat() ? std::round(400 * uniform() - 200) / 100
                                  : static_cast<double>(randint(-5, 6));
    return constant(spec, value) >= 0;
  }

  /// Index arguments for take and scatter_add along a dimension of size
  /// `bound` (an empty index tensor when the dimension is empty).
  int indices(int64_t bound) {
    std::vector<int64_t> shape = randomShape(bound == 0 ? 1 : 0, 2);
    if (bound == 0)
      shape[randint(0, shape.size())] = 0;
    return addArgument(TensorSpec{shape, intElement()}, Fill::Index, bound);
  }
  TensorSpec takeResult(const TensorSpec &operand, const TensorSpec &ids,
                        int64_t axis) {
    TensorSpec result{{}, operand.element};
    result.shape.assign(operand.shape.begin(), operand.shape.begin() + axis);
    result.shape.insert(result.shape.end(), ids.shape.begin(), ids.shape.end());
    result.shape.insert(result.shape.end(), operand.shape.begin() + axis + 1,
                        operand.shape.end());
    return result;
  }

  bool makeTake() {
    int x = anyValue(1);
    int64_t axis = randint(0, type(x).shape.size());
    int ids = indices(type(x).shape[axis]);
    TensorSpec result = takeResult(type(x), type(ids), axis);
    return addNode("genesis.take",
                   "genesis.take $0, $1 axis " + std::to_string(axis) +
                       " : #0, #1",
                   {x, ids}, {result}) >= 0;
  }

  bool makeScatterAdd() {
    int x = numericValue(1);
    int64_t axis = randint(0, type(x).shape.size());
    int ids = indices(type(x).shape[axis]);
    int updates = valueOfType(takeResult(type(x), type(ids), axis));
    return addNode("genesis.scatter_add",
                   "genesis.scatter_add $0, $1, $2 axis " +
                       std::to_string(axis) + " : #0, #1, #2",
                   {x, ids, updates}, {type(x)}) >= 0;
  }

  bool makeReduce() {
    int x = numericValue();
    std::string op = choose<std::string>({"sum", "max", "min"});
    std::vector<int64_t> shape = type(x).shape;
    std::vector<int64_t> dims;
    for (size_t d = 0; d < shape.size(); ++d)
      // max and min of nothing have no value (an error, as in PyTorch).
      if (coin(0.6) && (op == "sum" || shape[d] > 0))
        dims.push_back(static_cast<int64_t>(d));
    bool keepdim = coin(0.3);
    TensorSpec result{{}, type(x).element};
    for (size_t d = 0; d < shape.size(); ++d) {
      bool reduced = std::count(dims.begin(), dims.end(), d) > 0;
      if (!reduced)
        result.shape.push_back(shape[d]);
      else if (keepdim)
        result.shape.push_back(1);
    }
    return addNode("genesis.reduce_" + op,
                   "genesis.reduce_" + op + " $0 dims [" + join(dims) + "]" +
                       (keepdim ? " keepdim" : "") + " : #0",
                   {x}, {result}) >= 0;
  }

  bool makeArgmax() {
    int x = numericValue(1);
    std::vector<int64_t> shape = type(x).shape;
    std::vector<int64_t> candidates;
    for (size_t d = 0; d < shape.size(); ++d)
      if (shape[d] > 0)
        candidates.push_back(static_cast<int64_t>(d));
    if (candidates.empty())
      return false;
    int64_t dim = choose(candidates);
    bool keepdim = coin(0.3);
    TensorSpec result{shape, "i64"};
    if (keepdim)
      result.shape[dim] = 1;
    else
      result.shape.erase(result.shape.begin() + dim);
    return addNode("genesis.argmax",
                   "genesis.argmax $0 dim " + std::to_string(dim) +
                       (keepdim ? " keepdim" : "") + " : #0",
                   {x}, {result}) >= 0;
  }

  bool makeMatmul() {
    int lhs = floatValue(2, 3);
    bool transposeLhs = coin(0.3), transposeRhs = coin(0.3);
    std::vector<int64_t> shape = type(lhs).shape;
    size_t rank = shape.size();
    int64_t m = shape[rank - 2], k = shape[rank - 1], n = dimSize();
    if (transposeLhs)
      std::swap(m, k);
    TensorSpec rhs{shape, type(lhs).element};
    rhs.shape[rank - 2] = transposeRhs ? n : k;
    rhs.shape[rank - 1] = transposeRhs ? k : n;
    TensorSpec result{shape, type(lhs).element};
    result.shape[rank - 2] = m;
    result.shape[rank - 1] = n;
    return addNode("genesis.matmul",
                   std::string("genesis.matmul $0, $1") +
                       (transposeLhs ? " transpose_lhs" : "") +
                       (transposeRhs ? " transpose_rhs" : "") + " : #0, #1",
                   {lhs, valueOfType(rhs)}, {result}) >= 0;
  }

  bool makeSoftmax() {
    int x = floatValue(1);
    std::string op = coin() ? "softmax" : "log_softmax";
    int64_t dim = randint(0, type(x).shape.size());
    return addNode("genesis." + op,
                   "genesis." + op + " $0 dim " + std::to_string(dim) + " : #0",
                   {x}, {type(x)}) >= 0;
  }

  bool makeLayerNorm() {
    int x = floatValue(1);
    TensorSpec row{{type(x).shape.back()}, type(x).element};
    int form = static_cast<int>(randint(0, 3)); // none, weight, weight + bias
    std::vector<int> operands = {x};
    std::string text = "genesis.layer_norm $0";
    if (form >= 1) {
      operands.push_back(valueOfType(row));
      text += " weight $1 : #1";
    }
    if (form == 2) {
      operands.push_back(valueOfType(row));
      text += " bias $2 : #2";
    }
    return addNode("genesis.layer_norm", text + " eps 1.0e-05 : #0", operands,
                   {type(x)}) >= 0;
  }

  bool makeRmsNorm() {
    int x = floatValue(1);
    int weight = valueOfType({{type(x).shape.back()}, type(x).element});
    return addNode("genesis.rms_norm",
                   "genesis.rms_norm $0, $1 eps 1.0e-06 : #0, #1", {x, weight},
                   {type(x)}) >= 0;
  }

  bool makeRope() {
    int x = valueWith(
        [](const TensorSpec &t) {
          return t.isFloat() && t.shape.size() >= 2 && t.shape.back() % 2 == 0;
        },
        [&] {
          std::vector<int64_t> shape = randomShape(2, 4);
          shape.back() = choose<int64_t>({2, 4, 8});
          return TensorSpec{shape, floatElement()};
        });
    std::vector<int64_t> shape = type(x).shape;
    TensorSpec table{{shape[shape.size() - 2], shape.back()}, type(x).element};
    int cos = valueOfType(table), sin = valueOfType(table);
    return addNode("genesis.rope",
                   "genesis.rope $0, $1, $2 : (#0, #1, #2) -> @0",
                   {x, cos, sin}, {type(x)}) >= 0;
  }

  /// Logits [N, C], labels, and the attributes of cross_entropy(_grad).
  struct Loss {
    int logits, labels;
    int reduction;
    std::string attributes;
    std::string lossElement;
  };
  Loss lossOperands() {
    Loss loss;
    loss.logits = valueWith(
        [](const TensorSpec &t) {
          return t.isFloat() && t.shape.size() == 2 && t.shape[1] > 0;
        },
        [&] {
          return TensorSpec{{dimSize(), std::max<int64_t>(1, dimSize())},
                            floatElement()};
        });
    TensorSpec logits = type(loss.logits);
    int64_t classes = logits.shape[1];
    bool ignores = coin(0.3);
    loss.labels = addArgument(TensorSpec{{logits.shape[0]}, intElement()},
                              ignores ? Fill::Label : Fill::Index, classes);
    loss.reduction = static_cast<int>(randint(0, 3));
    loss.attributes =
        "{ignore_index = " + std::to_string(ignores ? classes : -100) +
        " : i64, label_smoothing = " + floatLiteral(coin(0.3) ? 0.1 : 0.0) +
        " : f64, reduction = " + std::to_string(loss.reduction) + " : i32}";
    bool wide = logits.element == "f32" || logits.element == "f64";
    loss.lossElement = wide ? logits.element : "f32";
    return loss;
  }

  bool makeCrossEntropy() {
    Loss loss = lossOperands();
    TensorSpec result{{}, loss.lossElement};
    if (loss.reduction == 0)
      result.shape = {type(loss.logits).shape[0]};
    return addNode("genesis.cross_entropy",
                   "genesis.cross_entropy $0, $1 " + loss.attributes +
                       " : (#0, #1) -> @0",
                   {loss.logits, loss.labels}, {result}) >= 0;
  }

  bool makeCrossEntropyGrad() {
    Loss loss = lossOperands();
    TensorSpec gradient{{}, loss.lossElement};
    if (loss.reduction == 0)
      gradient.shape = {type(loss.logits).shape[0]};
    int lossGrad = valueOfType(gradient);
    return addNode("genesis.cross_entropy_grad",
                   "genesis.cross_entropy_grad $0, $1, $2 " + loss.attributes +
                       " : (#0, #1, #2) -> @0",
                   {loss.logits, loss.labels, lossGrad},
                   {type(loss.logits)}) >= 0;
  }

  bool makeOptimizer() {
    int param = floatValue();
    TensorSpec p = type(param);
    int grad = valueOfType(p);
    int lr = addArgument({{}, "f32", true}, Fill::Rate);
    std::string decay =
        "weight_decay = " + floatLiteral(coin() ? 0.01 : 0.0) + " : f64";
    int kind = static_cast<int>(randint(0, 4));
    if (kind == 0)
      return addNode("genesis.sgd_update",
                     "genesis.sgd_update $0, $1, $2 {" + decay +
                         "} : (#0, #1, #2) -> @0",
                     {param, grad, lr}, {p}) >= 0;
    int step = addArgument({{}, "i64", true}, Fill::Step);
    if (kind == 1) {
      int buffer = valueOfType(p);
      bool nesterov = coin(0.3);
      std::string attributes = "{momentum = 9.000000e-01 : f64, dampening = " +
                               floatLiteral(nesterov ? 0.0 : 0.1) + " : f64, " +
                               decay + (nesterov ? ", nesterov" : "") + "}";
      return addNode("genesis.sgd_momentum_update",
                     "genesis.sgd_momentum_update $0, $1, $2, $3, $4 " +
                         attributes + " : (#0, #1, #2, #3, #4) -> (@0, @1)",
                     {param, grad, buffer, lr, step}, {p, p}) >= 0;
    }
    int mean = valueOfType(p);
    int variance = addArgument(p, Fill::Positive);
    std::string op = kind == 2 ? "adam_update" : "adamw_update";
    return addNode("genesis." + op,
                   "genesis." + op + " $0, $1, $2, $3, $4, $5 {beta1 = " +
                       "9.000000e-01 : f64, beta2 = 9.990000e-01 : f64, " +
                       "epsilon = 1.000000e-08 : f64, " + decay +
                       "} : (#0, #1, #2, #3, #4, #5) -> (@0, @1, @2)",
                   {param, grad, mean, variance, lr, step}, {p, p, p}) >= 0;
  }

  bool makeGlobalNorm() {
    std::vector<int> operands;
    std::string uses, types;
    bool f64 = false;
    for (int64_t k = randint(1, 4), i = 0; i < k; ++i) {
      operands.push_back(floatValue());
      f64 |= type(operands.back()).element == "f64";
      uses += (i ? ", $" : "$") + std::to_string(i);
      types += (i ? ", #" : "#") + std::to_string(i);
    }
    return addNode("genesis.global_norm",
                   "genesis.global_norm " + uses + " : " + types, operands,
                   {TensorSpec{{}, f64 ? "f64" : "f32"}}) >= 0;
  }

  bool makeAttention() {
    int64_t batch = randint(1, 3), kvHeads = randint(1, 3),
            heads = kvHeads * randint(1, 3), queries = randint(1, 6),
            keys = randint(1, 6), depth = choose<int64_t>({1, 2, 4, 8}),
            valueDepth = choose<int64_t>({1, 2, 4, 8});
    std::string element = floatElement();
    auto spec = [&](int64_t h, int64_t rows, int64_t cols) {
      return TensorSpec{{batch, h, rows, cols}, element};
    };
    std::vector<int> operands = {valueOfType(spec(heads, queries, depth)),
                                 valueOfType(spec(kvHeads, keys, depth)),
                                 valueOfType(spec(kvHeads, keys, valueDepth))};
    bool mask = coin(0.3), causal = coin(0.5), gradient = coin(0.3);
    std::string uses = "$0, $1, $2", types = "#0, #1, #2";
    if (mask) {
      operands.push_back(valueOfType(spec(heads, queries, keys)));
      uses += " mask $3";
      types += ", #3";
    }
    std::string attributes =
        std::string(causal ? " causal" : "") + " scale 3.500000e-01";
    TensorSpec out = spec(heads, queries, valueDepth);
    if (!gradient)
      return addNode("genesis.attention",
                     "genesis.attention " + uses + attributes + " : (" + types +
                         ") -> @0",
                     operands, {out}) >= 0;
    for (int i = 0; i < 2; ++i) {
      std::string k = std::to_string(operands.size());
      operands.push_back(valueOfType(out));
      uses += ", $" + k;
      types += ", #" + k;
    }
    return addNode("genesis.attention_grad",
                   "genesis.attention_grad " + uses + attributes + " : (" +
                       types + ") -> (@0, @1, @2)",
                   operands,
                   {type(operands[0]), type(operands[1]), type(operands[2])}) >=
           0;
  }

  bool makeAllReduce() {
    int x = numericValue();
    return addNode("genesis.all_reduce",
                   std::string("genesis.all_reduce ") +
                       (coin() ? "sum" : "mean") + ", $0 : #0",
                   {x}, {type(x)}) >= 0;
  }

  void chooseOutputs() {
    // The last node's results, and now and then a value nobody uses yet.
    std::vector<bool> used(graph.values.size(), false);
    for (const GraphNode &node : graph.nodes)
      for (int v : node.operands)
        used[v] = true;
    if (graph.nodes.empty()) {
      graph.outputs.push_back(addArgument({randomShape(), "f32"}));
      return;
    }
    for (int v : graph.nodes.back().results)
      graph.outputs.push_back(v);
    for (const GraphNode &node : graph.nodes)
      for (int v : node.results)
        if (!used[v] && coin(0.5) &&
            std::find(graph.outputs.begin(), graph.outputs.end(), v) ==
                graph.outputs.end())
          graph.outputs.push_back(v);
  }
};

bool perturbable(const GraphValue &value) {
  return value.node >= 0 && value.type.isFloat() && !value.type.fixed;
}

/// How value `v` is named where it is used: `%p<v>` once perturbed.
std::string valueReference(const Graph &graph, int v, bool perturb = false) {
  const GraphValue &value = graph.values[v];
  if (perturb && perturbable(value))
    return "%p" + std::to_string(v);
  if (value.node < 0)
    return "%v" + std::to_string(v);
  const GraphNode &node = graph.nodes[value.node];
  std::string name = "%v" + std::to_string(node.results.front());
  if (node.results.size() == 1)
    return name;
  return name + "#" + std::to_string(value.result);
}

std::string argumentList(const Graph &graph, const std::string &name,
                         bool widen, bool perturb = false) {
  std::string list;
  auto add = [&](const std::string &prefix, int v) {
    list += std::string(list.empty() ? "" : ", ") + "%" + prefix +
            std::to_string(v) + ": " + graph.values[v].type.str(widen) +
            " {genesis.name = \"" + name + "." + prefix + std::to_string(v) +
            "\", genesis.role = \"input\"}";
  };
  for (int v : graph.arguments())
    add("v", v);
  if (perturb)
    for (int v : graph.perturbedValues())
      add("e", v);
  return list;
}

std::string body(const Graph &graph, bool widen, bool perturb = false) {
  std::string text;
  for (const GraphNode &node : graph.nodes) {
    std::string line = "  %v" + std::to_string(node.results.front());
    if (node.results.size() > 1)
      line += ":" + std::to_string(node.results.size());
    line += " = ";
    for (size_t i = 0; i < node.text.size(); ++i) {
      char c = node.text[i];
      if ((c != '$' && c != '#' && c != '@') || i + 1 == node.text.size() ||
          !std::isdigit(static_cast<unsigned char>(node.text[i + 1]))) {
        line += c;
        continue;
      }
      size_t k = 0;
      while (i + 1 < node.text.size() &&
             std::isdigit(static_cast<unsigned char>(node.text[i + 1])))
        k = 10 * k + (node.text[++i] - '0');
      if (c == '$')
        line += valueReference(graph, node.operands.at(k), perturb);
      else if (c == '#')
        line += graph.values[node.operands.at(k)].type.str(widen);
      else
        line += graph.values[node.results.at(k)].type.str(widen);
    }
    text += line + "\n";
    if (perturb)
      for (int r : node.results)
        if (perturbable(graph.values[r]))
          text += "  %p" + std::to_string(r) + " = genesis.mul " +
                  valueReference(graph, r) + ", %e" + std::to_string(r) +
                  " : " + graph.values[r].type.str(true) + "\n";
  }
  return text;
}

} // namespace

std::vector<int> Graph::arguments() const {
  std::vector<bool> used(values.size(), false);
  for (const GraphNode &node : nodes)
    for (int v : node.operands)
      used[v] = true;
  for (int v : outputs)
    used[v] = true;
  std::vector<int> list;
  for (size_t v = 0; v < values.size(); ++v)
    if (used[v] && values[v].node < 0)
      list.push_back(static_cast<int>(v));
  return list;
}

std::string Graph::render(const std::string &name, bool widen,
                          bool perturb) const {
  widen = widen || perturb;
  std::string results, uses;
  for (size_t i = 0; i < outputs.size(); ++i) {
    results += (i ? ", " : "") + values[outputs[i]].type.str(widen);
    uses += (i ? ", " : "") + valueReference(*this, outputs[i], perturb);
  }
  return "func.func @" + name + "(" +
         argumentList(*this, name, widen, perturb) + ") -> (" + results +
         ") {\n" + body(*this, widen, perturb) + "  return " + uses + " : " +
         results + "\n}\n";
}

std::vector<int> Graph::perturbedValues() const {
  std::vector<int> list;
  for (const GraphNode &node : nodes)
    for (int r : node.results)
      if (perturbable(values[r]))
        list.push_back(r);
  return list;
}

bool Graph::hasFloatOutput() const {
  for (int v : outputs)
    if (values[v].type.isFloat() && !values[v].type.fixed)
      return true;
  return false;
}

std::string Graph::renderLoss(const std::string &name) const {
  if (!hasFloatOutput())
    return "";
  std::string arguments = argumentList(*this, name, true),
              text = body(*this, true);
  std::string total;
  for (size_t k = 0; k < outputs.size(); ++k) {
    const TensorSpec &type = values[outputs[k]].type;
    if (!type.isFloat() || type.fixed)
      continue;
    std::string w = "%w" + std::to_string(k), t = type.str(true);
    arguments += (arguments.empty() ? "" : ", ") + w + ": " + t +
                 " {genesis.name = \"" + name + ".w" + std::to_string(k) +
                 "\", genesis.role = \"input\"}";
    std::vector<int64_t> all(type.shape.size());
    std::iota(all.begin(), all.end(), 0);
    std::string k_ = std::to_string(k);
    text += "  %m" + k_ + " = genesis.mul " +
            valueReference(*this, outputs[k]) + ", " + w + " : " + t + "\n";
    text += "  %s" + k_ + " = genesis.reduce_sum %m" + k_ + " dims [" +
            join(all) + "] : " + t + "\n";
    if (total.empty()) {
      total = "%s" + k_;
    } else {
      text += "  %t" + k_ + " = genesis.add " + total + ", %s" + k_ +
              " : tensor<f64>\n";
      total = "%t" + k_;
    }
  }
  return "func.func @" + name + "(" + arguments + ") -> tensor<f64> {\n" +
         text + "  return " + total + " : tensor<f64>\n}\n";
}

std::vector<unsigned> Graph::differentiable() const {
  std::vector<unsigned> positions;
  std::vector<int> list = arguments();
  for (size_t i = 0; i < list.size(); ++i) {
    const GraphValue &value = values[list[i]];
    if (value.type.isFloat() && !value.type.fixed && value.fill == Fill::Random)
      positions.push_back(static_cast<unsigned>(i));
  }
  return positions;
}

bool Graph::dependsOnFloat(int v) const {
  const GraphValue &value = values[v];
  if (value.type.isFloat())
    return true;
  if (value.node < 0)
    return false;
  for (int operand : nodes[value.node].operands)
    if (dependsOnFloat(operand))
      return true;
  return false;
}

bool Graph::dependsOnThreshold(int v) const {
  const GraphValue &value = values[v];
  if (value.node < 0)
    return false;
  const GraphNode &node = nodes[value.node];
  if (node.op == "genesis.compare" || node.op == "genesis.argmax" ||
      node.op == "genesis.sign" ||
      (node.op == "genesis.cast" && !value.type.isFloat()))
    return true;
  for (int operand : node.operands)
    if (dependsOnThreshold(operand))
      return true;
  return false;
}

void Graph::removeDeadNodes() {
  std::vector<bool> live(nodes.size(), false), needed(values.size(), false);
  for (int v : outputs)
    needed[v] = true;
  for (size_t n = nodes.size(); n-- > 0;) {
    for (int v : nodes[n].results)
      live[n] = live[n] || needed[v];
    if (live[n])
      for (int v : nodes[n].operands)
        needed[v] = true;
  }
  std::vector<int> renumbered(nodes.size(), -1);
  std::vector<GraphNode> kept;
  for (size_t n = 0; n < nodes.size(); ++n)
    if (live[n]) {
      renumbered[n] = static_cast<int>(kept.size());
      kept.push_back(nodes[n]);
    }
  for (GraphValue &value : values)
    if (value.node >= 0)
      value.node = renumbered[value.node];
  nodes = std::move(kept);
}

Graph Graph::withoutNode(int n) const {
  Graph copy = *this;
  for (int v : copy.nodes[n].results) {
    copy.values[v].node = -1;
    copy.values[v].result = 0;
    copy.values[v].fill = Fill::Random;
  }
  // An argument unused after this is dropped by arguments(); the node
  // itself is no longer live once none of its results is defined by it.
  copy.nodes[n].results.clear();
  copy.nodes[n].operands.clear();
  std::vector<GraphNode> kept;
  std::vector<int> renumbered(copy.nodes.size(), -1);
  for (size_t i = 0; i < copy.nodes.size(); ++i)
    if (static_cast<int>(i) != n) {
      renumbered[i] = static_cast<int>(kept.size());
      kept.push_back(copy.nodes[i]);
    }
  for (GraphValue &value : copy.values)
    if (value.node >= 0)
      value.node = renumbered[value.node];
  copy.nodes = std::move(kept);
  copy.removeDeadNodes();
  return copy;
}

Graph Graph::withOnlyOutput(size_t k) const {
  Graph copy = *this;
  copy.outputs = {outputs.at(k)};
  copy.removeDeadNodes();
  return copy;
}

Graph randomGraph(uint64_t seed, const GraphOptions &options) {
  return Builder(seed, options).build();
}

HostArray randomInput(const GraphValue &value, uint64_t seed) {
  static const std::pair<const char *, DType> dtypes[] = {
      {"f32", DType::F32}, {"f64", DType::F64}, {"bf16", DType::BF16},
      {"f16", DType::F16}, {"i32", DType::I32}, {"i64", DType::I64},
      {"i1", DType::I1}};
  DType dtype = DType::F32;
  for (const auto &[name, d] : dtypes)
    if (value.type.element == name)
      dtype = d;
  HostArray array(dtype, value.type.shape);
  Generator generator(seed);
  for (int64_t i = 0; i < array.numel(); ++i) {
    double u = generator.uniform();
    switch (value.fill) {
    case Fill::Random:
      if (value.type.isFloat())
        array.setDouble(i, 4 * u - 2 + (u < 0.5 ? -0.01 : 0.01));
      else if (dtype == DType::I1)
        array.setInt(i, u < 0.5);
      else
        array.setInt(i, static_cast<int64_t>(std::floor(200 * u)) - 100);
      break;
    case Fill::Index:
      array.setInt(i, std::min<int64_t>(value.bound - 1,
                                        static_cast<int64_t>(u * value.bound)));
      break;
    case Fill::Label:
      array.setInt(i, u < 0.25 ? value.bound
                               : std::min<int64_t>(
                                     value.bound - 1,
                                     static_cast<int64_t>(u * value.bound)));
      break;
    case Fill::Positive:
      array.setDouble(i, 0.01 + 1.99 * u);
      break;
    case Fill::Step:
      array.setInt(i, 1 + static_cast<int64_t>(5 * u));
      break;
    case Fill::Rate:
      array.setDouble(i, 0.01 + 0.09 * u);
      break;
    }
  }
  return array;
}

HostArray perturbation(const GraphValue &value, uint64_t seed) {
  const std::string &element = value.type.element;
  double roundoff = element == "bf16"  ? std::ldexp(1.0, -8)
                    : element == "f16" ? std::ldexp(1.0, -11)
                    : element == "f32" ? std::ldexp(1.0, -24)
                                       : std::ldexp(1.0, -53);
  HostArray array(DType::F64, value.type.shape);
  Generator generator(seed);
  for (int64_t i = 0; i < array.numel(); ++i)
    array.setDouble(i, 1 + (2 * generator.uniform() - 1) * roundoff);
  return array;
}

} // namespace genesis::fuzz
