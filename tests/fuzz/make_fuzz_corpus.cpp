//===- make_fuzz_corpus.cpp - Seed corpora for the fuzzers ----------------===//
//
// usage: genesis-fuzz-corpus DIR
// Writes DIR/plan_loader_fuzzer/ (valid plans, as whole files and as bare
// payloads) and DIR/safetensors_fuzzer/ (checkpoints and plain files).
//
//===----------------------------------------------------------------------===//

#include "FuzzPlans.h"

#include "runtime/formats/ArrayIO.h"
#include "runtime/formats/AtomicFile.h"
#include "runtime/session/Checkpoint.h"

#include <filesystem>
#include <iostream>

using namespace genesis;

namespace {

/// A two-layer MLP: gemms with epilogues and strides, a fill and a copy
/// through arena temporaries.
PlanBuilder mlpPlan() {
  PlanHeader header;
  header.compilerVersion = "genesis-fuzz";
  header.modelHash = "mlp";
  PlanBuilder builder(header);
  uint32_t x = builder.addTensor("x", DType::F32, {2, 3, 4}, plan::Role::Input);
  uint32_t w =
      builder.addTensor("w", DType::F32, {5, 4}, plan::Role::Parameter);
  uint32_t b = builder.addTensor("b", DType::F32, {5}, plan::Role::Parameter);
  uint32_t h = builder.addTemporary("h", DType::F32, {2, 3, 5}, 0);
  uint32_t scale = builder.addTemporary("scale", DType::F32, {5, 1}, 128);
  uint32_t y =
      builder.addTensor("y", DType::F32, {2, 3, 1}, plan::Role::Output);
  uint32_t copy =
      builder.addTensor("copy", DType::F32, {2, 3, 5}, plan::Role::Output);
  builder.setArena(192);
  uint32_t f = builder.addFunction("forward", {x, w, b}, {y, copy});
  GemmDesc first;
  first.a = x;
  first.b = w;
  first.c = h;
  first.bias = b;
  first.m = 3;
  first.n = 5;
  first.k = 4;
  first.batchCount = 2;
  first.strideA = 12;
  first.strideC = 15;
  first.transposeB = true;
  first.epilogue = plan::Epilogue::BiasGelu;
  builder.addGemm(f, first, "mlp.cpp:1");
  builder.addFill(f, scale, 0.5, "mlp.cpp:2");
  GemmDesc second;
  second.a = h;
  second.b = scale;
  second.c = y;
  second.m = 6;
  second.n = 1;
  second.k = 5;
  second.epilogue = plan::Epilogue::Relu;
  builder.addGemm(f, second, "mlp.cpp:2");
  builder.addCopy(f, h, copy, 120, "mlp.cpp:3");
  return builder;
}

/// Every role, a kernel launch and an image (loaded, never run).
PlanBuilder trainPlan() {
  PlanHeader header;
  header.modelHash = "train";
  PlanBuilder builder(header);
  uint32_t w = builder.addTensor("w", DType::F32, {4}, plan::Role::Parameter);
  uint32_t m =
      builder.addTensor("m", DType::F32, {4}, plan::Role::OptimizerState);
  uint32_t mean =
      builder.addTensor("mean", DType::F16, {4}, plan::Role::Buffer);
  uint32_t g = builder.addTensor("g", DType::F32, {4}, plan::Role::Input);
  uint32_t lr = builder.addTensor("lr", DType::F64, {}, plan::Role::Lr);
  uint32_t step = builder.addTensor("step", DType::I64, {}, plan::Role::Step);
  uint32_t rng = builder.addTensor("rng", DType::I64, {2}, plan::Role::RngSeed);
  uint32_t mask = builder.addTemporary("mask", DType::I1, {4}, 0);
  uint32_t loss = builder.addTensor("loss", DType::F32, {}, plan::Role::Output);
  builder.setArena(64, 16);
  uint32_t image = builder.addImage(plan::ImageFormat::ElfSharedObject,
                                    {0x7f, 'E', 'L', 'F', 2, 1, 1});
  uint32_t f = builder.addFunction("train_step", {w, m, mean, g, lr, step, rng},
                                   {w, m, mean, loss}, true, 4);
  builder.addFill(f, mask, 1);
  builder.addKernelLaunch(f, {image, "adam", {w, m, g, lr, step, rng, mask}},
                          "train.cpp:9");
  return builder;
}

PlanBuilder cudaPlan() {
  PlanHeader header;
  header.target = plan::Target::Cuda;
  PlanBuilder builder(header);
  uint32_t x = builder.addTensor("x", DType::BF16, {8, 8}, plan::Role::Input);
  uint32_t y = builder.addTensor("y", DType::BF16, {8, 8}, plan::Role::Output);
  uint32_t image =
      builder.addImage(plan::ImageFormat::Ptx, {'.', 'v', 'e'}, 90);
  uint32_t f = builder.addFunction("f", {x}, {y});
  builder.addKernelLaunch(f, {image, "k", {x, y}, {8, 1, 1}, {64, 1, 1}, 256});
  return builder;
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::cerr << "usage: genesis-fuzz-corpus DIR\n";
    return 2;
  }
  try {
    std::filesystem::path root = argv[1];
    std::filesystem::path plans = root / "plan_loader_fuzzer";
    std::filesystem::path arrays = root / "safetensors_fuzzer";
    std::filesystem::create_directories(plans);
    std::filesystem::create_directories(arrays);

    const std::pair<const char *, PlanBuilder> builders[] = {
        {"mlp", mlpPlan()},
        {"train", trainPlan()},
        {"cuda", cudaPlan()},
        {"checkpoint", fuzz::checkpointPlan()}};
    for (const auto &[name, builder] : builders) {
      builder.write(plans / (std::string(name) + ".gplan"));
      std::vector<uint8_t> payload = builder.payload();
      writeFileAtomically(plans / (std::string(name) + ".payload"),
                          payload.data(), payload.size());
    }

    std::vector<uint8_t> bytes = fuzz::checkpointPlan().bytes();
    Session session(PlanFile::fromBytes(bytes.data(), bytes.size()));
    session.setStep(3);
    saveCheckpoint(session, arrays / "checkpoint.safetensors");
    NamedArrays mixed;
    mixed.emplace_back("a", HostArray(DType::F16, {2, 3}));
    mixed.emplace_back("flags", HostArray(DType::I1, {3}));
    mixed.emplace_back("ids", HostArray(DType::I64, {}));
    saveSafetensors(arrays / "mixed.safetensors", mixed, {{"format", "pt"}});
    saveSafetensors(arrays / "empty.safetensors", {});
  } catch (const Error &error) {
    std::cerr << "genesis-fuzz-corpus: error: " << error.what() << "\n";
    return 1;
  }
  return 0;
}
