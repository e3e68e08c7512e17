//===- Generation.h - Text generation from a compiled plan ------*- C++ -*-===//
//
// The runtime half of generation: it drives a generation plan (made by
// compileGeneration, models/lm/GenerationCompiler.h) through a Session and
// links no MLIR, so it runs wherever the runtime does.
//
// A generation plan holds two functions over the same parameters and the same
// KV cache, persistent buffers "cache.layers.<i>.k" and "cache.layers.<i>.v"
// [1, Hkv, maxLength, D] that both update in place:
//
//   prefill(ids [1, P] i64, position [] i64, last [] i64) -> logits [1, vocab]
//   decode(token [1, 1] i64, position [] i64)             -> logits [1, vocab]
//   decode_greedy(token [1, 1] i64, position [] i64, samplable [] i64)
//                                       -> next [1] i64, best [1] f32
//
// Each writes the keys and values of its tokens at positions position ..
// position + S - 1 and returns the logits after token `last` (decode: its
// only token). A prompt runs through prefill in chunks of P tokens, the last
// chunk padded; each new token runs through decode, or, when decoding is
// greedy, through decode_greedy, which picks the next token on the device
// (the first largest of logits[0, samplable), and that logit) so that only
// it crosses to the host. Plans made before decode_greedy existed lack it,
// as do plans of a vocabulary beyond 2^24 ids (numbered in f32 there);
// they decode through decode and the host's sampler.
//
// A batched plan (compiled for B > 1 sequences) has caches [B, Hkv,
// maxLength, D], a cache row per sequence; prefill takes one more input,
// `row` [] i64, and runs one sequence's prompt into its row; decode and
// decode_greedy run a token of every sequence, each at its own position:
//
//   prefill(ids [1, P], position [], last [], row [])     -> logits [1, vocab]
//   decode(token [B, 1], positions [B])              -> batch_logits [B, vocab]
//   decode_greedy(token [B, 1], positions [B], samplable [])
//                                       -> next [B] i64, best [B] f32
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_MODELS_LM_GENERATION_H
#define GENESIS_MODELS_LM_GENERATION_H

#include "models/common/Sampling.h"
#include "runtime/formats/ArrayIO.h"
#include "runtime/session/Session.h"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace genesis::lm {

/// The function and tensor names of a generation plan.
namespace names {
inline constexpr const char *kPrefill = "prefill";
inline constexpr const char *kDecode = "decode";
inline constexpr const char *kIds = "ids";
inline constexpr const char *kToken = "token";
inline constexpr const char *kPosition = "position";
inline constexpr const char *kLast = "last";
inline constexpr const char *kLogits = "logits";
inline constexpr const char *kDecodeGreedy = "decode_greedy";
inline constexpr const char *kSamplable = "samplable";
inline constexpr const char *kNext = "next";
inline constexpr const char *kBest = "best";
/// Batched plans: prefill's cache row, decode's positions and logits.
inline constexpr const char *kRow = "row";
inline constexpr const char *kPositions = "positions";
inline constexpr const char *kBatchLogits = "batch_logits";
/// The prefix of the cache buffers' names.
inline constexpr const char *kCachePrefix = "cache.";
} // namespace names

/// Whether generation plans store weights and KV caches in `dtype`: f32,
/// bf16 or f16.
inline bool isGenerationStorageType(DType dtype) {
  return dtype == DType::F32 || dtype == DType::BF16 || dtype == DType::F16;
}

/// Binds every parameter of `session`'s plan from `weights` by name, a
/// float tensor converted to the plan's float type (rounded to nearest
/// even, as load_state_dict copies). Throws genesis::Error naming the
/// parameter that `source` (a file name, for the message) lacks or holds
/// with another shape or a non-float dtype that differs.
void bindParameters(Session &session, const NamedArrays &weights,
                    const std::string &source);

/// A Session of a generation plan and the number of tokens in each of its
/// cache rows (one a sequence; batch 1 for most plans).
class GenerationSession {
public:
  /// Checks that the plan has the functions, inputs, output and cache
  /// buffers described above (an error names what differs) and zeroes the
  /// caches. The parameters are bound by the caller, before or after.
  explicit GenerationSession(Session session);

  Session &session() { return session_; }
  /// The cache's length: the most tokens a conversation can hold.
  int64_t maxLength() const { return maxLength_; }
  /// P, the tokens of one prefill call.
  int64_t prefillLength() const { return prefillLength_; }
  int64_t vocabSize() const { return vocabSize_; }
  /// The sequences the plan decodes together.
  int64_t batch() const { return static_cast<int64_t>(positions_.size()); }
  /// The tokens in the cache, which is also the position of the next (of
  /// sequence `row`).
  int64_t position(int64_t row = 0) const;

  /// Runs `tokens` (at least one) at the current position, in prefill chunks
  /// (a lone last token through decode in a plan of batch 1), and returns
  /// the logits after the last one. Throws genesis::Error, before running
  /// anything, for an id outside [0, vocabSize) or tokens that do not fit in
  /// the cache.
  std::vector<float> prefill(const std::vector<int64_t> &tokens) {
    return prefill(0, tokens);
  }
  /// prefill of sequence `row` (its cache row); the others are untouched.
  std::vector<float> prefill(int64_t row, const std::vector<int64_t> &tokens);
  /// Runs one token (batch 1); see prefill.
  std::vector<float> decode(int64_t token);
  /// Runs one token of every sequence whose `active` entry is set (the
  /// others' tokens are ignored and their positions stay) and returns the
  /// logits, [batch x vocab] row-major. Checks the active tokens as prefill
  /// does.
  std::vector<float> decode(const std::vector<int64_t> &tokens,
                            const std::vector<bool> &active);
  /// Whether the plan picks greedy tokens on the device (decode_greedy).
  bool decodesGreedily() const { return greedyDecode_; }
  /// Runs one token and returns the first id of the largest logit among
  /// [0, samplable) (the host sampler's greedy choice) without copying the
  /// logits to the host. Throws genesis::Error as decode does, and for
  /// logits whose largest is NaN, +inf or -inf (the sampler refuses them).
  int64_t decodeGreedy(int64_t token, int64_t samplable);
  /// decodeGreedy of every active sequence (see decode); the entries of
  /// inactive ones are unspecified.
  std::vector<int64_t> decodeGreedy(const std::vector<int64_t> &tokens,
                                    const std::vector<bool> &active,
                                    int64_t samplable);
  /// Starts new conversations (position 0) in every row, or in `row`. Stale
  /// cache rows need no clearing: every position is written before it is
  /// attended to.
  void reset() { std::fill(positions_.begin(), positions_.end(), 0); }
  void reset(int64_t row);

private:
  /// Throws genesis::Error for a batched plan: `call` runs one sequence.
  void checkBatchOfOne(const char *call) const;
  void checkRow(int64_t row) const;
  void check(int64_t row, const std::vector<int64_t> &tokens) const;
  /// The inputs of decode or decode_greedy for `tokens` of the active rows.
  std::map<std::string, HostArray>
  decodeInputs(const std::vector<int64_t> &tokens,
               const std::vector<bool> &active) const;
  void advance(const std::vector<bool> &active);

  Session session_;
  int64_t maxLength_ = 0;
  int64_t prefillLength_ = 0;
  int64_t vocabSize_ = 0;
  std::vector<int64_t> positions_;
  bool greedyDecode_ = false;
};

struct GenerateOptions {
  /// The most tokens to generate (>= 1).
  int64_t maxNewTokens = 64;
  /// Generation ends after any of these tokens (kept in the result).
  std::vector<int64_t> stopTokens;
  /// Sample only ids below this (a tokenizer smaller than the model's
  /// vocabulary); 0 or more than the model's vocabulary: every id.
  int64_t samplableTokens = 0;
  /// Greedy decoding without a repetition penalty picks tokens on the
  /// device where the plan can (decode_greedy); false: on the host.
  bool greedyOnDevice = true;
};

enum class StopReason { MaxNewTokens, StopToken, CacheFull };

struct GenerationResult {
  /// The new tokens. The last one is not in the cache yet: a conversation
  /// that goes on feeds it first.
  std::vector<int64_t> tokens;
  StopReason stopReason = StopReason::MaxNewTokens;
  int64_t promptTokens = 0;
  double prefillSeconds = 0;
  /// Decode calls (each gives one token) and their time, sampling included.
  int64_t decodeSteps = 0;
  double decodeSeconds = 0;

  double decodeTokensPerSecond() const {
    return decodeSeconds > 0 ? static_cast<double>(decodeSteps) / decodeSeconds
                             : 0.0;
  }
};

/// Prefills `prompt` (at least one token) after what the cache holds, then
/// samples a token from the logits (the prompt joins the sampler's context
/// for the repetition penalty) and decodes it, until a stop token,
/// options.maxNewTokens tokens, or a full cache. `onToken` sees each new
/// token as it is sampled (to print it). Throws genesis::Error if the prompt
/// does not fit in the cache or the options are invalid.
GenerationResult generate(GenerationSession &session,
                          const std::vector<int64_t> &prompt,
                          text::Sampler &sampler,
                          const GenerateOptions &options,
                          const std::function<void(int64_t)> &onToken = {});

/// generate for several prompts at once, in one plan's rows (at most
/// session.batch() prompts, each at least one token): the rows start new
/// conversations (unlike generate(), which continues one), every prompt is
/// checked, then prefilled into its row, then each step decodes a token of
/// every sequence still going, and each stops on its own (a stop token,
/// maxNewTokens, a full cache). Sequence r samples with `sampling` seeded seed
/// + r (the same choices as generate() with a sampler of those options for
/// prompt 0). `onToken(r, token)` sees each new token. The results' decode time
/// is the whole batch's; decodeSteps counts each sequence's own steps.
std::vector<GenerationResult>
generateBatch(GenerationSession &session,
              const std::vector<std::vector<int64_t>> &prompts,
              const text::SamplingOptions &sampling,
              const GenerateOptions &options,
              const std::function<void(int64_t, int64_t)> &onToken = {});

} // namespace genesis::lm

#endif // GENESIS_MODELS_LM_GENERATION_H
