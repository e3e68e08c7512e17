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

/// Element types the loop emitter moves as vectors of 4: 32-bit values
/// (16 bytes) and 16-bit floats (8 bytes).
bool isVectorElement(Type type) {
  return type.isIntOrFloat() &&
         (is32Bit(type) || isa<BFloat16Type, Float16Type>(type));
}

} // namespace

/// Loop fusion: a grid-stride loop over the elements, `width` consecutive
/// elements per iteration. Inputs of the result's shape and a 32-bit type
/// are read, and 32-bit results written, as one 16-byte vector per
/// iteration; 16-bit ones (mixed precision's casts) as one 8-byte vector;
/// broadcast inputs, and inputs read through data-movement ops, are read
/// element by element through the index map.
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

  GpuKernel kernel =
      createGpuKernel(moduleBuilder, loc, name, fusion.getInputs().getTypes(),
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
                      isVectorElement(type.getElementType());
    vectorInput.push_back(vectorised);
    flatInputs.push_back(vectorised ? flatten(b, loc, input) : Value());
  }
  SmallVector<Value> flatOutputs;
  for (Value output : kernel.outputs) {
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
        // The vector of each vectorised input, loaded on first use.
        DenseMap<unsigned, SmallVector<Value>> lanes;
        int64_t lane = 0;
        SmallVector<Value> laneIndex;
        ElementEmitter emitter(b, loc, kernel.inputs, "genesis-lower-cuda");
        emitter.argumentLoader = [&](BlockArgument argument,
                                     ValueRange index) -> FailureOr<Value> {
          unsigned k = argument.getArgNumber();
          // An input read through a transpose, slice, reshape, pad or
          // concat is read at another index than the lane's: one element.
          if (!vectorInput[k] || !llvm::equal(index, laneIndex))
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
              loaded.push_back(vector::ExtractOp::create(b, loc, vector,
                                                         ArrayRef<int64_t>{l}));
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
            index =
                im.delinearize(lane ? im.add(base, im.c(lane)) : base, shape);
          }
          laneIndex = index;
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
                b, loc, VectorType::get({width}, results[r][0].getType()),
                results[r]);
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

} // namespace genesis::cuda
