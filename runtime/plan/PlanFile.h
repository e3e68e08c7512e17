//===- PlanFile.h - Building and loading .gplan files -----------*- C++ -*-===//
//
// A .gplan file is a 48-byte container header followed by a FlatBuffers
// payload (schema: runtime/plan/Plan.fbs):
//
//   offset  0: "GPLN"
//   offset  4: u32 container version (little-endian)
//   offset  8: u64 payload size in bytes
//   offset 16: SHA-256 of the payload (32 bytes)
//   offset 48: payload
//
// PlanFile trusts nothing: it checks the container, the hash, the FlatBuffers
// structure and then every semantic invariant the runtime relies on (indices
// in range, byte sizes consistent with shapes, arena offsets inside the arena
// and aligned, GEMM dimensions consistent with the operands, ...). A plan
// that loads can be executed without any out-of-bounds access. Every failure
// throws genesis::Error with one line naming the file, the field and the
// problem, e.g.
//   plan file 'm.gplan': tensors[3] 'h': arena range [64, 192) exceeds
//   arena_bytes 128
//
// Role rules the loader enforces (see Plan.fbs for what the roles mean):
//  - temporaries live in the arena, every other role is external;
//  - rng_seed is i64[2], step is i64[], lr is an f32[] or f64[] scalar;
//  - a function's inputs are input, persistent (parameter, optimizer_state,
//    buffer, lr) or session-fed (rng_seed, step) tensors; its outputs are
//    output tensors, persistent tensors it updates in place (parameter,
//    optimizer_state, buffer), or inputs it overwrites in place;
//  - a step reads only temporaries and the function's inputs and outputs,
//    and writes (Gemm c, Copy dst, Fill dst) only temporaries and outputs.
//
// CUDA plans: kernel images are cubins (ELF files for EM_CUDA, whose headers
// must describe only bytes the image holds, since cuModuleLoadData is not
// told the size) or PTX; launches stay within CUDA's grid and block limits
// (a block of at most 1024 threads).
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_RUNTIME_PLANFILE_H
#define GENESIS_RUNTIME_PLANFILE_H

#include "runtime/plan/Plan_generated.h"
#include "runtime/support/DType.h"
#include "runtime/support/Sha256.h"

#include <array>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace genesis {

constexpr char kPlanMagic[4] = {'G', 'P', 'L', 'N'};
constexpr uint32_t kPlanContainerVersion = 1;
/// 2: the Attention step kind. 3: kernel signatures. 4: CUDA images for
/// several chips (KernelImage.compute_capability). 5: packed attention
/// steps (Attention.packed); plans of version 4 mean the same in 5.
constexpr uint32_t kPlanFormatVersion = 5;
/// The oldest format version this runtime loads: the first whose CUDA images
/// name their chip.
constexpr uint32_t kOldestPlanFormatVersion = 4;
/// The first format version with packed attention steps.
constexpr uint32_t kPackedAttentionFormatVersion = 5;

/// The first chip with programmatic dependent launch (griddepcontrol):
/// sm_90.
constexpr uint32_t kFirstProgrammaticLaunchChip = 90;
constexpr size_t kPlanContainerHeaderSize = 48;

/// Lowercase names as in Plan.fbs ("optimizer_state", "elf-so", "bias_gelu").
const char *roleName(plan::Role role);
const char *targetName(plan::Target target);
const char *imageFormatName(plan::ImageFormat format);
const char *epilogueName(plan::Epilogue epilogue);

DType toDType(plan::DType dtype);
plan::DType toPlanDType(DType dtype);

/// Parameter, optimizer_state and buffer: the tensors checkpoints hold.
bool isCheckpointedRole(plan::Role role);

/// A verified plan. Copyable; owns its payload.
class PlanFile {
public:
  /// Reads and verifies `path`.
  static PlanFile load(const std::string &path);
  /// Verifies a complete container (header and payload) held in memory;
  /// `name` stands for the file in error messages.
  static PlanFile fromBytes(const void *data, size_t size,
                            const std::string &name = "<memory>");

  const plan::Plan &plan() const { return *plan::GetPlan(payload_.data()); }
  /// The path it was loaded from, or the name given to fromBytes.
  const std::string &name() const { return name_; }
  /// SHA-256 of the payload, as stored in (and checked against) the header.
  const Sha256::Digest &contentHash() const { return contentHash_; }

  /// Convenience accessors for tensor `index` (< plan().tensors()->size()).
  std::string tensorName(uint32_t index) const;
  DType tensorDType(uint32_t index) const;
  std::vector<int64_t> tensorShape(uint32_t index) const;
  plan::Role tensorRole(uint32_t index) const;

private:
  PlanFile(std::string name, std::vector<uint8_t> payload,
           const Sha256::Digest &contentHash);

  std::string name_;
  std::vector<uint8_t> payload_;
  Sha256::Digest contentHash_;
};

/// A complete container (header with hash) around a FlatBuffers payload.
std::vector<uint8_t>
wrapPlanPayload(const uint8_t *payload, size_t size,
                uint32_t containerVersion = kPlanContainerVersion);

/// A short name of step `step` for timings and listings, e.g.
/// "kernel add_f32", "gemm 64x128x256 x4 bias_relu", "copy x -> t",
/// "fill t = 0". Needs a verified plan.
std::string stepName(const PlanFile &planFile, const plan::Step &step);

/// The tensors step `step` writes, once each: a launch's last outputs (its
/// kernel signature says how many), a GEMM's c, an attention's out and
/// logsumexp (forward) or gradients (backward), a copy's or fill's dst.
/// Needs a verified plan.
std::vector<uint32_t> stepWrites(const PlanFile &planFile,
                                 const plan::Step &step);

/// The chip a cubin's ELF header names (its compute capability, 90 for
/// sm_90) from the header's OS ABI byte and e_flags; std::nullopt for an
/// ELF layout of no known CUDA toolkit.
std::optional<uint32_t> cubinChip(uint8_t osAbi, uint32_t flags);

/// The image of a verified CUDA plan that a device of compute capability
/// `device` runs (see KernelImage in Plan.fbs): the cubin of the device's
/// major version with the highest capability not above the device's, else
/// the PTX of the highest capability not above it; with `ptxOnly`, only a
/// PTX. std::nullopt when no image fits.
std::optional<uint32_t> chooseCudaImage(const plan::Plan &plan, uint32_t device,
                                        bool ptxOnly = false);

/// The images of a CUDA plan for messages: "sm_80 cubin, sm_90 ptx".
std::string cudaImageList(const plan::Plan &plan);

/// Writes the header and provenance, the tensor table, the memory plan, the
/// kernel images and every function's steps, as `genesis-run --inspect`
/// prints them.
void describePlan(const PlanFile &planFile, std::ostream &os);

struct PlanHeader {
  uint32_t formatVersion = kPlanFormatVersion;
  std::string compilerVersion;
  std::string flags;
  plan::Target target = plan::Target::Cpu;
  std::string modelHash;
};

struct KernelLaunchDesc {
  uint32_t image = 0;
  std::string symbol;
  /// Inputs first, then the `outputs` tensors the kernel writes.
  std::vector<uint32_t> args;
  /// CUDA launch configuration; ignored on the CPU.
  std::array<uint32_t, 3> grid = {1, 1, 1};
  std::array<uint32_t, 3> block = {1, 1, 1};
  uint32_t sharedMemoryBytes = 0;
  /// CPU: the extent of the kernel's outermost loop, whose iterations are
  /// independent (>= 1; 1 runs the kernel as one piece).
  int64_t outerExtent = 1;
  uint32_t outputs = 0;
};

/// Field for field the Gemm table of Plan.fbs, which documents the meaning.
struct GemmDesc {
  uint32_t a = 0;
  uint32_t b = 0;
  uint32_t c = 0;
  std::optional<uint32_t> bias;
  /// The DGelu epilogue's GELU inputs (m x n).
  std::optional<uint32_t> aux;
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  int64_t batchCount = 1;
  int64_t strideA = 0;
  int64_t strideB = 0;
  int64_t strideC = 0;
  bool transposeA = false;
  bool transposeB = false;
  double alpha = 1.0;
  double beta = 0.0;
  plan::Epilogue epilogue = plan::Epilogue::None;
  bool allowTf32 = false;
};

/// The GemmDesc that a (verified) plan's Gemm step records.
GemmDesc gemmDescOf(const plan::Gemm &gemm);

/// Field for field the Attention table of Plan.fbs, which documents the
/// meaning; the four gradient fields are set together, for the backward.
struct AttentionDesc {
  uint32_t query = 0;
  uint32_t key = 0;
  uint32_t value = 0;
  uint32_t out = 0;
  uint32_t logSumExp = 0;
  std::optional<uint32_t> outGrad;
  std::optional<uint32_t> queryGrad;
  std::optional<uint32_t> keyGrad;
  std::optional<uint32_t> valueGrad;
  int64_t batch = 0;
  int64_t queryHeads = 0;
  int64_t kvHeads = 0;
  int64_t queryLength = 0;
  int64_t kvLength = 0;
  int64_t headDim = 0;
  bool causal = false;
  double scale = 1.0;
  /// Plan.fbs's packed layout: query, key and value (and their gradients)
  /// are one token-major tensor.
  bool packed = false;

  bool backward() const { return outGrad.has_value(); }
};

/// The AttentionDesc that a (verified) plan's Attention step records.
AttentionDesc attentionDescOf(const plan::Attention &attention);

/// Assembles a plan in memory. The builder records what it is told and
/// checks nothing, so that tests can build invalid plans too; write() and
/// PlanFile::fromBytes(bytes()) apply the loader's checks. Every scalar field
/// is stored even when it equals its default, so a test can mutate any of
/// them in place (Plan_generated.h has mutators).
class PlanBuilder {
public:
  explicit PlanBuilder(PlanHeader header);

  void setArena(uint64_t bytes, uint64_t alignment = 64);
  /// Reserves [offset, offset + bytes) of the arena as the library-call
  /// workspace (see MemoryPlan in Plan.fbs).
  void setWorkspace(uint64_t offset, uint64_t bytes);
  /// An external tensor of any role but temporary; returns its index.
  uint32_t addTensor(const std::string &name, DType dtype,
                     std::vector<int64_t> shape, plan::Role role);
  /// A temporary at `arenaOffset` in the arena; returns its index.
  uint32_t addTemporary(const std::string &name, DType dtype,
                        std::vector<int64_t> shape, uint64_t arenaOffset);
  /// A kernel image for the plan's target; returns its index. CUDA images
  /// name their chip (`computeCapability`, 90 for sm_90; 0 on the CPU) and
  /// whether their kernels wait for prerequisite grids (Plan.fbs).
  uint32_t addImage(plan::ImageFormat format, std::vector<uint8_t> bytes,
                    uint32_t computeCapability = 0,
                    bool waitsForPrerequisiteGrids = false);
  /// Returns the function's index for adding steps.
  uint32_t addFunction(const std::string &name, std::vector<uint32_t> inputs,
                       std::vector<uint32_t> outputs, bool advancesStep = false,
                       uint64_t rngOffsetAdvance = 0);

  /// The first launch of a symbol records its signature (KernelSignature in
  /// Plan.fbs), which every later launch of it must match.
  void addKernelLaunch(uint32_t function, KernelLaunchDesc launch,
                       const std::string &location = "");
  void addGemm(uint32_t function, const GemmDesc &gemm,
               const std::string &location = "");
  void addAttention(uint32_t function, const AttentionDesc &attention,
                    const std::string &location = "");
  void addCopy(uint32_t function, uint32_t src, uint32_t dst, uint64_t bytes,
               const std::string &location = "");
  void addFill(uint32_t function, uint32_t dst, double value,
               const std::string &location = "");

  /// The FlatBuffers payload alone.
  std::vector<uint8_t> payload() const;
  /// The complete file contents.
  std::vector<uint8_t> bytes() const;
  /// Verifies the plan as PlanFile::load would, then writes it atomically.
  void write(const std::string &path) const;

private:
  struct TensorEntry {
    std::string name;
    DType dtype;
    std::vector<int64_t> shape;
    plan::Role role;
    plan::Storage storage;
    uint64_t arenaOffset;
  };
  struct StepEntry {
    plan::StepKind kind;
    KernelLaunchDesc launch;
    GemmDesc gemm;
    AttentionDesc attention;
    uint32_t src = 0;
    uint32_t dst = 0;
    uint64_t copyBytes = 0;
    double fillValue = 0;
    std::string location;
  };
  struct FunctionEntry {
    std::string name;
    std::vector<uint32_t> inputs;
    std::vector<uint32_t> outputs;
    bool advancesStep;
    uint64_t rngOffsetAdvance;
    std::vector<StepEntry> steps;
  };
  struct ImageEntry {
    plan::ImageFormat format;
    std::vector<uint8_t> bytes;
    uint32_t computeCapability;
    bool waitsForPrerequisiteGrids;
  };
  struct KernelSignatureEntry {
    std::string symbol;
    std::vector<uint64_t> argBytes;
    uint32_t outputs;
  };

  StepEntry &addStep(uint32_t function, plan::StepKind kind,
                     const std::string &location);
  /// numel * dtype size in unsigned arithmetic: an invalid shape gives a
  /// wrong size, which the loader reports, rather than undefined behaviour.
  static uint64_t tensorBytes(const TensorEntry &entry);

  PlanHeader header_;
  uint64_t arenaBytes_ = 0;
  uint64_t arenaAlignment_ = 64;
  uint64_t workspaceOffset_ = 0;
  uint64_t workspaceBytes_ = 0;
  std::vector<TensorEntry> tensors_;
  std::vector<ImageEntry> images_;
  std::vector<FunctionEntry> functions_;
  std::vector<KernelSignatureEntry> kernels_;
};

} // namespace genesis

#endif // GENESIS_RUNTIME_PLANFILE_H
