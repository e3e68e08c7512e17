//===- genesis-run.cpp - Run a function of a .gplan plan on the CPU -------===//
//
// See RunTool.h: the command line is the GenesisRunTool library's.
//
//===----------------------------------------------------------------------===//

#include "tools/genesis-run/RunTool.h"

int main(int argc, char **argv) {
  return genesis::runPlanTool(argc, argv, nullptr, "genesis-run");
}
