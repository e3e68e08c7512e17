//===- LowerToCuda.cpp - Fusion regions and ops to GPU kernels -------------===//
//
// Implements genesis-lower-cuda; Passes.td states the algorithm. The
// emitters are XLA's kinds: a loop emitter for elementwise and broadcast
// groups, a row-reduction emitter (a warp, or a block, per row), a
// column-reduction emitter (a tile of columns per block, the rows split
// across the block's warps) and, for everything else, the CPU op kernels run
// one outer iteration per thread.
//
//===----------------------------------------------------------------------===//

#include "dialect/IR/GenesisOps.h"
#include "passes/Conversion/CpuKernels.h"
#include "passes/Conversion/CudaKernels.h"
#include "passes/Conversion/ElementEmitter.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

namespace genesis {
#define GEN_PASS_DEF_GENESISLOWERCUDA
#include "passes/Passes.h.inc"
} // namespace genesis

using namespace mlir;
using namespace genesis;

namespace {

constexpr int64_t kWarp = 32;
/// Enough resident blocks of 256 threads for every SM of an H100 (132 SMs, 8
/// blocks each); grid-stride loops cover the rest.
constexpr int64_t kMaxGridBlocks = 132 * 8;

int64_t numel(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// Index arithmetic of a kernel body.
struct IndexMath {
  OpBuilder &b;
  Location loc;
  Value c(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  Value div(Value x, int64_t y) {
    return y == 1 ? x : arith::DivUIOp::create(b, loc, x, c(y)).getResult();
  }
  Value rem(Value x, int64_t y) {
    return arith::RemUIOp::create(b, loc, x, c(y));
  }
  Value lt(Value x, Value y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, x, y);
  }
  /// The row-major multi-index of `linear` in `shape` (divisions by
  /// constants, which the backend turns into multiplications).
  SmallVector<Value> delinearize(Value linear, ArrayRef<int64_t> shape) {
    SmallVector<Value> index(shape.size());
    int64_t stride = 1;
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
      Value quotient = div(linear, stride);
      index[d] = d == 0 ? quotient : rem(quotient, shape[d]);
      stride *= shape[d];
    }
    return index;
  }
  Value threadId() { return gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x); }
  Value blockId() { return gpu::BlockIdOp::create(b, loc, gpu::Dimension::x); }
  Value globalId(int64_t blockSize) {
    return add(mul(blockId(), c(blockSize)), threadId());
  }
};

/// A gpu.func kernel taking `inputs` then `outputs` as memrefs, with
/// `workgroup` shared-memory buffers, and its launch configuration.
struct GpuKernel {
  gpu::GPUFuncOp function;
  SmallVector<Value> inputs, outputs;
  SmallVector<Value> workgroup;
  cuda::Launch launch;
};

GpuKernel createGpuKernel(OpBuilder &moduleBuilder, Location loc,
                          StringRef name, TypeRange inputs, TypeRange outputs,
                          TypeRange workgroup = {}) {
  SmallVector<Type> argTypes;
  for (TypeRange range : {inputs, outputs})
    for (Type type : range) {
      auto tensor = cast<RankedTensorType>(type);
      argTypes.push_back(
          MemRefType::get(tensor.getShape(), tensor.getElementType()));
    }
  auto function = gpu::GPUFuncOp::create(
      moduleBuilder, loc, name, moduleBuilder.getFunctionType(argTypes, {}),
      workgroup);
  function->setAttr(gpu::GPUDialect::getKernelFuncAttrName(),
                    moduleBuilder.getUnitAttr());
  GpuKernel kernel;
  kernel.function = function;
  Block &entry = function.getBody().front();
  for (unsigned i = 0; i < argTypes.size(); ++i)
    (i < inputs.size() ? kernel.inputs : kernel.outputs)
        .push_back(entry.getArgument(i));
  for (BlockArgument buffer : function.getWorkgroupAttributions())
    kernel.workgroup.push_back(buffer);
  return kernel;
}

/// Sets the kernel's launch and its `gpu.known_block_size`, which lets the
/// backend bound the thread indices.
void setLaunch(GpuKernel &kernel, int64_t grid, int64_t block) {
  kernel.launch.grid = std::max<int64_t>(grid, 1);
  kernel.launch.block = block;
  OpBuilder b(kernel.function);
  kernel.function.setKnownBlockSizeAttr(b.getDenseI32ArrayAttr(
      {static_cast<int32_t>(block), 1, 1}));
}

MemRefType workgroupBuffer(MLIRContext *context, int64_t size, Type element) {
  return MemRefType::get(
      {size}, element, MemRefLayoutAttrInterface(),
      gpu::AddressSpaceAttr::get(context, gpu::AddressSpace::Workgroup));
}

/// `value` viewed as a 1-D memref of all its elements.
Value flatten(OpBuilder &b, Location loc, Value memref) {
  auto type = cast<MemRefType>(memref.getType());
  if (type.getRank() == 1)
    return memref;
  ReassociationIndices all;
  for (int64_t d = 0; d < type.getRank(); ++d)
    all.push_back(d);
  if (type.getRank() == 0)
    return memref::ExpandShapeOp::create(
        b, loc, MemRefType::get({1}, type.getElementType()), memref,
        ArrayRef<ReassociationIndices>{}, ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
  return memref::CollapseShapeOp::create(b, loc, memref,
                                         ArrayRef<ReassociationIndices>{all});
}

bool is32Bit(Type type) { return type.getIntOrFloatBitWidth() == 32; }

//===----------------------------------------------------------------------===//
// Loop emitter
//===----------------------------------------------------------------------===//

/// Loop fusion: a grid-stride loop over the elements, `width` consecutive
/// elements per iteration. Inputs of the result's shape and 32-bit type are
/// read, and 32-bit results written, as one 16-byte vector per iteration;
/// broadcast inputs are read element by element through the index map.
FailureOr<GpuKernel> emitLoopFusion(FusionOp fusion, StringRef name,
                                    OpBuilder &moduleBuilder) {
  Location loc = fusion.getLoc();
  auto yield = cast<YieldOp>(fusion.getBody().front().getTerminator());
  auto resultType = cast<RankedTensorType>(fusion.getResultTypes()[0]);
  ArrayRef<int64_t> shape = resultType.getShape();
  for (Type type : fusion.getResultTypes())
    if (cast<RankedTensorType>(type).getShape() != shape)
      return fusion.emitError("genesis-lower-cuda: the results of a loop "
                              "fusion must share one shape");
  int64_t n = numel(shape);
  int64_t width = n % 4 == 0 ? 4 : 1;
  // Lanes differ only in the last index when the last extent is a multiple
  // of the width: one delinearisation per iteration.
  bool lastDimLanes = !shape.empty() && shape.back() % width == 0;

  GpuKernel kernel = createGpuKernel(moduleBuilder, loc, name,
                                     fusion.getInputs().getTypes(),
                                     fusion.getResultTypes());
  int64_t iterations = n / width;
  int64_t block = 256;
  int64_t grid = std::min(ceilDiv(iterations, block), kMaxGridBlocks);
  setLaunch(kernel, grid, block);

  OpBuilder b = OpBuilder::atBlockBegin(&kernel.function.getBody().front());
  IndexMath im{b, loc};
  Value start = im.globalId(block);
  Value stride = im.c(grid * block);
  Block &body = fusion.getBody().front();
  SmallVector<bool> vectorInput;
  SmallVector<Value> flatInputs;
  for (auto [i, input] : llvm::enumerate(kernel.inputs)) {
    auto type = cast<MemRefType>(input.getType());
    bool vectorised = width > 1 && type.getShape() == shape &&
                      type.getElementType().isIntOrFloat() &&
                      is32Bit(type.getElementType());
    vectorInput.push_back(vectorised);
    flatInputs.push_back(vectorised ? flatten(b, loc, input) : Value());
  }
  SmallVector<Value> flatOutputs;
  for (Value output : kernel.outputs) {
    Type element = cast<MemRefType>(output.getType()).getElementType();
    flatOutputs.push_back(width > 1 && is32Bit(element)
                              ? flatten(b, loc, output)
                              : Value());
  }

  LogicalResult status = success();
  scf::ForOp::create(
      b, loc, start, im.c(iterations), stride, ValueRange(),
      [&](OpBuilder &lb, Location, Value iteration, ValueRange) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(lb.getInsertionBlock(), lb.getInsertionPoint());
        Value base = im.mul(iteration, im.c(width));
        SmallVector<Value> baseIndex;
        if (lastDimLanes)
          baseIndex = im.delinearize(base, shape);
        // The vector of each vectorised input, loaded on first use.
        DenseMap<unsigned, SmallVector<Value>> lanes;
        int64_t lane = 0;
        ElementEmitter emitter(b, loc, kernel.inputs, "genesis-lower-cuda");
        emitter.argumentLoader = [&](BlockArgument argument,
                                     ValueRange index) -> FailureOr<Value> {
          unsigned k = argument.getArgNumber();
          if (!vectorInput[k])
            return memref::LoadOp::create(b, loc, kernel.inputs[k], index)
                .getResult();
          auto &loaded = lanes[k];
          if (loaded.empty()) {
            Type element =
                cast<MemRefType>(kernel.inputs[k].getType()).getElementType();
            Value vector = vector::LoadOp::create(
                b, loc, VectorType::get({width}, element), flatInputs[k],
                ValueRange{base}, /*nontemporal=*/false, llvm::Align(16));
            for (int64_t l = 0; l < width; ++l)
              loaded.push_back(
                  vector::ExtractOp::create(b, loc, vector, ArrayRef<int64_t>{l}));
          }
          return loaded[lane];
        };
        SmallVector<SmallVector<Value>> results(kernel.outputs.size());
        SmallVector<SmallVector<Value>> laneIndices;
        for (lane = 0; lane < width; ++lane) {
          SmallVector<Value> index;
          if (lastDimLanes) {
            index = baseIndex;
            if (lane > 0)
              index.back() = im.add(index.back(), im.c(lane));
          } else {
            index = im.delinearize(lane ? im.add(base, im.c(lane)) : base, shape);
          }
          emitter.beginElement(index);
          for (auto [r, value] : llvm::enumerate(yield.getValues())) {
            FailureOr<Value> scalar = emitter.at(value, index);
            if (failed(scalar)) {
              status = failure();
              scf::YieldOp::create(lb, loc);
              return;
            }
            results[r].push_back(*scalar);
          }
          laneIndices.push_back(index);
        }
        for (auto [r, output] : llvm::enumerate(kernel.outputs)) {
          if (flatOutputs[r]) {
            Value vector = vector::FromElementsOp::create(
                b, loc,
                VectorType::get({width}, results[r][0].getType()), results[r]);
            vector::StoreOp::create(b, loc, vector, flatOutputs[r],
                                    ValueRange{base}, /*nontemporal=*/false,
                                    llvm::Align(16));
            continue;
          }
          for (int64_t l = 0; l < width; ++l)
            memref::StoreOp::create(b, loc, results[r][l], output,
                                    laneIndices[l]);
        }
        scf::YieldOp::create(lb, loc);
      });
  (void)body;
  gpu::ReturnOp::create(b, loc);
  if (failed(status)) {
    kernel.function.erase();
    return failure();
  }
  return kernel;
}

//===----------------------------------------------------------------------===//
// Reduction emitters
//===----------------------------------------------------------------------===//

/// The combining function of a reduction and its identity.
struct Reducer {
  Operation *root;
  Type element;

  Value identity(OpBuilder &b, Location loc) const {
    double init = isa<ReduceSumOp>(root)   ? 0.0
                  : isa<ReduceMaxOp>(root) ? -INFINITY
                                           : INFINITY;
    return arith::ConstantOp::create(b, loc, element,
                                     b.getFloatAttr(element, init));
  }
  Value combine(OpBuilder &b, Location loc, Value x, Value y) const {
    if (isa<ReduceSumOp>(root))
      return arith::AddFOp::create(b, loc, x, y);
    if (isa<ReduceMaxOp>(root))
      return arith::MaximumFOp::create(b, loc, x, y);
    return arith::MinimumFOp::create(b, loc, x, y);
  }
  /// Combines `value` across the 32 lanes of each warp (butterfly: every
  /// lane ends with the total).
  Value warpReduce(OpBuilder &b, Location loc, Value value) const {
    Value width = arith::ConstantIntOp::create(b, loc, b.getI32Type(), kWarp);
    for (int64_t offset = kWarp / 2; offset > 0; offset /= 2) {
      Value distance =
          arith::ConstantIntOp::create(b, loc, b.getI32Type(), offset);
      Value other = gpu::ShuffleOp::create(b, loc, value, distance, width,
                                           gpu::ShuffleMode::XOR)
                        .getShuffleResult();
      value = combine(b, loc, value, other);
    }
    return value;
  }
};

/// The reduced operand's index for a kept index and a reduced index.
SmallVector<Value> mergeIndex(ArrayRef<int64_t> kept, ArrayRef<int64_t> reduced,
                              ValueRange keptIndex, ValueRange reducedIndex) {
  SmallVector<Value> full(kept.size() + reduced.size());
  for (auto [i, d] : llvm::enumerate(kept))
    full[d] = keptIndex[i];
  for (auto [i, d] : llvm::enumerate(reduced))
    full[d] = reducedIndex[i];
  return full;
}

/// The result index of the reduction for a kept index.
SmallVector<Value> resultIndex(IndexMath &im, Operation *root, int64_t rank,
                               ArrayRef<int64_t> kept, ValueRange keptIndex) {
  if (!root->hasAttr("keepdim"))
    return SmallVector<Value>(keptIndex.begin(), keptIndex.end());
  SmallVector<Value> index(rank, im.c(0));
  for (auto [i, d] : llvm::enumerate(kept))
    index[d] = keptIndex[i];
  return index;
}

/// A reduction fusion: one result, a reduce_sum/max/min of a fused operand.
/// The reduced dimensions trailing the kept ones make a row reduction (a
/// warp per row, or a block when there are few rows); leading ones a column
/// reduction; others a thread per kept element looping over the rest.
FailureOr<GpuKernel> emitReductionFusion(FusionOp fusion, StringRef name,
                                         OpBuilder &moduleBuilder) {
  Location loc = fusion.getLoc();
  MLIRContext *context = fusion.getContext();
  auto yield = cast<YieldOp>(fusion.getBody().front().getTerminator());
  if (yield.getValues().size() != 1)
    return fusion.emitError(
        "genesis-lower-cuda: a reduction fusion must have one result");
  Operation *root = yield.getValues()[0].getDefiningOp();
  Value operand = root->getOperand(0);
  auto operandType = cast<RankedTensorType>(operand.getType());
  Type element = operandType.getElementType();
  if (!isa<FloatType>(element))
    return fusion.emitError("genesis-lower-cuda: integer reductions are not "
                            "supported in GPU kernels yet");
  ArrayRef<int64_t> dims =
      llvm::TypeSwitch<Operation *, ArrayRef<int64_t>>(root)
          .Case<ReduceSumOp, ReduceMaxOp, ReduceMinOp>(
              [](auto reduce) { return reduce.getDims(); });
  int64_t rank = operandType.getRank();
  SmallVector<int64_t> kept, reduced, keptShape, reducedShape;
  for (int64_t d = 0; d < rank; ++d) {
    bool isReduced = llvm::is_contained(dims, d);
    (isReduced ? reduced : kept).push_back(d);
    (isReduced ? reducedShape : keptShape).push_back(operandType.getDimSize(d));
  }
  int64_t keptCount = numel(keptShape), reducedCount = numel(reducedShape);
  bool trailing = kept.empty() || reduced.empty() || kept.back() < reduced.front();
  bool leading = !kept.empty() && !reduced.empty() && reduced.back() < kept.front();
  Reducer reducer{root, element};
  enum class Kind { Row, Column, PerElement } kind =
      trailing ? Kind::Row : leading ? Kind::Column : Kind::PerElement;

  // Row: a warp per row, or a block of 1024 threads per row when the rows
  // are too few to fill the machine. Column: tiles of 32 columns, the rows
  // split across `rowGroups` warps, combined through shared memory.
  int64_t block = 256, rowsPerBlock = 1, rowGroups = 1;
  bool blockPerRow = false;
  SmallVector<Type> workgroup;
  if (kind == Kind::Row) {
    blockPerRow = keptCount < 132 * 16 && reducedCount >= 4096;
    if (blockPerRow) {
      block = 1024;
      workgroup.push_back(workgroupBuffer(context, kWarp, element));
    } else {
      rowsPerBlock = block / kWarp;
    }
  } else if (kind == Kind::Column) {
    rowGroups = reducedCount >= 256 ? 32 : 8;
    block = kWarp * rowGroups;
    workgroup.push_back(workgroupBuffer(context, block, element));
  }
  GpuKernel kernel =
      createGpuKernel(moduleBuilder, loc, name, fusion.getInputs().getTypes(),
                      fusion.getResultTypes(), workgroup);
  OpBuilder b = OpBuilder::atBlockBegin(&kernel.function.getBody().front());
  IndexMath im{b, loc};
  ElementEmitter emitter(b, loc, kernel.inputs, "genesis-lower-cuda");
  Value output = kernel.outputs[0];
  LogicalResult status = success();
  auto valueAt = [&](ValueRange keptIndex, ValueRange reducedIndex) -> Value {
    SmallVector<Value> full = mergeIndex(kept, reduced, keptIndex, reducedIndex);
    emitter.beginElement(full);
    FailureOr<Value> x = emitter.at(operand, full);
    if (failed(x)) {
      status = failure();
      return reducer.identity(b, loc);
    }
    return *x;
  };
  // Accumulates `operand` over reduced positions [first, count) by `step`
  // for the kept position `keptIndex`.
  auto accumulate = [&](ValueRange keptIndex, Value first, int64_t step) {
    auto loop = scf::ForOp::create(
        b, loc, first, im.c(reducedCount), im.c(step),
        ValueRange{reducer.identity(b, loc)},
        [&](OpBuilder &lb, Location, Value r, ValueRange carried) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(lb.getInsertionBlock(), lb.getInsertionPoint());
          Value x = valueAt(keptIndex, im.delinearize(r, reducedShape));
          scf::YieldOp::create(lb, loc, reducer.combine(b, loc, carried[0], x));
        });
    return loop.getResult(0);
  };
  auto store = [&](Value total, ValueRange keptIndex) {
    memref::StoreOp::create(b, loc, total, output,
                            resultIndex(im, root, rank, kept, keptIndex));
  };
  auto ifThen = [&](Value condition, function_ref<void()> then) {
    auto branch = scf::IfOp::create(b, loc, condition, /*withElse=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&branch.getThenRegion().front());
    then();
  };
  Value zero = im.c(0);

  if (kind == Kind::Row && !blockPerRow) {
    setLaunch(kernel, ceilDiv(keptCount, rowsPerBlock), block);
    Value thread = im.threadId();
    Value lane = im.rem(thread, kWarp);
    Value row = im.add(im.mul(im.blockId(), im.c(rowsPerBlock)),
                       im.div(thread, kWarp));
    ifThen(im.lt(row, im.c(keptCount)), [&] {
      SmallVector<Value> keptIndex = im.delinearize(row, keptShape);
      Value total = reducer.warpReduce(b, loc, accumulate(keptIndex, lane, kWarp));
      ifThen(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane,
                                   zero),
             [&] { store(total, keptIndex); });
    });
  } else if (kind == Kind::Row) {
    setLaunch(kernel, keptCount, block);
    Value thread = im.threadId();
    Value lane = im.rem(thread, kWarp), warp = im.div(thread, kWarp);
    Value row = im.blockId();
    SmallVector<Value> keptIndex = im.delinearize(row, keptShape);
    Value partial =
        reducer.warpReduce(b, loc, accumulate(keptIndex, thread, block));
    Value shared = kernel.workgroup[0];
    ifThen(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane, zero),
           [&] { memref::StoreOp::create(b, loc, partial, shared, warp); });
    gpu::BarrierOp::create(b, loc);
    ifThen(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, warp, zero),
           [&] {
             Value mine = memref::LoadOp::create(b, loc, shared, lane);
             Value total = reducer.warpReduce(b, loc, mine);
             ifThen(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                          lane, zero),
                    [&] { store(total, keptIndex); });
           });
  } else if (kind == Kind::Column) {
    setLaunch(kernel, ceilDiv(keptCount, kWarp), block);
    Value thread = im.threadId();
    Value lane = im.rem(thread, kWarp), group = im.div(thread, kWarp);
    Value column = im.add(im.mul(im.blockId(), im.c(kWarp)), lane);
    Value inRange = im.lt(column, im.c(keptCount));
    // Out-of-range lanes clamp to column 0 and contribute nothing: every
    // thread must reach the barrier.
    Value safeColumn = arith::SelectOp::create(b, loc, inRange, column, im.c(0));
    SmallVector<Value> keptIndex = im.delinearize(safeColumn, keptShape);
    Value partial = accumulate(keptIndex, group, rowGroups);
    Value shared = kernel.workgroup[0];
    memref::StoreOp::create(b, loc, partial, shared, thread);
    gpu::BarrierOp::create(b, loc);
    ifThen(arith::AndIOp::create(
               b, loc, inRange,
               arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, group,
                                     zero)),
           [&] {
             // Combined in group order: a fixed order, so deterministic.
             Value total = memref::LoadOp::create(b, loc, shared, lane);
             for (int64_t g = 1; g < rowGroups; ++g)
               total = reducer.combine(
                   b, loc, total,
                   memref::LoadOp::create(b, loc, shared,
                                          im.add(lane, im.c(g * kWarp))));
             store(total, keptIndex);
           });
  } else {
    setLaunch(kernel, ceilDiv(keptCount, 256), 256);
    Value position = im.globalId(256);
    ifThen(im.lt(position, im.c(keptCount)), [&] {
      SmallVector<Value> keptIndex = im.delinearize(position, keptShape);
      store(accumulate(keptIndex, im.c(0), 1), keptIndex);
    });
  }
  gpu::ReturnOp::create(b, loc);
  if (failed(status)) {
    kernel.function.erase();
    return failure();
  }
  return kernel;
}

//===----------------------------------------------------------------------===//
// Ops outside fusions
//===----------------------------------------------------------------------===//

/// Runs the CPU op kernel of `op` (a func.func over [begin, end) of its
/// outer loop, cloned into the GPU module) with one outer iteration per
/// thread. Elementwise ops (optimizer updates, dropout) are emitted over
/// their flattened shape, so every element gets a thread.
FailureOr<GpuKernel> emitOuterLoopKernel(Operation *op, StringRef name,
                                         OpBuilder &moduleBuilder) {
  Location loc = op->getLoc();
  FailureOr<func::FuncOp> body = cpu::emitOpKernel(
      op, (name + "_body").str(), moduleBuilder, /*flattenElementwise=*/true);
  if (failed(body))
    return failure();
  int64_t extent =
      (*body)->getAttrOfType<IntegerAttr>("genesis.outer_extent").getInt();
  (*body)->removeAttr("genesis.kernel");
  (*body)->removeAttr("genesis.outer_extent");
  (*body).setPrivate();
  auto argTypes = (*body).getArgumentTypes().drop_back(2);
  unsigned numInputs = op->getNumOperands();
  if (isa<DropoutOp>(op))
    numInputs = 2;
  SmallVector<Type> inputs, outputs;
  for (auto [i, type] : llvm::enumerate(argTypes)) {
    auto memref = cast<MemRefType>(type);
    (i < numInputs ? inputs : outputs)
        .push_back(RankedTensorType::get(memref.getShape(),
                                         memref.getElementType()));
  }
  GpuKernel kernel = createGpuKernel(moduleBuilder, loc, name, inputs, outputs);
  int64_t block = 128;
  setLaunch(kernel, ceilDiv(extent, block), block);
  OpBuilder b = OpBuilder::atBlockBegin(&kernel.function.getBody().front());
  IndexMath im{b, loc};
  Value position = im.globalId(block);
  auto branch = scf::IfOp::create(b, loc, im.lt(position, im.c(extent)),
                                  /*withElse=*/false);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&branch.getThenRegion().front());
    SmallVector<Value> arguments(kernel.inputs);
    arguments.append(kernel.outputs);
    arguments.push_back(position);
    arguments.push_back(im.add(position, im.c(1)));
    func::CallOp::create(b, loc, *body, arguments);
  }
  gpu::ReturnOp::create(b, loc);
  return kernel;
}

struct GenesisLowerCudaPass
    : public genesis::impl::GenesisLowerCudaBase<GenesisLowerCudaPass> {
  using GenesisLowerCudaBase::GenesisLowerCudaBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *context = &getContext();
    SmallVector<std::pair<func::FuncOp, Operation *>> work;
    for (auto function : module.getOps<func::FuncOp>())
      for (Operation &op : function.getBody().getOps())
        if (isa<FusionOp>(op) || cpu::hasOpKernel(&op))
          work.emplace_back(function, &op);
    if (work.empty())
      return;
    // Index arithmetic is 32-bit in the kernels (see compileCudaKernels).
    for (auto [function, op] : work)
      for (Type type : llvm::concat<Type>(op->getOperandTypes(),
                                          op->getResultTypes()))
        if (auto tensor = dyn_cast<RankedTensorType>(type);
            tensor && numel(tensor.getShape()) >= (int64_t{1} << 31)) {
          op->emitError("genesis-lower-cuda: tensor ")
              << tensor << " has 2^31 or more elements; GPU kernels index "
              << "with 32 bits";
          return signalPassFailure();
        }
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                    UnitAttr::get(context));
    OpBuilder top = OpBuilder::atBlockEnd(module.getBody());
    auto gpuModule =
        gpu::GPUModuleOp::create(top, module.getLoc(), cuda::kKernelModuleName);
    OpBuilder builder = OpBuilder::atBlockEnd(gpuModule.getBody());
    llvm::StringMap<unsigned> counters;
    for (auto [function, op] : work) {
      StringRef kind = isa<FusionOp>(op) ? StringRef("fusion")
                                         : op->getName().stripDialect();
      std::string name = (function.getSymName() + "_" + kind +
                          Twine(counters[(function.getSymName() + kind).str()]++))
                             .str();
      FailureOr<GpuKernel> kernel = failure();
      if (auto fusion = dyn_cast<FusionOp>(op)) {
        auto yield = cast<YieldOp>(fusion.getBody().front().getTerminator());
        Operation *root = yield.getValues()[0].getDefiningOp();
        kernel = root && isa<ReduceSumOp, ReduceMaxOp, ReduceMinOp>(root)
                     ? emitReductionFusion(fusion, name, builder)
                     : emitLoopFusion(fusion, name, builder);
      } else {
        kernel = emitOuterLoopKernel(op, name, builder);
      }
      if (failed(kernel))
        return signalPassFailure();
      op->setAttr("genesis.kernel", FlatSymbolRefAttr::get(context, name));
      cuda::setLaunchAttr(op, kernel->launch);
    }
  }
};

} // namespace
