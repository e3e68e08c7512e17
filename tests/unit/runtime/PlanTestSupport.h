//===- PlanTestSupport.h - Shared helpers of the plan tests -----*- C++ -*-===//

#ifndef GENESIS_TESTS_UNIT_RUNTIME_PLANTESTSUPPORT_H
#define GENESIS_TESTS_UNIT_RUNTIME_PLANTESTSUPPORT_H

#include "runtime/plan/PlanFile.h"
#include "runtime/support/HostArray.h"
#include "tests/unit/TestSupport.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <unistd.h>
#include <vector>

namespace genesis::test {

inline std::vector<uint8_t> readFileBytes(const std::string &path) {
  std::ifstream stream(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(stream), {}};
}

inline void writeFileBytes(const std::string &path,
                           const std::vector<uint8_t> &bytes) {
  std::ofstream stream(path, std::ios::binary | std::ios::trunc);
  stream.write(reinterpret_cast<const char *>(bytes.data()),
               static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(stream.good()) << path;
}

#ifdef GENESIS_TEST_KERNELS
/// The shared library built from TestKernels.c (for the binaries that are
/// given its path).
inline std::vector<uint8_t> testKernelImage() {
  std::vector<uint8_t> bytes = readFileBytes(GENESIS_TEST_KERNELS);
  EXPECT_GT(bytes.size(), 0u) << GENESIS_TEST_KERNELS;
  return bytes;
}
#endif

inline PlanHeader testHeader(const std::string &modelHash = "test-model") {
  PlanHeader header;
  header.compilerVersion = "genesis-test 0.1";
  header.flags = "--target=cpu";
  header.modelHash = modelHash;
  return header;
}

inline PlanFile planOf(const PlanBuilder &builder) {
  std::vector<uint8_t> bytes = builder.bytes();
  return PlanFile::fromBytes(bytes.data(), bytes.size(), "test.gplan");
}

/// forward(x, w1, b1, w2) -> y = relu(x w1^T + b1) w2, through an arena
/// temporary h.
inline PlanBuilder mlpPlan() {
  PlanBuilder builder(testHeader());
  uint32_t x = builder.addTensor("x", DType::F32, {2, 3}, plan::Role::Input);
  uint32_t w1 =
      builder.addTensor("w1", DType::F32, {4, 3}, plan::Role::Parameter);
  uint32_t b1 = builder.addTensor("b1", DType::F32, {4}, plan::Role::Parameter);
  uint32_t w2 =
      builder.addTensor("w2", DType::F32, {4, 1}, plan::Role::Parameter);
  uint32_t h = builder.addTemporary("h", DType::F32, {2, 4}, 0);
  uint32_t y = builder.addTensor("y", DType::F32, {2, 1}, plan::Role::Output);
  builder.setArena(32);
  uint32_t f = builder.addFunction("forward", {x, w1, b1, w2}, {y});
  GemmDesc first;
  first.a = x;
  first.b = w1;
  first.c = h;
  first.bias = b1;
  first.m = 2;
  first.n = 4;
  first.k = 3;
  first.transposeB = true;
  first.epilogue = plan::Epilogue::BiasRelu;
  builder.addGemm(f, first, "mlp.cpp:5");
  GemmDesc second;
  second.a = h;
  second.b = w2;
  second.c = y;
  second.m = 2;
  second.n = 1;
  second.k = 4;
  builder.addGemm(f, second, "mlp.cpp:6");
  return builder;
}

/// With these, mlpInput() gives h = relu([1 2 -7 7], [-1 5 -8 7]) =
/// [1 2 0 7], [0 5 0 7] and y = [33, 38].
inline std::vector<std::pair<std::string, HostArray>> mlpParameters() {
  return {
      {"w1", HostArray::fromValues<float>(
                 DType::F32, {4, 3}, {1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1})},
      {"b1", HostArray::fromValues<float>(DType::F32, {4}, {0, 0, -10, 1})},
      {"w2", HostArray::fromValues<float>(DType::F32, {4, 1}, {1, 2, 3, 4})}};
}

inline HostArray mlpInput() {
  return HostArray::fromValues<float>(DType::F32, {2, 3}, {1, 2, 3, -1, 5, 2});
}

/// A fresh directory per test (ctest runs test binaries in parallel).
class TempDirTest : public ::testing::Test {
protected:
  void SetUp() override {
    const auto *info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ("genesis-plan-" + std::to_string(getpid()) + "-" +
            info->test_suite_name() + "-" + info->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string path(const std::string &name) const { return dir_ / name; }

  std::filesystem::path dir_;
};

} // namespace genesis::test

#endif // GENESIS_TESTS_UNIT_RUNTIME_PLANTESTSUPPORT_H
