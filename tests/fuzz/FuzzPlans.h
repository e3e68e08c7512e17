//===- FuzzPlans.h - Plans for the fuzzers and seeds ------------*- C++ -*-===//

#ifndef GENESIS_TESTS_FUZZ_FUZZPLANS_H
#define GENESIS_TESTS_FUZZ_FUZZPLANS_H

#include "runtime/plan/PlanFile.h"

namespace genesis::fuzz {

/// The plan safetensors_fuzzer loads checkpoints into.
inline PlanBuilder checkpointPlan() {
  PlanHeader header;
  header.modelHash = "fuzz-model";
  PlanBuilder builder(header);
  builder.addTensor("w", DType::F32, {2, 2}, plan::Role::Parameter);
  builder.addTensor("m", DType::F64, {3}, plan::Role::OptimizerState);
  builder.addTensor("mean", DType::BF16, {2}, plan::Role::Buffer);
  return builder;
}

} // namespace genesis::fuzz

#endif // GENESIS_TESTS_FUZZ_FUZZPLANS_H
