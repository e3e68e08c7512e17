//===- CudaLoopEmitter.cpp - Loop fusions as grid-stride loops ------------===//
//
// The loop emitter of genesis-lower-cuda (Passes.td states the algorithm):
// elementwise and broadcast fusions, vectorised 16-byte loads and stores.
//
//===----------------------------------------------------------------------===//

#include "dialect/IR/GenesisOps.h"
#include "passes/Conversion/CudaEmitters.h"
#include "passes/Conversion/ElementEmitter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"

using namespace mlir;

namespace genesis::cuda {

namespace {

/// Element types the loop emitter moves as vectors: 32-bit values and
/// 16-bit floats.
bool isVectorElement(Type type) {
  return type.isIntOrFloat() &&
         (is32Bit(type) || isa<BFloat16Type, Float16Type>(type));
}

bool is16BitFloat(Type type) {
  return isa<BFloat16Type, Float16Type>(getElementTypeOrSelf(type));
}

/// Elements per lane group: 8 when every input and result is a 16-bit
/// float (16-byte vectors), else 4 (16 bytes of 32-bit values, 8 of 16-bit
/// ones), 1 when the element count allows neither.
int64_t laneWidthOf(FusionOp fusion, int64_t n) {
  bool all16Bit = llvm::all_of(fusion.getInputs().getTypes(), is16BitFloat) &&
                  llvm::all_of(fusion.getResultTypes(), is16BitFloat);
  if (all16Bit && n % 8 == 0)
    return 8;
  return n % 4 == 0 ? 4 : 1;
}

} // namespace

namespace {

/// The results of a loop fusion of one shape, which one grid-stride loop
/// computes over blocks [firstBlock, firstBlock + grid) of the kernel.
struct LoopGroup {
  SmallVector<int64_t> shape;
  SmallVector<unsigned> results;
  int64_t width = 1;
  int64_t grid = 0;
  int64_t firstBlock = 0;
};

constexpr int64_t kLoopBlock = 256;

/// Emits `group`'s loop at `b`'s insertion point (see emitLoopFusion).
LogicalResult emitLoopGroup(OpBuilder &b, Location loc, GpuKernel &kernel,
                            Block &body, const LoopGroup &group, Value block) {
  IndexMath im{b, loc};
  auto yield = cast<YieldOp>(body.getTerminator());
  ArrayRef<int64_t> shape = group.shape;
  int64_t width = group.width;
  // Lanes differ only in the last index when the last extent is a multiple
  // of the width: one delinearisation per iteration.
  bool lastDimLanes = !shape.empty() && shape.back() % width == 0;
  int64_t iterations = numel(shape) / width;
  Value local =
      group.firstBlock ? im.sub(block, im.c(group.firstBlock)) : block;
  Value start = im.add(im.mul(local, im.c(kLoopBlock)), im.threadId());
  Value stride = im.c(group.grid * kLoopBlock);
  // Inputs that may be read as vectors: their last extent a multiple of
  // the width, so that an aligned lane group starts at an aligned address.
  SmallVector<Value> flatInputs;
  for (Value input : kernel.inputs) {
    auto type = cast<MemRefType>(input.getType());
    bool vectorised = width > 1 && lastDimLanes && type.getRank() > 0 &&
                      type.getShape().back() % width == 0 &&
                      isVectorElement(type.getElementType());
    flatInputs.push_back(vectorised ? flatten(b, loc, input) : Value());
  }
  SmallVector<Value> outputs, flatOutputs;
  for (unsigned r : group.results) {
    Value output = kernel.outputs[r];
    outputs.push_back(output);
    Type element = cast<MemRefType>(output.getType()).getElementType();
    flatOutputs.push_back(width > 1 && isVectorElement(element)
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
        // Every lane walks the body alike, so the n-th vector read of lane 0
        // is the n-th of every lane: lane 0 loads the vector, the others
        // take their element of it.
        LaneLoads lanes(kernel.inputs, flatInputs, width);
        ElementEmitter emitter(b, loc, kernel.inputs, "genesis-lower-cuda");
        emitter.laneWidth = lastDimLanes ? width : 1;
        emitter.argumentLoader = [&](BlockArgument argument, ValueRange index,
                                     bool contiguous) {
          return lanes.load(b, loc, argument.getArgNumber(), index, contiguous);
        };
        SmallVector<SmallVector<Value>> results(outputs.size());
        SmallVector<SmallVector<Value>> laneIndices;
        for (int64_t lane = 0; lane < width; ++lane) {
          SmallVector<Value> index;
          if (lastDimLanes) {
            index = baseIndex;
            if (lane > 0)
              index.back() = im.add(index.back(), im.c(lane));
          } else {
            index =
                im.delinearize(lane ? im.add(base, im.c(lane)) : base, shape);
          }
          lanes.beginLane(lane);
          emitter.beginElement(index);
          for (auto [i, r] : llvm::enumerate(group.results)) {
            FailureOr<Value> scalar = emitter.at(yield.getOperand(r), index);
            if (failed(scalar)) {
              status = failure();
              scf::YieldOp::create(lb, loc);
              return;
            }
            results[i].push_back(*scalar);
          }
          laneIndices.push_back(index);
        }
        for (auto [i, output] : llvm::enumerate(outputs)) {
          if (flatOutputs[i]) {
            Value vector = vector::FromElementsOp::create(
                b, loc, VectorType::get({width}, results[i][0].getType()),
                results[i]);
            vector::StoreOp::create(
                b, loc, vector, flatOutputs[i], ValueRange{base},
                /*nontemporal=*/false,
                laneAlignment(results[i][0].getType(), width));
            continue;
          }
          for (int64_t l = 0; l < width; ++l)
            memref::StoreOp::create(b, loc, results[i][l], output,
                                    laneIndices[l]);
        }
        scf::YieldOp::create(lb, loc);
      });
  return status;
}

} // namespace

/// Loop fusion: a grid-stride loop over the elements, `width` consecutive
/// elements per iteration (8 when every tensor is 16-bit, else 4). Results
/// are written as one vector per iteration; an input is read as one vector
/// wherever the element walk reaches it through index maps that keep the
/// lanes consecutive and aligned (the same shape; a transpose keeping the
/// last dimension; a slice, pad or concat with edges at multiples of the
/// width; a reshape whose last extents are multiples of it; a broadcast
/// along the rows), else element by element. Results of several shapes (a
/// horizontal fusion, genesis-horizontal-loop-fusion) are computed by one
/// such loop per shape, each over its own range of the kernel's blocks.
FailureOr<GpuKernel> emitLoopFusion(FusionOp fusion, StringRef name,
                                    OpBuilder &moduleBuilder) {
  Location loc = fusion.getLoc();
  SmallVector<LoopGroup> groups;
  int64_t blocks = 0;
  for (auto [r, type] : llvm::enumerate(fusion.getResultTypes())) {
    ArrayRef<int64_t> shape = cast<RankedTensorType>(type).getShape();
    auto it = llvm::find_if(
        groups, [&](const LoopGroup &g) { return ArrayRef(g.shape) == shape; });
    if (it == groups.end()) {
      groups.emplace_back();
      it = std::prev(groups.end());
      it->shape = llvm::to_vector(shape);
    }
    it->results.push_back(static_cast<unsigned>(r));
  }
  for (LoopGroup &group : groups) {
    int64_t n = numel(group.shape);
    group.width = laneWidthOf(fusion, n);
    group.grid = std::min(ceilDiv(n / group.width, kLoopBlock), kMaxGridBlocks);
    group.firstBlock = blocks;
    blocks += std::max<int64_t>(group.grid, 1);
  }
  GpuKernel kernel =
      createGpuKernel(moduleBuilder, loc, name, fusion.getInputs().getTypes(),
                      fusion.getResultTypes());
  setLaunch(kernel, blocks, kLoopBlock);
  OpBuilder b = OpBuilder::atBlockBegin(&kernel.function.getBody().front());
  IndexMath im{b, loc};
  Value block = im.blockId();
  for (const LoopGroup &group : groups) {
    OpBuilder::InsertionGuard guard(b);
    if (groups.size() > 1) {
      Value after = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge,
                                          block, im.c(group.firstBlock));
      Value before = im.lt(block, im.c(group.firstBlock + group.grid));
      auto mine = scf::IfOp::create(
          b, loc, arith::AndIOp::create(b, loc, after, before),
          /*withElse=*/false);
      b.setInsertionPointToStart(&mine.getThenRegion().front());
    }
    if (failed(emitLoopGroup(b, loc, kernel, fusion.getBody().front(), group,
                             block))) {
      kernel.function.erase();
      return failure();
    }
  }
  gpu::ReturnOp::create(b, loc);
  return kernel;
}

} // namespace genesis::cuda
