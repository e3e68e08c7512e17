//===- OptimTest.cpp - Compiled train steps against PyTorch ---------------===//
//
// Three training steps of the MLP with each optimizer, compiled by
// compile_train_step (genesis-autodiff + genesis-train-step) and run by the
// reference evaluator, against the golden values PyTorch computed for the
// same initial weights and batch (scripts/golden/optimizer_goldens.py; the
// test itself needs no PyTorch).
//
// Tolerance: f32. The evaluator rounds each op once from an f64 result while
// PyTorch accumulates its GEMMs in f32 in another order, so values agree to a
// few f32 ulps per op; after three steps parameters agree within
// 2e-6 + 1e-5 * |value| and losses within 1e-5 relative.
//
//===----------------------------------------------------------------------===//

#include "frontend/Optim.h"
#include "models/mlp/Mlp.h"
#include "runtime/formats/ArrayIO.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include <cmath>

using namespace genesis;

namespace {

std::string dataPath(const std::string &name) {
  return std::string(GENESIS_TEST_DATA_DIR) + "/optim/" + name;
}

std::map<std::string, HostArray> load(const std::string &name) {
  std::map<std::string, HostArray> arrays;
  for (auto &[key, array] : loadSafetensors(dataPath(name)))
    arrays.emplace(key, std::move(array));
  return arrays;
}

/// Largest |actual - expected| / (2e-6 + 1e-5 |expected|) over all elements.
double scaledError(const HostArray &actual, const HostArray &expected) {
  EXPECT_EQ(actual.typeString(), expected.typeString());
  double worst = 0;
  for (int64_t i = 0; i < std::min(actual.numel(), expected.numel()); ++i)
    worst =
        std::max(worst, std::fabs(actual.getDouble(i) - expected.getDouble(i)) /
                            (2e-6 + 1e-5 * std::fabs(expected.getDouble(i))));
  return worst;
}

/// The golden files' 784-32-10 MLP with their initial weights.
std::shared_ptr<nn::Sequential>
mlpWithInitialWeights(const std::map<std::string, HostArray> &initial) {
  Generator generator(0);
  auto mlp = models::makeMlp(32, generator);
  NamedArrays weights;
  for (const char *name : {"0.weight", "0.bias", "2.weight", "2.bias"})
    weights.emplace_back(name, initial.at(name));
  mlp->load_state_dict(weights);
  return mlp;
}

void checkAgainstTorch(const std::string &config, const optim::Optimizer &opt,
                       const optim::TrainStepOptions &options = {}) {
  SCOPED_TRACE(config);
  std::map<std::string, HostArray> initial = load("initial.safetensors");
  std::map<std::string, HostArray> golden = load(config + ".safetensors");
  auto mlp = mlpWithInitialWeights(initial);

  std::map<std::string, HostArray> batch = {{"images", initial.at("images")},
                                            {"labels", initial.at("labels")}};
  optim::TrainStep step = optim::compile_train_step(
      *mlp,
      [&](const std::map<std::string, Tensor> &b) {
        return cross_entropy(mlp->forward(b.at("images")), b.at("labels"));
      },
      opt, batch, options);
  const HostArray &losses = golden.at("losses");
  for (int64_t s = 0; s < losses.numel(); ++s) {
    double loss = step.step(batch);
    EXPECT_NEAR(loss, losses.getDouble(s),
                1e-5 * std::fabs(losses.getDouble(s)))
        << "step " << s + 1;
  }
  EXPECT_EQ(step.steps(), losses.numel());
  for (auto &[name, value] : mlp->state_dict())
    EXPECT_LT(scaledError(value, golden.at(name)), 1.0) << name;
  int states = 0;
  for (auto &[name, value] : step.state_dict()) {
    if (name == "step")
      continue;
    auto it = golden.find(name);
    ASSERT_NE(it, golden.end()) << "PyTorch has no state " << name;
    EXPECT_LT(scaledError(value, it->second), 1.0) << name;
    ++states;
  }
  int goldenStates = 0;
  for (auto &[name, value] : golden)
    goldenStates += name.find(".exp_avg") != std::string::npos ||
                    name.find(".momentum_buffer") != std::string::npos;
  EXPECT_EQ(states, goldenStates);
}

TEST(Optim, SgdMatchesPyTorch) { checkAgainstTorch("sgd", optim::SGD{0.05}); }

TEST(Optim, SgdMomentumDampeningWeightDecayMatchesPyTorch) {
  optim::SGD sgd;
  sgd.lr = 0.05;
  sgd.momentum = 0.9;
  sgd.dampening = 0.1;
  sgd.weight_decay = 1e-3;
  checkAgainstTorch("sgd_momentum", sgd);
}

TEST(Optim, SgdNesterovMatchesPyTorch) {
  optim::SGD sgd;
  sgd.lr = 0.05;
  sgd.momentum = 0.9;
  sgd.nesterov = true;
  checkAgainstTorch("sgd_nesterov", sgd);
}

TEST(Optim, AdamMatchesPyTorch) {
  optim::Adam adam;
  adam.beta1 = 0.8;
  adam.beta2 = 0.99;
  adam.weight_decay = 1e-2;
  checkAgainstTorch("adam", adam);
}

TEST(Optim, AdamWMatchesPyTorch) {
  optim::AdamW adamw;
  adamw.weight_decay = 0.1;
  checkAgainstTorch("adamw", adamw);
}

TEST(Optim, ClipGradNormMatchesPyTorch) {
  optim::SGD sgd;
  sgd.lr = 0.05;
  sgd.momentum = 0.5;
  optim::TrainStepOptions options;
  options.clip_grad_norm = 0.25;
  checkAgainstTorch("sgd_clip_norm", sgd, options);
}

TEST(Optim, SchedulesMatchPyTorch) {
  std::map<std::string, HostArray> golden = load("schedules.safetensors");
  std::map<std::string, optim::Schedule> ours = {
      {"step_lr", optim::step_lr(0.1, 6, 0.5)},
      {"exponential_lr", optim::exponential_lr(0.1, 0.9)},
      {"cosine_annealing_lr", optim::cosine_annealing_lr(0.1, 15, 0.01)},
      {"lambda_lr",
       optim::lambda_lr(0.1, [](int64_t step) { return 1.0 / (1 + step); })}};
  for (auto &[name, schedule] : ours)
    for (int64_t s = 0; s < 20; ++s)
      EXPECT_NEAR(schedule(s), golden.at(name).getDouble(s),
                  1e-7 + 1e-6 * golden.at(name).getDouble(s))
          << name << " step " << s;
  optim::Schedule warmup = optim::warmup_cosine_lr(1.0, 4, 14, 0.1);
  EXPECT_DOUBLE_EQ(warmup(0), 0.25);
  EXPECT_DOUBLE_EQ(warmup(3), 1.0);
  EXPECT_NEAR(warmup(9), 0.55, 1e-12);
  EXPECT_NEAR(warmup(14), 0.1, 1e-12);
}

TEST(Optim, GradientAccumulationEqualsOneBigBatch) {
  // Two micro-batches of 8 equal one step on the 16-image batch.
  std::map<std::string, HostArray> initial = load("initial.safetensors");
  auto whole = mlpWithInitialWeights(initial),
       accumulated = mlpWithInitialWeights(initial);
  auto lossOf = [](nn::Sequential &m) {
    return [&m](const std::map<std::string, Tensor> &b) {
      return cross_entropy(m.forward(b.at("images")), b.at("labels"));
    };
  };
  optim::Adam adam;
  std::map<std::string, HostArray> batch = {{"images", initial.at("images")},
                                            {"labels", initial.at("labels")}};
  optim::TrainStep big =
      optim::compile_train_step(*whole, lossOf(*whole), adam, batch);
  HostArray halfImages(DType::F32, {8, 784});
  HostArray halfLabels(DType::I64, {8});
  optim::TrainStepOptions options;
  options.accumulation = 2;
  optim::TrainStep small = optim::compile_train_step(
      *accumulated, lossOf(*accumulated), adam,
      {{"images", halfImages}, {"labels", halfLabels}}, options);
  HostArray images = initial.at("images"), labels = initial.at("labels");
  std::map<std::string, HostArray> micro = {
      {"images", HostArray(DType::F32, {2, 8, 784})},
      {"labels", HostArray(DType::I64, {2, 8})}};
  std::memcpy(micro["images"].data(), images.data(), images.nbytes());
  std::memcpy(micro["labels"].data(), labels.data(), labels.nbytes());
  double bigLoss = big.step(batch), smallLoss = small.step(micro);
  EXPECT_NEAR(bigLoss, smallLoss, 1e-6);
  auto a = whole->state_dict(), b = accumulated->state_dict();
  for (size_t i = 0; i < a.size(); ++i)
    EXPECT_LT(scaledError(b[i].second, a[i].second), 1.0) << a[i].first;
}

TEST(Optim, OptimizerStateRoundTrips) {
  Generator generator(1);
  auto mlp = models::makeMlp(8, generator);
  HostArray images(DType::F32, {4, 784}), labels(DType::I64, {4});
  generator.fill_uniform(images, 0, 1);
  std::map<std::string, HostArray> batch = {{"images", images},
                                            {"labels", labels}};
  auto loss = [&](const std::map<std::string, Tensor> &b) {
    return cross_entropy(mlp->forward(b.at("images")), b.at("labels"));
  };
  optim::TrainStep step =
      optim::compile_train_step(*mlp, loss, optim::Adam{}, batch);
  step.step(batch);
  NamedArrays saved = step.state_dict();
  EXPECT_EQ(saved.back().first, "step");
  EXPECT_EQ(saved.back().second.getInt(0), 1);
  step.step(batch);
  step.load_state_dict(saved);
  EXPECT_EQ(step.steps(), 1);
  NamedArrays wrong = saved;
  wrong[0].second = HostArray(DType::F32, {1});
  EXPECT_THROW(step.load_state_dict(wrong), Error);
  EXPECT_EQ(step.steps(), 1);
}

// GradScaler semantics (loss-scale=dynamic), on the evaluator in f32: the
// scales are powers of two, so a clean step equals the unscaled step bit for
// bit; a batch with an infinity is skipped (nothing changes but the scale,
// which halves, and the counters); after `growth_interval` clean steps the
// scale doubles; Adam's step count leaves out the skipped step.
TEST(Optim, DynamicLossScaleSkipsOverflowAndGrows) {
  std::map<std::string, HostArray> initial = load("initial.safetensors");
  auto plain = mlpWithInitialWeights(initial),
       scaled = mlpWithInitialWeights(initial);
  auto lossOf = [](nn::Sequential &m) {
    return [&m](const std::map<std::string, Tensor> &b) {
      return cross_entropy(m.forward(b.at("images")), b.at("labels"));
    };
  };
  std::map<std::string, HostArray> batch = {{"images", initial.at("images")},
                                            {"labels", initial.at("labels")}};
  std::map<std::string, HostArray> overflow = batch;
  overflow["images"].setDouble(5, INFINITY);
  optim::Adam adam;
  optim::TrainStepOptions options;
  options.loss_scale = "dynamic";
  options.growth_interval = 2;
  optim::TrainStep reference =
      optim::compile_train_step(*plain, lossOf(*plain), adam, batch);
  optim::TrainStep step =
      optim::compile_train_step(*scaled, lossOf(*scaled), adam, batch, options);
  auto ampState = [&](const std::string &name) -> double {
    for (auto &[key, value] : step.state_dict())
      if (key == name)
        return value.getDouble(0);
    ADD_FAILURE() << "no state " << name;
    return NAN;
  };
  auto expectSameWeights = [&](const char *when) {
    auto a = plain->state_dict(), b = scaled->state_dict();
    for (size_t i = 0; i < a.size(); ++i)
      for (int64_t e = 0; e < a[i].second.numel(); ++e)
        ASSERT_EQ(a[i].second.getDouble(e), b[i].second.getDouble(e))
            << when << ": " << a[i].first << " element " << e;
  };

  EXPECT_EQ(reference.step(batch), step.step(batch));
  expectSameWeights("after a clean step");
  EXPECT_EQ(ampState("amp.loss_scale"), 65536.0);
  EXPECT_EQ(ampState("amp.growth_tracker"), 1.0);

  NamedArrays before = scaled->state_dict();
  NamedArrays stateBefore = step.state_dict();
  EXPECT_FALSE(std::isfinite(step.step(overflow)));
  NamedArrays after = scaled->state_dict();
  for (size_t i = 0; i < before.size(); ++i)
    for (int64_t e = 0; e < before[i].second.numel(); ++e)
      ASSERT_EQ(before[i].second.getDouble(e), after[i].second.getDouble(e))
          << "skipped step changed " << before[i].first;
  for (auto &[name, value] : step.state_dict())
    if (name.find(".exp_avg") != std::string::npos) {
      for (auto &[oldName, old] : stateBefore) {
        if (oldName == name) {
          for (int64_t e = 0; e < old.numel(); ++e)
            ASSERT_EQ(old.getDouble(e), value.getDouble(e)) << name;
        }
      }
    }
  EXPECT_EQ(ampState("amp.loss_scale"), 32768.0);
  EXPECT_EQ(ampState("amp.growth_tracker"), 0.0);
  EXPECT_EQ(ampState("amp.skipped_steps"), 1.0);

  // Two clean steps: the second reaches the growth interval.
  for (int k = 0; k < 2; ++k)
    EXPECT_EQ(reference.step(batch), step.step(batch));
  expectSameWeights("after the skipped step and two clean ones");
  EXPECT_EQ(ampState("amp.loss_scale"), 65536.0);
  EXPECT_EQ(ampState("amp.growth_tracker"), 0.0);
  EXPECT_EQ(ampState("amp.skipped_steps"), 1.0);
}

} // namespace
