//===- MemoryReport.h - Where a plan's memory goes --------------*- C++ -*-===//
//
// A verified plan's memory, as `genesis-run --memory` prints it and an
// out-of-memory error summarises it: the persistent tensors by role (each
// its own allocation), the arena the memory planner laid out for the
// temporaries, and, per function, each temporary's lifetime in steps (first
// to last step touching it) and the step where the live temporaries peak,
// with the buffers live there, largest first.
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_RUNTIME_MEMORYREPORT_H
#define GENESIS_RUNTIME_MEMORYREPORT_H

#include "runtime/plan/PlanFile.h"

#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace genesis {

/// A region of the arena live at a function's peak: one temporary, or
/// several sharing bytes (a reshape's alias of its operand, a gradient
/// written over the logits), live from the first step touching any of them
/// to the last.
struct LiveBuffer {
  /// The largest of them (the first written, among equals).
  uint32_t tensor = 0;
  /// The others, in tensor order.
  std::vector<uint32_t> aliases;
  /// The union of their arena bytes.
  uint64_t bytes = 0;
  uint32_t firstStep = 0;
  uint32_t lastStep = 0;
};

struct FunctionMemory {
  std::string name;
  uint32_t stepCount = 0;
  /// The step at which the live temporaries' bytes (the union of their
  /// arena ranges) are largest, and those bytes (the arena holds at least
  /// this much; packing may need more).
  uint32_t peakStep = 0;
  uint64_t peakBytes = 0;
  /// The temporaries live at peakStep, largest first.
  std::vector<LiveBuffer> liveAtPeak;
};

struct MemoryReport {
  /// Bytes of the tensors of each role outside the arena.
  std::map<plan::Role, uint64_t> persistentBytes;
  std::map<plan::Role, uint32_t> persistentCount;
  uint64_t arenaBytes = 0;
  /// The library workspace's region of the arena (cuBLASLt, cuDNN).
  uint64_t workspaceBytes = 0;
  std::vector<FunctionMemory> functions;

  uint64_t totalPersistentBytes() const;
  /// Persistent tensors plus the arena: what a session allocates.
  uint64_t totalBytes() const { return totalPersistentBytes() + arenaBytes; }
};

/// The memory of every function of `planFile` (a verified plan).
MemoryReport analyzeMemory(const PlanFile &planFile);

/// "1.54 GiB", "32.00 MiB", "512 B" (binary units up to TiB).
std::string formatBytes(uint64_t bytes);

/// The report as `genesis-run --memory` prints it: totals by role, then per
/// function (all, or `function` alone) its peak and at most `rows` of the
/// buffers live there, each with dtype, shape, lifetime and the first step
/// touching it (for a reshape's alias whose operand is dead at the peak,
/// the first step reading the alias: the plan does not record aliasing).
void describeMemory(const PlanFile &planFile, const MemoryReport &report,
                    std::ostream &os, const std::string &function = "",
                    size_t rows = 20);

/// Whether the plan fits `limitBytes`, and if not, the largest buffers live
/// at the highest peak, whose bytes exceed the overflow: the first
/// candidates to recompute (--memory-budget) or shrink.
void describeFit(const PlanFile &planFile, const MemoryReport &report,
                 uint64_t limitBytes, std::ostream &os);

/// One line for an out-of-memory error: the `count` largest buffers live at
/// the highest peak of any of `planFile`'s functions, with their sizes.
std::string largestLiveBuffers(const PlanFile &planFile, size_t count = 10);

} // namespace genesis

#endif // GENESIS_RUNTIME_MEMORYREPORT_H
