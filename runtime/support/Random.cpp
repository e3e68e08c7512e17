//===- Random.cpp - Seeded host random numbers ----------------------------===//

#include "runtime/support/Random.h"
#include "runtime/support/Philox.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

namespace genesis {

double Generator::uniform() {
  std::array<uint32_t, 4> words = philox4x32(state_.seed, state_.offset++);
  uint64_t bits = (static_cast<uint64_t>(words[0]) << 21) ^ (words[1] >> 11);
  return static_cast<double>(bits & ((1ull << 53) - 1)) * 0x1.0p-53;
}

double Generator::normal() {
  // 1 - u lies in (0, 1], so the logarithm is finite.
  double radius = std::sqrt(-2.0 * std::log(1.0 - uniform()));
  return radius * std::cos(2.0 * M_PI * uniform());
}

int64_t Generator::randint(int64_t low, int64_t high) {
  if (high <= low)
    throw Error("randint: empty range [" + std::to_string(low) + ", " +
                std::to_string(high) + ")");
  auto span = static_cast<double>(high - low);
  auto value = low + static_cast<int64_t>(std::floor(uniform() * span));
  return value < high ? value : high - 1;
}

namespace {

/// Fills elements [0, n) of an array, each from `drawsPerElement` draws of
/// the generator's stream in row-major order: `fill(generator, i)` sets
/// element i from a generator at that element's offset. The stream is
/// counter-based, so large arrays are split across threads and still get
/// the numbers one thread would draw.
template <typename Fill>
void fillInOrder(Generator &generator, int64_t n, uint64_t drawsPerElement,
                 Fill fill) {
  Generator::State start = generator.get_state();
  auto fillRange = [&](int64_t begin, int64_t end) {
    Generator local(start.seed);
    local.set_state(
        {start.seed,
         start.offset + drawsPerElement * static_cast<uint64_t>(begin)});
    for (int64_t i = begin; i < end; ++i)
      fill(local, i);
  };
  constexpr int64_t kElementsPerThread = int64_t{1} << 18;
  int64_t threads = std::min<int64_t>(
      {static_cast<int64_t>(std::max(1u, std::thread::hardware_concurrency())),
       int64_t{16}, std::max<int64_t>(1, n / kElementsPerThread)});
  if (threads <= 1) {
    fillRange(0, n);
  } else {
    // A store can throw (an integer array given a value out of its range):
    // each thread keeps its exception and the first is rethrown here.
    std::vector<std::exception_ptr> errors(static_cast<size_t>(threads));
    auto guardedRange = [&](int64_t t, int64_t chunk) {
      try {
        fillRange(std::min(n, t * chunk), std::min(n, (t + 1) * chunk));
      } catch (...) {
        errors[static_cast<size_t>(t)] = std::current_exception();
      }
    };
    std::vector<std::thread> workers;
    int64_t chunk = (n + threads - 1) / threads;
    try {
      for (int64_t t = 1; t < threads; ++t)
        workers.emplace_back(guardedRange, t, chunk);
    } catch (const std::system_error &) {
      // No more threads: this one fills the chunks of those not started.
    }
    guardedRange(0, chunk);
    for (auto t = static_cast<int64_t>(workers.size()) + 1; t < threads; ++t)
      guardedRange(t, chunk);
    for (std::thread &worker : workers)
      worker.join();
    for (const std::exception_ptr &error : errors)
      if (error)
        std::rethrow_exception(error);
  }
  generator.set_state(
      {start.seed, start.offset + drawsPerElement * static_cast<uint64_t>(n)});
}

} // namespace

void Generator::fill_uniform(HostArray &array, double low, double high) {
  fillInOrder(*this, array.numel(), 1, [&](Generator &generator, int64_t i) {
    array.setDouble(i, low + (high - low) * generator.uniform());
  });
}

void Generator::fill_normal(HostArray &array, double mean, double std) {
  fillInOrder(*this, array.numel(), 2, [&](Generator &generator, int64_t i) {
    array.setDouble(i, mean + std * generator.normal());
  });
}

Generator &default_generator() {
  static Generator generator;
  return generator;
}

void manual_seed(uint64_t seed) { default_generator().manual_seed(seed); }

} // namespace genesis
