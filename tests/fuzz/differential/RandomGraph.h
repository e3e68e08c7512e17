//===- RandomGraph.h - Random well-typed genesis functions ------*- C++ -*-===//
//
// The generator of the differential fuzzer (as Csmith generates C programs
// and TVM's tests random Relay graphs): a few genesis ops of every kind on
// random shapes (0- and 1-sized dimensions included), dtypes and
// attributes, chained through their values, rendered as MLIR text. The
// same graph renders with its floating-point tensors widened to f64, which
// the fuzzer uses as the precision reference and for gradient checks.
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_TESTS_FUZZ_DIFFERENTIAL_RANDOMGRAPH_H
#define GENESIS_TESTS_FUZZ_DIFFERENTIAL_RANDOMGRAPH_H

#include "runtime/support/HostArray.h"

#include <cstdint>
#include <string>
#include <vector>

namespace genesis::fuzz {

/// A tensor type: shape and element type ("f32", "bf16", "i64", "i1", ...).
/// A `fixed` type keeps its element type when the graph is widened (the
/// optimizers' f32 learning rate, a step count).
struct TensorSpec {
  std::vector<int64_t> shape;
  std::string element;
  bool fixed = false;

  bool isFloat() const;
  bool isInteger() const; // i32 or i64 (not i1)
  int64_t numel() const;
  /// "tensor<2x3xf32>", or with floats widened to f64.
  std::string str(bool widen = false) const;
};

/// How an argument's values are drawn.
enum class Fill {
  Random,   // floats in (-2, 2) away from 0, integers in [-100, 100), i1 half
  Index,    // integers in [0, bound)
  Label,    // integers in [0, bound), one in four `bound` itself (ignored)
  Positive, // floats in [0.01, 2)
  Step,     // integers in [1, 6)
  Rate,     // floats in [0.01, 0.1)
};

/// One value: a function argument or a result of a node.
struct GraphValue {
  TensorSpec type;
  int node = -1;  // defining node, -1 for an argument
  int result = 0; // result number within the node
  Fill fill = Fill::Random;
  int64_t bound = 0; // for Index and Label
};

/// One op: MLIR text in which `$k` stands for operand k and `#k` / `@k` for
/// the type of operand k / result k.
struct GraphNode {
  std::string op; // "genesis.exp", for statistics and messages
  std::string text;
  std::vector<int> operands;
  std::vector<int> results;
};

struct Graph {
  std::vector<GraphValue> values;
  std::vector<GraphNode> nodes;
  std::vector<int> outputs;

  /// The arguments the live nodes and outputs use, in value order.
  std::vector<int> arguments() const;
  /// `func.func @name(...)`: every argument named `<name>.<value>` with the
  /// input role so that a plan holding several graphs keeps them apart.
  /// With `perturb` (widened), every value of perturbedValues() is
  /// multiplied as soon as it is computed by an extra argument `%e<value>`
  /// (after the others, in that order): fed perturbation()s, the function
  /// models an implementation that rounds each op's result differently, so
  /// its distance from the plain widened graph measures how much the graph
  /// amplifies rounding inside ops (stochastic arithmetic, as CADNA and
  /// Verificarlo do).
  std::string render(const std::string &name, bool widen,
                     bool perturb = false) const;
  /// The node results render(..., perturb = true) perturbs: those of float
  /// types that widen.
  std::vector<int> perturbedValues() const;
  /// `@name` returning the scalar loss sum_r sum(output_r * weight_r) over
  /// the floating-point outputs, weights being extra arguments (the graph
  /// widened); empty when no output is floating-point.
  std::string renderLoss(const std::string &name) const;
  /// Whether any output is floating-point (renderLoss is not empty).
  bool hasFloatOutput() const;
  /// The arguments a gradient is taken with respect to (positions in
  /// arguments()): floating-point ones drawn as Fill::Random.
  std::vector<unsigned> differentiable() const;
  /// True when value `v` depends on a floating-point value.
  bool dependsOnFloat(int v) const;
  /// True when value `v` depends on an op whose result jumps where its float
  /// operands cross a threshold (compare, argmax, sign, a cast to an integer
  /// or i1): the perturbed graph breaks the ties such ops see between values
  /// equal in exact arithmetic, so it says nothing about `v`'s conditioning.
  bool dependsOnThreshold(int v) const;

  /// The graph with node `n` replaced by fresh arguments of its result
  /// types and every node nobody uses any more removed (the shrinker's
  /// step).
  Graph withoutNode(int n) const;
  /// The graph keeping only output `k` (another shrinker step).
  Graph withOnlyOutput(size_t k) const;
  /// Removes the nodes whose results no live node or output uses.
  void removeDeadNodes();
};

struct GraphOptions {
  int maxOps = 6;
  /// Probability that a graph may use 0-sized dimensions.
  double zeroSizeProbability = 0.08;
};

/// A random graph; the same seed gives the same graph.
Graph randomGraph(uint64_t seed, const GraphOptions &options = {});

/// Random values for `value` (as its Fill says) in its own dtype.
HostArray randomInput(const GraphValue &value, uint64_t seed);

/// Factors 1 + u * (unit roundoff of `value`'s element type), u uniform in
/// [-1, 1), in f64: one rounding's worth of relative error per element.
HostArray perturbation(const GraphValue &value, uint64_t seed);

} // namespace genesis::fuzz

#endif // GENESIS_TESTS_FUZZ_DIFFERENTIAL_RANDOMGRAPH_H
