//===- FrontendTest.cpp - Tracing modules into genesis IR -----------------===//
//
// Each module and loss traces to verified genesis IR with the expected ops
// and shapes, and evaluating the trace gives the values worked out here by
// hand or by an independent loop. Errors at trace time name this file's line.
//
//===----------------------------------------------------------------------===//

#include "dialect/Evaluator/Evaluator.h"
#include "dialect/IR/GenesisDialect.h"
#include "frontend/Trace.h"
#include "frontend/nn/Layers.h"
#include "models/mlp/Mlp.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include <cmath>

using namespace genesis;
using ::testing::HasSubstr;

namespace {

HostArray randomArray(Shape shape, uint64_t seed, double low = -1.0,
                      double high = 1.0, DType dtype = DType::F32) {
  HostArray array(dtype, std::move(shape));
  Generator(seed).fill_uniform(array, low, high);
  return array;
}

/// Runs a finished trace on named inputs.
std::vector<HostArray>
run(Trace &trace, const std::map<std::string, HostArray> &inputs = {}) {
  return evaluate(trace.finish(), trace.arguments(inputs));
}

std::string here(int line) {
  return std::string("FrontendTest.cpp:") + std::to_string(line);
}

int countOps(const std::string &ir, const std::string &op) {
  int count = 0;
  for (size_t at = ir.find(op + " "); at != std::string::npos;
       at = ir.find(op + " ", at + 1))
    ++count;
  return count;
}

TEST(Frontend, MlpTracesToVerifiedIrWithTorchNames) {
  Generator generator(7);
  auto mlp = models::makeMlp(256, generator);
  std::vector<std::string> names;
  for (auto &[name, parameter] : mlp->named_parameters())
    names.push_back(name + ":" + parameter->data().typeString());
  EXPECT_EQ(names, (std::vector<std::string>{
                       "0.weight:f32[256, 784]", "0.bias:f32[256]",
                       "2.weight:f32[10, 256]", "2.bias:f32[10]"}));
  EXPECT_EQ(mlp->num_parameters(), 784 * 256 + 256 + 256 * 10 + 10);

  Trace trace("forward");
  trace.bind(*mlp);
  Tensor x = trace.input("x", DType::F32, {64, 784});
  Tensor logits = mlp->forward(x);
  EXPECT_EQ(logits.shape(), (Shape{64, 10}));
  trace.output("logits", logits);
  std::string ir = trace.str();
  EXPECT_EQ(countOps(ir, "genesis.matmul"), 2);
  EXPECT_EQ(countOps(ir, "genesis.relu"), 1);
  EXPECT_EQ(countOps(ir, "genesis.broadcast_in_dim"), 2);
  EXPECT_THAT(ir, HasSubstr("transpose_rhs : tensor<64x784xf32>, "
                            "tensor<256x784xf32>"));
  EXPECT_THAT(ir, HasSubstr("genesis.name = \"0.weight\", genesis.role = "
                            "\"parameter\""));

  // The trace computes relu(x W1^T + b1) W2^T + b2.
  HostArray input = randomArray({64, 784}, 1, 0.0, 1.0);
  HostArray out = run(trace, {{"x", input}})[0];
  auto p = mlp->named_parameters();
  const HostArray &w1 = p[0].second->data(), &b1 = p[1].second->data(),
                  &w2 = p[2].second->data(), &b2 = p[3].second->data();
  for (int64_t r : {0, 17, 63}) {
    std::vector<double> hidden(256);
    for (int64_t j = 0; j < 256; ++j) {
      double acc = b1.getDouble(j);
      for (int64_t k = 0; k < 784; ++k)
        acc += input.getDouble(r * 784 + k) * w1.getDouble(j * 784 + k);
      hidden[j] = static_cast<float>(
          std::max(0.0, static_cast<double>(static_cast<float>(acc))));
    }
    for (int64_t c = 0; c < 10; ++c) {
      double acc = 0;
      for (int64_t j = 0; j < 256; ++j)
        acc += hidden[j] * w2.getDouble(c * 256 + j);
      double expected =
          static_cast<float>(static_cast<float>(acc) + b2.getDouble(c));
      EXPECT_NEAR(out.getDouble(r * 10 + c), expected,
                  1e-5 * (1 + std::fabs(expected)));
    }
  }
}

TEST(Frontend, SameSeedSameWeights) {
  Generator a(42), b(42), c(43);
  auto m1 = models::makeMlp(32, a), m2 = models::makeMlp(32, b),
       m3 = models::makeMlp(32, c);
  auto s1 = m1->state_dict(), s2 = m2->state_dict(), s3 = m3->state_dict();
  ASSERT_EQ(s1.size(), 4u);
  bool anyDifferent = false;
  for (size_t i = 0; i < s1.size(); ++i) {
    ASSERT_EQ(s1[i].first, s2[i].first);
    ASSERT_EQ(s1[i].second.nbytes(), s2[i].second.nbytes());
    EXPECT_EQ(0, std::memcmp(s1[i].second.data(), s2[i].second.data(),
                             s1[i].second.nbytes()));
    anyDifferent |= std::memcmp(s1[i].second.data(), s3[i].second.data(),
                                s1[i].second.nbytes()) != 0;
  }
  EXPECT_TRUE(anyDifferent);
  // Linear init is U(-1/sqrt(in), 1/sqrt(in)) like torch.
  const HostArray &w = s1[0].second;
  double bound = 1.0 / std::sqrt(784.0), lo = 1, hi = -1;
  for (int64_t i = 0; i < w.numel(); ++i) {
    lo = std::min(lo, w.getDouble(i));
    hi = std::max(hi, w.getDouble(i));
  }
  EXPECT_GE(lo, -bound);
  EXPECT_LE(hi, bound);
  EXPECT_LT(lo, -0.9 * bound);
  EXPECT_GT(hi, 0.9 * bound);
}

TEST(Frontend, GeneratorStateRoundTrips) {
  Generator g(5);
  g.uniform();
  Generator::State state = g.get_state();
  double next = g.uniform();
  g.set_state(state);
  EXPECT_EQ(g.uniform(), next);
  EXPECT_EQ(g.initial_seed(), 5u);
}

TEST(Frontend, StateDictLoadChecksEverythingFirst) {
  Generator g1(1), g2(2);
  auto source = models::makeMlp(16, g1), target = models::makeMlp(16, g2);
  NamedArrays state = source->state_dict();
  NamedArrays before = target->state_dict();

  NamedArrays wrongShape = state;
  wrongShape[3].second = HostArray(DType::F32, {11});
  try {
    target->load_state_dict(wrongShape);
    FAIL() << "expected an error";
  } catch (const Error &e) {
    EXPECT_THAT(e.what(), HasSubstr("'2.bias' has type f32[11], the module "
                                    "expects f32[10]"));
  }
  // Nothing was copied, not even the entries before the bad one.
  EXPECT_EQ(0, std::memcmp(target->state_dict()[0].second.data(),
                           before[0].second.data(), before[0].second.nbytes()));

  NamedArrays missing(state.begin(), state.end() - 1);
  EXPECT_THROW(target->load_state_dict(missing), Error);
  NamedArrays extra = state;
  extra.emplace_back("3.weight", HostArray(DType::F32, {1}));
  EXPECT_THROW(target->load_state_dict(extra), Error);
  target->load_state_dict(extra, /*strict=*/false);
  EXPECT_EQ(0, std::memcmp(target->state_dict()[0].second.data(),
                           state[0].second.data(), state[0].second.nbytes()));
}

TEST(Frontend, BroadcastingIsExplicitInTheIr) {
  Trace trace("f");
  Tensor a = trace.input("a", DType::F32, {2, 3});
  Tensor b = trace.input("b", DType::F32, {3});
  trace.output("y", a * b + 1.0);
  std::string ir = trace.str();
  EXPECT_THAT(ir, HasSubstr("genesis.broadcast_in_dim %arg1, [1] : "
                            "tensor<3xf32> -> tensor<2x3xf32>"));
  HostArray av =
      HostArray::fromValues<double>(DType::F32, {2, 3}, {1, 2, 3, 4, 5, 6});
  HostArray bv = HostArray::fromValues<double>(DType::F32, {3}, {10, 20, 30});
  HostArray y = run(trace, {{"a", av}, {"b", bv}})[0];
  std::vector<double> expected = {11, 41, 91, 41, 101, 181};
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(y.getDouble(i), expected[i]);
}

TEST(Frontend, ShapeErrorsNameTheUserLine) {
  Trace trace("f");
  Tensor a = trace.input("a", DType::F32, {2, 3});
  Tensor b = trace.input("b", DType::F32, {4});
  int line = __LINE__ + 2;
  try {
    (void)(a + b);
    FAIL() << "expected an error";
  } catch (const Error &e) {
    EXPECT_THAT(e.what(), HasSubstr(here(line)));
    EXPECT_THAT(e.what(), HasSubstr("cannot broadcast f32[2, 3] with f32[4]"));
  }
  Tensor w = trace.input("w", DType::F32, {5, 7});
  line = __LINE__ + 2;
  try {
    (void)matmul(a, w);
    FAIL() << "expected an error";
  } catch (const Error &e) {
    EXPECT_THAT(e.what(), HasSubstr(here(line)));
    EXPECT_THAT(e.what(), HasSubstr("inner dimensions differ"));
  }
  // A rule only the dialect states (attention heads) reaches the user with
  // the dialect's message and the user's line.
  Tensor q = trace.input("q", DType::F32, {1, 3, 4, 8});
  Tensor k = trace.input("k", DType::F32, {1, 2, 4, 8});
  line = __LINE__ + 2;
  try {
    (void)scaled_dot_product_attention(q, k, k);
    FAIL() << "expected an error";
  } catch (const Error &e) {
    EXPECT_THAT(e.what(), HasSubstr(here(line)));
    EXPECT_THAT(e.what(),
                HasSubstr("query heads (3) must be a multiple of key/value "
                          "heads (2)"));
  }
  // The failed ops left nothing behind: the trace still verifies.
  trace.output("a", a);
  EXPECT_NO_THROW(trace.finish());
}

TEST(Frontend, OpsCarryTheUserLineAsLocation) {
  Trace trace("f");
  Tensor a = trace.input("a", DType::F32, {4});
  int line = __LINE__ + 1;
  Tensor y = exp(a);
  EXPECT_THAT(describeLocation(y.value().getLoc()), HasSubstr(here(line)));
  int opLine = __LINE__ + 1;
  Tensor z = y * a;
  EXPECT_THAT(describeLocation(z.value().getLoc()), HasSubstr(here(opLine)));
}

TEST(Frontend, ShapeOpsMatchTorch) {
  Trace trace("f");
  Tensor x = trace.input("x", DType::F32, {2, 3, 4});
  EXPECT_EQ(x.reshape({-1, 4}).shape(), (Shape{6, 4}));
  EXPECT_EQ(x.transpose(0, 2).shape(), (Shape{4, 3, 2}));
  EXPECT_EQ(x.permute({1, 2, 0}).shape(), (Shape{3, 4, 2}));
  EXPECT_EQ(x.unsqueeze(-1).shape(), (Shape{2, 3, 4, 1}));
  EXPECT_EQ(x.unsqueeze(1).squeeze(1).shape(), (Shape{2, 3, 4}));
  EXPECT_EQ(x.flatten(1).shape(), (Shape{2, 12}));
  EXPECT_EQ(x.slice(2, 1, -1).shape(), (Shape{2, 3, 2}));
  EXPECT_EQ(x.slice(1, 0, 3, 2).shape(), (Shape{2, 2, 4}));
  EXPECT_EQ(cat({x, x}, -1).shape(), (Shape{2, 3, 8}));
  EXPECT_EQ(stack({x, x}, 0).shape(), (Shape{2, 2, 3, 4}));
  EXPECT_EQ(split(x, 3, 2).size(), 2u);
  EXPECT_EQ(chunk(x, 2, 2)[1].shape(), (Shape{2, 3, 2}));
  EXPECT_EQ(sum(x, {0, -1}).shape(), (Shape{3}));
  EXPECT_EQ(mean(x, {1}, true).shape(), (Shape{2, 1, 4}));
  EXPECT_EQ(argmax(x, -1).shape(), (Shape{2, 3}));
  EXPECT_EQ(x.expand({5, 2, 3, 4}).shape(), (Shape{5, 2, 3, 4}));
  EXPECT_EQ(matmul(x, trace.input("w", DType::F32, {4, 5})).shape(),
            (Shape{2, 3, 5}));
  EXPECT_EQ(matmul(x, trace.input("v", DType::F32, {4})).shape(),
            (Shape{2, 3}));
  EXPECT_EQ(matmul(trace.input("b", DType::F32, {5, 1, 3, 4}),
                   trace.input("c", DType::F32, {2, 4, 6}))
                .shape(),
            (Shape{5, 2, 3, 6}));
  EXPECT_THROW(x.reshape({5, -1}), Error);
  EXPECT_THROW(x.transpose(0, 3), Error);
}

TEST(Frontend, ReductionsAndCompositesEvaluateCorrectly) {
  Trace trace("f");
  Tensor x = trace.input("x", DType::F64, {2, 3});
  trace.output("var", var(x, {1}));
  trace.output("lse", logsumexp(x, {1}));
  trace.output("clamp", clamp(x, -1.0, 2.0));
  trace.output("where", where(gt(x, full_like(x, 0.0)), x, -x));
  HostArray xv =
      HostArray::fromValues<double>(DType::F64, {2, 3}, {1, 2, 3, -4, 0, 4});
  auto r = run(trace, {{"x", xv}});
  EXPECT_DOUBLE_EQ(r[0].getDouble(0), 1.0);
  EXPECT_DOUBLE_EQ(r[0].getDouble(1), 16.0);
  EXPECT_NEAR(r[1].getDouble(0),
              std::log(std::exp(1) + std::exp(2) + std::exp(3)), 1e-12);
  EXPECT_EQ(r[2].getDouble(3), -1.0);
  EXPECT_EQ(r[2].getDouble(2), 2.0);
  EXPECT_EQ(r[3].getDouble(3), 4.0);
}

TEST(Frontend, LogsumexpOfAllNegativeInfinityIsNegativeInfinity) {
  Trace trace("f");
  Tensor x = trace.input("x", DType::F32, {1, 2});
  trace.output("lse", logsumexp(x, {1}));
  HostArray xv =
      HostArray::fromValues<double>(DType::F32, {1, 2}, {-INFINITY, -INFINITY});
  EXPECT_EQ(run(trace, {{"x", xv}})[0].getDouble(0), -INFINITY);
}

TEST(Frontend, LayersTraceWithExpectedShapesAndValues) {
  Generator g(3);
  nn::Embedding embedding(10, 4, g);
  nn::LayerNorm layerNorm(4);
  nn::RMSNorm rmsNorm(4, 1e-6);
  Trace trace("f");
  trace.bind(embedding, "embedding.");
  int line = __LINE__ + 2;
  try {
    trace.bind(embedding, "embedding.");
    FAIL() << "expected an error";
  } catch (const Error &e) {
    EXPECT_THAT(e.what(), HasSubstr(here(line)));
    EXPECT_THAT(e.what(),
                HasSubstr("already has an argument named 'embedding.weight'"));
  }
  trace.bind(layerNorm, "norm.");
  Tensor ids = trace.input("ids", DType::I64, {2, 3});
  Tensor e = embedding(ids);
  EXPECT_EQ(e.shape(), (Shape{2, 3, 4}));
  trace.output("embedded", e);
  trace.output("layer_norm", layerNorm(e));
  trace.bind(rmsNorm, "rms.");
  trace.output("rms_norm", rmsNorm(e));
  std::string ir = trace.str();
  EXPECT_THAT(ir, HasSubstr("genesis.take"));
  EXPECT_THAT(ir, HasSubstr("genesis.layer_norm"));
  HostArray idv =
      HostArray::fromValues<int64_t>(DType::I64, {2, 3}, {0, 9, 3, 3, 3, 1});
  auto r = run(trace, {{"ids", idv}});
  const HostArray &table = embedding.weight.data();
  for (int64_t p = 0; p < 6; ++p)
    for (int64_t c = 0; c < 4; ++c)
      EXPECT_EQ(r[0].getDouble(p * 4 + c),
                table.getDouble(idv.getInt(p) * 4 + c));
  // (x - mean) / sqrt(biased var + 1e-5) and x / sqrt(mean(x^2) + 1e-6).
  for (int64_t p = 0; p < 6; ++p) {
    double m = 0, v = 0, squares = 0;
    for (int64_t c = 0; c < 4; ++c)
      m += r[0].getDouble(p * 4 + c) / 4;
    for (int64_t c = 0; c < 4; ++c) {
      v += std::pow(r[0].getDouble(p * 4 + c) - m, 2) / 4;
      squares += std::pow(r[0].getDouble(p * 4 + c), 2) / 4;
    }
    for (int64_t c = 0; c < 4; ++c) {
      double x = r[0].getDouble(p * 4 + c);
      EXPECT_NEAR(r[1].getDouble(p * 4 + c), (x - m) / std::sqrt(v + 1e-5),
                  1e-6);
      EXPECT_NEAR(r[2].getDouble(p * 4 + c), x / std::sqrt(squares + 1e-6),
                  1e-6);
    }
  }
}

TEST(Frontend, DropoutOnlyWhileTraining) {
  nn::Dropout drop(0.25);
  {
    Trace trace("train");
    Tensor x = trace.input("x", DType::F32, {1000});
    trace.output("y", drop(x));
    trace.output("z", drop(x));
    std::string ir = trace.str();
    EXPECT_EQ(countOps(ir, "genesis.dropout"), 2);
    EXPECT_THAT(ir, HasSubstr("genesis.role = \"rng_seed\""));
    EXPECT_THAT(ir, HasSubstr("offset = 1000"));
    HostArray ones(DType::F32, {1000});
    for (int64_t i = 0; i < 1000; ++i)
      ones.setDouble(i, 1.0);
    HostArray seed = HostArray::fromValues<int64_t>(DType::I64, {}, {1234});
    auto r = run(trace, {{"x", ones}, {"rng_seed", seed}});
    int kept = 0, same = 0;
    for (int64_t i = 0; i < 1000; ++i) {
      double y = r[0].getDouble(i);
      EXPECT_TRUE(y == 0.0 || std::fabs(y - 1.0 / 0.75) < 1e-6);
      kept += y != 0.0;
      same += (y != 0.0) == (r[1].getDouble(i) != 0.0);
    }
    EXPECT_GT(kept, 700);
    EXPECT_LT(kept, 800);
    EXPECT_LT(same, 900); // two dropout ops draw different masks
  }
  drop.eval();
  Trace trace("eval");
  Tensor x = trace.input("x", DType::F32, {10});
  trace.output("y", drop(x));
  EXPECT_EQ(countOps(trace.str(), "genesis.dropout"), 0);
}

TEST(Frontend, LossesMatchHandComputedValues) {
  Trace trace("f");
  Tensor logits = trace.input("logits", DType::F64, {3, 2});
  Tensor labels = trace.input("labels", DType::I64, {3});
  Tensor p = trace.input("p", DType::F64, {2});
  Tensor y = trace.input("y", DType::F64, {2});
  trace.output("ce", cross_entropy(logits, labels));
  trace.output("ce_sum", cross_entropy(logits, labels, -100, Reduction::Sum));
  trace.output("mse", mse_loss(p, y));
  trace.output("l1", l1_loss(p, y, Reduction::Sum));
  trace.output("bce", binary_cross_entropy(p, y));
  trace.output("bce_logits", binary_cross_entropy_with_logits(p, y));
  auto r =
      run(trace,
          {{"logits", HostArray::fromValues<double>(
                          DType::F64, {3, 2}, {0, std::log(3.0), 5, 5, 1, 2})},
           {"labels",
            HostArray::fromValues<int64_t>(DType::I64, {3}, {1, -100, 0})},
           {"p", HostArray::fromValues<double>(DType::F64, {2}, {0.25, 0.5})},
           {"y", HostArray::fromValues<double>(DType::F64, {2}, {1, 0})}});
  // Row 0: softmax [1/4, 3/4], label 1 -> -log(3/4); row 1 ignored;
  // row 2: -log(e/(e+e^2)) = log(1+e).
  double row0 = -std::log(0.75), row2 = std::log(1 + std::exp(1.0));
  EXPECT_NEAR(r[0].getDouble(0), (row0 + row2) / 2, 1e-12);
  EXPECT_NEAR(r[1].getDouble(0), row0 + row2, 1e-12);
  EXPECT_NEAR(r[2].getDouble(0), (0.75 * 0.75 + 0.25) / 2, 1e-12);
  EXPECT_NEAR(r[3].getDouble(0), 0.75 + 0.5, 1e-12);
  EXPECT_NEAR(r[4].getDouble(0), (-std::log(0.25) - std::log(0.5)) / 2, 1e-12);
  auto bceLogit = [](double x, double t) {
    return -t * std::log(1 / (1 + std::exp(-x))) -
           (1 - t) * std::log(1 - 1 / (1 + std::exp(-x)));
  };
  EXPECT_NEAR(r[5].getDouble(0), (bceLogit(0.25, 1) + bceLogit(0.5, 0)) / 2,
              1e-12);
}

/// A 2-layer Qwen2-style decoder stack: the transformer block of the tests.
class TinyDecoder : public nn::Module {
public:
  TinyDecoder(const nn::DecoderLayer::Config &config, Generator &g) {
    layers = register_module(
        "layers", std::make_shared<nn::ModuleList<nn::DecoderLayer>>());
    for (int i = 0; i < 2; ++i)
      layers->push_back(std::make_shared<nn::DecoderLayer>(config, g));
  }
  Tensor forward(const Tensor &x) override {
    Tensor h = x;
    for (auto &layer : *layers)
      h = layer->forward(h);
    return h;
  }
  std::shared_ptr<nn::ModuleList<nn::DecoderLayer>> layers;
};

TEST(Frontend, TransformerBlockTracesEvaluatesAndIsCausal) {
  Generator g(11);
  nn::DecoderLayer::Config config;
  config.hidden = 32;
  config.intermediate = 64;
  config.num_heads = 4;
  config.num_kv_heads = 2;
  TinyDecoder model(config, g);
  std::vector<std::string> names;
  for (auto &[name, parameter] : model.named_parameters())
    names.push_back(name);
  EXPECT_EQ(names.front(), "layers.0.self_attn.q_proj.weight");
  EXPECT_NE(std::find(names.begin(), names.end(),
                      "layers.1.post_attention_layernorm.weight"),
            names.end());
  EXPECT_NE(
      std::find(names.begin(), names.end(), "layers.1.mlp.gate_proj.weight"),
      names.end());
  EXPECT_EQ(
      std::find(names.begin(), names.end(), "layers.0.self_attn.o_proj.bias"),
      names.end());

  Trace trace("forward");
  trace.bind(model);
  Tensor x = trace.input("x", DType::F32, {2, 6, 32});
  Tensor y = model(x);
  EXPECT_EQ(y.shape(), (Shape{2, 6, 32}));
  trace.output("y", y);
  std::string ir = trace.str();
  EXPECT_EQ(countOps(ir, "genesis.attention"), 2);
  EXPECT_EQ(countOps(ir, "genesis.rms_norm"), 4);
  EXPECT_EQ(countOps(ir, "genesis.rope"), 4);
  EXPECT_EQ(countOps(ir, "genesis.silu"), 2);
  // GQA without copies: K/V keep 2 heads.
  EXPECT_THAT(ir, HasSubstr("tensor<2x4x6x8xf32>, tensor<2x2x6x8xf32>, "
                            "tensor<2x2x6x8xf32>"));

  HostArray input = randomArray({2, 6, 32}, 99);
  HostArray out = run(trace, {{"x", input}})[0];
  for (int64_t i = 0; i < out.numel(); ++i)
    ASSERT_TRUE(std::isfinite(out.getDouble(i)));
  // Causality: changing the last position leaves earlier ones unchanged.
  HostArray changed = input;
  for (int64_t c = 0; c < 32; ++c)
    changed.setDouble((0 * 6 + 5) * 32 + c, 3.0);
  HostArray out2 = run(trace, {{"x", changed}})[0];
  for (int64_t s = 0; s < 5; ++s)
    for (int64_t c = 0; c < 32; ++c)
      EXPECT_EQ(out.getDouble(s * 32 + c), out2.getDouble(s * 32 + c));
  bool lastChanged = false;
  for (int64_t c = 0; c < 32; ++c)
    lastChanged |= out.getDouble(5 * 32 + c) != out2.getDouble(5 * 32 + c);
  EXPECT_TRUE(lastChanged);
}

TEST(Frontend, AttentionMatchesAnIndependentLoop) {
  Trace trace("f");
  Tensor q = trace.input("q", DType::F64, {1, 4, 3, 5});
  Tensor k = trace.input("k", DType::F64, {1, 2, 3, 5});
  Tensor v = trace.input("v", DType::F64, {1, 2, 3, 5});
  trace.output("o", scaled_dot_product_attention(q, k, v, std::nullopt, true));
  HostArray qv = randomArray({1, 4, 3, 5}, 1, -1, 1, DType::F64),
            kv = randomArray({1, 2, 3, 5}, 2, -1, 1, DType::F64),
            vv = randomArray({1, 2, 3, 5}, 3, -1, 1, DType::F64);
  HostArray o = run(trace, {{"q", qv}, {"k", kv}, {"v", vv}})[0];
  for (int64_t h = 0; h < 4; ++h)
    for (int64_t i = 0; i < 3; ++i) {
      std::vector<double> w;
      double total = 0;
      for (int64_t j = 0; j <= i; ++j) {
        double s = 0;
        for (int64_t c = 0; c < 5; ++c)
          s += qv.getDouble((h * 3 + i) * 5 + c) *
               kv.getDouble(((h / 2) * 3 + j) * 5 + c);
        w.push_back(std::exp(s / std::sqrt(5.0)));
        total += w.back();
      }
      for (int64_t c = 0; c < 5; ++c) {
        double expected = 0;
        for (int64_t j = 0; j <= i; ++j)
          expected += w[j] / total * vv.getDouble(((h / 2) * 3 + j) * 5 + c);
        EXPECT_NEAR(o.getDouble((h * 3 + i) * 5 + c), expected, 1e-12);
      }
    }
}

TEST(Frontend, BoolAttentionMaskAdmitsTheTrueKeys) {
  // A bool mask equal to the causal one gives the causal result.
  Trace trace("f");
  Tensor q = trace.input("q", DType::F64, {1, 2, 3, 4});
  Tensor k = trace.input("k", DType::F64, {1, 1, 3, 4});
  Tensor causal =
      le(arange(trace, 3).unsqueeze(0), arange(trace, 3).unsqueeze(1));
  trace.output("masked", scaled_dot_product_attention(q, k, k, causal));
  trace.output("causal",
               scaled_dot_product_attention(q, k, k, std::nullopt, true));
  std::vector<HostArray> o =
      run(trace, {{"q", randomArray({1, 2, 3, 4}, 1, -1, 1, DType::F64)},
                  {"k", randomArray({1, 1, 3, 4}, 2, -1, 1, DType::F64)}});
  for (int64_t i = 0; i < o[1].numel(); ++i)
    EXPECT_NEAR(o[0].getDouble(i), o[1].getDouble(i), 1e-15) << i;
}

TEST(Frontend, TracesShareAModuleAndItsParameters) {
  nn::Linear layer(3, 2);
  auto first = std::make_unique<Trace>("first");
  first->bind(layer);
  first->output("y", layer(first->input("x", DType::F32, {1, 3})));
  first->finish();
  Trace second("second", *first);
  second.bind(layer);
  second.output("y", layer(second.input("x", DType::F32, {4, 3})));
  second.finish();
  EXPECT_THROW(Trace("second", second), Error);

  mlir::ModuleOp module = second.module();
  EXPECT_EQ(module, first->module());
  EXPECT_TRUE(module.lookupSymbol("first"));
  // The module outlives the trace that created it.
  first.reset();
  EXPECT_TRUE(module.lookupSymbol("second"));
  HostArray x = randomArray({4, 3}, 5);
  EXPECT_EQ(run(second, {{"x", x}})[0].shape(), (Shape{4, 2}));
}

TEST(Frontend, UnboundParameterIsAClearError) {
  nn::Linear layer(3, 2);
  Trace trace("f");
  Tensor x = trace.input("x", DType::F32, {1, 3});
  try {
    (void)layer(x);
    FAIL() << "expected an error";
  } catch (const Error &e) {
    EXPECT_THAT(e.what(), HasSubstr("not bound"));
  }
}

TEST(Frontend, DuplicateInputNamesAreRejected) {
  Trace trace("f");
  (void)trace.input("x", DType::F32, {1});
  EXPECT_THROW((void)trace.input("x", DType::F32, {1}), Error);
}

} // namespace

namespace {

// bind_cast: a bf16 parameter is a bf16 argument that the model reads cast
// to f32, so the forward equals the f32 layer on the rounded weights.
TEST(Frontend, BindCastReadsSixteenBitParametersWidened) {
  Generator generator(5);
  nn::Linear sixteen(4, 3, /*bias=*/true, generator);
  sixteen.to(DType::BF16);
  Generator same(5);
  nn::Linear wide(4, 3, /*bias=*/true, same);
  wide.to(DType::BF16);
  wide.to(DType::F32); // the same rounded values, stored in f32

  HostArray x = randomArray({2, 4}, 9);
  auto run = [&](nn::Linear &layer, bool cast) {
    Trace trace("forward");
    if (cast)
      trace.bind_cast(layer, DType::F32);
    else
      trace.bind(layer);
    trace.output("y", layer.forward(trace.input("x", DType::F32, {2, 4})));
    std::string ir = trace.str();
    std::vector<HostArray> y =
        evaluate(trace.finish(), trace.arguments({{"x", x}}));
    return std::make_pair(ir, y.at(0));
  };
  auto [castIr, castY] = run(sixteen, true);
  EXPECT_THAT(castIr, HasSubstr("tensor<3x4xbf16>"));
  EXPECT_THAT(
      castIr,
      HasSubstr("genesis.cast %arg0 : tensor<3x4xbf16> to tensor<3x4xf32>"));
  auto [wideIr, wideY] = run(wide, false);
  ASSERT_EQ(castY.numel(), wideY.numel());
  for (int64_t i = 0; i < castY.numel(); ++i)
    EXPECT_EQ(castY.getDouble(i), wideY.getDouble(i)) << i;
}

// Module::to and KvCacheBuffers take float types only, each with a message
// that names the type.
TEST(Frontend, IntegerParameterTypesAreRefused) {
  nn::Linear layer(2, 2);
  try {
    layer.to(DType::I32);
    ADD_FAILURE() << "Module::to(i32) did not throw";
  } catch (const Error &e) {
    EXPECT_THAT(e.what(), HasSubstr("Module::to: i32 is not a floating-point "
                                    "type"));
  }
  EXPECT_EQ(layer.weight.data().dtype(), DType::F32);
  try {
    nn::KvCacheBuffers caches(1, 1, 1, 4, 2, DType::I64);
    ADD_FAILURE() << "an i64 cache did not throw";
  } catch (const Error &e) {
    EXPECT_THAT(
        e.what(),
        HasSubstr("KvCacheBuffers: the cache must hold floats, not i64"));
  }
}

} // namespace
