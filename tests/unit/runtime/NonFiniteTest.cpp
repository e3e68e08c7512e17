//===- NonFiniteTest.cpp - The bit test of numerics checks ----------------===//
//
// firstNonFinite on every float dtype: the largest finite values, zeros,
// subnormals and negative values pass; infinities are found by the
// non-finite check and not by the NaN check; NaNs of either sign and any
// payload by both; integer dtypes never report.
//
//===----------------------------------------------------------------------===//

#include "runtime/support/NonFinite.h"
#include "runtime/support/HostArray.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstring>
#include <limits>

using namespace genesis;

namespace {

/// `values` in `dtype`, each rounded once.
HostArray arrayOf(DType dtype, const std::vector<double> &values) {
  HostArray array(dtype, {static_cast<int64_t>(values.size())});
  for (size_t i = 0; i < values.size(); ++i)
    array.setDouble(static_cast<int64_t>(i), values[i]);
  return array;
}

std::optional<uint64_t> first(const HostArray &array, NumericsCheck check) {
  return firstNonFinite(array.data(), static_cast<uint64_t>(array.numel()),
                        array.dtype(), check);
}

TEST(NonFinite, EveryFloatDType) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (DType dtype : {DType::F16, DType::BF16, DType::F32, DType::F64}) {
    SCOPED_TRACE(dtypeName(dtype));
    // 65504 is f16's largest finite value; the others hold it too.
    HostArray finite =
        arrayOf(dtype, {0.0, -0.0, 1.0, -65504.0, 65504.0, 1e-7, -3.5});
    EXPECT_FALSE(first(finite, NumericsCheck::NonFinite));
    EXPECT_FALSE(first(finite, NumericsCheck::NaN));

    HostArray infinite = arrayOf(dtype, {1.0, 2.0, -inf, 4.0, inf});
    EXPECT_EQ(first(infinite, NumericsCheck::NonFinite), 2u);
    EXPECT_FALSE(first(infinite, NumericsCheck::NaN));

    HostArray mixed = arrayOf(dtype, {1.0, inf, 3.0, -nan, nan});
    EXPECT_EQ(first(mixed, NumericsCheck::NonFinite), 1u);
    EXPECT_EQ(first(mixed, NumericsCheck::NaN), 3u);
    EXPECT_FALSE(first(mixed, NumericsCheck::Off));
  }
}

TEST(NonFinite, NaNPayloadsAndOverflow) {
  // A signalling NaN with the lowest payload bit, in f32.
  HostArray bits(DType::F32, {2});
  uint32_t words[2] = {0x3f800000u, 0x7f800001u};
  std::memcpy(bits.data(), words, sizeof words);
  EXPECT_EQ(first(bits, NumericsCheck::NaN), 1u);
  // 1e5 overflows f16 to infinity when rounded.
  HostArray overflow = arrayOf(DType::F16, {1e5});
  EXPECT_EQ(first(overflow, NumericsCheck::NonFinite), 0u);
}

TEST(NonFinite, IntegersNeverReport) {
  HostArray ints(DType::I32, {3});
  int32_t values[3] = {0x7f800000, -1, 0x7fc00000};
  std::memcpy(ints.data(), values, sizeof values);
  EXPECT_FALSE(first(ints, NumericsCheck::NonFinite));
  EXPECT_FALSE(nonFiniteBits(DType::I64, NumericsCheck::NonFinite));
}

TEST(NonFinite, ParsesItsSpellings) {
  EXPECT_EQ(parseNumericsCheck("nan", "--x"), NumericsCheck::NaN);
  EXPECT_EQ(parseNumericsCheck("nonfinite", "--x"), NumericsCheck::NonFinite);
  EXPECT_EQ(parseNumericsCheck("off", "--x"), NumericsCheck::Off);
  try {
    parseNumericsCheck("inf", "--check-numerics");
    ADD_FAILURE() << "accepted 'inf'";
  } catch (const Error &error) {
    EXPECT_STREQ(error.what(), "--check-numerics: 'inf' is not a numerics "
                               "check (off, nan or nonfinite)");
  }
}

} // namespace
