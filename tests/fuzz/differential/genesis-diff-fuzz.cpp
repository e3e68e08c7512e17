//===- genesis-diff-fuzz.cpp - Differential fuzzer of the compiler --------===//
//
// Runs random genesis functions (RandomGraph.h) three ways and compares:
//   1. the reference evaluator, on the graph and on the graph widened to
//      f64 (the precision reference);
//   2. genesis-autodiff: the gradient of sum_r sum(output_r * weight_r) of
//      the widened graph, on the evaluator, against central finite
//      differences;
//   3. compiled CPU plans (the whole genesis-cpu-pipeline, a Session): the
//      graph, the widened graph and the widened gradient, each against the
//      evaluator running the same function; with --remat the gradient also
//      compiled alone under 9/10 of the memory it needs (genesis-remat).
// Graphs are compiled in batches (one plan holds many functions); a failing
// batch is rerun graph by graph to find the culprit, which is then shrunk
// (a node at a time replaced by arguments of its result types, outputs
// dropped) to a minimal reproducer written to --out.
//
// Tolerances (|compiled - evaluator| per element):
//   f32: 1e-5 * max(1, |e|) + 8 * |e - e64| + 8 * |e64 - p64|, where e64
//        is the widened graph's value and p64 the perturbed graph's (the
//        widened graph with each op's result multiplied by a random
//        1 +- one unit roundoff of its type): the compiled code may round
//        differently from the evaluator (fused ops, f32 accumulation, the
//        order of a GEMM's sums, libm), and an ill-conditioned graph
//        amplifies any rounding, which |e - e64| measures for the
//        evaluator's own f32 rounding and |e64 - p64| for rounding inside
//        ops (a layer norm of GEMM columns that are equal in exact
//        arithmetic but not in every GEMM's). The p64 term is left out
//        for outputs that depend on a threshold op (compare, argmax, sign,
//        casts to integers: the perturbation breaks their ties) and where
//        p64 is not finite;
//   graphs holding bf16/f16 values: 1e-2 / 2e-3 in place of 1e-5 (the
//        budget is the least precise float type's, wherever it is);
//   f64 (widened graph and gradient): 1e-8 * max(1, |e|);
//   integers and i1: exact, except outputs of the unwidened graph that
//        depend on floats (a rounding difference may flip a comparison or
//        a truncating cast; the widened graph checks those exactly);
//   NaN and infinities: the same class, unless e64 is of another class.
// Gradient: |analytic - fd| <= 1e-5 * max(1, |fd|) + 1e-14 * max(1,
// |loss|) / h + 2 |fd - fd100| with h = 1e-6 * max(1, |x|) and fd100 the
// difference with 100 h (their distance estimates fd's own error: the
// loss's rounding noise over h); an element where the two disagree by more
// than 1e-4 * max(1, |fd|) (a kink of abs, relu, max, ...) is skipped and
// counted.
//
// With --cuda-cases DIR, each graph that passed is also compiled for the
// cuda target and written as a case for scripts/gpu/check_cases.py (plan,
// inputs, the evaluator's outputs, the widened graph's outputs as the
// precision reference, the tolerance); a graph the cuda lowering refuses
// is listed in DIR/refused.txt.
//
// usage: genesis-diff-fuzz [--graphs N] [--seed S] [--batch B]
//                          [--max-ops K] [--out DIR] [--cuda-cases DIR]
//                          [--remat] [--quiet]
// Exits 1 when any graph fails; prints a progress line with rate and ETA.
//
//===----------------------------------------------------------------------===//

#include "dialect/Evaluator/Evaluator.h"
#include "dialect/IR/GenesisOps.h"
#include "dialect/Utils/DiagnosticCapture.h"
#include "passes/Passes.h"
#include "runtime/formats/ArrayIO.h"
#include "runtime/plan/PlanFile.h"
#include "runtime/session/Session.h"
#include "runtime/support/Error.h"
#include "tests/fuzz/differential/RandomGraph.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <set>

using namespace genesis;
using namespace genesis::fuzz;

namespace {

struct Options {
  int64_t graphs = 1000;
  uint64_t seed = 1;
  int batch = 24;
  int maxOps = 6;
  std::string out = "fuzz-failures";
  /// Where to write each graph that passed as a CUDA case (empty: none).
  std::string cudaCases;
  /// Also compile each gradient under a memory budget (genesis-remat).
  bool remat = false;
  bool quiet = false;
};

struct Failure {
  std::string kind; // "invalid", "evaluator", "gradient", "compile", ...
  std::string message;
};

struct Statistics {
  int64_t graphs = 0, ops = 0, compiledFunctions = 0, gradients = 0,
          gradientElements = 0, kinks = 0, uncheckedIntegers = 0,
          borderline = 0, cudaCases = 0, cudaRefused = 0, rematPlans = 0,
          rematUnfit = 0, recomputations = 0, unperturbed = 0;
  std::map<std::string, int64_t> opCounts;
};

uint64_t mix(uint64_t a, uint64_t b) {
  uint64_t z = a * 0x9e3779b97f4a7c15ull + b + 0x632be59bd9b4e019ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/// Whether the graph has a node whose gradient is zero by design where its
/// finite differences are not: stop_gradient and the ops without a VJP
/// (optimizer steps, the backward ops), which stop the gradient.
bool hasGradientStop(const Graph &graph) {
  static const std::set<std::string> ops = {
      "genesis.stop_gradient",       "genesis.sgd_update",
      "genesis.sgd_momentum_update", "genesis.adam_update",
      "genesis.adamw_update",        "genesis.cross_entropy_grad",
      "genesis.attention_grad"};
  for (const GraphNode &node : graph.nodes)
    if (ops.count(node.op))
      return true;
  return false;
}

HostArray widened(const HostArray &array, const TensorSpec &type) {
  if (!type.isFloat() || type.fixed || array.dtype() == DType::F64)
    return array;
  HostArray wide(DType::F64, array.shape());
  for (int64_t i = 0; i < array.numel(); ++i)
    wide.setDouble(i, array.getDouble(i));
  return wide;
}

std::vector<std::string> resultNames(mlir::func::FuncOp function) {
  std::vector<std::string> names;
  for (unsigned r = 0; r < function.getNumResults(); ++r) {
    auto name =
        function.getResultAttrOfType<mlir::StringAttr>(r, "genesis.name");
    names.push_back(name ? name.str()
                         : function.getSymName().str() + ".result" +
                               std::to_string(r));
  }
  return names;
}

std::vector<std::string> argumentNames(mlir::func::FuncOp function) {
  std::vector<std::string> names;
  for (unsigned i = 0; i < function.getNumArguments(); ++i)
    names.push_back(
        function.getArgAttrOfType<mlir::StringAttr>(i, "genesis.name").str());
  return names;
}

std::string describe(double got, double want, int64_t i) {
  char buffer[160];
  std::snprintf(buffer, sizeof buffer,
                "element %lld: compiled %.9g, evaluator %.9g",
                static_cast<long long>(i), got, want);
  return buffer;
}

/// Compares `got` (compiled) with `want` (evaluator) as the header states;
/// `reference` is the widened graph's value and `perturbed` the perturbed
/// graph's, if any.
std::optional<std::string> compare(const HostArray &got, const HostArray &want,
                                   const HostArray *reference,
                                   const HostArray *perturbed,
                                   bool exactIntegers, double base,
                                   Statistics &stats) {
  if (!got.sameTypeAs(want))
    return "compiled result " + got.typeString() + ", evaluator " +
           want.typeString();
  bool floating = want.dtype() == DType::F32 || want.dtype() == DType::F64 ||
                  want.dtype() == DType::BF16 || want.dtype() == DType::F16;
  if (!floating) {
    if (!exactIntegers) {
      ++stats.uncheckedIntegers;
      return std::nullopt;
    }
    for (int64_t i = 0; i < want.numel(); ++i)
      if (got.getInt(i) != want.getInt(i))
        return describe(static_cast<double>(got.getInt(i)),
                        static_cast<double>(want.getInt(i)), i);
    return std::nullopt;
  }
  for (int64_t i = 0; i < want.numel(); ++i) {
    double a = got.getDouble(i), b = want.getDouble(i);
    double r = reference ? reference->getDouble(i) : b;
    // A perturbed value that is not finite (the graph overflows within a
    // rounding of its inputs) is ignored: the element keeps the e64 check.
    double p = perturbed ? perturbed->getDouble(i) : r;
    if (!std::isfinite(p))
      p = r;
    if (!std::isfinite(a) || !std::isfinite(b)) {
      bool same = (std::isnan(a) && std::isnan(b)) || a == b;
      bool referenceDiffers =
          std::isnan(r) != std::isnan(b) || std::isinf(r) != std::isinf(b);
      if (same)
        continue;
      if (referenceDiffers) {
        ++stats.borderline;
        continue;
      }
      return describe(a, b, i);
    }
    double tolerance =
        base * std::max(1.0, std::fabs(b)) +
        (std::isfinite(r) ? 8 * std::fabs(b - r) + 8 * std::fabs(r - p)
                          : INFINITY);
    if (std::fabs(a - b) > tolerance)
      return describe(a, b, i);
  }
  return std::nullopt;
}

/// The relative budget of the unwidened graph: that of its least precise
/// float type (an f64 output of an f32 sum carries the sum's rounding).
double relativeBudget(const Graph &graph) {
  double budget = 1e-8;
  for (const GraphValue &value : graph.values)
    budget = std::max(budget, value.type.element == "bf16"  ? 1e-2
                              : value.type.element == "f16" ? 2e-3
                              : value.type.element == "f32" ? 1e-5
                                                            : 1e-8);
  return budget;
}

/// One graph's functions in a batch: names, inputs and evaluator results.
struct Entry {
  const Graph *graph;
  std::string name;
  std::vector<HostArray> inputs, wideInputs, lossInputs;
  std::vector<HostArray> expected, expectedWide, expectedGradient;
  /// The perturbed graph's results; empty if its evaluation failed (a
  /// perturbation that moves a value out of an op's domain).
  std::vector<HostArray> expectedPerturbed;
  bool hasGradient = false;
  std::optional<Failure> failure;
};

class Fuzzer {
public:
  explicit Fuzzer(Options options) : options(std::move(options)) {
    context.loadDialect<GenesisDialect, mlir::func::FuncDialect>();
  }

  /// Runs `graphs` together; the failure of each, if any.
  std::vector<std::optional<Failure>> run(const std::vector<Graph> &graphs,
                                          uint64_t seed, bool attribute) {
    std::vector<Entry> entries(graphs.size());
    std::string text;
    for (size_t i = 0; i < graphs.size(); ++i) {
      entries[i].graph = &graphs[i];
      entries[i].name = "g" + std::to_string(i);
      text += graphs[i].render(entries[i].name + "_f", false) +
              graphs[i].render(entries[i].name + "_d", true) +
              graphs[i].render(entries[i].name + "_p", true, true) +
              graphs[i].renderLoss(entries[i].name + "_l");
    }
    // A crash leaves the functions it was running behind.
    if (attribute) {
      std::filesystem::create_directories(options.out);
      std::ofstream(options.out + "/running.mlir") << text;
    }
    std::vector<std::optional<Failure>> failures(graphs.size());
    mlir::OwningOpRef<mlir::ModuleOp> module;
    {
      DiagnosticCapture capture(&context);
      module = mlir::parseSourceString<mlir::ModuleOp>(text, &context);
      if (!module) {
        if (attribute && graphs.size() > 1)
          return one(graphs, seed);
        failures[0] = Failure{"invalid", capture.firstError("does not parse") +
                                             "\n" + text};
        return failures;
      }
    }
    auto lookup = [&](const std::string &name) {
      return module->lookupSymbol<mlir::func::FuncOp>(name);
    };

    // Evaluator and gradient checks, graph by graph.
    std::vector<std::string> functions;
    for (size_t i = 0; i < graphs.size(); ++i) {
      Entry &e = entries[i];
      const Graph &graph = graphs[i];
      uint64_t graphSeed = mix(seed, i);
      std::vector<int> arguments = graph.arguments();
      for (int v : arguments) {
        e.inputs.push_back(randomInput(graph.values[v], mix(graphSeed, v)));
        e.wideInputs.push_back(widened(e.inputs.back(), graph.values[v].type));
      }
      try {
        e.expected = evaluate(lookup(e.name + "_f"), e.inputs);
        e.expectedWide = evaluate(lookup(e.name + "_d"), e.wideInputs);
      } catch (const Error &error) {
        e.failure = Failure{"evaluator", error.what()};
        continue;
      }
      std::vector<HostArray> noisyInputs = e.wideInputs;
      for (int v : graph.perturbedValues())
        noisyInputs.push_back(
            perturbation(graph.values[v], mix(graphSeed, 2000000 + v)));
      try {
        e.expectedPerturbed = evaluate(lookup(e.name + "_p"), noisyInputs);
      } catch (const Error &) {
        ++stats.unperturbed;
      }
      functions.push_back(e.name + "_f");
      functions.push_back(e.name + "_d");
      if (mlir::func::FuncOp loss = lookup(e.name + "_l")) {
        if (std::optional<Failure> f = checkGradient(e, loss, graphSeed)) {
          e.failure = f;
          continue;
        }
        if (e.hasGradient)
          functions.push_back(e.name + "_l_grad");
      }
    }
    for (size_t i = 0; i < graphs.size(); ++i)
      if (entries[i].failure) {
        if (attribute && graphs.size() > 1)
          return one(graphs, seed);
        failures[i] = entries[i].failure;
        return failures;
      }

    // One plan for every function of the batch.
    std::optional<Session> session;
    {
      DiagnosticCapture capture(&context);
      mlir::FailureOr<std::vector<uint8_t>> bytes =
          compileCpuPlan(*module, functions);
      if (mlir::failed(bytes)) {
        if (attribute && graphs.size() > 1)
          return one(graphs, seed);
        failures[0] =
            Failure{"compile", capture.firstError("compilePlan failed")};
        return failures;
      }
      try {
        session.emplace(PlanFile::fromBytes(bytes->data(), bytes->size()));
      } catch (const Error &error) {
        if (attribute && graphs.size() > 1)
          return one(graphs, seed);
        failures[0] = Failure{"load", error.what()};
        return failures;
      }
    }
    stats.compiledFunctions += static_cast<int64_t>(functions.size());

    for (size_t i = 0; i < graphs.size(); ++i) {
      Entry &e = entries[i];
      auto check = [&](const std::string &function,
                       const std::vector<HostArray> &inputs,
                       const std::vector<HostArray> &expected,
                       const std::vector<HostArray> *reference,
                       const std::vector<HostArray> *perturbed, bool wide) {
        return runAndCompare(*session, lookup(function), function, e, inputs,
                             expected, reference, perturbed, wide);
      };
      std::optional<Failure> f = check(
          e.name + "_f", e.inputs, e.expected, &e.expectedWide,
          e.expectedPerturbed.empty() ? nullptr : &e.expectedPerturbed, false);
      if (!f)
        f = check(e.name + "_d", e.wideInputs, e.expectedWide, nullptr, nullptr,
                  true);
      if (!f && e.hasGradient)
        f = check(e.name + "_l_grad", e.lossInputs, e.expectedGradient, nullptr,
                  nullptr, true);
      if (!f && e.hasGradient && options.remat)
        f = checkRemat(*module, e);
      if (f) {
        if (attribute && graphs.size() > 1)
          return one(graphs, seed);
        failures[i] = f;
      }
    }
    return failures;
  }

  /// Runs `function` (`op`) of entry `e`'s plan and compares each result
  /// with `expected`: `wide` (f64) results within 1e-8, else the graph's
  /// budget with `reference` and `perturbed` as the precision references.
  std::optional<Failure> runAndCompare(Session &session, mlir::func::FuncOp op,
                                       const std::string &function,
                                       const Entry &e,
                                       const std::vector<HostArray> &inputs,
                                       const std::vector<HostArray> &expected,
                                       const std::vector<HostArray> *reference,
                                       const std::vector<HostArray> *perturbed,
                                       bool wide) {
    std::map<std::string, HostArray> feed;
    std::vector<std::string> names = argumentNames(op);
    for (size_t a = 0; a < names.size(); ++a)
      feed[names[a]] = inputs[a];
    std::map<std::string, HostArray> outputs;
    try {
      outputs = session.run(function, feed);
    } catch (const Error &error) {
      return Failure{"run", function + ": " + error.what()};
    }
    std::vector<std::string> results = resultNames(op);
    for (size_t r = 0; r < results.size(); ++r) {
      auto found = outputs.find(results[r]);
      if (found == outputs.end())
        return Failure{"run", function + ": no result " + results[r]};
      bool exact = wide || r >= e.graph->outputs.size() ||
                   !e.graph->dependsOnFloat(e.graph->outputs[r]);
      // Outputs past a threshold op keep only the e64 check.
      bool conditioned = perturbed && r < e.graph->outputs.size() &&
                         !e.graph->dependsOnThreshold(e.graph->outputs[r]);
      if (std::optional<std::string> problem =
              compare(found->second, expected[r],
                      reference ? &(*reference)[r] : nullptr,
                      conditioned ? &(*perturbed)[r] : nullptr, exact,
                      wide ? 1e-8 : relativeBudget(*e.graph), stats))
        return Failure{wide ? "mismatch-f64" : "mismatch",
                       function + " result " + std::to_string(r) + ": " +
                           *problem};
    }
    return std::nullopt;
  }

  /// --remat: the gradient function alone, compiled under a budget of 9/10
  /// of what its plan needs without one (arguments and arena), so that
  /// genesis-remat recomputes what it can; a plan it fits gives the
  /// evaluator's gradient as every plan must (f64, 1e-8). A budget it
  /// cannot fit is counted, not a failure.
  std::optional<Failure> checkRemat(mlir::ModuleOp module, const Entry &e) {
    std::string function = e.name + "_l_grad";
    DiagnosticCapture capture(&context);
    mlir::FailureOr<std::vector<uint8_t>> plain =
        compileCpuPlan(module, {function});
    if (mlir::failed(plain))
      return Failure{"compile", capture.firstError("compilePlan failed")};
    PlanFile plainPlan = PlanFile::fromBytes(plain->data(), plain->size());
    int64_t needed =
        static_cast<int64_t>(plainPlan.plan().memory()->arena_bytes());
    for (const plan::Tensor *tensor : *plainPlan.plan().tensors())
      if (tensor->role() != plan::Role::Temporary &&
          tensor->role() != plan::Role::Output)
        needed += static_cast<int64_t>(tensor->bytes());
    PlanOptions options;
    options.memoryBudget = needed * 9 / 10;
    mlir::FailureOr<std::vector<uint8_t>> lean =
        compilePlan(module, {function}, options);
    if (mlir::failed(lean)) {
      ++stats.rematUnfit;
      return std::nullopt;
    }
    ++stats.rematPlans;
    std::optional<Session> session;
    try {
      PlanFile planFile = PlanFile::fromBytes(lean->data(), lean->size());
      for (const plan::Step *step :
           *planFile.plan().functions()->Get(0)->steps())
        stats.recomputations +=
            stepName(planFile, *step).find("_remat") != std::string::npos;
      session.emplace(std::move(planFile));
    } catch (const Error &error) {
      return Failure{"load", function + " (remat): " + error.what()};
    }
    std::optional<Failure> failure = runAndCompare(
        *session, module.lookupSymbol<mlir::func::FuncOp>(function), function,
        e, e.lossInputs, e.expectedGradient, nullptr, nullptr, true);
    if (failure)
      failure->kind += "-remat";
    return failure;
  }

  /// Runs the graphs one at a time (to find which of a batch fails).
  std::vector<std::optional<Failure>> one(const std::vector<Graph> &graphs,
                                          uint64_t seed) {
    std::vector<std::optional<Failure>> failures;
    for (size_t i = 0; i < graphs.size(); ++i)
      failures.push_back(run({graphs[i]}, mix(seed, i), false)[0]);
    return failures;
  }

  /// Differentiates the loss function and checks the gradient against
  /// finite differences; fills the entry's gradient inputs and results.
  std::optional<Failure> checkGradient(Entry &e, mlir::func::FuncOp loss,
                                       uint64_t graphSeed) {
    const Graph &graph = *e.graph;
    std::vector<unsigned> wrt = graph.differentiable();
    e.lossInputs = e.wideInputs;
    for (size_t k = 0; k < graph.outputs.size(); ++k) {
      const TensorSpec &type = graph.values[graph.outputs[k]].type;
      if (!type.isFloat() || type.fixed)
        continue;
      HostArray weight(DType::F64, type.shape);
      Generator generator(mix(graphSeed, 1000000 + k));
      generator.fill_uniform(weight, 0.5, 1.5);
      e.lossInputs.push_back(weight);
    }
    if (wrt.empty()) {
      loss.erase();
      return std::nullopt;
    }
    mlir::FailureOr<mlir::func::FuncOp> gradient = mlir::failure();
    {
      DiagnosticCapture capture(&context);
      gradient = differentiate(loss, wrt);
      if (mlir::failed(gradient)) {
        loss.erase();
        if (hasGradientStop(graph))
          return std::nullopt;
        return Failure{"autodiff", capture.firstError("differentiate failed")};
      }
    }
    e.hasGradient = true;
    ++stats.gradients;
    std::vector<HostArray> inputs = e.lossInputs;
    try {
      e.expectedGradient = evaluate(*gradient, inputs);
      double value = e.expectedGradient[0].getDouble(0);
      if (!std::isfinite(value) || hasGradientStop(graph))
        return std::nullopt;
      for (size_t n = 0; n < wrt.size(); ++n) {
        HostArray &argument = inputs[wrt[n]];
        const HostArray &analytic = e.expectedGradient[1 + n];
        int64_t count = argument.numel();
        for (int64_t j = 0; j < count; j += std::max<int64_t>(1, count / 4)) {
          double x = argument.getDouble(j);
          auto difference = [&](double h) {
            argument.setDouble(j, x + h);
            double up = evaluate(loss, inputs)[0].getDouble(0);
            argument.setDouble(j, x - h);
            double down = evaluate(loss, inputs)[0].getDouble(0);
            argument.setDouble(j, x);
            return (up - down) / (2 * h);
          };
          double h = 1e-6 * std::max(1.0, std::fabs(x));
          double fd = difference(h), coarse = difference(100 * h);
          double scale = std::max(1.0, std::fabs(fd));
          if (!std::isfinite(fd) || !std::isfinite(coarse) ||
              std::fabs(fd - coarse) > 1e-4 * scale) {
            ++stats.kinks;
            continue;
          }
          ++stats.gradientElements;
          // |fd - coarse| estimates the quotient's own error: rounding noise
          // in the loss divided by h (100 times less at 100 h), which an
          // ill-conditioned graph amplifies beyond 1e-14 |loss| (a layer
          // norm of a constant row: seed 6004 graph 521).
          double tolerance = 1e-5 * scale +
                             1e-14 * std::max(1.0, std::fabs(value)) / h +
                             2 * std::fabs(fd - coarse);
          double got = analytic.getDouble(j);
          if (!(std::fabs(got - fd) <= tolerance)) {
            char buffer[200];
            std::snprintf(buffer, sizeof buffer,
                          "d loss / d argument %u element %lld: autodiff "
                          "%.12g, finite differences %.12g",
                          wrt[n], static_cast<long long>(j), got, fd);
            return Failure{"gradient", buffer};
          }
        }
      }
    } catch (const Error &error) {
      return Failure{"evaluator", std::string("gradient: ") + error.what()};
    }
    return std::nullopt;
  }

  /// Writes `graph` (which passed on the CPU) as CUDA case `stem`, or
  /// appends it to refused.txt when the cuda lowering refuses it. Integer
  /// outputs that depend on floats are left out (see compare()).
  void writeCudaCase(const Graph &graph, uint64_t seed,
                     const std::string &stem) {
    std::string text =
        graph.render("case", false) + graph.render("case_f64", true);
    mlir::OwningOpRef<mlir::ModuleOp> module =
        mlir::parseSourceString<mlir::ModuleOp>(text, &context);
    if (!module)
      return;
    std::filesystem::create_directories(options.out);
    std::ofstream(options.out + "/running.mlir") << text;
    DiagnosticCapture capture(&context);
    PlanOptions cuda;
    cuda.target = plan::Target::Cuda;
    mlir::FailureOr<std::vector<uint8_t>> bytes =
        compilePlan(*module, {"case"}, cuda);
    std::filesystem::create_directories(options.cudaCases);
    if (mlir::failed(bytes)) {
      ++stats.cudaRefused;
      std::ofstream(options.cudaCases + "/refused.txt", std::ios::app)
          << "// " << capture.firstError("refused") << "\n"
          << graph.render("case", false) << "\n";
      return;
    }
    uint64_t graphSeed = mix(seed, 0);
    NamedArrays in, want, reference;
    std::vector<HostArray> inputs, wideInputs;
    for (int v : graph.arguments()) {
      inputs.push_back(randomInput(graph.values[v], mix(graphSeed, v)));
      wideInputs.push_back(widened(inputs.back(), graph.values[v].type));
      in.emplace_back("case.v" + std::to_string(v), inputs.back());
    }
    std::vector<HostArray> expected, expectedWide;
    try {
      expected =
          evaluate(module->lookupSymbol<mlir::func::FuncOp>("case"), inputs);
      expectedWide = evaluate(
          module->lookupSymbol<mlir::func::FuncOp>("case_f64"), wideInputs);
    } catch (const Error &) {
      return;
    }
    bool narrow = false;
    for (size_t r = 0; r < graph.outputs.size(); ++r) {
      const TensorSpec &type = graph.values[graph.outputs[r]].type;
      if (!type.isFloat() && graph.dependsOnFloat(graph.outputs[r]))
        continue;
      narrow |= type.element == "bf16" || type.element == "f16";
      std::string name = "case.result" + std::to_string(r);
      want.emplace_back(name, expected[r]);
      reference.emplace_back(name, expectedWide[r]);
    }
    if (want.empty())
      return;
    std::ofstream(stem + ".gplan", std::ios::binary)
        .write(reinterpret_cast<const char *>(bytes->data()),
               static_cast<std::streamsize>(bytes->size()));
    saveSafetensors(stem + ".in.safetensors", in);
    saveSafetensors(stem + ".want.safetensors", want);
    saveSafetensors(stem + ".reference.safetensors", reference);
    std::ofstream(stem + ".mlir") << text;
    double budget = relativeBudget(graph);
    if (narrow || budget > 1e-5)
      std::ofstream(stem + ".tolerance") << (narrow ? 1e-2 : budget);
    ++stats.cudaCases;
  }

  /// The smallest graph that still fails as `failure` does.
  Graph shrink(Graph graph, const Failure &failure, uint64_t seed) {
    auto stillFails = [&](const Graph &candidate) {
      std::optional<Failure> f = run({candidate}, seed, false)[0];
      return f && f->kind == failure.kind;
    };
    for (bool progress = true; progress;) {
      progress = false;
      for (size_t k = 0; graph.outputs.size() > 1 && k < graph.outputs.size();
           ++k) {
        Graph candidate = graph.withOnlyOutput(k);
        if (stillFails(candidate)) {
          graph = candidate;
          progress = true;
          break;
        }
      }
      for (int n = static_cast<int>(graph.nodes.size()) - 1; n >= 0; --n) {
        Graph candidate = graph.withoutNode(n);
        if (candidate.outputs.empty() || candidate.nodes.size() == 0)
          continue;
        if (stillFails(candidate)) {
          graph = candidate;
          progress = true;
          break;
        }
      }
    }
    return graph;
  }

  Statistics stats;

private:
  Options options;
  mlir::MLIRContext context;
};

bool parseOptions(int argc, char **argv, Options &options) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc)
        throw Error("genesis-diff-fuzz: " + arg + " needs a value");
      return argv[++i];
    };
    try {
      if (arg == "--graphs")
        options.graphs = std::stoll(value());
      else if (arg == "--seed")
        options.seed = std::stoull(value());
      else if (arg == "--batch")
        options.batch = std::stoi(value());
      else if (arg == "--max-ops")
        options.maxOps = std::stoi(value());
      else if (arg == "--out")
        options.out = value();
      else if (arg == "--cuda-cases")
        options.cudaCases = value();
      else if (arg == "--remat")
        options.remat = true;
      else if (arg == "--quiet")
        options.quiet = true;
      else
        throw Error("genesis-diff-fuzz: unknown option '" + arg + "'");
    } catch (const std::logic_error &) {
      throw Error("genesis-diff-fuzz: " + arg + " needs a number");
    }
  }
  if (options.graphs < 0 || options.batch < 1 || options.maxOps < 1)
    throw Error("genesis-diff-fuzz: --graphs must be >= 0, --batch and "
                "--max-ops >= 1");
  return true;
}

} // namespace

int main(int argc, char **argv) {
  Options options;
  try {
    parseOptions(argc, argv, options);
  } catch (const Error &error) {
    std::cerr << error.what() << "\n";
    return 2;
  }
  Fuzzer fuzzer(options);
  GraphOptions graphOptions;
  graphOptions.maxOps = options.maxOps;
  auto start = std::chrono::steady_clock::now();
  int64_t failed = 0;
  for (int64_t first = 0; first < options.graphs; first += options.batch) {
    int64_t count = std::min<int64_t>(options.batch, options.graphs - first);
    std::vector<Graph> graphs;
    for (int64_t i = 0; i < count; ++i) {
      graphs.push_back(randomGraph(mix(options.seed, first + i), graphOptions));
      fuzzer.stats.ops += static_cast<int64_t>(graphs.back().nodes.size());
      for (const GraphNode &node : graphs.back().nodes)
        ++fuzzer.stats.opCounts[node.op];
    }
    uint64_t batchSeed = mix(options.seed ^ 0x5bd1e995u, first);
    std::vector<std::optional<Failure>> failures =
        fuzzer.run(graphs, batchSeed, true);
    fuzzer.stats.graphs += count;
    for (int64_t i = 0; i < count; ++i) {
      if (!failures[i]) {
        if (!options.cudaCases.empty())
          fuzzer.writeCudaCase(graphs[i], mix(batchSeed, i),
                               options.cudaCases + "/graph_" +
                                   std::to_string(options.seed) + "_" +
                                   std::to_string(first + i));
        continue;
      }
      ++failed;
      // `one` reran graph i alone with this seed.
      uint64_t seed = count > 1 ? mix(batchSeed, i) : batchSeed;
      Graph small = fuzzer.shrink(graphs[i], *failures[i], seed);
      std::optional<Failure> last = fuzzer.run({small}, seed, false)[0];
      const Failure &shown = last ? *last : *failures[i];
      std::filesystem::create_directories(options.out);
      std::string path = options.out + "/" + shown.kind + "-" +
                         std::to_string(options.seed) + "-" +
                         std::to_string(first + i) + ".mlir";
      std::ofstream file(path);
      file << "// genesis-diff-fuzz --seed " << options.seed << ": graph "
           << first + i << " (input seed " << seed << ")\n// " << shown.kind
           << ": ";
      for (char c : shown.message)
        file << (c == '\n' ? std::string("\n// ") : std::string(1, c));
      file << "\n"
           << small.render("graph", false) << "\n"
           << small.render("graph_f64", true);
      std::cout << "\nFAIL graph " << first + i << " (" << shown.kind << ", "
                << small.nodes.size()
                << " ops after shrinking): " << shown.message.substr(0, 300)
                << "\n  reproducer: " << path << "\n";
    }
    if (!options.quiet) {
      double seconds = std::chrono::duration<double>(
                           std::chrono::steady_clock::now() - start)
                           .count();
      int64_t done = first + count;
      double rate = done / std::max(seconds, 1e-9);
      std::printf("\r[diff-fuzz] %lld/%lld graphs, %.1f graphs/s, ETA %.0f s, "
                  "%lld failed",
                  static_cast<long long>(done),
                  static_cast<long long>(options.graphs), rate,
                  (options.graphs - done) / std::max(rate, 1e-9),
                  static_cast<long long>(failed));
      std::fflush(stdout);
    }
  }
  const Statistics &s = fuzzer.stats;
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  std::printf("\n[diff-fuzz] seed %llu: %lld graphs (%lld ops, %lld compiled "
              "functions) in %.1f s; %lld gradients checked at %lld elements "
              "(%lld kinks skipped); %lld integer outputs of float graphs "
              "left to the f64 check; %lld borderline NaN/inf; %lld perturbed "
              "graphs the evaluator refused; %lld failed\n",
              static_cast<unsigned long long>(options.seed),
              static_cast<long long>(s.graphs), static_cast<long long>(s.ops),
              static_cast<long long>(s.compiledFunctions), seconds,
              static_cast<long long>(s.gradients),
              static_cast<long long>(s.gradientElements),
              static_cast<long long>(s.kinks),
              static_cast<long long>(s.uncheckedIntegers),
              static_cast<long long>(s.borderline),
              static_cast<long long>(s.unperturbed),
              static_cast<long long>(failed));
  if (!options.cudaCases.empty())
    std::printf("[diff-fuzz] %lld CUDA cases written to %s, %lld graphs "
                "refused by the cuda lowering (%s/refused.txt)\n",
                static_cast<long long>(s.cudaCases), options.cudaCases.c_str(),
                static_cast<long long>(s.cudaRefused),
                options.cudaCases.c_str());
  if (options.remat)
    std::printf("[diff-fuzz] --remat: %lld gradients compiled under 9/10 of "
                "their memory (%lld recomputing kernels), %lld budgets "
                "genesis-remat could not fit\n",
                static_cast<long long>(s.rematPlans),
                static_cast<long long>(s.recomputations),
                static_cast<long long>(s.rematUnfit));
  std::printf("[diff-fuzz] ops:");
  for (const auto &[op, count] : s.opCounts)
    std::printf(" %s=%lld", op.c_str() + 8, static_cast<long long>(count));
  std::printf("\n");
  std::filesystem::remove(options.out + "/running.mlir");
  return failed ? 1 : 0;
}
