//===- MemoryReport.cpp - Where a plan's memory goes ----------------------===//

#include "runtime/plan/MemoryReport.h"
#include "runtime/support/Error.h"
#include "runtime/support/HostArray.h"

#include <algorithm>
#include <cstdio>

namespace genesis {

namespace {

/// The tensors step `step` reads or writes.
std::vector<uint32_t> stepTensors(const plan::Step &step) {
  switch (step.kind_type()) {
  case plan::StepKind::KernelLaunch: {
    const auto &args = *step.kind_as_KernelLaunch()->args();
    return {args.begin(), args.end()};
  }
  case plan::StepKind::Gemm: {
    const plan::Gemm &gemm = *step.kind_as_Gemm();
    std::vector<uint32_t> tensors{gemm.a(), gemm.b(), gemm.c()};
    for (auto optional : {gemm.bias(), gemm.aux()})
      if (optional)
        tensors.push_back(*optional);
    return tensors;
  }
  case plan::StepKind::Attention: {
    AttentionDesc desc = attentionDescOf(*step.kind_as_Attention());
    std::vector<uint32_t> tensors{desc.query, desc.key, desc.value, desc.out,
                                  desc.logSumExp};
    for (const std::optional<uint32_t> &gradient :
         {desc.outGrad, desc.queryGrad, desc.keyGrad, desc.valueGrad})
      if (gradient)
        tensors.push_back(*gradient);
    return tensors;
  }
  case plan::StepKind::Copy:
    return {step.kind_as_Copy()->src(), step.kind_as_Copy()->dst()};
  default: // Fill: the loader admits no other kind
    return {step.kind_as_Fill()->dst()};
  }
}

/// A temporary's arena range and lifetime in one function.
struct Lifetime {
  uint32_t tensor;
  uint64_t offset, bytes;
  uint32_t firstStep, lastStep;
  uint64_t end() const { return offset + bytes; }
};

/// `live` (sorted by offset) merged into regions of overlapping ranges.
std::vector<std::vector<const Lifetime *>>
regionsOf(std::vector<const Lifetime *> live) {
  std::vector<std::vector<const Lifetime *>> regions;
  uint64_t end = 0;
  for (const Lifetime *buffer : live) {
    if (regions.empty() || buffer->offset >= end) {
      regions.emplace_back();
      end = 0;
    }
    regions.back().push_back(buffer);
    end = std::max(end, buffer->end());
  }
  return regions;
}

uint64_t unionBytes(const std::vector<const Lifetime *> &region) {
  uint64_t first = region.front()->offset, end = 0;
  for (const Lifetime *buffer : region)
    end = std::max(end, buffer->end());
  return end - first;
}

FunctionMemory analyzeFunction(const plan::Plan &plan,
                               const plan::Function &function) {
  FunctionMemory memory;
  memory.name = function.name()->str();
  memory.stepCount = function.steps()->size();
  std::map<uint32_t, Lifetime> lifetimes;
  for (uint32_t s = 0; s < memory.stepCount; ++s)
    for (uint32_t tensor : stepTensors(*function.steps()->Get(s))) {
      const plan::Tensor &entry = *plan.tensors()->Get(tensor);
      if (entry.role() != plan::Role::Temporary || entry.bytes() == 0)
        continue;
      auto [at, added] = lifetimes.try_emplace(
          tensor, Lifetime{tensor, entry.arena_offset(), entry.bytes(), s, s});
      at->second.lastStep = s;
    }
  // By offset, so that each step's live ranges merge in one sweep.
  std::vector<const Lifetime *> byOffset;
  for (const auto &[tensor, lifetime] : lifetimes)
    byOffset.push_back(&lifetime);
  std::stable_sort(byOffset.begin(), byOffset.end(),
                   [](const Lifetime *a, const Lifetime *b) {
                     return a->offset < b->offset;
                   });
  auto liveAt = [&](uint32_t step) {
    std::vector<const Lifetime *> live;
    for (const Lifetime *buffer : byOffset)
      if (buffer->firstStep <= step && step <= buffer->lastStep)
        live.push_back(buffer);
    return live;
  };
  for (uint32_t s = 0; s < memory.stepCount; ++s) {
    uint64_t bytes = 0;
    for (const auto &region : regionsOf(liveAt(s)))
      bytes += unionBytes(region);
    if (bytes > memory.peakBytes) {
      memory.peakBytes = bytes;
      memory.peakStep = s;
    }
  }
  if (memory.peakBytes == 0)
    return memory;
  for (const auto &region : regionsOf(liveAt(memory.peakStep))) {
    LiveBuffer buffer;
    buffer.bytes = unionBytes(region);
    const Lifetime *largest = region.front();
    buffer.firstStep = largest->firstStep;
    buffer.lastStep = largest->lastStep;
    for (const Lifetime *part : region) {
      if (part->bytes > largest->bytes ||
          (part->bytes == largest->bytes &&
           part->firstStep < largest->firstStep))
        largest = part;
      buffer.firstStep = std::min(buffer.firstStep, part->firstStep);
      buffer.lastStep = std::max(buffer.lastStep, part->lastStep);
    }
    buffer.tensor = largest->tensor;
    for (const Lifetime *part : region)
      if (part != largest)
        buffer.aliases.push_back(part->tensor);
    std::sort(buffer.aliases.begin(), buffer.aliases.end());
    memory.liveAtPeak.push_back(std::move(buffer));
  }
  std::stable_sort(memory.liveAtPeak.begin(), memory.liveAtPeak.end(),
                   [](const LiveBuffer &a, const LiveBuffer &b) {
                     return a.bytes > b.bytes;
                   });
  return memory;
}

std::string typeOf(const PlanFile &planFile, uint32_t tensor) {
  return std::string(dtypeName(planFile.tensorDType(tensor))) +
         shapeString(planFile.tensorShape(tensor));
}

/// "#176 gemm 16384x50304x768 bias @ Gpt2.cpp:162".
std::string stepText(const PlanFile &planFile, const plan::Function &function,
                     uint32_t index) {
  const plan::Step &step = *function.steps()->Get(index);
  std::string text =
      "#" + std::to_string(index) + " " + stepName(planFile, step);
  if (step.location() && step.location()->size() != 0)
    text += " @ " + step.location()->str();
  return text;
}

const plan::Function &functionNamed(const PlanFile &planFile,
                                    const std::string &name) {
  for (const plan::Function *function : *planFile.plan().functions())
    if (function->name()->str() == name)
      return *function;
  throw Error("no function '" + name + "' in the plan");
}

/// "  (shares its bytes with t1, t2)", or "".
std::string aliasText(const PlanFile &planFile, const LiveBuffer &buffer) {
  if (buffer.aliases.empty())
    return "";
  std::string text = "  (shares its bytes with ";
  for (size_t i = 0; i < buffer.aliases.size(); ++i) {
    if (i == 3) {
      text += ", " + std::to_string(buffer.aliases.size() - 3) + " more";
      break;
    }
    text += (i ? ", " : "") + planFile.tensorName(buffer.aliases[i]);
  }
  return text + ")";
}

/// The function whose live temporaries peak highest.
const FunctionMemory *highestPeak(const MemoryReport &report) {
  const FunctionMemory *highest = nullptr;
  for (const FunctionMemory &function : report.functions)
    if (!highest || function.peakBytes > highest->peakBytes)
      highest = &function;
  return highest;
}

} // namespace

uint64_t MemoryReport::totalPersistentBytes() const {
  uint64_t total = 0;
  for (const auto &[role, bytes] : persistentBytes)
    total += bytes;
  return total;
}

MemoryReport analyzeMemory(const PlanFile &planFile) {
  const plan::Plan &plan = planFile.plan();
  MemoryReport report;
  report.arenaBytes = plan.memory()->arena_bytes();
  report.workspaceBytes = plan.memory()->workspace_bytes();
  for (const plan::Tensor *entry : *plan.tensors())
    if (entry->role() != plan::Role::Temporary) {
      report.persistentBytes[entry->role()] += entry->bytes();
      ++report.persistentCount[entry->role()];
    }
  for (const plan::Function *function : *plan.functions())
    report.functions.push_back(analyzeFunction(plan, *function));
  return report;
}

std::string formatBytes(uint64_t bytes) {
  char text[32];
  if (bytes >= (uint64_t(1) << 40))
    std::snprintf(text, sizeof text, "%.2f TiB",
                  double(bytes) / double(uint64_t(1) << 40));
  else if (bytes >= (uint64_t(1) << 30))
    std::snprintf(text, sizeof text, "%.2f GiB", double(bytes) / (1 << 30));
  else if (bytes >= (uint64_t(1) << 20))
    std::snprintf(text, sizeof text, "%.2f MiB", double(bytes) / (1 << 20));
  else if (bytes >= (uint64_t(1) << 10))
    std::snprintf(text, sizeof text, "%.2f KiB", double(bytes) / (1 << 10));
  else
    std::snprintf(text, sizeof text, "%llu B", (unsigned long long)bytes);
  return text;
}

void describeMemory(const PlanFile &planFile, const MemoryReport &report,
                    std::ostream &os, const std::string &function,
                    size_t rows) {
  os << "memory of plan '" << planFile.name() << "' ("
     << targetName(planFile.plan().header()->target())
     << "): " << formatBytes(report.totalBytes()) << "\n";
  os << "  persistent: " << formatBytes(report.totalPersistentBytes());
  const char *separator = " (";
  for (const auto &[role, bytes] : report.persistentBytes) {
    os << separator << roleName(role) << " " << report.persistentCount.at(role)
       << " " << formatBytes(bytes);
    separator = ", ";
  }
  os << (report.persistentBytes.empty() ? "" : ")") << "\n";
  os << "  arena: " << formatBytes(report.arenaBytes)
     << " (temporaries, and the library workspace's "
     << formatBytes(report.workspaceBytes) << ")\n";
  for (const FunctionMemory &memory : report.functions) {
    if (!function.empty() && memory.name != function)
      continue;
    const plan::Function &entry = functionNamed(planFile, memory.name);
    os << "function '" << memory.name << "': " << memory.stepCount << " steps";
    if (memory.liveAtPeak.empty()) {
      os << ", no temporaries\n";
      continue;
    }
    os << "; live temporaries peak at " << formatBytes(memory.peakBytes)
       << " in " << memory.liveAtPeak.size() << " buffers at step "
       << stepText(planFile, entry, memory.peakStep) << "\n";
    os << "  live at the peak, largest first (bytes, tensor, type, steps, "
          "written first by):\n";
    uint64_t shownBytes = 0;
    size_t shown = std::min(rows, memory.liveAtPeak.size());
    for (size_t i = 0; i < shown; ++i) {
      const LiveBuffer &buffer = memory.liveAtPeak[i];
      shownBytes += buffer.bytes;
      os << "    " << formatBytes(buffer.bytes) << "  "
         << planFile.tensorName(buffer.tensor) << "  "
         << typeOf(planFile, buffer.tensor) << "  #" << buffer.firstStep << "-#"
         << buffer.lastStep << "  "
         << stepText(planFile, entry, buffer.firstStep)
         << aliasText(planFile, buffer) << "\n";
    }
    if (shown < memory.liveAtPeak.size())
      os << "    ... and " << memory.liveAtPeak.size() - shown << " more ("
         << formatBytes(memory.peakBytes - shownBytes) << ")\n";
  }
}

void describeFit(const PlanFile &planFile, const MemoryReport &report,
                 uint64_t limitBytes, std::ostream &os) {
  uint64_t total = report.totalBytes();
  if (total <= limitBytes) {
    os << "fits: " << formatBytes(total) << " of " << formatBytes(limitBytes)
       << "\n";
    return;
  }
  uint64_t over = total - limitBytes;
  os << "does not fit: " << formatBytes(total) << " is " << formatBytes(over)
     << " more than " << formatBytes(limitBytes) << "\n";
  const FunctionMemory *peak = highestPeak(report);
  if (!peak || peak->liveAtPeak.empty()) {
    os << "  no temporaries: the persistent tensors alone take "
       << formatBytes(report.totalPersistentBytes()) << "\n";
    return;
  }
  os << "  at the highest peak (function '" << peak->name << "', step #"
     << peak->peakStep
     << "), these live buffers hold more than that; recompute them "
        "(--memory-budget) or shrink them first:\n";
  uint64_t freed = 0;
  for (const LiveBuffer &buffer : peak->liveAtPeak) {
    if (freed >= over)
      break;
    freed += buffer.bytes;
    os << "    " << formatBytes(buffer.bytes) << "  "
       << planFile.tensorName(buffer.tensor) << "  "
       << typeOf(planFile, buffer.tensor) << "\n";
  }
  if (freed < over)
    os << "  (all of them hold " << formatBytes(freed)
       << ": the persistent tensors must shrink too)\n";
}

std::string largestLiveBuffers(const PlanFile &planFile, size_t count) {
  MemoryReport report = analyzeMemory(planFile);
  const FunctionMemory *peak = highestPeak(report);
  if (!peak || peak->liveAtPeak.empty())
    return "the plan has no temporaries; persistent tensors " +
           formatBytes(report.totalPersistentBytes());
  std::string text = "largest buffers live at the peak of '" + peak->name +
                     "' (step #" + std::to_string(peak->peakStep) + ", " +
                     formatBytes(peak->peakBytes) + "): ";
  size_t shown = std::min(count, peak->liveAtPeak.size());
  for (size_t i = 0; i < shown; ++i) {
    const LiveBuffer &buffer = peak->liveAtPeak[i];
    text += (i ? ", " : "") + planFile.tensorName(buffer.tensor) + " " +
            typeOf(planFile, buffer.tensor) + " " + formatBytes(buffer.bytes);
  }
  return text + "; persistent tensors " +
         formatBytes(report.totalPersistentBytes()) +
         " (genesis-run --memory PLAN lists all)";
}

} // namespace genesis
