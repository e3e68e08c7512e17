//===- SessionTest.cpp - Executing plans on the CPU -----------------------===//

#include "PlanTestSupport.h"

#include "runtime/session/Session.h"
#include "runtime/support/Random.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>

using namespace genesis;
using namespace genesis::test;

namespace {

using Arrays = std::map<std::string, HostArray>;

HostArray f32(std::vector<int64_t> shape, const std::vector<float> &values) {
  return HostArray::fromValues(DType::F32, std::move(shape), values);
}

std::vector<double> valuesOf(const HostArray &array) {
  std::vector<double> values;
  for (int64_t i = 0; i < array.numel(); ++i)
    values.push_back(array.getDouble(i));
  return values;
}

/// forward(x, y) -> sum: fills the element count, then add_f32.
PlanBuilder addPlan(const std::string &symbol = "add_f32") {
  PlanBuilder builder(testHeader());
  uint32_t x = builder.addTensor("x", DType::F32, {2, 3}, plan::Role::Input);
  uint32_t y = builder.addTensor("y", DType::F32, {2, 3}, plan::Role::Input);
  uint32_t count = builder.addTemporary("count", DType::I64, {}, 0);
  uint32_t sum =
      builder.addTensor("sum", DType::F32, {2, 3}, plan::Role::Output);
  builder.setArena(64);
  uint32_t image =
      builder.addImage(plan::ImageFormat::ElfSharedObject, testKernelImage());
  uint32_t forward = builder.addFunction("forward", {x, y}, {sum});
  builder.addFill(forward, count, 6, "model.cpp:11");
  builder.addKernelLaunch(forward, {image, symbol, {x, y, sum, count}},
                          "model.cpp:12");
  return builder;
}

TEST(SessionTest, KernelFromTheEmbeddedImageRuns) {
  Session session(planOf(addPlan()));
  Arrays inputs;
  inputs.emplace("x", f32({2, 3}, {1, 2, 3, 4, 5, 6}));
  inputs.emplace("y", f32({2, 3}, {10, 20, 30, 40, 50, 60}));
  Arrays outputs = session.run("forward", std::move(inputs));
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_EQ(outputs.at("sum").typeString(), "f32[2, 3]");
  EXPECT_EQ(valuesOf(outputs.at("sum")),
            (std::vector<double>{11, 22, 33, 44, 55, 66}));

  SessionStats stats = session.stats();
  ASSERT_EQ(stats.steps.size(), 2u);
  EXPECT_EQ(stats.steps[0].function, "forward");
  EXPECT_EQ(stats.steps[0].name, "fill count = 6");
  EXPECT_EQ(stats.steps[0].location, "model.cpp:11");
  EXPECT_EQ(stats.steps[1].name, "kernel add_f32");
  EXPECT_EQ(stats.steps[1].location, "model.cpp:12");
  EXPECT_EQ(stats.steps[1].calls, 1u);
  EXPECT_GT(stats.steps[1].totalSeconds, 0.0);
  EXPECT_EQ(stats.arenaBytes, 64u);
  EXPECT_EQ(stats.externalBytes, 0u);
  EXPECT_EQ(stats.peakBytes, 64u + 3 * 24);

  session.resetStats();
  EXPECT_EQ(session.stats().steps[1].calls, 0u);
  EXPECT_EQ(session.stats().steps[1].totalSeconds, 0.0);
  EXPECT_EQ(session.stats().peakBytes, 64u + 3 * 24);
}

TEST(SessionTest, OneKernelLaunchedByTwoSteps) {
  PlanBuilder builder(testHeader());
  uint32_t x = builder.addTensor("x", DType::F32, {3}, plan::Role::Input);
  uint32_t count = builder.addTemporary("count", DType::I64, {}, 0);
  uint32_t twice = builder.addTemporary("twice", DType::F32, {3}, 64);
  uint32_t y = builder.addTensor("y", DType::F32, {3}, plan::Role::Output);
  builder.setArena(128);
  uint32_t image =
      builder.addImage(plan::ImageFormat::ElfSharedObject, testKernelImage());
  uint32_t f = builder.addFunction("f", {x}, {y});
  builder.addFill(f, count, 3);
  builder.addKernelLaunch(f, {image, "add_f32", {x, x, twice, count}});
  builder.addKernelLaunch(f, {image, "add_f32", {twice, x, y, count}});
  Session session(planOf(builder));
  Arrays inputs;
  inputs.emplace("x", f32({3}, {1, 2, 3}));
  EXPECT_EQ(valuesOf(session.run("f", std::move(inputs)).at("y")),
            (std::vector<double>{3, 6, 9}));
}

/// Sets an environment variable for one scope.
class ScopedEnv {
public:
  ScopedEnv(const char *name, const std::string &value) : name_(name) {
    if (const char *old = std::getenv(name))
      saved_ = old;
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (saved_)
      setenv(name_, saved_->c_str(), 1);
    else
      unsetenv(name_);
  }

private:
  const char *name_;
  std::optional<std::string> saved_;
};

/// `threads` threads, splitting even the tests' tiny launches.
struct ScopedThreadCount {
  explicit ScopedThreadCount(int threads)
      : threads_("GENESIS_NUM_THREADS", std::to_string(threads)),
        bytes_("GENESIS_MIN_SPLIT_BYTES", "0") {}
  ScopedEnv threads_;
  ScopedEnv bytes_;
};

/// f(x, y) -> (sum, starts): add_f32 and chunk_starts over n elements, both
/// launched with outer extent n.
PlanFile splitPlan(int64_t n) {
  PlanBuilder builder(testHeader());
  uint32_t x = builder.addTensor("x", DType::F32, {n}, plan::Role::Input);
  uint32_t y = builder.addTensor("y", DType::F32, {n}, plan::Role::Input);
  uint32_t count = builder.addTemporary("count", DType::I64, {}, 0);
  uint32_t sum = builder.addTensor("sum", DType::F32, {n}, plan::Role::Output);
  uint32_t starts =
      builder.addTensor("starts", DType::I64, {n}, plan::Role::Output);
  builder.setArena(64);
  uint32_t image =
      builder.addImage(plan::ImageFormat::ElfSharedObject, testKernelImage());
  uint32_t f = builder.addFunction("f", {x, y}, {sum, starts});
  builder.addFill(f, count, double(n));
  KernelLaunchDesc add{image, "add_f32", {x, y, sum, count}};
  add.outerExtent = n;
  builder.addKernelLaunch(f, add);
  KernelLaunchDesc mark{image, "chunk_starts", {starts, count}};
  mark.outerExtent = n;
  builder.addKernelLaunch(f, mark);
  return planOf(builder);
}

TEST(SessionTest, SplitLaunchesMatchTheSingleThreadedRun) {
  for (int threads : {1, 2, 3})
    for (int64_t n = 1; n <= 7; ++n) {
      SCOPED_TRACE("threads " + std::to_string(threads) + ", extent " +
                   std::to_string(n));
      ScopedThreadCount scope(threads);
      Session session(splitPlan(n));
      std::vector<float> x, y;
      std::vector<double> expected;
      for (int64_t i = 0; i < n; ++i) {
        x.push_back(float(i + 1));
        y.push_back(float(10 * (i + 1)));
        expected.push_back(11.0 * (i + 1));
      }
      // Twice: the pool is reused between launches and runs.
      for (int run = 0; run < 2; ++run) {
        Arrays inputs;
        inputs.emplace("x", f32({n}, x));
        inputs.emplace("y", f32({n}, y));
        Arrays outputs = session.run("f", std::move(inputs));
        EXPECT_EQ(valuesOf(outputs.at("sum")), expected);
        // Without splitting chunk_starts writes 0 everywhere; split, each
        // element holds the start of the contiguous chunk that ran it.
        int64_t chunks = std::min<int64_t>(threads, n);
        std::vector<double> starts;
        for (int64_t i = 0; i < n; ++i) {
          int64_t chunk = 0;
          while (chunk + 1 < chunks && (chunk + 1) * n / chunks <= i)
            ++chunk;
          starts.push_back(double(chunks == 1 ? 0 : chunk * n / chunks));
        }
        EXPECT_EQ(valuesOf(outputs.at("starts")), starts);
      }
    }
}

TEST(SessionTest, KernelsWithoutARangeSymbolRunWhole) {
  ScopedThreadCount scope(3);
  PlanBuilder withExtent(testHeader());
  // sgd_f32 has no _range symbol, so its outer extent cannot split it.
  uint32_t w = withExtent.addTensor("w", DType::F32, {4}, plan::Role::Input);
  uint32_t g = withExtent.addTensor("g", DType::F32, {4}, plan::Role::Input);
  uint32_t lr = withExtent.addTemporary("lr", DType::F32, {}, 0);
  uint32_t count = withExtent.addTemporary("count", DType::I64, {}, 64);
  withExtent.setArena(128);
  uint32_t image = withExtent.addImage(plan::ImageFormat::ElfSharedObject,
                                       testKernelImage());
  uint32_t f = withExtent.addFunction("f", {w, g}, {w});
  withExtent.addFill(f, lr, 0.5);
  withExtent.addFill(f, count, 4);
  KernelLaunchDesc sgd{image, "sgd_f32", {w, g, lr, count}};
  sgd.outerExtent = 4;
  withExtent.addKernelLaunch(f, sgd);
  Session session(planOf(withExtent));
  Arrays inputs;
  inputs.emplace("w", f32({4}, {1, 2, 3, 4}));
  inputs.emplace("g", f32({4}, {2, 2, 2, 2}));
  EXPECT_EQ(valuesOf(session.run("f", std::move(inputs)).at("w")),
            (std::vector<double>{0, 1, 2, 3}));
}

TEST(SessionTest, SmallLaunchesRunOnTheCallingThread) {
  // Below GENESIS_MIN_SPLIT_BYTES (by default 512 KiB) nothing splits.
  ScopedEnv threads("GENESIS_NUM_THREADS", "3");
  ScopedEnv bytes("GENESIS_MIN_SPLIT_BYTES", "1000");
  Session session(splitPlan(6));
  Arrays inputs;
  inputs.emplace("x", f32({6}, {1, 2, 3, 4, 5, 6}));
  inputs.emplace("y", f32({6}, {1, 1, 1, 1, 1, 1}));
  EXPECT_EQ(valuesOf(session.run("f", std::move(inputs)).at("starts")),
            (std::vector<double>(6, 0)));
}

TEST(SessionTest, BadThreadCountIsAnErrorAtCreation) {
  ScopedThreadCount scope(0);
  PlanFile planFile = planOf(addPlan());
  EXPECT_TRUE(contains(errorFrom([&] { Session session(planFile); }),
                       "GENESIS_NUM_THREADS is '0', not a thread count"));
}

TEST(SessionTest, MissingSymbolIsAnErrorAtCreation) {
  PlanFile planFile = planOf(addPlan("no_such_kernel"));
  EXPECT_TRUE(contains(errorFrom([&] { Session session(planFile); }),
                       "plan file 'test.gplan': kernel image #0 has no symbol "
                       "'no_such_kernel' (function 'forward' step #1 "
                       "(model.cpp:12))"));
}

TEST(SessionTest, ImageThatIsNoSharedObject) {
  PlanBuilder builder(testHeader());
  builder.addImage(plan::ImageFormat::ElfSharedObject, {'n', 'o', 't'});
  PlanFile planFile = planOf(builder);
  EXPECT_TRUE(contains(errorFrom([&] { Session session(planFile); }),
                       "plan file 'test.gplan': kernel image #0 (elf-so) "
                       "cannot be loaded: "));
}

//===----------------------------------------------------------------------===//
// Training: in-place updates, session-fed tensors, binding
//===----------------------------------------------------------------------===//

/// train_step(w, g, lr, step, rng) -> (w, state): w -= lr * g in place and
/// state = {step, seed, offset}.
PlanFile trainPlan() {
  PlanBuilder builder(testHeader());
  uint32_t w = builder.addTensor("w", DType::F32, {4}, plan::Role::Parameter);
  uint32_t g = builder.addTensor("g", DType::F32, {4}, plan::Role::Input);
  uint32_t lr = builder.addTensor("lr", DType::F32, {}, plan::Role::Lr);
  uint32_t step = builder.addTensor("step", DType::I64, {}, plan::Role::Step);
  uint32_t rng = builder.addTensor("rng", DType::I64, {2}, plan::Role::RngSeed);
  uint32_t count = builder.addTemporary("count", DType::I64, {}, 0);
  uint32_t state =
      builder.addTensor("state", DType::I64, {3}, plan::Role::Output);
  builder.addTensor("w.momentum", DType::F32, {4}, plan::Role::OptimizerState);
  builder.setArena(8);
  uint32_t image =
      builder.addImage(plan::ImageFormat::ElfSharedObject, testKernelImage());
  uint32_t train = builder.addFunction("train_step", {w, g, lr, step, rng},
                                       {w, state}, true, 10);
  builder.addFill(train, count, 4);
  builder.addKernelLaunch(train, {image, "sgd_f32", {w, g, lr, count}});
  builder.addKernelLaunch(train, {image, "record_state", {step, rng, state}});
  return planOf(builder);
}

Arrays gradient(const std::vector<float> &values) {
  Arrays inputs;
  inputs.emplace("g", f32({4}, values));
  return inputs;
}

TEST(SessionTest, TrainingStepUpdatesParametersInPlace) {
  Session session(trainPlan());
  EXPECT_TRUE(contains(
      errorFrom([&] {
        session.run("train_step", gradient({1, 2, 3, 4}));
      }),
      "run 'train_step': parameter 'w' was never bound (use Session::bind or "
      "load a checkpoint)"));
  session.bind("w", f32({4}, {10, 20, 30, 40}));
  EXPECT_TRUE(contains(errorFrom([&] {
                         session.run("train_step", gradient({1, 2, 3, 4}));
                       }),
                       "lr 'lr' was never bound"));
  session.bind("lr", f32({}, {0.5}));
  session.setRngState({1234, 7});

  Arrays outputs = session.run("train_step", gradient({1, 2, 3, 4}));
  ASSERT_EQ(outputs.size(), 1u) << "in-place parameters are not returned";
  EXPECT_EQ(valuesOf(outputs.at("state")), (std::vector<double>{0, 1234, 7}));
  EXPECT_EQ(valuesOf(session.tensor("w")),
            (std::vector<double>{9.5, 19, 28.5, 38}));
  EXPECT_EQ(session.step(), 1u);
  EXPECT_EQ(session.rngState(), (Generator::State{1234, 17}));

  outputs = session.run("train_step", gradient({2, 2, 2, 2}));
  EXPECT_EQ(valuesOf(outputs.at("state")), (std::vector<double>{1, 1234, 17}));
  NamedArrays parameters = session.parameters();
  ASSERT_EQ(parameters.size(), 1u);
  EXPECT_EQ(parameters[0].first, "w");
  EXPECT_EQ(valuesOf(parameters[0].second),
            (std::vector<double>{8.5, 18, 27.5, 37}));
  EXPECT_EQ(session.step(), 2u);
  EXPECT_EQ(valuesOf(session.tensor("step")), (std::vector<double>{1}));
  EXPECT_EQ(valuesOf(session.tensor("w.momentum")),
            (std::vector<double>{0, 0, 0, 0}));
  EXPECT_EQ(session.stats().externalBytes, 16u + 4 + 8 + 16 + 16);
}

TEST(SessionTest, ReplayRerunsOnTheLastInputs) {
  Session session(trainPlan());
  session.bind("w", f32({4}, {10, 20, 30, 40}));
  session.bind("lr", f32({}, {0.5}));
  EXPECT_TRUE(contains(errorFrom([&] { session.replay("train_step"); }),
                       "replay 'train_step': the function has not run yet"));
  session.run("train_step", gradient({1, 2, 3, 4}));
  session.replay("train_step", 2);
  session.synchronize();
  EXPECT_EQ(valuesOf(session.tensor("w")),
            (std::vector<double>{8.5, 17, 25.5, 34}));
  EXPECT_EQ(session.step(), 3u);
  EXPECT_EQ(session.rngState().offset, 30u);
  EXPECT_EQ(session.stats().steps[0].calls, 3u);
  EXPECT_TRUE(contains(errorFrom([&] { session.replay("train_step", -2); }),
                       "replay 'train_step': times is -2, not a count"));
}

TEST(SessionTest, FailedRunsLeaveTheSessionUnchanged) {
  Session session(trainPlan());
  session.bind("w", f32({4}, {1, 1, 1, 1}));
  session.bind("lr", f32({}, {1}));
  std::vector<std::pair<Arrays, std::string>> cases;
  cases.emplace_back(Arrays{}, "run 'train_step': missing input 'g' (f32[4])");
  cases.emplace_back(gradient({1, 2, 3, 4}), "");
  cases.back().first.emplace("w", f32({4}, {0, 0, 0, 0}));
  cases.back().second = "run 'train_step': 'w' is not an input of the "
                        "function (its inputs are: g) ('w' is a parameter "
                        "tensor: bind it with Session::bind)";
  cases.emplace_back(gradient({1, 2, 3, 4}), "");
  cases.back().first.emplace("nope", f32({1}, {0}));
  cases.back().second = "'nope' is not an input of the function (its inputs "
                        "are: g)";
  Arrays wrongShape;
  wrongShape.emplace("g", f32({2, 2}, {1, 2, 3, 4}));
  cases.emplace_back(std::move(wrongShape),
                     "run 'train_step': input 'g' is f32[2, 2] but the plan "
                     "expects f32[4]");
  Arrays wrongDType;
  wrongDType.emplace("g", HostArray(DType::F64, {4}));
  cases.emplace_back(std::move(wrongDType),
                     "input 'g' is f64[4] but the plan expects f32[4]");
  for (auto &testCase : cases) {
    std::string message = errorFrom(
        [&] { session.run("train_step", std::move(testCase.first)); });
    EXPECT_TRUE(contains(message, "session of plan file 'test.gplan': "));
    EXPECT_TRUE(contains(message, testCase.second));
  }
  EXPECT_TRUE(contains(errorFrom([&] { session.run("train", {}); }),
                       "no function 'train' in the plan (it has: "
                       "train_step)"));
  EXPECT_EQ(session.step(), 0u);
  EXPECT_EQ(session.rngState().offset, 0u);
  EXPECT_EQ(valuesOf(session.tensor("w")), (std::vector<double>{1, 1, 1, 1}));
  EXPECT_EQ(session.stats().steps[0].calls, 0u);
}

TEST(SessionTest, BindChecksNameRoleDTypeAndShape) {
  Session session(trainPlan());
  EXPECT_TRUE(contains(
      errorFrom([&] { session.bind("v", HostArray(DType::F32, {4})); }),
      "the plan has no tensor named 'v'"));
  EXPECT_TRUE(
      contains(errorFrom([&] {
                 session.bind("w", f32({2, 2}, {1, 2, 3, 4}));
               }),
               "cannot bind 'w': the plan declares it f32[4] but the value is "
               "f32[2, 2]"));
  EXPECT_TRUE(contains(
      errorFrom([&] { session.bind("w", HostArray(DType::F64, {4})); }),
      "declares it f32[4] but the value is f64[4]"));
  EXPECT_TRUE(contains(
      errorFrom([&] { session.bind("g", HostArray(DType::F32, {4})); }),
      "cannot bind 'g': it is an input tensor (bind takes parameter, "
      "optimizer_state, buffer and lr tensors)"));
  EXPECT_TRUE(contains(
      errorFrom([&] { session.bind("step", HostArray(DType::I64, {})); }),
      "cannot bind 'step': it is a step tensor"));
  EXPECT_TRUE(contains(errorFrom([&] { session.tensor("count"); }),
                       "'count' is a temporary tensor, which the session "
                       "does not hold"));
  session.bind("w.momentum", f32({4}, {1, 2, 3, 4}));
  EXPECT_EQ(valuesOf(session.tensor("w.momentum")),
            (std::vector<double>{1, 2, 3, 4}));
}

TEST(SessionTest, InputsUpdatedInPlaceAreReturnedWithoutCopies) {
  PlanBuilder builder(testHeader());
  uint32_t x = builder.addTensor("x", DType::F32, {1000}, plan::Role::Input);
  uint32_t f = builder.addFunction("set", {x}, {x});
  builder.addFill(f, x, 3);
  Session session(planOf(builder));
  Arrays inputs;
  inputs.emplace("x", HostArray(DType::F32, {1000}));
  const void *data = inputs.at("x").data();
  Arrays outputs = session.run("set", std::move(inputs));
  EXPECT_EQ(outputs.at("x").data(), data);
  EXPECT_EQ(outputs.at("x").getDouble(999), 3.0);
}

TEST(SessionTest, SessionsMove) {
  Session first(planOf(addPlan()));
  Session second = std::move(first);
  Arrays inputs;
  inputs.emplace("x", f32({2, 3}, {1, 1, 1, 1, 1, 1}));
  inputs.emplace("y", f32({2, 3}, {1, 1, 1, 1, 1, 1}));
  EXPECT_EQ(valuesOf(second.run("forward", std::move(inputs)).at("sum")),
            (std::vector<double>(6, 2.0)));
}

//===----------------------------------------------------------------------===//
// Arena, Fill and Copy
//===----------------------------------------------------------------------===//

// Temporaries live at their planned offsets: one written through an f32 view
// reads back through an i32 view planned at the same offset, while one at
// another offset keeps its own value.
TEST(SessionTest, TemporariesLiveAtTheirArenaOffsets) {
  PlanBuilder builder(testHeader());
  uint32_t asFloat = builder.addTemporary("t.f32", DType::F32, {4}, 64);
  uint32_t asInt = builder.addTemporary("t.i32", DType::I32, {4}, 64);
  uint32_t other = builder.addTemporary("u", DType::F32, {4}, 128);
  uint32_t bits =
      builder.addTensor("bits", DType::I32, {4}, plan::Role::Output);
  uint32_t second =
      builder.addTensor("second", DType::F32, {4}, plan::Role::Output);
  builder.setArena(192);
  uint32_t f = builder.addFunction("f", {}, {bits, second});
  builder.addFill(f, asFloat, 1.0);
  builder.addFill(f, other, 2.0);
  builder.addCopy(f, asInt, bits, 16);
  builder.addCopy(f, other, second, 16);
  Session session(planOf(builder));
  Arrays outputs = session.run("f", {});
  EXPECT_EQ(valuesOf(outputs.at("bits")),
            (std::vector<double>(4, 0x3f800000))); // the bits of 1.0f
  EXPECT_EQ(valuesOf(outputs.at("second")), (std::vector<double>(4, 2.0)));
  EXPECT_EQ(session.stats().arenaBytes, 192u);
}

TEST(SessionTest, FillRoundsToEveryDType) {
  struct Case {
    DType dtype;
    double value;
    double expected;
  };
  const Case cases[] = {
      {DType::F32, 0.1, double(0.1f)},
      {DType::F64, 0.1, 0.1},
      {DType::F16, 1.0 / 3, 0.333251953125},
      {DType::BF16, 1.0 / 3, 0.333984375},
      {DType::I1, 1, 1},
      {DType::I32, -7, -7},
      {DType::I64, 0x1p53, 0x1p53},
  };
  for (const Case &c : cases) {
    PlanBuilder builder(testHeader());
    uint32_t t = builder.addTemporary("t", c.dtype, {5}, 0);
    uint32_t out = builder.addTensor("out", c.dtype, {5}, plan::Role::Output);
    builder.setArena(64);
    uint32_t f = builder.addFunction("f", {}, {out});
    builder.addFill(f, t, c.value);
    builder.addCopy(f, t, out, 5 * dtypeSize(c.dtype));
    Session session(planOf(builder));
    HostArray result = session.run("f", {}).at("out");
    EXPECT_EQ(valuesOf(result), std::vector<double>(5, c.expected))
        << dtypeName(c.dtype);
  }
}

TEST(SessionTest, CopyMovesOnlyTheGivenBytes) {
  PlanBuilder builder(testHeader());
  uint32_t x = builder.addTensor("x", DType::F32, {4}, plan::Role::Input);
  uint32_t y = builder.addTensor("y", DType::F32, {4}, plan::Role::Output);
  uint32_t f = builder.addFunction("f", {x}, {y});
  builder.addCopy(f, x, y, 8);
  Session session(planOf(builder));
  Arrays inputs;
  inputs.emplace("x", f32({4}, {1, 2, 3, 4}));
  EXPECT_EQ(valuesOf(session.run("f", std::move(inputs)).at("y")),
            (std::vector<double>{1, 2, 0, 0}));
}

//===----------------------------------------------------------------------===//
// GEMM
//===----------------------------------------------------------------------===//

struct GemmCase {
  DType dtype;
  bool transposeA;
  bool transposeB;
  plan::Epilogue epilogue;
  int64_t batchCount;
  double beta;
};

bool hasBias(plan::Epilogue epilogue) {
  return epilogue == plan::Epilogue::Bias ||
         epilogue == plan::Epilogue::BiasRelu ||
         epilogue == plan::Epilogue::BiasGelu;
}

/// A [rows', cols] tensor holding `batchCount` blocks of rows x cols that
/// start `stride` elements apart.
std::vector<int64_t> operandShape(int64_t rows, int64_t cols, int64_t stride,
                                  int64_t batchCount) {
  int64_t needed = (batchCount - 1) * stride + rows * cols;
  return {(needed + cols - 1) / cols, cols};
}

/// The reference: three nested loops in long double.
HostArray naiveGemm(const GemmCase &c, const GemmDesc &g, const HostArray &a,
                    const HostArray &b, const HostArray &c0,
                    const HostArray *bias, const HostArray *aux) {
  HostArray out = c0;
  for (int64_t batch = 0; batch < g.batchCount; ++batch)
    for (int64_t i = 0; i < g.m; ++i)
      for (int64_t j = 0; j < g.n; ++j) {
        long double sum = 0;
        for (int64_t p = 0; p < g.k; ++p) {
          int64_t ai =
              batch * g.strideA + (c.transposeA ? p * g.m + i : i * g.k + p);
          int64_t bi =
              batch * g.strideB + (c.transposeB ? j * g.k + p : p * g.n + j);
          sum += (long double)a.getDouble(ai) * b.getDouble(bi);
        }
        int64_t ci = batch * g.strideC + i * g.n + j;
        long double value = g.alpha * sum + g.beta * c0.getDouble(ci);
        if (bias)
          value += bias->getDouble(j);
        if (c.epilogue == plan::Epilogue::Relu ||
            c.epilogue == plan::Epilogue::BiasRelu)
          value = std::max<long double>(value, 0);
        if (c.epilogue == plan::Epilogue::Gelu ||
            c.epilogue == plan::Epilogue::BiasGelu)
          value = 0.5L * value *
                  (1 + std::tanh(std::sqrt(2 / M_PIl) *
                                 (value + 0.044715L * value * value * value)));
        if (c.epilogue == plan::Epilogue::DGelu) {
          // d/dx of the tanh GELU, x the aux element (i, j).
          long double x = aux->getDouble(i * g.n + j);
          long double t =
              std::tanh(std::sqrt(2 / M_PIl) * (x + 0.044715L * x * x * x));
          value *= 0.5L * (1 + t) + 0.5L * x * (1 - t * t) *
                                        std::sqrt(2 / M_PIl) *
                                        (1 + 3 * 0.044715L * x * x);
        }
        out.setDouble(ci, static_cast<double>(value));
      }
  return out;
}

void checkGemm(const GemmCase &c, Generator &generator) {
  std::string label =
      std::string(dtypeName(c.dtype)) + (c.transposeA ? " A^T" : " A") +
      (c.transposeB ? " B^T" : " B") + " epilogue " + epilogueName(c.epilogue) +
      " batch " + std::to_string(c.batchCount) + " beta " +
      std::to_string(c.beta);
  SCOPED_TRACE(label);
  GemmDesc g;
  g.m = 3;
  g.n = 4;
  g.k = 5;
  g.batchCount = c.batchCount;
  g.transposeA = c.transposeA;
  g.transposeB = c.transposeB;
  g.alpha = 1.5;
  g.beta = c.beta;
  g.epilogue = c.epilogue;
  int64_t rowsA = c.transposeA ? g.k : g.m, colsA = c.transposeA ? g.m : g.k;
  int64_t rowsB = c.transposeB ? g.n : g.k, colsB = c.transposeB ? g.k : g.n;
  // Padded batches of A and C (whose padding must stay untouched) and one B
  // shared by every batch, as for a weight.
  if (c.batchCount > 1) {
    g.strideA = rowsA * colsA + colsA;
    g.strideC = g.m * g.n + g.n;
  }

  PlanBuilder builder(testHeader());
  auto input = [&](const char *name, std::vector<int64_t> shape) {
    return builder.addTensor(name, c.dtype, std::move(shape),
                             plan::Role::Input);
  };
  g.a = input("a", operandShape(rowsA, colsA, g.strideA, c.batchCount));
  g.b = input("b", operandShape(rowsB, colsB, g.strideB, c.batchCount));
  g.c = input("c", operandShape(g.m, g.n, g.strideC, c.batchCount));
  std::vector<uint32_t> inputs = {g.a, g.b, g.c};
  if (hasBias(c.epilogue)) {
    g.bias = input("bias", {g.n});
    inputs.push_back(*g.bias);
  }
  if (c.epilogue == plan::Epilogue::DGelu) {
    g.aux = input("aux", {g.m, g.n});
    inputs.push_back(*g.aux);
  }
  uint32_t f = builder.addFunction("gemm", inputs, {g.c});
  builder.addGemm(f, g);
  PlanFile planFile = planOf(builder);
  Session session(planFile);

  Arrays arrays;
  for (uint32_t index : inputs) {
    HostArray array(c.dtype, planFile.tensorShape(index));
    generator.fill_uniform(array, -1, 1);
    arrays.emplace(planFile.tensorName(index), std::move(array));
  }
  HostArray expected =
      naiveGemm(c, g, arrays.at("a"), arrays.at("b"), arrays.at("c"),
                g.bias ? &arrays.at("bias") : nullptr,
                g.aux ? &arrays.at("aux") : nullptr);
  HostArray result = session.run("gemm", arrays).at("c");
  double tolerance = c.dtype == DType::F32 ? 2e-6 : 1e-14;
  for (int64_t i = 0; i < result.numel(); ++i)
    ASSERT_NEAR(result.getDouble(i), expected.getDouble(i),
                tolerance * (1 + std::abs(expected.getDouble(i))))
        << "element " << i;
}

TEST(SessionTest, GemmMatchesNaiveLoopsInEveryConfiguration) {
  Generator generator(42);
  const plan::Epilogue epilogues[] = {
      plan::Epilogue::None,     plan::Epilogue::Bias, plan::Epilogue::Relu,
      plan::Epilogue::BiasRelu, plan::Epilogue::Gelu, plan::Epilogue::BiasGelu,
      plan::Epilogue::DGelu};
  int checked = 0;
  for (DType dtype : {DType::F32, DType::F64})
    for (bool transposeA : {false, true})
      for (bool transposeB : {false, true})
        for (plan::Epilogue epilogue : epilogues)
          for (int64_t batchCount : {1, 3})
            for (double beta : {0.0, 0.5}) {
              // DGelu's aux is one m x n matrix: one batch.
              if (epilogue == plan::Epilogue::DGelu && batchCount != 1)
                continue;
              checkGemm(
                  {dtype, transposeA, transposeB, epilogue, batchCount, beta},
                  generator);
              ++checked;
            }
  EXPECT_EQ(checked, 208);
}

TEST(SessionTest, GemmsChainThroughTheArena) {
  Session session(planOf(mlpPlan()));
  for (const auto &[name, value] : mlpParameters())
    session.bind(name, value);
  Arrays inputs;
  inputs.emplace("x", mlpInput());
  EXPECT_EQ(valuesOf(session.run("forward", std::move(inputs)).at("y")),
            (std::vector<double>{33, 38}));
  EXPECT_EQ(session.stats().steps[0].name, "gemm 2x4x3 bias_relu");
  EXPECT_EQ(session.stats().steps[1].name, "gemm 2x1x4");
}

} // namespace
