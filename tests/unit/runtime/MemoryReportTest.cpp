//===- MemoryReportTest.cpp - Where a plan's memory goes ------------------===//

#include "PlanTestSupport.h"

#include "runtime/plan/MemoryReport.h"
#include "runtime/session/Session.h"
#include "runtime/support/Error.h"

#include <sstream>

using namespace genesis;
using namespace genesis::test;

namespace {

/// step(x) -> y through three temporaries of overlapping lifetimes:
///   #0 fill a        a live #0-#1 (400 B)
///   #1 copy a -> b   b live #1-#3 (300 B)
///   #2 fill b
///   #3 copy b -> c   c live #3-#4 (40 B)
///   #4 copy c -> y
/// Live bytes per step: 400, 700, 300, 340, 40: the peak is #1, a then b.
PlanBuilder lifetimesPlan(uint64_t bigElements = 0) {
  PlanBuilder builder(testHeader());
  uint32_t w = builder.addTensor("w", DType::F32, {8}, plan::Role::Parameter);
  uint32_t m = builder.addTensor("w.exp_avg", DType::F32, {8},
                                 plan::Role::OptimizerState);
  uint32_t y = builder.addTensor("y", DType::F32, {10}, plan::Role::Output);
  uint32_t a = builder.addTemporary(
      "a", DType::F32, {bigElements ? int64_t(bigElements) : 100}, 0);
  uint64_t aBytes = 4 * (bigElements ? bigElements : 100);
  uint64_t bOffset = (aBytes + 63) / 64 * 64;
  uint32_t b = builder.addTemporary("b", DType::F32, {75}, bOffset);
  uint32_t c = builder.addTemporary("c", DType::F32, {10}, bOffset + 320);
  builder.setArena(bOffset + 384);
  uint32_t f = builder.addFunction("step", {w, m}, {y});
  builder.addFill(f, a, 1.0, "model.cpp:1");
  builder.addCopy(f, a, b, 300, "model.cpp:2");
  builder.addFill(f, b, 2.0, "model.cpp:3");
  builder.addCopy(f, b, c, 40, "model.cpp:4");
  builder.addCopy(f, c, y, 40, "model.cpp:5");
  return builder;
}

TEST(MemoryReport, LifetimesPeakAndLiveBuffers) {
  PlanFile planFile = planOf(lifetimesPlan());
  MemoryReport report = analyzeMemory(planFile);
  EXPECT_EQ(report.arenaBytes, 832u);
  EXPECT_EQ(report.persistentBytes.at(plan::Role::Parameter), 32u);
  EXPECT_EQ(report.persistentBytes.at(plan::Role::OptimizerState), 32u);
  EXPECT_EQ(report.persistentBytes.at(plan::Role::Output), 40u);
  EXPECT_EQ(report.totalBytes(), 832u + 104u);
  ASSERT_EQ(report.functions.size(), 1u);
  const FunctionMemory &step = report.functions[0];
  EXPECT_EQ(step.stepCount, 5u);
  EXPECT_EQ(step.peakStep, 1u);
  EXPECT_EQ(step.peakBytes, 700u);
  ASSERT_EQ(step.liveAtPeak.size(), 2u);
  EXPECT_EQ(planFile.tensorName(step.liveAtPeak[0].tensor), "a");
  EXPECT_EQ(step.liveAtPeak[0].firstStep, 0u);
  EXPECT_EQ(step.liveAtPeak[0].lastStep, 1u);
  EXPECT_EQ(planFile.tensorName(step.liveAtPeak[1].tensor), "b");
  EXPECT_EQ(step.liveAtPeak[1].firstStep, 1u);
  EXPECT_EQ(step.liveAtPeak[1].lastStep, 3u);

  std::ostringstream text;
  describeMemory(planFile, report, text);
  EXPECT_TRUE(contains(text.str(), "memory of plan 'test.gplan' (cpu): 936 B"))
      << text.str();
  EXPECT_TRUE(contains(text.str(), "  persistent: 104 B (parameter 1 32 B, "
                                   "optimizer_state 1 32 B, output 1 40 B)"))
      << text.str();
  EXPECT_TRUE(contains(text.str(),
                       "function 'step': 5 steps; live temporaries peak at "
                       "700 B in 2 buffers at step #1 copy a -> b"))
      << text.str();
  EXPECT_TRUE(contains(text.str(), "    400 B  a  f32[100]  #0-#1  #0 fill a"))
      << text.str();
  EXPECT_TRUE(contains(text.str(), "    300 B  b  f32[75]  #1-#3  #1 copy a "
                                   "-> b"))
      << text.str();
}

TEST(MemoryReport, FitsNamesWhatToShrink) {
  PlanFile planFile = planOf(lifetimesPlan());
  MemoryReport report = analyzeMemory(planFile);
  std::ostringstream fits, over, persistent;
  describeFit(planFile, report, 1000, fits);
  EXPECT_EQ(fits.str(), "fits: 936 B of 1000 B\n");
  // 336 B over: a (400 B) alone covers it.
  describeFit(planFile, report, 600, over);
  EXPECT_TRUE(contains(over.str(), "does not fit: 936 B is 336 B more than "
                                   "600 B\n"))
      << over.str();
  EXPECT_TRUE(contains(over.str(), "    400 B  a  f32[100]\n")) << over.str();
  EXPECT_FALSE(contains(over.str(), "  b  ")) << over.str();
  // Beyond everything live at the peak: the persistent tensors too.
  describeFit(planFile, report, 100, persistent);
  EXPECT_TRUE(contains(persistent.str(), "the persistent tensors must shrink"))
      << persistent.str();

  EXPECT_EQ(largestLiveBuffers(planFile, 1),
            "largest buffers live at the peak of 'step' (step #1, 700 B): a "
            "f32[100] 400 B; persistent tensors 104 B (genesis-run --memory "
            "PLAN lists all)");
}

TEST(MemoryReport, OutOfMemoryNamesTheLargestBuffers) {
  // A 4 TiB temporary: the session refuses the arena before allocating
  // it, naming what it holds.
  PlanFile planFile = planOf(lifetimesPlan(uint64_t(1) << 40));
  try {
    Session session(planFile);
    FAIL() << "a 4 TiB arena was allocated";
  } catch (const Error &error) {
    std::string message = error.what();
    EXPECT_TRUE(contains(message, "out of memory")) << message;
    EXPECT_TRUE(contains(message, "largest buffers live at the peak of 'step' "
                                  "(step #1, 4.00 TiB"))
        << message;
    EXPECT_TRUE(contains(message, "a f32[1099511627776] 4.00 TiB")) << message;
  }
}

} // namespace
