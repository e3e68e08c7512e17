//===- Random.h - Seeded host random numbers --------------------*- C++ -*-===//
//
// A Generator draws from Philox-4x32-10 keyed by its seed, one counter per
// draw, so its whole state is (seed, offset): get_state/set_state are exact,
// two generators with the same seed give the same numbers, and weight
// initialisation is reproducible from the seed alone. Names follow PyTorch
// (manual_seed, initial_seed, get_state, set_state).
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_RUNTIME_RANDOM_H
#define GENESIS_RUNTIME_RANDOM_H

#include "runtime/support/HostArray.h"

#include <cstdint>

namespace genesis {

class Generator {
public:
  struct State {
    uint64_t seed = 0;
    uint64_t offset = 0;
    bool operator==(const State &other) const {
      return seed == other.seed && offset == other.offset;
    }
  };

  explicit Generator(uint64_t seed = kDefaultSeed) { manual_seed(seed); }

  /// Restarts the stream of `seed`.
  void manual_seed(uint64_t seed) { state_ = {seed, 0}; }
  uint64_t initial_seed() const { return state_.seed; }
  State get_state() const { return state_; }
  void set_state(State state) { state_ = state; }

  /// Uniform in [0, 1) with 53 random bits.
  double uniform();
  /// Standard normal (Box-Muller on two uniforms: two draws).
  double normal();
  /// Uniform integer in [low, high); throws if the range is empty.
  int64_t randint(int64_t low, int64_t high);

  /// Fills every element (row-major order, one draw each) with U[low, high).
  /// Large arrays are filled on several threads with the same numbers.
  void fill_uniform(HostArray &array, double low, double high);
  /// Fills every element with N(mean, std^2) (two draws each).
  void fill_normal(HostArray &array, double mean, double std);

  static constexpr uint64_t kDefaultSeed = 67280421310721ull;

private:
  State state_;
};

/// The process-wide generator used when none is passed, as torch's default.
Generator &default_generator();
/// Reseeds the default generator.
void manual_seed(uint64_t seed);

} // namespace genesis

#endif // GENESIS_RUNTIME_RANDOM_H
