//===- AutodiffTest.cpp - Gradient checks of genesis-autodiff -------------===//
//
// Every differentiable op and loss, and whole models, in f64 on the reference
// evaluator: the gradient built by genesis-autodiff against central finite
// differences, on fresh random inputs. Tolerance: |analytic - numeric| <=
// 1e-6 * max(1, |numeric|). With h = 1e-6 * max(1, |x|) the central
// difference has truncation error ~h^2 f''' and rounding error ~1e-16/h, both
// far below 1e-6, so a larger error is a wrong VJP, not noise.
//
//===----------------------------------------------------------------------===//

#include "dialect/Evaluator/Evaluator.h"
#include "dialect/IR/GenesisOps.h"
#include "frontend/Grad.h"
#include "frontend/nn/Layers.h"
#include "models/gpt2/Gpt2.h"
#include "models/mlp/Mlp.h"
#include "passes/Passes.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "mlir/Parser/Parser.h"

#include <chrono>
#include <cmath>
#include <functional>
#include <numeric>

using namespace genesis;
using ::testing::HasSubstr;

namespace {

HostArray random(Shape shape, uint64_t seed, double low = -1.0,
                 double high = 1.0) {
  HostArray array(DType::F64, std::move(shape));
  Generator(seed).fill_uniform(array, low, high);
  return array;
}

HostArray ids(Shape shape, std::vector<int64_t> values) {
  return HostArray::fromValues<int64_t>(DType::I64, std::move(shape), values);
}

struct Input {
  std::string name;
  HostArray value;
  bool differentiate = true;
};

using Body = std::function<Tensor(Trace &, std::vector<Tensor> &)>;

/// Largest error of `grads[n]`, the analytic gradient of argument
/// `differentiated[n]`, against central differences of `forward`'s first
/// result, perturbing up to `maxElements` elements of each argument (spread
/// evenly) by `step * max(1, |x|)`.
double finiteDifferenceError(mlir::func::FuncOp forward,
                             std::vector<HostArray> arguments,
                             const std::vector<size_t> &differentiated,
                             const std::vector<HostArray> &grads,
                             int64_t maxElements = 1 << 30,
                             double step = 1e-6) {
  double worst = 0;
  for (size_t n = 0; n < differentiated.size(); ++n) {
    HostArray &argument = arguments[differentiated[n]];
    int64_t count = argument.numel();
    for (int64_t j = 0; j < count;
         j += std::max<int64_t>(1, count / maxElements)) {
      double x = argument.getDouble(j);
      double h = step * std::max(1.0, std::fabs(x));
      argument.setDouble(j, x + h);
      double up = evaluate(forward, arguments)[0].getDouble(0);
      argument.setDouble(j, x - h);
      double down = evaluate(forward, arguments)[0].getDouble(0);
      argument.setDouble(j, x);
      double numeric = (up - down) / (2 * h);
      worst = std::max(worst, std::fabs(grads[n].getDouble(j) - numeric) /
                                  std::max(1.0, std::fabs(numeric)));
    }
  }
  return worst;
}

/// Largest error of the analytic gradient over every element of every
/// differentiated input (or `maxElements` of them, spread evenly).
double gradientError(const Body &body, std::vector<Input> inputs,
                     int64_t maxElements = 1 << 30) {
  Trace trace("loss");
  std::vector<Tensor> tensors;
  std::vector<std::string> wrt;
  for (const Input &input : inputs) {
    // Dropout draws from the trace's own seed argument.
    tensors.push_back(input.name == "rng_seed"
                          ? trace.rng_seed()
                          : trace.input(input.name, input.value.dtype(),
                                        input.value.shape()));
    if (input.differentiate)
      wrt.push_back(input.name);
  }
  Tensor y = body(trace, tensors);
  // A scalar loss that weighs every output element differently.
  Tensor loss = y;
  if (y.dim() != 0) {
    HostArray weights = random(y.shape(), 4242, 0.5, 1.5);
    loss = sum(mul(y, constant(trace, weights)));
  }
  trace.output("loss", loss);
  mlir::func::FuncOp gradient = value_and_grad(trace, wrt);
  mlir::func::FuncOp forward = trace.finish();

  std::vector<HostArray> arguments;
  arguments.reserve(inputs.size());
  for (const Input &input : inputs)
    arguments.push_back(input.value);
  std::vector<HostArray> analytic = evaluate(gradient, arguments);
  EXPECT_EQ(analytic.size(), 1 + wrt.size());
  std::vector<size_t> differentiated;
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].differentiate)
      differentiated.push_back(i);
  return finiteDifferenceError(
      forward, arguments, differentiated,
      std::vector<HostArray>(analytic.begin() + 1, analytic.end()),
      maxElements);
}

constexpr double kTolerance = 1e-6;

/// The same check for a module's bound parameters: `loss` traces the loss
/// (adding its own inputs, fed from `inputs`); up to `maxElements` elements
/// of every parameter are perturbed.
double moduleGradientError(nn::Module &model,
                           const std::function<Tensor(Trace &)> &loss,
                           const std::map<std::string, HostArray> &inputs,
                           int64_t maxElements) {
  model.to(DType::F64);
  Trace trace("loss");
  trace.bind(model);
  trace.output("loss", loss(trace));
  mlir::func::FuncOp gradient = value_and_grad(trace);
  mlir::func::FuncOp forward = trace.finish();
  std::vector<HostArray> arguments = trace.arguments(inputs);
  std::vector<HostArray> analytic = evaluate(gradient, arguments);
  size_t parameters = model.named_parameters().size();
  EXPECT_EQ(analytic.size(), 1 + parameters);
  // Parameters are bound first, so they are arguments 0 .. P-1.
  std::vector<size_t> differentiated(parameters);
  std::iota(differentiated.begin(), differentiated.end(), 0);
  return finiteDifferenceError(
      forward, arguments, differentiated,
      std::vector<HostArray>(analytic.begin() + 1, analytic.end()),
      maxElements);
}

#define EXPECT_GRADIENT(body, ...)                                             \
  EXPECT_LT(gradientError(body, __VA_ARGS__), kTolerance)

Body unary(Tensor (*op)(const Tensor &, Site)) {
  return [op](Trace &, std::vector<Tensor> &t) {
    return op(t[0], Site::current());
  };
}

TEST(Autodiff, ElementwiseUnary) {
  HostArray x = random({3, 4}, 1);
  HostArray positive = random({3, 4}, 2, 0.2, 2.0);
  for (auto op : {&genesis::neg, &genesis::abs, &genesis::exp, &genesis::tanh,
                  &genesis::sigmoid, &genesis::relu, &genesis::silu,
                  &genesis::sin, &genesis::cos})
    EXPECT_GRADIENT(unary(op), {{"x", x}});
  for (auto op : {&genesis::log, &genesis::sqrt, &genesis::rsqrt})
    EXPECT_GRADIENT(unary(op), {{"x", positive}});
  for (std::string approximate : {"none", "tanh"})
    EXPECT_GRADIENT(
        [&](Trace &, std::vector<Tensor> &t) {
          return gelu(t[0], approximate);
        },
        {{"x", random({2, 5}, 3, -3, 3)}});
}

TEST(Autodiff, ElementwiseBinaryWithBroadcasting) {
  HostArray a = random({2, 3, 4}, 1), b = random({3, 1}, 2),
            positive = random({2, 3, 4}, 3, 0.5, 2.0);
  auto binary = [](Tensor (*op)(const Tensor &, const Tensor &, Site)) {
    return [op](Trace &, std::vector<Tensor> &t) {
      return op(t[0], t[1], Site::current());
    };
  };
  for (auto op : {&genesis::add, &genesis::sub, &genesis::mul,
                  &genesis::maximum, &genesis::minimum})
    EXPECT_GRADIENT(binary(op), {{"a", a}, {"b", b}});
  EXPECT_GRADIENT(binary(&genesis::div),
                  {{"a", a}, {"b", random({4}, 4, 0.5, 2)}});
  EXPECT_GRADIENT(binary(&genesis::pow),
                  {{"a", positive}, {"b", random({4}, 5)}});
  EXPECT_GRADIENT(
      [](Trace &, std::vector<Tensor> &t) {
        return where(gt(t[0], t[1]), t[0] * t[1], exp(t[1]));
      },
      {{"a", a}, {"b", random({2, 3, 4}, 6)}});
  EXPECT_GRADIENT(
      [](Trace &, std::vector<Tensor> &t) {
        return clamp(t[0], -0.5, 0.5) + t[0] * 2.0 - 3.0 / (t[0] + 2.0);
      },
      {{"a", a}});
}

TEST(Autodiff, ShapeOps) {
  HostArray x = random({2, 3, 4}, 7);
  EXPECT_GRADIENT(
      [](Trace &, std::vector<Tensor> &t) {
        return t[0].reshape({6, 4}).transpose(0, 1).permute({1, 0});
      },
      {{"x", x}});
  EXPECT_GRADIENT(
      [](Trace &, std::vector<Tensor> &t) {
        return t[0].slice(2, 1, 4, 2).slice(1, 0, 3, 2);
      },
      {{"x", x}});
  EXPECT_GRADIENT(
      [](Trace &, std::vector<Tensor> &t) {
        return cat({t[0], t[0].slice(1, 1, 3), exp(t[0])}, 1);
      },
      {{"x", x}});
  EXPECT_GRADIENT(
      [](Trace &, std::vector<Tensor> &t) {
        return t[0].unsqueeze(1).expand({2, 5, 3, 4}) *
               t[0].sum({0}, true).unsqueeze(1);
      },
      {{"x", x}});
  EXPECT_GRADIENT(
      [](Trace &, std::vector<Tensor> &t) {
        auto pieces = chunk(t[0], 2, 2);
        return pieces[0] * pieces[1];
      },
      {{"x", x}});
}

TEST(Autodiff, EmbeddingSumsRepeatedRows) {
  // Rows 1 and 3 are used several times: their gradients must add up.
  HostArray table = random({5, 3}, 8);
  EXPECT_GRADIENT(
      [](Trace &, std::vector<Tensor> &t) {
        return index_select(t[0], 0, t[1]);
      },
      {{"table", table}, {"ids", ids({2, 3}, {1, 3, 1, 1, 0, 3}), false}});
  // Exact value: d(sum of gathered rows)/d(row) = number of uses.
  Trace trace("loss");
  Tensor t = trace.input("table", DType::F64, {5, 3});
  Tensor i = trace.input("ids", DType::I64, {4});
  trace.output("loss", sum(index_select(t, 0, i)));
  auto results = evaluate(value_and_grad(trace, {"table"}),
                          {table, ids({4}, {1, 3, 1, 1})});
  std::vector<double> uses = {0, 3, 0, 1, 0};
  for (int64_t r = 0; r < 5; ++r)
    for (int64_t c = 0; c < 3; ++c)
      EXPECT_EQ(results[1].getDouble(r * 3 + c), uses[r]);
}

TEST(Autodiff, Reductions) {
  HostArray x = random({3, 4, 5}, 9);
  EXPECT_GRADIENT(
      [](Trace &, std::vector<Tensor> &t) {
        return sum(t[0], {0, 2}) + amax(t[0], {0, 2}) - amin(t[0], {0, 2});
      },
      {{"x", x}});
  EXPECT_GRADIENT(
      [](Trace &, std::vector<Tensor> &t) {
        return mean(t[0], {1}, true) * var(t[0], {1}, 1, true) +
               logsumexp(t[0], {1}, true);
      },
      {{"x", x}});
}

TEST(Autodiff, MatmulAllTransposesAndBatches) {
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      HostArray a = random(ta ? Shape{2, 4, 3} : Shape{2, 3, 4}, 10),
                b = random(tb ? Shape{2, 5, 4} : Shape{2, 4, 5}, 11);
      EXPECT_GRADIENT(
          [&](Trace &, std::vector<Tensor> &t) {
            Tensor x = ta ? t[0].transpose(1, 2) : t[0];
            Tensor y = tb ? t[1].transpose(1, 2) : t[1];
            return matmul(x, y);
          },
          {{"a", a}, {"b", b}});
    }
  EXPECT_GRADIENT(
      [](Trace &, std::vector<Tensor> &t) { return linear(t[0], t[1], t[2]); },
      {{"x", random({2, 3, 4}, 12)},
       {"w", random({5, 4}, 13)},
       {"b", random({5}, 14)}});
}

TEST(Autodiff, NormalisationsAndSoftmax) {
  HostArray x = random({2, 3, 6}, 15);
  EXPECT_GRADIENT(
      [](Trace &, std::vector<Tensor> &t) {
        return softmax(t[0], 1) + log_softmax(t[0], -1);
      },
      {{"x", x}});
  EXPECT_GRADIENT(
      [](Trace &, std::vector<Tensor> &t) {
        return layer_norm(t[0], t[1], t[2], 1e-5);
      },
      {{"x", x}, {"w", random({6}, 16)}, {"b", random({6}, 17)}});
  EXPECT_GRADIENT(
      [](Trace &, std::vector<Tensor> &t) {
        return layer_norm(t[0], std::nullopt, std::nullopt, 1e-5);
      },
      {{"x", x}});
  EXPECT_GRADIENT(
      [](Trace &, std::vector<Tensor> &t) {
        return rms_norm(t[0], t[1], 1e-6);
      },
      {{"x", x}, {"w", random({6}, 18)}});
}

TEST(Autodiff, RotaryEmbedding) {
  EXPECT_GRADIENT(
      [](Trace &, std::vector<Tensor> &t) {
        return apply_rotary(t[0], t[1], t[2]);
      },
      {{"x", random({2, 3, 4, 6}, 19)},
       {"cos", random({4, 6}, 20)},
       {"sin", random({4, 6}, 21)}});
}

TEST(Autodiff, AttentionCausalGqaAndMask) {
  HostArray q = random({2, 4, 3, 5}, 22), k = random({2, 2, 4, 5}, 23),
            v = random({2, 2, 4, 6}, 24);
  for (bool causal : {false, true})
    EXPECT_GRADIENT(
        [causal](Trace &, std::vector<Tensor> &t) {
          return scaled_dot_product_attention(t[0], t[1], t[2], std::nullopt,
                                              causal);
        },
        {{"q", q}, {"k", k}, {"v", v}});
  EXPECT_GRADIENT(
      [](Trace &, std::vector<Tensor> &t) {
        return scaled_dot_product_attention(t[0], t[1], t[2], t[3], false, 0.3);
      },
      {{"q", q},
       {"k", k},
       {"v", v},
       {"mask", random({1, 1, 3, 4}, 25), false}});
}

TEST(Autodiff, CrossEntropyIgnoreIndexAndSmoothing) {
  HostArray logits = random({5, 4}, 26, -2, 2);
  HostArray labels = ids({5}, {3, -100, 0, 2, -100});
  for (Reduction reduction : {Reduction::Mean, Reduction::Sum, Reduction::None})
    for (double smoothing : {0.0, 0.1})
      EXPECT_GRADIENT(
          [&](Trace &, std::vector<Tensor> &t) {
            return cross_entropy(t[0], t[1], -100, reduction, smoothing);
          },
          {{"logits", logits}, {"labels", labels, false}});
  // Ignored rows get exactly zero gradient.
  Trace trace("loss");
  Tensor x = trace.input("logits", DType::F64, {5, 4});
  Tensor l = trace.input("labels", DType::I64, {5});
  trace.output("loss", cross_entropy(x, l));
  auto r = evaluate(value_and_grad(trace, {"logits"}), {logits, labels});
  for (int64_t c = 0; c < 4; ++c) {
    EXPECT_EQ(r[1].getDouble(1 * 4 + c), 0.0);
    EXPECT_EQ(r[1].getDouble(4 * 4 + c), 0.0);
  }
}

TEST(Autodiff, OtherLosses) {
  HostArray p = random({6}, 27, 0.1, 0.9), y = random({6}, 28, 0, 1),
            x = random({6}, 29, -3, 3);
  EXPECT_GRADIENT(
      [](Trace &, std::vector<Tensor> &t) {
        return mse_loss(t[0], t[1]) + l1_loss(t[0], t[1], Reduction::Sum);
      },
      {{"p", p}, {"y", y}});
  EXPECT_GRADIENT(
      [](Trace &, std::vector<Tensor> &t) {
        return binary_cross_entropy(t[0], t[1]);
      },
      {{"p", p}, {"y", y}});
  EXPECT_GRADIENT(
      [](Trace &, std::vector<Tensor> &t) {
        return binary_cross_entropy_with_logits(t[0], t[1], Reduction::Sum);
      },
      {{"x", x}, {"y", y}});
}

TEST(Autodiff, DropoutReusesItsMask) {
  EXPECT_GRADIENT(
      [](Trace &, std::vector<Tensor> &t) {
        return dropout(t[0], 0.3, true) * t[0];
      },
      {{"x", random({50}, 30)},
       {"rng_seed", HostArray::fromValues<int64_t>(DType::I64, {}, {77}),
        false}});
}

TEST(Autodiff, PadIndexAddErfNormAndDetach) {
  EXPECT_GRADIENT(
      [](Trace &, std::vector<Tensor> &t) {
        return pad(t[0], {1, 0}, {0, 2}) * 3.0;
      },
      {{"x", random({2, 3}, 40)}});
  EXPECT_GRADIENT(
      [](Trace &, std::vector<Tensor> &t) {
        return index_add(t[0], 0, t[2], t[1]);
      },
      {{"x", random({4, 3}, 41)},
       {"source", random({5, 3}, 42)},
       {"ids", ids({5}, {2, 0, 2, 3, 2}), false}});
  EXPECT_GRADIENT([](Trace &, std::vector<Tensor> &t) { return erf(t[0]); },
                  {{"x", random({6}, 43, -2, 2)}});
  EXPECT_GRADIENT(
      [](Trace &, std::vector<Tensor> &t) {
        return global_norm({t[0], t[1]});
      },
      {{"a", random({3}, 44)}, {"b", random({2, 2}, 45)}});
  // detach: d/dx [x * detach(x)] = detach(x), not 2x.
  Trace trace("loss");
  Tensor x = trace.input("x", DType::F64, {3});
  trace.output("loss", sum(x * detach(x)));
  HostArray xv = random({3}, 46);
  auto r = evaluate(value_and_grad(trace, {"x"}), {xv});
  for (int64_t i = 0; i < 3; ++i)
    EXPECT_EQ(r[1].getDouble(i), xv.getDouble(i));
}

/// The gradient check for a @loss written in IR, for ops the frontend does
/// not expose (all_reduce) and casts.
double irGradientError(const std::string &ir, std::vector<HostArray> inputs,
                       double step) {
  mlir::MLIRContext context;
  context.loadDialect<GenesisDialect, mlir::func::FuncDialect>();
  auto module = mlir::parseSourceString<mlir::ModuleOp>(ir, &context);
  EXPECT_TRUE(module);
  auto forward = module->lookupSymbol<mlir::func::FuncOp>("loss");
  std::vector<unsigned> all(inputs.size());
  std::iota(all.begin(), all.end(), 0);
  auto gradient = differentiate(forward, all);
  EXPECT_TRUE(mlir::succeeded(gradient));
  std::vector<HostArray> analytic = evaluate(*gradient, inputs);
  std::vector<size_t> differentiated(inputs.size());
  std::iota(differentiated.begin(), differentiated.end(), 0);
  return finiteDifferenceError(
      forward, inputs, differentiated,
      std::vector<HostArray>(analytic.begin() + 1, analytic.end()), 1 << 30,
      step);
}

TEST(Autodiff, AllReduceAndCast) {
  EXPECT_LT(irGradientError(R"(
    func.func @loss(%x: tensor<4xf64>) -> tensor<f64> {
      %0 = genesis.all_reduce sum, %x : tensor<4xf64>
      %1 = genesis.mul %0, %x : tensor<4xf64>
      %2 = genesis.reduce_sum %1 dims [0] : tensor<4xf64>
      return %2 : tensor<f64>
    })",
                            {random({4}, 47)}, 1e-6),
            kTolerance);
  // Through f32 the loss is quantised to ~6e-8 relative, so the difference
  // quotient uses a larger step and a tolerance of 1e-3 (quantisation error
  // / step ~ 1e-4); the analytic gradient itself is exact.
  EXPECT_LT(irGradientError(R"(
    func.func @loss(%x: tensor<4xf64>) -> tensor<f64> {
      %0 = genesis.cast %x : tensor<4xf64> to tensor<4xf32>
      %1 = genesis.exp %0 : tensor<4xf32>
      %2 = genesis.cast %1 : tensor<4xf32> to tensor<4xf64>
      %3 = genesis.reduce_sum %2 dims [0] : tensor<4xf64>
      return %3 : tensor<f64>
    })",
                            {random({4}, 48)}, 1e-3),
            1e-3);
}

TEST(Autodiff, JaxStyleGradCachesPerSignature) {
  auto f = [](const std::vector<Tensor> &t) {
    return sum(t[0] * t[1] + sin(t[0]));
  };
  auto df = grad(f, {0});
  auto vdf = genesis::value_and_grad(f, {0, 1});
  for (int64_t n : {3, 5, 3}) {
    HostArray x = random({n}, 49 + n), y = random({n}, 50 + n);
    std::vector<HostArray> g = df({x, y});
    ASSERT_EQ(g.size(), 1u);
    for (int64_t i = 0; i < n; ++i)
      EXPECT_NEAR(g[0].getDouble(i), y.getDouble(i) + std::cos(x.getDouble(i)),
                  1e-15);
    auto [value, both] = vdf({x, y});
    ASSERT_EQ(both.size(), 2u);
    double expected = 0;
    for (int64_t i = 0; i < n; ++i)
      expected += x.getDouble(i) * y.getDouble(i) + std::sin(x.getDouble(i));
    EXPECT_NEAR(value.getDouble(0), expected, 1e-14);
    EXPECT_EQ(both[1].getDouble(0), x.getDouble(0));
  }
  EXPECT_THROW(grad(f, {2})({random({2}, 1), random({2}, 2)}), Error);
}

TEST(Autodiff, MlpWholeModel) {
  Generator generator(31);
  auto mlp = models::makeMlp(16, generator);
  mlp->to(DType::F64);
  HostArray images = random({4, 784}, 32, 0, 1);
  HostArray labels = ids({4}, {3, 1, 4, 1});
  std::vector<Input> inputs;
  for (auto &[name, parameter] : mlp->named_parameters())
    inputs.push_back({name, parameter->data()});
  inputs.push_back({"images", images, false});
  inputs.push_back({"labels", labels, false});
  EXPECT_LT(gradientError(
                [&](Trace &, std::vector<Tensor> &t) {
                  // Use the traced inputs as the model's parameters.
                  Tensor h = relu(linear(t[4], t[0], t[1]));
                  return cross_entropy(linear(h, t[2], t[3]), t[5]);
                },
                inputs, /*maxElements=*/64),
            kTolerance);
}

TEST(Autodiff, TransformerBlockWholeModel) {
  // Two Qwen2-style decoder layers: RMSNorm, GQA attention with RoPE, SwiGLU.
  Generator generator(34);
  nn::DecoderLayer::Config config;
  config.hidden = 16;
  config.intermediate = 24;
  config.num_heads = 4;
  config.num_kv_heads = 2;
  nn::ModuleList<nn::DecoderLayer> layers;
  for (int i = 0; i < 2; ++i)
    layers.push_back(std::make_shared<nn::DecoderLayer>(config, generator));
  HostArray x = random({2, 5, 16}, 35);
  EXPECT_LT(moduleGradientError(
                layers,
                [&](Trace &trace) {
                  Tensor h = trace.input("x", DType::F64, {2, 5, 16});
                  for (auto &layer : layers)
                    h = layer->forward(h);
                  return mean(h * h);
                },
                {{"x", x}}, /*maxElements=*/24),
            kTolerance);
}

TEST(Autodiff, TinyGpt2WholeModel) {
  models::Gpt2Config config;
  config.vocab_size = 13;
  config.n_positions = 8;
  config.n_embd = 8;
  config.n_layer = 2;
  config.n_head = 2;
  Generator generator(36);
  models::Gpt2 gpt(config, generator);
  HostArray tokens = ids({2, 6}, {1, 5, 7, 3, 12, 0, 4, 4, 9, 2, 11, 6});
  HostArray targets = ids({12}, {5, 7, 3, 12, 0, -100, 4, 9, 2, 11, 6, 1});
  EXPECT_LT(moduleGradientError(
                gpt,
                [&](Trace &trace) {
                  Tensor logits = gpt(trace.input("ids", DType::I64, {2, 6}));
                  return cross_entropy(
                      logits.reshape({12, 13}),
                      trace.input("targets", DType::I64, {12}));
                },
                {{"ids", tokens}, {"targets", targets}}, /*maxElements=*/24),
            kTolerance);
}

TEST(Autodiff, GradientOfBoundParametersByDefault) {
  Generator generator(33);
  auto mlp = models::makeMlp(8, generator);
  Trace trace("loss");
  trace.bind(*mlp);
  Tensor x = trace.input("x", DType::F32, {2, 784});
  Tensor y = trace.input("y", DType::I64, {2});
  trace.output("loss", cross_entropy(mlp->forward(x), y));
  mlir::func::FuncOp gradient = value_and_grad(trace);
  ASSERT_EQ(gradient.getNumResults(), 5u);
  EXPECT_EQ(gradient.getResultAttrOfType<mlir::StringAttr>(1, "genesis.name")
                .getValue(),
            "grad:0.weight");
  EXPECT_EQ(gradient.getResultTypes()[3], gradient.getArgumentTypes()[2]);
}

TEST(Autodiff, ErrorsAreClear) {
  Trace trace("loss");
  Tensor x = trace.input("x", DType::F32, {3});
  trace.output("loss", x);
  try {
    value_and_grad(trace, {"x"});
    FAIL() << "expected an error";
  } catch (const Error &e) {
    EXPECT_THAT(e.what(), HasSubstr("must be a scalar float loss"));
  }
  Trace other("loss");
  Tensor a = other.input("a", DType::F32, {3});
  other.output("loss", sum(a));
  EXPECT_THROW(value_and_grad(other, {"nope"}), Error);
}

} // namespace
