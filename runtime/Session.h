//===- Session.h - Executing a plan on the CPU ------------------*- C++ -*-===//
//
// A Session runs the functions of a verified cpu plan. It allocates one arena
// of the plan's arena_bytes (aligned to at least 64 bytes) in which every
// temporary lives at its planned offset, and owns the persistent tensors
// (parameters, optimizer state, buffers, learning rates) as HostArrays.
// Inputs and outputs belong to the caller: run() takes the inputs by value
// and hands back the outputs, so no tensor is copied on the way in or out.
//
// Kernel ABI (images of format elf-so): every symbol a KernelLaunch names is
//
//   extern "C" void symbol(void **args);
//
// where args[i] is the data pointer of the launch's i-th argument tensor
// (in the arena, in a persistent tensor, or in a caller's input or output).
// Shapes are static and compiled into the kernel, so no sizes are passed;
// a kernel may write any of its arguments. Each image is loaded once per
// session (from a memfd, with dlopen) and each symbol is resolved once, when
// the session is created; a missing symbol is an error then, not at run time.
//
// Threading: an image may also export
//
//   extern "C" void symbol_range(void **args, int64_t begin, int64_t end);
//
// running iterations [begin, end) of the kernel's outermost loop, which must
// be independent. A launch whose outer_extent is at least 2 then runs as
// contiguous chunks of [0, outer_extent) on a thread pool the session owns
// (GENESIS_NUM_THREADS threads, the caller included; by default the
// hardware's concurrency; 1 runs everything on the calling thread).
// Without symbol_range, or with outer_extent 1, `symbol` runs as one piece;
// so does a launch whose argument tensors total fewer bytes than
// GENESIS_MIN_SPLIT_BYTES (default 512 KiB), too little work to pay for
// waking the pool.
//
// Session-fed tensors: before each run the session writes its step count
// into step tensors and its RNG state (seed, offset) into rng_seed tensors.
// After a successful run of a function marked advances_step the step count
// grows by one; the RNG offset grows by the function's rng_offset_advance.
//
// Parameters, buffers and learning rates must be bound (bind() or a loaded
// checkpoint) before a function that reads them runs; optimizer state starts
// at zero. A persistent tensor listed as a function output is updated in
// place: the steps write its storage directly.
//
// A Session is not thread-safe; use one per thread.
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_RUNTIME_SESSION_H
#define GENESIS_RUNTIME_SESSION_H

#include "runtime/ArrayIO.h"
#include "runtime/HostArray.h"
#include "runtime/PlanFile.h"
#include "runtime/Random.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace genesis {

/// One entry of the plan's tensor table.
struct TensorInfo {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  plan::Role role;
};

struct StepTiming {
  std::string function;
  /// As stepName() gives it, e.g. "gemm 64x128x256 bias_relu".
  std::string name;
  /// The user's source line, when the plan records it.
  std::string location;
  uint64_t calls = 0;
  double totalSeconds = 0;
};

struct SessionStats {
  /// Every step of every function, in plan order.
  std::vector<StepTiming> steps;
  uint64_t arenaBytes = 0;
  /// Persistent tensors the session owns.
  uint64_t externalBytes = 0;
  /// The most host bytes the session held at once: arena, persistent tensors
  /// and the inputs and outputs of the largest run so far.
  uint64_t peakBytes = 0;
};

class Session {
public:
  /// Loads the kernel images and resolves their symbols; allocates the arena
  /// and the persistent tensors. Throws genesis::Error for a plan whose
  /// target is not cpu, an image that does not load, a missing symbol, or
  /// memory that cannot be allocated (naming the bytes asked and available).
  explicit Session(const PlanFile &planFile);
  ~Session();
  Session(Session &&) noexcept;
  Session &operator=(Session &&) noexcept;

  /// Copies `value` into the persistent tensor `name` (a parameter,
  /// optimizer_state, buffer or lr tensor) after checking its dtype and shape.
  void bind(const std::string &name, const HostArray &value);

  /// Runs `function`. `inputs` must hold exactly the function's input-role
  /// tensors, by name, with the plan's dtypes and shapes. Returns the
  /// function's output-role tensors (and inputs it updates in place), by
  /// name. On an error nothing has run and the session is unchanged.
  std::map<std::string, HostArray> run(const std::string &function,
                                       std::map<std::string, HostArray> inputs);

  const std::vector<TensorInfo> &tensors() const { return tensors_; }
  std::vector<std::string> functionNames() const;
  /// The persistent (or session-fed) tensor `name`.
  const HostArray &tensor(const std::string &name) const;
  /// Copies of the parameters, in plan order.
  NamedArrays parameters() const;

  uint64_t step() const { return step_; }
  void setStep(uint64_t step) { step_ = step; }
  Generator::State rngState() const { return rngState_; }
  void setRngState(Generator::State state) { rngState_ = state; }

  /// The model hash from the plan's header.
  const std::string &modelHash() const { return modelHash_; }
  /// The plan's name (its path, for a loaded file), for messages.
  const std::string &planName() const { return planName_; }

  SessionStats stats() const;
  /// Zeroes the step timings (peak memory is kept).
  void resetStats();

private:
  struct Impl;

  uint32_t indexOf(const std::string &name) const;
  [[noreturn]] void fail(const std::string &problem) const;

  std::string planName_;
  std::string modelHash_;
  std::vector<TensorInfo> tensors_;
  uint64_t step_ = 0;
  Generator::State rngState_;
  std::unique_ptr<Impl> impl_;
};

} // namespace genesis

#endif // GENESIS_RUNTIME_SESSION_H
