//===- TestSupport.h - Helpers shared by the GoogleTest units ---*- C++ -*-===//

#ifndef GENESIS_TESTS_UNIT_TESTSUPPORT_H
#define GENESIS_TESTS_UNIT_TESTSUPPORT_H

#include "runtime/support/DType.h"
#include "runtime/support/Error.h"

#include "gtest/gtest.h"

#include <filesystem>
#include <fstream>
#include <string>

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

} // namespace genesis::test

#endif // GENESIS_TESTS_UNIT_TESTSUPPORT_H
