//===- PlanFile.cpp - Loading, verifying and building .gplan files --------===//

#include "runtime/plan/PlanFile.h"
#include "runtime/formats/AtomicFile.h"
#include "runtime/plan/AttentionStep.h"
#include "runtime/support/Error.h"
#include "runtime/support/HostArray.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <ostream>
#include <sstream>
#include <sys/stat.h>

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "the container header is read as little-endian");

namespace genesis {

namespace {

// The FlatBuffers Verifier requires buffers strictly below this size.
constexpr uint64_t kMaxPayloadSize = FLATBUFFERS_MAX_BUFFER_SIZE - 1;
// Larger alignments would need more than a page of padding per tensor.
constexpr uint64_t kMaxArenaAlignment = 4096;

template <typename Enum> bool inRange(Enum value) {
  return static_cast<unsigned>(value) <= static_cast<unsigned>(Enum::MAX);
}

std::string planWhere(const std::string &name) {
  return "plan file '" + name + "'";
}

uint32_t readU32(const uint8_t *bytes) {
  uint32_t value;
  std::memcpy(&value, bytes, sizeof(value));
  return value;
}

uint64_t readU64(const uint8_t *bytes) {
  uint64_t value;
  std::memcpy(&value, bytes, sizeof(value));
  return value;
}

struct ContainerHeader {
  uint64_t payloadSize;
  Sha256::Digest hash;
};

/// Checks the container header; `bytes` holds the first min(fileSize, 48)
/// bytes of a file of `fileSize` bytes.
ContainerHeader parseContainerHeader(const uint8_t *bytes, uint64_t fileSize,
                                     const std::string &where) {
  if (fileSize < sizeof(kPlanMagic) ||
      std::memcmp(bytes, kPlanMagic, sizeof(kPlanMagic)) != 0)
    throw Error(where + ": bad magic: not a .gplan file (expected \"GPLN\")");
  if (fileSize < kPlanContainerHeaderSize)
    throw Error(where + ": truncated: file is " + std::to_string(fileSize) +
                " bytes, shorter than the " +
                std::to_string(kPlanContainerHeaderSize) +
                "-byte container header");
  uint32_t version = readU32(bytes + 4);
  if (version > kPlanContainerVersion)
    throw Error(where + ": container version " + std::to_string(version) +
                " is newer than this runtime supports (version " +
                std::to_string(kPlanContainerVersion) + ")");
  if (version == 0)
    throw Error(where + ": container version 0 is not a valid version");

  ContainerHeader header;
  header.payloadSize = readU64(bytes + 8);
  std::memcpy(header.hash.data(), bytes + 16, header.hash.size());
  uint64_t available = fileSize - kPlanContainerHeaderSize;
  if (header.payloadSize > kMaxPayloadSize)
    throw Error(where + ": payload size " + std::to_string(header.payloadSize) +
                " exceeds the FlatBuffers limit of " +
                std::to_string(kMaxPayloadSize) + " bytes");
  if (available < header.payloadSize)
    throw Error(where + ": truncated: the header promises " +
                std::to_string(header.payloadSize) +
                " payload bytes but the file holds " +
                std::to_string(available));
  if (available > header.payloadSize)
    throw Error(where + ": " + std::to_string(available - header.payloadSize) +
                " trailing bytes after the " +
                std::to_string(header.payloadSize) + "-byte payload");
  return header;
}

std::string rawShapeString(const flatbuffers::Vector<int64_t> &shape) {
  return shapeString(std::vector<int64_t>(shape.begin(), shape.end()));
}

std::string quoted(const flatbuffers::String *text) {
  return "'" + text->str() + "'";
}

/// Proves every invariant the runtime relies on, in an order where each
/// check may assume the earlier ones (tensor steps use verified tensors).
class PlanChecker {
public:
  PlanChecker(const plan::Plan &plan, std::string where)
      : plan_(plan), where_(std::move(where)) {}

  void check() {
    checkHeader();
    checkMemoryPlan();
    checkTensors();
    checkImages();
    checkKernelSignatures();
    checkFunctions();
  }

private:
  enum Access : uint8_t { kNone = 0, kRead = 1, kWrite = 2 };

  /// Symbol -> its entry of the plan's kernel table.
  std::map<std::string, const plan::KernelSignature *> signatures_;

  [[noreturn]] void fail(const std::string &field, const std::string &problem) {
    throw Error(where_ + ": " + field + ": " + problem);
  }

  const plan::Tensor &tensor(uint32_t index) const {
    return *plan_.tensors()->Get(index);
  }

  void checkHeader() {
    const plan::Header &header = *plan_.header();
    if (header.format_version() > kPlanFormatVersion)
      fail("header.format_version",
           "format version " + std::to_string(header.format_version()) +
               " is newer than this runtime supports (version " +
               std::to_string(kPlanFormatVersion) + ")");
    if (header.format_version() == 0)
      fail("header.format_version", "0 is not a valid version");
    if (header.format_version() < 3)
      fail("header.format_version",
           "format version " + std::to_string(header.format_version()) +
               " predates the kernel signatures of version 3 that this "
               "runtime checks launches against; recompile the plan");
    if (header.format_version() < kOldestPlanFormatVersion)
      fail("header.format_version",
           "format version " + std::to_string(header.format_version()) +
               " predates version " + std::to_string(kOldestPlanFormatVersion) +
               ", whose CUDA images name their chip; recompile the plan");
    if (!inRange(header.target()))
      fail("header.target", std::to_string(unsigned(header.target())) +
                                " is not a valid target");
  }

  void checkMemoryPlan() {
    uint64_t alignment = plan_.memory()->alignment();
    if (alignment == 0 || (alignment & (alignment - 1)) != 0 ||
        alignment > kMaxArenaAlignment)
      fail("memory.alignment", std::to_string(alignment) +
                                   " is not a power of two up to " +
                                   std::to_string(kMaxArenaAlignment));
    uint64_t offset = plan_.memory()->workspace_offset();
    uint64_t bytes = plan_.memory()->workspace_bytes(), end;
    if (bytes == 0)
      return;
    if (__builtin_add_overflow(offset, bytes, &end) ||
        end > plan_.memory()->arena_bytes())
      fail("memory.workspace",
           "[" + std::to_string(offset) + ", " + std::to_string(offset) +
               " + " + std::to_string(bytes) + ") exceeds arena_bytes " +
               std::to_string(plan_.memory()->arena_bytes()));
    if (offset % alignment != 0)
      fail("memory.workspace", "offset " + std::to_string(offset) +
                                   " is not a multiple of the alignment " +
                                   std::to_string(alignment));
  }

  void checkTensors() {
    std::map<std::string, uint32_t> seen;
    const auto &tensors = *plan_.tensors();
    for (uint32_t i = 0; i < tensors.size(); ++i) {
      const plan::Tensor &entry = *tensors.Get(i);
      std::string field = "tensors[" + std::to_string(i) + "]";
      if (entry.name()->size() == 0)
        fail(field, "name is empty");
      field += " " + quoted(entry.name());
      auto [previous, inserted] = seen.emplace(entry.name()->str(), i);
      if (!inserted)
        fail(field, "duplicate name (also tensors[" +
                        std::to_string(previous->second) + "])");
      checkTensor(entry, field);
    }
  }

  void checkTensor(const plan::Tensor &entry, const std::string &field) {
    if (!inRange(entry.dtype()))
      fail(field, "dtype " + std::to_string(unsigned(entry.dtype())) +
                      " is not a valid dtype");
    if (!inRange(entry.role()))
      fail(field, "role " + std::to_string(unsigned(entry.role())) +
                      " is not a valid role");
    if (!inRange(entry.storage()))
      fail(field, "storage " + std::to_string(unsigned(entry.storage())) +
                      " is not a valid storage");

    DType dtype = toDType(entry.dtype());
    const auto &shape = *entry.shape();
    // The FlatBuffers 2.0 Verifier checks the alignment of a vector's length
    // but not of its elements; the payload itself is 16-byte aligned. (The
    // builder does not align empty vectors, which are never read.)
    if (shape.size() != 0 &&
        reinterpret_cast<uintptr_t>(shape.data()) % alignof(int64_t) != 0)
      fail(field, "shape vector is not 8-byte aligned");
    uint64_t bytes = dtypeSize(dtype);
    for (uint32_t d = 0; d < shape.size(); ++d) {
      if (shape[d] < 0)
        fail(field, "shape " + rawShapeString(shape) + ": dimension " +
                        std::to_string(d) + " is negative");
      if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(shape[d]),
                                 &bytes))
        fail(field, "byte size of " + std::string(dtypeName(dtype)) +
                        rawShapeString(shape) + " overflows");
    }
    // Element counts must stay representable as int64_t (HostArray's numel).
    if (bytes > uint64_t(INT64_MAX))
      fail(field, "byte size of " + std::string(dtypeName(dtype)) +
                      rawShapeString(shape) + " overflows");
    if (entry.bytes() != bytes)
      fail(field, "bytes is " + std::to_string(entry.bytes()) + " but " +
                      dtypeName(dtype) + rawShapeString(shape) + " needs " +
                      std::to_string(bytes));

    plan::Role role = entry.role();
    bool inArena = entry.storage() == plan::Storage::Arena;
    if ((role == plan::Role::Temporary) != inArena)
      fail(field, std::string("role ") + roleName(role) + " needs " +
                      (inArena ? "external" : "arena") + " storage");
    if (inArena) {
      uint64_t offset = entry.arena_offset();
      uint64_t arenaBytes = plan_.memory()->arena_bytes();
      uint64_t end;
      if (__builtin_add_overflow(offset, bytes, &end) || end > arenaBytes)
        fail(field, "arena range [" + std::to_string(offset) + ", " +
                        std::to_string(offset) + " + " + std::to_string(bytes) +
                        ") exceeds arena_bytes " + std::to_string(arenaBytes));
      // Element alignment too, as kernels and BLAS use typed accesses.
      uint64_t alignment =
          std::max<uint64_t>(plan_.memory()->alignment(), dtypeSize(dtype));
      if (offset % alignment != 0)
        fail(field, "arena_offset " + std::to_string(offset) +
                        " is not a multiple of the alignment " +
                        std::to_string(alignment));
      uint64_t workspace = plan_.memory()->workspace_offset();
      uint64_t workspaceEnd = workspace + plan_.memory()->workspace_bytes();
      if (bytes != 0 && offset < workspaceEnd && workspace < end)
        fail(field, "arena range [" + std::to_string(offset) + ", " +
                        std::to_string(end) + ") overlaps the workspace [" +
                        std::to_string(workspace) + ", " +
                        std::to_string(workspaceEnd) + ")");
    } else if (entry.arena_offset() != 0) {
      fail(field, "external tensor has arena_offset " +
                      std::to_string(entry.arena_offset()));
    }

    std::string type = dtypeName(dtype) + rawShapeString(shape);
    if (role == plan::Role::RngSeed && type != "i64[2]")
      fail(field,
           "an rng_seed tensor must be i64[2] (seed, offset), not " + type);
    if (role == plan::Role::Step && type != "i64[]")
      fail(field, "a step tensor must be i64[], not " + type);
    if (role == plan::Role::Lr && type != "f32[]" && type != "f64[]")
      fail(field, "an lr tensor must be f32[] or f64[], not " + type);
  }

  void checkImages() {
    plan::Target target = plan_.header()->target();
    const auto &images = *plan_.images();
    for (uint32_t i = 0; i < images.size(); ++i) {
      const plan::KernelImage &image = *images.Get(i);
      std::string field = "images[" + std::to_string(i) + "]";
      if (image.target() != target)
        fail(field, "target " +
                        (inRange(image.target())
                             ? std::string(targetName(image.target()))
                             : std::to_string(unsigned(image.target()))) +
                        " differs from the plan's target " +
                        targetName(target));
      if (!inRange(image.format()))
        fail(field, "format " + std::to_string(unsigned(image.format())) +
                        " is not a valid image format");
      bool cpuImage = image.format() == plan::ImageFormat::ElfSharedObject;
      if (cpuImage != (target == plan::Target::Cpu))
        fail(field, std::string("format ") + imageFormatName(image.format()) +
                        " cannot run on target " + targetName(target));
      if (image.bytes()->size() == 0)
        fail(field, "image is empty");
      uint32_t capability = image.compute_capability();
      if (cpuImage && capability != 0)
        fail(field, "a CPU image has no compute capability, got " +
                        std::to_string(capability));
      if (!cpuImage && (capability < 10 || capability > 255))
        fail(field, "compute capability " + std::to_string(capability) +
                        " is not a chip's (major * 10 + minor, 10 to 255)");
      if (image.format() == plan::ImageFormat::Cubin)
        checkCubin(*image.bytes(), capability, field);
      for (uint32_t j = 0; j < i && !cpuImage; ++j)
        if (images.Get(j)->format() == image.format() &&
            images.Get(j)->compute_capability() == capability)
          fail(field, std::string("a second ") +
                          imageFormatName(image.format()) + " for sm_" +
                          std::to_string(capability) + " (images[" +
                          std::to_string(j) + "])");
    }
  }

  /// cuModuleLoadData reads a cubin without being told its size, trusting
  /// its ELF headers: they must describe only bytes the image holds. The
  /// chip the headers name must be the one the plan records.
  void checkCubin(const flatbuffers::Vector<uint8_t> &image,
                  uint32_t capability, const std::string &field) {
    constexpr uint64_t kHeaderBytes = 64, kSectionHeaderBytes = 64,
                       kProgramHeaderBytes = 56;
    constexpr uint8_t kElfMagic[4] = {0x7f, 'E', 'L', 'F'};
    constexpr uint16_t kMachineCuda = 190;
    constexpr uint32_t kSectionWithoutBytes = 8; // SHT_NOBITS
    const uint8_t *bytes = image.data();
    uint64_t size = image.size();
    auto u16 = [&](uint64_t at) {
      uint16_t value;
      std::memcpy(&value, bytes + at, sizeof(value));
      return value;
    };
    auto u32 = [&](uint64_t at) { return readU32(bytes + at); };
    auto u64 = [&](uint64_t at) { return readU64(bytes + at); };
    // Whether [offset, offset + count * entry) lies inside the image.
    auto inside = [&](uint64_t offset, uint64_t count, uint64_t entry) {
      uint64_t length, end;
      return !__builtin_mul_overflow(count, entry, &length) &&
             !__builtin_add_overflow(offset, length, &end) && end <= size;
    };

    if (size < kHeaderBytes || std::memcmp(bytes, kElfMagic, 4) != 0 ||
        bytes[4] != 2 || bytes[5] != 1)
      fail(field, "a cubin must be a little-endian 64-bit ELF file");
    if (u16(18) != kMachineCuda)
      fail(field,
           "ELF machine " + std::to_string(u16(18)) + " is not CUDA (190)");
    if (std::optional<uint32_t> chip = cubinChip(bytes[7], u32(48));
        chip && *chip != capability)
      fail(field, "the cubin is for sm_" + std::to_string(*chip) +
                      ", but the plan records sm_" +
                      std::to_string(capability));
    uint64_t sectionsAt = u64(40), programsAt = u64(32);
    uint16_t sectionCount = u16(60), programCount = u16(56);
    if (sectionCount == 0 && sectionsAt != 0)
      fail(field, "ELF extended section numbering is not supported");
    if (sectionCount != 0 &&
        (u16(58) != kSectionHeaderBytes ||
         !inside(sectionsAt, sectionCount, kSectionHeaderBytes)))
      fail(field, "ELF section headers lie outside the " +
                      std::to_string(size) + "-byte image");
    if (programCount != 0 &&
        (u16(54) != kProgramHeaderBytes ||
         !inside(programsAt, programCount, kProgramHeaderBytes)))
      fail(field, "ELF program headers lie outside the " +
                      std::to_string(size) + "-byte image");
    for (uint16_t i = 0; i < sectionCount; ++i) {
      uint64_t header = sectionsAt + i * kSectionHeaderBytes;
      if (u32(header + 4) != kSectionWithoutBytes &&
          !inside(u64(header + 24), u64(header + 32), 1))
        fail(field, "ELF section " + std::to_string(i) + " lies outside the " +
                        std::to_string(size) + "-byte image");
    }
    for (uint16_t i = 0; i < programCount; ++i) {
      uint64_t header = programsAt + i * kProgramHeaderBytes;
      if (!inside(u64(header + 8), u64(header + 32), 1))
        fail(field, "ELF segment " + std::to_string(i) + " lies outside the " +
                        std::to_string(size) + "-byte image");
    }
  }

  void checkKernelSignatures() {
    if (!plan_.kernels())
      fail("kernels", "the kernel table is missing");
    const auto &kernels = *plan_.kernels();
    for (uint32_t i = 0; i < kernels.size(); ++i) {
      const plan::KernelSignature &kernel = *kernels.Get(i);
      std::string field = "kernels[" + std::to_string(i) + "]";
      if (kernel.symbol()->size() == 0)
        fail(field, "symbol is empty");
      field += " " + quoted(kernel.symbol());
      auto [previous, inserted] =
          signatures_.emplace(kernel.symbol()->str(), &kernel);
      if (!inserted)
        fail(field, "a second signature for the same symbol");
      if (kernel.outputs() > kernel.arg_bytes()->size())
        fail(field, std::to_string(kernel.outputs()) + " outputs but only " +
                        std::to_string(kernel.arg_bytes()->size()) +
                        " arguments");
    }
  }

  void checkFunctions() {
    std::map<std::string, uint32_t> seen;
    const auto &functions = *plan_.functions();
    for (uint32_t i = 0; i < functions.size(); ++i) {
      const plan::Function &function = *functions.Get(i);
      std::string field = "functions[" + std::to_string(i) + "]";
      if (function.name()->size() == 0)
        fail(field, "name is empty");
      field += " " + quoted(function.name());
      auto [previous, inserted] = seen.emplace(function.name()->str(), i);
      if (!inserted)
        fail(field, "duplicate name (also functions[" +
                        std::to_string(previous->second) + "])");
      checkFunction(function, field);
    }
  }

  uint32_t checkIndex(const std::string &field, uint32_t index) {
    uint32_t count = plan_.tensors()->size();
    if (index >= count)
      fail(field, "tensor index " + std::to_string(index) +
                      " is out of range (the plan has " +
                      std::to_string(count) + " tensors)");
    return index;
  }

  void checkFunction(const plan::Function &function, const std::string &field) {
    std::vector<uint8_t> access(plan_.tensors()->size(), kNone);
    for (uint32_t i = 0; i < access.size(); ++i)
      if (tensor(i).role() == plan::Role::Temporary)
        access[i] = kRead | kWrite;

    const auto &inputs = *function.inputs();
    for (uint32_t i = 0; i < inputs.size(); ++i) {
      std::string inputField = field + ".inputs[" + std::to_string(i) + "]";
      uint32_t index = checkIndex(inputField, inputs[i]);
      const plan::Tensor &entry = tensor(index);
      inputField += " " + quoted(entry.name());
      switch (entry.role()) {
      case plan::Role::Output:
      case plan::Role::Temporary:
        fail(inputField, std::string("role ") + roleName(entry.role()) +
                             " cannot be a function input");
      default:
        break;
      }
      if (access[index] & kRead)
        fail(inputField, "listed twice");
      access[index] |= kRead;
    }

    const auto &outputs = *function.outputs();
    for (uint32_t i = 0; i < outputs.size(); ++i) {
      std::string outputField = field + ".outputs[" + std::to_string(i) + "]";
      uint32_t index = checkIndex(outputField, outputs[i]);
      const plan::Tensor &entry = tensor(index);
      outputField += " " + quoted(entry.name());
      switch (entry.role()) {
      case plan::Role::Temporary:
      case plan::Role::RngSeed:
      case plan::Role::Lr:
      case plan::Role::Step:
        fail(outputField, std::string("role ") + roleName(entry.role()) +
                              " cannot be a function output");
      case plan::Role::Input:
        if (!(access[index] & kRead))
          fail(outputField, "an input tensor updated in place must also be "
                            "an input of the function");
        break;
      default:
        break;
      }
      if (access[index] & kWrite)
        fail(outputField, "listed twice");
      access[index] |= kWrite;
    }

    const auto &steps = *function.steps();
    for (uint32_t i = 0; i < steps.size(); ++i) {
      const plan::Step &step = *steps.Get(i);
      std::string stepField = field + ".steps[" + std::to_string(i) + "]";
      if (step.location() && step.location()->size() != 0)
        stepField += " (" + step.location()->str() + ")";
      checkStep(step, stepField, access);
    }
  }

  /// Checks that `index` is a tensor the step may read or, when `write`, also
  /// write; `operand` names the field ("a", "args[2]").
  const plan::Tensor &checkOperand(const std::string &field,
                                   const std::string &operand, uint32_t index,
                                   const std::vector<uint8_t> &access,
                                   bool write) {
    checkIndex(field + "." + operand, index);
    const plan::Tensor &entry = tensor(index);
    // Outputs may be read too (a later step reads what an earlier one wrote).
    bool allowed = write ? access[index] & kWrite : access[index] != kNone;
    if (!allowed)
      fail(field + "." + operand + " " + quoted(entry.name()),
           write ? "the step writes a tensor that is neither a temporary nor "
                   "an output of the function"
                 : "the step reads a tensor that is neither a temporary nor "
                   "an input or output of the function");
    return entry;
  }

  void checkStep(const plan::Step &step, const std::string &field,
                 const std::vector<uint8_t> &access) {
    switch (step.kind_type()) {
    case plan::StepKind::KernelLaunch:
      return checkKernelLaunch(*step.kind_as_KernelLaunch(), field, access);
    case plan::StepKind::Gemm:
      return checkGemm(*step.kind_as_Gemm(), field, access);
    case plan::StepKind::Attention:
      return detail::checkAttention(
          plan_, *step.kind_as_Attention(), field,
          [&](const char *operand, uint32_t index,
              bool write) -> const plan::Tensor & {
            return checkOperand(field, operand, index, access, write);
          },
          [&](const std::string &at, const std::string &message) {
            fail(at, message);
          });
    case plan::StepKind::Copy: {
      const plan::Copy &copy = *step.kind_as_Copy();
      const plan::Tensor &src =
          checkOperand(field, "src", copy.src(), access, false);
      const plan::Tensor &dst =
          checkOperand(field, "dst", copy.dst(), access, true);
      for (const plan::Tensor *entry : {&src, &dst})
        if (copy.bytes() > entry->bytes())
          fail(field, "copy of " + std::to_string(copy.bytes()) +
                          " bytes exceeds " + quoted(entry->name()) + " (" +
                          std::to_string(entry->bytes()) + " bytes)");
      return;
    }
    case plan::StepKind::Fill: {
      const plan::Fill &fill = *step.kind_as_Fill();
      const plan::Tensor &dst =
          checkOperand(field, "dst", fill.dst(), access, true);
      checkFillValue(fill.value(), toDType(dst.dtype()), field);
      return;
    }
    default:
      fail(field, "step kind " + std::to_string(unsigned(step.kind_type())) +
                      " is not a valid step kind");
    }
  }

  void checkFillValue(double value, DType dtype, const std::string &field) {
    bool integral = std::trunc(value) == value;
    bool representable = true;
    if (dtype == DType::I1)
      representable = value == 0 || value == 1;
    else if (dtype == DType::I32)
      representable = integral && value >= INT32_MIN && value <= INT32_MAX;
    else if (dtype == DType::I64)
      representable = integral && value >= -0x1p63 && value < 0x1p63;
    if (!representable) {
      std::ostringstream text;
      text << "fill value " << value << " is not representable in "
           << dtypeName(dtype);
      fail(field, text.str());
    }
  }

  void checkKernelLaunch(const plan::KernelLaunch &launch,
                         const std::string &field,
                         const std::vector<uint8_t> &access) {
    uint32_t imageCount = plan_.images()->size();
    if (plan_.header()->target() == plan::Target::Cuda && launch.image() != 0)
      fail(field + ".image",
           "a CUDA launch names image 0 (the images are one module's builds "
           "for different chips), not " +
               std::to_string(launch.image()));
    if (launch.image() >= imageCount)
      fail(field + ".image", "image index " + std::to_string(launch.image()) +
                                 " is out of range (the plan has " +
                                 std::to_string(imageCount) + " images)");
    if (launch.symbol()->size() == 0)
      fail(field + ".symbol", "symbol is empty");
    if (launch.outer_extent() < 1)
      fail(field + ".outer_extent", "outer extent " +
                                        std::to_string(launch.outer_extent()) +
                                        " is not positive");
    auto signature = signatures_.find(launch.symbol()->str());
    if (signature == signatures_.end())
      fail(field + ".symbol", "kernel " + quoted(launch.symbol()) +
                                  " has no signature in the plan's kernel "
                                  "table");
    const plan::KernelSignature &kernel = *signature->second;
    const auto &args = *launch.args();
    const auto &argBytes = *kernel.arg_bytes();
    if (args.size() != argBytes.size())
      fail(field + ".args", std::to_string(args.size()) +
                                " arguments, but kernel " +
                                quoted(launch.symbol()) + " takes " +
                                std::to_string(argBytes.size()));
    uint32_t firstOutput = args.size() - kernel.outputs();
    for (uint32_t i = 0; i < args.size(); ++i) {
      std::string operand = "args[" + std::to_string(i) + "]";
      const plan::Tensor &entry =
          checkOperand(field, operand, args[i], access, i >= firstOutput);
      if (entry.bytes() != argBytes[i])
        fail(field + "." + operand + " " + quoted(entry.name()),
             "tensor of " + std::to_string(entry.bytes()) +
                 " bytes, but kernel " + quoted(launch.symbol()) + " takes " +
                 std::to_string(argBytes[i]) + " bytes there");
    }
    if (plan_.header()->target() != plan::Target::Cuda)
      return;
    for (const auto &[name, dims] :
         {std::pair{"grid", launch.grid()}, std::pair{"block", launch.block()}})
      if (!dims || dims->x() == 0 || dims->y() == 0 || dims->z() == 0)
        fail(field + "." + name,
             "a CUDA launch needs three non-zero dimensions");
    const plan::Dim3 &grid = *launch.grid();
    const plan::Dim3 &block = *launch.block();
    uint64_t threads = uint64_t(block.x()) * block.y() * block.z();
    if (block.x() > 1024 || block.y() > 1024 || block.z() > 64 ||
        threads > 1024)
      fail(field + ".block", "block " + dim3String(block) + " has " +
                                 std::to_string(threads) +
                                 " threads; CUDA allows at most 1024 (x and "
                                 "y up to 1024, z up to 64)");
    if (grid.x() > uint32_t(INT32_MAX) || grid.y() > 65535 || grid.z() > 65535)
      fail(field + ".grid", "grid " + dim3String(grid) +
                                " exceeds CUDA's limits (x below 2^31, y and "
                                "z up to 65535)");
  }

  static std::string dim3String(const plan::Dim3 &dims) {
    return "(" + std::to_string(dims.x()) + ", " + std::to_string(dims.y()) +
           ", " + std::to_string(dims.z()) + ")";
  }

  void checkGemm(const plan::Gemm &gemm, const std::string &field,
                 const std::vector<uint8_t> &access) {
    const plan::Tensor &a = checkOperand(field, "a", gemm.a(), access, false);
    const plan::Tensor &b = checkOperand(field, "b", gemm.b(), access, false);
    const plan::Tensor &c = checkOperand(field, "c", gemm.c(), access, true);
    const plan::Tensor *bias =
        gemm.bias() ? &checkOperand(field, "bias", *gemm.bias(), access, false)
                    : nullptr;
    const plan::Tensor *aux =
        gemm.aux() ? &checkOperand(field, "aux", *gemm.aux(), access, false)
                   : nullptr;

    DType dtype = toDType(a.dtype());
    // cuBLASLt also multiplies 16-bit floats (accumulating in f32).
    bool onCuda = plan_.header()->target() == plan::Target::Cuda;
    bool supported = dtype == DType::F32 || dtype == DType::F64 ||
                     (onCuda && (dtype == DType::F16 || dtype == DType::BF16));
    if (!supported)
      fail(field + ".a",
           std::string("gemm supports ") +
               (onCuda ? "f32, f64, f16 and bf16" : "f32 and f64") + ", not " +
               dtypeName(dtype));
    for (const auto &[name, entry] :
         {std::pair{"b", &b}, std::pair{"c", &c}, std::pair{"bias", bias},
          std::pair{"aux", aux}})
      if (entry && toDType(entry->dtype()) != dtype)
        fail(field + "." + name,
             std::string("dtype ") + dtypeName(toDType(entry->dtype())) +
                 " differs from a's dtype " + dtypeName(dtype));
    for (const auto &[name, index] :
         {std::pair{"a", gemm.a()}, std::pair{"b", gemm.b()}})
      if (index == gemm.c())
        fail(field + ".c",
             std::string("c must not be the same tensor as ") + name);
    if (bias && *gemm.bias() == gemm.c())
      fail(field + ".c", "c must not be the same tensor as bias");
    if (aux && *gemm.aux() == gemm.c())
      fail(field + ".c", "c must not be the same tensor as aux");

    for (const auto &[name, value] :
         {std::pair{"m", gemm.m()}, std::pair{"n", gemm.n()},
          std::pair{"k", gemm.k()},
          std::pair{"batch_count", gemm.batch_count()}})
      // CBLAS takes dimensions as int.
      if (value < 1 || value > INT_MAX)
        fail(field + "." + name, std::to_string(value) + " is not in [1, " +
                                     std::to_string(INT_MAX) + "]");
    for (const auto &[name, value] : {std::pair{"stride_a", gemm.stride_a()},
                                      std::pair{"stride_b", gemm.stride_b()},
                                      std::pair{"stride_c", gemm.stride_c()}})
      if (value < 0)
        fail(field + "." + name, std::to_string(value) + " is negative");
    if (!inRange(gemm.epilogue()))
      fail(field + ".epilogue", std::to_string(unsigned(gemm.epilogue())) +
                                    " is not a valid epilogue");

    int64_t m = gemm.m(), n = gemm.n(), k = gemm.k();
    checkGemmOperand(field, "a", a, gemm.transpose_a() ? k : m,
                     gemm.transpose_a() ? m : k, gemm.stride_a(),
                     gemm.batch_count());
    checkGemmOperand(field, "b", b, gemm.transpose_b() ? n : k,
                     gemm.transpose_b() ? k : n, gemm.stride_b(),
                     gemm.batch_count());
    checkGemmOperand(field, "c", c, m, n, gemm.stride_c(), gemm.batch_count());
    // m * n cannot overflow: both fit in int.
    if (gemm.batch_count() > 1 && gemm.stride_c() < m * n)
      fail(field + ".stride_c",
           std::to_string(gemm.stride_c()) + " is less than m * n = " +
               std::to_string(m * n) + ", so the batches of c would overlap");

    plan::Epilogue epilogue = gemm.epilogue();
    bool addsBias = epilogue == plan::Epilogue::Bias ||
                    epilogue == plan::Epilogue::BiasRelu ||
                    epilogue == plan::Epilogue::BiasGelu;
    if (addsBias && !bias)
      fail(field + ".bias",
           std::string("epilogue ") + epilogueName(epilogue) + " needs a bias");
    if (!addsBias && bias)
      fail(field + ".bias", std::string("a bias is given but epilogue ") +
                                epilogueName(epilogue) + " adds none");
    bool readsAux = epilogue == plan::Epilogue::DGelu;
    if (readsAux != (aux != nullptr))
      fail(field + ".aux", std::string("epilogue ") + epilogueName(epilogue) +
                               (readsAux ? " needs" : " takes no") +
                               " aux tensor");
    if (aux) {
      if (gemm.batch_count() != 1)
        fail(field + ".batch_count", "epilogue dgelu takes one batch, not " +
                                         std::to_string(gemm.batch_count()));
      checkGemmOperand(field, "aux", *aux, m, n, m * n, 1);
    }
    if (bias) {
      int64_t numel = static_cast<int64_t>(bias->bytes() / dtypeSize(dtype));
      if (numel != n)
        fail(field + ".bias", quoted(bias->name()) + " has " +
                                  std::to_string(numel) +
                                  " elements but n is " + std::to_string(n));
    }
  }

  /// A row-major operand of `rows` x `cols` per batch: its tensor's rows must
  /// be `cols` long and hold every batch.
  void checkGemmOperand(const std::string &field, const char *name,
                        const plan::Tensor &entry, int64_t rows, int64_t cols,
                        int64_t stride, int64_t batchCount) {
    const auto &shape = *entry.shape();
    std::string type =
        std::string(dtypeName(toDType(entry.dtype()))) + rawShapeString(shape);
    if (shape.size() == 0 || shape[shape.size() - 1] != cols)
      fail(field + "." + name, quoted(entry.name()) + " is " + type +
                                   " but its rows must hold " +
                                   std::to_string(cols) + " elements");
    // Both factors are below 2^31 and the stride below 2^63: no overflow in
    // 128 bits.
    __int128 needed = __int128(batchCount - 1) * stride + __int128(rows) * cols;
    __int128 numel = entry.bytes() / dtypeSize(toDType(entry.dtype()));
    if (needed > numel)
      fail(field + "." + name,
           quoted(entry.name()) + " is " + type + " but " +
               std::to_string(batchCount) + " batches of " +
               std::to_string(rows) + "x" + std::to_string(cols) +
               " with stride " + std::to_string(stride) + " need " +
               std::to_string(static_cast<uint64_t>(
                   std::min<__int128>(needed, UINT64_MAX))) +
               " elements");
  }

  const plan::Plan &plan_;
  std::string where_;
};

std::vector<uint8_t> readWholeFile(const std::string &path) {
  struct FileCloser {
    void operator()(std::FILE *file) const { std::fclose(file); }
  };
  std::unique_ptr<std::FILE, FileCloser> file(std::fopen(path.c_str(), "rb"));
  struct stat info;
  if (!file || fstat(fileno(file.get()), &info) != 0) {
    int savedErrno = errno;
    throw Error("cannot open '" + path + "': " + std::strerror(savedErrno));
  }
  if (!S_ISREG(info.st_mode))
    throw Error("cannot open '" + path + "': not a regular file");

  // The header is checked against the file size before the payload is read,
  // so a corrupt size never triggers a huge allocation.
  auto fileSize = static_cast<uint64_t>(info.st_size);
  std::vector<uint8_t> bytes(
      std::min<uint64_t>(fileSize, kPlanContainerHeaderSize));
  auto readFully = [&](uint8_t *buffer, size_t count) {
    if (std::fread(buffer, 1, count, file.get()) != count) {
      int savedErrno = errno;
      throw Error("cannot read '" + path + "': " +
                  (std::ferror(file.get()) ? std::strerror(savedErrno)
                                           : "unexpected end of file"));
    }
  };
  readFully(bytes.data(), bytes.size());
  ContainerHeader header =
      parseContainerHeader(bytes.data(), fileSize, planWhere(path));
  bytes.resize(kPlanContainerHeaderSize + header.payloadSize);
  readFully(bytes.data() + kPlanContainerHeaderSize, header.payloadSize);
  return bytes;
}

} // namespace

//===----------------------------------------------------------------------===//
// Names and conversions
//===----------------------------------------------------------------------===//

const char *roleName(plan::Role role) {
  switch (role) {
  case plan::Role::Parameter:
    return "parameter";
  case plan::Role::OptimizerState:
    return "optimizer_state";
  case plan::Role::Input:
    return "input";
  case plan::Role::Output:
    return "output";
  case plan::Role::Temporary:
    return "temporary";
  case plan::Role::Buffer:
    return "buffer";
  case plan::Role::RngSeed:
    return "rng_seed";
  case plan::Role::Lr:
    return "lr";
  case plan::Role::Step:
    return "step";
  }
  return "?";
}

const char *targetName(plan::Target target) {
  switch (target) {
  case plan::Target::Cpu:
    return "cpu";
  case plan::Target::Cuda:
    return "cuda";
  }
  return "?";
}

const char *imageFormatName(plan::ImageFormat format) {
  switch (format) {
  case plan::ImageFormat::ElfSharedObject:
    return "elf-so";
  case plan::ImageFormat::Cubin:
    return "cubin";
  case plan::ImageFormat::Ptx:
    return "ptx";
  }
  return "?";
}

std::optional<uint32_t> cubinChip(uint8_t osAbi, uint32_t flags) {
  // CUDA 13's ptxas (ELF OS ABI 0x41) keeps the chip in bits 8-15 of
  // e_flags (0x5a04 for sm_90); earlier toolkits (0x33) in bits 0-7.
  if (osAbi == 0x41)
    return (flags >> 8) & 0xff;
  if (osAbi == 0x33)
    return flags & 0xff;
  return std::nullopt;
}

std::optional<uint32_t> chooseCudaImage(const plan::Plan &plan, uint32_t device,
                                        bool ptxOnly) {
  std::optional<uint32_t> cubin, ptx;
  uint32_t cubinCapability = 0, ptxCapability = 0;
  for (uint32_t i = 0; i < plan.images()->size(); ++i) {
    const plan::KernelImage &image = *plan.images()->Get(i);
    uint32_t capability = image.compute_capability();
    if (capability > device)
      continue;
    if (image.format() == plan::ImageFormat::Cubin && !ptxOnly &&
        capability / 10 == device / 10 && capability >= cubinCapability) {
      cubin = i;
      cubinCapability = capability;
    } else if (image.format() == plan::ImageFormat::Ptx &&
               capability >= ptxCapability) {
      ptx = i;
      ptxCapability = capability;
    }
  }
  return cubin ? cubin : ptx;
}

std::string cudaImageList(const plan::Plan &plan) {
  std::string list;
  for (const plan::KernelImage *image : *plan.images())
    list += std::string(list.empty() ? "" : ", ") + "sm_" +
            std::to_string(image->compute_capability()) + " " +
            imageFormatName(image->format());
  return list.empty() ? "none" : list;
}

const char *epilogueName(plan::Epilogue epilogue) {
  switch (epilogue) {
  case plan::Epilogue::None:
    return "none";
  case plan::Epilogue::Bias:
    return "bias";
  case plan::Epilogue::Relu:
    return "relu";
  case plan::Epilogue::BiasRelu:
    return "bias_relu";
  case plan::Epilogue::Gelu:
    return "gelu";
  case plan::Epilogue::BiasGelu:
    return "bias_gelu";
  case plan::Epilogue::DGelu:
    return "dgelu";
  }
  return "?";
}

// The schema lists the dtypes in genesis::DType's order.
static_assert(unsigned(plan::DType::F32) == unsigned(DType::F32) &&
              unsigned(plan::DType::F16) == unsigned(DType::F16) &&
              unsigned(plan::DType::BF16) == unsigned(DType::BF16) &&
              unsigned(plan::DType::F64) == unsigned(DType::F64) &&
              unsigned(plan::DType::I1) == unsigned(DType::I1) &&
              unsigned(plan::DType::I32) == unsigned(DType::I32) &&
              unsigned(plan::DType::I64) == unsigned(DType::I64));

DType toDType(plan::DType dtype) { return static_cast<DType>(dtype); }
plan::DType toPlanDType(DType dtype) { return static_cast<plan::DType>(dtype); }

bool isCheckpointedRole(plan::Role role) {
  return role == plan::Role::Parameter || role == plan::Role::OptimizerState ||
         role == plan::Role::Buffer;
}

//===----------------------------------------------------------------------===//
// PlanFile
//===----------------------------------------------------------------------===//

PlanFile::PlanFile(std::string name, std::vector<uint8_t> payload,
                   const Sha256::Digest &contentHash)
    : name_(std::move(name)), payload_(std::move(payload)),
      contentHash_(contentHash) {}

PlanFile PlanFile::load(const std::string &path) {
  std::vector<uint8_t> bytes = readWholeFile(path);
  return fromBytes(bytes.data(), bytes.size(), path);
}

PlanFile PlanFile::fromBytes(const void *data, size_t size,
                             const std::string &name) {
  std::string where = planWhere(name);
  const auto *bytes = static_cast<const uint8_t *>(data);
  ContainerHeader header = parseContainerHeader(bytes, size, where);

  // A copy in our own (suitably aligned) storage; FlatBuffers reads scalars
  // in place.
  std::vector<uint8_t> payload(bytes + kPlanContainerHeaderSize,
                               bytes + kPlanContainerHeaderSize +
                                   header.payloadSize);
  Sha256::Digest actual = Sha256::digest(payload.data(), payload.size());
  if (actual != header.hash)
    throw Error(where + ": content hash mismatch: the header says " +
                toHex(header.hash) + " but the payload hashes to " +
                toHex(actual) + " (the file is corrupted)");

  flatbuffers::Verifier verifier(payload.data(), payload.size());
  if (!plan::VerifyPlanBuffer(verifier))
    throw Error(where + ": payload is not a valid plan (FlatBuffers "
                        "verification failed)");
  PlanChecker(*plan::GetPlan(payload.data()), where).check();
  return PlanFile(name, std::move(payload), actual);
}

std::string PlanFile::tensorName(uint32_t index) const {
  return plan().tensors()->Get(index)->name()->str();
}

DType PlanFile::tensorDType(uint32_t index) const {
  return toDType(plan().tensors()->Get(index)->dtype());
}

std::vector<int64_t> PlanFile::tensorShape(uint32_t index) const {
  const auto &shape = *plan().tensors()->Get(index)->shape();
  return {shape.begin(), shape.end()};
}

plan::Role PlanFile::tensorRole(uint32_t index) const {
  return plan().tensors()->Get(index)->role();
}

std::vector<uint8_t> wrapPlanPayload(const uint8_t *payload, size_t size,
                                     uint32_t containerVersion) {
  std::vector<uint8_t> bytes(kPlanContainerHeaderSize + size);
  std::memcpy(bytes.data(), kPlanMagic, sizeof(kPlanMagic));
  std::memcpy(bytes.data() + 4, &containerVersion, sizeof(containerVersion));
  uint64_t payloadSize = size;
  std::memcpy(bytes.data() + 8, &payloadSize, sizeof(payloadSize));
  Sha256::Digest hash = Sha256::digest(payload, size);
  std::memcpy(bytes.data() + 16, hash.data(), hash.size());
  if (size != 0)
    std::memcpy(bytes.data() + kPlanContainerHeaderSize, payload, size);
  return bytes;
}

//===----------------------------------------------------------------------===//
// Describing plans
//===----------------------------------------------------------------------===//

std::string stepName(const PlanFile &planFile, const plan::Step &step) {
  auto name = [&](uint32_t index) { return planFile.tensorName(index); };
  std::ostringstream text;
  switch (step.kind_type()) {
  case plan::StepKind::KernelLaunch:
    text << "kernel " << step.kind_as_KernelLaunch()->symbol()->str();
    break;
  case plan::StepKind::Gemm: {
    const plan::Gemm &gemm = *step.kind_as_Gemm();
    text << "gemm " << gemm.m() << "x" << gemm.n() << "x" << gemm.k();
    if (gemm.batch_count() != 1)
      text << " x" << gemm.batch_count();
    if (gemm.epilogue() != plan::Epilogue::None)
      text << " " << epilogueName(gemm.epilogue());
    break;
  }
  case plan::StepKind::Attention:
    text << detail::attentionStepName(*step.kind_as_Attention());
    break;
  case plan::StepKind::Copy:
    text << "copy " << name(step.kind_as_Copy()->src()) << " -> "
         << name(step.kind_as_Copy()->dst());
    break;
  case plan::StepKind::Fill:
    text << "fill " << name(step.kind_as_Fill()->dst()) << " = "
         << step.kind_as_Fill()->value();
    break;
  default:
    text << "?";
  }
  return text.str();
}

std::vector<uint32_t> stepWrites(const PlanFile &planFile,
                                 const plan::Step &step) {
  std::vector<uint32_t> writes;
  auto add = [&](uint32_t index) {
    if (std::find(writes.begin(), writes.end(), index) == writes.end())
      writes.push_back(index);
  };
  switch (step.kind_type()) {
  case plan::StepKind::KernelLaunch: {
    const plan::KernelLaunch &launch = *step.kind_as_KernelLaunch();
    // A verified plan has a signature for every launched symbol.
    for (const plan::KernelSignature *kernel : *planFile.plan().kernels())
      if (kernel->symbol()->string_view() == launch.symbol()->string_view()) {
        const auto &args = *launch.args();
        for (uint32_t i = args.size() - kernel->outputs(); i < args.size(); ++i)
          add(args[i]);
        break;
      }
    break;
  }
  case plan::StepKind::Gemm:
    add(step.kind_as_Gemm()->c());
    break;
  case plan::StepKind::Attention: {
    AttentionDesc attention = attentionDescOf(*step.kind_as_Attention());
    if (attention.backward()) {
      add(*attention.queryGrad);
      add(*attention.keyGrad);
      add(*attention.valueGrad);
    } else {
      add(attention.out);
      add(attention.logSumExp);
    }
    break;
  }
  case plan::StepKind::Copy:
    add(step.kind_as_Copy()->dst());
    break;
  case plan::StepKind::Fill:
    add(step.kind_as_Fill()->dst());
    break;
  default:
    break;
  }
  return writes;
}

namespace {

std::string tensorList(const PlanFile &planFile,
                       const flatbuffers::Vector<uint32_t> &indices) {
  std::string text;
  for (uint32_t index : indices)
    text += (text.empty() ? "" : ", ") + planFile.tensorName(index);
  return text;
}

void describeStepDetails(const PlanFile &planFile, const plan::Step &step,
                         std::ostream &os) {
  auto name = [&](uint32_t index) { return planFile.tensorName(index); };
  switch (step.kind_type()) {
  case plan::StepKind::KernelLaunch: {
    const plan::KernelLaunch &launch = *step.kind_as_KernelLaunch();
    os << " (image #" << launch.image() << ") args ["
       << tensorList(planFile, *launch.args()) << "]";
    if (planFile.plan().header()->target() == plan::Target::Cuda)
      os << " grid (" << launch.grid()->x() << ", " << launch.grid()->y()
         << ", " << launch.grid()->z() << ") block (" << launch.block()->x()
         << ", " << launch.block()->y() << ", " << launch.block()->z()
         << ") shared " << launch.shared_memory_bytes() << " B";
    break;
  }
  case plan::StepKind::Gemm: {
    const plan::Gemm &gemm = *step.kind_as_Gemm();
    os << ": " << name(gemm.c()) << " = " << gemm.alpha() << " * "
       << name(gemm.a()) << (gemm.transpose_a() ? "^T" : "") << " @ "
       << name(gemm.b()) << (gemm.transpose_b() ? "^T" : "");
    if (gemm.beta() != 0)
      os << " + " << gemm.beta() << " * " << name(gemm.c());
    if (gemm.bias())
      os << ", bias " << name(*gemm.bias());
    if (gemm.aux())
      os << ", aux " << name(*gemm.aux());
    if (gemm.batch_count() != 1)
      os << ", strides (" << gemm.stride_a() << ", " << gemm.stride_b() << ", "
         << gemm.stride_c() << ")";
    if (gemm.allow_tf32())
      os << ", tf32 allowed";
    break;
  }
  case plan::StepKind::Attention:
    detail::describeAttention(planFile, *step.kind_as_Attention(), os);
    break;
  case plan::StepKind::Copy:
    os << " (" << step.kind_as_Copy()->bytes() << " B)";
    break;
  default:
    break;
  }
}

} // namespace

void describePlan(const PlanFile &planFile, std::ostream &os) {
  const plan::Plan &plan = planFile.plan();
  const plan::Header &header = *plan.header();
  auto text = [](const flatbuffers::String *value) {
    return value ? value->str() : std::string();
  };
  os << "plan: " << planFile.name() << "\n"
     << "  format version: " << header.format_version()
     << " (container version " << kPlanContainerVersion << ")\n"
     << "  compiler: " << text(header.compiler_version()) << "\n"
     << "  flags: " << text(header.flags()) << "\n"
     << "  target: " << targetName(header.target()) << "\n"
     << "  model hash: " << text(header.model_hash()) << "\n"
     << "  content sha256: " << toHex(planFile.contentHash()) << "\n";

  os << "tensors (" << plan.tensors()->size() << "):\n";
  for (uint32_t i = 0; i < plan.tensors()->size(); ++i) {
    const plan::Tensor &entry = *plan.tensors()->Get(i);
    os << "  #" << i << " " << entry.name()->str() << ": "
       << dtypeName(toDType(entry.dtype())) << rawShapeString(*entry.shape())
       << " " << roleName(entry.role()) << ", " << entry.bytes() << " B";
    if (entry.storage() == plan::Storage::Arena)
      os << " at arena [" << entry.arena_offset() << ", "
         << entry.arena_offset() + entry.bytes() << ")";
    else
      os << " external";
    os << "\n";
  }

  os << "memory: arena " << plan.memory()->arena_bytes() << " B, alignment "
     << plan.memory()->alignment();
  if (plan.memory()->workspace_bytes() != 0)
    os << ", library workspace " << plan.memory()->workspace_bytes()
       << " B at arena [" << plan.memory()->workspace_offset() << ", "
       << plan.memory()->workspace_offset() + plan.memory()->workspace_bytes()
       << ")";
  os << "\n";
  os << "kernel images (" << plan.images()->size() << "):\n";
  for (uint32_t i = 0; i < plan.images()->size(); ++i) {
    const plan::KernelImage &image = *plan.images()->Get(i);
    os << "  #" << i << " " << targetName(image.target()) << " "
       << imageFormatName(image.format());
    if (image.compute_capability() != 0)
      os << " for sm_" << image.compute_capability();
    os << ", " << image.bytes()->size() << " B";
    if (image.waits_for_prerequisite_grids())
      os << ", programmatic dependent launch";
    os << "\n";
  }

  for (const plan::Function *function : *plan.functions()) {
    os << "function " << function->name()->str() << "("
       << tensorList(planFile, *function->inputs()) << ") -> ("
       << tensorList(planFile, *function->outputs()) << ")";
    if (function->advances_step())
      os << ", advances the step";
    if (function->rng_offset_advance() != 0)
      os << ", rng offset +" << function->rng_offset_advance();
    os << "\n";
    for (uint32_t i = 0; i < function->steps()->size(); ++i) {
      const plan::Step &step = *function->steps()->Get(i);
      os << "  #" << i << " " << stepName(planFile, step);
      describeStepDetails(planFile, step, os);
      if (step.location() && step.location()->size() != 0)
        os << "  @ " << step.location()->str();
      os << "\n";
    }
  }
}

//===----------------------------------------------------------------------===//
// PlanBuilder
//===----------------------------------------------------------------------===//

GemmDesc gemmDescOf(const plan::Gemm &gemm) {
  GemmDesc desc;
  desc.a = gemm.a();
  desc.b = gemm.b();
  desc.c = gemm.c();
  if (gemm.bias())
    desc.bias = *gemm.bias();
  if (gemm.aux())
    desc.aux = *gemm.aux();
  desc.m = gemm.m();
  desc.n = gemm.n();
  desc.k = gemm.k();
  desc.batchCount = gemm.batch_count();
  desc.strideA = gemm.stride_a();
  desc.strideB = gemm.stride_b();
  desc.strideC = gemm.stride_c();
  desc.transposeA = gemm.transpose_a();
  desc.transposeB = gemm.transpose_b();
  desc.alpha = gemm.alpha();
  desc.beta = gemm.beta();
  desc.epilogue = gemm.epilogue();
  desc.allowTf32 = gemm.allow_tf32();
  return desc;
}

PlanBuilder::PlanBuilder(PlanHeader header) : header_(std::move(header)) {}

void PlanBuilder::setArena(uint64_t bytes, uint64_t alignment) {
  arenaBytes_ = bytes;
  arenaAlignment_ = alignment;
}

void PlanBuilder::setWorkspace(uint64_t offset, uint64_t bytes) {
  workspaceOffset_ = offset;
  workspaceBytes_ = bytes;
}

uint32_t PlanBuilder::addTensor(const std::string &name, DType dtype,
                                std::vector<int64_t> shape, plan::Role role) {
  tensors_.push_back(
      {name, dtype, std::move(shape), role, plan::Storage::External, 0});
  return static_cast<uint32_t>(tensors_.size() - 1);
}

uint32_t PlanBuilder::addTemporary(const std::string &name, DType dtype,
                                   std::vector<int64_t> shape,
                                   uint64_t arenaOffset) {
  tensors_.push_back({name, dtype, std::move(shape), plan::Role::Temporary,
                      plan::Storage::Arena, arenaOffset});
  return static_cast<uint32_t>(tensors_.size() - 1);
}

uint32_t PlanBuilder::addImage(plan::ImageFormat format,
                               std::vector<uint8_t> bytes,
                               uint32_t computeCapability,
                               bool waitsForPrerequisiteGrids) {
  images_.push_back(
      {format, std::move(bytes), computeCapability, waitsForPrerequisiteGrids});
  return static_cast<uint32_t>(images_.size() - 1);
}

uint32_t PlanBuilder::addFunction(const std::string &name,
                                  std::vector<uint32_t> inputs,
                                  std::vector<uint32_t> outputs,
                                  bool advancesStep,
                                  uint64_t rngOffsetAdvance) {
  functions_.push_back({name,
                        std::move(inputs),
                        std::move(outputs),
                        advancesStep,
                        rngOffsetAdvance,
                        {}});
  return static_cast<uint32_t>(functions_.size() - 1);
}

PlanBuilder::StepEntry &PlanBuilder::addStep(uint32_t function,
                                             plan::StepKind kind,
                                             const std::string &location) {
  if (function >= functions_.size())
    throw Error("PlanBuilder: no function #" + std::to_string(function));
  StepEntry &step = functions_[function].steps.emplace_back();
  step.kind = kind;
  step.location = location;
  return step;
}

uint64_t PlanBuilder::tensorBytes(const TensorEntry &entry) {
  uint64_t bytes = dtypeSize(entry.dtype);
  for (int64_t dim : entry.shape)
    bytes *= static_cast<uint64_t>(dim);
  return bytes;
}

void PlanBuilder::addKernelLaunch(uint32_t function, KernelLaunchDesc launch,
                                  const std::string &location) {
  KernelSignatureEntry signature{launch.symbol, {}, launch.outputs};
  for (uint32_t arg : launch.args)
    signature.argBytes.push_back(
        arg < tensors_.size() ? tensorBytes(tensors_[arg]) : 0);
  // A later launch that disagrees with the first is refused by the check
  // that write() runs.
  if (std::none_of(kernels_.begin(), kernels_.end(),
                   [&](const KernelSignatureEntry &entry) {
                     return entry.symbol == launch.symbol;
                   }))
    kernels_.push_back(std::move(signature));
  addStep(function, plan::StepKind::KernelLaunch, location).launch =
      std::move(launch);
}

void PlanBuilder::addGemm(uint32_t function, const GemmDesc &gemm,
                          const std::string &location) {
  addStep(function, plan::StepKind::Gemm, location).gemm = gemm;
}

void PlanBuilder::addAttention(uint32_t function,
                               const AttentionDesc &attention,
                               const std::string &location) {
  addStep(function, plan::StepKind::Attention, location).attention = attention;
}

void PlanBuilder::addCopy(uint32_t function, uint32_t src, uint32_t dst,
                          uint64_t bytes, const std::string &location) {
  StepEntry &step = addStep(function, plan::StepKind::Copy, location);
  step.src = src;
  step.dst = dst;
  step.copyBytes = bytes;
}

void PlanBuilder::addFill(uint32_t function, uint32_t dst, double value,
                          const std::string &location) {
  StepEntry &step = addStep(function, plan::StepKind::Fill, location);
  step.dst = dst;
  step.fillValue = value;
}

std::vector<uint8_t> PlanBuilder::payload() const {
  flatbuffers::FlatBufferBuilder fbb;
  fbb.ForceDefaults(true);

  auto header = plan::CreateHeaderDirect(
      fbb, header_.formatVersion, header_.compilerVersion.c_str(),
      header_.flags.c_str(), header_.target, header_.modelHash.c_str());

  std::vector<flatbuffers::Offset<plan::Tensor>> tensors;
  for (const TensorEntry &entry : tensors_) {
    tensors.push_back(plan::CreateTensorDirect(
        fbb, entry.name.c_str(), toPlanDType(entry.dtype), &entry.shape,
        entry.role, entry.storage, entry.arenaOffset, tensorBytes(entry)));
  }

  auto memory = plan::CreateMemoryPlan(fbb, arenaBytes_, arenaAlignment_,
                                       workspaceOffset_, workspaceBytes_);

  std::vector<flatbuffers::Offset<plan::Function>> functions;
  for (const FunctionEntry &function : functions_) {
    std::vector<flatbuffers::Offset<plan::Step>> steps;
    for (const StepEntry &step : function.steps) {
      flatbuffers::Offset<void> kind;
      switch (step.kind) {
      case plan::StepKind::KernelLaunch: {
        const KernelLaunchDesc &launch = step.launch;
        plan::Dim3 grid(launch.grid[0], launch.grid[1], launch.grid[2]);
        plan::Dim3 block(launch.block[0], launch.block[1], launch.block[2]);
        kind = plan::CreateKernelLaunchDirect(
                   fbb, launch.image, launch.symbol.c_str(), &launch.args,
                   &grid, &block, launch.sharedMemoryBytes, launch.outerExtent)
                   .Union();
        break;
      }
      case plan::StepKind::Gemm: {
        const GemmDesc &gemm = step.gemm;
        flatbuffers::Optional<uint32_t> bias = flatbuffers::nullopt;
        if (gemm.bias)
          bias = *gemm.bias;
        flatbuffers::Optional<uint32_t> aux = flatbuffers::nullopt;
        if (gemm.aux)
          aux = *gemm.aux;
        kind = plan::CreateGemm(fbb, gemm.a, gemm.b, gemm.c, bias, gemm.m,
                                gemm.n, gemm.k, gemm.batchCount, gemm.strideA,
                                gemm.strideB, gemm.strideC, gemm.transposeA,
                                gemm.transposeB, gemm.alpha, gemm.beta,
                                gemm.epilogue, gemm.allowTf32, aux)
                   .Union();
        break;
      }
      case plan::StepKind::Attention:
        kind = detail::createAttention(fbb, step.attention).Union();
        break;
      case plan::StepKind::Copy:
        kind =
            plan::CreateCopy(fbb, step.src, step.dst, step.copyBytes).Union();
        break;
      default:
        kind = plan::CreateFill(fbb, step.dst, step.fillValue).Union();
        break;
      }
      steps.push_back(
          plan::CreateStepDirect(fbb, step.kind, kind, step.location.c_str()));
    }
    functions.push_back(plan::CreateFunctionDirect(
        fbb, function.name.c_str(), &function.inputs, &function.outputs, &steps,
        function.advancesStep, function.rngOffsetAdvance));
  }

  std::vector<flatbuffers::Offset<plan::KernelImage>> images;
  for (const ImageEntry &image : images_)
    images.push_back(plan::CreateKernelImageDirect(
        fbb, header_.target, image.format, &image.bytes,
        image.computeCapability, image.waitsForPrerequisiteGrids));

  std::vector<flatbuffers::Offset<plan::KernelSignature>> kernels;
  for (const KernelSignatureEntry &kernel : kernels_)
    kernels.push_back(plan::CreateKernelSignatureDirect(
        fbb, kernel.symbol.c_str(), &kernel.argBytes, kernel.outputs));

  plan::FinishPlanBuffer(fbb,
                         plan::CreatePlanDirect(fbb, header, &tensors, memory,
                                                &functions, &images, &kernels));
  return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
}

std::vector<uint8_t> PlanBuilder::bytes() const {
  std::vector<uint8_t> body = payload();
  return wrapPlanPayload(body.data(), body.size());
}

void PlanBuilder::write(const std::string &path) const {
  std::vector<uint8_t> contents = bytes();
  PlanFile::fromBytes(contents.data(), contents.size(), path);
  writeFileAtomically(path, contents.data(), contents.size());
}

} // namespace genesis
