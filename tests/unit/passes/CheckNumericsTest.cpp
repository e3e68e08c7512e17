//===- CheckNumericsTest.cpp - Naming the op that made a NaN --------------===//
//
// Plants a NaN in a traced model and trains it with
// Session::setCheckNumerics:
//  - forward: log of the batch, which turns negative at the third step;
//  - backward: sqrt(h * h), the norm of a row of h = x W^T that is zero:
//    finite forward, but the VJP of sqrt there is 0.5 / sqrt(0) = inf, and
//    times 2 h = 0 a NaN (as torch.norm's gradient at zero).
// The train step is compiled fused and unfused (one kernel per op). The
// report must name the op, this file's line that called it, the phase and
// the training step; the session must be as before the failed run, the
// run's inputs must be written, and the evaluator (genesis-eval
// --check-numerics) must name the same op on them. A NaN-only check must
// let an infinity pass. With GENESIS_GPU_CASES_DIR the cuda plans become
// cases that scripts/gpu/check_cases.py runs with genesis-run
// --check-numerics, where the NaN appears in the third run, under a CUDA
// graph.
//
//===----------------------------------------------------------------------===//

#include "dialect/Evaluator/Evaluator.h"
#include "frontend/Optim.h"
#include "frontend/nn/Layers.h"
#include "passes/Passes.h"
#include "runtime/formats/ArrayIO.h"
#include "runtime/formats/AtomicFile.h"
#include "runtime/plan/PlanFile.h"
#include "runtime/session/Session.h"
#include "tests/unit/TestSupport.h"

#include "gtest/gtest.h"

#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string>

using namespace genesis;

namespace {

constexpr double kLearningRate = 0.01;

/// This file's name as the frontend records it, with `line`.
std::string here(int line) {
  return std::string(__FILE__) + ":" + std::to_string(line);
}

HostArray batchOf(std::initializer_list<double> values) {
  return HostArray::fromValues<double>(DType::F32, {2, 4}, values);
}

/// A Linear(4, 3) model (with a bias or not) whose loss is `loss(model,
/// batch)`, compiled for `target`, fused or not.
struct Compiled {
  std::unique_ptr<nn::Linear> model;
  std::optional<optim::TrainStep> step;
  std::vector<uint8_t> plan;
  NamedArrays params;
};

Compiled
compileModel(const std::function<Tensor(nn::Linear &, const Tensor &)> &loss,
             plan::Target target, bool fuse, bool bias = true) {
  Compiled compiled;
  Generator generator(5);
  compiled.model = std::make_unique<nn::Linear>(4, 3, bias, generator);
  std::map<std::string, HostArray> batch = {
      {"x", batchOf({1, 2, 3, 4, 5, 6, 7, 8})}};
  optim::SGD sgd;
  sgd.lr = kLearningRate;
  compiled.step.emplace(optim::compile_train_step(
      *compiled.model,
      [&](const std::map<std::string, Tensor> &b) {
        return loss(*compiled.model, b.at("x"));
      },
      sgd, batch));
  PlanOptions options;
  options.target = target;
  options.fuse = fuse;
  mlir::FailureOr<std::vector<uint8_t>> bytes =
      compilePlan(compiled.step->module(), {"train_step"}, options);
  EXPECT_TRUE(mlir::succeeded(bytes));
  if (mlir::succeeded(bytes))
    compiled.plan = *bytes;
  for (auto &[name, value] : compiled.model->state_dict())
    compiled.params.emplace_back(name, value);
  return compiled;
}

void bindAll(Session &session, const Compiled &compiled) {
  for (const auto &[name, value] : compiled.params)
    session.bind(name, value);
  for (const TensorInfo &info : session.tensors())
    if (info.role == plan::Role::Lr)
      session.bind(info.name, HostArray::fromValues<double>(info.dtype, {},
                                                            {kLearningRate}));
}

/// Runs the train step on each batch with the check on; returns the report
/// of the run that failed (the test fails if none did).
NonFiniteReport trainUntilReported(Session &session,
                                   const std::vector<HostArray> &batches) {
  for (const HostArray &x : batches) {
    try {
      session.run("train_step", {{"x", x}});
    } catch (const NonFiniteError &error) {
      std::printf("report: %s\n", error.what());
      return error.report();
    }
  }
  ADD_FAILURE() << "no run reported a non-finite value";
  return {};
}

int forwardLine = 0;
Tensor logOfBatch(nn::Linear &model, const Tensor &x) {
  forwardLine = __LINE__ + 1;
  Tensor logs = log(x);
  return mean(model.forward(logs));
}

int backwardLine = 0;
Tensor normOfRows(nn::Linear &model, const Tensor &x) {
  Tensor h = model.forward(x);
  backwardLine = __LINE__ + 1;
  Tensor norms = sqrt(sum(mul(h, h), {1}));
  return mean(norms);
}

const std::vector<HostArray> &forwardBatches() {
  static const std::vector<HostArray> batches = {
      batchOf({1, 2, 3, 4, 5, 6, 7, 8}), batchOf({2, 2, 2, 2, 1, 1, 1, 1}),
      batchOf({1, 2, 3, -4, 5, 6, 7, 8})};
  return batches;
}

void checkForwardReport(bool fuse) {
  Compiled compiled = compileModel(logOfBatch, plan::Target::Cpu, fuse);
  ASSERT_FALSE(compiled.plan.empty());
  PlanFile planFile =
      PlanFile::fromBytes(compiled.plan.data(), compiled.plan.size(), "log");
  Session session(planFile);
  bindAll(session, compiled);
  std::string inputs = ::testing::TempDir() + "nonfinite-forward.safetensors";
  std::remove(inputs.c_str());
  session.setCheckNumerics(NumericsCheck::NonFinite, inputs);

  session.run("train_step", {{"x", forwardBatches()[0]}});
  session.run("train_step", {{"x", forwardBatches()[1]}});
  NamedArrays before = session.parameters();
  NonFiniteReport report = trainUntilReported(session, {forwardBatches()[2]});
  EXPECT_EQ(report.trainingStep, 2u);
  ASSERT_TRUE(report.step.has_value());
  EXPECT_EQ(report.phase(), "forward");
  EXPECT_NE(report.location.find(here(forwardLine) + " genesis.log"),
            std::string::npos)
      << report.location;
  EXPECT_EQ(report.value, "nan");
  EXPECT_EQ(report.shape, (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(report.element, 3u); // the -4
  if (!fuse) {                   // one op per step: the log itself
    EXPECT_EQ(report.location, here(forwardLine) + " genesis.log");
  }

  // The failed run changed nothing: same step count, same parameters.
  EXPECT_EQ(session.step(), 2u);
  NamedArrays after = session.parameters();
  ASSERT_EQ(before.size(), after.size());
  for (size_t i = 0; i < before.size(); ++i)
    EXPECT_EQ(std::memcmp(before[i].second.data(), after[i].second.data(),
                          before[i].second.nbytes()),
              0)
        << before[i].first;

  // Its inputs went to the file, and the evaluator names the same op on
  // them.
  EXPECT_EQ(report.inputsFile, inputs);
  std::map<std::string, HostArray> saved;
  for (auto &[name, array] : loadSafetensors(inputs))
    saved.emplace(name, array);
  ASSERT_EQ(saved.count("x"), 1u);
  EXPECT_EQ(saved.at("x").getDouble(3), -4.0);
  auto function =
      compiled.step->module().lookupSymbol<mlir::func::FuncOp>("train_step");
  std::vector<HostArray> arguments;
  for (unsigned i = 0; i < function.getNumArguments(); ++i) {
    std::string name =
        function.getArgAttrOfType<mlir::StringAttr>(i, "genesis.name").str();
    ASSERT_EQ(saved.count(name), 1u) << name;
    arguments.push_back(saved.at(name));
  }
  try {
    evaluate(function, arguments, NumericsCheck::NonFinite);
    ADD_FAILURE() << "the evaluator found no NaN";
  } catch (const Error &error) {
    std::string message = error.what();
    std::printf("evaluator: %s\n", message.c_str());
    EXPECT_EQ(message.rfind(here(forwardLine) + " genesis.log: result #0", 0),
              0u)
        << message;
  }
  // Without the check the same inputs evaluate.
  EXPECT_NO_THROW(evaluate(function, arguments));

  // The session goes on with a good batch.
  session.run("train_step", {{"x", forwardBatches()[0]}});
  EXPECT_EQ(session.step(), 3u);
}

TEST(CheckNumerics, ForwardNaNFused) { checkForwardReport(/*fuse=*/true); }
TEST(CheckNumerics, ForwardNaNOneKernelPerOp) {
  checkForwardReport(/*fuse=*/false);
}

void checkBackwardReport(bool fuse) {
  Compiled compiled =
      compileModel(normOfRows, plan::Target::Cpu, fuse, /*bias=*/false);
  ASSERT_FALSE(compiled.plan.empty());
  PlanFile planFile =
      PlanFile::fromBytes(compiled.plan.data(), compiled.plan.size(), "sqrt");
  Session session(planFile);
  bindAll(session, compiled);
  session.setCheckNumerics(NumericsCheck::NonFinite);
  // The first row of x, and so of h, is zero.
  NonFiniteReport report =
      trainUntilReported(session, {batchOf({0, 0, 0, 0, 5, 6, -7, 8})});
  EXPECT_EQ(report.trainingStep, 0u);
  ASSERT_TRUE(report.step.has_value());
  EXPECT_EQ(report.phase(), "backward");
  EXPECT_NE(
      report.location.find(here(backwardLine) + " backward of genesis.sqrt"),
      std::string::npos)
      << report.location;
  EXPECT_TRUE(report.inputsFile.empty());
  EXPECT_EQ(session.step(), 0u);

  // An inputs file that cannot be written is named in the report, which
  // still comes.
  session.setCheckNumerics(NumericsCheck::NonFinite,
                           ::testing::TempDir() + "no-such-dir/in.safetensors");
  NonFiniteReport unwritten =
      trainUntilReported(session, {batchOf({0, 0, 0, 0, 5, 6, -7, 8})});
  EXPECT_TRUE(unwritten.inputsFile.empty());
  EXPECT_NE(unwritten.inputsError.find("no-such-dir"), std::string::npos)
      << unwritten.inputsError;
  EXPECT_NE(unwritten.message().find("its inputs could not be written: "),
            std::string::npos);
}

TEST(CheckNumerics, BackwardNaNFused) { checkBackwardReport(/*fuse=*/true); }
TEST(CheckNumerics, BackwardNaNOneKernelPerOp) {
  checkBackwardReport(/*fuse=*/false);
}

TEST(CheckNumerics, NaNOnlyLetsInfinitiesPass) {
  // log(0) = -inf reaches the loss as -inf: no NaN anywhere.
  Compiled compiled = compileModel(
      [](nn::Linear &model, const Tensor &x) {
        return sum(log(mul(x, x))) + mean(model.forward(x)) * 0.0;
      },
      plan::Target::Cpu, true);
  ASSERT_FALSE(compiled.plan.empty());
  PlanFile planFile =
      PlanFile::fromBytes(compiled.plan.data(), compiled.plan.size(), "inf");
  HostArray withZero = batchOf({0, 1, 2, 3, 4, 5, 6, 7});
  {
    Session session(planFile);
    bindAll(session, compiled);
    session.setCheckNumerics(NumericsCheck::NaN);
    std::map<std::string, HostArray> out =
        session.run("train_step", {{"x", withZero}});
    EXPECT_EQ(out.at("loss").getDouble(0),
              -std::numeric_limits<double>::infinity());
  }
  Session session(planFile);
  bindAll(session, compiled);
  session.setCheckNumerics(NumericsCheck::NonFinite);
  NonFiniteReport report = trainUntilReported(session, {withZero});
  EXPECT_EQ(report.value, "-inf");
}

/// The cuda plans of the forward plant as GPU cases: three batches, the
/// third with the negative input, run by genesis-run --check-numerics
/// --batches (runs 2 and 3 launch the captured graph).
TEST(CheckNumerics, CudaCasesForTheGpuMachine) {
  Compiled compiled = compileModel(logOfBatch, plan::Target::Cuda, true);
  ASSERT_FALSE(compiled.plan.empty());
  const char *dir = test::gpuCasesDir();
  if (!dir) {
    std::printf("compiled for cuda; no GENESIS_GPU_CASES_DIR, so no case "
                "written (the GPU machine runs the cases)\n");
    return;
  }
  std::string stem = std::string(dir) + "/CheckNumerics_ForwardNaN";
  writeFileAtomically(stem + ".gplan", compiled.plan.data(),
                      compiled.plan.size());
  HostArray stream(DType::F32, {3, 2, 4});
  for (int64_t b = 0; b < 3; ++b)
    for (int64_t i = 0; i < 8; ++i)
      stream.setDouble(b * 8 + i, forwardBatches()[b].getDouble(i));
  saveSafetensors(stem + ".in.safetensors", {{"x", stream}});
  NamedArrays params = compiled.params;
  PlanFile planFile =
      PlanFile::fromBytes(compiled.plan.data(), compiled.plan.size(), "log");
  for (uint32_t i = 0; i < planFile.plan().tensors()->size(); ++i)
    if (planFile.tensorRole(i) == plan::Role::Lr)
      params.emplace_back(planFile.tensorName(i),
                          HostArray::fromValues<double>(planFile.tensorDType(i),
                                                        {}, {kLearningRate}));
  saveSafetensors(stem + ".params.safetensors", params);
  // What check_cases.py runs and expects on stderr.
  std::string expect =
      "{\"args\": [\"--check-numerics\", \"--repeat\", \"3\", "
      "\"--batches\"], \"expect\": [\"at training step 2\", \"" +
      here(forwardLine) + " genesis.log\", \"nan in\", \", forward,\"]}";
  writeFileAtomically(stem + ".numerics", expect.data(), expect.size());
}

} // namespace
