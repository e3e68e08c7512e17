//===- mlir_fuzzer.cpp - The .mlir parser and the genesis verifiers -------===//
//
// Parses each input, as a file (FuzzInput.h), as a module of the genesis and
// func dialects, as genesis-opt and genesis-eval read a user's .mlir file:
// MLIR's parser, then the genesis ops' custom syntax, attribute and type checks
// and verifiers (shape rules, dtype rules, the region ops). An invalid module
// must end as diagnostics; nothing may crash. MLIR itself is not instrumented
// (Debian's build), so coverage guides the fuzzer through the genesis code.
//
//===----------------------------------------------------------------------===//

#include "FuzzInput.h"

#include "dialect/IR/GenesisDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <cstddef>
#include <cstdint>

using namespace mlir;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // A context per input: attributes and types stay uniqued in a context for
  // its lifetime, so one shared context would grow with every input.
  DialectRegistry registry;
  registry.insert<genesis::GenesisDialect, func::FuncDialect>();
  MLIRContext context(registry, MLIRContext::Threading::DISABLED);
  context.loadAllAvailableDialects();
  ScopedDiagnosticHandler quiet(&context,
                                [](Diagnostic &) { return success(); });
  // From a file, as the tools read one: MLIR's lexer relies on the NUL
  // that file buffers end with.
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(
      genesis::fuzz::inputFile(data, size), ParserConfig(&context));
  return 0;
}
