//===- RunTool.h - genesis-run's command line, as a library -----*- C++ -*-===//
//
// The whole command-line behaviour of genesis-run, callable from any main:
// genesis-run itself, and the standalone executables that
// `genesis-compile --emit=exe` links with the plan built in. Library
// GenesisRunTool; it links only GenesisRuntime (no MLIR, no LLVM).
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_TOOLS_GENESIS_RUN_RUNTOOL_H
#define GENESIS_TOOLS_GENESIS_RUN_RUNTOOL_H

#include <cstddef>

namespace genesis {

class PlanFile;

/// Runs genesis-run's command line. With `embedded` null, the plan is the
/// positional argument; otherwise `embedded` is run and no positional
/// argument is accepted. Errors are one "<toolName>: error: ..." line on
/// stderr and a return of 1; `toolName` null means argv[0] without its
/// directory. Returns the exit status.
int runPlanTool(int argc, char **argv, const PlanFile *embedded = nullptr,
                const char *toolName = nullptr);

/// As runPlanTool with a plan held in memory (a complete .gplan container,
/// verified here as PlanFile::fromBytes does; a bad plan is an error line).
int runEmbeddedPlanTool(int argc, char **argv, const void *planBytes,
                        size_t planSize);

} // namespace genesis

#endif // GENESIS_TOOLS_GENESIS_RUN_RUNTOOL_H
