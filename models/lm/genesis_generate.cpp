//===- genesis_generate.cpp - Generate text with a language model ---------===//
//
// Loads a Hugging Face GPT-2 or Qwen2 directory (--model) or builds a model
// of a named configuration with random weights (--random), compiles its
// generation plan (prefill and decode over a static KV cache) for the CPU or
// CUDA, and generates from --prompt, or chats with --chat. --compile-only
// writes the plan, the weights, the tokenizer and the generation config to
// --out instead, and --plan runs such a plan with its weights, without the
// compiler. A generation_config.json beside the model or plan gives the stop
// tokens and the sampling the command line leaves unsaid; a --chat follows
// the chat_template of the tokenizer_config.json beside the tokenizer.
//
// Built twice: genesis-generate, and genesis-generate-runtime
// (GENESIS_GENERATE_RUNTIME_ONLY), which has only --plan, links no MLIR or
// LLVM shared library, and so runs on the GPU machine.
//
//===----------------------------------------------------------------------===//

#include "dialect/Utils/CommandLine.h"
#include "models/common/ChatTemplate.h"
#include "models/common/GenerationConfig.h"
#include "models/common/Tokenizer.h"
#include "models/lm/Generation.h"
#include "runtime/formats/ArrayIO.h"
#include "runtime/plan/PlanFile.h"

#ifndef GENESIS_GENERATE_RUNTIME_ONLY
#include "models/lm/GenerationCompiler.h"
#include "passes/Passes.h"
#include "runtime/formats/AtomicFile.h"

#include "mlir/Pass/PassManager.h"
#endif

#include "llvm/Support/CommandLine.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>

using namespace genesis;
namespace cl = llvm::cl;
namespace fs = std::filesystem;

#ifdef GENESIS_GENERATE_RUNTIME_ONLY
static const char *const kProgram = "genesis-generate-runtime";
#else
static const char *const kProgram = "genesis-generate";

static cl::opt<std::string>
    modelDir("model",
             cl::desc("Hugging Face model directory (config.json, "
                      "model.safetensors, tokenizer.json if any)"),
             cl::value_desc("dir"));
static cl::opt<std::string>
    randomModel("random",
                cl::desc("Random weights of a named configuration: "
                         "gpt2-tiny, qwen2-tiny, gpt2-124m, qwen2.5-0.5b"),
                cl::value_desc("name"));
static cl::opt<uint64_t> initSeed("init-seed", cl::init(0),
                                  cl::desc("Seed of the --random weights"));
static cl::opt<std::string> target("target", cl::init("auto"),
                                   cl::desc("cpu, cuda, or auto (cuda when a "
                                            "GPU is usable, else cpu)"));
static cl::opt<std::string>
    weightType("dtype", cl::init("f32"),
               cl::desc("The type the plan stores weights and the KV cache "
                        "in: f32, or bf16 or f16 (cuda; GEMMs then compute in "
                        "that type, everything else in f32)"));
static cl::opt<int64_t>
    maxLength("max-len", cl::init(0),
              cl::desc("Positions in the KV cache (default: 512, at most the "
                       "model's positions)"));
static cl::opt<int64_t>
    prefillLength("prefill-len", cl::init(32),
                  cl::desc("Tokens per prefill call (at most --max-len)"));
static cl::opt<int64_t>
    batchSize("batch", cl::init(1),
              cl::desc("Sequences the plan decodes together (a KV cache row "
                       "each; --batch-file fills them)"));
static cl::opt<bool>
    compileOnly("compile-only",
                cl::desc("Write generate.gplan, model.safetensors and the "
                         "tokenizer to --out and stop"));
static cl::opt<std::string> outputDir("out",
                                      cl::desc("Directory for --compile-only"),
                                      cl::value_desc("dir"));
#endif

static cl::opt<std::string>
    planPath("plan", cl::desc("Run this generation plan (from --compile-only)"),
             cl::value_desc("file"));
static cl::opt<std::string>
    weightsPath("weights", cl::desc("The plan's weights (safetensors)"),
                cl::value_desc("file"));
static cl::opt<std::string>
    tokenizerPath("tokenizer",
                  cl::desc("tokenizer.json (default: the model directory's or "
                           "the one beside the plan, else the byte tokenizer)"),
                  cl::value_desc("file"));
static cl::opt<std::string> prompt("prompt", cl::desc("Text to continue"));
static cl::opt<std::string> batchFile(
    "batch-file",
    cl::desc("Continue each line of this file; a plan of --batch N decodes N "
             "lines together, each stopping on its own"),
    cl::value_desc("file"));
static cl::opt<int64_t> maxNewTokens("max-new-tokens", cl::init(32),
                                     cl::desc("Most tokens to generate"));
static cl::opt<double>
    temperature("temperature", cl::init(1.0),
                cl::desc("Sampling temperature; 0 is greedy"));
static cl::opt<int64_t> topK("top-k", cl::init(0),
                             cl::desc("Sample from the k likeliest (0: all)"));
static cl::opt<double>
    topP("top-p", cl::init(1.0),
         cl::desc("Sample from the likeliest tokens of this much probability"));
static cl::opt<double> repetitionPenalty(
    "repetition-penalty", cl::init(1.0),
    cl::desc("Divide the positive logits of tokens already in the context by "
             "this, multiply the negative ones (transformers'; 1: none)"));
static cl::opt<uint64_t> seed("seed", cl::init(0),
                              cl::desc("Seed of the sampling"));
static cl::opt<bool> chat("chat",
                          cl::desc("Chat: read one message per line of stdin"));
static cl::opt<bool> printPrompt(
    "print-prompt",
    cl::desc("--chat: print the conversation as the chat template renders "
             "it, each turn, to stderr"));
static cl::opt<bool> printIds(
    "print-ids",
    cl::desc("Print each reply's new token ids to stderr (to compare with "
             "another system's ids)"));
static cl::opt<bool> hostGreedy(
    "host-greedy",
    cl::desc("Greedy decoding picks each token on the host from the logits "
             "(decode), not on the device (decode_greedy): to compare"));
static cl::opt<bool>
    profile("profile",
            cl::desc("Print the decode function's slowest steps at the end"));
static cl::opt<std::string>
    systemPrompt("system", cl::init("You are a helpful assistant."),
                 cl::desc("The system message of a --chat with a chat "
                          "template"));

namespace {

using Clock = std::chrono::steady_clock;

/// The most sequences a plan decodes together: a KV cache row each.
[[maybe_unused]] constexpr int64_t kMaxBatch = 4096;

/// transformers' file of generation defaults, in the model directory and
/// beside a --compile-only plan.
constexpr const char *kGenerationConfig = "generation_config.json";
/// transformers' tokenizer settings, beside tokenizer.json: the chat
/// template and the special tokens.
constexpr const char *kTokenizerConfig = "tokenizer_config.json";

// Only the compiling build reports load and compile times.
[[maybe_unused]] double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// The sampling options: each given on the command line, else the model's
/// generation_config.json's (greedy unless it samples; giving any sampling
/// option samples), else the command line's defaults; validated.
text::SamplingOptions
samplingOptions(const std::optional<text::GenerationConfig> &config = {}) {
  bool samplingGiven = temperature.getNumOccurrences() ||
                       topK.getNumOccurrences() || topP.getNumOccurrences();
  text::SamplingOptions options;
  options.temperature = temperature;
  options.topK = topK;
  options.topP = topP;
  options.repetitionPenalty = repetitionPenalty;
  if (config) {
    text::GenerationConfig sampled = *config;
    sampled.doSample |= samplingGiven;
    text::SamplingOptions defaults = sampled.sampling();
    if (!temperature.getNumOccurrences())
      options.temperature = defaults.temperature;
    if (!topK.getNumOccurrences())
      options.topK = defaults.topK;
    if (!topP.getNumOccurrences())
      options.topP = defaults.topP;
    if (!repetitionPenalty.getNumOccurrences())
      options.repetitionPenalty = defaults.repetitionPenalty;
  }
  options.seed = seed;
  text::validate(options);
  return options;
}

/// The generation_config.json at `path` when there is one; its settings that
/// Genesis does not apply are named on stderr.
std::optional<text::GenerationConfig>
generationConfigAt(const std::string &path) {
  if (!fs::exists(path))
    return std::nullopt;
  text::GenerationConfig config = text::loadGenerationConfig(path);
  for (const std::string &setting : config.unsupported)
    std::fprintf(stderr,
                 "%s: warning: %s: %s is not applied (not "
                 "implemented)\n",
                 kProgram, path.c_str(), setting.c_str());
  return config;
}

/// The tokenizer.json to use: --tokenizer, which must exist, else `fallback`
/// if it exists, else "" (the byte tokenizer).
std::string tokenizerFile(const std::string &fallback) {
  if (!tokenizerPath.empty()) {
    if (!fs::exists(tokenizerPath.getValue()))
      throw Error("cannot open '" + tokenizerPath + "'");
    return tokenizerPath;
  }
  return !fallback.empty() && fs::exists(fallback) ? fallback : "";
}

/// With --chat, the tokenizer_config.json beside the tokenizer file
/// `tokenizer`, when there is one; a chat template outside what ChatTemplate
/// follows is an error here, before a model is loaded.
std::optional<text::TokenizerConfig>
tokenizerConfigBeside(const std::string &tokenizer) {
  if (!chat || tokenizer.empty())
    return std::nullopt;
  fs::path path = fs::path(tokenizer).parent_path() / kTokenizerConfig;
  if (!fs::exists(path))
    return std::nullopt;
  return text::loadTokenizerConfig(path.string());
}

/// The tokenizer of `path` (see tokenizerFile).
std::unique_ptr<text::Tokenizer> tokenizerAt(const std::string &path) {
  if (path.empty())
    return std::make_unique<text::ByteTokenizer>();
  return std::make_unique<text::BpeTokenizer>(
      text::BpeTokenizer::fromFile(path));
}

/// What the model reads and how a conversation goes on.
class Conversation {
public:
  Conversation(lm::GenerationSession &session, const text::Tokenizer &tokenizer,
               const std::optional<text::GenerationConfig> &config,
               std::optional<text::TokenizerConfig> tokenizerConfig)
      : session_(session), tokenizer_(tokenizer),
        sampler_(samplingOptions(config)) {
    options_.maxNewTokens =
        config && config->maxNewTokens && !maxNewTokens.getNumOccurrences()
            ? *config->maxNewTokens
            : maxNewTokens;
    options_.samplableTokens = tokenizer.vocabSize();
    options_.greedyOnDevice = !hostGreedy;
    if (std::optional<int64_t> end = tokenizer.endOfTextId())
      options_.stopTokens.push_back(*end);
    if (config)
      for (int64_t id : config->eosTokenIds)
        if (std::find(options_.stopTokens.begin(), options_.stopTokens.end(),
                      id) == options_.stopTokens.end())
          options_.stopTokens.push_back(id);
    auto *bpe = dynamic_cast<const text::BpeTokenizer *>(&tokenizer);
    if (bpe) {
      imStart_ = bpe->tokenId("<|im_start|>");
      imEnd_ = bpe->tokenId("<|im_end|>");
    }
    if (tokenizerConfig && tokenizerConfig->chatTemplate) {
      chatTemplate_ = std::move(tokenizerConfig->chatTemplate);
      messages_ = nlohmann::ordered_json::array();
      variables_ = nlohmann::ordered_json::object();
      for (auto [name, token] :
           {std::pair{"bos_token", tokenizerConfig->bosToken},
            std::pair{"eos_token", tokenizerConfig->eosToken}})
        if (token)
          variables_[name] = *token;
      // A reply ends with the template's end-of-sequence token.
      if (std::optional<int64_t> eos =
              bpe && tokenizerConfig->eosToken
                  ? bpe->tokenId(*tokenizerConfig->eosToken)
                  : std::nullopt)
        addStopToken(*eos);
    } else if (chat && templated()) {
      // A chat reply ends with its message.
      addStopToken(*imEnd_);
    }
  }

  /// Whether messages go through a chat template: the tokenizer config's,
  /// else Qwen2's ChatML when the tokenizer has its tokens.
  bool templated() const { return chatTemplate_ || (imStart_ && imEnd_); }
  const char *format() const {
    return chatTemplate_ ? "the chat template of tokenizer_config.json"
           : templated() ? "ChatML template"
                         : "plain continuation";
  }

  /// Continues `text` and prints the new text as it comes.
  void complete(const std::string &text) { run(promptIds(text), text); }

  /// Continues each of `texts` (--batch-file's lines), as many together as
  /// the plan decodes, and prints each completion, in order, once its batch
  /// is done, then the batch's times.
  void completeAll(const std::vector<std::string> &texts) {
    size_t batch = static_cast<size_t>(session_.batch());
    for (size_t first = 0; first < texts.size(); first += batch) {
      std::vector<std::string> group(texts.begin() + first,
                                     texts.begin() +
                                         std::min(texts.size(), first + batch));
      std::vector<std::vector<int64_t>> prompts;
      for (const std::string &text : group)
        prompts.push_back(promptIds(text));
      // Line i samples with seed + i, whatever the batch.
      text::SamplingOptions sampling = sampler_.options();
      sampling.seed += first;
      std::vector<lm::GenerationResult> results;
      try {
        results = lm::generateBatch(session_, prompts, sampling, options_);
      } catch (const Error &error) {
        throw Error("--batch-file lines " + std::to_string(first + 1) + "-" +
                    std::to_string(first + group.size()) +
                    " (prompt r is line " + std::to_string(first + 1) +
                    " + r): " + error.what());
      }
      double prefillSeconds = 0;
      int64_t tokens = 0;
      for (size_t i = 0; i < group.size(); ++i) {
        std::vector<int64_t> reply = results[i].tokens;
        if (results[i].stopReason == lm::StopReason::StopToken)
          reply.pop_back();
        std::string text = group[i] + tokenizer_.decodeContinuation(reply);
        std::printf("[%zu] %s\n", first + i, text.c_str());
        if (printIds)
          std::fprintf(stderr, "[%zu] ids: %s\n", first + i,
                       idList(results[i].tokens).c_str());
        prefillSeconds += results[i].prefillSeconds;
        tokens += results[i].decodeSteps;
      }
      double seconds = results.front().decodeSeconds;
      std::printf("batch of %zu: prefill %.1f ms; decode: %lld tokens in "
                  "%.3f s, %.1f tokens/s\n",
                  group.size(), prefillSeconds * 1e3,
                  static_cast<long long>(tokens), seconds,
                  seconds > 0 ? static_cast<double>(tokens) / seconds : 0.0);
      std::fflush(stdout);
    }
  }

  /// One chat turn: the reply to `message`, printed as it comes.
  void reply(const std::string &message) {
    if (chatTemplate_) {
      replyWithTemplate(message);
      return;
    }
    std::vector<int64_t> ids =
        turn(message, /*first=*/session_.position() == 0);
    // One more position for at least one new token.
    if (session_.position() + static_cast<int64_t>(ids.size()) + 1 >
        session_.maxLength()) {
      std::printf("[the conversation fills the KV cache (%lld positions): "
                  "starting a new one]\n",
                  static_cast<long long>(session_.maxLength()));
      session_.reset();
      sampler_.resetContext();
      ids = turn(message, /*first=*/true);
      if (static_cast<int64_t>(ids.size()) + 1 > session_.maxLength())
        throw Error("the message needs " + std::to_string(ids.size()) +
                    " tokens, more than the KV cache's " +
                    std::to_string(session_.maxLength()) + " positions allow");
    }
    run(ids);
  }

private:
  /// The ids of a prompt; an empty one starts from the end-of-text token.
  std::vector<int64_t> promptIds(const std::string &text) const {
    std::vector<int64_t> ids = tokenizer_.encode(text);
    if (ids.empty()) {
      if (options_.stopTokens.empty())
        throw Error("the prompt is empty and the tokenizer has no "
                    "end-of-text token to start from");
      ids.push_back(options_.stopTokens.front());
    }
    return ids;
  }

  static std::string idList(const std::vector<int64_t> &tokens) {
    std::string list;
    for (int64_t token : tokens)
      list += (list.empty() ? "" : " ") + std::to_string(token);
    return list;
  }

  void addStopToken(int64_t id) {
    if (std::find(options_.stopTokens.begin(), options_.stopTokens.end(), id) ==
        options_.stopTokens.end())
      options_.stopTokens.push_back(id);
  }

  /// The messages so far and `message` rendered by the chat template with
  /// the generation prompt, as transformers' apply_chat_template; the
  /// system message is --system's when given, else the template's own.
  std::vector<int64_t> renderWith(const std::string &message) {
    nlohmann::ordered_json messages = messages_;
    if (messages.empty() && systemPrompt.getNumOccurrences())
      messages.push_back({{"role", "system"}, {"content", systemPrompt}});
    messages.push_back({{"role", "user"}, {"content", message}});
    std::string text = chatTemplate_->render(messages, true, variables_);
    if (printPrompt)
      std::fprintf(stderr, "[prompt]\n%s[end of prompt]\n", text.c_str());
    messages_ = std::move(messages);
    return tokenizer_.encode(text);
  }

  /// A turn through the chat template: the whole conversation is rendered
  /// and tokenized, and only what the KV cache does not hold yet runs (the
  /// cache is restarted when the rendering changed earlier tokens, or the
  /// conversation no longer fits).
  void replyWithTemplate(const std::string &message) {
    // A turn that fails (a template error, a device error) leaves the
    // conversation as it was, so the next turn renders the same history.
    nlohmann::ordered_json before = messages_;
    try {
      std::vector<int64_t> ids = renderWith(message);
      if (ids.size() + 1 > static_cast<size_t>(session_.maxLength())) {
        std::printf("[the conversation fills the KV cache (%lld positions): "
                    "starting a new one]\n",
                    static_cast<long long>(session_.maxLength()));
        messages_ = nlohmann::ordered_json::array();
        ids = renderWith(message);
        if (ids.size() + 1 > static_cast<size_t>(session_.maxLength()))
          throw Error("the message needs " + std::to_string(ids.size()) +
                      " tokens, more than the KV cache's " +
                      std::to_string(session_.maxLength()) +
                      " positions allow");
      }
      bool cached = cached_.size() < ids.size() &&
                    std::equal(cached_.begin(), cached_.end(), ids.begin());
      if (!cached ||
          static_cast<size_t>(session_.position()) != cached_.size()) {
        // The cache, and the repetition penalty's context, start over.
        session_.reset();
        sampler_.resetContext();
        cached_.clear();
      }
      std::vector<int64_t> fresh(
          ids.begin() + static_cast<int64_t>(cached_.size()), ids.end());
      lm::GenerationResult result = run(fresh);
      // The cache holds the prompt and every new token but the last.
      cached_ = ids;
      cached_.insert(cached_.end(), result.tokens.begin(),
                     result.tokens.end() - 1);
      std::vector<int64_t> replyTokens = result.tokens;
      if (result.stopReason == lm::StopReason::StopToken)
        replyTokens.pop_back();
      messages_.push_back(
          {{"role", "assistant"}, {"content", tokenizer_.decode(replyTokens)}});
    } catch (...) {
      messages_ = std::move(before);
      throw;
    }
  }

  /// The tokens of one chat turn: what the last reply left out of the cache
  /// (its last token and, with the template, the end of its message) and a
  /// newline, then the message.
  std::vector<int64_t> turn(const std::string &message, bool first) {
    std::vector<int64_t> ids;
    std::string text;
    if (!first) {
      ids.push_back(pending_);
      if (templated() && pending_ != *imEnd_)
        ids.push_back(*imEnd_);
      text = "\n";
    }
    if (templated()) {
      if (first)
        text += "<|im_start|>system\n" + systemPrompt + "<|im_end|>\n";
      text += "<|im_start|>user\n" + message +
              "<|im_end|>\n<|im_start|>assistant\n";
    } else {
      text += message;
    }
    std::vector<int64_t> encoded = tokenizer_.encode(text);
    ids.insert(ids.end(), encoded.begin(), encoded.end());
    return ids;
  }

  /// Generates after `ids`; `echo` is printed before the first new token,
  /// once the prompt ran. A reply (no echo) is a text of its own, whose
  /// first token decodes as a text's start; a completion continues its
  /// prompt.
  lm::GenerationResult run(const std::vector<int64_t> &ids,
                           std::string echo = "") {
    bool textStart = echo.empty();
    lm::GenerationResult result =
        lm::generate(session_, ids, sampler_, options_, [&](int64_t token) {
          std::printf("%s", echo.c_str());
          echo.clear();
          if (std::find(options_.stopTokens.begin(), options_.stopTokens.end(),
                        token) != options_.stopTokens.end())
            return;
          std::string piece = textStart
                                  ? tokenizer_.decode({token})
                                  : tokenizer_.decodeContinuation({token});
          textStart = false;
          std::fwrite(piece.data(), 1, piece.size(), stdout);
          std::fflush(stdout);
        });
    pending_ = result.tokens.back();
    std::printf("\n");
    if (printIds) {
      std::fflush(stdout);
      std::fprintf(stderr, "ids: %s\n", idList(result.tokens).c_str());
    }
    std::fprintf(chat ? stderr : stdout,
                 "prefill: %lld tokens in %.1f ms; decode: %lld tokens, "
                 "%.1f tokens/s%s\n",
                 static_cast<long long>(result.promptTokens),
                 result.prefillSeconds * 1e3,
                 static_cast<long long>(result.decodeSteps),
                 result.decodeTokensPerSecond(),
                 result.stopReason == lm::StopReason::CacheFull
                     ? " (the KV cache is full)"
                     : "");
    std::fflush(stdout);
    return result;
  }

  lm::GenerationSession &session_;
  const text::Tokenizer &tokenizer_;
  /// One for the whole conversation: each turn draws new numbers, and the
  /// repetition penalty sees every turn, as a conversation given whole to
  /// transformers' generate() would.
  text::Sampler sampler_;
  lm::GenerateOptions options_;
  std::optional<int64_t> imStart_, imEnd_;
  /// With tokenizer_config.json's template: the conversation, the template's
  /// variables, and the tokens the KV cache holds.
  std::optional<text::ChatTemplate> chatTemplate_;
  nlohmann::ordered_json messages_, variables_;
  std::vector<int64_t> cached_;
  /// The last token of the last reply, not yet in the cache.
  int64_t pending_ = 0;
};

/// The steps of `function` that took longest, per call (on cuda the steps
/// then run one by one, without graphs: see Session::setProfiling).
void printSlowestSteps(const Session &session, const std::string &function) {
  std::vector<StepTiming> steps;
  for (const StepTiming &step : session.stats().steps)
    if (step.function == function && step.calls > 0)
      steps.push_back(step);
  if (steps.empty())
    return; // not called
  std::sort(steps.begin(), steps.end(), [](const auto &a, const auto &b) {
    return a.totalSeconds > b.totalSeconds;
  });
  double total = 0;
  for (const StepTiming &step : steps)
    total += step.totalSeconds / step.calls;
  std::fprintf(stderr, "%s: %zu timed steps, %.3f ms per call; slowest:\n",
               function.c_str(), steps.size(), total * 1e3);
  for (size_t i = 0; i < std::min<size_t>(steps.size(), 12); ++i)
    std::fprintf(stderr, "  %8.3f ms  %s  @ %s\n",
                 steps[i].totalSeconds * 1e3 / steps[i].calls,
                 steps[i].name.c_str(), steps[i].location.c_str());
  // Identical layers share kernels: the time of each kernel over a call.
  std::map<std::string, std::pair<double, int>> byKernel;
  for (const StepTiming &step : steps) {
    auto &[seconds, count] = byKernel[step.name];
    seconds += step.totalSeconds / step.calls;
    ++count;
  }
  std::vector<std::pair<std::string, std::pair<double, int>>> kernels(
      byKernel.begin(), byKernel.end());
  std::sort(kernels.begin(), kernels.end(), [](const auto &a, const auto &b) {
    return a.second.first > b.second.first;
  });
  std::fprintf(stderr, "%s: time per call by step name:\n", function.c_str());
  for (size_t i = 0; i < std::min<size_t>(kernels.size(), 16); ++i)
    std::fprintf(stderr, "  %8.3f ms  %3d x  %s\n",
                 kernels[i].second.first * 1e3, kernels[i].second.second,
                 kernels[i].first.c_str());
}

void generateWith(lm::GenerationSession &session,
                  const text::Tokenizer &tokenizer,
                  const std::optional<text::GenerationConfig> &config,
                  std::optional<text::TokenizerConfig> tokenizerConfig) {
  session.session().setProfiling(profile);
  Conversation conversation(session, tokenizer, config,
                            std::move(tokenizerConfig));
  if (!batchFile.empty()) {
    std::ifstream file(batchFile.getValue());
    if (!file)
      throw Error("cannot open --batch-file '" + batchFile + "'");
    std::vector<std::string> lines;
    for (std::string line; std::getline(file, line);) {
      if (!line.empty() && line.back() == '\r')
        line.pop_back();
      lines.push_back(line);
    }
    if (lines.empty())
      throw Error("--batch-file '" + batchFile + "' has no lines");
    conversation.completeAll(lines);
  } else if (!chat) {
    conversation.complete(prompt);
  }
  if (!chat) {
    if (profile)
      for (const char *function :
           {lm::names::kDecode, lm::names::kDecodeGreedy})
        printSlowestSteps(session.session(), function);
    return;
  }
  std::fprintf(stderr, "chat (%s); one message per line, end with EOF\n",
               conversation.format());
  std::string line;
  while (std::printf("> "), std::fflush(stdout), std::getline(std::cin, line)) {
    // A message that cannot be answered ends its turn, not the chat.
    try {
      conversation.reply(line);
    } catch (const Error &error) {
      std::fflush(stdout);
      std::fprintf(stderr, "%s: error: %s\n", kProgram, error.what());
    }
  }
  std::printf("\n");
}

/// --plan: the plan and its weights, no compiler.
void runPlan() {
  if (weightsPath.empty())
    throw Error("--plan needs --weights");
  std::string tokenizerPath = tokenizerFile(
      (fs::path(planPath.getValue()).parent_path() / "tokenizer.json")
          .string());
  std::unique_ptr<text::Tokenizer> tokenizer = tokenizerAt(tokenizerPath);
  std::optional<text::TokenizerConfig> tokenizerConfig =
      tokenizerConfigBeside(tokenizerPath);
  std::optional<text::GenerationConfig> config = generationConfigAt(
      (fs::path(planPath.getValue()).parent_path() / kGenerationConfig)
          .string());
  Session session(PlanFile::load(planPath));
  lm::bindParameters(session, loadSafetensors(weightsPath), weightsPath);
  lm::GenerationSession generation(std::move(session));
  generateWith(generation, *tokenizer, config, std::move(tokenizerConfig));
}

#ifndef GENESIS_GENERATE_RUNTIME_ONLY
/// --model or --random: compile, then run or write the plan.
void compileAndRun() {
  if (!modelDir.empty() && !randomModel.empty())
    throw Error("give one of --model, --random and --plan");
  if (compileOnly && outputDir.empty())
    throw Error("--compile-only needs --out");
  if (target != "cpu" && target != "cuda" && target != "auto")
    throw Error("--target must be cpu, cuda or auto, got '" + target + "'");
  // --max-len 0 (the default) means the model's positions.
  if (maxLength < 0)
    throw Error("--max-len must be positive (or 0: the model's positions), "
                "got " +
                std::to_string(maxLength));
  if (prefillLength < 1)
    throw Error("--prefill-len must be positive, got " +
                std::to_string(prefillLength));
  if (batchSize < 1 || batchSize > kMaxBatch)
    throw Error("--batch must be in [1, " + std::to_string(kMaxBatch) +
                "], got " + std::to_string(batchSize));
  std::string tokenizer =
      tokenizerFile(modelDir.empty() ? "" : modelDir + "/tokenizer.json");
  std::string configPath =
      modelDir.empty() ? "" : modelDir + "/" + kGenerationConfig;
  std::optional<text::GenerationConfig> config =
      configPath.empty() ? std::nullopt : generationConfigAt(configPath);
  std::optional<text::TokenizerConfig> tokenizerConfig =
      tokenizerConfigBeside(tokenizer);
  std::optional<DType> storedType = parseDType(weightType);
  if (!storedType || !lm::isGenerationStorageType(*storedType))
    throw Error("--dtype must be f32, bf16 or f16, got '" + weightType + "'");
  bool cuda =
      target == "cuda" || (target == "auto" && cudaUnavailableReason().empty());
  if (*storedType != DType::F32 && !cuda)
    throw Error("--dtype " + weightType +
                " needs the cuda target: the CPU kernels compute in f32 and "
                "would widen every weight at every step" +
                (target == "auto" ? " (--target=auto found no GPU: " +
                                        cudaUnavailableReason() + ")"
                                  : std::string()));
  Clock::time_point start = Clock::now();
  std::unique_ptr<lm::CausalLM> lm =
      modelDir.empty() ? lm::randomCausalLM(randomModel, initSeed)
                       : lm::loadCausalLM(modelDir);
  lm->model().to(*storedType);
  double loadSeconds = secondsSince(start);
  lm::GenerationShape shape;
  shape.maxLength =
      maxLength > 0 ? maxLength
                    : std::min<int64_t>(shape.maxLength, lm->maxPositions());
  shape.prefillLength = std::min<int64_t>(prefillLength, shape.maxLength);
  shape.batch = batchSize;
  PlanOptions options;
  options.target = cuda ? plan::Target::Cuda : plan::Target::Cpu;
  // Kernels for the GPU here, which runs the plan.
  if (cuda)
    options.cudaChips = parseCudaArchs("native");
  start = Clock::now();
  std::vector<uint8_t> bytes = lm::compileGeneration(*lm, shape, options);
  std::fprintf(stderr,
               "%s: %s model, %lld parameters, made in %.1f s; plan for %s "
               "compiled in %.1f s (max length %lld, prefill %lld, batch "
               "%lld)\n",
               kProgram, lm->modelType().c_str(),
               static_cast<long long>(lm->model().num_parameters()),
               loadSeconds, cuda ? "cuda" : "cpu", secondsSince(start),
               static_cast<long long>(shape.maxLength),
               static_cast<long long>(shape.prefillLength),
               static_cast<long long>(shape.batch));

  if (compileOnly) {
    std::error_code made;
    fs::create_directories(outputDir.getValue(), made);
    if (made)
      throw Error("cannot create the --out directory '" + outputDir +
                  "': " + made.message());
    std::string plan = outputDir + "/generate.gplan";
    writeFileAtomically(plan, bytes.data(), bytes.size());
    saveSafetensors(outputDir + "/model.safetensors", lm->model().state_dict());
    if (!tokenizer.empty())
      fs::copy_file(tokenizer, outputDir + "/tokenizer.json",
                    fs::copy_options::overwrite_existing);
    if (config)
      fs::copy_file(configPath, outputDir + "/" + kGenerationConfig,
                    fs::copy_options::overwrite_existing);
    fs::path tokenizerConfigPath =
        fs::path(tokenizer).parent_path() / kTokenizerConfig;
    bool copyTokenizerConfig =
        !tokenizer.empty() && fs::exists(tokenizerConfigPath);
    if (copyTokenizerConfig)
      fs::copy_file(tokenizerConfigPath, outputDir + "/" + kTokenizerConfig,
                    fs::copy_options::overwrite_existing);
    std::printf("wrote %s, %s/model.safetensors%s%s%s\n", plan.c_str(),
                outputDir.c_str(), tokenizer.empty() ? "" : ", tokenizer.json",
                copyTokenizerConfig ? ", tokenizer_config.json" : "",
                config ? ", generation_config.json" : "");
    return;
  }
  Session session(PlanFile::fromBytes(bytes.data(), bytes.size(), "generate"));
  lm::bindParameters(session, lm->model().state_dict(), "the model");
  lm::GenerationSession generation(std::move(session));
  generateWith(generation, *tokenizerAt(tokenizer), config,
               std::move(tokenizerConfig));
}
#endif

} // namespace

int main(int argc, char **argv) {
#ifdef GENESIS_GENERATE_RUNTIME_ONLY
  showOnlyOptions("genesis-generate-runtime options",
                  {&planPath, &weightsPath, &tokenizerPath, &prompt, &batchFile,
                   &maxNewTokens, &temperature, &topK, &topP,
                   &repetitionPenalty, &seed, &chat, &systemPrompt,
                   &printPrompt, &printIds, &hostGreedy, &profile});
#else
  // --mlir-print-ir-after=<pass> and the rest of MLIR's pass manager options
  // apply to the compile pipeline (registered first, as lm-compile does).
  genesis::registerGenesisPasses();
  mlir::registerPassManagerCLOptions();
  showOnlyOptions(
      "genesis-generate options",
      {&modelDir,      &randomModel, &initSeed,      &target,
       &weightType,    &maxLength,   &prefillLength, &batchSize,
       &compileOnly,   &outputDir,   &planPath,      &weightsPath,
       &tokenizerPath, &prompt,      &batchFile,     &maxNewTokens,
       &temperature,   &topK,        &topP,          &repetitionPenalty,
       &seed,          &chat,        &systemPrompt,  &printPrompt,
       &printIds,      &hostGreedy});
#endif
  cl::ParseCommandLineOptions(argc, argv,
                              "Generate text with a GPT-2 or Qwen2 model\n");
  try {
    // Checked before any model loads or compiles.
    samplingOptions();
    if (!batchFile.empty() && (chat || prompt.getNumOccurrences()))
      throw Error("--batch-file continues the file's lines: it takes no "
                  "--chat or --prompt");
    if (maxNewTokens < 1)
      throw Error("--max-new-tokens must be at least 1, got " +
                  std::to_string(maxNewTokens));
#ifdef GENESIS_GENERATE_RUNTIME_ONLY
    if (planPath.empty())
      throw Error("give --plan (this build has no compiler)");
    runPlan();
#else
    if (!planPath.empty()) {
      if (!modelDir.empty() || !randomModel.empty() || compileOnly ||
          weightType.getNumOccurrences() > 0)
        throw Error("--plan runs a compiled plan: it takes no --model, "
                    "--random, --compile-only or --dtype (the plan fixes its "
                    "types)");
      runPlan();
    } else if (modelDir.empty() && randomModel.empty()) {
      throw Error("give --model, --random or --plan");
    } else {
      compileAndRun();
    }
#endif
  } catch (const Error &error) {
    std::fflush(stdout);
    std::cerr << kProgram << ": error: " << error.what() << "\n";
    return 1;
  } catch (const fs::filesystem_error &error) {
    std::fflush(stdout);
    std::cerr << kProgram << ": error: " << error.what() << "\n";
    return 1;
  }
  return 0;
}
