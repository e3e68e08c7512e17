//===- RandomTest.cpp - Seeded host random numbers ------------------------===//

#include "runtime/support/Random.h"

#include <gtest/gtest.h>

using namespace genesis;

namespace {

// Arrays of 2^20 elements are filled on several threads (where the machine
// has several cores); the numbers must be those of one draw after another.
TEST(RandomTest, LargeFillsDrawTheSequentialStream) {
  constexpr int64_t kElements = int64_t{1} << 20;
  for (bool normal : {true, false}) {
    Generator filler(11), reference(11);
    filler.uniform(); // a stream that does not start at offset 0
    reference.uniform();
    HostArray array(DType::F64, {kElements});
    if (normal)
      filler.fill_normal(array, 0.5, 2.0);
    else
      filler.fill_uniform(array, -1.0, 3.0);
    for (int64_t i = 0; i < kElements; ++i) {
      double expected = normal ? 0.5 + 2.0 * reference.normal()
                               : -1.0 + 4.0 * reference.uniform();
      ASSERT_EQ(array.getDouble(i), expected) << "element " << i;
    }
    EXPECT_EQ(filler.get_state(), reference.get_state());
  }
}

TEST(RandomTest, AStoreThatThrowsOnAWorkerIsRethrown) {
  // Normal values far beyond i32's range: the store throws on every chunk.
  HostArray array(DType::I32, {int64_t{1} << 20});
  Generator generator(3);
  EXPECT_THROW(generator.fill_normal(array, 1e12, 1.0), Error);
}

} // namespace
