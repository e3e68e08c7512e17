//===- FuseTest.cpp - genesis-fuse keeps every result bit -----------------===//
//
// Runs genesis-fuse on the MLP and tiny GPT-2 train steps and on random DAGs
// of elementwise ops, broadcasts, reductions, splat constants, GEMM patterns
// and non-fusible ops; checks that the module verifies, that every fusible
// op ended in a fusion and none was computed twice, and that the reference
// evaluator's results keep every bit on fresh random inputs.
//
// Bit-exactness: loop and input fusion only regroup ops, which the evaluator
// still runs one by one, so they are exact in every dtype. A GEMM epilogue
// applies to the unrounded product (genesis.library_call's spec, which is
// what cuBLASLt computes), so in f32 a fused bias, scale or activation can
// differ from the separate ops by one rounding; in f64 the evaluator's
// arithmetic is already f64 and the whole pass is exact. Hence f64 compares
// the whole pass against the original and f32 compares it against the
// module after formLibraryCalls alone.
//
//===----------------------------------------------------------------------===//

#include "dialect/Evaluator/Evaluator.h"
#include "dialect/IR/GenesisOps.h"
#include "frontend/Optim.h"
#include "models/gpt2/Gpt2.h"
#include "models/mlp/Mlp.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"

#include "gtest/gtest.h"

#include <cstring>

using namespace genesis;
using namespace mlir;

namespace {

/// Random arguments for `function`: floats in [-1, 1) ([0, 1) for Adam's
/// second moments, [1e-3, 1e-2) for the learning rate), integers in
/// [0, intBound) and the step count in [1, 10).
std::vector<HostArray> randomArguments(func::FuncOp function, uint64_t seed,
                                       int64_t intBound) {
  Generator generator(seed);
  std::vector<HostArray> arguments;
  for (unsigned i = 0; i < function.getNumArguments(); ++i) {
    auto type = cast<RankedTensorType>(function.getArgumentTypes()[i]);
    HostArray array(
        dtypeOf(type.getElementType()),
        std::vector<int64_t>(type.getShape().begin(), type.getShape().end()));
    auto nameAttr = function.getArgAttrOfType<StringAttr>(i, "genesis.name");
    StringRef name = nameAttr ? nameAttr.getValue() : "";
    if (isa<FloatType>(type.getElementType())) {
      if (name == "lr")
        generator.fill_uniform(array, 1e-3, 1e-2);
      else if (name.ends_with("exp_avg_sq"))
        generator.fill_uniform(array, 0.0, 1.0);
      else
        generator.fill_uniform(array, -1.0, 1.0);
    } else {
      for (int64_t j = 0; j < array.numel(); ++j)
        array.setInt(j, name == "step" ? generator.randint(1, 10)
                                       : generator.randint(0, intBound));
    }
    arguments.push_back(std::move(array));
  }
  return arguments;
}

/// Empty when `actual` and `expected` hold the same bits, else the first
/// difference.
std::string bitDifference(const std::vector<HostArray> &actual,
                          const std::vector<HostArray> &expected) {
  if (actual.size() != expected.size())
    return std::to_string(actual.size()) + " results instead of " +
           std::to_string(expected.size());
  for (size_t r = 0; r < actual.size(); ++r) {
    const HostArray &a = actual[r], &e = expected[r];
    if (a.typeString() != e.typeString())
      return "result " + std::to_string(r) + " is " + a.typeString() +
             " instead of " + e.typeString();
    size_t width = a.nbytes() / std::max<int64_t>(1, a.numel());
    for (int64_t i = 0; i < a.numel(); ++i)
      if (std::memcmp(static_cast<const char *>(a.data()) + i * width,
                      static_cast<const char *>(e.data()) + i * width,
                      width) != 0)
        return "result " + std::to_string(r) + " element " + std::to_string(i) +
               ": " + std::to_string(a.getDouble(i)) + " instead of " +
               std::to_string(e.getDouble(i));
  }
  return "";
}

int64_t count(Operation *root, llvm::function_ref<bool(Operation *)> which) {
  int64_t n = 0;
  root->walk([&](Operation *op) { n += which(op); });
  return n;
}

std::string print(Operation *op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  op->print(os, OpPrintingFlags().skipRegions());
  return text;
}

bool isFusible(Operation *op) {
  return isa<GenesisDialect>(op->getDialect()) &&
         (op->hasTrait<mlir::OpTrait::Elementwise>() ||
          isa<BroadcastInDimOp, ReduceSumOp, ReduceMaxOp, ReduceMinOp>(op));
}

/// Checks what every fused function must satisfy: no fusible op is left
/// between fusions except a splat constant or broadcast feeding only
/// non-fusible ops, and fusions hold nothing but fusible ops.
void expectFullyFused(func::FuncOp function) {
  for (Operation &op : function.getBody().front().without_terminator()) {
    auto constant = dyn_cast<ConstantOp>(op);
    if (!isa<BroadcastInDimOp>(op) &&
        !(constant && constant.getValue().isSplat())) {
      EXPECT_FALSE(isFusible(&op)) << "left unfused: " << print(&op);
      continue;
    }
    for (Operation *user : op.getUsers())
      EXPECT_FALSE(isFusible(user) || isa<FusionOp>(user))
          << "left unfused: " << print(&op) << "\n  used by " << print(user);
  }
  function.walk([&](FusionOp fusion) {
    Block &body = fusion.getBody().front();
    bool reduces = llvm::any_of(body.without_terminator(), [](Operation &op) {
      return isa<ReduceSumOp, ReduceMaxOp, ReduceMinOp>(op);
    });
    for (Operation &op : body.without_terminator()) {
      // Data movement joins loop groups only (rule 2).
      bool moves = isDataMovement(&op) && !reduces;
      EXPECT_TRUE(isFusible(&op) || isa<ConstantOp>(op) || moves)
          << "not fusible: " << print(&op);
    }
  });
}

struct Counts {
  int64_t ops = 0, fusions = 0, multiOutput = 0, libraryCalls = 0, fusedOps = 0;
};

/// Runs genesis-fuse on every function of a copy of `module`; checks that
/// it verifies, that every fusible op is in a fusion, no reduction is
/// computed twice, and that @`name` computes the same bits as before (f64) or
/// as after formLibraryCalls alone (other dtypes) on `trials` random inputs.
Counts checkFuse(ModuleOp module, StringRef name, bool f64, int64_t intBound,
                 int trials = 3) {
  OwningOpRef<ModuleOp> fused = module.clone();
  PassManager pm(module.getContext());
  pm.addNestedPass<func::FuncOp>(createGenesisFuse());
  EXPECT_TRUE(succeeded(pm.run(*fused)));
  EXPECT_TRUE(succeeded(verify(*fused)));
  OwningOpRef<ModuleOp> gemms = module.clone();
  for (auto function : gemms->getOps<func::FuncOp>())
    formLibraryCalls(function);
  EXPECT_TRUE(succeeded(verify(*gemms)));
  auto before = module.lookupSymbol<func::FuncOp>(name);
  auto reference = f64 ? before : gemms->lookupSymbol<func::FuncOp>(name);
  auto after = fused->lookupSymbol<func::FuncOp>(name);
  expectFullyFused(after);

  // Reductions are computed once; elementwise ops at least once (rule 2b
  // clones cheap ones into several groups).
  auto reductions = [](Operation *op) {
    return isa<ReduceSumOp, ReduceMaxOp, ReduceMinOp>(op);
  };
  auto elementwise = [](Operation *op) {
    return isFusible(op) && !isa<BroadcastInDimOp>(op) &&
           !isa<ReduceSumOp, ReduceMaxOp, ReduceMinOp>(op);
  };
  func::FuncOp unfused = gemms->lookupSymbol<func::FuncOp>(name);
  EXPECT_EQ(count(unfused, reductions), count(after, reductions))
      << "reductions were duplicated or lost";
  EXPECT_LE(count(unfused, elementwise), count(after, elementwise))
      << "elementwise ops were lost";

  for (int trial = 0; trial < trials; ++trial) {
    std::vector<HostArray> arguments =
        randomArguments(before, 1000 + trial, intBound);
    std::string difference = bitDifference(evaluate(after, arguments),
                                           evaluate(reference, arguments));
    EXPECT_EQ(difference, "") << "trial " << trial;
  }
  Counts counts;
  counts.ops = count(before, [](Operation *op) {
    return !isa<func::FuncOp, func::ReturnOp>(op);
  });
  counts.fusions =
      count(after, [](Operation *op) { return isa<FusionOp>(op); });
  counts.multiOutput = count(after, [](Operation *op) {
    return isa<FusionOp>(op) && op->getNumResults() > 1;
  });
  counts.libraryCalls =
      count(after, [](Operation *op) { return isa<LibraryCallOp>(op); });
  counts.fusedOps = count(after, [](Operation *op) {
    return op->getParentOfType<FusionOp>() && !isa<YieldOp>(op);
  });
  return counts;
}

std::ostream &operator<<(std::ostream &os, const Counts &c) {
  return os << c.ops << " ops before; after: " << c.fusions << " fusions ("
            << c.multiOutput << " multi-output, " << c.fusedOps
            << " ops inside), " << c.libraryCalls << " library calls";
}

TEST(Fuse, MlpTrainStep) {
  for (DType dtype : {DType::F64, DType::F32}) {
    SCOPED_TRACE(dtypeName(dtype));
    Generator generator(40);
    auto mlp = models::makeMlp(32, generator);
    mlp->to(dtype);
    HostArray images(dtype, {8, 784});
    HostArray labels(DType::I64, {8});
    optim::AdamW adamw;
    optim::TrainStepOptions options;
    options.clip_grad_norm = 1.0;
    optim::TrainStep step = optim::compile_train_step(
        *mlp,
        [&](const std::map<std::string, Tensor> &b) {
          return cross_entropy(mlp->forward(b.at("images")), b.at("labels"));
        },
        adamw, {{"images", images}, {"labels", labels}}, options);
    Counts counts = checkFuse(step.module(), "train_step", dtype == DType::F64,
                              /*intBound=*/10);
    std::cout << "MLP train step (" << dtypeName(dtype) << "): " << counts
              << "\n";
  }
}

TEST(Fuse, TinyGpt2TrainStep) {
  for (DType dtype : {DType::F64, DType::F32}) {
    SCOPED_TRACE(dtypeName(dtype));
    models::Gpt2Config config;
    config.vocab_size = 13;
    config.n_positions = 8;
    config.n_embd = 8;
    config.n_layer = 2;
    config.n_head = 2;
    config.dropout = 0.1;
    Generator generator(41);
    models::Gpt2 gpt(config, generator);
    gpt.to(dtype);
    optim::TrainStep step = optim::compile_train_step(
        gpt,
        [&](const std::map<std::string, Tensor> &b) {
          return cross_entropy(gpt(b.at("ids")).reshape({12, 13}),
                               b.at("targets"));
        },
        optim::Adam{},
        {{"ids", HostArray(DType::I64, {2, 6})},
         {"targets", HostArray(DType::I64, {12})}});
    Counts counts = checkFuse(step.module(), "train_step", dtype == DType::F64,
                              /*intBound=*/13);
    std::cout << "GPT-2 train step (" << dtypeName(dtype) << "): " << counts
              << "\n";
  }
}

/// A random function on 5x5 matrices and 5-vectors of `element` type:
/// unary, binary, compare/select and cast round trips, splat constants,
/// broadcasts, reductions, GEMMs followed by the epilogue patterns, and
/// transposes and softmaxes that fusion cannot cross. It returns every value
/// nobody uses and a few more, so that values are used inside and outside.
OwningOpRef<ModuleOp> randomDag(MLIRContext &context, Type element,
                                uint64_t seed) {
  constexpr int64_t n = 5;
  Generator rng(seed);
  auto pick = [&](int64_t k) { return rng.randint(0, k); };
  auto matrix = RankedTensorType::get({n, n}, element);
  auto vector = RankedTensorType::get({n}, element);
  OpBuilder b(&context);
  int line = 0;
  auto loc = [&] { return FileLineColLoc::get(&context, "dag", ++line, 1); };
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc());
  b.setInsertionPointToEnd(module->getBody());
  auto function = func::FuncOp::create(
      b, loc(), "dag",
      b.getFunctionType({matrix, matrix, matrix, vector, vector}, {}));
  Block *entry = function.addEntryBlock();
  b.setInsertionPointToEnd(entry);
  std::vector<Value> matrices(entry->args_begin(), entry->args_begin() + 3);
  std::vector<Value> vectors(entry->args_begin() + 3, entry->args_end());
  // Recent values are likelier operands, which makes long chains.
  auto choose = [&](const std::vector<Value> &pool) {
    auto k = static_cast<int64_t>(pool.size());
    return pool[k - 1 - std::min(pick(k), pick(k))];
  };
  auto splat = [&](RankedTensorType type) -> Value {
    double value = static_cast<double>(pick(7) - 3) / 2;
    return ConstantOp::create(b, loc(),
                              cast<ElementsAttr>(DenseElementsAttr::get(
                                  type, b.getFloatAttr(element, value))));
  };
  auto binary = [&](int64_t kind, Value x, Value y) -> Value {
    switch (kind) {
    case 0:
      return AddOp::create(b, loc(), x, y);
    case 1:
      return SubOp::create(b, loc(), x, y);
    case 2:
      return MulOp::create(b, loc(), x, y);
    case 3:
      return MaxOp::create(b, loc(), x, y);
    case 4:
      return MinOp::create(b, loc(), x, y);
    default:
      return DivOp::create(b, loc(), x, y);
    }
  };
  int64_t steps = 6 + pick(30);
  for (int64_t s = 0; s < steps; ++s) {
    bool onMatrix = pick(3) != 0;
    std::vector<Value> &pool = onMatrix ? matrices : vectors;
    RankedTensorType type = onMatrix ? matrix : vector;
    Value x = choose(pool);
    switch (pick(11)) {
    case 0: {
      Value result;
      switch (pick(8)) {
      case 0:
        result = NegOp::create(b, loc(), x);
        break;
      case 1:
        result = AbsOp::create(b, loc(), x);
        break;
      case 2:
        result = TanhOp::create(b, loc(), x);
        break;
      case 3:
        result = SigmoidOp::create(b, loc(), x);
        break;
      case 4:
        result = ReluOp::create(b, loc(), x);
        break;
      case 5:
        result = ExpOp::create(b, loc(), x);
        break;
      case 6:
        result = GeluOp::create(b, loc(), x, GeluApproximation::erf);
        break;
      default:
        result = SinOp::create(b, loc(), x);
        break;
      }
      pool.push_back(result);
      break;
    }
    case 1:
    case 2:
      pool.push_back(binary(pick(6), x, choose(pool)));
      break;
    case 3: {
      Value condition = CompareOp::create(
          b, loc(), static_cast<CompareDirection>(pick(6)), x, choose(pool));
      pool.push_back(SelectOp::create(b, loc(), condition, x, choose(pool)));
      break;
    }
    case 4:
      pool.push_back(binary(pick(6), x, splat(type)));
      break;
    case 5: {
      Value half = CastOp::create(
          b, loc(), RankedTensorType::get(type.getShape(), b.getF16Type()), x);
      pool.push_back(CastOp::create(b, loc(), type, half));
      break;
    }
    case 6:
      matrices.push_back(BroadcastInDimOp::create(
          b, loc(), matrix, choose(vectors), ArrayRef<int64_t>{pick(2)}));
      break;
    case 7: {
      Value m = choose(matrices);
      SmallVector<int64_t, 1> dims = {pick(2)};
      int64_t kind = pick(3);
      vectors.push_back(
          kind == 0   ? ReduceSumOp::create(b, loc(), m, dims).getResult()
          : kind == 1 ? ReduceMaxOp::create(b, loc(), m, dims).getResult()
                      : ReduceMinOp::create(b, loc(), m, dims).getResult());
      break;
    }
    case 8: {
      Value m = choose(matrices);
      matrices.push_back(
          pick(2) ? TransposeOp::create(b, loc(), m, ArrayRef<int64_t>{1, 0})
                        .getResult()
                  : SoftmaxOp::create(b, loc(), m, uint64_t(1)).getResult());
      break;
    }
    default: {
      Value y = MatmulOp::create(b, loc(), choose(matrices), choose(matrices),
                                 false, pick(2) == 1);
      if (pick(3) == 0)
        y = MulOp::create(b, loc(), splat(matrix), y);
      if (pick(3) != 0) {
        Value bias = BroadcastInDimOp::create(b, loc(), matrix, choose(vectors),
                                              ArrayRef<int64_t>{1});
        y = pick(2) ? AddOp::create(b, loc(), y, bias)
                    : AddOp::create(b, loc(), bias, y);
      }
      int64_t activation = pick(3);
      if (activation == 1)
        y = ReluOp::create(b, loc(), y);
      if (activation == 2)
        y = GeluOp::create(b, loc(), y, GeluApproximation::tanh);
      matrices.push_back(y);
      break;
    }
    }
  }
  SmallVector<Value> results;
  for (Operation &op : *entry)
    for (Value result : op.getResults())
      if (result.use_empty() &&
          !isa<IntegerType>(
              cast<RankedTensorType>(result.getType()).getElementType()))
        results.push_back(result);
  results.push_back(choose(matrices));
  results.push_back(choose(vectors));
  func::ReturnOp::create(b, loc(), results);
  function.setFunctionType(b.getFunctionType(entry->getArgumentTypes(),
                                             ValueRange(results).getTypes()));
  return module;
}

TEST(Fuse, RandomDags) {
  MLIRContext context;
  context.loadDialect<GenesisDialect, func::FuncDialect>();
  Builder b(&context);
  for (Type element : {Type(b.getF64Type()), Type(b.getF32Type())}) {
    Counts total;
    for (uint64_t seed = 0; seed < 500; ++seed) {
      OwningOpRef<ModuleOp> module = randomDag(context, element, seed);
      SCOPED_TRACE("seed " + std::to_string(seed));
      ASSERT_TRUE(succeeded(verify(*module)));
      Counts counts = checkFuse(*module, "dag", element.isF64(),
                                /*intBound=*/1, /*trials=*/2);
      total.ops += counts.ops;
      total.fusions += counts.fusions;
      total.multiOutput += counts.multiOutput;
      total.fusedOps += counts.fusedOps;
      total.libraryCalls += counts.libraryCalls;
      if (HasFailure()) {
        module->print(llvm::errs());
        return;
      }
    }
    std::cout << "500 random " << (element.isF64() ? "f64" : "f32")
              << " DAGs: " << total << "\n";
  }
}

} // namespace
