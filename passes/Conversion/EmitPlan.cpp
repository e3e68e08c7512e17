//===- EmitPlan.cpp - Compiling functions into a .gplan ------------------===//
//
// compilePlan: genesis IR -> fused -> CPU or GPU kernels + memory plan ->
// the steps of a plan file (runtime/plan/Plan.fbs) that a Session runs.
//
// The rng_seed argument (tensor<i64> in the IR) is the session-fed i64[2]
// tensor (seed, offset) of the plan; the dropout kernels read both words.
// all_reduce is the identity in a single-process CPU plan and becomes a Copy
// step; a multi-rank runtime will replace it.
//
//===----------------------------------------------------------------------===//

#include "passes/Analysis/ArgumentUpdates.h"
#include "passes/Passes.h"
#include "passes/Pipelines.h"

#include "dialect/IR/GenesisOps.h"
#include "dialect/IR/Provenance.h"
#include "dialect/Utils/DTypes.h"
#include "passes/Conversion/CudaKernels.h"
#include "runtime/plan/PlanFile.h"
#include "runtime/support/Sha256.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <set>

using namespace mlir;

namespace genesis {
namespace {

/// cuBLASLt's workspace in a cuda plan: what its fastest Hopper kernels use.
constexpr uint64_t kCudaLibraryWorkspace = 32ull << 20;

FailureOr<DType> dtypeFor(Operation *where, Type elementType) {
  if (std::optional<DType> dtype = toDType(elementType))
    return *dtype;
  where->emitError("compilePlan: unsupported element type ") << elementType;
  return failure();
}

int64_t numel(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

int64_t bytesOf(RankedTensorType type) {
  return numel(type.getShape()) *
         ((type.getElementType().getIntOrFloatBitWidth() + 7) / 8);
}

int64_t alignUp(int64_t value, int64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

FailureOr<plan::Role> roleFor(Operation *where, StringRef role) {
  if (role == "parameter")
    return plan::Role::Parameter;
  if (role == "optimizer_state")
    return plan::Role::OptimizerState;
  if (role == "input")
    return plan::Role::Input;
  if (role == "lr")
    return plan::Role::Lr;
  if (role == "step")
    return plan::Role::Step;
  if (role == "buffer")
    return plan::Role::Buffer;
  if (role == "rng_seed")
    return plan::Role::RngSeed;
  where->emitError("compilePlan: unknown genesis.role '") << role << "'";
  return failure();
}

plan::Epilogue epilogueFor(GemmEpilogue epilogue) {
  switch (epilogue) {
  case GemmEpilogue::none:
    return plan::Epilogue::None;
  case GemmEpilogue::bias:
    return plan::Epilogue::Bias;
  case GemmEpilogue::relu:
    return plan::Epilogue::Relu;
  case GemmEpilogue::bias_relu:
    return plan::Epilogue::BiasRelu;
  case GemmEpilogue::gelu:
    return plan::Epilogue::Gelu;
  case GemmEpilogue::bias_gelu:
    return plan::Epilogue::BiasGelu;
  case GemmEpilogue::dgelu:
    return plan::Epilogue::DGelu;
  }
  return plan::Epilogue::None;
}

double splatValue(ConstantOp constant) {
  auto splat = cast<SplatElementsAttr>(constant.getValue());
  if (isa<FloatType>(splat.getElementType()))
    return splat.getSplatValue<APFloat>().convertToDouble();
  // i1 true is 1, not the -1 of its sign extension.
  APInt value = splat.getSplatValue<APInt>();
  if (value.getBitWidth() == 1)
    return static_cast<double>(value.getZExtValue());
  return static_cast<double>(value.getSExtValue());
}

/// Emits the tensors and steps of the plan.
class Emitter {
public:
  Emitter(PlanBuilder &builder, const PlanOptions &options)
      : builder_(builder), options_(options) {}

  /// The shared external tensor `name`; checks that every function agrees on
  /// its type and role.
  FailureOr<uint32_t> external(Operation *where, const std::string &name,
                               RankedTensorType type, plan::Role role) {
    auto it = externals_.find(name);
    if (it != externals_.end()) {
      if (it->second.type != type || it->second.role != role) {
        where->emitError("compilePlan: tensor '")
            << name << "' has different types or roles in two functions";
        return failure();
      }
      return it->second.index;
    }
    FailureOr<DType> dtype = dtypeFor(where, type.getElementType());
    if (failed(dtype))
      return failure();
    uint32_t index = builder_.addTensor(
        name, *dtype, {type.getShape().begin(), type.getShape().end()}, role);
    externals_[name] = {index, type, role};
    return index;
  }

  LogicalResult emitFunction(func::FuncOp function, const MemoryPlan &memory,
                             int64_t extraBase, int64_t &extraEnd,
                             int64_t alignment);

  /// Whether a GEMM step needs the library workspace (a plan without one
  /// leaves the rare overlapping copy to a workspace of the runtime's own).
  bool usesLibraryWorkspace() const { return usesLibraryWorkspace_; }
  /// The workspace the attention steps are expected to need.
  uint64_t attentionWorkspace() const { return attentionWorkspace_; }

private:
  struct External {
    uint32_t index;
    RankedTensorType type;
    plan::Role role;
  };

  void addAttention(uint32_t functionIndex, const AttentionDesc &attention,
                    const std::string &location) {
    builder_.addAttention(functionIndex, attention, location);
    usesLibraryWorkspace_ = true;
    if (attention.backward()) {
      // cuDNN's backward accumulates dQ in f32 and keeps two f32 values per
      // query row (what its 9.x kernels ask for on sm_90).
      uint64_t rows = static_cast<uint64_t>(attention.batch) *
                      attention.queryHeads * attention.queryLength;
      attentionWorkspace_ =
          std::max<uint64_t>(attentionWorkspace_, 4 * rows * attention.headDim +
                                                      8 * rows + (1u << 20));
    }
  }

  PlanBuilder &builder_;
  const PlanOptions &options_;
  bool usesLibraryWorkspace_ = false;
  uint64_t attentionWorkspace_ = 0;
  std::map<std::string, External> externals_;
};

LogicalResult Emitter::emitFunction(func::FuncOp function,
                                    const MemoryPlan &memory, int64_t extraBase,
                                    int64_t &extraEnd, int64_t alignment) {
  std::string fname = function.getSymName().str();
  Block &body = function.getBody().front();
  DenseMap<Value, uint32_t> tensors;
  std::vector<uint32_t> inputs, outputs;
  auto addUnique = [](std::vector<uint32_t> &list, uint32_t index) {
    if (std::find(list.begin(), list.end(), index) == list.end())
      list.push_back(index);
  };

  // Arguments.
  llvm::StringMap<unsigned> argumentByName;
  for (unsigned i = 0; i < function.getNumArguments(); ++i) {
    auto type = dyn_cast<RankedTensorType>(function.getArgumentTypes()[i]);
    auto name = function.getArgAttrOfType<StringAttr>(i, "genesis.name");
    auto role = function.getArgAttrOfType<StringAttr>(i, "genesis.role");
    if (!type || !name || !role)
      return function.emitError("compilePlan: argument ")
             << i
             << " needs a ranked tensor type, genesis.name and "
                "genesis.role";
    FailureOr<plan::Role> planRole = roleFor(function, role.getValue());
    if (failed(planRole))
      return failure();
    if (*planRole == plan::Role::RngSeed) {
      // The runtime feeds (seed, offset) as i64[2].
      if (type.getRank() != 0 || !type.getElementType().isInteger(64))
        return function.emitError("compilePlan: the rng_seed argument '")
               << name.getValue() << "' must be a tensor<i64>";
      type = RankedTensorType::get({2}, type.getElementType());
    }
    FailureOr<uint32_t> index = external(function, name.str(), type, *planRole);
    if (failed(index))
      return failure();
    tensors[body.getArgument(i)] = *index;
    argumentByName[name.getValue()] = i;
    addUnique(inputs, *index);
  }

  // Results: where each returned value goes. An update of an argument
  // (argumentUpdates) is written into the argument's tensor by its producer;
  // any other result computed in the body into its output's tensor; the
  // rest are copied or filled there after the body.
  llvm::DenseSet<Value> updates = argumentUpdates(function);
  auto returnOp = cast<func::ReturnOp>(body.getTerminator());
  struct Deferred {
    Value value;
    uint32_t dst;
  };
  std::vector<Deferred> deferred;
  for (auto [r, value] : llvm::enumerate(returnOp.getOperands())) {
    auto type = dyn_cast<RankedTensorType>(value.getType());
    if (!type)
      return function.emitError("compilePlan: result ")
             << r << " is not a ranked tensor";
    auto nameAttr = function.getResultAttrOfType<StringAttr>(r, "genesis.name");
    std::string name =
        nameAttr ? nameAttr.str() : fname + ".result" + std::to_string(r);
    uint32_t dst;
    bool direct;
    auto arg = argumentByName.find(name);
    if (arg != argumentByName.end()) {
      BlockArgument old = body.getArgument(arg->second);
      if (old.getType() != type)
        return function.emitError("compilePlan: result '")
               << name << "' does not have the type of the argument";
      dst = tensors.lookup(old);
      direct = updates.contains(value);
    } else {
      FailureOr<uint32_t> index =
          external(function, name, type, plan::Role::Output);
      if (failed(index))
        return failure();
      dst = *index;
      direct = value.getDefiningOp() &&
               value.getDefiningOp()->getBlock() == &body &&
               !isSplatConstant(value) && !tensors.count(value);
    }
    if (direct)
      tensors[value] = dst;
    else
      deferred.push_back({value, dst});
    addUnique(outputs, dst);
  }

  // The Philox counters one run draws: every dropout op uses
  // [offset, offset + numel) past the session's offset.
  uint64_t rngOffsetAdvance = 0;
  WalkResult seeds = function.walk([&](DropoutOp dropout) {
    auto seed = dyn_cast<BlockArgument>(dropout.getSeed());
    auto role = seed && seed.getOwner() == &body
                    ? function.getArgAttrOfType<StringAttr>(seed.getArgNumber(),
                                                            "genesis.role")
                    : StringAttr();
    if (!role || role.getValue() != "rng_seed") {
      dropout.emitError("compilePlan: the seed of 'genesis.dropout' at ")
          << describeLocation(dropout.getLoc())
          << " must be the function's rng_seed argument";
      return WalkResult::interrupt();
    }
    auto type = cast<RankedTensorType>(dropout.getOperand().getType());
    rngOffsetAdvance = std::max(
        rngOffsetAdvance, static_cast<uint64_t>(dropout.getOffset()) +
                              static_cast<uint64_t>(numel(type.getShape())));
    return WalkResult::advance();
  });
  if (seeds.wasInterrupted())
    return failure();
  uint32_t functionIndex = builder_.addFunction(
      fname, inputs, outputs, fname == "train_step", rngOffsetAdvance);

  int64_t temporaryCount = 0;
  auto newTemporary = [&](Value value, int64_t offset) -> FailureOr<uint32_t> {
    auto type = cast<RankedTensorType>(value.getType());
    Operation *where =
        value.getDefiningOp() ? value.getDefiningOp() : function.getOperation();
    FailureOr<DType> dtype = dtypeFor(where, type.getElementType());
    if (failed(dtype))
      return failure();
    return builder_.addTemporary(
        fname + ".t" + std::to_string(temporaryCount++), *dtype,
        {type.getShape().begin(), type.getShape().end()},
        static_cast<uint64_t>(offset));
  };
  // A value's tensor: mapped, planned, or (splat constants and unplanned
  // values) a slot after the planned arena.
  auto tensorFor = [&](Value value) -> FailureOr<uint32_t> {
    auto it = tensors.find(value);
    if (it != tensors.end())
      return it->second;
    auto type = dyn_cast<RankedTensorType>(value.getType());
    if (!type || !type.hasStaticShape())
      return function.emitError("compilePlan: value without a static "
                                "tensor type");
    FailureOr<uint32_t> index = failure();
    auto planned = memory.offsets.find(value);
    if (planned != memory.offsets.end()) {
      index = newTemporary(value, planned->second);
    } else {
      int64_t offset = alignUp(std::max(extraEnd, extraBase), alignment);
      extraEnd = offset + bytesOf(type);
      index = newTemporary(value, offset);
    }
    if (failed(index))
      return failure();
    tensors[value] = *index;
    if (auto constant = value.getDefiningOp<ConstantOp>();
        constant && isSplatConstant(value))
      builder_.addFill(functionIndex, *index, splatValue(constant),
                       describeLocation(constant.getLoc()));
    return *index;
  };

  for (Operation &op : body.without_terminator()) {
    if (computesNothing(&op))
      continue; // empty results: nothing to compute or store
    std::string location = describeProvenance(&op);
    auto operandTensors = [&]() -> FailureOr<std::vector<uint32_t>> {
      std::vector<uint32_t> list;
      for (Value operand : op.getOperands()) {
        FailureOr<uint32_t> index = tensorFor(operand);
        if (failed(index))
          return failure();
        list.push_back(*index);
      }
      return list;
    };
    auto resultTensors = [&]() -> FailureOr<std::vector<uint32_t>> {
      std::vector<uint32_t> list;
      for (Value result : op.getResults()) {
        FailureOr<uint32_t> index = tensorFor(result);
        if (failed(index))
          return failure();
        list.push_back(*index);
      }
      return list;
    };

    if (auto kernel = op.getAttrOfType<FlatSymbolRefAttr>(kKernelAttrName)) {
      FailureOr<std::vector<uint32_t>> ins = operandTensors();
      if (failed(ins))
        return failure();
      FailureOr<std::vector<uint32_t>> outs = resultTensors();
      if (failed(outs))
        return failure();
      KernelLaunchDesc launch;
      launch.image = 0;
      launch.symbol = kernel.getValue().str();
      launch.args = *ins;
      launch.args.insert(launch.args.end(), outs->begin(), outs->end());
      launch.outputs = static_cast<uint32_t>(outs->size());
      if (auto callee =
              SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(&op, kernel))
        if (auto extent =
                callee->getAttrOfType<IntegerAttr>("genesis.outer_extent"))
          launch.outerExtent = std::max<int64_t>(extent.getInt(), 1);
      if (std::optional<cuda::Launch> gpu = cuda::getLaunchAttr(&op)) {
        for (int d = 0; d < 3; ++d) {
          launch.grid[d] = static_cast<uint32_t>(gpu->grid[d]);
          launch.block[d] = static_cast<uint32_t>(gpu->block[d]);
        }
        launch.sharedMemoryBytes =
            static_cast<uint32_t>(gpu->sharedMemoryBytes);
      }
      builder_.addKernelLaunch(functionIndex, launch, location);
      continue;
    }
    if (auto call = dyn_cast<LibraryCallOp>(op)) {
      auto lhs = cast<RankedTensorType>(call.getLhs().getType());
      auto result = cast<RankedTensorType>(call.getResult().getType());
      int64_t rank = result.getRank();
      GemmDesc gemm;
      FailureOr<uint32_t> a = tensorFor(call.getLhs());
      FailureOr<uint32_t> b = tensorFor(call.getRhs());
      if (failed(a) || failed(b))
        return failure();
      gemm.a = *a;
      gemm.b = *b;
      if (call.getBias()) {
        FailureOr<uint32_t> bias = tensorFor(call.getBias());
        if (failed(bias))
          return failure();
        gemm.bias = *bias;
      }
      if (call.getAux()) {
        FailureOr<uint32_t> aux = tensorFor(call.getAux());
        if (failed(aux))
          return failure();
        gemm.aux = *aux;
      }
      FailureOr<uint32_t> c = tensorFor(call.getResult());
      if (failed(c))
        return failure();
      gemm.c = *c;
      gemm.m = result.getDimSize(rank - 2);
      gemm.n = result.getDimSize(rank - 1);
      gemm.k = call.getTransposeLhs() ? lhs.getDimSize(rank - 2)
                                      : lhs.getDimSize(rank - 1);
      gemm.batchCount = numel(result.getShape().drop_back(2));
      gemm.strideA = gemm.m * gemm.k;
      gemm.strideB = gemm.k * gemm.n;
      gemm.strideC = gemm.m * gemm.n;
      gemm.transposeA = call.getTransposeLhs();
      gemm.transposeB = call.getTransposeRhs();
      if (gemm.k == 0) {
        // A sum of no products is 0 (PyTorch's rule), and so are relu(0) and
        // gelu(0); with a bias the result would be the epilogue of the bias.
        if (call.getBias() || call.getAux())
          return op.emitError("compilePlan: a GEMM with an empty inner "
                              "dimension and a bias or dgelu epilogue is "
                              "not supported, at ")
                 << location;
        builder_.addFill(functionIndex, gemm.c, 0.0, location);
        continue;
      }
      gemm.alpha = call.getAlpha().convertToDouble();
      gemm.beta = 0.0;
      gemm.epilogue = epilogueFor(call.getEpilogue());
      gemm.allowTf32 = options_.allowTf32;
      builder_.addGemm(functionIndex, gemm, location);
      usesLibraryWorkspace_ = true;
      continue;
    }
    if (isa<FusedAttentionOp, FusedAttentionGradOp>(op)) {
      // Operands and results in Plan.fbs's Attention order: query, key,
      // value, out, logsumexp, then out_grad and the three gradients.
      FailureOr<std::vector<uint32_t>> ins = operandTensors();
      FailureOr<std::vector<uint32_t>> outs = resultTensors();
      if (failed(ins) || failed(outs))
        return failure();
      auto q = cast<RankedTensorType>(op.getOperand(0).getType());
      auto k = cast<RankedTensorType>(op.getOperand(1).getType());
      AttentionDesc attention;
      attention.query = (*ins)[0];
      attention.key = (*ins)[1];
      attention.value = (*ins)[2];
      if (auto forward = dyn_cast<FusedAttentionOp>(op)) {
        attention.out = (*outs)[0];
        attention.logSumExp = (*outs)[1];
        attention.causal = forward.getCausal();
        attention.scale = forward.getScale().convertToDouble();
      } else {
        auto backward = cast<FusedAttentionGradOp>(op);
        attention.out = (*ins)[3];
        attention.outGrad = (*ins)[4];
        attention.logSumExp = (*ins)[5];
        attention.queryGrad = (*outs)[0];
        attention.keyGrad = (*outs)[1];
        attention.valueGrad = (*outs)[2];
        attention.causal = backward.getCausal();
        attention.scale = backward.getScale().convertToDouble();
      }
      attention.batch = q.getDimSize(0);
      attention.queryHeads = q.getDimSize(1);
      attention.queryLength = q.getDimSize(2);
      attention.headDim = q.getDimSize(3);
      attention.kvHeads = k.getDimSize(1);
      attention.kvLength = k.getDimSize(2);
      addAttention(functionIndex, attention, location);
      continue;
    }
    if (isa<PackedAttentionOp, PackedAttentionGradOp>(op)) {
      // One packed operand for query, key and value, one for their
      // gradients (Plan.fbs's packed Attention).
      FailureOr<std::vector<uint32_t>> ins = operandTensors();
      FailureOr<std::vector<uint32_t>> outs = resultTensors();
      if (failed(ins) || failed(outs))
        return failure();
      auto qkv = cast<RankedTensorType>(op.getOperand(0).getType());
      AttentionDesc attention;
      attention.packed = true;
      attention.query = attention.key = attention.value = (*ins)[0];
      if (auto forward = dyn_cast<PackedAttentionOp>(op)) {
        attention.out = (*outs)[0];
        attention.logSumExp = (*outs)[1];
        attention.queryHeads = static_cast<int64_t>(forward.getQueryHeads());
        attention.kvHeads = static_cast<int64_t>(forward.getKvHeads());
        attention.causal = forward.getCausal();
        attention.scale = forward.getScale().convertToDouble();
      } else {
        auto backward = cast<PackedAttentionGradOp>(op);
        attention.out = (*ins)[1];
        attention.outGrad = (*ins)[2];
        attention.logSumExp = (*ins)[3];
        attention.queryGrad = attention.keyGrad = attention.valueGrad =
            (*outs)[0];
        attention.queryHeads = static_cast<int64_t>(backward.getQueryHeads());
        attention.kvHeads = static_cast<int64_t>(backward.getKvHeads());
        attention.causal = backward.getCausal();
        attention.scale = backward.getScale().convertToDouble();
      }
      attention.batch = qkv.getDimSize(0);
      attention.queryLength = attention.kvLength = qkv.getDimSize(1);
      attention.headDim =
          qkv.getDimSize(2) / (attention.queryHeads + 2 * attention.kvHeads);
      addAttention(functionIndex, attention, location);
      continue;
    }
    if (auto constant = dyn_cast<ConstantOp>(op)) {
      if (!isSplatConstant(constant.getResult()))
        return op.emitError("compilePlan: no lowering for the "
                            "non-splat 'genesis.constant' at ")
               << location;
      // Materialised (Fill) where a step first needs it.
      continue;
    }
    if (auto allReduce = dyn_cast<AllReduceOp>(op)) {
      // One process, one rank: the identity.
      FailureOr<uint32_t> src = tensorFor(allReduce.getOperand());
      FailureOr<uint32_t> dst = tensorFor(allReduce.getResult());
      if (failed(src) || failed(dst))
        return failure();
      if (*src != *dst)
        builder_.addCopy(
            functionIndex, *src, *dst,
            bytesOf(cast<RankedTensorType>(allReduce.getResult().getType())),
            location);
      continue;
    }
    if (auto reshape = dyn_cast<ReshapeOp>(op)) {
      FailureOr<uint32_t> src = tensorFor(reshape.getOperand());
      if (failed(src))
        return failure();
      // A reshape of a value that keeps its external tensor to the end (an
      // input no step updates, or a result its producer wrote there, as a
      // KV cache's rows) reads that tensor's bytes in place: kernels address
      // tensors by pointer, and a reshape keeps the row-major order. The
      // plan checker reads a GEMM operand's columns from its tensor's last
      // dimension and an attention operand's whole shape, so the reshape
      // must keep the last dimension and feed no attention step.
      auto from = cast<RankedTensorType>(reshape.getOperand().getType());
      auto to = cast<RankedTensorType>(reshape.getType());
      bool external =
          llvm::is_contained(inputs, *src) || llvm::is_contained(outputs, *src);
      bool updatedLater = isa<BlockArgument>(reshape.getOperand()) &&
                          llvm::is_contained(outputs, *src);
      bool keepsRows = from.getRank() > 0 && to.getRank() > 0 &&
                       from.getShape().back() == to.getShape().back();
      bool feedsAttention =
          llvm::any_of(reshape->getUsers(), [](Operation *user) {
            return isa<FusedAttentionOp, FusedAttentionGradOp,
                       PackedAttentionOp, PackedAttentionGradOp>(user);
          });
      if (external && !updatedLater && keepsRows && !feedsAttention &&
          !tensors.count(reshape.getResult())) {
        tensors[reshape.getResult()] = *src;
        continue;
      }
      FailureOr<uint32_t> dst = tensorFor(reshape->getResult(0));
      if (failed(dst))
        return failure();
      auto srcPlanned = memory.offsets.find(reshape->getOperand(0));
      auto dstPlanned = memory.offsets.find(reshape->getResult(0));
      bool alias = srcPlanned != memory.offsets.end() &&
                   dstPlanned != memory.offsets.end() &&
                   srcPlanned->second == dstPlanned->second;
      // A pure alias (same arena bytes, both temporaries) needs no copy.
      bool bothTemporaries = !llvm::is_contained(outputs, *dst) &&
                             !llvm::is_contained(outputs, *src) &&
                             !llvm::is_contained(inputs, *src);
      if (!(alias && bothTemporaries))
        builder_.addCopy(
            functionIndex, *src, *dst,
            bytesOf(cast<RankedTensorType>(reshape->getResult(0).getType())),
            location);
      continue;
    }
    return op.emitError("compilePlan: no lowering for '")
           << op.getName() << "' at " << location;
  }

  // Results that could not be written in place by their producer.
  for (const Deferred &d : deferred) {
    if (auto constant = d.value.getDefiningOp<ConstantOp>();
        constant && isSplatConstant(d.value)) {
      builder_.addFill(functionIndex, d.dst, splatValue(constant),
                       describeLocation(constant.getLoc()));
      continue;
    }
    FailureOr<uint32_t> src = tensorFor(d.value);
    if (failed(src))
      return failure();
    if (*src != d.dst)
      builder_.addCopy(functionIndex, *src, d.dst,
                       bytesOf(cast<RankedTensorType>(d.value.getType())),
                       describeLocation(returnOp.getLoc()));
  }
  return success();
}

} // namespace

LogicalResult lowerForTarget(ModuleOp module,
                             llvm::ArrayRef<std::string> functions,
                             const PlanOptions &options) {
  MLIRContext *context = module.getContext();
  for (const std::string &name : functions) {
    auto function = module.lookupSymbol<func::FuncOp>(name);
    if (!function || function.isExternal())
      return module.emitError("compilePlan: no function @") << name;
  }
  // Only the named functions are compiled.
  for (auto function :
       llvm::make_early_inc_range(module.getOps<func::FuncOp>()))
    if (!llvm::is_contained(functions, function.getSymName().str()) &&
        SymbolTable::symbolKnownUseEmpty(function, module))
      function.erase();

  PassManager pm(context);
  // --mlir-print-ir-after-all, --mlir-timing, ... where the tool registered
  // MLIR's pass manager and timing options (genesis-compile does); no-ops
  // otherwise. The pass manager prints the timing report when it ends.
  (void)applyPassManagerCLOptions(pm);
  auto timing = std::make_unique<DefaultTimingManager>();
  applyDefaultTimingManagerCLOptions(*timing);
  if (options.timing)
    timing->setEnabled(true);
  if (timing->isEnabled())
    pm.enableTiming(std::move(timing));
  GenesisPipelineOptions pipeline;
  pipeline.precision = options.mixedPrecision;
  pipeline.fuse = options.fuse;
  pipeline.memoryBudget = options.memoryBudget;
  auto onError = [&](const Twine &message) {
    return module.emitError("compilePlan: ") << message;
  };
  if (failed(options.target == plan::Target::Cuda
                 ? buildGenesisCudaPipeline(pm, pipeline, onError)
                 : buildGenesisCpuPipeline(pm, pipeline, onError)))
    return failure();
  return pm.run(module);
}

FailureOr<std::vector<uint8_t>>
compilePlan(ModuleOp module, llvm::ArrayRef<std::string> functions,
            const PlanOptions &options) {
  std::string printed;
  {
    llvm::raw_string_ostream os(printed);
    module.print(os);
  }
  Sha256::Digest digest = Sha256::digest(printed.data(), printed.size());

  OwningOpRef<ModuleOp> clone = module.clone();
  if (failed(lowerForTarget(*clone, functions, options)))
    return failure();
  std::vector<func::FuncOp> targets;
  for (const std::string &name : functions)
    targets.push_back(clone->lookupSymbol<func::FuncOp>(name));

  bool cuda = options.target == plan::Target::Cuda;
  // cuBLASLt wants 256-byte aligned matrices; the CPU kernels 64 (a cache
  // line, an AVX-512 vector).
  int64_t alignment = cuda ? 256 : 64;
  std::vector<MemoryPlan> plans;
  int64_t arena = 0;
  for (func::FuncOp function : targets) {
    FailureOr<MemoryPlan> memory = planMemory(function, alignment);
    if (failed(memory))
      return failure();
    arena = std::max(arena, memory->arenaBytes);
    plans.push_back(std::move(*memory));
  }

  PlanHeader header;
  header.target = options.target;
  header.compilerVersion = "genesis 0.1";
  std::string flags = cuda ? "--target=cuda" : "--target=cpu";
  if (cuda && options.cudaChips != std::vector<uint32_t>{90})
    for (auto [i, chip] : llvm::enumerate(options.cudaChips))
      flags += (i == 0 ? " --cuda-arch=sm_" : ",sm_") + std::to_string(chip);
  if (options.allowTf32)
    flags += " --allow-tf32";
  if (!options.mixedPrecision.empty())
    flags += " --precision=" + options.mixedPrecision;
  if (options.memoryBudget > 0)
    flags += " --memory-budget=" + std::to_string(options.memoryBudget);
  for (const std::string &name : functions)
    flags += " --function=" + name;
  header.flags = flags;
  header.modelHash = toHex(digest);
  PlanBuilder builder(header);

  Emitter emitter(builder, options);
  int64_t extraBase = alignUp(arena, alignment), extraEnd = extraBase;
  for (auto [function, memory] : llvm::zip(targets, plans)) {
    // Each function's unplanned slots start after every function's arena;
    // functions never run at once, so they may share them.
    int64_t functionExtraEnd = extraBase;
    if (failed(emitter.emitFunction(function, memory, extraBase,
                                    functionExtraEnd, alignment)))
      return failure();
    extraEnd = std::max(extraEnd, functionExtraEnd);
  }
  // The kernels compile last, once every op is known to have a lowering.
  if (cuda) {
    if (clone->lookupSymbol(cuda::kKernelModuleName)) {
      FailureOr<cuda::KernelImages> images =
          cuda::compileCudaKernels(*clone, options.cudaChips);
      if (failed(images))
        return failure();
      // Launches name image 0; the session loads the build that fits its
      // device (KernelImage in Plan.fbs).
      auto addImage = [&](plan::ImageFormat format,
                          const cuda::KernelImage &image) {
        builder.addImage(
            format,
            std::vector<uint8_t>(image.bytes.begin(), image.bytes.end()),
            image.chip, image.waitsForPrerequisiteGrids);
      };
      for (const cuda::KernelImage &cubin : images->cubins)
        addImage(plan::ImageFormat::Cubin, cubin);
      addImage(plan::ImageFormat::Ptx, images->ptx);
    }
  } else {
    bool anyKernel = false;
    clone->walk([&](func::FuncOp function) {
      anyKernel |= function->hasAttr(kKernelAttrName);
    });
    if (anyKernel) {
      FailureOr<std::string> image = compileCpuKernels(*clone);
      if (failed(image))
        return failure();
      builder.addImage(plan::ImageFormat::ElfSharedObject,
                       std::vector<uint8_t>(image->begin(), image->end()));
    }
  }
  int64_t arenaEnd = alignUp(extraEnd, alignment);
  if (cuda && emitter.usesLibraryWorkspace()) {
    // cuBLASLt's workspace is planned like any buffer: a region of the
    // arena after every temporary, which no tensor overlaps.
    // One region serves cuBLASLt and cuDNN's attention steps in turn.
    uint64_t workspace = std::max<uint64_t>(
        kCudaLibraryWorkspace,
        alignUp(static_cast<int64_t>(emitter.attentionWorkspace()), alignment));
    builder.setWorkspace(static_cast<uint64_t>(arenaEnd), workspace);
    arenaEnd += static_cast<int64_t>(workspace);
  }
  builder.setArena(static_cast<uint64_t>(arenaEnd),
                   static_cast<uint64_t>(alignment));
  return builder.bytes();
}

FailureOr<std::vector<uint8_t>>
compileCpuPlan(ModuleOp module, llvm::ArrayRef<std::string> functions,
               bool timing) {
  PlanOptions options;
  options.timing = timing;
  return compilePlan(module, functions, options);
}

} // namespace genesis
