//===- AttentionStep.h - The Attention step of a plan -----------*- C++ -*-===//
//
// What PlanFile.cpp needs to verify, describe and write an Attention step,
// kept in its own file as each step kind's rules grow.
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_RUNTIME_ATTENTIONSTEP_H
#define GENESIS_RUNTIME_ATTENTIONSTEP_H

#include "runtime/plan/PlanFile.h"

#include <functional>
#include <ostream>
#include <string>

namespace genesis::detail {

/// Checks that tensor `index` may be read (or, with `write`, written) by the
/// step and returns it; reports through the verifier's failure otherwise.
using OperandCheck = std::function<const plan::Tensor &(
    const char *operand, uint32_t index, bool write)>;
/// Reports a broken invariant of `field`; does not return.
using FieldFailure =
    std::function<void(const std::string &field, const std::string &message)>;

/// Every invariant Plan.fbs states for an Attention step: operands present
/// together, readable or writable, of the stated dtypes and shapes, distinct
/// from what the step writes; positive sizes below 2^31; a finite scale; a
/// cuda plan.
void checkAttention(const plan::Plan &plan, const plan::Attention &attention,
                    const std::string &field, const OperandCheck &operand,
                    const FieldFailure &fail);

/// "attention 16x12x1024x64 causal" or "attention backward ...".
std::string attentionStepName(const plan::Attention &attention);

/// ": out, logsumexp = attention(q, k, v), scale 0.125, GQA 12/4".
void describeAttention(const PlanFile &planFile,
                       const plan::Attention &attention, std::ostream &os);

flatbuffers::Offset<plan::Attention>
createAttention(flatbuffers::FlatBufferBuilder &fbb,
                const AttentionDesc &attention);

} // namespace genesis::detail

#endif // GENESIS_RUNTIME_ATTENTIONSTEP_H
