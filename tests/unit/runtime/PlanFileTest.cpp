//===- PlanFileTest.cpp - The .gplan container, loader and builder --------===//

#include "PlanTestSupport.h"

#include "runtime/plan/PlanFile.h"

#include <array>
#include <cmath>
#include <cstring>
#include <functional>
#include <optional>
#include <sstream>

using namespace genesis;
using namespace genesis::test;

namespace {

/// A small valid plan touching every step kind, every persistent role the
/// tests mutate, and the arena.
struct ValidPlan {
  PlanBuilder builder{testHeader()};
  uint32_t x, w, bias, momentum, hidden, count, y, forward;

  ValidPlan() {
    x = builder.addTensor("x", DType::F32, {2, 3}, plan::Role::Input);
    w = builder.addTensor("w", DType::F32, {3, 4}, plan::Role::Parameter);
    bias = builder.addTensor("b", DType::F32, {4}, plan::Role::Parameter);
    momentum = builder.addTensor("w.momentum", DType::F32, {3, 4},
                                 plan::Role::OptimizerState);
    hidden = builder.addTemporary("h", DType::F32, {2, 4}, 0);
    count = builder.addTemporary("count", DType::I64, {}, 64);
    y = builder.addTensor("y", DType::F32, {2, 4}, plan::Role::Output);
    builder.setArena(128, 64);
    builder.addImage(plan::ImageFormat::ElfSharedObject, {0x7f, 'E', 'L', 'F'});
    forward = builder.addFunction("forward", {x, w, bias}, {y});
    GemmDesc gemm;
    gemm.a = x;
    gemm.b = w;
    gemm.c = hidden;
    gemm.bias = bias;
    gemm.m = 2;
    gemm.n = 4;
    gemm.k = 3;
    gemm.epilogue = plan::Epilogue::BiasRelu;
    builder.addGemm(forward, gemm, "mlp.cpp:10");
    builder.addFill(forward, count, 8, "mlp.cpp:11");
    builder.addKernelLaunch(forward, {0, "add_f32", {hidden, hidden, y, count}},
                            "mlp.cpp:11");
    builder.addCopy(forward, hidden, y, 32);
  }

  GemmDesc gemm() const {
    GemmDesc desc;
    desc.a = x;
    desc.b = w;
    desc.c = hidden;
    desc.m = 2;
    desc.n = 4;
    desc.k = 3;
    return desc;
  }
};

std::string loadError(const std::vector<uint8_t> &bytes) {
  return errorFrom([&] { PlanFile::fromBytes(bytes.data(), bytes.size()); });
}

std::string loadError(const PlanBuilder &builder) {
  return loadError(builder.bytes());
}

/// Builds the valid plan's payload, lets `mutate` change fields in place and
/// returns the loader's error for the rewrapped payload.
std::string
errorAfterMutation(const std::function<void(plan::Plan &)> &mutate) {
  std::vector<uint8_t> payload = ValidPlan().builder.payload();
  mutate(*plan::GetMutablePlan(payload.data()));
  return loadError(wrapPlanPayload(payload.data(), payload.size()));
}

plan::Tensor &mutableTensor(plan::Plan &root, uint32_t index) {
  return *root.mutable_tensors()->GetMutableObject(index);
}

//===----------------------------------------------------------------------===//
// Round trip and description
//===----------------------------------------------------------------------===//

TEST(PlanFileTest, BuilderOutputLoadsWithEveryField) {
  ValidPlan valid;
  PlanFile planFile = planOf(valid.builder);
  const plan::Plan &root = planFile.plan();
  EXPECT_EQ(root.header()->format_version(), kPlanFormatVersion);
  EXPECT_EQ(root.header()->compiler_version()->str(), "genesis-test 0.1");
  EXPECT_EQ(root.header()->flags()->str(), "--target=cpu");
  EXPECT_EQ(root.header()->model_hash()->str(), "test-model");
  EXPECT_EQ(root.header()->target(), plan::Target::Cpu);
  ASSERT_EQ(root.tensors()->size(), 7u);
  EXPECT_EQ(planFile.tensorName(valid.count), "count");
  EXPECT_EQ(planFile.tensorDType(valid.count), DType::I64);
  EXPECT_EQ(planFile.tensorShape(valid.x), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(planFile.tensorRole(valid.momentum), plan::Role::OptimizerState);
  EXPECT_EQ(root.tensors()->Get(valid.count)->arena_offset(), 64u);
  EXPECT_EQ(root.tensors()->Get(valid.hidden)->bytes(), 32u);
  EXPECT_EQ(root.memory()->arena_bytes(), 128u);
  EXPECT_EQ(root.memory()->alignment(), 64u);
  ASSERT_EQ(root.functions()->size(), 1u);
  const plan::Function &forward = *root.functions()->Get(0);
  ASSERT_EQ(forward.steps()->size(), 4u);
  const plan::Gemm &gemm = *forward.steps()->Get(0)->kind_as_Gemm();
  EXPECT_EQ(*gemm.bias(), valid.bias);
  EXPECT_EQ(gemm.epilogue(), plan::Epilogue::BiasRelu);
  EXPECT_EQ(forward.steps()->Get(0)->location()->str(), "mlp.cpp:10");
  EXPECT_EQ(forward.steps()->Get(2)->kind_as_KernelLaunch()->symbol()->str(),
            "add_f32");
  EXPECT_EQ(forward.steps()->Get(1)->kind_as_Fill()->value(), 8.0);
  EXPECT_EQ(forward.steps()->Get(3)->kind_as_Copy()->bytes(), 32u);
  EXPECT_EQ(root.images()->Get(0)->bytes()->size(), 4u);

  std::vector<uint8_t> payload = valid.builder.payload();
  EXPECT_EQ(planFile.contentHash(),
            Sha256::digest(payload.data(), payload.size()));
}

TEST(PlanFileTest, ContainerLayout) {
  ValidPlan valid;
  std::vector<uint8_t> payload = valid.builder.payload();
  std::vector<uint8_t> bytes = valid.builder.bytes();
  ASSERT_EQ(bytes.size(), kPlanContainerHeaderSize + payload.size());
  EXPECT_EQ(std::memcmp(bytes.data(), "GPLN", 4), 0);
  uint32_t version;
  uint64_t size;
  std::memcpy(&version, bytes.data() + 4, 4);
  std::memcpy(&size, bytes.data() + 8, 8);
  EXPECT_EQ(version, kPlanContainerVersion);
  EXPECT_EQ(size, payload.size());
  Sha256::Digest hash = Sha256::digest(payload.data(), payload.size());
  EXPECT_EQ(std::memcmp(bytes.data() + 16, hash.data(), 32), 0);
  EXPECT_EQ(std::memcmp(bytes.data() + 48, payload.data(), payload.size()), 0);
  // The builder is deterministic, so identical plans hash identically.
  EXPECT_EQ(ValidPlan().builder.bytes(), bytes);
}

class PlanFileIOTest : public TempDirTest {};

TEST_F(PlanFileIOTest, WriteThenLoad) {
  ValidPlan valid;
  valid.builder.write(path("m.gplan"));
  EXPECT_EQ(readFileBytes(path("m.gplan")), valid.builder.bytes());
  PlanFile planFile = PlanFile::load(path("m.gplan"));
  EXPECT_EQ(planFile.name(), path("m.gplan"));
  EXPECT_EQ(planFile.plan().tensors()->size(), 7u);
}

TEST_F(PlanFileIOTest, WriteRefusesAnInvalidPlanAndKeepsTheOldFile) {
  ValidPlan valid;
  valid.builder.write(path("m.gplan"));
  ValidPlan invalid;
  invalid.builder.addCopy(invalid.forward, 99, invalid.y, 4);
  std::string message =
      errorFrom([&] { invalid.builder.write(path("m.gplan")); });
  EXPECT_TRUE(contains(message, "plan file '" + path("m.gplan") + "'"));
  EXPECT_TRUE(contains(message, "out of range"));
  EXPECT_EQ(readFileBytes(path("m.gplan")), valid.builder.bytes());
}

TEST_F(PlanFileIOTest, MissingAndNonRegularFiles) {
  EXPECT_TRUE(contains(errorFrom([&] { PlanFile::load(path("none.gplan")); }),
                       "cannot open '" + path("none.gplan") +
                           "': No such file or directory"));
  EXPECT_TRUE(
      contains(errorFrom([&] { PlanFile::load(dir_); }), "not a regular file"));
}

TEST(PlanFileTest, DescribeListsProvenanceTensorsMemoryAndSteps) {
  PlanFile planFile = planOf(ValidPlan().builder);
  std::ostringstream text;
  describePlan(planFile, text);
  std::string description = text.str();
  for (const std::string &line :
       {std::string("plan: test.gplan"),
        "format version: " + std::to_string(kPlanFormatVersion),
        std::string("compiler: genesis-test 0.1"),
        std::string("flags: --target=cpu"), std::string("target: cpu"),
        std::string("model hash: test-model"),
        "content sha256: " + toHex(planFile.contentHash()),
        std::string("tensors (7):"),
        std::string("#0 x: f32[2, 3] input, 24 B external"),
        std::string("#3 w.momentum: f32[3, 4] optimizer_state, 48 B external"),
        std::string("#4 h: f32[2, 4] temporary, 32 B at arena [0, 32)"),
        std::string("#5 count: i64[] temporary, 8 B at arena [64, 72)"),
        std::string("memory: arena 128 B, alignment 64"),
        std::string("#0 cpu elf-so, 4 B"),
        std::string("function forward(x, w, b) -> (y)"),
        std::string("#0 gemm 2x4x3 bias_relu: h = 1 * x @ w, bias b  @ "
                    "mlp.cpp:10"),
        std::string("#1 fill count = 8  @ mlp.cpp:11"),
        std::string("#2 kernel add_f32 (image #0) args [h, h, y, count]"),
        std::string("#3 copy h -> y (32 B)")})
    EXPECT_TRUE(contains(description, line));
}

//===----------------------------------------------------------------------===//
// Container errors
//===----------------------------------------------------------------------===//

TEST(PlanFileTest, EveryTruncationIsAnError) {
  std::vector<uint8_t> bytes = ValidPlan().builder.bytes();
  for (size_t size = 0; size < bytes.size(); ++size) {
    std::vector<uint8_t> truncated(bytes.begin(), bytes.begin() + size);
    std::string message = loadError(truncated);
    const char *expected = size < 4    ? "bad magic"
                           : size < 48 ? "truncated: file is"
                                       : "truncated: the header promises";
    EXPECT_TRUE(contains(message, expected)) << "size " << size;
  }
}

TEST(PlanFileTest, TrailingBytes) {
  std::vector<uint8_t> bytes = ValidPlan().builder.bytes();
  bytes.push_back(0);
  EXPECT_TRUE(contains(loadError(bytes), "1 trailing bytes after the"));
}

TEST(PlanFileTest, EveryCorruptedByteIsAnError) {
  std::vector<uint8_t> bytes = ValidPlan().builder.bytes();
  for (size_t position = 0; position < bytes.size(); ++position) {
    std::vector<uint8_t> corrupted = bytes;
    corrupted[position] ^= uint8_t(1u << (position % 8));
    std::string message = loadError(corrupted);
    if (position < 4)
      EXPECT_TRUE(contains(message, "bad magic")) << position;
    else if (position >= 16)
      EXPECT_TRUE(contains(message, "content hash mismatch")) << position;
    else
      EXPECT_FALSE(message.empty()) << position;
  }
}

TEST_F(PlanFileIOTest, CorruptedFilesOnDisk) {
  std::vector<uint8_t> bytes = ValidPlan().builder.bytes();
  for (size_t position = 48; position < bytes.size(); position += 97) {
    std::vector<uint8_t> corrupted = bytes;
    corrupted[position] ^= 0xFF;
    writeFileBytes(path("bad.gplan"), corrupted);
    std::string message = errorFrom([&] { PlanFile::load(path("bad.gplan")); });
    EXPECT_TRUE(contains(message, "plan file '" + path("bad.gplan") +
                                      "': content hash mismatch"))
        << position;
  }
  bytes.resize(bytes.size() - 1);
  writeFileBytes(path("short.gplan"), bytes);
  EXPECT_TRUE(contains(errorFrom([&] { PlanFile::load(path("short.gplan")); }),
                       "truncated"));
}

TEST(PlanFileTest, NewerContainerVersionNamesBothVersions) {
  std::vector<uint8_t> payload = ValidPlan().builder.payload();
  std::string message =
      loadError(wrapPlanPayload(payload.data(), payload.size(), 2));
  EXPECT_TRUE(contains(message, "plan file '<memory>': container version 2 is "
                                "newer than this runtime supports (version "
                                "1)"));
  EXPECT_TRUE(
      contains(loadError(wrapPlanPayload(payload.data(), payload.size(), 0)),
               "container version 0 is not a valid version"));
}

TEST(PlanFileTest, NewerFormatVersionNamesBothVersions) {
  PlanHeader header = testHeader();
  header.formatVersion = kPlanFormatVersion + 1;
  PlanBuilder builder(header);
  EXPECT_TRUE(contains(loadError(builder),
                       "header.format_version: format version " +
                           std::to_string(kPlanFormatVersion + 1) +
                           " is newer than this runtime supports (version " +
                           std::to_string(kPlanFormatVersion) + ")"));
  header.formatVersion = 0;
  EXPECT_TRUE(contains(loadError(PlanBuilder(header)),
                       "header.format_version: 0 is not a valid version"));
  header.formatVersion = 2;
  EXPECT_TRUE(contains(loadError(PlanBuilder(header)),
                       "header.format_version: format version 2 predates the "
                       "kernel signatures of version 3"));
  header.formatVersion = 3;
  EXPECT_TRUE(contains(loadError(PlanBuilder(header)),
                       "header.format_version: format version 3 predates "
                       "version 4, whose CUDA images name their chip; "
                       "recompile the plan"));
}

TEST(PlanFileTest, BadMagic) {
  std::vector<uint8_t> bytes = ValidPlan().builder.bytes();
  std::memcpy(bytes.data(), "GPLX", 4);
  EXPECT_TRUE(contains(loadError(bytes),
                       "bad magic: not a .gplan file (expected \"GPLN\")"));
}

TEST(PlanFileTest, OversizedPayloadSizeIsRejectedBeforeReading) {
  std::vector<uint8_t> bytes = ValidPlan().builder.bytes();
  uint64_t huge = uint64_t(1) << 40;
  std::memcpy(bytes.data() + 8, &huge, 8);
  EXPECT_TRUE(contains(loadError(bytes), "exceeds the FlatBuffers limit"));
}

TEST(PlanFileTest, PayloadThatIsNoFlatBuffer) {
  std::vector<uint8_t> garbage(64, 0xAB);
  EXPECT_TRUE(contains(loadError(wrapPlanPayload(garbage.data(), 64)),
                       "payload is not a valid plan (FlatBuffers verification "
                       "failed)"));
  EXPECT_TRUE(contains(loadError(wrapPlanPayload(nullptr, 0)),
                       "FlatBuffers verification failed"));
}

//===----------------------------------------------------------------------===//
// Semantic errors
//===----------------------------------------------------------------------===//

struct BuilderCase {
  const char *description;
  std::function<void(ValidPlan &)> change;
  const char *expected;
};

TEST(PlanFileTest, SemanticErrorsNameTheField) {
  const BuilderCase cases[] = {
      {"step tensor index out of range",
       [](ValidPlan &p) { p.builder.addCopy(p.forward, 99, p.y, 4); },
       "functions[0] 'forward'.steps[4].src: tensor index 99 is out of range "
       "(the plan has 7 tensors)"},
      {"function input out of range",
       [](ValidPlan &p) { p.builder.addFunction("g", {42}, {}); },
       "functions[1] 'g'.inputs[0]: tensor index 42 is out of range"},
      {"function output out of range",
       [](ValidPlan &p) { p.builder.addFunction("g", {}, {7}); },
       "functions[1] 'g'.outputs[0]: tensor index 7 is out of range"},
      {"arena overflow",
       [](ValidPlan &p) {
         p.builder.addTemporary("big", DType::F32, {64}, 64);
       },
       "tensors[7] 'big': arena range [64, 64 + 256) exceeds arena_bytes 128"},
      {"arena offset overflow",
       [](ValidPlan &p) {
         p.builder.addTemporary("wrap", DType::F32, {64}, ~uint64_t(63));
       },
       "exceeds arena_bytes 128"},
      {"misaligned arena offset",
       [](ValidPlan &p) { p.builder.addTemporary("odd", DType::F32, {1}, 4); },
       "tensors[7] 'odd': arena_offset 4 is not a multiple of the alignment "
       "64"},
      {"misaligned element",
       [](ValidPlan &p) {
         p.builder.setArena(128, 1);
         p.builder.addTemporary("odd", DType::F32, {1}, 2);
       },
       "arena_offset 2 is not a multiple of the alignment 4"},
      {"alignment not a power of two",
       [](ValidPlan &p) { p.builder.setArena(128, 48); },
       "memory.alignment: 48 is not a power of two up to 4096"},
      {"negative dimension",
       [](ValidPlan &p) {
         p.builder.addTensor("neg", DType::F32, {2, -1}, plan::Role::Input);
       },
       "tensors[7] 'neg': shape [2, -1]: dimension 1 is negative"},
      {"byte size overflow",
       [](ValidPlan &p) {
         p.builder.addTensor("huge", DType::F64, {int64_t(1) << 40, 1 << 30},
                             plan::Role::Input);
       },
       "tensors[7] 'huge': byte size of f64[1099511627776, 1073741824] "
       "overflows"},
      {"duplicate tensor name",
       [](ValidPlan &p) {
         p.builder.addTensor("x", DType::F32, {1}, plan::Role::Input);
       },
       "tensors[7] 'x': duplicate name (also tensors[0])"},
      {"empty tensor name",
       [](ValidPlan &p) {
         p.builder.addTensor("", DType::F32, {1}, plan::Role::Input);
       },
       "tensors[7]: name is empty"},
      {"rng_seed of the wrong type",
       [](ValidPlan &p) {
         p.builder.addTensor("rng", DType::I64, {3}, plan::Role::RngSeed);
       },
       "an rng_seed tensor must be i64[2] (seed, offset), not i64[3]"},
      {"step of the wrong type",
       [](ValidPlan &p) {
         p.builder.addTensor("step", DType::I32, {}, plan::Role::Step);
       },
       "a step tensor must be i64[], not i32[]"},
      {"lr of the wrong type",
       [](ValidPlan &p) {
         p.builder.addTensor("lr", DType::F32, {1}, plan::Role::Lr);
       },
       "an lr tensor must be f32[] or f64[], not f32[1]"},
      {"temporary with external storage",
       [](ValidPlan &p) {
         p.builder.addTensor("t", DType::F32, {1}, plan::Role::Temporary);
       },
       "tensors[7] 't': role temporary needs arena storage"},
      {"kernel image index out of range",
       [](ValidPlan &p) {
         p.builder.addKernelLaunch(p.forward, {3, "add_f32", {p.x}});
       },
       "functions[0] 'forward'.steps[4].image: image index 3 is out of range "
       "(the plan has 1 images)"},
      {"empty symbol",
       [](ValidPlan &p) {
         p.builder.addKernelLaunch(p.forward, {0, "", {}});
       },
       "kernels[1]: symbol is empty"},
      {"launch with fewer arguments than its kernel takes",
       [](ValidPlan &p) {
         p.builder.addKernelLaunch(p.forward, {0, "add_f32", {p.hidden}});
       },
       "functions[0] 'forward'.steps[4].args: 1 arguments, but kernel "
       "'add_f32' takes 4"},
      {"launch argument of another size than its kernel takes",
       [](ValidPlan &p) {
         p.builder.addKernelLaunch(
             p.forward, {0, "add_f32", {p.hidden, p.hidden, p.y, p.hidden}});
       },
       "functions[0] 'forward'.steps[4].args[3] 'h': tensor of 32 bytes, but "
       "kernel 'add_f32' takes 8 bytes there"},
      {"kernel output that the function may not write",
       [](ValidPlan &p) {
         KernelLaunchDesc launch{0, "scale", {p.x, p.w}};
         launch.outputs = 1;
         p.builder.addKernelLaunch(p.forward, launch);
       },
       "functions[0] 'forward'.steps[4].args[1] 'w': the step writes a tensor "
       "that is neither a temporary nor an output of the function"},
      {"outer extent below one",
       [](ValidPlan &p) {
         KernelLaunchDesc launch{0, "add_f32", {p.x}};
         launch.outerExtent = 0;
         p.builder.addKernelLaunch(p.forward, launch);
       },
       "functions[0] 'forward'.steps[4].outer_extent: outer extent 0 is not "
       "positive"},
      {"kernel argument out of range",
       [](ValidPlan &p) {
         p.builder.addKernelLaunch(p.forward, {0, "k", {p.x, 12}}, "m.cpp:3");
       },
       "functions[0] 'forward'.steps[4] (m.cpp:3).args[1]: tensor index 12 is "
       "out of range"},
      {"image format for another target",
       [](ValidPlan &p) {
         p.builder.addImage(plan::ImageFormat::Cubin, {1, 2, 3});
       },
       "images[1]: format cubin cannot run on target cpu"},
      {"empty image",
       [](ValidPlan &p) {
         p.builder.addImage(plan::ImageFormat::ElfSharedObject, {});
       },
       "images[1]: image is empty"},
      {"duplicate function name",
       [](ValidPlan &p) { p.builder.addFunction("forward", {}, {}); },
       "functions[1] 'forward': duplicate name (also functions[0])"},
      {"empty function name",
       [](ValidPlan &p) { p.builder.addFunction("", {}, {}); },
       "functions[1]: name is empty"},
      {"output tensor as input",
       [](ValidPlan &p) { p.builder.addFunction("g", {p.y}, {}); },
       "functions[1] 'g'.inputs[0] 'y': role output cannot be a function "
       "input"},
      {"temporary as output",
       [](ValidPlan &p) { p.builder.addFunction("g", {}, {p.hidden}); },
       "functions[1] 'g'.outputs[0] 'h': role temporary cannot be a function "
       "output"},
      {"input updated in place without being an input",
       [](ValidPlan &p) { p.builder.addFunction("g", {}, {p.x}); },
       "functions[1] 'g'.outputs[0] 'x': an input tensor updated in place must "
       "also be an input of the function"},
      {"input listed twice",
       [](ValidPlan &p) {
         p.builder.addFunction("g", {p.x, p.x}, {});
       },
       "functions[1] 'g'.inputs[1] 'x': listed twice"},
      {"output listed twice",
       [](ValidPlan &p) {
         p.builder.addFunction("g", {}, {p.y, p.y});
       },
       "functions[1] 'g'.outputs[1] 'y': listed twice"},
      {"step reads a tensor the function does not take",
       [](ValidPlan &p) {
         uint32_t g = p.builder.addFunction("g", {}, {p.y});
         p.builder.addCopy(g, p.x, p.y, 4);
       },
       "functions[1] 'g'.steps[0].src 'x': the step reads a tensor that is "
       "neither a temporary nor an input or output of the function"},
      {"step writes an input",
       [](ValidPlan &p) { p.builder.addFill(p.forward, p.x, 1); },
       "functions[0] 'forward'.steps[4].dst 'x': the step writes a tensor that "
       "is neither a temporary nor an output of the function"},
      {"gemm writes a parameter it does not output",
       [](ValidPlan &p) {
         GemmDesc gemm = p.gemm();
         gemm.c = p.momentum;
         p.builder.addGemm(p.forward, gemm);
       },
       "steps[4].c 'w.momentum': the step writes a tensor"},
      {"copy larger than its source",
       [](ValidPlan &p) { p.builder.addCopy(p.forward, p.x, p.y, 28); },
       "functions[0] 'forward'.steps[4]: copy of 28 bytes exceeds 'x' (24 "
       "bytes)"},
      {"fill value not representable",
       [](ValidPlan &p) { p.builder.addFill(p.forward, p.count, 2.5); },
       "functions[0] 'forward'.steps[4]: fill value 2.5 is not representable "
       "in i64"},
      {"fill value out of the i64 range",
       [](ValidPlan &p) { p.builder.addFill(p.forward, p.count, 0x1p63); },
       "is not representable in i64"},
      {"fill with NaN into an integer",
       [](ValidPlan &p) { p.builder.addFill(p.forward, p.count, NAN); },
       "fill value nan is not representable in i64"},
      {"gemm with k inconsistent with a",
       [](ValidPlan &p) {
         GemmDesc gemm = p.gemm();
         gemm.k = 4;
         p.builder.addGemm(p.forward, gemm, "mlp.cpp:20");
       },
       "functions[0] 'forward'.steps[4] (mlp.cpp:20).a: 'x' is f32[2, 3] but "
       "its rows must hold 4 elements"},
      {"gemm with m inconsistent with a",
       [](ValidPlan &p) {
         GemmDesc gemm = p.gemm();
         gemm.m = 3;
         p.builder.addGemm(p.forward, gemm);
       },
       "steps[4].a: 'x' is f32[2, 3] but 1 batches of 3x3 with stride 0 need "
       "9 elements"},
      {"gemm with n inconsistent with c",
       [](ValidPlan &p) {
         GemmDesc gemm = p.gemm();
         gemm.n = 3;
         p.builder.addGemm(p.forward, gemm);
       },
       "steps[4].b: 'w' is f32[3, 4] but its rows must hold 3 elements"},
      {"gemm batches beyond the operand",
       [](ValidPlan &p) {
         GemmDesc gemm = p.gemm();
         gemm.batchCount = 2;
         gemm.strideC = 8;
         p.builder.addGemm(p.forward, gemm);
       },
       "steps[4].c: 'h' is f32[2, 4] but 2 batches of 2x4 with stride 8 need "
       "16 elements"},
      {"gemm batches of c overlap",
       [](ValidPlan &p) {
         GemmDesc gemm = p.gemm();
         gemm.batchCount = 2;
         p.builder.addGemm(p.forward, gemm);
       },
       "steps[4].stride_c: 0 is less than m * n = 8, so the batches of c would "
       "overlap"},
      {"gemm with m = 0",
       [](ValidPlan &p) {
         GemmDesc gemm = p.gemm();
         gemm.m = 0;
         p.builder.addGemm(p.forward, gemm);
       },
       "steps[4].m: 0 is not in [1, 2147483647]"},
      {"gemm with a negative stride",
       [](ValidPlan &p) {
         GemmDesc gemm = p.gemm();
         gemm.strideB = -1;
         p.builder.addGemm(p.forward, gemm);
       },
       "steps[4].stride_b: -1 is negative"},
      {"gemm writing its own operand",
       [](ValidPlan &p) {
         GemmDesc gemm = p.gemm();
         gemm.a = p.hidden;
         p.builder.addGemm(p.forward, gemm);
       },
       "steps[4].c: c must not be the same tensor as a"},
      {"gemm on integers",
       [](ValidPlan &p) {
         GemmDesc gemm = p.gemm();
         gemm.a = p.count;
         p.builder.addGemm(p.forward, gemm);
       },
       "steps[4].a: gemm supports f32 and f64, not i64"},
      {"gemm with mixed dtypes",
       [](ValidPlan &p) {
         uint32_t w64 =
             p.builder.addTensor("w64", DType::F64, {3, 4}, plan::Role::Input);
         uint32_t g = p.builder.addFunction("g", {p.x, w64}, {p.y});
         GemmDesc gemm = p.gemm();
         gemm.b = w64;
         gemm.c = p.y;
         p.builder.addGemm(g, gemm);
       },
       "steps[0].b: dtype f64 differs from a's dtype f32"},
      {"bias epilogue without a bias",
       [](ValidPlan &p) {
         GemmDesc gemm = p.gemm();
         gemm.epilogue = plan::Epilogue::BiasGelu;
         p.builder.addGemm(p.forward, gemm);
       },
       "steps[4].bias: epilogue bias_gelu needs a bias"},
      {"bias without a bias epilogue",
       [](ValidPlan &p) {
         GemmDesc gemm = p.gemm();
         gemm.bias = p.bias;
         gemm.epilogue = plan::Epilogue::Relu;
         p.builder.addGemm(p.forward, gemm);
       },
       "steps[4].bias: a bias is given but epilogue relu adds none"},
      {"dgelu without aux",
       [](ValidPlan &p) {
         GemmDesc gemm = p.gemm();
         gemm.epilogue = plan::Epilogue::DGelu;
         p.builder.addGemm(p.forward, gemm);
       },
       "steps[4].aux: epilogue dgelu needs aux tensor"},
      {"aux without dgelu",
       [](ValidPlan &p) {
         GemmDesc gemm = p.gemm();
         gemm.aux = p.x;
         p.builder.addGemm(p.forward, gemm);
       },
       "steps[4].aux: epilogue none takes no aux tensor"},
      {"aux smaller than m x n",
       [](ValidPlan &p) {
         GemmDesc gemm = p.gemm();
         gemm.aux = p.bias;
         gemm.epilogue = plan::Epilogue::DGelu;
         p.builder.addGemm(p.forward, gemm);
       },
       "steps[4].aux: 'b'"},
      {"bias of the wrong length",
       [](ValidPlan &p) {
         GemmDesc gemm = p.gemm();
         gemm.bias = p.x;
         gemm.epilogue = plan::Epilogue::Bias;
         p.builder.addGemm(p.forward, gemm);
       },
       "steps[4].bias: 'x' has 6 elements but n is 4"},
  };
  for (const BuilderCase &testCase : cases) {
    ValidPlan valid;
    testCase.change(valid);
    std::string message = loadError(valid.builder);
    EXPECT_EQ(message.rfind("plan file '<memory>': ", 0), 0u) << message;
    EXPECT_TRUE(contains(message, testCase.expected)) << testCase.description;
  }
}

struct MutationCase {
  const char *description;
  std::function<void(plan::Plan &)> mutate;
  const char *expected;
};

// Fields the builder cannot get wrong, corrupted in the FlatBuffer itself.
TEST(PlanFileTest, CorruptedFieldsNameTheField) {
  const MutationCase cases[] = {
      {"invalid dtype",
       [](plan::Plan &root) {
         mutableTensor(root, 0).mutate_dtype(static_cast<plan::DType>(42));
       },
       "tensors[0] 'x': dtype 42 is not a valid dtype"},
      {"invalid role",
       [](plan::Plan &root) {
         mutableTensor(root, 1).mutate_role(static_cast<plan::Role>(99));
       },
       "tensors[1] 'w': role 99 is not a valid role"},
      {"invalid storage",
       [](plan::Plan &root) {
         mutableTensor(root, 1).mutate_storage(static_cast<plan::Storage>(5));
       },
       "tensors[1] 'w': storage 5 is not a valid storage"},
      {"parameter in the arena",
       [](plan::Plan &root) {
         mutableTensor(root, 1).mutate_storage(plan::Storage::Arena);
       },
       "tensors[1] 'w': role parameter needs external storage"},
      {"external tensor with an arena offset",
       [](plan::Plan &root) { mutableTensor(root, 1).mutate_arena_offset(64); },
       "tensors[1] 'w': external tensor has arena_offset 64"},
      {"negative dimension",
       [](plan::Plan &root) {
         mutableTensor(root, 0).mutable_shape()->Mutate(0, -2);
       },
       "tensors[0] 'x': shape [-2, 3]: dimension 0 is negative"},
      {"launch argument swapped for a tensor of another size",
       [](plan::Plan &root) {
         auto *launch =
             static_cast<plan::KernelLaunch *>(root.mutable_functions()
                                                   ->GetMutableObject(0)
                                                   ->mutable_steps()
                                                   ->GetMutableObject(2)
                                                   ->mutable_kind());
         launch->mutable_args()->Mutate(3, 0);
       },
       "functions[0] 'forward'.steps[2] (mlp.cpp:11).args[3] 'x': tensor of "
       "24 bytes, but kernel 'add_f32' takes 8 bytes there"},
      {"launch of a kernel the plan has no signature for",
       [](plan::Plan &root) {
         auto *symbol = root.mutable_kernels()->GetMutableObject(0)->symbol();
         const_cast<char *>(symbol->c_str())[0] = 'b';
       },
       "functions[0] 'forward'.steps[2] (mlp.cpp:11).symbol: kernel 'add_f32' "
       "has no signature in the plan's kernel table"},
      {"bytes inconsistent with the shape",
       [](plan::Plan &root) { mutableTensor(root, 0).mutate_bytes(20); },
       "tensors[0] 'x': bytes is 20 but f32[2, 3] needs 24"},
      {"invalid target",
       [](plan::Plan &root) {
         root.mutable_header()->mutate_target(static_cast<plan::Target>(7));
       },
       "header.target: 7 is not a valid target"},
      {"image for another target",
       [](plan::Plan &root) {
         root.mutable_images()->GetMutableObject(0)->mutate_target(
             plan::Target::Cuda);
       },
       "images[0]: target cuda differs from the plan's target cpu"},
      {"invalid image format",
       [](plan::Plan &root) {
         root.mutable_images()->GetMutableObject(0)->mutate_format(
             static_cast<plan::ImageFormat>(9));
       },
       "images[0]: format 9 is not a valid image format"},
      {"invalid epilogue",
       [](plan::Plan &root) {
         plan::Step &step = *root.mutable_functions()
                                 ->GetMutableObject(0)
                                 ->mutable_steps()
                                 ->GetMutableObject(0);
         static_cast<plan::Gemm *>(step.mutable_kind())
             ->mutate_epilogue(static_cast<plan::Epilogue>(17));
       },
       "functions[0] 'forward'.steps[0] (mlp.cpp:10).epilogue: 17 is not a "
       "valid epilogue"},
      {"arena too small for a temporary",
       [](plan::Plan &root) { root.mutable_memory()->mutate_arena_bytes(70); },
       "tensors[5] 'count': arena range [64, 64 + 8) exceeds arena_bytes 70"},
  };
  for (const MutationCase &testCase : cases) {
    std::string message = errorAfterMutation(testCase.mutate);
    EXPECT_EQ(message.rfind("plan file '<memory>': ", 0), 0u) << message;
    EXPECT_TRUE(contains(message, testCase.expected)) << testCase.description;
  }
}

// Found by plan_loader_fuzzer: the Verifier passes a [long] vector whose
// elements are only 4-byte aligned. Moving the shape offset of tensor 0 on by
// 4 bytes makes the vector start inside its old first element.
TEST(PlanFileTest, MisalignedShapeVector) {
  std::vector<uint8_t> payload = ValidPlan().builder.payload();
  auto *table = reinterpret_cast<flatbuffers::Table *>(
      &mutableTensor(*plan::GetMutablePlan(payload.data()), 0));
  uint8_t *field = reinterpret_cast<uint8_t *>(table) +
                   table->GetOptionalFieldOffset(plan::Tensor::VT_SHAPE);
  flatbuffers::WriteScalar<flatbuffers::uoffset_t>(
      field, flatbuffers::ReadScalar<flatbuffers::uoffset_t>(field) + 4);
  EXPECT_TRUE(contains(
      loadError(wrapPlanPayload(payload.data(), payload.size())),
      "plan file '<memory>': tensors[0] 'x': shape vector is not 8-byte "
      "aligned"));
}

TEST(PlanFileTest, InvalidStepKind) {
  flatbuffers::FlatBufferBuilder fbb;
  auto header = plan::CreateHeaderDirect(fbb, kPlanFormatVersion);
  std::vector<flatbuffers::Offset<plan::Tensor>> tensors;
  auto memory = plan::CreateMemoryPlan(fbb, 0, 64);
  std::vector<flatbuffers::Offset<plan::Step>> steps = {
      plan::CreateStepDirect(fbb, static_cast<plan::StepKind>(9),
                             plan::CreateFill(fbb, 0, 0).Union())};
  std::vector<uint32_t> none;
  std::vector<flatbuffers::Offset<plan::Function>> functions = {
      plan::CreateFunctionDirect(fbb, "f", &none, &none, &steps)};
  std::vector<flatbuffers::Offset<plan::KernelImage>> images;
  std::vector<flatbuffers::Offset<plan::KernelSignature>> kernels;
  plan::FinishPlanBuffer(fbb,
                         plan::CreatePlanDirect(fbb, header, &tensors, memory,
                                                &functions, &images, &kernels));
  EXPECT_TRUE(contains(
      loadError(wrapPlanPayload(fbb.GetBufferPointer(), fbb.GetSize())),
      "functions[0] 'f'.steps[0]: step kind 9 is not a valid step kind"));
}

/// An ELF header for CUDA (machine 190) with no sections or segments.
std::vector<uint8_t> emptyCubin() {
  std::vector<uint8_t> bytes(64, 0);
  const uint8_t ident[] = {0x7f, 'E', 'L', 'F', 2, 1, 1};
  std::memcpy(bytes.data(), ident, sizeof(ident));
  bytes[18] = 190;
  bytes[52] = 64; // e_ehsize
  return bytes;
}

TEST(PlanFileTest, CudaPlans) {
  PlanHeader header = testHeader();
  header.target = plan::Target::Cuda;
  PlanBuilder builder(header);
  uint32_t x = builder.addTensor("x", DType::F32, {4}, plan::Role::Input);
  builder.addImage(plan::ImageFormat::Cubin, emptyCubin(), 90);
  uint32_t f = builder.addFunction("f", {x}, {});
  KernelLaunchDesc launch{0, "k", {x}, {2, 1, 1}, {128, 1, 1}, 1024};
  builder.addKernelLaunch(f, launch);
  PlanFile planFile = planOf(builder);
  const plan::KernelLaunch &loaded = *planFile.plan()
                                          .functions()
                                          ->Get(0)
                                          ->steps()
                                          ->Get(0)
                                          ->kind_as_KernelLaunch();
  EXPECT_EQ(loaded.grid()->x(), 2u);
  EXPECT_EQ(loaded.block()->x(), 128u);
  EXPECT_EQ(loaded.shared_memory_bytes(), 1024u);
  std::ostringstream text;
  describePlan(planFile, text);
  EXPECT_TRUE(contains(text.str(), "grid (2, 1, 1) block (128, 1, 1) shared "
                                   "1024 B"));

  launch.grid = {1, 0, 1};
  builder.addKernelLaunch(f, launch);
  EXPECT_TRUE(contains(loadError(builder),
                       "functions[0] 'f'.steps[1].grid: a CUDA launch needs "
                       "three non-zero dimensions"));
  PlanBuilder elfOnCuda(header);
  elfOnCuda.addImage(plan::ImageFormat::ElfSharedObject, {1});
  EXPECT_TRUE(contains(loadError(elfOnCuda),
                       "images[0]: format elf-so cannot run on target cuda"));
}

/// emptyCubin() as CUDA 13's ptxas writes it for `chip` (OS ABI 0x41, the
/// chip in bits 8-15 of e_flags).
std::vector<uint8_t> emptyCubinFor(uint32_t chip) {
  std::vector<uint8_t> bytes = emptyCubin();
  bytes[7] = 0x41;
  uint32_t flags = (chip << 8) | 0x4;
  std::memcpy(bytes.data() + 48, &flags, sizeof(flags));
  return bytes;
}

TEST(PlanFileTest, CudaImagesForSeveralChips) {
  PlanHeader header = testHeader();
  header.target = plan::Target::Cuda;
  // The session's choice: a cubin of the device's major version, the
  // newest not above the device's minor; else the newest PTX not above the
  // device; else none.
  PlanBuilder builder(header);
  uint32_t x = builder.addTensor("x", DType::F32, {4}, plan::Role::Input);
  builder.addImage(plan::ImageFormat::Cubin, emptyCubinFor(80), 80);
  builder.addImage(plan::ImageFormat::Cubin, emptyCubinFor(89), 89);
  builder.addImage(plan::ImageFormat::Cubin, emptyCubinFor(90), 90);
  builder.addImage(plan::ImageFormat::Ptx, {'.'}, 90);
  uint32_t f = builder.addFunction("f", {x}, {});
  builder.addKernelLaunch(f, {0, "k", {x}, {1, 1, 1}, {32, 1, 1}, 0});
  PlanFile planFile = planOf(builder);
  const plan::Plan &plan = planFile.plan();
  const std::pair<uint32_t, std::optional<uint32_t>> choices[] = {
      {75, std::nullopt}, {80, 0u}, {86, 0u},  {87, 0u},
      {89, 1u},           {90, 2u}, {100, 3u}, {120, 3u}};
  for (auto [device, image] : choices) {
    SCOPED_TRACE("sm_" + std::to_string(device));
    EXPECT_EQ(chooseCudaImage(plan, device), image);
  }
  EXPECT_EQ(chooseCudaImage(plan, 90, /*ptxOnly=*/true), 3u);
  EXPECT_EQ(chooseCudaImage(plan, 89, /*ptxOnly=*/true), std::nullopt);
  EXPECT_EQ(cudaImageList(plan),
            "sm_80 cubin, sm_89 cubin, sm_90 cubin, sm_90 ptx");
  std::ostringstream text;
  describePlan(planFile, text);
  EXPECT_TRUE(contains(text.str(), "#1 cuda cubin for sm_89, 64 B"));
  EXPECT_TRUE(contains(text.str(), "#3 cuda ptx for sm_90, 1 B"));

  // The recorded chip is checked against the cubin's own header, and must
  // be a chip's; one chip has one cubin; launches name image 0.
  auto imageError = [&](plan::ImageFormat format, std::vector<uint8_t> bytes,
                        uint32_t chip) {
    PlanBuilder one(header);
    one.addImage(plan::ImageFormat::Ptx, {'.'}, 80);
    one.addImage(format, std::move(bytes), chip);
    return loadError(one);
  };
  EXPECT_TRUE(contains(
      imageError(plan::ImageFormat::Cubin, emptyCubinFor(90), 80),
      "images[1]: the cubin is for sm_90, but the plan records sm_80"));
  EXPECT_TRUE(contains(imageError(plan::ImageFormat::Ptx, {'.'}, 0),
                       "images[1]: compute capability 0 is not a chip's"));
  EXPECT_TRUE(contains(imageError(plan::ImageFormat::Ptx, {'.'}, 80),
                       "images[1]: a second ptx for sm_80 (images[0])"));
  PlanBuilder cpu(testHeader());
  cpu.addImage(plan::ImageFormat::ElfSharedObject, {1}, 90);
  EXPECT_TRUE(contains(loadError(cpu), "images[0]: a CPU image has no "
                                       "compute capability, got 90"));
  builder.addKernelLaunch(f, {2, "k", {x}, {1, 1, 1}, {32, 1, 1}, 0});
  EXPECT_TRUE(contains(loadError(builder),
                       "steps[1].image: a CUDA launch names image 0"));
}

TEST(PlanFileTest, CudaLaunchesStayWithinCudaLimits) {
  PlanHeader header = testHeader();
  header.target = plan::Target::Cuda;
  struct Case {
    std::array<uint32_t, 3> grid;
    std::array<uint32_t, 3> block;
    std::string error;
  };
  const Case cases[] = {
      {{1, 1, 1}, {1024, 1, 1}, ""},
      {{2147483647, 65535, 65535}, {8, 8, 16}, ""},
      {{1, 1, 1},
       {32, 32, 2},
       "steps[0].block: block (32, 32, 2) has 2048 threads; CUDA allows at "
       "most 1024 (x and y up to 1024, z up to 64)"},
      {{1, 1, 1}, {1, 1, 65}, "steps[0].block: block (1, 1, 65) has 65"},
      {{1, 1, 1}, {1025, 1, 1}, "steps[0].block: block (1025, 1, 1)"},
      {{1, 65536, 1},
       {1, 1, 1},
       "steps[0].grid: grid (1, 65536, 1) exceeds CUDA's limits (x below "
       "2^31, y and z up to 65535)"},
      {{2147483648u, 1, 1}, {1, 1, 1}, "steps[0].grid: grid (2147483648"},
  };
  for (const Case &c : cases) {
    PlanBuilder builder(header);
    uint32_t x = builder.addTensor("x", DType::F32, {4}, plan::Role::Input);
    builder.addImage(plan::ImageFormat::Ptx, {'.'}, 90);
    uint32_t f = builder.addFunction("f", {x}, {});
    builder.addKernelLaunch(f, {0, "k", {x}, c.grid, c.block, 0});
    if (c.error.empty())
      EXPECT_NO_THROW(planOf(builder));
    else
      EXPECT_TRUE(contains(loadError(builder), c.error));
  }
}

TEST(PlanFileTest, CubinsAreCheckedBeforeTheDriverReadsThem) {
  PlanHeader header = testHeader();
  header.target = plan::Target::Cuda;
  auto cubinError = [&](std::vector<uint8_t> cubin) {
    PlanBuilder builder(header);
    builder.addImage(plan::ImageFormat::Cubin, std::move(cubin), 90);
    return loadError(builder);
  };
  auto withU16 = [](std::vector<uint8_t> bytes, size_t at, uint16_t value) {
    std::memcpy(bytes.data() + at, &value, sizeof(value));
    return bytes;
  };
  auto withU64 = [](std::vector<uint8_t> bytes, size_t at, uint64_t value) {
    std::memcpy(bytes.data() + at, &value, sizeof(value));
    return bytes;
  };
  std::vector<uint8_t> cubin = emptyCubin();
  EXPECT_TRUE(contains(cubinError({1, 2, 3}),
                       "images[0]: a cubin must be a little-endian 64-bit ELF "
                       "file"));
  EXPECT_TRUE(contains(cubinError(withU16(cubin, 18, 62)),
                       "images[0]: ELF machine 62 is not CUDA (190)"));

  // One section header at offset 64, describing bytes [0, 128).
  std::vector<uint8_t> oneSection =
      withU16(withU16(withU64(cubin, 40, 64), 58, 64), 60, 1);
  oneSection.resize(128, 0);
  oneSection = withU64(withU64(oneSection, 64 + 24, 0), 64 + 32, 128);
  PlanBuilder valid(header);
  valid.addImage(plan::ImageFormat::Cubin, oneSection, 90);
  EXPECT_NO_THROW(planOf(valid));
  EXPECT_TRUE(contains(cubinError(withU64(oneSection, 64 + 32, 129)),
                       "images[0]: ELF section 0 lies outside the 128-byte "
                       "image"));
  EXPECT_TRUE(contains(cubinError(withU64(oneSection, 64 + 24, ~0ull)),
                       "ELF section 0 lies outside"));
  EXPECT_TRUE(contains(cubinError(withU16(oneSection, 60, 2)),
                       "images[0]: ELF section headers lie outside the "
                       "128-byte image"));
  EXPECT_TRUE(contains(cubinError(withU64(oneSection, 40, 0xffffffffffffffc0)),
                       "ELF section headers lie outside"));
  // A section without bytes in the file (SHT_NOBITS) may be any size.
  std::vector<uint8_t> noBits = withU64(oneSection, 64 + 32, 1 << 20);
  noBits[64 + 4] = 8;
  PlanBuilder withNoBits(header);
  withNoBits.addImage(plan::ImageFormat::Cubin, noBits, 90);
  EXPECT_NO_THROW(planOf(withNoBits));
  // One program header at offset 64 whose file bytes end past the image.
  std::vector<uint8_t> oneSegment =
      withU16(withU16(withU64(cubin, 32, 64), 54, 56), 56, 1);
  oneSegment.resize(120, 0);
  oneSegment = withU64(withU64(oneSegment, 64 + 8, 100), 64 + 32, 21);
  EXPECT_TRUE(contains(cubinError(oneSegment),
                       "images[0]: ELF segment 0 lies outside the 120-byte "
                       "image"));
  EXPECT_TRUE(contains(cubinError(withU16(oneSegment, 56, 2)),
                       "ELF program headers lie outside"));
}

TEST(PlanFileTest, CudaGemmsTakeHalfPrecisionAndTf32) {
  ValidPlan p;
  GemmDesc gemm = p.gemm();
  gemm.allowTf32 = true;
  p.builder.addGemm(p.forward, gemm);
  PlanFile planFile = planOf(p.builder);
  const plan::Gemm &loaded =
      *planFile.plan().functions()->Get(0)->steps()->Get(4)->kind_as_Gemm();
  EXPECT_TRUE(loaded.allow_tf32());
  std::ostringstream text;
  describePlan(planFile, text);
  EXPECT_TRUE(contains(text.str(), "h = 1 * x @ w, tf32 allowed"));

  for (plan::Target target : {plan::Target::Cpu, plan::Target::Cuda}) {
    PlanHeader header = testHeader();
    header.target = target;
    PlanBuilder builder(header);
    GemmDesc half;
    half.a = builder.addTensor("a", DType::BF16, {2, 3}, plan::Role::Input);
    half.b = builder.addTensor("b", DType::BF16, {3, 4}, plan::Role::Input);
    half.c = builder.addTensor("c", DType::BF16, {2, 4}, plan::Role::Output);
    half.m = 2;
    half.n = 4;
    half.k = 3;
    uint32_t f = builder.addFunction("f", {half.a, half.b}, {half.c});
    builder.addGemm(f, half);
    if (target == plan::Target::Cuda)
      EXPECT_NO_THROW(planOf(builder));
    else
      EXPECT_TRUE(contains(loadError(builder),
                           "steps[0].a: gemm supports f32 and f64, not bf16"));
  }
}

// An attention step: a forward and a backward of GQA attention in a cuda
// plan, then each invariant of Plan.fbs's Attention table broken once.
TEST(PlanFileTest, AttentionStepsAreCheckedBeforeTheyAreTrusted) {
  struct AttentionPlan {
    PlanBuilder builder;
    uint32_t f;
    AttentionDesc forward, backward;
    explicit AttentionPlan(plan::Target target = plan::Target::Cuda)
        : builder([&] {
            PlanHeader header = testHeader();
            header.target = target;
            return header;
          }()) {
      auto input = [&](const char *name, std::vector<int64_t> shape,
                       DType dtype = DType::BF16) {
        return builder.addTensor(name, dtype, std::move(shape),
                                 plan::Role::Input);
      };
      auto output = [&](const char *name, std::vector<int64_t> shape,
                        DType dtype = DType::BF16) {
        return builder.addTensor(name, dtype, std::move(shape),
                                 plan::Role::Output);
      };
      forward.query = input("q", {2, 4, 8, 16});
      forward.key = input("k", {2, 2, 6, 16});
      forward.value = input("v", {2, 2, 6, 16});
      forward.out = output("o", {2, 4, 8, 16});
      forward.logSumExp = output("lse", {2, 4, 8}, DType::F32);
      forward.batch = 2;
      forward.queryHeads = 4;
      forward.kvHeads = 2;
      forward.queryLength = 8;
      forward.kvLength = 6;
      forward.headDim = 16;
      forward.causal = true;
      forward.scale = 0.25;
      backward = forward;
      backward.outGrad = input("do", {2, 4, 8, 16});
      backward.queryGrad = output("dq", {2, 4, 8, 16});
      backward.keyGrad = output("dk", {2, 2, 6, 16});
      backward.valueGrad = output("dv", {2, 2, 6, 16});
      f = builder.addFunction(
          "f", {forward.query, forward.key, forward.value, *backward.outGrad},
          {forward.out, forward.logSumExp, *backward.queryGrad,
           *backward.keyGrad, *backward.valueGrad});
    }
  };
  {
    AttentionPlan p;
    p.builder.addAttention(p.f, p.forward, "model.cpp:3");
    p.builder.addAttention(p.f, p.backward, "model.cpp:3");
    PlanFile planFile = planOf(p.builder);
    const auto &steps = *planFile.plan().functions()->Get(0)->steps();
    EXPECT_EQ(stepName(planFile, *steps.Get(0)),
              "attention 2x4x8x16 gqa2 kv6 causal");
    EXPECT_EQ(stepName(planFile, *steps.Get(1)),
              "attention backward 2x4x8x16 gqa2 kv6 causal");
    AttentionDesc loaded = attentionDescOf(*steps.Get(1)->kind_as_Attention());
    EXPECT_EQ(loaded.valueGrad, p.backward.valueGrad);
    EXPECT_EQ(loaded.scale, 0.25);
    std::ostringstream text;
    describePlan(planFile, text);
    EXPECT_TRUE(contains(text.str(),
                         "dq, dk, dv = attention_grad(q, k, v, o, do, lse)"));
  }
  struct Case {
    const char *what;
    std::function<void(AttentionPlan &)> apply;
    const char *error;
  };
  std::vector<Case> cases = {
      {"cpu plan", [](AttentionPlan &) {},
       "steps[0] (model.cpp:3): an attention step needs the cuda target"},
      {"zero heads", [](AttentionPlan &p) { p.forward.kvHeads = 0; },
       "steps[0] (model.cpp:3).kv_heads: 0 is not in [1, 2^31 - 1]"},
      {"heads not grouped", [](AttentionPlan &p) { p.forward.queryHeads = 3; },
       "query_heads 3 is not a multiple of kv_heads 2"},
      {"infinite scale", [](AttentionPlan &p) { p.forward.scale = INFINITY; },
       ".scale: the scale is not finite"},
      {"shape not the step's", [](AttentionPlan &p) { p.forward.kvLength = 7; },
       ".key: 'k' has shape [2x2x6x16] but the step needs [2x2x7x16]"},
      {"f32 operand",
       [](AttentionPlan &p) { p.forward.logSumExp = p.forward.out; },
       ".logsumexp: 'o' has shape [2x4x8x16] but the step needs [2x4x8]"},
      {"some gradients only",
       [](AttentionPlan &p) { p.forward.outGrad = p.backward.outGrad; },
       "a backward attention step needs out_grad, query_grad, key_grad and "
       "value_grad together"},
      {"writes an input",
       [](AttentionPlan &p) { p.forward.out = p.forward.query; },
       ".out 'q': the step writes a tensor that is neither a temporary nor "
       "an output"},
      {"output aliases an output",
       [](AttentionPlan &p) {
         p.backward.queryGrad = p.backward.out;
         p.forward = p.backward;
       },
       ".query_grad: is also out"},
  };
  for (const Case &c : cases) {
    AttentionPlan p(std::string(c.what) == "cpu plan" ? plan::Target::Cpu
                                                      : plan::Target::Cuda);
    c.apply(p);
    p.builder.addAttention(p.f, p.forward, "model.cpp:3");
    std::string error = loadError(p.builder);
    EXPECT_TRUE(contains(error, c.error)) << c.what << ": " << error;
  }
}

// A packed attention step (format version 5): q, k and v are one
// token-major tensor [B, S, (Hq + 2 Hkv) D], out and out_grad [B, S, Hq D],
// the gradients one tensor of the packed shape; each invariant broken once.
TEST(PlanFileTest, PackedAttentionStepsAreCheckedBeforeTheyAreTrusted) {
  struct PackedPlan {
    PlanBuilder builder;
    uint32_t f;
    AttentionDesc forward, backward;
    explicit PackedPlan(uint32_t formatVersion = kPlanFormatVersion)
        : builder([&] {
            PlanHeader header = testHeader();
            header.target = plan::Target::Cuda;
            header.formatVersion = formatVersion;
            return header;
          }()) {
      auto tensor = [&](const char *name, std::vector<int64_t> shape,
                        plan::Role role, DType dtype = DType::BF16) {
        return builder.addTensor(name, dtype, std::move(shape), role);
      };
      forward.packed = true;
      forward.query = forward.key = forward.value =
          tensor("qkv", {2, 8, 128}, plan::Role::Input);
      forward.out = tensor("o", {2, 8, 64}, plan::Role::Output);
      forward.logSumExp =
          tensor("lse", {2, 4, 8}, plan::Role::Output, DType::F32);
      forward.batch = 2;
      forward.queryHeads = 4;
      forward.kvHeads = 2;
      forward.queryLength = forward.kvLength = 8;
      forward.headDim = 16;
      forward.causal = true;
      forward.scale = 0.25;
      backward = forward;
      backward.outGrad = tensor("do", {2, 8, 64}, plan::Role::Input);
      backward.queryGrad = backward.keyGrad = backward.valueGrad =
          tensor("dqkv", {2, 8, 128}, plan::Role::Output);
      f = builder.addFunction(
          "f", {forward.query, *backward.outGrad},
          {forward.out, forward.logSumExp, *backward.queryGrad});
    }
  };
  {
    PackedPlan p;
    p.builder.addAttention(p.f, p.forward, "model.cpp:3");
    p.builder.addAttention(p.f, p.backward, "model.cpp:3");
    PlanFile planFile = planOf(p.builder);
    const auto &steps = *planFile.plan().functions()->Get(0)->steps();
    EXPECT_EQ(stepName(planFile, *steps.Get(0)),
              "attention 2x4x8x16 gqa2 causal packed");
    EXPECT_TRUE(attentionDescOf(*steps.Get(1)->kind_as_Attention()).packed);
    std::ostringstream text;
    describePlan(planFile, text);
    EXPECT_TRUE(contains(text.str(), "o, lse = packed_attention(qkv)"));
    EXPECT_TRUE(
        contains(text.str(), "dqkv = packed_attention_grad(qkv, o, do, lse)"));
  }
  struct Case {
    const char *what;
    std::function<void(PackedPlan &)> apply;
    const char *error;
  };
  std::vector<Case> cases = {
      {"cross-attention", [](PackedPlan &p) { p.backward.kvLength = 6; },
       ".packed: packed attention needs query_length == kv_length"},
      {"key elsewhere",
       [](PackedPlan &p) { p.backward.key = *p.backward.outGrad; },
       ".packed: query, key and value must name one packed tensor"},
      {"gradients apart",
       [](PackedPlan &p) { p.backward.valueGrad = p.backward.out; },
       ".packed: query_grad, key_grad and value_grad must name one packed "
       "tensor"},
      {"row width not the step's",
       [](PackedPlan &p) { p.backward.kvHeads = 4; },
       ".query: 'qkv' has shape [2x8x128] but the step needs [2x8x192]"},
      {"head-major out", [](PackedPlan &p) { p.backward.headDim = 32; },
       ".query: 'qkv' has shape [2x8x128] but the step needs [2x8x256]"},
      {"writes its input",
       [](PackedPlan &p) {
         p.backward.queryGrad = p.backward.keyGrad = p.backward.valueGrad =
             p.backward.query;
       },
       ".query_grad 'qkv': the step writes a tensor that is neither a "
       "temporary nor an output"},
  };
  for (const Case &c : cases) {
    PackedPlan p;
    c.apply(p);
    p.builder.addAttention(p.f, p.backward, "model.cpp:3");
    std::string error = loadError(p.builder);
    EXPECT_TRUE(contains(error, c.error)) << c.what << ": " << error;
  }
  PackedPlan old(/*formatVersion=*/4);
  old.builder.addAttention(old.f, old.forward, "model.cpp:3");
  EXPECT_TRUE(contains(loadError(old.builder),
                       ".packed: packed attention needs format version 5"));
}

TEST(PlanFileTest, BuilderRejectsStepsForMissingFunctions) {
  PlanBuilder builder(testHeader());
  EXPECT_TRUE(contains(errorFrom([&] { builder.addFill(3, 0, 1); }),
                       "PlanBuilder: no function #3"));
}

TEST(PlanFileTest, LibraryWorkspaceMustBeAlignedInsideTheArenaAndUnshared) {
  {
    ValidPlan plan;
    plan.builder.setArena(256, 64);
    plan.builder.setWorkspace(128, 128);
    PlanFile loaded = planOf(plan.builder);
    EXPECT_EQ(loaded.plan().memory()->workspace_offset(), 128u);
    EXPECT_EQ(loaded.plan().memory()->workspace_bytes(), 128u);
    std::ostringstream os;
    describePlan(loaded, os);
    EXPECT_TRUE(
        contains(os.str(), "library workspace 128 B at arena [128, 256)"))
        << os.str();
  }
  ValidPlan outside;
  outside.builder.setWorkspace(64, 128);
  EXPECT_TRUE(
      contains(loadError(outside.builder),
               "memory.workspace: [64, 64 + 128) exceeds arena_bytes 128"))
      << loadError(outside.builder);
  ValidPlan misaligned;
  misaligned.builder.setArena(256, 64);
  misaligned.builder.setWorkspace(160, 64);
  EXPECT_TRUE(contains(loadError(misaligned.builder),
                       "offset 160 is not a multiple of the alignment 64"));
  // The temporary "h" occupies [0, 32).
  ValidPlan shared;
  shared.builder.setWorkspace(0, 64);
  EXPECT_TRUE(contains(loadError(shared.builder),
                       "arena range [0, 32) overlaps the workspace [0, 64)"))
      << loadError(shared.builder);
}

} // namespace
