//===- genesis-eval.cpp - Run a genesis function on the host ------------===//
//
// Parses a .mlir file, binds the arguments of one function to arrays read
// from .npy or .safetensors files, runs the reference evaluator and writes or
// prints the results. Every failure is a single "genesis-eval: error: ..." line
// naming the file, tensor or op (with its location) and a non-zero exit.
//
//===----------------------------------------------------------------------===//

#include "dialect/Evaluator/Evaluator.h"
#include "dialect/Utils/CommandLine.h"
#include "runtime/formats/ArrayIO.h"
#include "runtime/support/Strings.h"
#include "tools/ToolSupport.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"

#include <iostream>
#include <map>
#include <memory>

using namespace mlir;
using namespace genesis;

static llvm::cl::opt<std::string> inputFile(llvm::cl::Positional,
                                            llvm::cl::desc("<input.mlir>"),
                                            llvm::cl::Required);
static llvm::cl::opt<std::string>
    functionName("function",
                 llvm::cl::desc("Function to run (default: the "
                                "only or first function)"),
                 llvm::cl::init(""));
static llvm::cl::alias functionAlias("f", llvm::cl::aliasopt(functionName));
static llvm::cl::list<std::string> inputs(
    "i",
    llvm::cl::desc("Argument file: a .npy binds the next unbound argument; a "
                   ".safetensors binds arguments by name (their genesis.name, "
                   "else argN)"));
static llvm::cl::list<std::string>
    outputs("o", llvm::cl::desc("Result file: a .npy takes the next result; a "
                                ".safetensors takes all results by name"));
static llvm::cl::opt<bool>
    printResults("print", llvm::cl::desc("Print the results (default when no "
                                         "-o is given)"));

static llvm::cl::opt<std::string> checkNumerics(
    "check-numerics", llvm::cl::ValueOptional,
    llvm::cl::desc("Stop at the first op whose result holds a NaN or an "
                   "infinity (=nan: NaNs only), naming it and its source "
                   "line"),
    llvm::cl::init(""));

namespace {

std::string nameOf(ArrayAttr names, unsigned i, const char *fallback) {
  if (names && i < names.size())
    if (auto dict = dyn_cast_or_null<DictionaryAttr>(names[i]))
      if (auto name = dict.getAs<StringAttr>("genesis.name"))
        return name.str();
  return fallback + std::to_string(i);
}

std::vector<HostArray> bindArguments(func::FuncOp function) {
  unsigned count = function.getNumArguments();
  std::vector<std::optional<HostArray>> bound(count);
  std::map<std::string, unsigned> byName;
  for (unsigned i = 0; i < count; ++i)
    byName[nameOf(function.getArgAttrsAttr(), i, "arg")] = i;
  unsigned next = 0;
  for (const std::string &file : inputs) {
    if (endsWith(file, ".safetensors")) {
      for (auto &[name, array] : loadSafetensors(file)) {
        auto it = byName.find(name);
        if (it == byName.end())
          throw Error("'" + file + "': tensor '" + name +
                      "' names no argument of @" + function.getSymName().str());
        bound[it->second] = std::move(array);
      }
      continue;
    }
    if (!endsWith(file, ".npy"))
      throw Error("'" + file + "': expected a .npy or .safetensors file");
    while (next < count && bound[next])
      ++next;
    if (next == count)
      throw Error("'" + file + "': @" + function.getSymName().str() +
                  " has only " + std::to_string(count) + " arguments");
    bound[next] = loadNpy(file);
  }
  std::vector<HostArray> arguments;
  for (unsigned i = 0; i < count; ++i) {
    if (!bound[i])
      throw Error("no input given for argument #" + std::to_string(i) + " '" +
                  nameOf(function.getArgAttrsAttr(), i, "arg") + "' of @" +
                  function.getSymName().str());
    arguments.push_back(std::move(*bound[i]));
  }
  return arguments;
}

void printArray(const std::string &name, const HostArray &array) {
  std::cout << name << ": " << array.typeString() << " = [";
  int64_t shown = std::min<int64_t>(array.numel(), 8);
  for (int64_t i = 0; i < shown; ++i)
    std::cout << (i ? ", " : "") << array.elementString(i);
  std::cout << (array.numel() > shown ? ", ...]" : "]") << "\n";
}

void writeResults(func::FuncOp function,
                  const std::vector<HostArray> &results) {
  ArrayAttr names = function.getResAttrsAttr();
  NamedArrays named;
  for (unsigned i = 0; i < results.size(); ++i)
    named.emplace_back(nameOf(names, i, "result"), results[i]);
  writeResultFiles(outputs, named, "@" + function.getSymName().str());
  if (printResults || outputs.empty())
    for (unsigned i = 0; i < results.size(); ++i)
      printArray(nameOf(names, i, "result"), results[i]);
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  showOnlyOptions("genesis-eval options",
                  {std::addressof(inputFile), std::addressof(functionName),
                   std::addressof(inputs), std::addressof(outputs),
                   std::addressof(printResults),
                   std::addressof(checkNumerics)});
  llvm::cl::ParseCommandLineOptions(
      argc, argv, "Run a genesis function with the reference evaluator\n");
  try {
    MLIRContext context;
    OwningOpRef<ModuleOp> module = parseGenesisFile(inputFile, context);
    func::FuncOp function = lookupFunction(*module, functionName);
    checkResultFiles(outputs, function.getNumResults(),
                     "@" + function.getSymName().str());
    NumericsCheck check = checkNumerics.getNumOccurrences()
                              ? numericsCheckFlag(checkNumerics)
                              : NumericsCheck::Off;
    writeResults(function, evaluate(function, bindArguments(function), check));
  } catch (const Error &error) {
    llvm::errs() << "genesis-eval: error: " << error.what() << "\n";
    return 1;
  }
  return 0;
}
