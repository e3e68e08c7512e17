//===- ThreadPool.cpp - The CPU session's kernel threads ------------------===//

#include "runtime/session/ThreadPool.h"

#include "runtime/support/Error.h"

#include <algorithm>
#include <cstdlib>

namespace genesis {

unsigned sessionThreadCount(const std::string &where) {
  if (const char *value = std::getenv("GENESIS_NUM_THREADS"); value && *value) {
    char *end = nullptr;
    long count = std::strtol(value, &end, 10);
    if (*end != '\0' || count < 1 || count > 1024)
      throw Error(where + ": GENESIS_NUM_THREADS is '" + value +
                  "', not a thread count in [1, 1024]");
    return static_cast<unsigned>(count);
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

} // namespace genesis
