//===- AttentionStep.cpp - The Attention step of a plan -------------------===//

#include "runtime/plan/AttentionStep.h"

#include <cmath>
#include <sstream>
#include <utility>
#include <vector>

namespace genesis {

AttentionDesc attentionDescOf(const plan::Attention &attention) {
  AttentionDesc desc;
  desc.query = attention.query();
  desc.key = attention.key();
  desc.value = attention.value();
  desc.out = attention.out();
  desc.logSumExp = attention.logsumexp();
  if (attention.out_grad()) {
    desc.outGrad = *attention.out_grad();
    desc.queryGrad = *attention.query_grad();
    desc.keyGrad = *attention.key_grad();
    desc.valueGrad = *attention.value_grad();
  }
  desc.batch = attention.batch();
  desc.queryHeads = attention.query_heads();
  desc.kvHeads = attention.kv_heads();
  desc.queryLength = attention.query_length();
  desc.kvLength = attention.kv_length();
  desc.headDim = attention.head_dim();
  desc.causal = attention.causal();
  desc.scale = attention.scale();
  desc.packed = attention.packed();
  return desc;
}

namespace detail {

namespace {

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? "x" : "") + std::to_string(shape[i]);
  return text + "]";
}

} // namespace

void checkAttention(const plan::Plan &plan, const plan::Attention &attention,
                    const std::string &field, const OperandCheck &operand,
                    const FieldFailure &fail) {
  if (plan.header()->target() != plan::Target::Cuda)
    fail(field, "an attention step needs the cuda target");
  const std::pair<const char *, int64_t> sizes[] = {
      {"batch", attention.batch()},
      {"query_heads", attention.query_heads()},
      {"kv_heads", attention.kv_heads()},
      {"query_length", attention.query_length()},
      {"kv_length", attention.kv_length()},
      {"head_dim", attention.head_dim()}};
  for (const auto &[name, size] : sizes)
    if (size < 1 || size > INT32_MAX)
      fail(field + "." + name,
           std::to_string(size) + " is not in [1, 2^31 - 1]");
  if (attention.query_heads() % attention.kv_heads() != 0)
    fail(field + ".kv_heads", "query_heads " +
                                  std::to_string(attention.query_heads()) +
                                  " is not a multiple of kv_heads " +
                                  std::to_string(attention.kv_heads()));
  if (!std::isfinite(attention.scale()))
    fail(field + ".scale", "the scale is not finite");
  int gradients =
      (attention.out_grad() ? 1 : 0) + (attention.query_grad() ? 1 : 0) +
      (attention.key_grad() ? 1 : 0) + (attention.value_grad() ? 1 : 0);
  if (gradients != 0 && gradients != 4)
    fail(field, "a backward attention step needs out_grad, query_grad, "
                "key_grad and value_grad together");
  bool backward = gradients == 4;

  int64_t b = attention.batch(), d = attention.head_dim();
  std::vector<int64_t> queryShape = {b, attention.query_heads(),
                                     attention.query_length(), d};
  std::vector<int64_t> kvShape = {b, attention.kv_heads(),
                                  attention.kv_length(), d};
  std::vector<int64_t> statsShape = {b, attention.query_heads(),
                                     attention.query_length()};
  struct Operand {
    const char *name;
    uint32_t index;
    bool write;
    const std::vector<int64_t> *shape;
  };
  std::vector<Operand> operands;
  auto add = [&](const char *name, uint32_t index, bool write,
                 const std::vector<int64_t> &shape) {
    operands.push_back({name, index, write, &shape});
  };
  // Packed: [B, S, (Hq + 2 Hkv) D] read as query, key and value (one
  // operand), results token-major [B, S, Hq D].
  std::vector<int64_t> packedShape, tokensShape;
  if (attention.packed()) {
    if (plan.header()->format_version() < kPackedAttentionFormatVersion)
      fail(field + ".packed",
           "packed attention needs format version " +
               std::to_string(kPackedAttentionFormatVersion));
    if (attention.query_length() != attention.kv_length())
      fail(field + ".packed", "packed attention needs query_length == "
                              "kv_length (self-attention)");
    if (attention.key() != attention.query() ||
        attention.value() != attention.query())
      fail(field + ".packed",
           "query, key and value must name one packed tensor");
    if (backward && (*attention.key_grad() != *attention.query_grad() ||
                     *attention.value_grad() != *attention.query_grad()))
      fail(field + ".packed",
           "query_grad, key_grad and value_grad must name one packed tensor");
    int64_t heads = attention.query_heads() + 2 * attention.kv_heads(), width;
    if (__builtin_mul_overflow(heads, d, &width))
      fail(field + ".head_dim", "the packed row width overflows");
    packedShape = {b, attention.query_length(), width};
    tokensShape = {b, attention.query_length(), attention.query_heads() * d};
    add("query", attention.query(), false, packedShape);
    add("out", attention.out(), !backward, tokensShape);
    add("logsumexp", attention.logsumexp(), !backward, statsShape);
    if (backward) {
      add("out_grad", *attention.out_grad(), false, tokensShape);
      add("query_grad", *attention.query_grad(), true, packedShape);
    }
  } else {
    add("query", attention.query(), false, queryShape);
    add("key", attention.key(), false, kvShape);
    add("value", attention.value(), false, kvShape);
    add("out", attention.out(), !backward, queryShape);
    add("logsumexp", attention.logsumexp(), !backward, statsShape);
    if (backward) {
      add("out_grad", *attention.out_grad(), false, queryShape);
      add("query_grad", *attention.query_grad(), true, queryShape);
      add("key_grad", *attention.key_grad(), true, kvShape);
      add("value_grad", *attention.value_grad(), true, kvShape);
    }
  }
  std::optional<plan::DType> dtype;
  for (const Operand &o : operands) {
    const plan::Tensor &entry = operand(o.name, o.index, o.write);
    std::vector<int64_t> shape(entry.shape()->begin(), entry.shape()->end());
    bool stats = o.shape == &statsShape;
    if (shape != *o.shape)
      fail(field + "." + o.name, "'" + entry.name()->str() + "' has shape " +
                                     shapeText(shape) + " but the step needs " +
                                     shapeText(*o.shape));
    if (stats) {
      if (entry.dtype() != plan::DType::F32)
        fail(field + "." + o.name,
             "'" + entry.name()->str() + "' must be f32 (logsumexp)");
      continue;
    }
    if (entry.dtype() != plan::DType::BF16 && entry.dtype() != plan::DType::F16)
      fail(field + "." + o.name,
           "'" + entry.name()->str() + "' must be bf16 or f16");
    if (dtype && entry.dtype() != *dtype)
      fail(field + "." + o.name,
           "'" + entry.name()->str() + "' has another dtype than query");
    dtype = entry.dtype();
  }
  // The kernels read every input while they write: no output may be an
  // input, nor two outputs the same tensor.
  for (size_t i = 0; i < operands.size(); ++i)
    for (size_t j = 0; j < operands.size(); ++j)
      if (i != j && operands[i].write && operands[i].index == operands[j].index)
        fail(field + "." + operands[i].name,
             std::string("is also ") + operands[j].name);
}

std::string attentionStepName(const plan::Attention &attention) {
  std::ostringstream text;
  text << "attention" << (attention.out_grad() ? " backward " : " ")
       << attention.batch() << "x" << attention.query_heads() << "x"
       << attention.query_length() << "x" << attention.head_dim();
  if (attention.kv_heads() != attention.query_heads())
    text << " gqa" << attention.kv_heads();
  if (attention.kv_length() != attention.query_length())
    text << " kv" << attention.kv_length();
  if (attention.causal())
    text << " causal";
  if (attention.packed())
    text << " packed";
  return text.str();
}

void describeAttention(const PlanFile &planFile,
                       const plan::Attention &attention, std::ostream &os) {
  auto name = [&](uint32_t index) { return planFile.tensorName(index); };
  os << ": ";
  if (attention.packed() && attention.out_grad())
    os << name(*attention.query_grad()) << " = packed_attention_grad("
       << name(attention.query()) << ", " << name(attention.out()) << ", "
       << name(*attention.out_grad()) << ", " << name(attention.logsumexp())
       << ")";
  else if (attention.packed())
    os << name(attention.out()) << ", " << name(attention.logsumexp())
       << " = packed_attention(" << name(attention.query()) << ")";
  else if (attention.out_grad())
    os << name(*attention.query_grad()) << ", " << name(*attention.key_grad())
       << ", " << name(*attention.value_grad()) << " = attention_grad("
       << name(attention.query()) << ", " << name(attention.key()) << ", "
       << name(attention.value()) << ", " << name(attention.out()) << ", "
       << name(*attention.out_grad()) << ", " << name(attention.logsumexp())
       << ")";
  else
    os << name(attention.out()) << ", " << name(attention.logsumexp())
       << " = attention(" << name(attention.query()) << ", "
       << name(attention.key()) << ", " << name(attention.value()) << ")";
  os << ", scale " << attention.scale();
}

flatbuffers::Offset<plan::Attention>
createAttention(flatbuffers::FlatBufferBuilder &fbb, const AttentionDesc &a) {
  auto optional = [](const std::optional<uint32_t> &index) {
    return index ? flatbuffers::Optional<uint32_t>(*index)
                 : flatbuffers::Optional<uint32_t>(flatbuffers::nullopt);
  };
  return plan::CreateAttention(
      fbb, a.query, a.key, a.value, a.out, a.logSumExp, optional(a.outGrad),
      optional(a.queryGrad), optional(a.keyGrad), optional(a.valueGrad),
      a.batch, a.queryHeads, a.kvHeads, a.queryLength, a.kvLength, a.headDim,
      a.causal, a.scale, a.packed);
}

} // namespace detail
} // namespace genesis
