//===- Session.h - Executing a plan -----------------------------*- C++ -*-===//
//
// A Session runs the functions of a verified plan, on the CPU for a cpu plan
// and on the GPU for a cuda plan (see "CUDA plans" below; what follows up to
// there is about cpu plans). It allocates one arena
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
// CUDA plans run on device 0 (CUDA_VISIBLE_DEVICES picks it), in its primary
// context, on one stream the session owns. The driver (libcuda.so.1) and
// cuBLASLt are loaded when the first cuda plan is opened; a runtime built
// without CUDA, or a machine without a driver or a device, is an Error then
// (cudaUnavailableReason() tells beforehand).
//
//  - Memory: when the session is created it allocates, and zeroes, one
//    device arena of arena_bytes (at least 256-aligned), one buffer per
//    persistent tensor and one per input and output tensor, and for GEMMs a
//    32 MiB cuBLASLt workspace; none ever moves. run() copies the inputs to
//    their buffers and the outputs back into the HostArrays it returns.
//    bind() uploads; tensor() and parameters() read back, when asked, what
//    runs may have changed (a reference from tensor() shows the values as of
//    that call). stats() counts device bytes: externalBytes is all but the
//    arena, peakBytes all of it.
//  - Kernel ABI (images of format cubin or ptx, each for one chip): the
//    session loads, with cuModuleLoadData, the one image that fits device 0
//    (chooseCudaImage: a cubin of its major version, else a PTX the driver
//    compiles; GENESIS_CUDA_IMAGE=ptx takes the PTX) and resolves every
//    launched symbol when it is created; a plan with no image for the device
//    is refused, naming the device's chip and the plan's. A KernelLaunch is
//
//      cuLaunchKernelEx(symbol, grid, block, shared_memory_bytes, stream,
//                       params)
//
//    (with programmatic stream serialization when the image's kernels wait
//    for prerequisite grids, Plan.fbs; GENESIS_CUDA_PDL=0 turns it off)
//    where kernel parameter i is one 8-byte device address, the data pointer
//    of args[i] (MLIR's bare-pointer memref convention); no sizes are
//    passed. The session checks each kernel's parameter count and sizes
//    against this, and lets kernels asking for more than 48 KiB of dynamic
//    shared memory use it.
//  - GEMMs run on cuBLASLt; each step's algorithm is chosen when the session
//    is created. f32 is exact (f32 accumulation) unless the step allows TF32.
//  - Execution: a function's first run executes its steps one by one, which
//    loads the kernels and warms cuBLASLt; its second run captures them into
//    a CUDA graph, which that run and every later one launches. A fault
//    inside a kernel is reported by the synchronization that finds it (at
//    the end of run()), naming the function but not the step; after one, the
//    session's state is undefined.
//  - Profiling: per-step times are taken only while setProfiling(true) is in
//    effect: steps then run one by one between CUDA events, without graphs,
//    and stats().steps adds up their device times. Otherwise graphs run and
//    stats().steps counts no calls. (CPU sessions always time their steps.)
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_RUNTIME_SESSION_H
#define GENESIS_RUNTIME_SESSION_H

#include "runtime/formats/ArrayIO.h"
#include "runtime/plan/PlanFile.h"
#include "runtime/support/Error.h"
#include "runtime/support/HostArray.h"
#include "runtime/support/NonFinite.h"
#include "runtime/support/Random.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
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

/// What a numerics check found (Session::setCheckNumerics).
struct NonFiniteReport {
  std::string function;
  /// The session's step count when the run began: the training step.
  uint64_t trainingStep = 0;
  /// The step that first wrote the value, or std::nullopt when a tensor
  /// the function reads held it before any step ran.
  std::optional<size_t> step;
  /// As StepTiming's name and location (the location lists the step's ops,
  /// their source lines and phases: "model.cpp:12 backward of genesis.log").
  std::string stepName;
  std::string location;
  std::string tensor;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  uint64_t element = 0;
  /// "nan", "inf" or "-inf".
  std::string value;
  /// Where the function's inputs were written, or "" (none asked for);
  /// why writing them failed, or "".
  std::string inputsFile;
  std::string inputsError;

  /// "forward", "backward" or "optimizer", from the location; "" when it
  /// names no phase (a plan without locations).
  std::string phase() const;
  /// One line naming all of the above.
  std::string message() const;
};

class NonFiniteError : public Error {
public:
  NonFiniteError(const std::string &where, NonFiniteReport report);
  const NonFiniteReport &report() const { return report_; }

private:
  NonFiniteReport report_;
};

class Session {
public:
  /// Loads the kernel images and resolves their symbols; allocates the arena
  /// and the persistent tensors. Throws genesis::Error for an image that does
  /// not load, a missing symbol, memory that cannot be allocated (naming the
  /// bytes asked and available), or a cuda plan where CUDA is unavailable.
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

  /// Runs `function` `times` more times on the inputs of its last run(), for
  /// benchmarks: the step count and RNG offset advance as with run(), the
  /// outputs are not returned. On cuda only the step and RNG tensors are fed
  /// from the host (in-place updated inputs keep their updated values) and
  /// it returns without waiting (see synchronize()); on the cpu it reruns
  /// copies of the retained inputs. Throws if the function has not run.
  void replay(const std::string &function, int times = 1);
  /// Waits for the work replay() enqueued (cuda; a no-op on the cpu).
  void synchronize();
  /// Checks every run's outputs for values `check` reports (NonFinite.h;
  /// Off by default). On a hit, run() restores the tensors the run updated
  /// in place, runs the function again step by step on the same inputs,
  /// checking what each step writes (cuda: without a graph), restores them
  /// again and throws NonFiniteError naming the first step that wrote such
  /// a value; the session is then as it was before the run. With
  /// `inputsFile`, the function's inputs (batch, parameters, optimizer
  /// state, ...) are written there first, as safetensors by plan name, for
  /// genesis-eval. Costs: one pass over the outputs per run, and a copy of
  /// the tensors updated in place (kept on the device for cuda).
  void setCheckNumerics(NumericsCheck check, std::string inputsFile = "");
  /// cuda: whether runs time their steps (see "Profiling" above); a no-op on
  /// the cpu, which always does.
  void setProfiling(bool on);

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
  uint32_t indexOfFunction(const std::string &name) const;
  [[noreturn]] void fail(const std::string &problem) const;

  /// Per tensor of `tensors` (of a run on `owned` inputs and outputs), the
  /// first element the numerics check reports.
  std::vector<std::optional<uint64_t>>
  findNonFinite(const std::vector<uint32_t> &tensors,
                std::map<uint32_t, HostArray> &owned);
  /// After a run that left such a value: restores the `saved` tensors,
  /// finds the step (setCheckNumerics) and throws.
  [[noreturn]] void reportNonFinite(uint32_t functionIndex,
                                    const std::map<uint32_t, HostArray> &saved,
                                    std::map<uint32_t, HostArray> &owned);

  std::string planName_;
  std::string modelHash_;
  NumericsCheck checkNumerics_ = NumericsCheck::Off;
  std::string numericsInputsFile_;
  std::vector<TensorInfo> tensors_;
  uint64_t step_ = 0;
  Generator::State rngState_;
  std::unique_ptr<Impl> impl_;
};

/// Why cuda plans cannot run in this process (no CUDA in this build, no
/// driver, no device, ...), or "" when they can.
std::string cudaUnavailableReason();

/// The chip of the device cuda plans run on here (device 0's compute
/// capability, major * 10 + minor: 90 for an H100), or std::nullopt when
/// cuda plans cannot run. Tools that compile a plan to run at once compile
/// for it.
std::optional<uint32_t> cudaDeviceChip();

} // namespace genesis

#endif // GENESIS_RUNTIME_SESSION_H
