//===- RunTool.cpp - genesis-run's command line, as a library -------------===//
//
// Loads and verifies a plan, binds parameters from safetensors files, runs one
// function on arrays read from .npy or .safetensors files, and prints (or
// writes) the outputs followed by the per-step timing and memory use.
// --inspect prints the plan's provenance, tensor table, memory plan and
// steps. Links only the Genesis runtime: no MLIR, no LLVM.
//
// genesis-run's main calls runPlanTool with no embedded plan; the standalone
// executables of `genesis-compile --emit=exe` call runEmbeddedPlanTool with
// the plan linked into them, and then take no plan argument.
//
// Every failure is a single "<tool>: error: ..." line on stderr and exit
// status 1.
//
//===----------------------------------------------------------------------===//

#include "tools/genesis-run/RunTool.h"

#include "runtime/formats/ArrayIO.h"
#include "runtime/plan/MemoryReport.h"
#include "runtime/plan/PlanFile.h"
#include "runtime/session/Checkpoint.h"
#include "runtime/session/Session.h"
#include "runtime/support/Error.h"
#include "runtime/support/Strings.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iomanip>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <vector>

using namespace genesis;

namespace {

constexpr char kOptionHelp[] =
    "  --function, -f NAME  function to run (default: the plan's only one)\n"
    "  -i FILE              input: a .npy binds the function's next unbound\n"
    "                       input, a .safetensors binds inputs by name\n"
    "  -o FILE              a .safetensors receives every output, a .npy the\n"
    "                       next one; without -o the outputs are printed\n"
    "  --params FILE        .safetensors of parameters, optimizer state,\n"
    "                       buffers or learning rates, bound by name\n"
    "  --inspect            print the plan; without --function, only that\n"
    "  --memory             print where the plan's memory goes: persistent\n"
    "                       tensors by role, the arena, and per function\n"
    "                       (--function: that one) the peak of its live\n"
    "                       temporaries with the buffers live there,\n"
    "                       largest first; then exit\n"
    "  --fits GIB           say whether the plan's memory fits GIB GiB and,\n"
    "                       if not, which live buffers to recompute or\n"
    "                       shrink first; then exit\n"
    "  --repeat N           run N times (timings are per run); from N = 3\n"
    "                       on, prints the wall time per run of runs 3-N\n"
    "  --batches            with --repeat N, every input has a leading\n"
    "                       dimension of N and run r reads slice r (a\n"
    "                       stream of batches); each run prints its scalar\n"
    "                       outputs as 'run R: NAME = VALUE'\n"
    "  --save-state FILE    after the runs, write the session's parameters,\n"
    "                       optimizer state and step as a checkpoint\n"
    "                       (.safetensors)\n"
    "  --bench N            after the runs, time N replays on the inputs\n"
    "                       already in place (cuda: CUDA-graph replays, no\n"
    "                       host transfers) after 3 warm-up replays, and\n"
    "                       print the mean wall time per run\n"
    "  --profile            with --bench, time every step (cuda: between\n"
    "                       CUDA events, without graphs)\n"
    "  --deterministic      cuda: run bit for bit the same every time\n"
    "                       (GENESIS_DETERMINISTIC=1: no GEMM algorithm\n"
    "                       timing, cuDNN's deterministic attention\n"
    "                       backward); the CPU always is\n"
    "  --check-numerics[=nan]\n"
    "                       check every run's outputs for NaNs and\n"
    "                       infinities (=nan: NaNs only); on one, rerun the\n"
    "                       run step by step and name the first step that\n"
    "                       wrote one, with its ops and source lines\n"
    "  --numerics-inputs FILE\n"
    "                       with --check-numerics, write that run's inputs\n"
    "                       there (.safetensors, for genesis-eval)\n";

std::string usage(const std::string &tool, bool embedded) {
  std::string head = "usage: " + tool + (embedded ? "" : " PLAN.gplan");
  return head + " [--function NAME] [-i FILE]... [-o FILE]...\n" +
         std::string(8 + tool.size(), ' ') +
         "[--params FILE]... [--inspect] [--memory] [--fits GIB]\n" +
         std::string(8 + tool.size(), ' ') +
         "[--repeat N [--batches]] [--save-state FILE] "
         "[--bench N [--profile]] [--deterministic]\n" +
         std::string(8 + tool.size(), ' ') +
         "[--check-numerics[=nan] [--numerics-inputs FILE]]\n"
         "\n" +
         kOptionHelp;
}

struct Options {
  std::string planPath;
  std::string function;
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  std::vector<std::string> params;
  std::string saveState;
  bool inspect = false;
  bool memory = false;
  std::optional<double> fitsGiB;
  int64_t repeat = 1;
  bool batches = false;
  int64_t bench = 0;
  bool profile = false;
  bool deterministic = false;
  NumericsCheck checkNumerics = NumericsCheck::Off;
  std::string numericsInputs;
};

/// `text` read whole by `parse` (std::stoll, std::stod), or std::nullopt.
template <typename Parse>
auto parseWhole(const std::string &text, Parse parse)
    -> std::optional<decltype(parse(text, nullptr))> {
  size_t end = 0;
  try {
    auto value = parse(text, &end);
    if (end == text.size())
      return value;
  } catch (const std::exception &) {
  }
  return std::nullopt;
}

Options parseOptions(int argc, char **argv, bool embedded) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 == argc)
        throw Error("option '" + arg + "' needs a value");
      return argv[++i];
    };
    if (arg == "--function" || arg == "-f") {
      options.function = value();
    } else if (arg == "-i") {
      options.inputs.push_back(value());
    } else if (arg == "-o") {
      options.outputs.push_back(value());
    } else if (arg == "--params") {
      options.params.push_back(value());
    } else if (arg == "--inspect") {
      options.inspect = true;
    } else if (arg == "--memory") {
      options.memory = true;
    } else if (arg == "--fits") {
      std::string text = value();
      std::optional<double> gib =
          parseWhole(text, [](const std::string &s, size_t *end) {
            return std::stod(s, end);
          });
      if (!gib || !(*gib > 0) || *gib > 1e9)
        throw Error("--fits needs a positive number of GiB, not '" + text +
                    "'");
      options.fitsGiB = gib;
    } else if (arg == "--save-state") {
      options.saveState = value();
    } else if (arg == "--repeat" || arg == "--bench") {
      std::string text = value();
      std::optional<long long> count =
          parseWhole(text, [](const std::string &s, size_t *end) {
            return std::stoll(s, end);
          });
      if (!count || *count < 1)
        throw Error(arg + " needs a positive integer, not '" + text + "'");
      (arg == "--repeat" ? options.repeat : options.bench) = *count;
    } else if (arg == "--profile") {
      options.profile = true;
    } else if (arg == "--batches") {
      options.batches = true;
    } else if (arg == "--deterministic") {
      options.deterministic = true;
    } else if (arg == "--check-numerics" ||
               arg.rfind("--check-numerics=", 0) == 0) {
      options.checkNumerics = numericsCheckFlag(
          arg.size() > 16 ? arg.substr(17) : "", "--check-numerics");
    } else if (arg == "--numerics-inputs") {
      options.numericsInputs = value();
    } else if (!arg.empty() && arg[0] == '-') {
      throw Error("unknown option '" + arg + "' (see --help)");
    } else if (embedded) {
      throw Error("unexpected argument '" + arg +
                  "' (the plan is built in; see --help)");
    } else if (options.planPath.empty()) {
      options.planPath = arg;
    } else {
      throw Error("more than one plan file given ('" + options.planPath +
                  "' and '" + arg + "')");
    }
  }
  if (options.planPath.empty() && !embedded)
    throw Error("no plan file given (see --help)");
  if (!options.numericsInputs.empty() &&
      options.checkNumerics == NumericsCheck::Off)
    throw Error("--numerics-inputs needs --check-numerics");
  return options;
}

std::string chooseFunction(const Session &session, const Options &options) {
  std::vector<std::string> names = session.functionNames();
  std::string list;
  for (const std::string &name : names)
    list += (list.empty() ? "" : ", ") + name;
  if (options.function.empty()) {
    if (names.size() == 1)
      return names[0];
    throw Error("the plan has " + std::to_string(names.size()) +
                " functions; choose one with --function (" + list + ")");
  }
  // Checked here so that the inputs are not bound against a missing function.
  if (std::find(names.begin(), names.end(), options.function) == names.end())
    throw Error("no function '" + options.function +
                "' in the plan (it has: " + list + ")");
  return options.function;
}

/// The names of the function's tensors of `role`, in the plan's order:
/// inputs among those it reads, outputs among those it writes.
std::vector<std::string> tensorNames(const PlanFile &planFile,
                                     const std::string &function,
                                     plan::Role role) {
  for (const plan::Function *entry : *planFile.plan().functions()) {
    if (entry->name()->str() != function)
      continue;
    std::vector<std::string> names;
    for (uint32_t index :
         role == plan::Role::Output ? *entry->outputs() : *entry->inputs())
      if (planFile.tensorRole(index) == role)
        names.push_back(planFile.tensorName(index));
    return names;
  }
  return {};
}

std::map<std::string, HostArray>
readInputs(const std::vector<std::string> &files,
           const std::vector<std::string> &names) {
  std::map<std::string, HostArray> inputs;
  auto add = [&](const std::string &file, const std::string &name,
                 HostArray array) {
    if (!inputs.emplace(name, std::move(array)).second)
      throw Error("'" + file + "': input '" + name + "' is given twice");
  };
  size_t next = 0;
  for (const std::string &file : files) {
    if (endsWith(file, ".safetensors")) {
      for (auto &[name, array] : loadSafetensors(file))
        add(file, name, std::move(array));
      continue;
    }
    if (!endsWith(file, ".npy"))
      throw Error("'" + file + "': expected a .npy or .safetensors file");
    while (next < names.size() && inputs.count(names[next]))
      ++next;
    if (next == names.size())
      throw Error("'" + file + "': the function has only " +
                  std::to_string(names.size()) + " inputs");
    add(file, names[next], loadNpy(file));
  }
  return inputs;
}

/// --batches: every input must hold one slice per run.
void checkBatchStreams(const std::map<std::string, HostArray> &inputs,
                       int64_t runs) {
  for (const auto &[name, stream] : inputs)
    if (stream.rank() == 0 || stream.shape()[0] != runs)
      throw Error("--batches: input '" + name + "' is " + stream.typeString() +
                  " but needs a leading dimension of " + std::to_string(runs) +
                  " (one slice per run of --repeat)");
}

/// Slice `index` of `stream` along its leading dimension.
HostArray leadingSlice(const HostArray &stream, int64_t index) {
  HostArray slice(stream.dtype(),
                  {stream.shape().begin() + 1, stream.shape().end()});
  std::memcpy(slice.data(),
              static_cast<const uint8_t *>(stream.data()) +
                  static_cast<size_t>(index) * slice.nbytes(),
              slice.nbytes());
  return slice;
}

void printArray(const std::string &name, const HostArray &array) {
  std::cout << name << ": " << array.typeString() << " = [";
  int64_t shown = std::min<int64_t>(array.numel(), 8);
  for (int64_t i = 0; i < shown; ++i)
    std::cout << (i ? ", " : "") << array.elementString(i);
  std::cout << (array.numel() > shown ? ", ...]" : "]") << "\n";
}

/// Writes (or prints) the outputs in the function's result order, then the
/// inputs it updates in place: `-o` files follow the results as
/// genesis-eval's do.
void writeOutputs(const std::vector<std::string> &files,
                  const std::map<std::string, HostArray> &outputs,
                  const std::string &function,
                  const std::vector<std::string> &resultOrder) {
  NamedArrays ordered;
  for (const std::string &name : resultOrder)
    if (auto found = outputs.find(name); found != outputs.end())
      ordered.emplace_back(*found);
  for (const auto &entry : outputs)
    if (std::find(resultOrder.begin(), resultOrder.end(), entry.first) ==
        resultOrder.end())
      ordered.emplace_back(entry);
  writeResultFiles(files, ordered, "the function " + function);
  if (files.empty())
    for (const auto &[name, array] : ordered)
      printArray(name, array);
}

void printStats(const Session &session, const std::string &function,
                int64_t runs) {
  SessionStats stats = session.stats();
  std::cout << "timing (" << runs << (runs == 1 ? " run" : " runs")
            << ", mean per run):\n";
  int index = 0;
  for (const StepTiming &step : stats.steps) {
    if (step.function != function)
      continue;
    std::cout << "  #" << index++ << " " << std::fixed << std::setprecision(3)
              << std::setw(10) << step.totalSeconds * 1e3 / double(runs)
              << " ms  " << step.name;
    std::cout.unsetf(std::ios::floatfield);
    if (!step.location.empty())
      std::cout << "  @ " << step.location;
    std::cout << "\n";
  }
  std::cout << "memory: arena " << stats.arenaBytes << " B, persistent "
            << stats.externalBytes << " B, peak " << stats.peakBytes << " B\n";
}

int runTool(int argc, char **argv, const PlanFile *embedded,
            const std::string &tool) {
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) == "--help" || std::string(argv[i]) == "-h") {
      std::cout << usage(tool, embedded != nullptr);
      return 0;
    }
  Options options = parseOptions(argc, argv, embedded != nullptr);
  std::optional<PlanFile> loaded;
  if (!embedded)
    loaded.emplace(PlanFile::load(options.planPath));
  const PlanFile &planFile = embedded ? *embedded : *loaded;
  if (options.inspect) {
    describePlan(planFile, std::cout);
    if (options.function.empty() && !options.memory && !options.fitsGiB)
      return 0;
  }
  if (options.memory || options.fitsGiB) {
    MemoryReport report = analyzeMemory(planFile);
    if (options.memory)
      describeMemory(planFile, report, std::cout, options.function);
    if (options.fitsGiB)
      describeFit(planFile, report,
                  static_cast<uint64_t>(*options.fitsGiB * double(1 << 30)),
                  std::cout);
    return 0;
  }

  // The CUDA backend reads the mode when the session loads the plan.
  if (options.deterministic && setenv("GENESIS_DETERMINISTIC", "1", 1) != 0)
    throw Error("cannot set GENESIS_DETERMINISTIC for --deterministic");
  Session session(planFile);
  session.setCheckNumerics(options.checkNumerics, options.numericsInputs);
  for (const std::string &file : options.params)
    for (const auto &[name, array] : loadSafetensors(file))
      session.bind(name, array);
  std::string function = chooseFunction(session, options);
  std::map<std::string, HostArray> inputs = readInputs(
      options.inputs, tensorNames(planFile, function, plan::Role::Input));

  checkResultFiles(options.outputs,
                   tensorNames(planFile, function, plan::Role::Output).size(),
                   "the function " + function);
  std::map<std::string, HostArray> outputs;
  if (options.batches)
    checkBatchStreams(inputs, options.repeat);
  // Runs 1 and 2 load kernels, tune GEMMs and capture the CUDA graph; the
  // wall time of the later ones is what a training loop pays per step.
  std::chrono::steady_clock::time_point steadyStart;
  for (int64_t run = 0; run < options.repeat; ++run) {
    if (run == 2)
      steadyStart = std::chrono::steady_clock::now();
    if (!options.batches) {
      outputs = session.run(function, inputs);
      continue;
    }
    std::map<std::string, HostArray> batch;
    for (const auto &[name, stream] : inputs)
      batch.emplace(name, leadingSlice(stream, run));
    outputs = session.run(function, std::move(batch));
    for (const auto &[name, array] : outputs)
      if (array.rank() == 0)
        std::cout << "run " << run + 1 << ": " << name << " = "
                  << array.elementString(0) << "\n";
  }
  if (options.repeat >= 3) {
    double seconds = std::chrono::duration<double>(
                         std::chrono::steady_clock::now() - steadyStart)
                         .count();
    std::cout << "runs: " << std::fixed << std::setprecision(4)
              << seconds * 1e3 / static_cast<double>(options.repeat - 2)
              << " ms per run (wall, runs 3-" << options.repeat
              << ", host transfers included)\n";
    std::cout.unsetf(std::ios::floatfield);
  }
  writeOutputs(options.outputs, outputs, function,
               tensorNames(planFile, function, plan::Role::Output));
  if (!options.saveState.empty())
    saveCheckpoint(session, options.saveState);
  printStats(session, function, options.repeat);
  if (options.bench > 0) {
    session.replay(function, 3);
    session.synchronize();
    session.setProfiling(options.profile);
    session.resetStats();
    auto start = std::chrono::steady_clock::now();
    session.replay(function, static_cast<int>(options.bench));
    session.synchronize();
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    std::cout << "bench: " << std::fixed << std::setprecision(4)
              << seconds * 1e3 / static_cast<double>(options.bench)
              << " ms per run (" << options.bench << " replays"
              << (options.profile ? ", profiled" : "") << ")\n";
    std::cout.unsetf(std::ios::floatfield);
    if (options.profile)
      printStats(session, function, options.bench);
  }
  return 0;
}

int reportError(const std::string &tool, const std::exception &error) {
  // genesis::Error, and std::bad_alloc from an allocation beyond memory.
  std::cout.flush();
  std::cerr << tool << ": error: " << error.what() << "\n";
  return 1;
}

/// The program's name as invoked, without its directory.
std::string baseName(const char *path) {
  std::string text = path ? path : "";
  size_t slash = text.rfind('/');
  return slash == std::string::npos ? text : text.substr(slash + 1);
}

} // namespace

int genesis::runPlanTool(int argc, char **argv, const PlanFile *embedded,
                         const char *toolName) {
  std::string tool =
      toolName ? std::string(toolName) : baseName(argc > 0 ? argv[0] : nullptr);
  try {
    return runTool(argc, argv, embedded, tool);
  } catch (const std::exception &error) {
    return reportError(tool, error);
  }
}

int genesis::runEmbeddedPlanTool(int argc, char **argv, const void *planBytes,
                                 size_t planSize) {
  std::string tool = baseName(argc > 0 ? argv[0] : nullptr);
  try {
    PlanFile plan =
        PlanFile::fromBytes(planBytes, planSize, tool + " (embedded plan)");
    return runTool(argc, argv, &plan, tool);
  } catch (const std::exception &error) {
    return reportError(tool, error);
  }
}
