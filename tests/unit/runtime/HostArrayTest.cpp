//===- HostArrayTest.cpp - Tests for HostArray and DType ------------------===//

#include "runtime/support/HostArray.h"

#include <gtest/gtest.h>

#include "tests/unit/TestSupport.h"

#include <cmath>
#include <cstdint>
#include <limits>

using namespace genesis;
using namespace genesis::test;

namespace {

/// Runs `action`, which must throw genesis::Error, and returns the message.
} // namespace

TEST(DTypeTest, NamesSizesAndParsing) {
  EXPECT_STREQ(dtypeName(DType::BF16), "bf16");
  EXPECT_STREQ(dtypeName(DType::I1), "i1");
  EXPECT_EQ(dtypeSize(DType::I1), 1u);
  EXPECT_EQ(dtypeSize(DType::F16), 2u);
  EXPECT_EQ(dtypeSize(DType::BF16), 2u);
  EXPECT_EQ(dtypeSize(DType::I32), 4u);
  EXPECT_EQ(dtypeSize(DType::F64), 8u);
  for (DType dtype : kAllDTypes) {
    EXPECT_EQ(parseDType(dtypeName(dtype)), dtype);
    EXPECT_NE(isFloatDType(dtype), isIntegerDType(dtype));
  }
  EXPECT_EQ(parseDType("F32"), std::nullopt);
  EXPECT_EQ(parseDType("f3"), std::nullopt);
  EXPECT_EQ(parseDType(""), std::nullopt);
  EXPECT_TRUE(isFloatDType(DType::BF16));
  EXPECT_TRUE(isIntegerDType(DType::I1));
}

TEST(HostArrayTest, DefaultIsEmptyF32) {
  HostArray array;
  EXPECT_EQ(array.dtype(), DType::F32);
  EXPECT_EQ(array.shape(), std::vector<int64_t>{0});
  EXPECT_EQ(array.numel(), 0);
  EXPECT_EQ(array.nbytes(), 0u);
  EXPECT_EQ(array.typeString(), "f32[0]");
}

TEST(HostArrayTest, ConstructionIsZeroFilledAndAligned) {
  HostArray array(DType::F64, {3, 5});
  EXPECT_EQ(array.rank(), 2);
  EXPECT_EQ(array.numel(), 15);
  EXPECT_EQ(array.nbytes(), 120u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(array.data()) % 64, 0u);
  for (int64_t i = 0; i < array.numel(); ++i)
    EXPECT_EQ(array.getDouble(i), 0.0);
  EXPECT_EQ(array.typeString(), "f64[3, 5]");
}

TEST(HostArrayTest, ScalarHasRankZeroAndOneElement) {
  HostArray scalar(DType::I32, {});
  EXPECT_EQ(scalar.rank(), 0);
  EXPECT_EQ(scalar.numel(), 1);
  EXPECT_EQ(scalar.nbytes(), 4u);
  EXPECT_EQ(scalar.typeString(), "i32[]");
  scalar.setInt(0, -7);
  EXPECT_EQ(scalar.getInt(0), -7);
}

TEST(HostArrayTest, RejectsNegativeAndOverflowingShapes) {
  std::string message = errorFrom([] { HostArray(DType::F32, {2, -3}); });
  EXPECT_TRUE(contains(message, "negative dimension -3"));
  EXPECT_TRUE(contains(message, "[2, -3]"));
  int64_t big = int64_t(1) << 32;
  EXPECT_THROW(HostArray::numelOf({big, big, big}), Error);
  // The element count fits in int64 but the byte count does not.
  EXPECT_THROW(HostArray(DType::F64, {int64_t(1) << 61}), Error);
  EXPECT_EQ(HostArray::numelOf({}), 1);
  EXPECT_EQ(HostArray::numelOf({4, 0, 3}), 0);
  EXPECT_EQ(HostArray::numelOf({2, 3, 4}), 24);
}

TEST(HostArrayTest, DataAsChecksElementSize) {
  HostArray array = HostArray::fromValues<float>(DType::F32, {3}, {1, 2, 3});
  EXPECT_EQ(array.dataAs<float>()[2], 3.0f);
  EXPECT_EQ(array.dataAs<int32_t>()[0], 0x3F800000);
  const HostArray &constArray = array;
  EXPECT_EQ(constArray.dataAs<float>()[1], 2.0f);
  std::string message = errorFrom([&] { array.dataAs<double>(); });
  EXPECT_TRUE(contains(message, "f32[3]"));
  EXPECT_TRUE(contains(message, "8-byte"));
  EXPECT_THROW(constArray.dataAs<uint16_t>(), Error);
}

TEST(HostArrayTest, FromValuesChecksCountAndConverts) {
  EXPECT_TRUE(contains(
      errorFrom([] {
        HostArray::fromValues<double>(DType::F32, {2, 3}, {1, 2, 3, 4, 5});
      }),
      "f32[2, 3] needs 6 values, got 5"));
  HostArray half =
      HostArray::fromValues<double>(DType::F16, {3}, {1.0 + 0x1p-11, 0.1, -2});
  EXPECT_EQ(half.dataAs<uint16_t>()[0], 0x3C00); // tie rounds to even
  EXPECT_EQ(half.dataAs<uint16_t>()[1], 0x2E66);
  EXPECT_EQ(half.getDouble(2), -2.0);

  // Integral inputs keep full int64 precision.
  int64_t large = (int64_t(1) << 62) + 1;
  HostArray ints = HostArray::fromValues<int64_t>(DType::I64, {2}, {large, -1});
  EXPECT_EQ(ints.getInt(0), large);
  EXPECT_EQ(ints.dataAs<int64_t>()[1], -1);

  HostArray flags =
      HostArray::fromValues<bool>(DType::I1, {3}, {true, false, true});
  EXPECT_EQ(static_cast<const uint8_t *>(flags.data())[0], 1);
  EXPECT_EQ(flags.getInt(1), 0);
}

TEST(HostArrayTest, SetDoubleRoundsFloatsAndTruncatesIntegers) {
  HostArray f32(DType::F32, {1});
  f32.setDouble(0, 0.1);
  EXPECT_EQ(f32.dataAs<float>()[0], 0.1f);

  HostArray bf16(DType::BF16, {1});
  bf16.setDouble(0, 1.0 + 0x1p-8 + 0x1p-30); // directly rounded, not via f32
  EXPECT_EQ(bf16.dataAs<uint16_t>()[0], 0x3F81);

  HostArray i32(DType::I32, {4});
  i32.setDouble(0, 2.9);
  i32.setDouble(1, -2.9);
  i32.setDouble(2, 2147483647.9);
  i32.setDouble(3, -2147483648.9);
  EXPECT_EQ(i32.getInt(0), 2);
  EXPECT_EQ(i32.getInt(1), -2);
  EXPECT_EQ(i32.getInt(2), std::numeric_limits<int32_t>::max());
  EXPECT_EQ(i32.getInt(3), std::numeric_limits<int32_t>::min());

  HostArray i1(DType::I1, {4});
  i1.setDouble(0, 0.25);
  i1.setDouble(1, -0.0);
  i1.setDouble(2, -3);
  i1.setDouble(3, 0);
  const auto *bytes = static_cast<const uint8_t *>(i1.data());
  EXPECT_EQ(bytes[0], 1);
  EXPECT_EQ(bytes[1], 0);
  EXPECT_EQ(bytes[2], 1);
  EXPECT_EQ(bytes[3], 0);
}

TEST(HostArrayTest, UnrepresentableIntegerConversionsThrow) {
  HostArray i32(DType::I32, {1});
  EXPECT_THROW(i32.setDouble(0, 2147483648.0), Error);
  EXPECT_THROW(i32.setDouble(0, std::nan("")), Error);
  EXPECT_THROW(i32.setInt(0, int64_t(1) << 31), Error);
  i32.setInt(0, -(int64_t(1) << 31));
  EXPECT_EQ(i32.getInt(0), std::numeric_limits<int32_t>::min());

  HostArray i64(DType::I64, {1});
  EXPECT_TRUE(contains(errorFrom([&] { i64.setDouble(0, 0x1p63); }),
                       "to i64: out of range"));
  i64.setDouble(0, -0x1p63);
  EXPECT_EQ(i64.getInt(0), std::numeric_limits<int64_t>::min());

  HostArray f32 = HostArray::fromValues<double>(
      DType::F32, {3},
      {std::nan(""), std::numeric_limits<double>::infinity(), -3.75});
  EXPECT_THROW(f32.getInt(0), Error);
  EXPECT_THROW(f32.getInt(1), Error);
  EXPECT_EQ(f32.getInt(2), -3);
}

TEST(HostArrayTest, SetIntRoundsCorrectlyIntoNarrowFloats) {
  // 2^60 + 2^52 + 1 lies just above a bfloat16 tie; converting to double
  // first would drop the +1 and round the tie down to 2^60.
  HostArray bf16(DType::BF16, {2});
  bf16.setInt(0, (int64_t(1) << 60) + (int64_t(1) << 52) + 1);
  bf16.setInt(1, -((int64_t(1) << 60) + (int64_t(1) << 52)));
  EXPECT_EQ(bf16.getDouble(0), 0x1p60 + 0x1p53);
  EXPECT_EQ(bf16.getDouble(1), -0x1p60); // an exact tie goes to even

  HostArray f16(DType::F16, {3});
  f16.setInt(0, 2049); // tie between 2048 and 2050 goes to even 2048
  f16.setInt(1, 65520);
  f16.setInt(2, std::numeric_limits<int64_t>::min());
  EXPECT_EQ(f16.getDouble(0), 2048.0);
  EXPECT_EQ(f16.getDouble(1), std::numeric_limits<double>::infinity());
  EXPECT_EQ(f16.getDouble(2), -std::numeric_limits<double>::infinity());

  HostArray f64(DType::F64, {1});
  f64.setInt(0, (int64_t(1) << 53) + 1);
  EXPECT_EQ(f64.getDouble(0), 0x1p53);
}

TEST(HostArrayTest, EveryDTypeStoresAndLoadsSmallIntegers) {
  for (DType dtype : kAllDTypes) {
    HostArray array(dtype, {5});
    for (int64_t i = 0; i < 5; ++i)
      array.setInt(i, i % 2 == 0 ? i : -i);
    for (int64_t i = 0; i < 5; ++i) {
      int64_t expected = i % 2 == 0 ? i : -i;
      if (dtype == DType::I1)
        expected = expected != 0;
      EXPECT_EQ(array.getInt(i), expected) << dtypeName(dtype);
      EXPECT_EQ(array.getDouble(i), static_cast<double>(expected))
          << dtypeName(dtype);
    }
  }
}

TEST(HostArrayTest, TypeComparisonAndCopies) {
  HostArray a(DType::F32, {2, 3});
  HostArray b(DType::F32, {2, 3});
  HostArray c(DType::F32, {3, 2});
  HostArray d(DType::F16, {2, 3});
  EXPECT_TRUE(a.sameTypeAs(b));
  EXPECT_FALSE(a.sameTypeAs(c));
  EXPECT_FALSE(a.sameTypeAs(d));

  a.setDouble(4, 1.5);
  HostArray copy = a;
  copy.setDouble(4, -1.0);
  EXPECT_EQ(a.getDouble(4), 1.5);
  EXPECT_EQ(copy.getDouble(4), -1.0);
  EXPECT_NE(copy.data(), a.data());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(copy.data()) % 64, 0u);

  HostArray moved = std::move(copy);
  EXPECT_EQ(moved.getDouble(4), -1.0);
  EXPECT_EQ(moved.typeString(), "f32[2, 3]");
  EXPECT_EQ(shapeString({}), "[]");
  EXPECT_EQ(shapeString({7}), "[7]");
}

TEST(HostArrayTest, ToFloatTypeRoundsOnceAndRefusesIntegers) {
  // 1 + 2^-8 is a bf16 tie (rounds to even, 1); 1 + 3 * 2^-9 rounds up.
  HostArray wide = HostArray::fromValues(
      DType::F32, {4},
      std::vector<double>{1.0 + 1.0 / 256, 1.0 + 3.0 / 512, -2.5, 3e38});
  for (DType narrow : {DType::BF16, DType::F16, DType::F64}) {
    HostArray converted = wide.toFloatType(narrow);
    ASSERT_EQ(converted.dtype(), narrow);
    ASSERT_EQ(converted.shape(), wide.shape());
    for (int64_t i = 0; i < wide.numel(); ++i) {
      HostArray one(narrow, {1});
      one.setDouble(0, wide.getDouble(i));
      EXPECT_EQ(converted.getDouble(i), one.getDouble(0))
          << dtypeName(narrow) << " element " << i;
      // And back: the narrow value widens exactly.
      EXPECT_EQ(converted.toFloatType(DType::F32).getDouble(i),
                static_cast<float>(one.getDouble(0)));
    }
  }
  EXPECT_EQ(wide.toFloatType(DType::BF16).getDouble(0), 1.0);
  EXPECT_EQ(wide.toFloatType(DType::BF16).getDouble(1), 1.0 + 1.0 / 128);
  EXPECT_THROW(wide.toFloatType(DType::I32), Error);
  EXPECT_THROW(HostArray(DType::I64, {2}).toFloatType(DType::F32), Error);
}
