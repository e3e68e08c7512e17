//===- GenesisRunTest.cpp - The genesis-run tool --------------------------===//

#include "PlanTestSupport.h"

#include "runtime/formats/ArrayIO.h"

#include <cstdlib>
#include <sys/wait.h>

using namespace genesis;
using namespace genesis::test;

namespace {

struct ToolResult {
  int exitCode;
  std::string out;
  std::string err;
};

class GenesisRunTest : public TempDirTest {
protected:
  void SetUp() override {
    TempDirTest::SetUp();
    mlpPlan().write(path("mlp.gplan"));
    saveSafetensors(path("params.safetensors"), mlpParameters());
    saveNpy(path("x.npy"), mlpInput());
  }

  ToolResult run(const std::string &arguments) {
    std::string command = std::string(GENESIS_RUN) + " " + arguments + " >" +
                          path("out.txt") + " 2>" + path("err.txt");
    int status = std::system(command.c_str());
    EXPECT_TRUE(WIFEXITED(status)) << command;
    auto text = [](const std::string &file) {
      std::vector<uint8_t> bytes = readFileBytes(file);
      return std::string(bytes.begin(), bytes.end());
    };
    return {WEXITSTATUS(status), text(path("out.txt")), text(path("err.txt"))};
  }

  /// Runs a command that must fail with one "genesis-run: error:" line.
  std::string errorOf(const std::string &arguments) {
    ToolResult result = run(arguments);
    EXPECT_EQ(result.exitCode, 1) << arguments;
    EXPECT_EQ(result.err.rfind("genesis-run: error: ", 0), 0u) << result.err;
    EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1)
        << result.err;
    return result.err;
  }

  std::string mlpArguments() {
    return path("mlp.gplan") + " --params " + path("params.safetensors") +
           " -i " + path("x.npy");
  }
};

TEST_F(GenesisRunTest, RunsAndPrintsOutputsTimingAndMemory) {
  ToolResult result = run(mlpArguments());
  ASSERT_EQ(result.exitCode, 0) << result.err;
  EXPECT_TRUE(result.err.empty()) << result.err;
  EXPECT_TRUE(contains(result.out, "y: f32[2, 1] = [33, 38]\n"));
  EXPECT_TRUE(contains(result.out, "timing (1 run, mean per run):\n"));
  EXPECT_TRUE(contains(result.out, " ms  gemm 2x4x3 bias_relu  @ mlp.cpp:5\n"));
  EXPECT_TRUE(contains(result.out, " ms  gemm 2x1x4  @ mlp.cpp:6\n"));
  EXPECT_TRUE(contains(result.out,
                       "memory: arena 32 B, persistent 80 B, peak 144 B\n"));
}

TEST_F(GenesisRunTest, RepeatAndNamedFunction) {
  ToolResult result = run(mlpArguments() + " --repeat 3 --function forward");
  ASSERT_EQ(result.exitCode, 0) << result.err;
  EXPECT_TRUE(contains(result.out, "timing (3 runs, mean per run):"));
}

TEST_F(GenesisRunTest, WritesOutputsAndTakesNamedInputs) {
  NamedArrays inputs;
  inputs.emplace_back("x", mlpInput());
  saveSafetensors(path("inputs.safetensors"), inputs);
  ToolResult result =
      run(path("mlp.gplan") + " --params " + path("params.safetensors") +
          " -i " + path("inputs.safetensors") + " -o " + path("y.safetensors") +
          " -o " + path("y.npy"));
  ASSERT_EQ(result.exitCode, 0) << result.err;
  EXPECT_FALSE(contains(result.out, "y: f32"));
  NamedArrays outputs = loadSafetensors(path("y.safetensors"));
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_EQ(outputs[0].first, "y");
  EXPECT_EQ(outputs[0].second.getDouble(1), 38.0);
  EXPECT_EQ(loadNpy(path("y.npy")).getDouble(0), 33.0);
}

TEST_F(GenesisRunTest, InspectPrintsThePlan) {
  ToolResult result = run("--inspect " + path("mlp.gplan"));
  ASSERT_EQ(result.exitCode, 0) << result.err;
  EXPECT_TRUE(contains(result.out, "plan: " + path("mlp.gplan") + "\n"));
  EXPECT_TRUE(contains(result.out, "  compiler: genesis-test 0.1\n"));
  EXPECT_TRUE(contains(result.out, "  target: cpu\n"));
  EXPECT_TRUE(contains(result.out, "#4 h: f32[2, 4] temporary, 32 B at arena "
                                   "[0, 32)\n"));
  EXPECT_TRUE(contains(result.out, "memory: arena 32 B, alignment 64\n"));
  EXPECT_TRUE(contains(result.out, "function forward(x, w1, b1, w2) -> (y)\n"));
  EXPECT_FALSE(contains(result.out, "timing")) << "inspect alone runs nothing";

  ToolResult both = run(mlpArguments() + " --inspect --function forward");
  ASSERT_EQ(both.exitCode, 0) << both.err;
  EXPECT_TRUE(contains(both.out, "  target: cpu\n"));
  EXPECT_TRUE(contains(both.out, "y: f32[2, 1] = [33, 38]\n"));
}

TEST_F(GenesisRunTest, MemoryAndFitsReportWithoutRunning) {
  ToolResult memory = run("--memory " + path("mlp.gplan"));
  ASSERT_EQ(memory.exitCode, 0) << memory.err;
  EXPECT_TRUE(contains(memory.out, "memory of plan '" + path("mlp.gplan") +
                                       "' (cpu): 144 B\n"))
      << memory.out;
  EXPECT_TRUE(contains(memory.out, "  arena: 32 B")) << memory.out;
  EXPECT_TRUE(contains(memory.out, "function 'forward': 2 steps; live "
                                   "temporaries peak at 32 B in 1 buffers at "
                                   "step #0 gemm 2x4x3 bias_relu @ mlp.cpp:5"))
      << memory.out;
  EXPECT_TRUE(contains(memory.out, "    32 B  h  f32[2, 4]  #0-#1  #0 gemm"))
      << memory.out;
  EXPECT_FALSE(contains(memory.out, "timing")) << "--memory runs nothing";

  ToolResult fits = run("--fits 1 " + path("mlp.gplan"));
  ASSERT_EQ(fits.exitCode, 0) << fits.err;
  EXPECT_EQ(fits.out, "fits: 144 B of 1.00 GiB\n");
  ToolResult over = run("--fits 0.00000006 " + path("mlp.gplan"));
  ASSERT_EQ(over.exitCode, 0) << over.err;
  EXPECT_TRUE(contains(over.out, "does not fit: 144 B is 80 B more than 64 B"))
      << over.out;
  EXPECT_TRUE(contains(over.out, "    32 B  h  f32[2, 4]\n")) << over.out;
  EXPECT_TRUE(contains(errorOf("--fits -1 " + path("mlp.gplan")),
                       "--fits needs a positive number of GiB, not '-1'"));
}

// --deterministic changes nothing on the CPU, whose kernels always are.
TEST_F(GenesisRunTest, DeterministicRunIsTheSameRun) {
  ToolResult result = run(mlpArguments() + " --deterministic");
  ASSERT_EQ(result.exitCode, 0) << result.err;
  EXPECT_TRUE(contains(result.out, "y: f32[2, 1] = [33, 38]\n"));
  EXPECT_TRUE(contains(run("--help").out, "--deterministic"));
}

TEST_F(GenesisRunTest, CheckedRunsOfFiniteValuesPrintTheSame) {
  ToolResult result = run(mlpArguments() + " --check-numerics");
  ASSERT_EQ(result.exitCode, 0) << result.err;
  EXPECT_TRUE(contains(result.out, "y: f32[2, 1] = [33, 38]\n"));
}

TEST_F(GenesisRunTest, HelpPrintsUsage) {
  ToolResult result = run("--help");
  EXPECT_EQ(result.exitCode, 0);
  EXPECT_TRUE(contains(result.out, "usage: genesis-run PLAN.gplan"));
}

TEST_F(GenesisRunTest, ErrorsAreOneLine) {
  EXPECT_TRUE(contains(errorOf(path("none.gplan")),
                       "cannot open '" + path("none.gplan") + "'"));
  std::vector<uint8_t> bytes = readFileBytes(path("mlp.gplan"));
  bytes[100] ^= 1;
  writeFileBytes(path("bad.gplan"), bytes);
  EXPECT_TRUE(contains(errorOf(path("bad.gplan")), "content hash mismatch"));
  EXPECT_TRUE(contains(errorOf(mlpArguments() + " --function backward"),
                       "no function 'backward' in the plan (it has: "
                       "forward)"));
  EXPECT_TRUE(contains(
      errorOf(path("mlp.gplan") + " --params " + path("params.safetensors")),
      "missing input 'x' (f32[2, 3])"));
  EXPECT_TRUE(contains(errorOf(path("mlp.gplan") + " -i " + path("x.npy")),
                       "parameter 'w1' was never bound"));
  EXPECT_TRUE(
      contains(errorOf(mlpArguments() + " -i " + path("x.npy")),
               "'" + path("x.npy") + "': the function has only 1 inputs"));
  EXPECT_TRUE(contains(errorOf(mlpArguments() + " -i " + path("x.txt")),
                       "expected a .npy or .safetensors file"));
  EXPECT_TRUE(contains(errorOf(mlpArguments() + " --check-numerics=inf"),
                       "--check-numerics: 'inf' is not a numerics check "
                       "(off, nan or nonfinite)"));
  EXPECT_TRUE(
      contains(errorOf(mlpArguments() + " --numerics-inputs " + path("in.st")),
               "--numerics-inputs needs --check-numerics"));
  EXPECT_TRUE(contains(errorOf(mlpArguments() + " --repeat 0"),
                       "--repeat needs a positive integer, not '0'"));
  EXPECT_TRUE(contains(errorOf(mlpArguments() + " --repeat"),
                       "option '--repeat' needs a value"));
  EXPECT_TRUE(contains(errorOf(mlpArguments() + " --frobnicate"),
                       "unknown option '--frobnicate'"));
  EXPECT_TRUE(contains(errorOf(""), "no plan file given"));
  EXPECT_TRUE(contains(errorOf(path("mlp.gplan") + " " + path("mlp.gplan")),
                       "more than one plan file given"));

  PlanBuilder twoFunctions(testHeader());
  twoFunctions.addFunction("a", {}, {});
  twoFunctions.addFunction("b", {}, {});
  twoFunctions.write(path("two.gplan"));
  EXPECT_TRUE(contains(errorOf(path("two.gplan")),
                       "the plan has 2 functions; choose one with --function "
                       "(a, b)"));
}

} // namespace
