//===- TestSupport.h - Helpers shared by the GoogleTest units ---*- C++ -*-===//

#ifndef GENESIS_TESTS_UNIT_TESTSUPPORT_H
#define GENESIS_TESTS_UNIT_TESTSUPPORT_H

#include "runtime/formats/ArrayIO.h"
#include "runtime/formats/AtomicFile.h"
#include "runtime/support/DType.h"
#include "runtime/support/Error.h"

#include "gtest/gtest.h"

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace genesis::test {

constexpr DType kAllDTypes[] = {DType::F32, DType::F16, DType::BF16, DType::F64,
                                DType::I1,  DType::I32, DType::I64};

/// The message of the genesis::Error that `action` throws; a test failure
/// if it throws none.
template <typename Action> std::string errorFrom(Action action) {
  try {
    action();
  } catch (const Error &error) {
    return error.what();
  }
  ADD_FAILURE() << "expected a genesis::Error";
  return "";
}

/// Whether `text` contains `part`, printing both when it does not.
inline ::testing::AssertionResult contains(const std::string &text,
                                           const std::string &part) {
  if (text.find(part) != std::string::npos)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "'" << text << "' does not contain '" << part << "'";
}

/// Writes `text` to a new file in the temporary directory, named after
/// `stem` and a counter, and returns its path.
inline std::string writeTempFile(const std::string &stem,
                                 const std::string &text) {
  static int count = 0;
  std::string path = (std::filesystem::temp_directory_path() /
                      (stem + "-" + std::to_string(count++) + ".json"))
                         .string();
  std::ofstream(path) << text;
  return path;
}

/// Where GPU cases go (GENESIS_GPU_CASES_DIR), or null when none are written.
inline const char *gpuCasesDir() {
  const char *dir = std::getenv("GENESIS_GPU_CASES_DIR");
  return dir && *dir ? dir : nullptr;
}

/// With GENESIS_GPU_CASES_DIR set, writes a case for
/// scripts/gpu/check_cases.py there, named after the running test and a
/// counter: the plan, its inputs, the evaluator's outputs `want`, the
/// parameters and buffers `params` when there are any (genesis-run
/// --params), and `tolerance` when it is not the f32 budget (0: f32's).
inline void writeGpuCase(const std::vector<uint8_t> &plan,
                         const NamedArrays &inputs, const NamedArrays &want,
                         double tolerance = 0, const NamedArrays &params = {}) {
  const char *dir = gpuCasesDir();
  if (!dir)
    return;
  static std::map<std::string, int> counts;
  std::string test =
      ::testing::UnitTest::GetInstance()->current_test_info()->name();
  std::string stem =
      std::string(dir) + "/" + test + "_" + std::to_string(counts[test]++);
  writeFileAtomically(stem + ".gplan", plan.data(), plan.size());
  saveSafetensors(stem + ".in.safetensors", inputs);
  saveSafetensors(stem + ".want.safetensors", want);
  if (!params.empty())
    saveSafetensors(stem + ".params.safetensors", params);
  if (tolerance > 0) {
    std::string budget = std::to_string(tolerance);
    writeFileAtomically(stem + ".tolerance", budget.data(), budget.size());
  }
}

} // namespace genesis::test

#endif // GENESIS_TESTS_UNIT_TESTSUPPORT_H
