//===- CudaSessionTest.cpp - Executing cuda plans on the GPU --------------===//
//
// Plans built here launch the kernels of CudaTestKernels.ptx, embedded both
// as PTX and as the sm_90 cubin ptxas made of it at build time. Without a
// usable CUDA device every test but the one about that case is skipped, with
// the reason the driver gave.
//
//===----------------------------------------------------------------------===//

#include "PlanTestSupport.h"

#include "runtime/session/Session.h"
#include "runtime/support/Random.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <limits>

// The kernel images (see CMakeLists.txt).
__asm__(".section .rodata\n"
        ".balign 16\n"
        ".global genesis_cuda_test_ptx, genesis_cuda_test_ptx_end\n"
        "genesis_cuda_test_ptx:\n"
        ".incbin \"" GENESIS_CUDA_TEST_PTX "\"\n"
        "genesis_cuda_test_ptx_end:\n"
        ".balign 16\n"
        ".global genesis_cuda_test_cubin, genesis_cuda_test_cubin_end\n"
        "genesis_cuda_test_cubin:\n"
        ".incbin \"" GENESIS_CUDA_TEST_CUBIN "\"\n"
        "genesis_cuda_test_cubin_end:\n"
        ".previous\n");
extern "C" const uint8_t genesis_cuda_test_ptx[], genesis_cuda_test_ptx_end[],
    genesis_cuda_test_cubin[], genesis_cuda_test_cubin_end[];

using namespace genesis;
using namespace genesis::test;

namespace {

using Arrays = std::map<std::string, HostArray>;

/// The elementwise kernels' compiled-in size, and their launch shape.
constexpr int64_t kElements = 1000;
constexpr std::array<uint32_t, 3> kGrid = {4, 1, 1};
constexpr std::array<uint32_t, 3> kBlock = {256, 1, 1};

std::vector<uint8_t> kernelImage(plan::ImageFormat format) {
  if (format == plan::ImageFormat::Ptx)
    return {genesis_cuda_test_ptx, genesis_cuda_test_ptx_end};
  return {genesis_cuda_test_cubin, genesis_cuda_test_cubin_end};
}

PlanHeader cudaHeader() {
  PlanHeader header = testHeader();
  header.target = plan::Target::Cuda;
  header.flags = "--target=cuda";
  return header;
}

HostArray randomArray(DType dtype, std::vector<int64_t> shape,
                      Generator &generator) {
  HostArray array(dtype, std::move(shape));
  generator.fill_uniform(array, -1, 1);
  return array;
}

std::vector<double> valuesOf(const HostArray &array) {
  std::vector<double> values;
  for (int64_t i = 0; i < array.numel(); ++i)
    values.push_back(array.getDouble(i));
  return values;
}

class CudaSessionTest : public ::testing::Test {
protected:
  void SetUp() override {
    if (std::string reason = cudaUnavailableReason(); !reason.empty())
      GTEST_SKIP() << "no CUDA device: " << reason;
  }
};

TEST(CudaSessionWithoutDeviceTest, CudaPlansSayWhyTheyCannotRun) {
  std::string reason = cudaUnavailableReason();
  if (reason.empty())
    GTEST_SKIP() << "a CUDA device is available";
  std::cout << "no CUDA device: " << reason << "\n";
  PlanFile planFile = planOf(PlanBuilder(cudaHeader()));
  EXPECT_TRUE(
      contains(errorFrom([&] { Session session(planFile); }),
               "plan file 'test.gplan': cannot run a cuda plan: " + reason));
}

//===----------------------------------------------------------------------===//
// Kernel launches and graphs
//===----------------------------------------------------------------------===//

/// forward(a, x, y) -> out = a[0] * x + y.
PlanBuilder axpyPlan(plan::ImageFormat format) {
  PlanBuilder builder(cudaHeader());
  uint32_t a = builder.addTensor("a", DType::F32, {1}, plan::Role::Input);
  uint32_t x =
      builder.addTensor("x", DType::F32, {kElements}, plan::Role::Input);
  uint32_t y =
      builder.addTensor("y", DType::F32, {kElements}, plan::Role::Input);
  uint32_t out =
      builder.addTensor("out", DType::F32, {kElements}, plan::Role::Output);
  uint32_t image = builder.addImage(format, kernelImage(format), 90);
  uint32_t forward = builder.addFunction("forward", {a, x, y}, {out});
  builder.addKernelLaunch(forward,
                          {image, "axpy_f32", {a, x, y, out}, kGrid, kBlock, 0},
                          "model.cpp:3");
  return builder;
}

Arrays axpyInputs(Generator &generator) {
  Arrays inputs;
  inputs.emplace("a", randomArray(DType::F32, {1}, generator));
  inputs.emplace("x", randomArray(DType::F32, {kElements}, generator));
  inputs.emplace("y", randomArray(DType::F32, {kElements}, generator));
  return inputs;
}

/// What the kernel computes, bit for bit: one fused multiply-add.
std::vector<double> axpyExpected(const Arrays &inputs) {
  float a = inputs.at("a").dataAs<float>()[0];
  std::vector<double> expected;
  for (int64_t i = 0; i < kElements; ++i)
    expected.push_back(std::fma(a, inputs.at("x").dataAs<float>()[i],
                                inputs.at("y").dataAs<float>()[i]));
  return expected;
}

TEST_F(CudaSessionTest, KernelsFromPtxAndCubinRunEagerlyThenAsAGraph) {
  Generator generator(7);
  for (plan::ImageFormat format :
       {plan::ImageFormat::Ptx, plan::ImageFormat::Cubin}) {
    SCOPED_TRACE(imageFormatName(format));
    Session session(planOf(axpyPlan(format)));
    // Run 1 is eager, run 2 captures the graph, runs 3 and 4 replay it, each
    // on fresh inputs.
    for (int run = 1; run <= 4; ++run) {
      SCOPED_TRACE("run " + std::to_string(run));
      Arrays inputs = axpyInputs(generator);
      std::vector<double> expected = axpyExpected(inputs);
      Arrays outputs = session.run("forward", std::move(inputs));
      ASSERT_EQ(outputs.size(), 1u);
      EXPECT_EQ(outputs.at("out").typeString(), "f32[1000]");
      EXPECT_EQ(valuesOf(outputs.at("out")), expected);
    }
    SessionStats stats = session.stats();
    ASSERT_EQ(stats.steps.size(), 1u);
    EXPECT_EQ(stats.steps[0].name, "kernel axpy_f32");
    EXPECT_EQ(stats.steps[0].location, "model.cpp:3");
    EXPECT_EQ(stats.steps[0].calls, 0u) << "runs without profiling";
    EXPECT_EQ(stats.arenaBytes, 0u);
    EXPECT_EQ(stats.externalBytes, 4u + 3 * 4 * kElements);
    EXPECT_EQ(stats.peakBytes, stats.externalBytes);
  }
}

TEST_F(CudaSessionTest, ProfiledRunsTimeEveryStep) {
  Generator generator(8);
  Session session(planOf(axpyPlan(plan::ImageFormat::Cubin)));
  session.setProfiling(true);
  for (int run = 0; run < 3; ++run) {
    Arrays inputs = axpyInputs(generator);
    std::vector<double> expected = axpyExpected(inputs);
    EXPECT_EQ(valuesOf(session.run("forward", std::move(inputs)).at("out")),
              expected);
  }
  StepTiming timing = session.stats().steps.at(0);
  EXPECT_EQ(timing.calls, 3u);
  EXPECT_GT(timing.totalSeconds, 0.0);
  std::cout << "kernel axpy_f32: " << timing.totalSeconds / 3 * 1e6
            << " us per profiled run\n";

  // Unprofiled runs (the first captures the graph) add nothing.
  session.setProfiling(false);
  for (int run = 0; run < 2; ++run) {
    Arrays inputs = axpyInputs(generator);
    std::vector<double> expected = axpyExpected(inputs);
    EXPECT_EQ(valuesOf(session.run("forward", std::move(inputs)).at("out")),
              expected);
  }
  EXPECT_EQ(session.stats().steps[0].calls, 3u);
  session.resetStats();
  EXPECT_EQ(session.stats().steps[0].calls, 0u);
  EXPECT_EQ(session.stats().steps[0].totalSeconds, 0.0);
}

TEST_F(CudaSessionTest, DynamicSharedMemoryBeyond48KiB) {
  PlanBuilder builder(cudaHeader());
  uint32_t x = builder.addTensor("x", DType::F32, {512}, plan::Role::Input);
  uint32_t out =
      builder.addTensor("out", DType::F32, {512}, plan::Role::Output);
  uint32_t image = builder.addImage(plan::ImageFormat::Cubin,
                                    kernelImage(plan::ImageFormat::Cubin), 90);
  uint32_t f = builder.addFunction("f", {x}, {out});
  builder.addKernelLaunch(
      f, {image, "reverse_blocks_f32", {x, out}, {2, 1, 1}, kBlock, 64 << 10});
  Session session(planOf(builder));
  Generator generator(9);
  for (int run = 0; run < 3; ++run) {
    Arrays inputs;
    inputs.emplace("x", randomArray(DType::F32, {512}, generator));
    std::vector<double> x = valuesOf(inputs.at("x"));
    std::vector<double> expected;
    for (int64_t i = 0; i < 512; ++i)
      expected.push_back(x[i / 256 * 256 + 255 - i % 256]);
    EXPECT_EQ(valuesOf(session.run("f", std::move(inputs)).at("out")),
              expected);
  }
}

TEST_F(CudaSessionTest, BadKernelsAreErrorsAtCreation) {
  auto creationError = [](const PlanBuilder &builder) {
    PlanFile planFile = planOf(builder);
    return errorFrom([&] { Session session(planFile); });
  };
  auto launchPlan = [](const KernelLaunchDesc &launch,
                       std::vector<uint8_t> image) {
    PlanBuilder builder(cudaHeader());
    for (const char *name : {"a", "b", "c", "d"})
      builder.addTensor(name, DType::F32, {kElements}, plan::Role::Input);
    builder.addImage(plan::ImageFormat::Ptx, std::move(image), 90);
    uint32_t f = builder.addFunction("f", {0, 1, 2, 3}, {});
    builder.addKernelLaunch(f, launch, "k.cpp:1");
    return builder;
  };
  std::vector<uint8_t> ptx = kernelImage(plan::ImageFormat::Ptx);
  EXPECT_TRUE(contains(
      creationError(launchPlan({0, "nope", {0}, kGrid, kBlock, 0}, ptx)),
      "plan file 'test.gplan': kernel image #0 has no symbol 'nope' "
      "(function 'f' step #0 (k.cpp:1))"));
  EXPECT_TRUE(contains(
      creationError(
          launchPlan({0, "axpy_f32", {0, 1, 2}, kGrid, kBlock, 0}, ptx)),
      "function 'f' step #0 (k.cpp:1): kernel 'axpy_f32' of image #0 takes 4 "
      "parameters but the launch passes 3 tensors"));
  EXPECT_TRUE(contains(
      creationError(
          launchPlan({0, "sgd_f32", {0, 1, 2, 3}, kGrid, kBlock, 0}, ptx)),
      "kernel 'sgd_f32' of image #0 takes 3 parameters but the launch passes "
      "4 tensors"));
  EXPECT_TRUE(contains(
      creationError(launchPlan(
          {0, "axpy_f32", {0, 1, 2, 3}, kGrid, kBlock, 1u << 30}, ptx)),
      "is launched with 1073741824 bytes of shared memory; the device "
      "allows"));
  std::string badPtx = ".version 8.0\n.target sm_90\n.address_size 64\n"
                       ".visible .entry broken() { bogus; }\n";
  EXPECT_TRUE(
      contains(creationError(launchPlan({0, "broken", {}, kGrid, kBlock, 0},
                                        {badPtx.begin(), badPtx.end()})),
               "plan file 'test.gplan': kernel image #0 (ptx) does not load: "
               "cuModuleLoadDataEx failed: "));
}

TEST_F(CudaSessionTest, TheImageForTheDeviceIsChosen) {
  auto creationError = [](const PlanBuilder &builder) {
    PlanFile planFile = planOf(builder);
    return errorFrom([&] { Session session(planFile); });
  };
  // A plan for a chip of another major version only: refused, naming the
  // device's chip, the plan's images and the flag that fixes it.
  PlanBuilder elsewhere(cudaHeader());
  elsewhere.addTensor("x", DType::F32, {kElements}, plan::Role::Input);
  elsewhere.addImage(plan::ImageFormat::Ptx,
                     kernelImage(plan::ImageFormat::Ptx), 200);
  std::string error = creationError(elsewhere);
  EXPECT_TRUE(contains(error, "plan file 'test.gplan': no kernel image runs "
                              "on this device (sm_"))
      << error;
  EXPECT_TRUE(contains(error, "the plan has sm_200 ptx: compile it with "
                              "--cuda-arch=sm_"))
      << error;

  // A good cubin beside a PTX that does not compile: the cubin is chosen
  // and the plan runs; GENESIS_CUDA_IMAGE=ptx chooses the PTX, whose error
  // names it.
  std::string badPtx = ".version 8.0\n.target sm_90\n.address_size 64\n"
                       ".visible .entry broken() { bogus; }\n";
  PlanBuilder both = axpyPlan(plan::ImageFormat::Cubin);
  both.addImage(plan::ImageFormat::Ptx, {badPtx.begin(), badPtx.end()}, 90);
  Generator generator(11);
  {
    Session session(planOf(both));
    Arrays inputs = axpyInputs(generator);
    std::vector<double> expected = axpyExpected(inputs);
    EXPECT_EQ(valuesOf(session.run("forward", std::move(inputs)).at("out")),
              expected);
  }
  setenv("GENESIS_CUDA_IMAGE", "ptx", 1);
  error = creationError(both);
  unsetenv("GENESIS_CUDA_IMAGE");
  EXPECT_TRUE(contains(error, "kernel image #1 (ptx) does not load")) << error;
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

TEST_F(CudaSessionTest, OutOfDeviceMemoryIsAClearErrorAndLeaksNothing) {
  PlanBuilder hugeArena(cudaHeader());
  hugeArena.addTemporary("t", DType::F32, {4}, 0);
  hugeArena.setArena(uint64_t(1) << 40, 256);
  std::string message = errorFrom([&] { Session session(planOf(hugeArena)); });
  EXPECT_TRUE(contains(message, "plan file 'test.gplan': out of device "
                                "memory: the arena needs 1099511627776 "
                                "bytes, "));
  EXPECT_TRUE(contains(message, " bytes free of "));
  std::cout << message << "\n";

  // After the arena: everything allocated before it is given back.
  // (An input: a parameter would also need as much host memory.)
  PlanBuilder hugeInput(cudaHeader());
  hugeInput.addTemporary("t", DType::F32, {4}, 0);
  hugeInput.setArena(1 << 20, 256);
  hugeInput.addTensor("small", DType::F32, {1 << 20}, plan::Role::Parameter);
  hugeInput.addTensor("huge", DType::F32, {int64_t(1) << 38},
                      plan::Role::Input);
  EXPECT_TRUE(
      contains(errorFrom([&] { Session session(planOf(hugeInput)); }),
               "out of device memory: input 'huge' (f32[274877906944]) needs "
               "1099511627776 bytes, "));

  // The device still works.
  Generator generator(10);
  Session session(planOf(axpyPlan(plan::ImageFormat::Cubin)));
  Arrays inputs = axpyInputs(generator);
  std::vector<double> expected = axpyExpected(inputs);
  EXPECT_EQ(valuesOf(session.run("forward", std::move(inputs)).at("out")),
            expected);
}

TEST_F(CudaSessionTest, CopiesMoveOnlyTheGivenBytesAndMayOverlap) {
  PlanBuilder builder(cudaHeader());
  uint32_t x = builder.addTensor("x", DType::F32, {1024}, plan::Role::Input);
  // Two views of the arena, 256 bytes apart: a copy from one to the other
  // overlaps itself, either way.
  uint32_t low = builder.addTemporary("low", DType::F32, {1024}, 0);
  uint32_t high = builder.addTemporary("high", DType::F32, {1024}, 256);
  uint32_t up = builder.addTensor("up", DType::F32, {1024}, plan::Role::Output);
  uint32_t down =
      builder.addTensor("down", DType::F32, {1024}, plan::Role::Output);
  uint32_t part =
      builder.addTensor("part", DType::F32, {1024}, plan::Role::Output);
  builder.setArena(256 + 4096, 256);
  uint32_t f = builder.addFunction("f", {x}, {up, down, part});
  builder.addCopy(f, x, low, 4096);
  builder.addCopy(f, low, high, 4096); // memmove forward
  builder.addCopy(f, high, up, 4096);
  builder.addCopy(f, x, high, 4096);
  builder.addCopy(f, high, low, 4096); // memmove backward
  builder.addCopy(f, low, down, 4096);
  builder.addCopy(f, x, part, 8);
  Session session(planOf(builder));
  Generator generator(11);
  for (int run = 0; run < 3; ++run) {
    Arrays inputs;
    inputs.emplace("x", randomArray(DType::F32, {1024}, generator));
    std::vector<double> x = valuesOf(inputs.at("x"));
    Arrays outputs = session.run("f", std::move(inputs));
    EXPECT_EQ(valuesOf(outputs.at("up")), x);
    EXPECT_EQ(valuesOf(outputs.at("down")), x);
    std::vector<double> part(1024, 0.0);
    part[0] = x[0];
    part[1] = x[1];
    EXPECT_EQ(valuesOf(outputs.at("part")), part);
  }
}

TEST_F(CudaSessionTest, FillRoundsToEveryDType) {
  struct Case {
    DType dtype;
    double value;
    double expected;
  };
  const Case cases[] = {
      {DType::F32, 0.1, double(0.1f)},
      {DType::F64, 0.1, 0.1}, // different high and low words
      {DType::F64, -0.0, -0.0},
      {DType::F16, 1.0 / 3, 0.333251953125},
      {DType::BF16, 1.0 / 3, 0.333984375},
      {DType::I1, 1, 1},
      {DType::I32, -7, -7},
      {DType::I64, -7, -7},
      {DType::I64, 0x1p53, 0x1p53},
      {DType::I64, -1, -1}, // equal high and low words
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(std::string(dtypeName(c.dtype)) + " " +
                 std::to_string(c.value));
    PlanBuilder builder(cudaHeader());
    uint32_t t = builder.addTemporary("t", c.dtype, {5}, 0);
    uint32_t out = builder.addTensor("out", c.dtype, {5}, plan::Role::Output);
    builder.setArena(256, 256);
    uint32_t f = builder.addFunction("f", {}, {out});
    builder.addFill(f, t, c.value);
    builder.addCopy(f, t, out, 5 * dtypeSize(c.dtype));
    Session session(planOf(builder));
    for (int run = 0; run < 3; ++run) {
      HostArray result = session.run("f", {}).at("out");
      EXPECT_EQ(valuesOf(result), std::vector<double>(5, c.expected));
      EXPECT_EQ(std::signbit(result.getDouble(4)), std::signbit(c.expected));
    }
  }
}

TEST_F(CudaSessionTest, NumericsChecksOfEveryFloatDType) {
  // f(x): out = x; t = fill; out2 = t. The device kernels check 2-, 4- and
  // 8-byte elements; the runs before the bad one launch the graph.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  for (DType dtype : {DType::F16, DType::BF16, DType::F32, DType::F64}) {
    SCOPED_TRACE(dtypeName(dtype));
    auto planFilling = [&](double fill) {
      PlanBuilder builder(cudaHeader());
      uint32_t x =
          builder.addTensor("x", dtype, {kElements}, plan::Role::Input);
      uint32_t out =
          builder.addTensor("out", dtype, {kElements}, plan::Role::Output);
      uint32_t out2 = builder.addTensor("out2", dtype, {3}, plan::Role::Output);
      uint32_t t = builder.addTemporary("t", dtype, {3}, 0);
      builder.setArena(256, 256);
      uint32_t f = builder.addFunction("f", {x}, {out, out2});
      builder.addCopy(f, x, out, kElements * dtypeSize(dtype));
      builder.addFill(f, t, fill);
      builder.addCopy(f, t, out2, 3 * dtypeSize(dtype));
      return planOf(builder);
    };
    HostArray x(dtype, {kElements});
    for (int64_t i = 0; i < kElements; ++i)
      x.setDouble(i, i % 7 - 3.5);
    Session session(planFilling(1.0));
    session.setCheckNumerics(NumericsCheck::NonFinite);
    for (int run = 0; run < 3; ++run)
      session.run("f", {{"x", x}});
    HostArray bad = x;
    bad.setDouble(777, inf);
    session.setCheckNumerics(NumericsCheck::NaN);
    EXPECT_NO_THROW(session.run("f", {{"x", bad}}));
    bad.setDouble(500, -nan);
    for (NumericsCheck check : {NumericsCheck::NaN, NumericsCheck::NonFinite}) {
      session.setCheckNumerics(check);
      try {
        session.run("f", {{"x", bad}});
        ADD_FAILURE() << "no report";
      } catch (const NonFiniteError &error) {
        EXPECT_FALSE(error.report().step.has_value()) << error.what();
        EXPECT_EQ(error.report().tensor, "x");
        EXPECT_EQ(error.report().element, 500u);
        EXPECT_EQ(error.report().value, "nan");
      }
    }
    bad.setDouble(500, 1.0);
    session.setCheckNumerics(NumericsCheck::NonFinite);
    try {
      session.run("f", {{"x", bad}});
      ADD_FAILURE() << "no report";
    } catch (const NonFiniteError &error) {
      EXPECT_EQ(error.report().element, 777u) << error.what();
      EXPECT_EQ(error.report().value, "inf");
    }
    EXPECT_EQ(session.step(), 0u);

    // A step that writes the value: the fill, step #1.
    Session filling(planFilling(nan));
    filling.setCheckNumerics(NumericsCheck::NaN);
    try {
      filling.run("f", {{"x", x}});
      ADD_FAILURE() << "no report";
    } catch (const NonFiniteError &error) {
      ASSERT_TRUE(error.report().step.has_value()) << error.what();
      EXPECT_EQ(*error.report().step, 1u);
      EXPECT_EQ(error.report().tensor, "t");
      EXPECT_EQ(error.report().element, 0u);
    }
  }
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
  bool allowTf32;
  int64_t m, n, k;
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

/// The reference, in double precision from the operands' stored values.
std::vector<double> referenceGemm(const GemmCase &c, const GemmDesc &g,
                                  const Arrays &arrays) {
  const HostArray &a = arrays.at("a"), &b = arrays.at("b"),
                  &c0 = arrays.at("c");
  std::vector<double> out = valuesOf(c0);
  for (int64_t batch = 0; batch < g.batchCount; ++batch)
    for (int64_t i = 0; i < g.m; ++i)
      for (int64_t j = 0; j < g.n; ++j) {
        double sum = 0;
        for (int64_t p = 0; p < g.k; ++p)
          sum += a.getDouble(batch * g.strideA +
                             (c.transposeA ? p * g.m + i : i * g.k + p)) *
                 b.getDouble(batch * g.strideB +
                             (c.transposeB ? j * g.k + p : p * g.n + j));
        int64_t ci = batch * g.strideC + i * g.n + j;
        double value = g.alpha * sum + g.beta * out[ci];
        if (hasBias(c.epilogue))
          value += arrays.at("bias").getDouble(j);
        if (c.epilogue == plan::Epilogue::Relu ||
            c.epilogue == plan::Epilogue::BiasRelu)
          value = std::max(value, 0.0);
        if (c.epilogue == plan::Epilogue::Gelu ||
            c.epilogue == plan::Epilogue::BiasGelu)
          value = 0.5 * value *
                  (1 + std::tanh(std::sqrt(2 / M_PI) *
                                 (value + 0.044715 * value * value * value)));
        out[ci] = value;
      }
  return out;
}

/// max |result - expected| / max |expected|, over every element (padding
/// between batches included: it must stay as it was).
double normwiseError(const HostArray &result,
                     const std::vector<double> &expected) {
  double error = 0, scale = 0;
  for (int64_t i = 0; i < result.numel(); ++i) {
    error = std::max(error, std::abs(result.getDouble(i) - expected[i]));
    scale = std::max(scale, std::abs(expected[i]));
  }
  return error / scale;
}

/// Runs the case twice (eager, then captured in a graph) on fresh random
/// inputs; returns the larger error.
double gemmError(const GemmCase &c, Generator &generator) {
  GemmDesc g;
  g.m = c.m;
  g.n = c.n;
  g.k = c.k;
  g.batchCount = c.batchCount;
  g.transposeA = c.transposeA;
  g.transposeB = c.transposeB;
  g.alpha = 1.5;
  g.beta = c.beta;
  g.epilogue = c.epilogue;
  g.allowTf32 = c.allowTf32;
  int64_t rowsA = c.transposeA ? g.k : g.m, colsA = c.transposeA ? g.m : g.k;
  int64_t rowsB = c.transposeB ? g.n : g.k, colsB = c.transposeB ? g.k : g.n;
  // Padded batches of A and C (whose padding must stay untouched) and one B
  // shared by every batch, as for a weight.
  if (c.batchCount > 1) {
    g.strideA = rowsA * colsA + colsA;
    g.strideC = g.m * g.n + g.n;
  }

  PlanBuilder builder(cudaHeader());
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
  uint32_t f = builder.addFunction("gemm", inputs, {g.c});
  builder.addGemm(f, g);
  PlanFile planFile = planOf(builder);
  Session session(planFile);

  double error = 0;
  for (int run = 0; run < 2; ++run) {
    Arrays arrays;
    for (uint32_t index : inputs)
      arrays.emplace(
          planFile.tensorName(index),
          randomArray(c.dtype, planFile.tensorShape(index), generator));
    std::vector<double> expected = referenceGemm(c, g, arrays);
    HostArray result = session.run("gemm", arrays).at("c");
    error = std::max(error, normwiseError(result, expected));
  }
  return error;
}

const plan::Epilogue kEpilogues[] = {
    plan::Epilogue::None,     plan::Epilogue::Bias, plan::Epilogue::Relu,
    plan::Epilogue::BiasRelu, plan::Epilogue::Gelu, plan::Epilogue::BiasGelu};

TEST_F(CudaSessionTest, F32GemmsAreExactInEveryConfiguration) {
  // f32 accumulation of k = 53 products of values in [-1, 1): some 1e-7.
  constexpr double kTolerance = 1e-5;
  Generator generator(42);
  std::map<std::string, double> worst;
  for (bool transposeA : {false, true})
    for (bool transposeB : {false, true})
      for (plan::Epilogue epilogue : kEpilogues)
        for (int64_t batchCount : {1, 3})
          for (double beta : {0.0, 0.5}) {
            GemmCase c{DType::F32, transposeA, transposeB, epilogue, batchCount,
                       beta,       false,      37,         29,       53};
            std::string label = std::string(transposeA ? "A^T" : "A") +
                                (transposeB ? " B^T" : " B") + " epilogue " +
                                epilogueName(epilogue) + " batch " +
                                std::to_string(batchCount) + " beta " +
                                std::to_string(beta);
            SCOPED_TRACE(label);
            double error = gemmError(c, generator);
            EXPECT_LT(error, kTolerance);
            double &entry = worst[epilogueName(epilogue)];
            entry = std::max(entry, error);
          }
  for (const auto &[epilogue, error] : worst)
    std::cout << "f32 gemm, epilogue " << epilogue
              << ": largest normwise relative error " << error << "\n";
}

TEST_F(CudaSessionTest, ReducedPrecisionGemms) {
  struct Case {
    DType dtype;
    bool allowTf32;
    plan::Epilogue epilogue;
    /// Normwise relative error allowed: TF32 rounds the inputs to 10-bit
    /// mantissas (some 1e-3 per product, less on the sum); f16 and bf16 round
    /// the f32 result to 11 and 8 bits (5e-4 and 4e-3).
    double tolerance;
  };
  const Case cases[] = {
      {DType::F32, true, plan::Epilogue::None, 2e-3},
      {DType::F32, true, plan::Epilogue::BiasGelu, 2e-3},
      {DType::F16, false, plan::Epilogue::None, 2e-3},
      {DType::F16, false, plan::Epilogue::Bias, 2e-3},
      {DType::BF16, false, plan::Epilogue::None, 1e-2},
      {DType::BF16, false, plan::Epilogue::BiasRelu, 1e-2},
      {DType::BF16, false, plan::Epilogue::BiasGelu, 1e-2},
  };
  Generator generator(43);
  for (const Case &test : cases)
    for (bool transposeB : {false, true})
      for (int64_t batchCount : {1, 2}) {
        std::string label = std::string(dtypeName(test.dtype)) +
                            (test.allowTf32 ? " tf32" : "") + " epilogue " +
                            epilogueName(test.epilogue) +
                            (transposeB ? " B^T" : " B") + " batch " +
                            std::to_string(batchCount);
        SCOPED_TRACE(label);
        GemmCase c{test.dtype, false, transposeB,     test.epilogue,
                   batchCount, 0.5,   test.allowTf32, 128,
                   96,         256};
        double error = gemmError(c, generator);
        EXPECT_LT(error, test.tolerance);
        std::cout << label << ": normwise relative error " << error << "\n";
        if (test.allowTf32) {
          EXPECT_GT(error, 1e-6) << "TF32 was allowed but not used: the "
                                    "result is as exact as f32";
        }
      }
}

TEST_F(CudaSessionTest, F64Gemms) {
  Generator generator(44);
  for (plan::Epilogue epilogue :
       {plan::Epilogue::None, plan::Epilogue::Bias, plan::Epilogue::Relu})
    for (bool transposeA : {false, true}) {
      SCOPED_TRACE(std::string("epilogue ") + epilogueName(epilogue) +
                   (transposeA ? " A^T" : " A"));
      GemmCase c{DType::F64, transposeA, true, epilogue, 3,
                 0.5,        false,      19,   23,       31};
      EXPECT_LT(gemmError(c, generator), 1e-13);
    }
}

TEST_F(CudaSessionTest, GemmsChainThroughTheArena) {
  PlanBuilder builder = mlpPlan();
  PlanFile cpuPlan = planOf(builder);
  // mlpPlan() is a cpu plan with a 64-aligned arena; the same on cuda.
  PlanBuilder cuda(cudaHeader());
  for (uint32_t i = 0; i < cpuPlan.plan().tensors()->size(); ++i) {
    if (cpuPlan.tensorRole(i) == plan::Role::Temporary)
      cuda.addTemporary(cpuPlan.tensorName(i), cpuPlan.tensorDType(i),
                        cpuPlan.tensorShape(i), 0);
    else
      cuda.addTensor(cpuPlan.tensorName(i), cpuPlan.tensorDType(i),
                     cpuPlan.tensorShape(i), cpuPlan.tensorRole(i));
  }
  cuda.setArena(256, 256);
  const plan::Function &forward = *cpuPlan.plan().functions()->Get(0);
  uint32_t f = cuda.addFunction(
      "forward", {forward.inputs()->begin(), forward.inputs()->end()},
      {forward.outputs()->begin(), forward.outputs()->end()});
  for (const plan::Step *step : *forward.steps()) {
    cuda.addGemm(f, gemmDescOf(*step->kind_as_Gemm()), step->location()->str());
  }
  Session session(planOf(cuda));
  for (const auto &[name, value] : mlpParameters())
    session.bind(name, value);
  for (int run = 0; run < 3; ++run) {
    Arrays inputs;
    inputs.emplace("x", mlpInput());
    EXPECT_EQ(valuesOf(session.run("forward", std::move(inputs)).at("y")),
              (std::vector<double>{33, 38}));
  }
  EXPECT_EQ(session.stats().steps[0].name, "gemm 2x4x3 bias_relu");
  EXPECT_EQ(session.stats().steps[1].name, "gemm 2x1x4");
  // Parameters, the input and the output, and the cuBLASLt workspace.
  EXPECT_EQ(session.stats().externalBytes,
            (12 + 4 + 4 + 6 + 2) * 4u + (32u << 20));
}

//===----------------------------------------------------------------------===//
// Training: in-place updates, session-fed tensors, replay
//===----------------------------------------------------------------------===//

/// train_step(w, g, lr, step, rng) -> (w, state): w -= lr * g in place and
/// state = {step, seed, offset}.
PlanFile trainPlan() {
  PlanBuilder builder(cudaHeader());
  uint32_t w =
      builder.addTensor("w", DType::F32, {kElements}, plan::Role::Parameter);
  uint32_t g =
      builder.addTensor("g", DType::F32, {kElements}, plan::Role::Input);
  uint32_t lr = builder.addTensor("lr", DType::F32, {}, plan::Role::Lr);
  uint32_t step = builder.addTensor("step", DType::I64, {}, plan::Role::Step);
  uint32_t rng = builder.addTensor("rng", DType::I64, {2}, plan::Role::RngSeed);
  uint32_t state =
      builder.addTensor("state", DType::I64, {3}, plan::Role::Output);
  builder.addTensor("w.momentum", DType::F32, {kElements},
                    plan::Role::OptimizerState);
  uint32_t image = builder.addImage(plan::ImageFormat::Cubin,
                                    kernelImage(plan::ImageFormat::Cubin), 90);
  uint32_t train = builder.addFunction("train_step", {w, g, lr, step, rng},
                                       {w, state}, true, 10);
  builder.addKernelLaunch(train,
                          {image, "sgd_f32", {w, g, lr}, kGrid, kBlock, 0});
  builder.addKernelLaunch(
      train,
      {image, "record_state", {step, rng, state}, {1, 1, 1}, {1, 1, 1}, 0});
  return planOf(builder);
}

/// w after one sgd_f32 step, bit for bit.
std::vector<float> sgdStep(std::vector<float> w, const HostArray &g, float lr) {
  for (int64_t i = 0; i < kElements; ++i)
    w[i] = std::fma(-lr, g.dataAs<float>()[i], w[i]);
  return w;
}

std::vector<double> asDoubles(const std::vector<float> &values) {
  return {values.begin(), values.end()};
}

TEST_F(CudaSessionTest, TrainingFeedsStepAndRngAndUpdatesInPlace) {
  Session session(trainPlan());
  Generator generator(12);
  HostArray w0 = randomArray(DType::F32, {kElements}, generator);
  std::vector<float> w(w0.dataAs<float>(), w0.dataAs<float>() + kElements);
  session.bind("w", w0);
  session.bind("lr", HostArray::fromValues<float>(DType::F32, {}, {0.25f}));
  session.setRngState({1234, 7});
  EXPECT_EQ(valuesOf(session.tensor("w")), asDoubles(w));

  HostArray g(DType::F32, {kElements});
  for (int run = 0; run < 3; ++run) {
    SCOPED_TRACE("run " + std::to_string(run));
    g = randomArray(DType::F32, {kElements}, generator);
    Arrays inputs;
    inputs.emplace("g", g);
    Arrays outputs = session.run("train_step", std::move(inputs));
    ASSERT_EQ(outputs.size(), 1u) << "in-place parameters are not returned";
    EXPECT_EQ(valuesOf(outputs.at("state")),
              (std::vector<double>{double(run), 1234, 7 + 10.0 * run}));
    w = sgdStep(w, g, 0.25f);
    EXPECT_EQ(valuesOf(session.tensor("w")), asDoubles(w));
    EXPECT_EQ(session.step(), uint64_t(run + 1));
    EXPECT_EQ(session.rngState(), (Generator::State{1234, 17 + 10u * run}));
    EXPECT_EQ(valuesOf(session.tensor("step")),
              (std::vector<double>{double(run)}));
  }
  EXPECT_EQ(valuesOf(session.tensor("w.momentum")),
            std::vector<double>(kElements, 0.0));

  // Three more on the last gradient, without host transfers.
  session.replay("train_step", 3);
  session.synchronize();
  for (int i = 0; i < 3; ++i)
    w = sgdStep(w, g, 0.25f);
  NamedArrays parameters = session.parameters();
  ASSERT_EQ(parameters.size(), 1u);
  EXPECT_EQ(valuesOf(parameters[0].second), asDoubles(w));
  EXPECT_EQ(session.step(), 6u);
  EXPECT_EQ(session.rngState(), (Generator::State{1234, 67}));

  // A run sees what the replays fed last plus one; a bind replaces w.
  session.bind("w", w0);
  Arrays inputs;
  inputs.emplace("g", g);
  EXPECT_EQ(valuesOf(session.run("train_step", std::move(inputs)).at("state")),
            (std::vector<double>{6, 1234, 67}));
  EXPECT_EQ(
      valuesOf(session.tensor("w")),
      asDoubles(sgdStep({w0.dataAs<float>(), w0.dataAs<float>() + kElements}, g,
                        0.25f)));
}

TEST_F(CudaSessionTest, ReplayNeedsARunFirst) {
  Session session(trainPlan());
  EXPECT_TRUE(contains(errorFrom([&] { session.replay("train_step"); }),
                       "replay 'train_step': the function has not run yet"));
  EXPECT_TRUE(contains(errorFrom([&] { session.replay("train_step", -1); }),
                       "replay 'train_step': times is -1, not a count"));
  EXPECT_TRUE(contains(errorFrom([&] { session.replay("nope"); }),
                       "no function 'nope' in the plan"));
}

TEST_F(CudaSessionTest, SessionsMoveAndFunctionsMayBeEmpty) {
  PlanBuilder builder = axpyPlan(plan::ImageFormat::Cubin);
  builder.addFunction("nothing", {}, {});
  Session first(planOf(builder));
  Session second = std::move(first);
  for (int run = 0; run < 3; ++run)
    EXPECT_TRUE(second.run("nothing", {}).empty());
  Generator generator(13);
  Arrays inputs = axpyInputs(generator);
  std::vector<double> expected = axpyExpected(inputs);
  EXPECT_EQ(valuesOf(second.run("forward", std::move(inputs)).at("out")),
            expected);
}

} // namespace
