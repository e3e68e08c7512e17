//===- ConfigFile.h - Hugging Face config.json -----------------*- C++ -*-===//
//
// The config.json reader that every model's configuration goes through,
// apart from the models themselves (no MLIR): loaders and their fuzzer
// (tests/fuzz/config_fuzzer.cpp) link it alone.
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_MODELS_COMMON_CONFIGFILE_H
#define GENESIS_MODELS_COMMON_CONFIGFILE_H

#include <nlohmann/json.hpp>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>

namespace genesis::models::hf {

/// A parsed config.json. Every error is a genesis::Error that starts with
/// "config file '<path>'" and names the key at fault.
class ConfigFile {
public:
  /// Reads and parses `path`; the top level must be a JSON object.
  explicit ConfigFile(std::string path);

  const std::string &path() const { return path_; }

  /// A required integer >= 1.
  int64_t positiveInt(const std::string &key) const;
  /// An optional integer >= 1.
  int64_t positiveInt(const std::string &key, int64_t fallback) const;
  /// An optional number > 0.
  double positiveNumber(const std::string &key, double fallback) const;
  /// An optional number in [0, 1).
  double probability(const std::string &key, double fallback) const;
  bool flag(const std::string &key, bool fallback) const;

  /// RoPE's base frequency, from the keys of every transformers version:
  /// the top-level `rope_theta` (4.x), `rope_parameters` (5.x) and
  /// `rope_scaling` (4.x), `fallback` when none holds one. Only the default,
  /// unscaled RoPE is implemented: any other `rope_type`/`type` (yarn,
  /// linear, dynamic, llama3, ...) and any other setting in those objects is
  /// refused naming its key, and two different thetas are an error.
  double ropeTheta(double fallback) const;

  /// The value of `key`, or null when the file has no such key.
  const nlohmann::json *find(const std::string &key) const;

  /// For settings Genesis does not implement: throws unless `key` is absent
  /// or holds one of `supported`. `what` says what the key's other values
  /// would change ("RoPE scaling is not implemented").
  void requireDefault(const std::string &key,
                      std::initializer_list<nlohmann::json> supported,
                      const std::string &what) const;

  [[noreturn]] void fail(const std::string &key,
                         const std::string &problem) const;

  /// "config file '<path>'", as errors about this file begin.
  std::string where() const { return "config file '" + path_ + "'"; }

private:
  std::string path_;
  nlohmann::json json_;
};

/// The most layers a model may have: models are traced unrolled, so the
/// program and its compile time grow with the depth (docs/limits.md).
inline constexpr int64_t kMaxLayers = 1024;

/// Refuses, before anything is allocated, a model of more than kMaxLayers
/// layers or whose f32 parameters (`parameters`, computed by the caller in
/// double so that no size overflows) exceed this machine's memory. The
/// error starts with `where` ("config file '...'", "GPT-2 model") and names
/// `sizes` (the settings that set the size and their values).
void checkModelSize(
    const std::string &where, double parameters, int64_t layers,
    std::initializer_list<std::pair<const char *, int64_t>> sizes);

/// Writes `config` to `path` as indented JSON, atomically.
void writeConfigFile(const std::string &path, const nlohmann::json &config);

} // namespace genesis::models::hf

#endif // GENESIS_MODELS_COMMON_CONFIGFILE_H
