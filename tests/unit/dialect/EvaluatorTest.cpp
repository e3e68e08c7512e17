//===- EvaluatorTest.cpp - Unit tests of the reference evaluator ----------===//
//
// Each test parses a small genesis function from a string, runs it through
// genesis::evaluate and compares the results with values worked out by hand
// from the spec in GenesisOps.td (softmax of [0, ln 3] is [0.25, 0.75], ...).
// Exact values are compared exactly; transcendental ones within a few ulps.
//
//===----------------------------------------------------------------------===//

#include "dialect/Evaluator/Evaluator.h"
#include "dialect/IR/GenesisDialect.h"
#include "dialect/IR/GenesisOps.h"
#include "runtime/support/Philox.h"
#include "runtime/support/Random.h"
#include "tools/ToolSupport.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include "tests/unit/TestSupport.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

using namespace genesis;
using namespace genesis::test;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
const double kLn3 = std::log(3.0);

using Values = std::vector<double>;
using Shape = std::vector<int64_t>;

HostArray array(DType dtype, Shape shape, const Values &values) {
  return HostArray::fromValues(dtype, std::move(shape), values);
}
HostArray f32(Shape shape, const Values &v) {
  return array(DType::F32, shape, v);
}
HostArray f64(Shape shape, const Values &v) {
  return array(DType::F64, shape, v);
}
HostArray f16(Shape shape, const Values &v) {
  return array(DType::F16, shape, v);
}
HostArray bf16(Shape shape, const Values &v) {
  return array(DType::BF16, shape, v);
}
HostArray ints(DType dtype, Shape shape, const std::vector<int64_t> &v) {
  return HostArray::fromValues(dtype, std::move(shape), v);
}
HostArray i1(Shape shape, const std::vector<int64_t> &v) {
  return ints(DType::I1, shape, v);
}
HostArray i32(Shape shape, const std::vector<int64_t> &v) {
  return ints(DType::I32, shape, v);
}
HostArray i64(Shape shape, const std::vector<int64_t> &v) {
  return ints(DType::I64, shape, v);
}
HostArray scalarF32(double v) { return f32({}, {v}); }
HostArray scalarI64(int64_t v) { return i64({}, {v}); }

std::string describe(const HostArray &a) {
  std::string text = a.typeString() + " [";
  for (int64_t i = 0; i < a.numel(); ++i)
    text += (i ? ", " : "") + std::to_string(a.getDouble(i));
  return text + "]";
}

/// Checks dtype, shape and every element: NaN matches NaN, `tolerance` is
/// absolute (0: exact; the sign of zeros is not compared).
::testing::AssertionResult matches(const HostArray &got, DType dtype,
                                   const Shape &shape, const Values &expected,
                                   double tolerance = 0.0) {
  if (got.dtype() != dtype || got.shape() != shape)
    return ::testing::AssertionFailure()
           << "got " << got.typeString() << ", expected " << dtypeName(dtype)
           << shapeString(shape);
  if (static_cast<size_t>(got.numel()) != expected.size())
    return ::testing::AssertionFailure() << "bad expected value count";
  for (int64_t i = 0; i < got.numel(); ++i) {
    double g = got.getDouble(i), e = expected[i];
    bool ok = std::isnan(e) ? std::isnan(g)
                            : (g == e || std::fabs(g - e) <= tolerance);
    if (!ok)
      return ::testing::AssertionFailure()
             << "element " << i << ": got " << g << ", expected " << e
             << " (tolerance " << tolerance << "); result " << describe(got);
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult matchesInts(const HostArray &got, DType dtype,
                                       const Shape &shape,
                                       const std::vector<int64_t> &expected) {
  if (got.dtype() != dtype || got.shape() != shape)
    return ::testing::AssertionFailure()
           << "got " << got.typeString() << ", expected " << dtypeName(dtype)
           << shapeString(shape);
  for (int64_t i = 0; i < got.numel(); ++i)
    if (got.getInt(i) != expected.at(i))
      return ::testing::AssertionFailure()
             << "element " << i << ": got " << got.getInt(i) << ", expected "
             << expected.at(i) << "; result " << describe(got);
  return ::testing::AssertionSuccess();
}

/// Runs `action`, which must throw genesis::Error, and returns the message.
class EvaluatorTest : public ::testing::Test {
protected:
  EvaluatorTest() {
    context.loadDialect<GenesisDialect, mlir::func::FuncDialect>();
  }

  /// Parses and verifies `ir` (source name "test.mlir", so op locations read
  /// "test.mlir:LINE:COL") and returns its function `name`, or the first.
  mlir::func::FuncOp parse(const std::string &ir,
                           const std::string &name = "") {
    module = mlir::parseSourceString<mlir::ModuleOp>(
        ir, mlir::ParserConfig(&context), "test.mlir");
    if (!module)
      throw Error("test IR does not parse:\n" + ir);
    return lookupFunction(*module, name);
  }

  std::vector<HostArray> run(const std::string &ir,
                             const std::vector<HostArray> &arguments,
                             const std::string &name = "") {
    return evaluate(parse(ir, name), arguments);
  }

  /// The single result of `ir` on `arguments`.
  HostArray run1(const std::string &ir,
                 const std::vector<HostArray> &arguments) {
    std::vector<HostArray> results = run(ir, arguments);
    EXPECT_EQ(results.size(), 1u);
    return results.at(0);
  }

  /// A function applying `op` (its text after "%r = ", reading %a and %b) to
  /// arguments of type `argType`, returning `resultType`.
  static std::string fn(const std::string &argTypes, const std::string &op,
                        const std::string &resultType) {
    return "func.func @f(" + argTypes + ") -> " + resultType +
           " {\n  %r = " + op + "\n  return %r : " + resultType + "\n}\n";
  }

  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;

  /// Attention of two queries over two keys (D = 1) with an additive mask.
  static std::string maskedAttention() {
    std::string t = "tensor<1x1x2x1xf32>", m = "tensor<1x1x2x2xf32>";
    return fn("%q: " + t + ", %k: " + t + ", %v: " + t + ", %m: " + m,
              "genesis.attention %q, %k, %v mask %m scale 1.0 : (" + t + ", " +
                  t + ", " + t + ", " + m + ") -> " + t,
              t);
  }
};

//===----------------------------------------------------------------------===//
// Constants and elementwise unary ops
//===----------------------------------------------------------------------===//

TEST_F(EvaluatorTest, Constants) {
  auto results = run(
      R"(func.func @f() -> (tensor<2xf32>, tensor<2x2xi64>, tensor<i1>, tensor<3xbf16>) {
  %0 = genesis.constant dense<[1.5, -0.25]> : tensor<2xf32>
  %1 = genesis.constant dense<7> : tensor<2x2xi64>
  %2 = genesis.constant dense<true> : tensor<i1>
  %3 = genesis.constant dense<[1.0, 3.0, 0.1]> : tensor<3xbf16>
  return %0, %1, %2, %3 : tensor<2xf32>, tensor<2x2xi64>, tensor<i1>, tensor<3xbf16>
})",
      {});
  ASSERT_EQ(results.size(), 4u);
  EXPECT_TRUE(matches(results[0], DType::F32, {2}, {1.5, -0.25}));
  EXPECT_TRUE(matchesInts(results[1], DType::I64, {2, 2}, {7, 7, 7, 7}));
  EXPECT_TRUE(matchesInts(results[2], DType::I1, {}, {1}));
  // 0.1 in bf16 is 0x3DCD = 0.10009765625.
  EXPECT_TRUE(matches(results[3], DType::BF16, {3}, {1.0, 3.0, 0.10009765625}));
}

TEST_F(EvaluatorTest, ExactUnaryOps) {
  const std::string t = "tensor<5xf32>";
  HostArray x = f32({5}, {-2.0, -0.0, 0.0, 0.5, kNaN});
  EXPECT_TRUE(matches(run1(fn("%a: " + t, "genesis.neg %a : " + t, t), {x}),
                      DType::F32, {5}, {2.0, 0.0, -0.0, -0.5, kNaN}));
  HostArray absolute = run1(fn("%a: " + t, "genesis.abs %a : " + t, t), {x});
  EXPECT_TRUE(matches(absolute, DType::F32, {5}, {2.0, 0.0, 0.0, 0.5, kNaN}));
  EXPECT_FALSE(std::signbit(absolute.getDouble(1))) << "abs(-0.0) must be +0.0";
  EXPECT_TRUE(matches(run1(fn("%a: " + t, "genesis.sign %a : " + t, t), {x}),
                      DType::F32, {5}, {-1.0, 0.0, 0.0, 1.0, kNaN}));
  EXPECT_TRUE(matches(run1(fn("%a: " + t, "genesis.relu %a : " + t, t), {x}),
                      DType::F32, {5}, {0.0, 0.0, 0.0, 0.5, kNaN}));
  HostArray positive = f32({3}, {4.0, 2.25, 0.25});
  const std::string t3 = "tensor<3xf32>";
  EXPECT_TRUE(
      matches(run1(fn("%a: " + t3, "genesis.sqrt %a : " + t3, t3), {positive}),
              DType::F32, {3}, {2.0, 1.5, 0.5}));
  EXPECT_TRUE(
      matches(run1(fn("%a: " + t3, "genesis.rsqrt %a : " + t3, t3), {positive}),
              DType::F32, {3}, {0.5, 1.0 / 1.5, 2.0}, 1e-7));
  const std::string b = "tensor<2xi1>";
  EXPECT_TRUE(matchesInts(
      run1(fn("%a: " + b, "genesis.not %a : " + b, b), {i1({2}, {1, 0})}),
      DType::I1, {2}, {0, 1}));
  // Integer forms.
  const std::string ti = "tensor<4xi32>";
  HostArray n = i32({4}, {-5, 0, 7, INT32_MIN});
  EXPECT_TRUE(
      matchesInts(run1(fn("%a: " + ti, "genesis.abs %a : " + ti, ti), {n}),
                  DType::I32, {4}, {5, 0, 7, INT32_MIN}));
  EXPECT_TRUE(
      matchesInts(run1(fn("%a: " + ti, "genesis.sign %a : " + ti, ti), {n}),
                  DType::I32, {4}, {-1, 0, 1, -1}));
  EXPECT_TRUE(
      matchesInts(run1(fn("%a: " + ti, "genesis.relu %a : " + ti, ti), {n}),
                  DType::I32, {4}, {0, 0, 7, 0}));
}

TEST_F(EvaluatorTest, TranscendentalUnaryOps) {
  const std::string t = "tensor<3xf64>";
  auto unary = [&](const std::string &op, const Values &x) {
    return run1(fn("%a: " + t, "genesis." + op + " %a : " + t, t),
                {f64({3}, x)});
  };
  const double e = std::exp(1.0), ln2 = std::log(2.0);
  EXPECT_TRUE(matches(unary("exp", {0.0, 1.0, ln2}), DType::F64, {3},
                      {1.0, e, 2.0}, 1e-15));
  EXPECT_TRUE(matches(unary("log", {1.0, e, 0.0}), DType::F64, {3},
                      {0.0, 1.0, -kInf}, 1e-15));
  // tanh(ln 2) = (4 - 1) / (4 + 1).
  EXPECT_TRUE(matches(unary("tanh", {0.0, ln2, -ln2}), DType::F64, {3},
                      {0.0, 0.6, -0.6}, 1e-15));
  // sigmoid(ln 3) = 1 / (1 + 1/3).
  EXPECT_TRUE(matches(unary("sigmoid", {0.0, kLn3, -kLn3}), DType::F64, {3},
                      {0.5, 0.75, 0.25}, 1e-15));
  EXPECT_TRUE(matches(unary("silu", {0.0, kLn3, -kLn3}), DType::F64, {3},
                      {0.0, 0.75 * kLn3, -0.25 * kLn3}, 1e-15));
  // gelu(1) = Phi(1) = 0.8413447460685429; gelu(-1) = -(1 - Phi(1)).
  EXPECT_TRUE(matches(unary("gelu", {0.0, 1.0, -1.0}), DType::F64, {3},
                      {0.0, 0.8413447460685429, -0.15865525393145707}, 1e-15));
  // 0.5 * (1 + tanh(sqrt(2/pi) * 1.044715)); gelu(-x) = gelu(x) - x.
  EXPECT_TRUE(matches(
      run1(fn("%a: " + t, "genesis.gelu %a approximate = tanh : " + t, t),
           {f64({3}, {0.0, 1.0, -1.0})}),
      DType::F64, {3}, {0.0, 0.8411919906082768, 0.8411919906082768 - 1.0},
      1e-15));
  EXPECT_TRUE(matches(unary("sin", {0.0, M_PI / 6, -M_PI / 2}), DType::F64, {3},
                      {0.0, 0.5, -1.0}, 1e-15));
  EXPECT_TRUE(matches(unary("cos", {0.0, M_PI / 3, M_PI}), DType::F64, {3},
                      {1.0, 0.5, -1.0}, 1e-15));
}

//===----------------------------------------------------------------------===//
// Elementwise binary ops, compare, select, cast
//===----------------------------------------------------------------------===//

TEST_F(EvaluatorTest, BinaryOps) {
  const std::string t = "tensor<2xf32>";
  HostArray a = f32({2}, {1.5, -2.0}), b = f32({2}, {0.5, 4.0});
  auto binary = [&](const std::string &op, const HostArray &x,
                    const HostArray &y) {
    return run1(
        fn("%a: " + t + ", %b: " + t, "genesis." + op + " %a, %b : " + t, t),
        {x, y});
  };
  EXPECT_TRUE(matches(binary("add", a, b), DType::F32, {2}, {2.0, 2.0}));
  EXPECT_TRUE(matches(binary("sub", a, b), DType::F32, {2}, {1.0, -6.0}));
  EXPECT_TRUE(matches(binary("mul", a, b), DType::F32, {2}, {0.75, -8.0}));
  EXPECT_TRUE(matches(binary("div", a, b), DType::F32, {2}, {3.0, -0.5}));
  EXPECT_TRUE(matches(binary("max", a, b), DType::F32, {2}, {1.5, 4.0}));
  EXPECT_TRUE(matches(binary("min", a, b), DType::F32, {2}, {0.5, -2.0}));
  EXPECT_TRUE(
      matches(binary("pow", f32({2}, {2.0, 9.0}), f32({2}, {10.0, 0.5})),
              DType::F32, {2}, {1024.0, 3.0}));
  // Integer division truncates toward zero.
  const std::string ti = "tensor<5xi32>";
  EXPECT_TRUE(matchesInts(
      run1(fn("%a: " + ti + ", %b: " + ti, "genesis.div %a, %b : " + ti, ti),
           {i32({5}, {7, -7, 7, -7, INT32_MIN}), i32({5}, {2, 2, -2, -2, -1})}),
      DType::I32, {5}, {3, -3, -3, 3, INT32_MIN}));
  const std::string tb = "tensor<4xi1>";
  HostArray p = i1({4}, {0, 0, 1, 1}), q = i1({4}, {0, 1, 0, 1});
  EXPECT_TRUE(matchesInts(
      run1(fn("%a: " + tb + ", %b: " + tb, "genesis.and %a, %b : " + tb, tb),
           {p, q}),
      DType::I1, {4}, {0, 0, 0, 1}));
  EXPECT_TRUE(matchesInts(
      run1(fn("%a: " + tb + ", %b: " + tb, "genesis.or %a, %b : " + tb, tb),
           {p, q}),
      DType::I1, {4}, {0, 1, 1, 1}));
}

TEST_F(EvaluatorTest, IntegerArithmeticWrapsAround) {
  const std::string t = "tensor<3xi32>";
  auto binary = [&](const std::string &op, const HostArray &x,
                    const HostArray &y) {
    return run1(
        fn("%a: " + t + ", %b: " + t, "genesis." + op + " %a, %b : " + t, t),
        {x, y});
  };
  EXPECT_TRUE(matchesInts(
      binary("add", i32({3}, {INT32_MAX, INT32_MIN, 5}), i32({3}, {1, -1, -7})),
      DType::I32, {3}, {INT32_MIN, INT32_MAX, -2}));
  EXPECT_TRUE(matchesInts(
      binary("sub", i32({3}, {INT32_MIN, 0, 1}), i32({3}, {1, INT32_MIN, 2})),
      DType::I32, {3}, {INT32_MAX, INT32_MIN, -1}));
  EXPECT_TRUE(matchesInts(
      binary("mul", i32({3}, {65536, 65537, -3}), i32({3}, {65536, 65537, 4})),
      DType::I32, {3}, {0, 131073, -12}));
  EXPECT_TRUE(matchesInts(run1(fn("%a: " + t, "genesis.neg %a : " + t, t),
                               {i32({3}, {INT32_MIN, INT32_MAX, 0})}),
                          DType::I32, {3}, {INT32_MIN, -INT32_MAX, 0}));
  const std::string t64 = "tensor<1xi64>";
  EXPECT_TRUE(matchesInts(run1(fn("%a: " + t64 + ", %b: " + t64,
                                  "genesis.add %a, %b : " + t64, t64),
                               {i64({1}, {INT64_MAX}), i64({1}, {1})}),
                          DType::I64, {1}, {INT64_MIN}));
}

TEST_F(EvaluatorTest, IntegerDivisionByZeroIsAnError) {
  std::string ir =
      R"(func.func @f(%a: tensor<2xi64>, %b: tensor<2xi64>) -> tensor<2xi64> {
  %r = genesis.div %a, %b : tensor<2xi64>
  return %r : tensor<2xi64>
})";
  std::string message = errorFrom([&] {
    run(ir, {i64({2}, {4, 5}), i64({2}, {2, 0})});
  });
  EXPECT_TRUE(contains(message, "test.mlir:2:"));
  EXPECT_TRUE(contains(message, "'genesis.div'"));
  EXPECT_TRUE(contains(message, "integer division by zero"));
  // Float division by zero is IEEE: inf, not an error.
  std::string floats =
      fn("%a: tensor<2xf32>, %b: tensor<2xf32>",
         "genesis.div %a, %b : tensor<2xf32>", "tensor<2xf32>");
  EXPECT_TRUE(
      matches(run1(floats, {f32({2}, {1.0, -1.0}), f32({2}, {0.0, 0.0})}),
              DType::F32, {2}, {kInf, -kInf}));
}

TEST_F(EvaluatorTest, MaxMinPropagateNaN) {
  const std::string t = "tensor<3xf32>";
  HostArray a = f32({3}, {kNaN, 1.0, 2.0}), b = f32({3}, {1.0, kNaN, 3.0});
  EXPECT_TRUE(matches(
      run1(fn("%a: " + t + ", %b: " + t, "genesis.max %a, %b : " + t, t),
           {a, b}),
      DType::F32, {3}, {kNaN, kNaN, 3.0}));
  EXPECT_TRUE(matches(
      run1(fn("%a: " + t + ", %b: " + t, "genesis.min %a, %b : " + t, t),
           {a, b}),
      DType::F32, {3}, {kNaN, kNaN, 2.0}));
  // Reductions: NaN wins as well.
  const std::string t2 = "tensor<2x3xf32>";
  HostArray x = f32({2, 3}, {1.0, kNaN, 3.0, 4.0, 5.0, 6.0});
  EXPECT_TRUE(
      matches(run1(fn("%a: " + t2, "genesis.reduce_max %a dims [1] : " + t2,
                      "tensor<2xf32>"),
                   {x}),
              DType::F32, {2}, {kNaN, 6.0}));
  EXPECT_TRUE(
      matches(run1(fn("%a: " + t2, "genesis.reduce_min %a dims [1] : " + t2,
                      "tensor<2xf32>"),
                   {x}),
              DType::F32, {2}, {kNaN, 4.0}));
}

TEST_F(EvaluatorTest, CompareAllDirections) {
  const std::string t = "tensor<3xf32>";
  HostArray a = f32({3}, {1.0, 2.0, 3.0}), b = f32({3}, {2.0, 2.0, 2.0});
  struct Case {
    const char *direction;
    std::vector<int64_t> expected;
  } cases[] = {{"eq", {0, 1, 0}}, {"ne", {1, 0, 1}}, {"lt", {1, 0, 0}},
               {"le", {1, 1, 0}}, {"gt", {0, 0, 1}}, {"ge", {0, 1, 1}}};
  for (const Case &c : cases) {
    std::string ir =
        fn("%a: " + t + ", %b: " + t,
           std::string("genesis.compare ") + c.direction + ", %a, %b : " + t,
           "tensor<3xi1>");
    EXPECT_TRUE(matchesInts(run1(ir, {a, b}), DType::I1, {3}, c.expected))
        << c.direction;
    // The same on integers.
    std::string iir = fn("%a: tensor<3xi64>, %b: tensor<3xi64>",
                         std::string("genesis.compare ") + c.direction +
                             ", %a, %b : tensor<3xi64>",
                         "tensor<3xi1>");
    EXPECT_TRUE(
        matchesInts(run1(iir, {i64({3}, {1, 2, 3}), i64({3}, {2, 2, 2})}),
                    DType::I1, {3}, c.expected))
        << c.direction;
  }
}

TEST_F(EvaluatorTest, CompareWithNaNIsUnordered) {
  const std::string t = "tensor<3xf32>";
  HostArray a = f32({3}, {kNaN, kNaN, 1.0}), b = f32({3}, {1.0, kNaN, kNaN});
  for (const char *direction : {"eq", "ne", "lt", "le", "gt", "ge"}) {
    std::string ir =
        fn("%a: " + t + ", %b: " + t,
           std::string("genesis.compare ") + direction + ", %a, %b : " + t,
           "tensor<3xi1>");
    int64_t expected = std::string(direction) == "ne" ? 1 : 0;
    EXPECT_TRUE(matchesInts(run1(ir, {a, b}), DType::I1, {3},
                            {expected, expected, expected}))
        << direction;
  }
}

TEST_F(EvaluatorTest, Select) {
  std::string ir = fn("%c: tensor<3xi1>, %a: tensor<3xf32>, %b: tensor<3xf32>",
                      "genesis.select %c, %a, %b : tensor<3xi1>, tensor<3xf32>",
                      "tensor<3xf32>");
  EXPECT_TRUE(matches(run1(ir, {i1({3}, {1, 0, 1}), f32({3}, {1.0, 2.0, 3.0}),
                                f32({3}, {10.0, 20.0, 30.0})}),
                      DType::F32, {3}, {1.0, 20.0, 3.0}));
}

TEST_F(EvaluatorTest, CastBasics) {
  auto cast = [&](const std::string &from, const std::string &to,
                  const HostArray &x) {
    return run1(
        fn("%a: " + from, "genesis.cast %a : " + from + " to " + to, to), {x});
  };
  EXPECT_TRUE(matchesInts(
      cast("tensor<4xf32>", "tensor<4xi32>", f32({4}, {2.9, -2.9, 0.5, -0.5})),
      DType::I32, {4}, {2, -2, 0, 0}));
  EXPECT_TRUE(matches(
      cast("tensor<3xi32>", "tensor<3xf32>", i32({3}, {-3, 0, 16777217})),
      DType::F32, {3}, {-3.0, 0.0, 16777216.0}));
  // Anything -> i1 is x != 0; i1 -> any is 0 or 1.
  EXPECT_TRUE(matchesInts(
      cast("tensor<4xf32>", "tensor<4xi1>", f32({4}, {0.0, -0.0, 2.0, kNaN})),
      DType::I1, {4}, {0, 0, 1, 1}));
  EXPECT_TRUE(matchesInts(cast("tensor<3xi64>", "tensor<3xi1>",
                               i64({3}, {0, int64_t(1) << 40, -1})),
                          DType::I1, {3}, {0, 1, 1}));
  EXPECT_TRUE(matches(cast("tensor<2xi1>", "tensor<2xf32>", i1({2}, {1, 0})),
                      DType::F32, {2}, {1.0, 0.0}));
  EXPECT_TRUE(
      matchesInts(cast("tensor<2xi1>", "tensor<2xi32>", i1({2}, {1, 0})),
                  DType::I32, {2}, {1, 0}));
}

TEST_F(EvaluatorTest, CastFloatToIntMapsNaNToZeroAndSaturates) {
  auto cast = [&](const std::string &from, const std::string &to,
                  const HostArray &x) {
    return run1(
        fn("%a: " + from, "genesis.cast %a : " + from + " to " + to, to), {x});
  };
  EXPECT_TRUE(matchesInts(
      cast("tensor<8xf32>", "tensor<8xi32>",
           f32({8}, {kNaN, 1e10, -1e10, kInf, -kInf, 2.9, -2.9, 2147483520.0})),
      DType::I32, {8},
      {0, INT32_MAX, INT32_MIN, INT32_MAX, INT32_MIN, 2, -2, 2147483520}));
  EXPECT_TRUE(matchesInts(
      cast("tensor<5xf64>", "tensor<5xi64>",
           f64({5}, {kNaN, 1e19, -1e19, 9.2e18, -kInf})),
      DType::I64, {5},
      {0, INT64_MAX, INT64_MIN, int64_t(9200000000000000000), INT64_MIN}));
}

//===----------------------------------------------------------------------===//
// bf16 and f16 rounding
//===----------------------------------------------------------------------===//

TEST_F(EvaluatorTest, Bf16ResultsRoundToNearestEven) {
  // bf16 has 7 fraction bits: the ulp of 1 is 2^-7.
  const std::string t = "tensor<3xbf16>";
  HostArray ones = bf16({3}, {1.0, 1.0, 1.0});
  HostArray small = bf16(
      {3}, {std::ldexp(1.0, -9), std::ldexp(1.0, -8), 3 * std::ldexp(1.0, -8)});
  HostArray sum =
      run1(fn("%a: " + t + ", %b: " + t, "genesis.add %a, %b : " + t, t),
           {ones, small});
  // 1 + 2^-9 -> 1 (below half an ulp); 1 + 2^-8 -> 1 (tie, even);
  // 1 + 3 * 2^-8 -> 1 + 2^-6 (tie, even).
  EXPECT_TRUE(
      matches(sum, DType::BF16, {3}, {1.0, 1.0, 1.0 + std::ldexp(1.0, -6)}));
  // f32 -> bf16, and f64 -> bf16 rounds directly from the f64 value: via f32,
  // 1 + 2^-8 + 2^-40 would become the tie 1 + 2^-8 and round to 1.
  auto cast = [&](const std::string &from, const HostArray &x) {
    return run1(fn("%a: " + from,
                   "genesis.cast %a : " + from + " to tensor<2xbf16>",
                   "tensor<2xbf16>"),
                {x});
  };
  EXPECT_TRUE(
      matches(cast("tensor<2xf32>", f32({2}, {1.0 + std::ldexp(1.0, -9), 3.0})),
              DType::BF16, {2}, {1.0, 3.0}));
  EXPECT_TRUE(matches(
      cast("tensor<2xf64>",
           f64({2}, {1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40), -0.1})),
      DType::BF16, {2}, {1.0 + std::ldexp(1.0, -7), -0.10009765625}));
  // i64 -> bf16 rounds once from the integer: 2^60 + 2^52 + 1 lies just above
  // the tie between 2^60 and 2^60 + 2^53 (through f64 it would be the tie).
  int64_t big = (int64_t(1) << 60) + (int64_t(1) << 52) + 1;
  EXPECT_TRUE(matches(cast("tensor<2xi64>", i64({2}, {big, -big})), DType::BF16,
                      {2},
                      {std::ldexp(1.0, 60) + std::ldexp(1.0, 53),
                       -(std::ldexp(1.0, 60) + std::ldexp(1.0, 53))}));
}

TEST_F(EvaluatorTest, F16ResultsRoundToNearestEvenAndOverflow) {
  // f16 has 10 fraction bits (ulp of 1 is 2^-10) and a largest finite 65504.
  const std::string t = "tensor<4xf16>";
  HostArray a = f16({4}, {1.0, 1.0, 65504.0, 65504.0});
  HostArray b =
      f16({4}, {std::ldexp(1.0, -11), 3 * std::ldexp(1.0, -11), 15.0, 16.0});
  EXPECT_TRUE(matches(
      run1(fn("%a: " + t + ", %b: " + t, "genesis.add %a, %b : " + t, t),
           {a, b}),
      DType::F16, {4}, {1.0, 1.0 + std::ldexp(1.0, -9), 65504.0, kInf}));
  // Integer -> f16: 65519 rounds down, 65520 (the tie) overflows.
  EXPECT_TRUE(
      matches(run1(fn("%a: tensor<3xi64>",
                      "genesis.cast %a : tensor<3xi64> to tensor<3xf16>",
                      "tensor<3xf16>"),
                   {i64({3}, {65519, 65520, 2049})}),
              DType::F16, {3}, {65504.0, kInf, 2048.0}));
}

//===----------------------------------------------------------------------===//
// Shape ops
//===----------------------------------------------------------------------===//

TEST_F(EvaluatorTest, ShapeOps) {
  HostArray x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_TRUE(
      matches(run1(fn("%a: tensor<2x3xf32>",
                      "genesis.reshape %a : tensor<2x3xf32> -> tensor<3x2xf32>",
                      "tensor<3x2xf32>"),
                   {x}),
              DType::F32, {3, 2}, {1, 2, 3, 4, 5, 6}));
  EXPECT_TRUE(matches(run1(fn("%a: tensor<2x3xf32>",
                              "genesis.transpose %a, [1, 0] : tensor<2x3xf32>",
                              "tensor<3x2xf32>"),
                           {x}),
                      DType::F32, {3, 2}, {1, 4, 2, 5, 3, 6}));
  HostArray y = i64({2, 3, 2}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  // result[i, j, k] = y[j, k, i].
  EXPECT_TRUE(matchesInts(
      run1(fn("%a: tensor<2x3x2xi64>",
              "genesis.transpose %a, [2, 0, 1] : tensor<2x3x2xi64>",
              "tensor<2x2x3xi64>"),
           {y}),
      DType::I64, {2, 2, 3}, {0, 2, 4, 6, 8, 10, 1, 3, 5, 7, 9, 11}));
  HostArray r = f32({10}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  EXPECT_TRUE(matches(
      run1(
          fn("%a: tensor<10xf32>",
             "genesis.slice %a start [1] limit [8] stride [3] : tensor<10xf32>",
             "tensor<3xf32>"),
          {r}),
      DType::F32, {3}, {1, 4, 7}));
  EXPECT_TRUE(matches(run1(fn("%a: tensor<2x3xf32>",
                              "genesis.slice %a start [1, 0] limit [2, 3] "
                              "stride [1, 2] : tensor<2x3xf32>",
                              "tensor<1x2xf32>"),
                           {x}),
                      DType::F32, {1, 2}, {4, 6}));
  EXPECT_TRUE(matches(
      run1(fn("%a: tensor<2x1xf32>, %b: tensor<2x2xf32>",
              "genesis.concat %a, %b dim 1 : tensor<2x1xf32>, tensor<2x2xf32>",
              "tensor<2x3xf32>"),
           {f32({2, 1}, {1, 4}), f32({2, 2}, {2, 3, 5, 6})}),
      DType::F32, {2, 3}, {1, 2, 3, 4, 5, 6}));
  EXPECT_TRUE(matches(
      run1(fn("%a: tensor<1x3xf32>, %b: tensor<1x3xf32>",
              "genesis.concat %a, %b dim 0 : tensor<1x3xf32>, tensor<1x3xf32>",
              "tensor<2x3xf32>"),
           {f32({1, 3}, {1, 2, 3}), f32({1, 3}, {4, 5, 6})}),
      DType::F32, {2, 3}, {1, 2, 3, 4, 5, 6}));
  EXPECT_TRUE(matches(run1(fn("%a: tensor<2xf32>",
                              "genesis.broadcast_in_dim %a, [1] : "
                              "tensor<2xf32> -> tensor<3x2xf32>",
                              "tensor<3x2xf32>"),
                           {f32({2}, {1, 2})}),
                      DType::F32, {3, 2}, {1, 2, 1, 2, 1, 2}));
  EXPECT_TRUE(matches(run1(fn("%a: tensor<2x1xf32>",
                              "genesis.broadcast_in_dim %a, [0, 1] : "
                              "tensor<2x1xf32> -> tensor<2x3xf32>",
                              "tensor<2x3xf32>"),
                           {f32({2, 1}, {1, 2})}),
                      DType::F32, {2, 3}, {1, 1, 1, 2, 2, 2}));
  EXPECT_TRUE(matchesInts(run1("func.func @f() -> tensor<2x3xi64> {\n"
                               "  %r = genesis.iota dim 1 : tensor<2x3xi64>\n"
                               "  return %r : tensor<2x3xi64>\n}\n",
                               {}),
                          DType::I64, {2, 3}, {0, 1, 2, 0, 1, 2}));
  EXPECT_TRUE(matches(run1("func.func @f() -> tensor<2x3xf32> {\n"
                           "  %r = genesis.iota dim 0 : tensor<2x3xf32>\n"
                           "  return %r : tensor<2x3xf32>\n}\n",
                           {}),
                      DType::F32, {2, 3}, {0, 0, 0, 1, 1, 1}));
}

TEST_F(EvaluatorTest, TakeGathersRows) {
  HostArray table = f32({3, 2}, {1, 2, 3, 4, 5, 6});
  EXPECT_TRUE(matches(
      run1(fn("%a: tensor<3x2xf32>, %b: tensor<3xi64>",
              "genesis.take %a, %b axis 0 : tensor<3x2xf32>, tensor<3xi64>",
              "tensor<3x2xf32>"),
           {table, i64({3}, {2, 0, 2})}),
      DType::F32, {3, 2}, {5, 6, 1, 2, 5, 6}));
  // Along axis 1 with 2-D indices: result[a, i, j] = table[a, ids[i, j]].
  EXPECT_TRUE(matches(
      run1(fn("%a: tensor<3x2xf32>, %b: tensor<1x2xi32>",
              "genesis.take %a, %b axis 1 : tensor<3x2xf32>, tensor<1x2xi32>",
              "tensor<3x1x2xf32>"),
           {table, i32({1, 2}, {1, 0})}),
      DType::F32, {3, 1, 2}, {2, 1, 4, 3, 6, 5}));
}

TEST_F(EvaluatorTest, TakeOutOfRangeIndexNamesOpLocationAndIndex) {
  std::string ir =
      R"(func.func @f(%t: tensor<3x2xf32>, %i: tensor<3xi64>) -> tensor<3x2xf32> {
  %r = genesis.take %t, %i axis 0 : tensor<3x2xf32>, tensor<3xi64>
  return %r : tensor<3x2xf32>
})";
  HostArray table = f32({3, 2}, {1, 2, 3, 4, 5, 6});
  std::string message = errorFrom([&] {
    run(ir, {table, i64({3}, {0, 5, 1})});
  });
  EXPECT_TRUE(contains(message, "test.mlir:2:8"));
  EXPECT_TRUE(contains(message, "'genesis.take'"));
  EXPECT_TRUE(contains(message, "index 5 at position 1"));
  EXPECT_TRUE(contains(message, "[0, 3)"));
  message = errorFrom([&] { run(ir, {table, i64({3}, {0, 1, -1})}); });
  EXPECT_TRUE(contains(message, "index -1 at position 2"));
}

TEST_F(EvaluatorTest, ScatterAddSumsRepeatedIndices) {
  std::string ir =
      fn("%a: tensor<3x2xf32>, %i: tensor<4xi64>, %u: tensor<4x2xf32>",
         "genesis.scatter_add %a, %i, %u axis 0 : tensor<3x2xf32>, "
         "tensor<4xi64>, tensor<4x2xf32>",
         "tensor<3x2xf32>");
  HostArray result =
      run1(ir, {f32({3, 2}, {1, 1, 1, 1, 1, 1}), i64({4}, {0, 2, 0, 0}),
                f32({4, 2}, {1, 2, 10, 20, 100, 200, 1000, 2000})});
  EXPECT_TRUE(matches(result, DType::F32, {3, 2}, {1102, 2203, 1, 1, 11, 21}));
  // Repeated float sums are rounded once: 1 + 2^-24 + 2^-24 = 1 + 2^-23 in
  // f32, though each partial sum alone would round back to 1.
  std::string once =
      fn("%a: tensor<1xf32>, %i: tensor<2xi64>, %u: tensor<2xf32>",
         "genesis.scatter_add %a, %i, %u axis 0 : tensor<1xf32>, "
         "tensor<2xi64>, tensor<2xf32>",
         "tensor<1xf32>");
  double tiny = std::ldexp(1.0, -24);
  EXPECT_TRUE(matches(
      run1(once, {f32({1}, {1.0}), i64({2}, {0, 0}), f32({2}, {tiny, tiny})}),
      DType::F32, {1}, {1.0 + std::ldexp(1.0, -23)}));
  // Integers wrap.
  std::string wrap =
      fn("%a: tensor<2xi32>, %i: tensor<2xi32>, %u: tensor<2xi32>",
         "genesis.scatter_add %a, %i, %u axis 0 : tensor<2xi32>, "
         "tensor<2xi32>, tensor<2xi32>",
         "tensor<2xi32>");
  EXPECT_TRUE(matchesInts(run1(wrap, {i32({2}, {INT32_MAX, 0}),
                                      i32({2}, {0, 0}), i32({2}, {1, 1})}),
                          DType::I32, {2}, {INT32_MIN + 1, 0}));
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

TEST_F(EvaluatorTest, Reductions) {
  const std::string t = "tensor<2x3xf32>";
  HostArray x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_TRUE(
      matches(run1(fn("%a: " + t, "genesis.reduce_sum %a dims [1] : " + t,
                      "tensor<2xf32>"),
                   {x}),
              DType::F32, {2}, {6, 15}));
  EXPECT_TRUE(matches(
      run1(fn("%a: " + t, "genesis.reduce_sum %a dims [0] keepdim : " + t,
              "tensor<1x3xf32>"),
           {x}),
      DType::F32, {1, 3}, {5, 7, 9}));
  EXPECT_TRUE(
      matches(run1(fn("%a: " + t, "genesis.reduce_sum %a dims [0, 1] : " + t,
                      "tensor<f32>"),
                   {x}),
              DType::F32, {}, {21}));
  EXPECT_TRUE(matches(
      run1(fn("%a: " + t, "genesis.reduce_max %a dims [1] keepdim : " + t,
              "tensor<2x1xf32>"),
           {x}),
      DType::F32, {2, 1}, {3, 6}));
  EXPECT_TRUE(
      matches(run1(fn("%a: " + t, "genesis.reduce_min %a dims [0] : " + t,
                      "tensor<3xf32>"),
                   {x}),
              DType::F32, {3}, {1, 2, 3}));
  EXPECT_TRUE(matches(
      run1(fn("%a: " + t, "genesis.reduce_sum %a dims [] : " + t, t), {x}),
      DType::F32, {2, 3}, {1, 2, 3, 4, 5, 6}));
  const std::string ti = "tensor<3xi32>";
  EXPECT_TRUE(
      matchesInts(run1(fn("%a: " + ti, "genesis.reduce_sum %a dims [0] : " + ti,
                          "tensor<i32>"),
                       {i32({3}, {INT32_MAX, 1, 0})}),
                  DType::I32, {}, {INT32_MIN}));
  EXPECT_TRUE(
      matchesInts(run1(fn("%a: " + ti, "genesis.reduce_max %a dims [0] : " + ti,
                          "tensor<i32>"),
                       {i32({3}, {-7, -3, -5})}),
                  DType::I32, {}, {-3}));
}

TEST_F(EvaluatorTest, ArgmaxTiesGoFirstAndNaNIsLargest) {
  const std::string t = "tensor<3x4xf32>";
  HostArray x = f32({3, 4}, {1, 3, 3, 2,       // tie: first 3
                             2, kNaN, 5, kNaN, // first NaN
                             kNaN, 1, 9, 1});  // NaN at 0
  EXPECT_TRUE(matchesInts(
      run1(fn("%a: " + t, "genesis.argmax %a dim 1 : " + t, "tensor<3xi64>"),
           {x}),
      DType::I64, {3}, {1, 1, 0}));
  EXPECT_TRUE(
      matchesInts(run1(fn("%a: " + t, "genesis.argmax %a dim 0 keepdim : " + t,
                          "tensor<1x4xi64>"),
                       {x}),
                  DType::I64, {1, 4}, {2, 1, 2, 1}));
  // Integers compare exactly, even above 2^53.
  int64_t big = int64_t(1) << 53;
  EXPECT_TRUE(matchesInts(
      run1(fn("%a: tensor<2x2xi64>",
              "genesis.argmax %a dim 1 : tensor<2x2xi64>", "tensor<2xi64>"),
           {i64({2, 2}, {big, big + 1, 4, 4})}),
      DType::I64, {2}, {1, 0}));
}

//===----------------------------------------------------------------------===//
// Compound ops
//===----------------------------------------------------------------------===//

TEST_F(EvaluatorTest, Matmul) {
  const std::string t = "tensor<2x2xf32>";
  HostArray a = f32({2, 2}, {1, 2, 3, 4}), b = f32({2, 2}, {5, 6, 7, 8});
  auto mm = [&](const std::string &flags, const HostArray &x,
                const HostArray &y) {
    return run1(fn("%a: " + t + ", %b: " + t,
                   "genesis.matmul %a, %b" + flags + " : " + t + ", " + t, t),
                {x, y});
  };
  EXPECT_TRUE(matches(mm("", a, b), DType::F32, {2, 2}, {19, 22, 43, 50}));
  // The same product with operands stored transposed.
  HostArray at = f32({2, 2}, {1, 3, 2, 4}), bt = f32({2, 2}, {5, 7, 6, 8});
  EXPECT_TRUE(matches(mm(" transpose_lhs", at, b), DType::F32, {2, 2},
                      {19, 22, 43, 50}));
  EXPECT_TRUE(matches(mm(" transpose_rhs", a, bt), DType::F32, {2, 2},
                      {19, 22, 43, 50}));
  EXPECT_TRUE(matches(mm(" transpose_lhs transpose_rhs", at, bt), DType::F32,
                      {2, 2}, {19, 22, 43, 50}));
  // Batched, with a non-square product: [2, 1, 2] x [2, 2, 3].
  EXPECT_TRUE(matches(
      run1(fn("%a: tensor<2x1x2xf64>, %b: tensor<2x2x3xf64>",
              "genesis.matmul %a, %b : tensor<2x1x2xf64>, tensor<2x2x3xf64>",
              "tensor<2x1x3xf64>"),
           {f64({2, 1, 2}, {1, 1, 2, -1}),
            f64({2, 2, 3}, {1, 2, 3, 4, 5, 6, 1, 0, 1, 0, 1, 0})}),
      DType::F64, {2, 1, 3}, {5, 7, 9, 2, -1, 2}));
}

TEST_F(EvaluatorTest, SoftmaxAndLogSoftmax) {
  const std::string t = "tensor<2x2xf64>";
  // Rows [0, ln 3] and [1000, 1000 + ln 3] (stability).
  HostArray x = f64({2, 2}, {0.0, kLn3, 1000.0, 1000.0 + kLn3});
  EXPECT_TRUE(
      matches(run1(fn("%a: " + t, "genesis.softmax %a dim 1 : " + t, t), {x}),
              DType::F64, {2, 2}, {0.25, 0.75, 0.25, 0.75}, 1e-13));
  EXPECT_TRUE(matches(
      run1(fn("%a: " + t, "genesis.log_softmax %a dim 1 : " + t, t), {x}),
      DType::F64, {2, 2},
      {std::log(0.25), std::log(0.75), std::log(0.25), std::log(0.75)}, 1e-13));
  // Along dim 0: columns [0, 0] and [ln 3, ln 3] are uniform.
  HostArray y = f64({2, 2}, {0.0, kLn3, 0.0, kLn3});
  EXPECT_TRUE(
      matches(run1(fn("%a: " + t, "genesis.softmax %a dim 0 : " + t, t), {y}),
              DType::F64, {2, 2}, {0.5, 0.5, 0.5, 0.5}, 1e-15));
}

TEST_F(EvaluatorTest, LayerNormAndRmsNorm) {
  const std::string t = "tensor<2x2xf64>", v = "tensor<2xf64>";
  // Rows [1, 3] (mean 2, var 1) and [5, 5] (var 0).
  HostArray x = f64({2, 2}, {1, 3, 5, 5});
  EXPECT_TRUE(matches(
      run1(fn("%a: " + t, "genesis.layer_norm %a eps 0.0 : " + t, t), {x}),
      DType::F64, {2, 2}, {-1, 1, kNaN, kNaN}));
  HostArray one = f64({1, 2}, {1, 3});
  EXPECT_TRUE(
      matches(run1(fn("%a: tensor<1x2xf64>, %w: " + v + ", %b: " + v,
                      "genesis.layer_norm %a weight %w : " + v +
                          " bias %b : " + v + " eps 0.0 : tensor<1x2xf64>",
                      "tensor<1x2xf64>"),
                   {one, f64({2}, {2, 3}), f64({2}, {1, 1})}),
              DType::F64, {1, 2}, {-1, 4}));
  // eps = 3: (x - 2) / sqrt(1 + 3) = [-0.5, 0.5].
  EXPECT_TRUE(matches(run1(fn("%a: tensor<1x2xf64>, %b: " + v,
                              "genesis.layer_norm %a bias %b : " + v +
                                  " eps 3.0 : tensor<1x2xf64>",
                              "tensor<1x2xf64>"),
                           {one, f64({2}, {10, 20})}),
                      DType::F64, {1, 2}, {9.5, 20.5}));
  // rms([2, -2]) = 2.
  EXPECT_TRUE(
      matches(run1(fn("%a: tensor<1x2xf64>, %w: " + v,
                      "genesis.rms_norm %a, %w eps 0.0 : tensor<1x2xf64>, " + v,
                      "tensor<1x2xf64>"),
                   {f64({1, 2}, {2, -2}), f64({2}, {1, 3})}),
              DType::F64, {1, 2}, {1, -3}));
}

TEST_F(EvaluatorTest, Rope) {
  // D = 4: rotate_half([1, 2, 3, 4]) = [-3, -4, 1, 2].
  std::string ir =
      fn("%a: tensor<2x1x4xf32>, %c: tensor<1x4xf32>, %s: tensor<1x4xf32>",
         "genesis.rope %a, %c, %s : (tensor<2x1x4xf32>, tensor<1x4xf32>, "
         "tensor<1x4xf32>) -> tensor<2x1x4xf32>",
         "tensor<2x1x4xf32>");
  HostArray x = f32({2, 1, 4}, {1, 2, 3, 4, 1, 1, 1, 1});
  EXPECT_TRUE(matches(run1(ir, {x, f32({1, 4}, {0.5, 0.5, 0.5, 0.5}),
                                f32({1, 4}, {1, 1, 1, 1})}),
                      DType::F32, {2, 1, 4},
                      {-2.5, -3, 2.5, 4, -0.5, -0.5, 1.5, 1.5}));
  EXPECT_TRUE(matches(
      run1(ir, {x, f32({1, 4}, {1, 1, 1, 1}), f32({1, 4}, {0, 0, 0, 0})}),
      DType::F32, {2, 1, 4}, {1, 2, 3, 4, 1, 1, 1, 1}));
}

TEST_F(EvaluatorTest, Attention) {
  // B = 1, H = 1, S = T = 2, D = Dv = 1; q = 0 gives uniform weights.
  auto attention = [&](const std::string &attrs, const HostArray &q,
                       const HostArray &k, const HostArray &v) {
    std::string t = "tensor<1x1x2x1xf64>";
    return run1(fn("%q: " + t + ", %k: " + t + ", %v: " + t,
                   "genesis.attention %q, %k, %v" + attrs + " : (" + t + ", " +
                       t + ", " + t + ") -> " + t,
                   t),
                {q, k, v});
  };
  HostArray zeros = f64({1, 1, 2, 1}, {0, 0}), keys = f64({1, 1, 2, 1}, {0, 1});
  HostArray values = f64({1, 1, 2, 1}, {2, 4});
  EXPECT_TRUE(matches(attention(" scale 1.0", zeros, keys, values), DType::F64,
                      {1, 1, 2, 1}, {3, 3}));
  // Causal: query 0 sees key 0 only.
  EXPECT_TRUE(matches(attention(" causal scale 1.0", zeros, keys, values),
                      DType::F64, {1, 1, 2, 1}, {2, 3}));
  // Scores [0, ln 3] weight the values 0.25 / 0.75: 0.5 + 3 = 3.5.
  HostArray q = f64({1, 1, 2, 1}, {kLn3, 2 * kLn3});
  EXPECT_TRUE(matches(attention(" scale 1.0", q, keys, values), DType::F64,
                      {1, 1, 2, 1}, {3.5, (2 + 4 * 9.0) / 10}, 1e-14));
  EXPECT_TRUE(matches(
      attention(" scale 0.5", f64({1, 1, 2, 1}, {2 * kLn3, 0}), keys, values),
      DType::F64, {1, 1, 2, 1}, {3.5, 3}, 1e-14));
}

TEST_F(EvaluatorTest, AttentionGroupedQueryAndCausalAlignment) {
  // Hq = 2, Hkv = 1: both query heads read kv head 0. S = 1, T = 3 causal:
  // the single query (a decoding step) sees all three keys.
  std::string ir = fn(
      "%q: tensor<1x2x1x1xf32>, %k: tensor<1x1x3x1xf32>, %v: "
      "tensor<1x1x3x1xf32>",
      "genesis.attention %q, %k, %v causal scale 1.0 : (tensor<1x2x1x1xf32>, "
      "tensor<1x1x3x1xf32>, tensor<1x1x3x1xf32>) -> tensor<1x2x1x1xf32>",
      "tensor<1x2x1x1xf32>");
  EXPECT_TRUE(
      matches(run1(ir, {f32({1, 2, 1, 1}, {0, 0}), f32({1, 1, 3, 1}, {1, 2, 3}),
                        f32({1, 1, 3, 1}, {3, 6, 9})}),
              DType::F32, {1, 2, 1, 1}, {6, 6}));
  // S = 3, T = 2 causal: query i sees keys j <= i - 1, so query 0 sees none
  // (zeros), query 1 sees key 0, query 2 sees both.
  std::string late = fn(
      "%q: tensor<1x1x3x1xf32>, %k: tensor<1x1x2x1xf32>, %v: "
      "tensor<1x1x2x1xf32>",
      "genesis.attention %q, %k, %v causal scale 1.0 : (tensor<1x1x3x1xf32>, "
      "tensor<1x1x2x1xf32>, tensor<1x1x2x1xf32>) -> tensor<1x1x3x1xf32>",
      "tensor<1x1x3x1xf32>");
  EXPECT_TRUE(matches(
      run1(late, {f32({1, 1, 3, 1}, {0, 0, 0}), f32({1, 1, 2, 1}, {1, 2}),
                  f32({1, 1, 2, 1}, {2, 4})}),
      DType::F32, {1, 1, 3, 1}, {0, 2, 3}));
}

TEST_F(EvaluatorTest, AttentionWithAllKeysMaskedGivesZeros) {
  std::string ir = maskedAttention();
  // Row 0: every key masked -> 0. Row 1: additive mask [0, ln 3] -> 0.25/0.75.
  HostArray mask = f32({1, 1, 2, 2}, {-kInf, -kInf, 0, kLn3});
  EXPECT_TRUE(
      matches(run1(ir, {f32({1, 1, 2, 1}, {1, 0}), f32({1, 1, 2, 1}, {0, 0}),
                        f32({1, 1, 2, 1}, {2, 4}), mask}),
              DType::F32, {1, 1, 2, 1}, {0, 3.5}, 1e-6));
}

TEST_F(EvaluatorTest, AttentionOfNaNScoresIsNaN) {
  // A NaN score is not a hidden key: the row is NaN (as in PyTorch), the
  // row whose every key is hidden still 0.
  std::string ir = maskedAttention();
  HostArray mask = f32({1, 1, 2, 2}, {-kInf, -kInf, NAN, 0});
  HostArray out =
      run1(ir, {f32({1, 1, 2, 1}, {1, 0}), f32({1, 1, 2, 1}, {0, 0}),
                f32({1, 1, 2, 1}, {2, 4}), mask});
  EXPECT_EQ(out.getDouble(0), 0.0);
  EXPECT_TRUE(std::isnan(out.getDouble(1)));
}

TEST_F(EvaluatorTest, FusedAttentionSavesEachRowsLogSumExp) {
  // S = 3, T = 2 causal (aligned to the last key): query 0 sees no key
  // (output 0, log-sum-exp -inf), query 1 key 0, query 2 both.
  std::string q = "tensor<1x1x3x1xbf16>", kv = "tensor<1x1x2x1xbf16>",
              lse = "tensor<1x1x3xf32>";
  std::string ir = "func.func @f(%q: " + q + ", %k: " + kv + ", %v: " + kv +
                   ") -> (" + q + ", " + lse +
                   ") {\n  %o, %l = genesis.fused_attention %q, %k, %v causal "
                   "scale 1.0 : (" +
                   q + ", " + kv + ", " + kv + ") -> (" + q + ", " + lse +
                   ")\n  return %o, %l : " + q + ", " + lse + "\n}\n";
  std::vector<HostArray> results =
      run(ir, {bf16({1, 1, 3, 1}, {0, 0, 0}), bf16({1, 1, 2, 1}, {1, 2}),
               bf16({1, 1, 2, 1}, {2, 4})});
  ASSERT_EQ(results.size(), 2u);
  EXPECT_TRUE(matches(results[0], DType::BF16, {1, 1, 3, 1}, {0, 2, 3}));
  EXPECT_TRUE(matches(results[1], DType::F32, {1, 1, 3},
                      {-kInf, 0, std::log(2.0)}, 1e-7));
}

TEST_F(EvaluatorTest, FusedAttentionGradIsAttentionGrad) {
  // GQA (Hq = 2, Hkv = 1), S = T = 3 causal, on random 16-bit inputs: the
  // fused gradient is the exact attention gradient whatever `out` and
  // `logsumexp` hold (the evaluator recomputes the probabilities).
  std::string q = "tensor<1x2x3x4xbf16>", kv = "tensor<1x1x3x4xbf16>",
              lse = "tensor<1x2x3xf32>";
  std::string types = "(" + q + ", " + kv + ", " + kv + ")";
  std::string fused =
      "func.func @f(%q: " + q + ", %k: " + kv + ", %v: " + kv + ", %g: " + q +
      ", %o: " + q + ", %l: " + lse + ") -> " + types +
      " {\n  %d:3 = genesis.fused_attention_grad %q, %k, %v, %o, %g, %l "
      "causal scale 0.5 : (" +
      q + ", " + kv + ", " + kv + ", " + q + ", " + q + ", " + lse + ") -> " +
      types + "\n  return %d#0, %d#1, %d#2 : " + q + ", " + kv + ", " + kv +
      "\n}\n";
  std::string plain =
      "func.func @f(%q: " + q + ", %k: " + kv + ", %v: " + kv + ", %g: " + q +
      ") -> " + types +
      " {\n  %o = genesis.attention %q, %k, %v causal scale 0.5 : " + types +
      " -> " + q +
      "\n  %d:3 = genesis.attention_grad %q, %k, %v, %o, %g causal scale "
      "0.5 : (" +
      q + ", " + kv + ", " + kv + ", " + q + ", " + q + ") -> " + types +
      "\n  return %d#0, %d#1, %d#2 : " + q + ", " + kv + ", " + kv + "\n}\n";
  auto random = [](DType dtype, Shape shape, uint64_t seed) {
    HostArray array(dtype, std::move(shape));
    Generator generator(seed);
    for (int64_t i = 0; i < array.numel(); ++i)
      array.setDouble(i, 4 * generator.uniform() - 2);
    return array;
  };
  HostArray qs = random(DType::BF16, {1, 2, 3, 4}, 11);
  HostArray ks = random(DType::BF16, {1, 1, 3, 4}, 12);
  HostArray vs = random(DType::BF16, {1, 1, 3, 4}, 13);
  HostArray gs = random(DType::BF16, {1, 2, 3, 4}, 14);
  std::vector<HostArray> want = run(plain, {qs, ks, vs, gs});
  std::vector<HostArray> got =
      run(fused, {qs, ks, vs, gs, random(DType::BF16, {1, 2, 3, 4}, 15),
                  random(DType::F32, {1, 2, 3}, 16)});
  ASSERT_EQ(got.size(), 3u);
  for (size_t r = 0; r < 3; ++r) {
    ASSERT_EQ(got[r].shape(), want[r].shape());
    for (int64_t i = 0; i < want[r].numel(); ++i)
      EXPECT_EQ(got[r].getDouble(i), want[r].getDouble(i)) << r << " " << i;
  }
}

TEST_F(EvaluatorTest, PackedAttentionIsFusedAttentionOfTheRowsParts) {
  // GQA (Hq = 2, Hkv = 1, D = 4), S = 3 causal, on random bf16 rows
  // [B, S, (Hq + 2 Hkv) D]: the packed ops equal the fused ones applied to
  // the sliced, head-major q, k and v (what genesis-pack-attention
  // replaces), result and gradient made token-major again, to the bit.
  const std::string p = "tensor<1x3x16xbf16>", t = "tensor<1x3x8xbf16>",
                    lse = "tensor<1x2x3xf32>", q = "tensor<1x2x3x4xbf16>",
                    kv = "tensor<1x1x3x4xbf16>";
  const std::string signature = "func.func @f(%p: " + p + ", %g: " + t +
                                ") -> (" + t + ", " + lse + ", " + p + ") {\n";
  const std::string ret =
      "  return %o3, %l, %d3 : " + t + ", " + lse + ", " + p + "\n}\n";
  std::string unpacked =
      signature +
      "  %qs = genesis.slice %p start [0, 0, 0] limit [1, 3, 8] stride [1, 1, "
      "1] : " +
      p +
      "\n  %ks = genesis.slice %p start [0, 0, 8] limit [1, 3, 12] stride [1, "
      "1, 1] : " +
      p +
      "\n  %vs = genesis.slice %p start [0, 0, 12] limit [1, 3, 16] stride "
      "[1, 1, 1] : " +
      p +
      "\n  %q4 = genesis.reshape %qs : tensor<1x3x8xbf16> -> "
      "tensor<1x3x2x4xbf16>\n"
      "  %k4 = genesis.reshape %ks : tensor<1x3x4xbf16> -> "
      "tensor<1x3x1x4xbf16>\n"
      "  %v4 = genesis.reshape %vs : tensor<1x3x4xbf16> -> "
      "tensor<1x3x1x4xbf16>\n"
      "  %q = genesis.transpose %q4, [0, 2, 1, 3] : tensor<1x3x2x4xbf16>\n"
      "  %k = genesis.transpose %k4, [0, 2, 1, 3] : tensor<1x3x1x4xbf16>\n"
      "  %v = genesis.transpose %v4, [0, 2, 1, 3] : tensor<1x3x1x4xbf16>\n"
      "  %o, %l = genesis.fused_attention %q, %k, %v causal scale 0.5 : (" +
      q + ", " + kv + ", " + kv + ") -> (" + q + ", " + lse +
      ")\n"
      "  %ot = genesis.transpose %o, [0, 2, 1, 3] : " +
      q + "\n  %o3 = genesis.reshape %ot : tensor<1x3x2x4xbf16> -> " + t +
      "\n  %g4 = genesis.reshape %g : " + t +
      " -> tensor<1x3x2x4xbf16>\n"
      "  %gt = genesis.transpose %g4, [0, 2, 1, 3] : tensor<1x3x2x4xbf16>\n"
      "  %d:3 = genesis.fused_attention_grad %q, %k, %v, %o, %gt, %l causal "
      "scale 0.5 : (" +
      q + ", " + kv + ", " + kv + ", " + q + ", " + q + ", " + lse + ") -> (" +
      q + ", " + kv + ", " + kv +
      ")\n"
      "  %dqt = genesis.transpose %d#0, [0, 2, 1, 3] : " +
      q + "\n  %dkt = genesis.transpose %d#1, [0, 2, 1, 3] : " + kv +
      "\n  %dvt = genesis.transpose %d#2, [0, 2, 1, 3] : " + kv +
      "\n  %dq3 = genesis.reshape %dqt : tensor<1x3x2x4xbf16> -> " + t +
      "\n  %dk3 = genesis.reshape %dkt : tensor<1x3x1x4xbf16> -> "
      "tensor<1x3x4xbf16>\n"
      "  %dv3 = genesis.reshape %dvt : tensor<1x3x1x4xbf16> -> "
      "tensor<1x3x4xbf16>\n"
      "  %d3 = genesis.concat %dq3, %dk3, %dv3 dim 2 : " +
      t + ", tensor<1x3x4xbf16>, tensor<1x3x4xbf16>\n" + ret;
  std::string packed =
      signature +
      "  %o3, %l = genesis.packed_attention %p heads 2 kv_heads 1 causal "
      "scale 0.5 : (" +
      p + ") -> (" + t + ", " + lse +
      ")\n"
      "  %d3 = genesis.packed_attention_grad %p, %o3, %g, %l heads 2 "
      "kv_heads 1 causal scale 0.5 : (" +
      p + ", " + t + ", " + t + ", " + lse + ") -> " + p + "\n" + ret;
  auto random = [](Shape shape, uint64_t seed) {
    HostArray array(DType::BF16, std::move(shape));
    Generator generator(seed);
    for (int64_t i = 0; i < array.numel(); ++i)
      array.setDouble(i, 4 * generator.uniform() - 2);
    return array;
  };
  HostArray rows = random({1, 3, 16}, 21), outGrad = random({1, 3, 8}, 22);
  std::vector<HostArray> want = run(unpacked, {rows, outGrad});
  std::vector<HostArray> got = run(packed, {rows, outGrad});
  ASSERT_EQ(got.size(), 3u);
  for (size_t r = 0; r < 3; ++r) {
    ASSERT_EQ(got[r].shape(), want[r].shape());
    ASSERT_EQ(got[r].dtype(), want[r].dtype());
    for (int64_t i = 0; i < want[r].numel(); ++i)
      EXPECT_EQ(got[r].getDouble(i), want[r].getDouble(i)) << r << " " << i;
  }
}

TEST_F(EvaluatorTest, CrossEntropy) {
  const std::string lt = "tensor<3x2xf64>", yt = "tensor<3xi64>";
  HostArray logits = f64({3, 2}, {0, kLn3, 0, kLn3, 5, 7});
  HostArray labels = i64({3}, {1, 0, -100});
  auto ce = [&](const std::string &attrs, const std::string &result,
                const HostArray &y) {
    return run1(fn("%x: " + lt + ", %y: " + yt,
                   "genesis.cross_entropy %x, %y " + attrs + " : (" + lt +
                       ", " + yt + ") -> " + result,
                   result),
                {logits, y});
  };
  const double l1 = -std::log(0.75), l0 = -std::log(0.25);
  EXPECT_TRUE(matches(ce("{reduction = 0 : i32}", "tensor<3xf64>", labels),
                      DType::F64, {3}, {l1, l0, 0.0}, 1e-15));
  EXPECT_TRUE(matches(ce("{reduction = 2 : i32}", "tensor<f64>", labels),
                      DType::F64, {}, {l0 + l1}, 1e-15));
  EXPECT_TRUE(matches(ce("", "tensor<f64>", labels), DType::F64, {},
                      {(l0 + l1) / 2}, 1e-15));
  // Label smoothing 0.5: 0.5 * nll + 0.5 * mean_c(-log p_c).
  EXPECT_TRUE(matches(
      ce("{label_smoothing = 0.5 : f64, reduction = 0 : i32}", "tensor<3xf64>",
         labels),
      DType::F64, {3},
      {0.5 * l1 + 0.25 * (l0 + l1), 0.5 * l0 + 0.25 * (l0 + l1), 0.0}, 1e-15));
  // A custom ignore_index.
  EXPECT_TRUE(matches(
      ce("{ignore_index = 0 : i64}", "tensor<f64>", i64({3}, {1, 0, 0})),
      DType::F64, {}, {l1}, 1e-15));
}

TEST_F(EvaluatorTest, CrossEntropyAllIgnoredMeanIsNaN) {
  std::string ir =
      fn("%x: tensor<2x2xf32>, %y: tensor<2xi64>",
         "genesis.cross_entropy %x, %y : (tensor<2x2xf32>, tensor<2xi64>) -> "
         "tensor<f32>",
         "tensor<f32>");
  EXPECT_TRUE(
      matches(run1(ir, {f32({2, 2}, {1, 2, 3, 4}), i64({2}, {-100, -100})}),
              DType::F32, {}, {kNaN}));
  std::string sum = fn("%x: tensor<2x2xf32>, %y: tensor<2xi64>",
                       "genesis.cross_entropy %x, %y {reduction = 2 : i32} : "
                       "(tensor<2x2xf32>, tensor<2xi64>) -> tensor<f32>",
                       "tensor<f32>");
  EXPECT_TRUE(
      matches(run1(sum, {f32({2, 2}, {1, 2, 3, 4}), i64({2}, {-100, -100})}),
              DType::F32, {}, {0.0}));
}

TEST_F(EvaluatorTest, CrossEntropyOutOfRangeLabelIsAnError) {
  std::string ir =
      R"(func.func @f(%x: tensor<2x2xf32>, %y: tensor<2xi32>) -> tensor<f32> {
  %l = genesis.cross_entropy %x, %y : (tensor<2x2xf32>, tensor<2xi32>) -> tensor<f32>
  return %l : tensor<f32>
})";
  HostArray logits = f32({2, 2}, {1, 2, 3, 4});
  std::string message = errorFrom([&] { run(ir, {logits, i32({2}, {1, 7})}); });
  EXPECT_TRUE(contains(message, "test.mlir:2:8"));
  EXPECT_TRUE(contains(message, "'genesis.cross_entropy'"));
  EXPECT_TRUE(contains(message, "label 7 of row 1"));
  EXPECT_TRUE(contains(message, "[0, 2)"));
  message = errorFrom([&] { run(ir, {logits, i32({2}, {-1, 0})}); });
  EXPECT_TRUE(contains(message, "label -1 of row 0"));
}

TEST_F(EvaluatorTest, CrossEntropyWithGradIsTheLossAndTheGradient) {
  // Random bf16 logits with label smoothing, an ignored row and random
  // per-row cotangents: the fused op's two results equal the per-row loss
  // and gradient ops', to the bit.
  const std::string x = "tensor<3x6xbf16>", y = "tensor<3xi64>",
                    w = "tensor<3xf32>";
  const std::string args = "%x: " + x + ", %y: " + y + ", %w: " + w;
  const std::string attrs =
      "{ignore_index = 2 : i64, label_smoothing = 0.1 : f64";
  std::string apart = "func.func @f(" + args + ") -> (" + w + ", " + x +
                      ") {\n  %l = genesis.cross_entropy %x, %y " + attrs +
                      ", reduction = 0 : i32} : (" + x + ", " + y + ") -> " +
                      w + "\n  %g = genesis.cross_entropy_grad %x, %y, %w " +
                      attrs + ", reduction = 0 : i32} : (" + x + ", " + y +
                      ", " + w + ") -> " + x + "\n  return %l, %g : " + w +
                      ", " + x + "\n}\n";
  std::string fused = "func.func @f(" + args + ") -> (" + w + ", " + x +
                      ") {\n  %r:2 = genesis.cross_entropy_with_grad %x, %y, "
                      "%w " +
                      attrs + "} : (" + x + ", " + y + ", " + w + ") -> (" + w +
                      ", " + x + ")\n  return %r#0, %r#1 : " + w + ", " + x +
                      "\n}\n";
  HostArray logits(DType::BF16, {3, 6}), weights(DType::F32, {3});
  Generator generator(31);
  for (int64_t i = 0; i < logits.numel(); ++i)
    logits.setDouble(i, 8 * generator.uniform() - 4);
  for (int64_t i = 0; i < weights.numel(); ++i)
    weights.setDouble(i, generator.uniform());
  HostArray labels = i64({3}, {5, 2, 0});
  std::vector<HostArray> want = run(apart, {logits, labels, weights});
  std::vector<HostArray> got = run(fused, {logits, labels, weights});
  ASSERT_EQ(got.size(), 2u);
  for (size_t r = 0; r < 2; ++r) {
    ASSERT_EQ(got[r].shape(), want[r].shape());
    ASSERT_EQ(got[r].dtype(), want[r].dtype());
    for (int64_t i = 0; i < want[r].numel(); ++i)
      EXPECT_EQ(got[r].getDouble(i), want[r].getDouble(i)) << r << " " << i;
  }
  EXPECT_EQ(got[0].getDouble(1), 0.0); // the ignored row
}

TEST_F(EvaluatorTest, DropoutIsDeterministic) {
  std::string ir =
      R"(func.func @f(%x: tensor<64xf32>, %s: tensor<i64>) -> (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) {
  %0 = genesis.dropout %x, %s {probability = 0.5, offset = 0 : i64} : (tensor<64xf32>, tensor<i64>) -> tensor<64xf32>
  %1 = genesis.dropout %x, %s {probability = 0.5, offset = 0 : i64} : (tensor<64xf32>, tensor<i64>) -> tensor<64xf32>
  %2 = genesis.dropout %x, %s {probability = 0.5, offset = 64 : i64} : (tensor<64xf32>, tensor<i64>) -> tensor<64xf32>
  return %0, %1, %2 : tensor<64xf32>, tensor<64xf32>, tensor<64xf32>
})";
  Values ones(64, 1.0);
  HostArray x = f32({64}, ones);
  auto first = run(ir, {x, scalarI64(1234)});
  auto again = run(ir, {x, scalarI64(1234)});
  auto otherSeed = run(ir, {x, scalarI64(1235)});
  auto mask = [](const HostArray &a) {
    std::vector<bool> kept;
    for (int64_t i = 0; i < a.numel(); ++i) {
      double v = a.getDouble(i);
      EXPECT_TRUE(v == 0.0 || v == 2.0) << "kept elements are x / (1 - p)";
      kept.push_back(v != 0.0);
    }
    return kept;
  };
  EXPECT_EQ(mask(first[0]), mask(first[1])) << "same seed and offset";
  EXPECT_EQ(mask(first[0]), mask(again[0])) << "same seed, another run";
  EXPECT_NE(mask(first[0]), mask(first[2])) << "another offset";
  EXPECT_NE(mask(first[0]), mask(otherSeed[0])) << "another seed";
  // The mask is the Philox one: element i is kept when u(seed, offset + i) >=
  // p.
  for (int64_t i = 0; i < 64; ++i) {
    EXPECT_EQ(first[0].getDouble(i) != 0.0, philoxUniform(1234, i) >= 0.5) << i;
    EXPECT_EQ(first[2].getDouble(i) != 0.0, philoxUniform(1234, 64 + i) >= 0.5)
        << i;
  }
  // Philox-4x32-10 known answer (Random123): key 0, counter 0.
  auto words = philox4x32(0, 0);
  EXPECT_EQ(words[0], 0x6627e8d5u);
  EXPECT_EQ(words[1], 0xe169c58du);
  EXPECT_EQ(words[2], 0xbc57ac4cu);
  EXPECT_EQ(words[3], 0x9b00dbd8u);
  // Probability 0 keeps everything unchanged.
  std::string keep =
      fn("%x: tensor<3xf32>, %s: tensor<i64>",
         "genesis.dropout %x, %s {probability = 0.0, offset = 5 : i64} : "
         "(tensor<3xf32>, tensor<i64>) -> tensor<3xf32>",
         "tensor<3xf32>");
  EXPECT_TRUE(matches(run1(keep, {f32({3}, {1.5, -2, 3}), scalarI64(9)}),
                      DType::F32, {3}, {1.5, -2, 3}));
}

//===----------------------------------------------------------------------===//
// Optimizer ops
//===----------------------------------------------------------------------===//

TEST_F(EvaluatorTest, SgdUpdate) {
  std::string ir = fn(
      "%p: tensor<2xf32>, %g: tensor<2xf32>, %lr: tensor<f32>",
      "genesis.sgd_update %p, %g, %lr {weight_decay = 0.5} : (tensor<2xf32>, "
      "tensor<2xf32>, tensor<f32>) -> tensor<2xf32>",
      "tensor<2xf32>");
  // g = [2, -1] + 0.5 * [1, 2] = [2.5, 0]; p - 0.5 * g.
  EXPECT_TRUE(
      matches(run1(ir, {f32({2}, {1, 2}), f32({2}, {2, -1}), scalarF32(0.5)}),
              DType::F32, {2}, {-0.25, 2}));
}

TEST_F(EvaluatorTest, SgdMomentumFirstStepSetsBufferToGradient) {
  auto momentum = [&](const std::string &attrs, int64_t step,
                      const HostArray &buffer) {
    std::string t = "tensor<2xf64>";
    std::string ir =
        "func.func @f(%p: " + t + ", %g: " + t + ", %b: " + t +
        ", %lr: tensor<f32>, %s: tensor<i64>) -> (" + t + ", " + t +
        ") {\n  %r:2 = genesis.sgd_momentum_update %p, %g, %b, %lr, %s {" +
        attrs + "} : (" + t + ", " + t + ", " + t +
        ", tensor<f32>, tensor<i64>) -> (" + t + ", " + t +
        ")\n  return %r#0, %r#1 : " + t + ", " + t + "\n}\n";
    // param [1, 2], grad [0.5, -1], lr 0.25.
    return run(ir, {f64({2}, {1, 2}), f64({2}, {0.5, -1}), buffer,
                    scalarF32(0.25), scalarI64(step)});
  };
  HostArray stale = f64({2}, {100, 100});
  // Step 1: buf = g whatever the given buffer holds; p - 0.25 * buf.
  auto first = momentum("momentum = 0.9", 1, stale);
  EXPECT_TRUE(matches(first[0], DType::F64, {2}, {0.875, 2.25}));
  EXPECT_TRUE(matches(first[1], DType::F64, {2}, {0.5, -1}));
  // Step 2 with dampening 0.5: buf = 0.9 * [1, 2] + 0.5 * g.
  auto second =
      momentum("momentum = 0.9, dampening = 0.5", 2, f64({2}, {1, 2}));
  EXPECT_TRUE(matches(second[1], DType::F64, {2}, {1.15, 1.3}, 1e-15));
  EXPECT_TRUE(matches(second[0], DType::F64, {2},
                      {1 - 0.25 * 1.15, 2 - 0.25 * 1.3}, 1e-15));
  // Nesterov, step 1: d = g + 0.9 * g.
  auto nesterov = momentum("momentum = 0.9, nesterov", 1, stale);
  EXPECT_TRUE(matches(nesterov[1], DType::F64, {2}, {0.5, -1}));
  EXPECT_TRUE(matches(nesterov[0], DType::F64, {2},
                      {1 - 0.25 * 0.95, 2 + 0.25 * 1.9}, 1e-15));
}

TEST_F(EvaluatorTest, AdamAndAdamW) {
  auto adam = [&](const std::string &op, const std::string &attrs) {
    std::string t = "tensor<2xf64>";
    std::string ir =
        "func.func @f(%p: " + t + ", %g: " + t + ", %m: " + t + ", %v: " + t +
        ", %lr: tensor<f32>, %s: tensor<i64>) -> (" + t + ", " + t + ", " + t +
        ") {\n  %r:3 = genesis." + op + " %p, %g, %m, %v, %lr, %s {" + attrs +
        "} : (" + t + ", " + t + ", " + t + ", " + t +
        ", tensor<f32>, tensor<i64>) -> (" + t + ", " + t + ", " + t +
        ")\n  return %r#0, %r#1, %r#2 : " + t + ", " + t + ", " + t + "\n}\n";
    return run(ir, {f64({2}, {1, 1}), f64({2}, {2, -3}), f64({2}, {0, 0}),
                    f64({2}, {0, 0}), scalarF32(0.25), scalarI64(1)});
  };
  // Step 1 with epsilon 0: the bias-corrected step is lr * sign(g).
  auto plain = adam("adam_update", "epsilon = 0.0");
  EXPECT_TRUE(matches(plain[0], DType::F64, {2}, {0.75, 1.25}, 1e-15));
  EXPECT_TRUE(matches(plain[1], DType::F64, {2}, {0.2, -0.3}, 1e-15));
  EXPECT_TRUE(matches(plain[2], DType::F64, {2}, {0.004, 0.009}, 1e-15));
  // Adam's L2 decay: g = [2, -3] + 0.5 * [1, 1] = [2.5, -2.5].
  auto l2 = adam("adam_update", "epsilon = 0.0, weight_decay = 0.5");
  EXPECT_TRUE(matches(l2[0], DType::F64, {2}, {0.75, 1.25}, 1e-15));
  EXPECT_TRUE(matches(l2[1], DType::F64, {2}, {0.25, -0.25}, 1e-15));
  // AdamW: p = 1 * (1 - 0.25 * 0.5) = 0.875 first, the moments see g alone.
  auto decoupled = adam("adamw_update", "epsilon = 0.0, weight_decay = 0.5");
  EXPECT_TRUE(matches(decoupled[0], DType::F64, {2}, {0.625, 1.125}, 1e-15));
  EXPECT_TRUE(matches(decoupled[1], DType::F64, {2}, {0.2, -0.3}, 1e-15));
}

TEST_F(EvaluatorTest, GlobalNormAndAllReduce) {
  // An f64 input makes the norm f64; f32 otherwise.
  EXPECT_TRUE(matches(
      run1(fn("%a: tensor<1xf32>, %b: tensor<2xf64>",
              "genesis.global_norm %a, %b : tensor<1xf32>, tensor<2xf64>",
              "tensor<f64>"),
           {f32({1}, {3}), f64({2}, {4, 12})}),
      DType::F64, {}, {13}));
  EXPECT_TRUE(matches(
      run1(fn("%a: tensor<1xf32>, %b: tensor<2xf32>",
              "genesis.global_norm %a, %b : tensor<1xf32>, tensor<2xf32>",
              "tensor<f32>"),
           {f32({1}, {3}), f32({2}, {4, 12})}),
      DType::F32, {}, {13}));
  EXPECT_TRUE(matches(
      run1(fn("%a: tensor<2xf32>",
              "genesis.all_reduce mean, %a : tensor<2xf32>", "tensor<2xf32>"),
           {f32({2}, {1.5, -2})}),
      DType::F32, {2}, {1.5, -2}));
}

//===----------------------------------------------------------------------===//
// Structure: fusion, library_call, func.call, argument checking
//===----------------------------------------------------------------------===//

TEST_F(EvaluatorTest, FusionBodyIsEvaluated) {
  std::string ir =
      R"(func.func @f(%a: tensor<2xf32>, %b: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  %r:2 = genesis.fusion %a, %b : (tensor<2xf32>, tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  ^bb0(%x: tensor<2xf32>, %y: tensor<2xf32>):
    %s = genesis.add %x, %y : tensor<2xf32>
    %p = genesis.mul %s, %y : tensor<2xf32>
    genesis.yield %s, %p : tensor<2xf32>, tensor<2xf32>
  }
  %n = genesis.neg %r#1 : tensor<2xf32>
  return %r#0, %n : tensor<2xf32>, tensor<2xf32>
})";
  auto results = run(ir, {f32({2}, {1, 2}), f32({2}, {3, 4})});
  ASSERT_EQ(results.size(), 2u);
  EXPECT_TRUE(matches(results[0], DType::F32, {2}, {4, 6}));
  EXPECT_TRUE(matches(results[1], DType::F32, {2}, {-12, -24}));
}

TEST_F(EvaluatorTest, LibraryCallEpilogues) {
  const std::string lt = "tensor<1x2xf64>", rt = "tensor<2x2xf64>",
                    bt = "tensor<2xf64>";
  HostArray lhs = f64({1, 2}, {1, 2}),
            rhs = f64({2, 2}, {1, -1, 1, -1}); // [3, -3]
  HostArray bias = f64({2}, {1, 1});
  auto call = [&](const std::string &epilogue, bool withBias,
                  const std::string &attrs) {
    std::string args =
        "%a: " + lt + ", %b: " + rt + (withBias ? ", %c: " + bt : "");
    std::string types = lt + ", " + rt + (withBias ? ", " + bt : "");
    std::vector<HostArray> in = {lhs, rhs};
    if (withBias)
      in.push_back(bias);
    return run1(fn(args,
                   "genesis.library_call " + epilogue + " %a, %b" +
                       (withBias ? " bias %c" : "") + " " + attrs + " : (" +
                       types + ") -> tensor<1x2xf64>",
                   "tensor<1x2xf64>"),
                in);
  };
  EXPECT_TRUE(matches(call("none", false, ""), DType::F64, {1, 2}, {3, -3}));
  EXPECT_TRUE(matches(call("none", false, "{alpha = 0.5}"), DType::F64, {1, 2},
                      {1.5, -1.5}));
  EXPECT_TRUE(matches(call("bias", true, ""), DType::F64, {1, 2}, {4, -2}));
  EXPECT_TRUE(matches(call("relu", false, ""), DType::F64, {1, 2}, {3, 0}));
  EXPECT_TRUE(matches(call("bias_relu", true, ""), DType::F64, {1, 2}, {4, 0}));
  // gelu is the tanh approximation: gelu_tanh(1) = 0.8411919906082768 (the
  // erf form gives 0.8413447460685429), gelu_tanh(-1) = gelu_tanh(1) - 1.
  EXPECT_TRUE(matches(call("gelu", false, "{alpha = 0.3333333333333333}"),
                      DType::F64, {1, 2},
                      {0.8411919906082768, 0.8411919906082768 - 1.0}, 1e-15));
  EXPECT_TRUE(matches(call("bias_gelu", true, "{alpha = 0.0}"), DType::F64,
                      {1, 2}, {0.8411919906082768, 0.8411919906082768}, 1e-15));
  // The epilogue sees the unrounded GEMM result: in f16, alpha * 1 * 1 =
  // 1 + 2^-11 would round to 1 on its own, and 1 - 1 would give 0.
  std::string f16ir =
      fn("%a: tensor<1x1xf16>, %b: tensor<1x1xf16>, %c: tensor<1xf16>",
         "genesis.library_call bias %a, %b bias %c {alpha = 1.00048828125} : "
         "(tensor<1x1xf16>, tensor<1x1xf16>, tensor<1xf16>) -> tensor<1x1xf16>",
         "tensor<1x1xf16>");
  EXPECT_TRUE(
      matches(run1(f16ir, {f16({1, 1}, {1}), f16({1, 1}, {1}), f16({1}, {-1})}),
              DType::F16, {1, 1}, {std::ldexp(1.0, -11)}));
}

TEST_F(EvaluatorTest, FuncCallRunsTheCallee) {
  std::string ir = R"(func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = func.call @twice(%a) : (tensor<2xf32>) -> tensor<2xf32>
  %1 = func.call @twice(%0) : (tensor<2xf32>) -> tensor<2xf32>
  %2 = genesis.sub %1, %a : tensor<2xf32>
  return %2 : tensor<2xf32>
}
func.func private @twice(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = genesis.add %x, %x : tensor<2xf32>
  return %0 : tensor<2xf32>
})";
  EXPECT_TRUE(
      matches(run1(ir, {f32({2}, {1.5, -2})}), DType::F32, {2}, {4.5, -6}));
  // The callee can be evaluated on its own, too.
  EXPECT_TRUE(matches(run(ir, {f32({2}, {1.5, -2})}, "twice").at(0), DType::F32,
                      {2}, {3, -4}));
}

TEST_F(EvaluatorTest, ArgumentMismatchesNameTheArgument) {
  std::string ir =
      R"(func.func @f(%a: tensor<2xf32>, %b: tensor<3xf32> {genesis.name = "bias"}) -> tensor<2xf32> {
  return %a : tensor<2xf32>
})";
  std::string message = errorFrom([&] { run(ir, {f32({2}, {1, 2})}); });
  EXPECT_TRUE(contains(message, "@f takes 2 arguments, got 1"));
  message = errorFrom([&] { run(ir, {f32({2}, {1, 2}), f32({2}, {1, 2})}); });
  EXPECT_TRUE(
      contains(message, "@f argument #1 'bias' expects f32[3], got f32[2]"));
  message = errorFrom([&] {
    run(ir, {i64({2}, {1, 2}), f32({3}, {1, 2, 3})});
  });
  EXPECT_TRUE(contains(message, "@f argument #0 expects f32[2], got i64[2]"));
  message = errorFrom([&] {
    run(ir, {f32({1, 2}, {1, 2}), f32({3}, {1, 2, 3})});
  });
  EXPECT_TRUE(contains(message, "argument #0 expects f32[2], got f32[1, 2]"));
}

} // namespace
