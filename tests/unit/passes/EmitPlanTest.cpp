//===- EmitPlanTest.cpp - A compiled cpu plan against the evaluator -------===//
//
// The MLP train step (784-32-10, AdamW) is compiled by compileCpuPlan into a
// plan file, loaded, and run by a Session for three steps; the losses, the
// parameters and the optimizer state must match three steps of the reference
// evaluator on the same module's @train_step (fed step = 1, 2, 3).
//
// Tolerance: f32. The plan's GEMMs accumulate in f32 (BLAS) and its fused
// kernels round like the evaluator, which rounds each op once from f64; so
// every value agrees within 1e-5 relative to max(|expected|, 1e-3) (the
// floor keeps elements that are nearly zero, such as Adam's second moments
// of tiny gradients, from dominating).
//
//===----------------------------------------------------------------------===//

#include "dialect/Evaluator/Evaluator.h"
#include "dialect/Utils/DiagnosticCapture.h"
#include "frontend/Optim.h"
#include "models/gpt2/Gpt2.h"
#include "models/mlp/Mlp.h"
#include "passes/Passes.h"
#include "runtime/plan/PlanFile.h"
#include "runtime/session/Session.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>

using namespace genesis;

namespace {

/// A batch of 16 random images in [0, 1) and labels in [0, 10).
std::map<std::string, HostArray> randomMlpBatch() {
  HostArray images(DType::F32, {16, 784});
  HostArray labels(DType::I64, {16});
  Generator data(11);
  for (int64_t i = 0; i < images.numel(); ++i)
    images.setDouble(i, data.uniform());
  for (int64_t i = 0; i < labels.numel(); ++i)
    labels.setInt(i, static_cast<int64_t>(data.uniform() * 10) % 10);
  return {{"images", images}, {"labels", labels}};
}

/// compileCpuPlan, reporting the first error as a test failure.
mlir::FailureOr<std::vector<uint8_t>>
compileReportingErrors(mlir::ModuleOp module,
                       llvm::ArrayRef<std::string> functions) {
  DiagnosticCapture capture(module.getContext());
  mlir::FailureOr<std::vector<uint8_t>> bytes =
      compileCpuPlan(module, functions);
  EXPECT_TRUE(mlir::succeeded(bytes)) << capture.firstError("no diagnostic");
  return bytes;
}

double relativeError(const HostArray &actual, const HostArray &expected) {
  EXPECT_EQ(actual.typeString(), expected.typeString());
  double worst = 0, worstAbsolute = 0;
  for (int64_t i = 0; i < std::min(actual.numel(), expected.numel()); ++i) {
    double a = actual.getDouble(i), b = expected.getDouble(i);
    worst = std::max(worst, std::fabs(a - b) / std::max(std::fabs(b), 1e-3));
    worstAbsolute = std::max(worstAbsolute, std::fabs(a - b));
  }
  std::cout << "  worst absolute difference " << worstAbsolute << ", ";
  return worst;
}

/// Three AdamW steps of the MLP at learning rate `lr`, compiled and
/// evaluated; every relative error must stay below `tolerance`.
void checkMlpAdamW(double lr, double tolerance) {
  Generator generator(7);
  auto mlp = models::makeMlp(32, generator);
  std::map<std::string, HostArray> batch = randomMlpBatch();

  optim::AdamW adamw;
  adamw.lr = lr;
  adamw.weight_decay = 0.1;
  optim::TrainStep step = optim::compile_train_step(
      *mlp,
      [&](const std::map<std::string, Tensor> &b) {
        return cross_entropy(mlp->forward(b.at("images")), b.at("labels"));
      },
      adamw, batch);

  mlir::FailureOr<std::vector<uint8_t>> bytes =
      compileReportingErrors(step.module(), {"train_step", "loss"});
  ASSERT_TRUE(mlir::succeeded(bytes));
  std::cout << "plan: " << bytes->size() << " bytes\n";
  {
    PlanFile listed = PlanFile::fromBytes(bytes->data(), bytes->size(), "mlp");
    const plan::Function *train = listed.plan().functions()->Get(0);
    EXPECT_TRUE(train->advances_step());
    // New parameters and optimizer state are written in place: no copies.
    for (const plan::Step *s : *train->steps())
      EXPECT_NE(s->kind_type(), plan::StepKind::Copy) << stepName(listed, *s);
    // The loss and the 12 persistent tensors.
    EXPECT_EQ(train->outputs()->size(), 13u);
    EXPECT_FALSE(listed.plan().functions()->Get(1)->advances_step());
    if (getenv("GENESIS_DESCRIBE_PLAN"))
      describePlan(listed, std::cout);
  }
  PlanFile planFile = PlanFile::fromBytes(bytes->data(), bytes->size(), "mlp");
  EXPECT_EQ(planFile.plan().header()->target(), plan::Target::Cpu);
  EXPECT_EQ(planFile.plan().header()->model_hash()->size(), 64u);

  Session session(planFile);
  for (auto &[name, value] : mlp->state_dict())
    session.bind(name, value);
  for (const TensorInfo &info : session.tensors())
    if (info.role == plan::Role::Lr)
      session.bind(info.name,
                   HostArray::fromValues<double>(info.dtype, {}, {adamw.lr}));

  double worstLoss = 0;
  for (int s = 0; s < 3; ++s) {
    std::map<std::string, HostArray> outputs = session.run("train_step", batch);
    double expected = step.step(batch, adamw.lr);
    ASSERT_EQ(outputs.count("loss"), 1u);
    double loss = outputs.at("loss").getDouble(0);
    double error = std::fabs(loss - expected) / std::fabs(expected);
    worstLoss = std::max(worstLoss, error);
    std::printf("step %d: loss %.9g (plan) %.9g (evaluator)\n", s + 1, loss,
                expected);
    EXPECT_LT(error, tolerance)
        << "step " << s + 1 << ": " << loss << " vs " << expected;
  }
  EXPECT_EQ(session.step(), 3u);
  std::cout << "loss: worst relative error " << worstLoss << "\n";

  // The forward function shares the parameters with the train step.
  {
    auto lossFunction = step.module().lookupSymbol<mlir::func::FuncOp>("loss");
    std::map<std::string, HostArray> parameters;
    for (auto &[name, value] : mlp->state_dict())
      parameters.emplace(name, value);
    std::vector<HostArray> arguments;
    for (unsigned i = 0; i < lossFunction.getNumArguments(); ++i) {
      std::string name =
          lossFunction.getArgAttrOfType<mlir::StringAttr>(i, "genesis.name")
              .str();
      arguments.push_back(parameters.count(name) ? parameters.at(name)
                                                 : batch.at(name));
    }
    double expected = evaluate(lossFunction, arguments)[0].getDouble(0);
    std::map<std::string, HostArray> outputs = session.run("loss", batch);
    ASSERT_EQ(outputs.size(), 1u);
    double loss = outputs.begin()->second.getDouble(0);
    std::printf("@loss after 3 steps: %.9g (plan) %.9g (evaluator)\n", loss,
                expected);
    EXPECT_LT(std::fabs(loss - expected) / std::fabs(expected), tolerance);
    EXPECT_EQ(session.step(), 3u);
  }

  for (auto &[name, value] : mlp->state_dict()) {
    double error = relativeError(session.tensor(name), value);
    std::cout << name << ": worst relative error " << error << "\n";
    EXPECT_LT(error, tolerance) << name;
  }
  for (auto &[name, value] : step.state_dict()) {
    if (name == "step")
      continue;
    double error = relativeError(session.tensor(name), value);
    std::cout << name << ": worst relative error " << error << "\n";
    EXPECT_LT(error, tolerance) << name;
  }
}

TEST(EmitPlan, MlpAdamWTrainStepMatchesEvaluator) {
  // PyTorch's default AdamW learning rate.
  checkMlpAdamW(1e-3, 1e-5);
}

TEST(EmitPlan, MlpTrainStepIsIdenticalOnOneAndTwoThreads) {
  Generator generator(7);
  auto mlp = models::makeMlp(32, generator);
  std::map<std::string, HostArray> batch = randomMlpBatch();
  optim::AdamW adamw;
  optim::TrainStep step = optim::compile_train_step(
      *mlp,
      [&](const std::map<std::string, Tensor> &b) {
        return cross_entropy(mlp->forward(b.at("images")), b.at("labels"));
      },
      adamw, batch);
  mlir::FailureOr<std::vector<uint8_t>> bytes =
      compileCpuPlan(step.module(), {"train_step"});
  ASSERT_TRUE(mlir::succeeded(bytes));
  PlanFile planFile = PlanFile::fromBytes(bytes->data(), bytes->size(), "mlp");
  // Some kernel launches are splittable, so two threads really split them.
  int64_t widest = 0;
  for (const plan::Step *s : *planFile.plan().functions()->Get(0)->steps())
    if (auto *launch = s->kind_as_KernelLaunch())
      widest = std::max(widest, launch->outer_extent());
  EXPECT_GE(widest, 2);

  std::string saved =
      getenv("GENESIS_NUM_THREADS") ? getenv("GENESIS_NUM_THREADS") : "";
  // Split every splittable launch, however small.
  setenv("GENESIS_MIN_SPLIT_BYTES", "0", 1);
  std::vector<std::vector<HostArray>> results;
  for (const char *threads : {"1", "2"}) {
    setenv("GENESIS_NUM_THREADS", threads, 1);
    Session session(planFile);
    for (auto &[name, value] : mlp->state_dict())
      session.bind(name, value);
    for (const TensorInfo &info : session.tensors())
      if (info.role == plan::Role::Lr)
        session.bind(info.name,
                     HostArray::fromValues<double>(info.dtype, {}, {adamw.lr}));
    std::vector<HostArray> &result = results.emplace_back();
    for (int s = 0; s < 3; ++s)
      result.push_back(session.run("train_step", batch).at("loss"));
    for (const TensorInfo &info : session.tensors())
      if (info.role == plan::Role::Parameter ||
          info.role == plan::Role::OptimizerState)
        result.push_back(session.tensor(info.name));
  }
  unsetenv("GENESIS_MIN_SPLIT_BYTES");
  if (saved.empty())
    unsetenv("GENESIS_NUM_THREADS");
  else
    setenv("GENESIS_NUM_THREADS", saved.c_str(), 1);
  ASSERT_EQ(results[0].size(), results[1].size());
  for (size_t i = 0; i < results[0].size(); ++i) {
    const HostArray &one = results[0][i], &two = results[1][i];
    ASSERT_EQ(one.typeString(), two.typeString());
    for (int64_t e = 0; e < one.numel(); ++e)
      ASSERT_EQ(one.getDouble(e), two.getDouble(e)) << "result " << i;
  }
}

TEST(EmitPlan, UnsupportedOpIsNamed) {
  // A non-splat constant has no CPU lowering yet.
  mlir::MLIRContext context;
  context.loadDialect<GenesisDialect, mlir::func::FuncDialect>();
  auto module = mlir::parseSourceString<mlir::ModuleOp>(R"(
    func.func @f(%a: tensor<2xf32> {genesis.name = "a", genesis.role = "input"})
        -> (tensor<2xf32> {genesis.name = "out"}) {
      %c = genesis.constant dense<[1.0, 2.0]> : tensor<2xf32> loc("model.cpp":42:3)
      %0 = genesis.add %a, %c : tensor<2xf32>
      return %0 : tensor<2xf32>
    })",
                                                        &context);
  ASSERT_TRUE(module);
  std::string errors;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &d) {
    errors += describeLocation(d.getLocation()) + ": " + d.str() + "\n";
    return mlir::success();
  });
  EXPECT_TRUE(mlir::failed(compileCpuPlan(*module, {"f"})));
  EXPECT_NE(errors.find("model.cpp:42"), std::string::npos) << errors;
  EXPECT_NE(errors.find("no lowering for the non-splat 'genesis.constant'"),
            std::string::npos)
      << errors;
}

TEST(EmitPlan, ReshapeCopiesAndSplatFillsRun) {
  // A returned argument, a reshape and a splat constant: Copy and Fill steps.
  mlir::MLIRContext context;
  context.loadDialect<GenesisDialect, mlir::func::FuncDialect>();
  auto module = mlir::parseSourceString<mlir::ModuleOp>(R"(
    func.func @f(%a: tensor<2x3xf32> {genesis.name = "a", genesis.role = "input"})
        -> (tensor<6xf32> {genesis.name = "flat"}, tensor<2x3xf32> {genesis.name = "same"},
            tensor<3xf32> {genesis.name = "twos"}) {
      %0 = genesis.reshape %a : tensor<2x3xf32> -> tensor<6xf32>
      %1 = genesis.constant dense<2.0> : tensor<3xf32>
      return %0, %a, %1 : tensor<6xf32>, tensor<2x3xf32>, tensor<3xf32>
    })",
                                                        &context);
  ASSERT_TRUE(module);
  mlir::FailureOr<std::vector<uint8_t>> bytes = compileCpuPlan(*module, {"f"});
  ASSERT_TRUE(mlir::succeeded(bytes));
  Session session(PlanFile::fromBytes(bytes->data(), bytes->size()));
  HostArray a =
      HostArray::fromValues<double>(DType::F32, {2, 3}, {1, 2, 3, 4, 5, 6});
  std::map<std::string, HostArray> out = session.run("f", {{"a", a}});
  for (int64_t i = 0; i < 6; ++i) {
    EXPECT_EQ(out.at("flat").getDouble(i), i + 1);
    EXPECT_EQ(out.at("same").getDouble(i), i + 1);
  }
  for (int64_t i = 0; i < 3; ++i)
    EXPECT_EQ(out.at("twos").getDouble(i), 2.0);
}

TEST(EmitPlan, MlpAdamWLargeLearningRateMatchesEvaluator) {
  // Adam divides the first moment by the root of the second, so a gradient
  // element with cancellation (BLAS accumulates in f32, the evaluator in
  // f64) moves the update by a relative amount of its own relative error;
  // the parameter's error grows with lr. At lr = 1e-2 it is about 2.5e-5.
  checkMlpAdamW(1e-2, 1e-4);
}

/// GPT-2 of 2 layers of width 32 (4 heads, 37 tokens, 16 positions), a
/// random batch of [batch, sequence] ids and targets, and its AdamW train
/// step on the mean next-token cross-entropy.
struct TinyGpt2 {
  TinyGpt2(int64_t batchSize, int64_t sequence, uint64_t dataSeed,
           const optim::TrainStepOptions &options = {})
      : gpt(config(), weights) {
    const int64_t V = gpt.config.vocab_size;
    HostArray ids(DType::I64, {batchSize, sequence});
    HostArray targets(DType::I64, {batchSize * sequence});
    Generator data(dataSeed);
    for (int64_t i = 0; i < ids.numel(); ++i)
      ids.setInt(i, static_cast<int64_t>(data.uniform() * V) % V);
    for (int64_t i = 0; i < targets.numel(); ++i)
      targets.setInt(i, static_cast<int64_t>(data.uniform() * V) % V);
    batch = {{"ids", ids}, {"targets", targets}};
    step = std::make_unique<optim::TrainStep>(optim::compile_train_step(
        gpt,
        [this, batchSize, sequence, V](const std::map<std::string, Tensor> &b) {
          return cross_entropy(
              gpt(b.at("ids")).reshape({batchSize * sequence, V}),
              b.at("targets"));
        },
        adamw, batch, options));
  }

  static models::Gpt2Config config() {
    models::Gpt2Config config;
    config.vocab_size = 37;
    config.n_positions = 16;
    config.n_embd = 32;
    config.n_layer = 2;
    config.n_head = 4;
    config.dropout = 0.0;
    return config;
  }

  Generator weights{5};
  models::Gpt2 gpt;
  optim::AdamW adamw;
  std::map<std::string, HostArray> batch;
  std::unique_ptr<optim::TrainStep> step;
};

// A tiny GPT-2 (2 layers, 4 heads, width 32, vocab 37) trained for three
// AdamW steps with clip_grad_norm 1.0 on the CPU plan: embeddings (take /
// scatter_add), layer_norm, causal attention and its gradient, GELU, the
// tied LM head (wte), cross_entropy and global_norm all run as compiled
// kernels. The losses must match the reference evaluator's @train_step
// within 1e-5 relative (they agree exactly); parameters and optimizer state
// within the bounds below.
TEST(EmitPlan, TinyGpt2AdamWTrainStepMatchesEvaluator) {
  optim::TrainStepOptions options;
  options.clip_grad_norm = 1.0;
  TinyGpt2 tiny(2, 8, 13, options);
  models::Gpt2 &gpt = tiny.gpt;
  optim::AdamW &adamw = tiny.adamw;
  std::map<std::string, HostArray> &batch = tiny.batch;
  optim::TrainStep &step = *tiny.step;

  mlir::FailureOr<std::vector<uint8_t>> bytes =
      compileReportingErrors(step.module(), {"train_step", "loss"});
  ASSERT_TRUE(mlir::succeeded(bytes));
  std::cout << "plan: " << bytes->size() << " bytes\n";
  PlanFile planFile = PlanFile::fromBytes(bytes->data(), bytes->size(), "gpt2");
  Session session(planFile);
  for (auto &[name, value] : gpt.state_dict())
    session.bind(name, value);
  for (const TensorInfo &info : session.tensors())
    if (info.role == plan::Role::Lr)
      session.bind(info.name,
                   HostArray::fromValues<double>(info.dtype, {}, {adamw.lr}));

  const double tolerance = 1e-5;
  for (int s = 0; s < 3; ++s) {
    std::map<std::string, HostArray> outputs = session.run("train_step", batch);
    double expected = step.step(batch, adamw.lr);
    ASSERT_EQ(outputs.count("loss"), 1u);
    double loss = outputs.at("loss").getDouble(0);
    double error = std::fabs(loss - expected) / std::fabs(expected);
    std::printf(
        "step %d: loss %.9g (plan) %.9g (evaluator), relative error %g\n",
        s + 1, loss, expected, error);
    EXPECT_LT(error, tolerance)
        << "step " << s + 1 << ": " << loss << " vs " << expected;
  }
  EXPECT_EQ(session.step(), 3u);

  // Parameters and first moments: |plan - evaluator| <= 1e-5 |evaluator| +
  // atol. Adam normalises each gradient element by its own root mean
  // square, so an element whose gradient nearly cancels (the plan's GEMMs
  // accumulate in f32, the evaluator in f64) moves by up to lr times that
  // element's relative gradient error: atol is 2e-3 of the largest possible
  // movement (lr per step, 3 steps) for parameters, 1e-7 for exp_avg
  // (measured: 2.1e-6 and 4.2e-8 with OpenBLAS's AVX-512 kernels); 5e-3 and
  // 3e-7 since OpenBLAS's kernels for an AMD EPYC without AVX-512, which
  // sum in another order, reached 1.7 and 2.0 times the former bounds. The
  // second moments meet 1e-5 relative to max(|expected|, 1e-3) like the MLP.
  const double parameterAtol = 5e-3 * adamw.lr * 3, stateAtol = 3e-7;
  auto withinBound = [](const HostArray &actual, const HostArray &expected,
                        double atol) {
    double worst = 0; // largest |a - b| / (1e-5 |b| + atol)
    for (int64_t i = 0; i < expected.numel(); ++i) {
      double a = actual.getDouble(i), b = expected.getDouble(i);
      worst = std::max(worst, std::fabs(a - b) / (1e-5 * std::fabs(b) + atol));
    }
    return worst;
  };
  double worstParameter = 0, worstState = 0;
  for (auto &[name, value] : gpt.state_dict()) {
    double error = relativeError(session.tensor(name), value);
    std::cout << name << ": worst relative error " << error << "\n";
    worstParameter = std::max(worstParameter, error);
    EXPECT_LE(withinBound(session.tensor(name), value, parameterAtol), 1.0)
        << name;
  }
  for (auto &[name, value] : step.state_dict()) {
    if (name == "step")
      continue;
    double error = relativeError(session.tensor(name), value);
    std::cout << name << ": worst relative error " << error << "\n";
    worstState = std::max(worstState, error);
    if (llvm::StringRef(name).ends_with(".exp_avg"))
      EXPECT_LE(withinBound(session.tensor(name), value, stateAtol), 1.0)
          << name;
    else
      EXPECT_LT(error, tolerance) << name;
  }
  std::cout << "GPT-2: worst relative error " << worstParameter
            << " (parameters), " << worstState << " (optimizer state)\n";
}

} // namespace

namespace {

/// @f: dropout (p = 0.5, op offset 3) of a 4x8 f32 input by the rng_seed
/// argument.
std::string dropoutModule(int64_t offset) {
  return R"(
    func.func @f(%x: tensor<4x8xf32> {genesis.name = "x", genesis.role = "input"},
                 %s: tensor<i64> {genesis.name = "rng", genesis.role = "rng_seed"})
        -> (tensor<4x8xf32> {genesis.name = "y"}) {
      %0 = genesis.dropout %x, %s {probability = 5.0e-01, offset = )" +
         std::to_string(offset) + R"( : i64}
             : (tensor<4x8xf32>, tensor<i64>) -> tensor<4x8xf32>
      return %0 : tensor<4x8xf32>
    })";
}

/// The evaluator's @f of dropoutModule(offset) on (x, seed).
HostArray evaluateDropout(int64_t offset, const HostArray &x, uint64_t seed) {
  mlir::MLIRContext context;
  context.loadDialect<GenesisDialect, mlir::func::FuncDialect>();
  auto module =
      mlir::parseSourceString<mlir::ModuleOp>(dropoutModule(offset), &context);
  EXPECT_TRUE(module);
  HostArray seedArray(DType::I64, {});
  seedArray.setInt(0, static_cast<int64_t>(seed));
  return evaluate(module->lookupSymbol<mlir::func::FuncOp>("f"),
                  {x, seedArray})[0];
}

} // namespace

TEST(EmitPlan, RecomputedActivationsChangeNoBit) {
  // genesis-remat under a memory budget just below what the plan needs
  // without one: the plan recomputes activations in the backward (kernels
  // named train_step_remat<N>), its arena shrinks, and three steps give the
  // same losses, parameters and optimizer state, bit for bit.
  TinyGpt2 tiny(4, 16, 17);
  optim::TrainStep &step = *tiny.step;
  struct Compiled {
    std::vector<uint8_t> bytes;
    uint64_t arena = 0;
    int64_t external = 0;
    int recomputations = 0;
  };
  auto compile = [&](int64_t budget) {
    PlanOptions options;
    options.memoryBudget = budget;
    DiagnosticCapture capture(step.module().getContext());
    mlir::FailureOr<std::vector<uint8_t>> bytes =
        compilePlan(step.module(), {"train_step"}, options);
    EXPECT_TRUE(mlir::succeeded(bytes)) << capture.firstError("no diagnostic");
    Compiled compiled;
    if (mlir::failed(bytes))
      return compiled;
    compiled.bytes = std::move(*bytes);
    PlanFile plan = PlanFile::fromBytes(compiled.bytes.data(),
                                        compiled.bytes.size(), "gpt2");
    compiled.arena = plan.plan().memory()->arena_bytes();
    for (const plan::Step *s : *plan.plan().functions()->Get(0)->steps())
      compiled.recomputations +=
          stepName(plan, *s).find("train_step_remat") != std::string::npos;
    Session session(plan);
    for (const TensorInfo &info : session.tensors()) {
      if (info.role == plan::Role::Temporary || info.role == plan::Role::Output)
        continue;
      int64_t numel = 1;
      for (int64_t d : info.shape)
        numel *= d;
      compiled.external += numel * static_cast<int64_t>(dtypeSize(info.dtype));
    }
    return compiled;
  };
  Compiled full = compile(0);
  ASSERT_FALSE(full.bytes.empty());
  EXPECT_EQ(full.recomputations, 0);
  // The budget's arena is the planner's on the lowered function (the plan's
  // also holds splat constants that only fusions read): one byte less.
  mlir::OwningOpRef<mlir::ModuleOp> lowered = step.module().clone();
  ASSERT_TRUE(
      mlir::succeeded(lowerForTarget(*lowered, {"train_step"}, PlanOptions{})));
  mlir::FailureOr<MemoryPlan> planned =
      planMemory(lowered->lookupSymbol<mlir::func::FuncOp>("train_step"), 64);
  ASSERT_TRUE(mlir::succeeded(planned));
  int64_t budget = full.external + planned->arenaBytes - 1;
  Compiled lean = compile(budget);
  ASSERT_FALSE(lean.bytes.empty());
  std::cout << "arena " << full.arena << " B without a budget, " << lean.arena
            << " B under a budget of " << budget << " B with "
            << lean.recomputations << " recomputations\n";
  EXPECT_GT(lean.recomputations, 0);
  EXPECT_LT(lean.arena, full.arena);

  std::vector<std::vector<HostArray>> results;
  for (const Compiled *compiled : {&full, &lean}) {
    PlanFile plan = PlanFile::fromBytes(compiled->bytes.data(),
                                        compiled->bytes.size(), "gpt2");
    Session session(plan);
    for (auto &[name, value] : tiny.gpt.state_dict())
      session.bind(name, value);
    for (const TensorInfo &info : session.tensors())
      if (info.role == plan::Role::Lr)
        session.bind(info.name,
                     HostArray::fromValues<double>(info.dtype, {}, {1e-3}));
    std::vector<HostArray> &result = results.emplace_back();
    for (int s = 0; s < 3; ++s)
      result.push_back(session.run("train_step", tiny.batch).at("loss"));
    for (const TensorInfo &info : session.tensors())
      if (info.role == plan::Role::Parameter ||
          info.role == plan::Role::OptimizerState)
        result.push_back(session.tensor(info.name));
  }
  ASSERT_EQ(results[0].size(), results[1].size());
  for (size_t i = 0; i < results[0].size(); ++i)
    for (int64_t e = 0; e < results[0][i].numel(); ++e)
      ASSERT_EQ(results[0][i].getDouble(e), results[1][i].getDouble(e))
          << "result " << i << " element " << e;
}

TEST(EmitPlan, DropoutMatchesEvaluatorAndAdvancesTheOffset) {
  mlir::MLIRContext context;
  context.loadDialect<GenesisDialect, mlir::func::FuncDialect>();
  auto module =
      mlir::parseSourceString<mlir::ModuleOp>(dropoutModule(3), &context);
  ASSERT_TRUE(module);
  mlir::FailureOr<std::vector<uint8_t>> bytes = compileCpuPlan(*module, {"f"});
  ASSERT_TRUE(mlir::succeeded(bytes));
  PlanFile planFile = PlanFile::fromBytes(bytes->data(), bytes->size());
  EXPECT_EQ(planFile.plan().functions()->Get(0)->rng_offset_advance(), 35u);
  bool hasSeed = false;
  for (const plan::Tensor *t : *planFile.plan().tensors())
    if (t->role() == plan::Role::RngSeed) {
      hasSeed = true;
      ASSERT_EQ(t->shape()->size(), 1u);
      EXPECT_EQ(t->shape()->Get(0), 2);
    }
  EXPECT_TRUE(hasSeed);

  HostArray x(DType::F32, {4, 8});
  for (int64_t i = 0; i < x.numel(); ++i)
    x.setDouble(i, 0.25 * static_cast<double>(i + 1));
  const uint64_t seed = 0x123456789ABCDEF1ull; // both key words nonzero
  Session session(planFile);
  Generator::State state;
  state.seed = seed;
  state.offset = 0;
  session.setRngState(state);
  HostArray first = session.run("f", {{"x", x}}).at("y");
  HostArray second = session.run("f", {{"x", x}}).at("y");
  EXPECT_EQ(session.rngState().offset, 70u);

  // Run 1 draws counters 3.., run 2 (session offset 35) counters 38...
  HostArray expectedFirst = evaluateDropout(3, x, seed);
  HostArray expectedSecond = evaluateDropout(38, x, seed);
  int64_t kept = 0, differ = 0;
  for (int64_t i = 0; i < x.numel(); ++i) {
    EXPECT_EQ(first.getDouble(i), expectedFirst.getDouble(i)) << i;
    EXPECT_EQ(second.getDouble(i), expectedSecond.getDouble(i)) << i;
    kept += first.getDouble(i) != 0;
    differ += (first.getDouble(i) != 0) != (second.getDouble(i) != 0);
  }
  EXPECT_GT(kept, 0);
  EXPECT_LT(kept, x.numel());
  EXPECT_GT(differ, 0); // the second run uses a different mask
}

TEST(EmitPlan, MlpWithDropoutTrainStepRuns) {
  Generator generator(7);
  auto mlp = models::makeMlp(32, generator);
  std::map<std::string, HostArray> batch = randomMlpBatch();
  optim::AdamW adamw;
  optim::TrainStep step = optim::compile_train_step(
      *mlp,
      [&](const std::map<std::string, Tensor> &b) {
        return cross_entropy(
            mlp->forward(dropout(b.at("images"), 0.2, /*training=*/true)),
            b.at("labels"));
      },
      adamw, batch);
  mlir::FailureOr<std::vector<uint8_t>> bytes =
      compileReportingErrors(step.module(), {"train_step"});
  ASSERT_TRUE(mlir::succeeded(bytes));
  PlanFile planFile = PlanFile::fromBytes(bytes->data(), bytes->size(), "mlp");
  uint64_t advance = planFile.plan().functions()->Get(0)->rng_offset_advance();
  EXPECT_GE(advance, 16u * 784u);
  Session session(planFile);
  for (auto &[name, value] : mlp->state_dict())
    session.bind(name, value);
  for (const TensorInfo &info : session.tensors())
    if (info.role == plan::Role::Lr)
      session.bind(info.name,
                   HostArray::fromValues<double>(info.dtype, {}, {adamw.lr}));
  uint64_t offset = session.rngState().offset;
  for (int s = 0; s < 2; ++s) {
    double loss = session.run("train_step", batch).at("loss").getDouble(0);
    EXPECT_TRUE(std::isfinite(loss)) << "step " << s + 1;
  }
  EXPECT_EQ(session.step(), 2u);
  EXPECT_EQ(session.rngState().offset, offset + 2 * advance);
}

TEST(EmitPlan, AllReduceIsACopy) {
  mlir::MLIRContext context;
  context.loadDialect<GenesisDialect, mlir::func::FuncDialect>();
  auto module = mlir::parseSourceString<mlir::ModuleOp>(R"(
    func.func @f(%a: tensor<2x3xf32> {genesis.name = "a", genesis.role = "input"})
        -> (tensor<2x3xf32> {genesis.name = "out"}) {
      %0 = genesis.all_reduce sum, %a : tensor<2x3xf32>
      return %0 : tensor<2x3xf32>
    })",
                                                        &context);
  ASSERT_TRUE(module);
  mlir::FailureOr<std::vector<uint8_t>> bytes = compileCpuPlan(*module, {"f"});
  ASSERT_TRUE(mlir::succeeded(bytes));
  PlanFile planFile = PlanFile::fromBytes(bytes->data(), bytes->size());
  const plan::Function *f = planFile.plan().functions()->Get(0);
  ASSERT_EQ(f->steps()->size(), 1u);
  EXPECT_EQ(f->steps()->Get(0)->kind_type(), plan::StepKind::Copy);
  Session session(planFile);
  HostArray a =
      HostArray::fromValues<double>(DType::F32, {2, 3}, {1, 2, 3, 4, 5, 6});
  HostArray out = session.run("f", {{"a", a}}).at("out");
  for (int64_t i = 0; i < 6; ++i)
    EXPECT_EQ(out.getDouble(i), i + 1);
}
