//===- PlanMemoryTest.cpp - Checks of genesis-plan-memory -----------------===//
//
// Random DAG-shaped genesis functions and the MLP and GPT-2 train steps are
// planned by the pass, and each plan is checked by a checker written apart
// from the pass, from the attributes the pass leaves:
//   - every tensor result except a splat constant has an aligned offset
//     inside the arena; genesis.temporary_bytes is the sum of their sizes;
//   - two values share bytes only when their live ranges are disjoint, or
//     the first is an operand of the second's defining op that dies there
//     and the op may overwrite it (elementwise, reshape, optimizer update);
//   - the arena is at least the lower bound: the most bytes of values that
//     are live at once, counted after each op (values defined by it or
//     earlier and used later, and its unused results), none of which may
//     share memory in any plan. As offsets are aligned, each of those values
//     but the one placed highest takes its size rounded up to the
//     alignment, which gives a tighter bound, the aligned lower bound.
// The ratio of the arena to the aligned lower bound is printed.
//
//===----------------------------------------------------------------------===//

#include "dialect/IR/GenesisOps.h"
#include "frontend/Optim.h"
#include "models/gpt2/Gpt2.h"
#include "models/mlp/Mlp.h"
#include "passes/Passes.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include "gtest/gtest.h"

#include <cstdio>
#include <iterator>
#include <random>

using namespace genesis;

namespace {

struct PlanFigures {
  int64_t arenaBytes = 0;
  int64_t temporaryBytes = 0;
  int64_t lowerBound = 0;
  int64_t alignedLowerBound = 0;
  int64_t returnedBytes = 0;
  int64_t values = 0;
};

int64_t bytesOf(mlir::Type type) {
  auto tensor = mlir::cast<mlir::RankedTensorType>(type);
  return tensor.getNumElements() *
         ((tensor.getElementType().getIntOrFloatBitWidth() + 7) / 8);
}

/// `value` read back through reshapes, which the planner aliases.
mlir::Value reshapeRoot(mlir::Value value) {
  while (auto reshape = value.getDefiningOp<ReshapeOp>())
    value = reshape.getOperand();
  return value;
}

bool mayOverwrite(mlir::Operation *op, mlir::Value operand) {
  if (op->hasTrait<mlir::OpTrait::Elementwise>() || mlir::isa<ReshapeOp>(op))
    return true;
  // Each row's gradient is written after the row's logits are read.
  if (mlir::isa<CrossEntropyGradOp>(op))
    return op->getOperand(0) == operand;
  if (!mlir::isa<SgdUpdateOp, SgdMomentumUpdateOp, AdamUpdateOp, AdamWUpdateOp>(
          op))
    return false;
  // Every operand but the trailing lr (and step) scalars.
  unsigned scalars = mlir::isa<SgdUpdateOp>(op) ? 1 : 2;
  for (unsigned i = 0; i + scalars < op->getNumOperands(); ++i)
    if (op->getOperand(i) == operand)
      return true;
  return false;
}

/// Runs genesis-plan-memory on `function` of `module`; returns the remark it
/// emitted.
std::string runPass(mlir::ModuleOp module, llvm::StringRef function) {
  std::string remark;
  mlir::ScopedDiagnosticHandler handler(
      module.getContext(), [&](mlir::Diagnostic &diagnostic) {
        if (diagnostic.getSeverity() == mlir::DiagnosticSeverity::Remark)
          remark = diagnostic.str();
        else
          ADD_FAILURE() << diagnostic.str();
        return mlir::success();
      });
  mlir::PassManager pm(module.getContext());
  GenesisPlanMemoryOptions options;
  options.function = function.str();
  pm.addNestedPass<mlir::func::FuncOp>(createGenesisPlanMemory(options));
  EXPECT_TRUE(mlir::succeeded(pm.run(module)));
  return remark;
}

/// The independent checker (see the file comment).
PlanFigures checkPlan(mlir::func::FuncOp function) {
  constexpr int64_t kAlignment = 64;
  PlanFigures figures;
  auto attr = [&](llvm::StringRef name) {
    auto value = function->getAttrOfType<mlir::IntegerAttr>(name);
    EXPECT_TRUE(value) << name.str();
    return value ? value.getInt() : 0;
  };
  figures.arenaBytes = attr("genesis.arena_bytes");
  int64_t temporaryBytes = attr("genesis.temporary_bytes");

  mlir::Block &block = function.getBody().front();
  llvm::DenseMap<mlir::Operation *, int64_t> index;
  for (auto [i, op] : llvm::enumerate(block))
    index[&op] = i;
  struct Planned {
    mlir::OpResult value;
    int64_t offset, bytes, start, end;
    // Filled right before its first use, as an operand of that op.
    bool filled;
  };
  // Updates of an argument (a returned value named as an argument, of its
  // type, computed after every other read of the argument by an op that is
  // not a fusion with a reduction) are written into the argument's tensor:
  // no buffer.
  llvm::DenseSet<mlir::Value> updates;
  auto returnOp = mlir::cast<mlir::func::ReturnOp>(block.getTerminator());
  for (auto [r, value] : llvm::enumerate(returnOp.getOperands())) {
    auto name =
        function.getResultAttrOfType<mlir::StringAttr>(r, "genesis.name");
    mlir::Operation *producer = value.getDefiningOp();
    bool reduces = false;
    if (producer)
      producer->walk([&](mlir::Operation *inner) {
        reduces |= mlir::isa<ReduceSumOp, ReduceMaxOp, ReduceMinOp>(inner);
      });
    if (!name || !producer || reduces || updates.contains(value))
      continue;
    for (mlir::BlockArgument argument : block.getArguments()) {
      auto argumentName = function.getArgAttrOfType<mlir::StringAttr>(
          argument.getArgNumber(), "genesis.name");
      if (argumentName != name || argument.getType() != value.getType())
        continue;
      bool readLater = llvm::any_of(argument.getUsers(), [&](auto *user) {
        return index[block.findAncestorOpInBlock(*user)] > index[producer];
      });
      if (!readLater)
        updates.insert(value);
    }
  }
  std::vector<Planned> planned;
  for (mlir::Operation &op : block) {
    if (op.getNumResults() == 0)
      continue;
    auto offsets = op.getAttrOfType<mlir::DenseI64ArrayAttr>("genesis.offsets");
    if (!offsets ||
        offsets.size() != static_cast<int64_t>(op.getNumResults())) {
      ADD_FAILURE() << "no offset per result on "
                    << op.getName().getStringRef().str();
      continue;
    }
    for (mlir::OpResult result : op.getResults()) {
      auto constant = mlir::dyn_cast<ConstantOp>(op);
      bool splat = constant && constant.getValue().isSplat();
      // A splat constant gets a buffer when an op kernel (not a fusion)
      // reads it and it is not returned; it is filled at its first use.
      bool returned = false, readByOpKernel = false;
      for (mlir::Operation *user : result.getUsers()) {
        returned |= mlir::isa<mlir::func::ReturnOp>(user);
        readByOpKernel |= !mlir::isa<FusionOp>(user);
      }
      bool plannedSplat = splat && readByOpKernel && !returned;
      int64_t offset = offsets[result.getResultNumber()];
      EXPECT_EQ(offset >= 0,
                (!splat || plannedSplat) && !updates.contains(result))
          << op.getName().getStringRef().str();
      if (offset < 0)
        continue;
      int64_t bytes = bytesOf(result.getType());
      EXPECT_EQ(offset % kAlignment, 0);
      EXPECT_LE(offset + bytes, figures.arenaBytes);
      int64_t start = plannedSplat ? INT64_MAX : index[&op];
      int64_t end = index[&op];
      for (mlir::Operation *user : result.getUsers()) {
        int64_t at = index[block.findAncestorOpInBlock(*user)];
        start = std::min(start, at);
        end = std::max(end, at);
      }
      planned.push_back({result, offset, bytes, start, end, plannedSplat});
      figures.temporaryBytes += bytes;
    }
  }
  EXPECT_EQ(figures.temporaryBytes, temporaryBytes);
  figures.values = planned.size();

  for (size_t b = 0; b < planned.size(); ++b)
    for (size_t a = 0; a < b; ++a) {
      const Planned &first = planned[a], &second = planned[b];
      bool together = first.start <= second.end && second.start <= first.end;
      bool shareBytes = first.offset < second.offset + second.bytes &&
                        second.offset < first.offset + first.bytes;
      if (!together || !shareBytes)
        continue;
      mlir::Operation *op = second.value.getOwner();
      // Reshapes of one value hold its bytes, whatever their lifetimes.
      bool sameBytes =
          first.offset == second.offset && first.bytes == second.bytes;
      bool inPlace =
          sameBytes &&
          (reshapeRoot(first.value) == reshapeRoot(second.value) ||
           (first.end == second.start && mayOverwrite(op, first.value)));
      EXPECT_TRUE(inPlace)
          << "a result of "
          << first.value.getOwner()->getName().getStringRef().str() << " ["
          << first.start << ", " << first.end << "] at " << first.offset
          << " and one of " << op->getName().getStringRef().str() << " ["
          << second.start << ", " << second.end << "] at " << second.offset
          << " overlap";
    }

  for (int64_t i = 0; i < static_cast<int64_t>(block.getOperations().size());
       ++i) {
    int64_t live = 0, aligned = 0, largestPadding = 0;
    llvm::DenseSet<mlir::Value> counted; // reshapes share their root's bytes
    for (const Planned &value : planned)
      // A value defined at i and never read still takes space at i; an
      // operand dying at i (a filled splat first used there too) may give
      // its bytes to a result of i.
      if (value.start <= i &&
          (value.end > i ||
           (value.end == value.start && value.start == i && !value.filled)) &&
          counted.insert(reshapeRoot(value.value)).second) {
        int64_t padded = llvm::alignTo(value.bytes, kAlignment);
        live += value.bytes;
        aligned += padded;
        largestPadding = std::max(largestPadding, padded - value.bytes);
      }
    figures.lowerBound = std::max(figures.lowerBound, live);
    figures.alignedLowerBound =
        std::max(figures.alignedLowerBound, aligned - largestPadding);
  }
  EXPECT_GE(figures.alignedLowerBound, figures.lowerBound);
  EXPECT_GE(figures.arenaBytes, figures.alignedLowerBound);
  for (mlir::Value value : block.getTerminator()->getOperands())
    if (auto result = mlir::dyn_cast<mlir::OpResult>(value))
      for (const Planned &p : planned)
        if (p.value == result) {
          figures.returnedBytes += p.bytes;
          break;
        }
  return figures;
}

//===----------------------------------------------------------------------===//
// Random functions
//===----------------------------------------------------------------------===//

struct TextValue {
  std::string name;
  std::vector<int64_t> shape;
  std::string element;

  std::string type() const {
    std::string text = "tensor<";
    for (int64_t d : shape)
      text += std::to_string(d) + "x";
    return text + element + ">";
  }
};

/// A random single-block genesis function: elementwise, GEMM, reduction,
/// broadcast, reshape, transpose, cast, constant, fusion and Adam ops on
/// rank-1 and rank-2 shapes, each op reading earlier values; it returns its
/// last value and a few random others.
std::string randomFunction(std::mt19937_64 &rng, int numOps) {
  const int64_t dims[] = {4, 8, 16, 32, 48};
  auto pick = [&](const auto &range) {
    return range[std::uniform_int_distribution<size_t>(0, std::size(range) -
                                                              1)(rng)];
  };
  auto chance = [&](double p) { return std::bernoulli_distribution(p)(rng); };

  std::vector<TextValue> values;
  std::string arguments, body;
  for (int a = 0; a < 3; ++a) {
    values.push_back(
        {"%a" + std::to_string(a), {pick(dims), pick(dims)}, "f32"});
    arguments += values.back().name + ": " + values.back().type() + ", ";
  }
  arguments += "%lr: tensor<f32>, %step: tensor<i64>";

  auto withShape = [&](const TextValue &like) {
    std::vector<TextValue> same;
    for (const TextValue &v : values)
      if (v.shape == like.shape && v.element == like.element)
        same.push_back(v);
    return same;
  };
  int counter = 0;
  auto fresh = [&]() { return "%v" + std::to_string(counter++); };
  const char *unary[] = {"exp", "neg", "tanh", "relu", "sigmoid"};
  const char *binary[] = {"add", "mul", "sub", "max"};

  for (int n = 0; n < numOps; ++n) {
    TextValue v = pick(values);
    std::string name = fresh();
    std::string line;
    TextValue result = {name, v.shape, v.element};
    switch (std::uniform_int_distribution<int>(0, 11)(rng)) {
    case 0:
    case 1:
      line =
          name + " = genesis." + pick(unary) + " " + v.name + " : " + v.type();
      break;
    case 2:
    case 3: {
      TextValue w = pick(withShape(v));
      line = name + " = genesis." + pick(binary) + " " + v.name + ", " +
             w.name + " : " + v.type();
      break;
    }
    case 4: {
      if (v.shape.size() != 2)
        continue;
      std::vector<TextValue> rhs, rhsT;
      for (const TextValue &w : values)
        if (w.shape.size() == 2 && w.element == v.element) {
          if (w.shape[0] == v.shape[1])
            rhs.push_back(w);
          if (w.shape[1] == v.shape[1])
            rhsT.push_back(w);
        }
      bool transposed = rhs.empty() || (!rhsT.empty() && chance(0.5));
      TextValue w = transposed ? pick(rhsT) : pick(rhs);
      line = name + " = genesis.matmul " + v.name + ", " + w.name +
             (transposed ? " transpose_rhs" : "") + " : " + v.type() + ", " +
             w.type();
      result.shape = {v.shape[0], transposed ? w.shape[0] : w.shape[1]};
      break;
    }
    case 5: {
      if (v.shape.size() != 2)
        continue;
      int64_t dim = chance(0.5);
      line = name + " = genesis.reduce_sum " + v.name + " dims [" +
             std::to_string(dim) + "] : " + v.type();
      result.shape = {v.shape[1 - dim]};
      break;
    }
    case 6: {
      if (v.shape.size() != 1)
        continue;
      bool leading = chance(0.5);
      result.shape = leading ? std::vector<int64_t>{pick(dims), v.shape[0]}
                             : std::vector<int64_t>{v.shape[0], pick(dims)};
      line = name + " = genesis.broadcast_in_dim " + v.name + ", [" +
             (leading ? "1" : "0") + "] : " + v.type() + " -> " + result.type();
      break;
    }
    case 7:
      result.shape =
          v.shape.size() == 2
              ? (chance(0.5) ? std::vector<int64_t>{v.shape[0] * v.shape[1]}
                             : std::vector<int64_t>{v.shape[1], v.shape[0]})
              : std::vector<int64_t>{2, v.shape[0] / 2};
      line = name + " = genesis.reshape " + v.name + " : " + v.type() + " -> " +
             result.type();
      break;
    case 8:
      if (v.shape.size() != 2)
        continue;
      result.shape = {v.shape[1], v.shape[0]};
      line = name + " = genesis.transpose " + v.name + ", [1, 0] : " + v.type();
      break;
    case 9:
      result.element = v.element == "f32" ? "f16" : "f32";
      line = name + " = genesis.cast " + v.name + " : " + v.type() + " to " +
             result.type();
      break;
    case 10:
      if (chance(0.5)) {
        line = name + " = genesis.constant dense<0.5> : " + v.type();
      } else {
        result.shape = {4};
        result.element = "f32";
        line = name + " = genesis.constant dense<[1.0, 2.0, 3.0, 4.0]> : " +
               result.type();
      }
      break;
    case 11:
      if (chance(0.5)) {
        std::string t = v.type();
        line = name + " = genesis.fusion " + v.name + " : (" + t + ") -> " + t +
               " {\n  ^bb0(%x: " + t + "):\n    %e = genesis.exp %x : " + t +
               "\n    %f = genesis.mul %e, %x : " + t +
               "\n    genesis.yield %f : " + t + "\n  }";
      } else {
        if (v.element != "f32")
          continue;
        std::string t = v.type();
        std::string operands = v.name;
        for (int k = 0; k < 3; ++k)
          operands += ", " + pick(withShape(v)).name;
        line = name + ":3 = genesis.adam_update " + operands +
               ", %lr, %step : (" + t + ", " + t + ", " + t + ", " + t +
               ", tensor<f32>, tensor<i64>) -> (" + t + ", " + t + ", " + t +
               ")";
        for (int k = 0; k < 3; ++k)
          values.push_back({name + "#" + std::to_string(k), v.shape, "f32"});
        body += "  " + line + "\n";
        continue;
      }
      break;
    }
    body += "  " + line + "\n";
    values.push_back(result);
  }

  std::vector<TextValue> returned = {values.back()};
  for (size_t i = 0; i + 1 < values.size(); ++i)
    if (chance(0.1))
      returned.push_back(values[i]);
  std::string names, types;
  for (const TextValue &v : returned) {
    names += (names.empty() ? "" : ", ") + v.name;
    types += (types.empty() ? "" : ", ") + v.type();
  }
  return "func.func @random(" + arguments + ") -> (" + types + ") {\n" + body +
         "  return " + names + " : " + types + "\n}\n";
}

TEST(PlanMemory, RandomGraphsArePackedSafely) {
  mlir::MLIRContext context;
  context.loadDialect<GenesisDialect, mlir::func::FuncDialect>();
  std::mt19937_64 rng(20240611);
  constexpr int kGraphs = 300;
  double ratioSum = 0, worstRatio = 0, rawRatioSum = 0, savedSum = 0;
  for (int g = 0; g < kGraphs; ++g) {
    std::string text =
        randomFunction(rng, std::uniform_int_distribution<int>(4, 80)(rng));
    SCOPED_TRACE(text);
    mlir::OwningOpRef<mlir::ModuleOp> module =
        mlir::parseSourceString<mlir::ModuleOp>(text, &context);
    ASSERT_TRUE(module);
    runPass(*module, "");
    auto function = module->lookupSymbol<mlir::func::FuncOp>("random");
    PlanFigures figures = checkPlan(function);
    if (figures.lowerBound == 0)
      continue;
    double ratio =
        static_cast<double>(figures.arenaBytes) / figures.alignedLowerBound;
    ratioSum += ratio;
    worstRatio = std::max(worstRatio, ratio);
    rawRatioSum += static_cast<double>(figures.arenaBytes) / figures.lowerBound;
    savedSum +=
        1.0 - static_cast<double>(figures.arenaBytes) / figures.temporaryBytes;
  }
  std::printf("[plan-memory] %d random graphs: arena / aligned lower bound "
              "%.4f on average, %.4f at worst (arena / unaligned lower bound "
              "%.4f on average); arena %.1f%% smaller than the sum of "
              "temporaries on average\n",
              kGraphs, ratioSum / kGraphs, worstRatio, rawRatioSum / kGraphs,
              100 * savedSum / kGraphs);
}

TEST(PlanMemory, VerifierRejectsBrokenPlans) {
  mlir::MLIRContext context;
  context.loadDialect<GenesisDialect, mlir::func::FuncDialect>();
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(R"mlir(
    func.func @diamond(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
      %a = genesis.exp %x : tensor<4x4xf32>
      %b = genesis.matmul %a, %a : tensor<4x4xf32>, tensor<4x4xf32>
      %c = genesis.tanh %a : tensor<4x4xf32>
      %d = genesis.add %b, %c : tensor<4x4xf32>
      return %d : tensor<4x4xf32>
    })mlir",
                                              &context);
  ASSERT_TRUE(module);
  auto function = module->lookupSymbol<mlir::func::FuncOp>("diamond");
  mlir::FailureOr<MemoryPlan> plan = planMemory(function);
  ASSERT_TRUE(mlir::succeeded(plan));
  EXPECT_EQ(plan->arenaBytes, 128);
  EXPECT_EQ(plan->temporaryBytes, 256);
  ASSERT_EQ(plan->buffers.size(), 2u);
  EXPECT_TRUE(mlir::succeeded(verifyMemoryPlan(function, *plan)));

  std::string error;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &d) {
    error = d.str();
    return mlir::success();
  });
  auto broken = [&](auto corrupt) {
    MemoryPlan copy = *plan;
    corrupt(copy);
    error.clear();
    EXPECT_TRUE(mlir::failed(verifyMemoryPlan(function, copy)));
    return error;
  };
  mlir::Block &body = function.getBody().front();
  mlir::Value a = body.front().getResult(0);
  mlir::Value b = std::next(body.begin())->getResult(0);
  // Moves the buffer holding `value` (and every value in it) to `offset`.
  auto move = [](MemoryPlan &p, mlir::Value value, int64_t offset) {
    for (MemoryPlan::Buffer &buffer : p.buffers)
      if (llvm::is_contained(buffer.values, value)) {
        buffer.offset = offset;
        for (mlir::Value shared : buffer.values)
          p.offsets[shared] = offset;
      }
  };
  // The GEMM must not write over its operand, which tanh reads later.
  EXPECT_NE(broken([&](MemoryPlan &p) {
              move(p, b, p.offsets[a]);
            }).find("overlaps a live value defined by 'genesis.exp'"),
            std::string::npos)
      << error;
  EXPECT_NE(broken([&](MemoryPlan &p) {
              move(p, b, p.offsets[b] + 8);
            }).find("misaligned or outside the arena"),
            std::string::npos)
      << error;
  EXPECT_NE(broken([&](MemoryPlan &p) {
              p.offsets[b] = p.offsets[a];
            }).find("holds a value planned elsewhere"),
            std::string::npos)
      << error;
  EXPECT_NE(
      broken([&](MemoryPlan &p) { p.offsets.erase(a); }).find("has no offset"),
      std::string::npos)
      << error;
  EXPECT_NE(broken([&](MemoryPlan &p) {
              p.temporaryBytes = 64;
            }).find("temporaries add up to 256 bytes"),
            std::string::npos)
      << error;
}

//===----------------------------------------------------------------------===//
// Train steps
//===----------------------------------------------------------------------===//

void planTrainStep(const char *what, optim::TrainStep &step) {
  mlir::ModuleOp module = step.module();
  std::string remark = runPass(module, "train_step");
  auto function = module.lookupSymbol<mlir::func::FuncOp>("train_step");
  ASSERT_TRUE(function);
  PlanFigures figures = checkPlan(function);
  EXPECT_EQ(remark, "planned " + std::to_string(figures.temporaryBytes) +
                        " bytes of temporaries into an arena of " +
                        std::to_string(figures.arenaBytes) + " bytes");
  // Unplanned functions are left alone.
  EXPECT_FALSE(module.lookupSymbol<mlir::func::FuncOp>("loss")->hasAttr(
      "genesis.arena_bytes"));
  std::printf("[plan-memory] %s @train_step: %lld values, temporaries %lld "
              "bytes, arena %lld bytes (%.1f%% of the temporaries; returned "
              "values %lld bytes), aligned lower bound %lld bytes (arena / "
              "bound %.4f)\n",
              what, static_cast<long long>(figures.values),
              static_cast<long long>(figures.temporaryBytes),
              static_cast<long long>(figures.arenaBytes),
              100.0 * figures.arenaBytes / figures.temporaryBytes,
              static_cast<long long>(figures.returnedBytes),
              static_cast<long long>(figures.alignedLowerBound),
              static_cast<double>(figures.arenaBytes) /
                  figures.alignedLowerBound);
}

TEST(PlanMemory, MlpTrainStep) {
  // The Fashion-MNIST MLP (784-256-10) at batch 64 with Adam.
  Generator generator(0);
  auto mlp = models::makeMlp(256, generator);
  std::map<std::string, HostArray> batch = {
      {"images", HostArray(DType::F32, {64, 784})},
      {"labels", HostArray(DType::I64, {64})}};
  optim::TrainStep step = optim::compile_train_step(
      *mlp,
      [&](const std::map<std::string, Tensor> &b) {
        return cross_entropy(mlp->forward(b.at("images")), b.at("labels"));
      },
      optim::Adam{}, batch);
  planTrainStep("MLP 784-256-10, batch 64, Adam", step);
}

TEST(PlanMemory, TinyGpt2TrainStep) {
  // Two GPT-2 blocks of width 64 over a byte vocabulary, batch 4 x 32
  // tokens, with AdamW.
  models::Gpt2Config config;
  config.vocab_size = 256;
  config.n_positions = 32;
  config.n_embd = 64;
  config.n_layer = 2;
  config.n_head = 4;
  Generator generator(0);
  models::Gpt2 gpt(config, generator);
  std::map<std::string, HostArray> batch = {
      {"ids", HostArray(DType::I64, {4, 32})},
      {"targets", HostArray(DType::I64, {128})}};
  optim::TrainStep step = optim::compile_train_step(
      gpt,
      [&](const std::map<std::string, Tensor> &b) {
        return cross_entropy(gpt(b.at("ids")).reshape({128, 256}),
                             b.at("targets"));
      },
      optim::AdamW{}, batch);
  planTrainStep("GPT-2 2x64 (vocab 256), batch 4x32, AdamW", step);
}

} // namespace
