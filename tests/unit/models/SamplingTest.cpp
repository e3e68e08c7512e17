//===- SamplingTest.cpp - Tests for next-token sampling -------------------===//

#include "models/common/Sampling.h"

#include <gtest/gtest.h>

#include "tests/unit/TestSupport.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <set>

using namespace genesis;
using namespace genesis::test;
using namespace genesis::text;

namespace {

constexpr float kInfinity = std::numeric_limits<float>::infinity();

std::vector<float> randomLogits(std::mt19937 &random, int64_t size) {
  std::normal_distribution<float> normal(0.0f, 2.0f);
  std::vector<float> logits(size);
  for (float &logit : logits)
    logit = normal(random);
  return logits;
}

int64_t argmaxOf(const std::vector<float> &logits) {
  return std::max_element(logits.begin(), logits.end()) - logits.begin();
}

/// softmax(logits / temperature), in double.
std::vector<double> softmax(const std::vector<float> &logits,
                            double temperature) {
  double largest = *std::max_element(logits.begin(), logits.end());
  std::vector<double> probabilities;
  double total = 0;
  for (float logit : logits) {
    probabilities.push_back(std::exp((logit - largest) / temperature));
    total += probabilities.back();
  }
  for (double &probability : probabilities)
    probability /= total;
  return probabilities;
}

SamplingOptions options(double temperature, int64_t topK = 0, double topP = 1.0,
                        uint64_t seed = 0) {
  SamplingOptions result;
  result.temperature = temperature;
  result.topK = topK;
  result.topP = topP;
  result.seed = seed;
  return result;
}

std::vector<int64_t> tokensOf(const std::vector<TokenProbability> &items) {
  std::vector<int64_t> tokens;
  tokens.reserve(items.size());
  for (const TokenProbability &item : items)
    tokens.push_back(item.token);
  return tokens;
}

} // namespace

TEST(SamplingTest, GreedyIsArgmax) {
  std::mt19937 random(1);
  for (int trial = 0; trial < 100; ++trial) {
    std::vector<float> logits = randomLogits(random, 50);
    for (uint64_t step = 0; step < 5; ++step)
      EXPECT_EQ(
          sampleToken(logits.data(), 50, options(0.0, 0, 1.0, trial), step),
          argmaxOf(logits));
  }
  // Ties go to the first most likely token, as torch.argmax.
  std::vector<float> tied = {1.0f, 3.0f, -kInfinity, 3.0f};
  EXPECT_EQ(sampleToken(tied.data(), 4, options(0.0), 0), 1);
  std::vector<TokenProbability> greedy =
      samplingDistribution(tied.data(), 4, options(0.0));
  ASSERT_EQ(greedy.size(), 1u);
  EXPECT_EQ(greedy[0].token, 1);
  EXPECT_EQ(greedy[0].probability, 1.0);
}

TEST(SamplingTest, TopKOneIsGreedy) {
  std::mt19937 random(2);
  for (int trial = 0; trial < 100; ++trial) {
    std::vector<float> logits = randomLogits(random, 50);
    Sampler sampler(options(1.5, 1, 1.0, trial));
    for (int step = 0; step < 5; ++step)
      EXPECT_EQ(sampler.sample(logits), argmaxOf(logits));
  }
}

TEST(SamplingTest, TemperatureGivesSoftmaxOfScaledLogits) {
  std::vector<float> logits = {2.0f, -1.0f, 0.5f, 0.0f};
  std::vector<TokenProbability> distribution =
      samplingDistribution(logits.data(), 4, options(0.5));
  std::vector<double> expected = softmax(logits, 0.5);
  EXPECT_EQ(tokensOf(distribution), (std::vector<int64_t>{0, 2, 3, 1}));
  for (const TokenProbability &item : distribution)
    EXPECT_NEAR(item.probability, expected[item.token], 1e-12);
}

TEST(SamplingTest, TopKKeepsTheKLargestAndTiesWithTheKth) {
  std::vector<float> logits = {0.1f, 3.0f, -2.0f, 2.0f, 1.0f, 2.0f, 0.5f};
  std::vector<TokenProbability> top2 =
      samplingDistribution(logits.data(), 7, options(1.0, 2));
  EXPECT_EQ(tokensOf(top2), (std::vector<int64_t>{1, 3, 5}));
  std::vector<double> expected = softmax({3.0f, 2.0f, 2.0f}, 1.0);
  for (size_t i = 0; i < top2.size(); ++i)
    EXPECT_NEAR(top2[i].probability, expected[i], 1e-12);
  EXPECT_EQ(tokensOf(samplingDistribution(logits.data(), 7, options(1.0, 4))),
            (std::vector<int64_t>{1, 3, 5, 4}));
  // k at or past the vocabulary keeps every token.
  EXPECT_EQ(samplingDistribution(logits.data(), 7, options(1.0, 7)).size(), 7u);
  EXPECT_EQ(samplingDistribution(logits.data(), 7, options(1.0, 100)).size(),
            7u);
}

TEST(SamplingTest, TopPKeepsTheSmallestSetReachingP) {
  // Probabilities 0.05, 0.5, 0.15, 0.3 at ids 0..3.
  std::vector<float> logits = {std::log(0.05f), std::log(0.5f), std::log(0.15f),
                               std::log(0.3f)};
  auto nucleus = [&](double topP) {
    return tokensOf(
        samplingDistribution(logits.data(), 4, options(1.0, 0, topP)));
  };
  EXPECT_EQ(nucleus(1e-9), (std::vector<int64_t>{1}));
  EXPECT_EQ(nucleus(0.45), (std::vector<int64_t>{1}));
  EXPECT_EQ(nucleus(0.55), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(nucleus(0.75), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(nucleus(0.85), (std::vector<int64_t>{1, 3, 2}));
  EXPECT_EQ(nucleus(0.97), (std::vector<int64_t>{1, 3, 2, 0}));
  EXPECT_EQ(nucleus(1.0), (std::vector<int64_t>{1, 3, 2, 0}));

  std::vector<TokenProbability> kept =
      samplingDistribution(logits.data(), 4, options(1.0, 0, 0.75));
  EXPECT_NEAR(kept[0].probability, 0.5 / 0.8, 1e-6);
  EXPECT_NEAR(kept[1].probability, 0.3 / 0.8, 1e-6);
}

TEST(SamplingTest, TopPActsOnTheTemperedTopKDistribution) {
  std::vector<float> logits = {std::log(0.05f), std::log(0.5f), std::log(0.15f),
                               std::log(0.3f)};
  // Temperature 2 flattens to about 0.38, 0.29, 0.21, 0.12: reaching 0.75
  // now takes three tokens.
  EXPECT_EQ(
      tokensOf(samplingDistribution(logits.data(), 4, options(2.0, 0, 0.75))),
      (std::vector<int64_t>{1, 3, 2}));
  // Top-k first: of the two kept (0.625, 0.375) the first alone reaches 0.6.
  EXPECT_EQ(
      tokensOf(samplingDistribution(logits.data(), 4, options(1.0, 2, 0.6))),
      (std::vector<int64_t>{1}));
}

TEST(SamplingTest, MaskedTokensAreNeverChosen) {
  std::vector<float> logits = {0.0f, -kInfinity, 0.0f, -kInfinity};
  std::vector<TokenProbability> distribution =
      samplingDistribution(logits.data(), 4, options(1.0));
  EXPECT_EQ(tokensOf(distribution), (std::vector<int64_t>{0, 2}));
  Sampler sampler(options(1.0, 0, 1.0, 5));
  for (int step = 0; step < 1000; ++step) {
    int64_t token = sampler.sample(logits);
    EXPECT_TRUE(token == 0 || token == 2) << token;
  }
}

TEST(SamplingTest, SamplesStayInTheKeptSet) {
  std::mt19937 random(3);
  std::vector<float> logits = randomLogits(random, 100);
  SamplingOptions nucleus = options(0.8, 20, 0.7, 11);
  std::set<int64_t> kept;
  for (const TokenProbability &item :
       samplingDistribution(logits.data(), 100, nucleus))
    kept.insert(item.token);
  ASSERT_GT(kept.size(), 1u);
  ASSERT_LT(kept.size(), 20u);
  std::set<int64_t> drawn;
  Sampler sampler(nucleus);
  for (int step = 0; step < 5000; ++step)
    drawn.insert(sampler.sample(logits));
  EXPECT_EQ(drawn, kept);
}

TEST(SamplingTest, SeededRunsRepeatAndResume) {
  std::mt19937 random(4);
  std::vector<float> logits = randomLogits(random, 64);
  Sampler first(options(1.0, 0, 1.0, 77)), second(options(1.0, 0, 1.0, 77));
  std::vector<int64_t> run;
  for (int step = 0; step < 1000; ++step) {
    run.push_back(first.sample(logits));
    EXPECT_EQ(second.sample(logits), run.back());
  }
  EXPECT_EQ(first.step(), 1000u);
  // The token of a step depends on (seed, step) alone.
  Sampler resumed(options(1.0, 0, 1.0, 77), 500);
  for (int step = 500; step < 1000; ++step)
    EXPECT_EQ(resumed.sample(logits), run[step]);
  EXPECT_EQ(sampleToken(logits.data(), 64, options(1.0, 0, 1.0, 77), 123),
            run[123]);
}

TEST(SamplingTest, DifferentSeedsGiveDifferentRuns) {
  std::vector<float> uniform(50, 0.0f);
  Sampler a(options(1.0, 0, 1.0, 1)), b(options(1.0, 0, 1.0, 2));
  int differences = 0;
  for (int step = 0; step < 200; ++step)
    differences += a.sample(uniform) != b.sample(uniform);
  // Independent uniform draws over 50 tokens agree about 4 times in 200.
  EXPECT_GT(differences, 180);
}

// 20000 draws at temperature 0.7: each token's frequency must lie within 5
// standard deviations, sqrt(p (1 - p) / N), of its probability in
// softmax(logits / 0.7). A correct sampler fails one token's check with
// probability below 6e-7; the seed makes the run deterministic anyway.
TEST(SamplingTest, FrequenciesMatchTheTemperedSoftmax) {
  constexpr int kDraws = 20000;
  constexpr double kTemperature = 0.7;
  std::vector<float> logits = {2.0f,  1.0f,  0.5f, 0.0f,
                               -0.5f, -1.0f, 1.5f, 0.25f};
  std::vector<double> expected = softmax(logits, kTemperature);
  auto tolerance = [&](double p) {
    return 5 * std::sqrt(p * (1 - p) / kDraws);
  };
  // The check can tell temperature 0.7 from temperature 1.
  std::vector<double> untempered = softmax(logits, 1.0);
  bool distinguishable = false;
  for (size_t i = 0; i < logits.size(); ++i)
    distinguishable |=
        std::abs(untempered[i] - expected[i]) > 2 * tolerance(expected[i]);
  ASSERT_TRUE(distinguishable);

  std::vector<int> counts(logits.size());
  Sampler sampler(options(kTemperature, 0, 1.0, 2024));
  for (int draw = 0; draw < kDraws; ++draw)
    ++counts[sampler.sample(logits)];
  for (size_t i = 0; i < logits.size(); ++i) {
    double frequency = static_cast<double>(counts[i]) / kDraws;
    EXPECT_NEAR(frequency, expected[i], tolerance(expected[i]))
        << "token " << i;
  }
}

// transformers' RepetitionPenaltyLogitsProcessor: a token of the context
// (observed prompt tokens and earlier samples) has its positive logit divided
// by the penalty and its negative one multiplied, before anything else, also
// when decoding greedily; others are untouched.
TEST(SamplingTest, RepetitionPenaltyActsOnTheContext) {
  SamplingOptions greedy = options(0.0);
  greedy.repetitionPenalty = 2.0;
  // 0 leads (4.0); once seen it scores 2.0, below 1's 3.0.
  std::vector<float> logits = {4.0f, 3.0f, -1.0f, -0.5f};
  Sampler sampler(greedy);
  EXPECT_EQ(sampler.sample(logits), 0);
  EXPECT_EQ(sampler.sample(logits), 1);
  // 0 and 1 seen: 2.0, 1.5, -1.0, -0.5.
  EXPECT_EQ(sampler.sample(logits), 0);
  // A negative logit is multiplied: 2's -1.0 becomes -2.0, below 1's -1.5.
  Sampler negative(greedy);
  std::vector<float> below = {-3.0f, -1.5f, -1.0f};
  negative.observe(2);
  EXPECT_EQ(negative.sample(below), 1);
  // A prompt token observed twice counts once; ids past the row are ignored.
  Sampler prompt(greedy);
  for (int64_t token : {0, 0, 7})
    prompt.observe(token);
  EXPECT_EQ(prompt.sample(logits), 1);
  // With sampling, the draw is sampleToken's on the penalized logits.
  std::vector<float> penalized = {4.0f / 1.5f, 3.0f, -1.0f, -0.5f};
  for (uint64_t seed = 0; seed < 20; ++seed) {
    SamplingOptions warm = options(1.0, 0, 1.0, seed);
    warm.repetitionPenalty = 1.5;
    Sampler tempered(warm);
    tempered.observe(0);
    EXPECT_EQ(tempered.sample(logits),
              sampleToken(penalized.data(), 4, warm, 0));
  }
  // 1 changes nothing: the same tokens as sampleToken at every step.
  Sampler plain(options(1.0, 0, 1.0, 5));
  plain.observe(1);
  for (uint64_t step = 0; step < 10; ++step)
    EXPECT_EQ(plain.sample(logits),
              sampleToken(logits.data(), 4, options(1.0, 0, 1.0, 5), step));
}

TEST(SamplingTest, RejectsBadOptions) {
  std::vector<float> logits = {0.0f, 1.0f};
  auto sampleWith = [&](const SamplingOptions &bad) {
    return errorFrom([&] { sampleToken(logits.data(), 2, bad, 0); });
  };
  EXPECT_TRUE(contains(sampleWith(options(-0.5)), "temperature"));
  EXPECT_TRUE(contains(sampleWith(options(std::nan(""))), "temperature"));
  EXPECT_TRUE(contains(sampleWith(options(1.0, -1)), "top_k"));
  EXPECT_TRUE(contains(sampleWith(options(1.0, 0, 0.0)), "top_p"));
  EXPECT_TRUE(contains(sampleWith(options(1.0, 0, 1.5)), "top_p"));
  EXPECT_TRUE(contains(sampleWith(options(1.0, 0, std::nan(""))), "top_p"));
  EXPECT_TRUE(
      contains(errorFrom([] { Sampler sampler(options(1.0, 0, -0.1)); }),
               "top_p must be in (0, 1]"));
  for (double penalty :
       {0.0, -1.0, std::nan(""), std::numeric_limits<double>::infinity()}) {
    SamplingOptions bad = options(1.0);
    bad.repetitionPenalty = penalty;
    EXPECT_TRUE(contains(sampleWith(bad), "repetition_penalty must be a "
                                          "finite number > 0"));
  }
  EXPECT_TRUE(contains(errorFrom([] {
                         Sampler sampler(options(1.0));
                         sampler.observe(-1);
                       }),
                       "token -1 is not a token id"));
}

TEST(SamplingTest, RejectsBadLogits) {
  std::vector<float> withNan = {0.0f, std::nanf(""), 1.0f};
  EXPECT_TRUE(contains(
      errorFrom([&] { sampleToken(withNan.data(), 3, options(1.0), 0); }),
      "logits[1] is nan"));
  std::vector<float> withInf = {kInfinity, 0.0f};
  EXPECT_TRUE(contains(
      errorFrom([&] { sampleToken(withInf.data(), 2, options(0.0), 0); }),
      "logits[0] is inf"));
  std::vector<float> allMasked = {-kInfinity, -kInfinity};
  EXPECT_TRUE(contains(
      errorFrom([&] { sampleToken(allMasked.data(), 2, options(1.0), 0); }),
      "every logit is -inf"));
  EXPECT_TRUE(contains(
      errorFrom([&] { sampleToken(withNan.data(), 0, options(1.0), 0); }),
      "no logits"));
  EXPECT_TRUE(contains(
      errorFrom([&] { samplingDistribution(nullptr, 3, options(1.0)); }),
      "no logits"));
}
