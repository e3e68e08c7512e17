//===- CudaDataKernels.cpp - Data-movement GPU kernels --------------------===//
//
// Part of genesis-lower-cuda: the transpose emitter.
//
//===----------------------------------------------------------------------===//

#include "dialect/IR/GenesisOps.h"
#include "passes/Conversion/CudaEmitters.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

namespace genesis::cuda {

namespace {

/// Side of the square tile of the shared-memory transpose, and the rows a
/// 256-thread block covers per step (each thread moves kTile / kTileRows
/// elements each way).
constexpr int64_t kTile = 32;
constexpr int64_t kTileRows = 8;
/// A padding column: the tile's columns fall in distinct banks.
constexpr int64_t kTileStride = kTile + 1;
constexpr int64_t kBlock = kTile * kTileRows;

/// A permutation of a shape reduced to its essentials: size-1 dimensions
/// dropped and operand dimensions that stay adjacent in the result merged,
/// so that e.g. [2, 0, 1] of 3x4x5 becomes [1, 0] of 12x5.
struct CollapsedPermutation {
  SmallVector<int64_t> shape, permutation;
};

CollapsedPermutation collapse(ArrayRef<int64_t> shape,
                              ArrayRef<int64_t> permutation) {
  SmallVector<int64_t> newIndex(shape.size(), -1);
  int64_t kept = 0;
  for (auto [d, size] : llvm::enumerate(shape))
    if (size != 1)
      newIndex[d] = kept++;
  SmallVector<int64_t> perm;
  for (int64_t d : permutation)
    if (newIndex[d] >= 0)
      perm.push_back(newIndex[d]);
  SmallVector<int64_t> reduced;
  for (int64_t size : shape)
    if (size != 1)
      reduced.push_back(size);

  // Runs of consecutive operand dimensions in result order form groups; a
  // group's operand position is the rank of its first dimension.
  SmallVector<int64_t> firsts, sizes;
  for (auto [i, d] : llvm::enumerate(perm)) {
    if (i > 0 && d == perm[i - 1] + 1) {
      sizes.back() *= reduced[d];
      continue;
    }
    firsts.push_back(d);
    sizes.push_back(reduced[d]);
  }
  CollapsedPermutation result;
  result.shape.resize(firsts.size());
  for (auto [g, first] : llvm::enumerate(firsts)) {
    int64_t position =
        llvm::count_if(firsts, [&](int64_t f) { return f < first; });
    result.permutation.push_back(position);
    result.shape[position] = sizes[g];
  }
  return result;
}

SmallVector<int64_t> rowMajorStrides(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

void ifThen(OpBuilder &b, Location loc, Value condition,
            function_ref<void()> then) {
  if (!condition)
    return then();
  auto branch = scf::IfOp::create(b, loc, condition, /*withElse=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&branch.getThenRegion().front());
  then();
}

} // namespace

bool hasGpuTransposeKernel(Operation *op) {
  auto transpose = dyn_cast<TransposeOp>(op);
  return transpose &&
         transpose.getOperand().getType().getElementType().isIntOrFloat();
}

/// On the collapsed permutation (see collapse): when the innermost operand
/// dimension moves, the classic tiled transpose. The operand is viewed as
/// [batch..., A, ..., B] where B is its last dimension and A the one that
/// becomes the result's last; a 256-thread block moves one 32x32 tile of
/// (A, B) of one batch index: it reads 8 rows of 32 consecutive B at a time
/// (coalesced) into a 32x33 shared tile, waits at a barrier, and writes 8
/// rows of 32 consecutive A at a time (coalesced). The 1-D grid enumerates
/// (batch, A tile, B tile). Otherwise the innermost dimension stays, and a
/// thread per result element copies through the index map (reads of
/// consecutive threads are consecutive within the innermost run).
FailureOr<GpuKernel> emitTransposeKernel(Operation *op, StringRef name,
                                         OpBuilder &moduleBuilder) {
  auto transpose = cast<TransposeOp>(op);
  Location loc = op->getLoc();
  auto operandType = transpose.getOperand().getType();
  Type element = operandType.getElementType();
  int64_t n = operandType.getNumElements();
  CollapsedPermutation view =
      collapse(operandType.getShape(), transpose.getPermutation());
  int64_t rank = view.shape.size();
  ArrayRef<int64_t> shape = view.shape, perm = view.permutation;
  SmallVector<int64_t> resultShape;
  for (int64_t d : perm)
    resultShape.push_back(shape[d]);
  SmallVector<int64_t> inStrides = rowMajorStrides(shape);
  // The result's stride of each operand dimension.
  SmallVector<int64_t> outStrides(rank);
  for (auto [i, stride] : llvm::enumerate(rowMajorStrides(resultShape)))
    outStrides[perm[i]] = stride;
  bool tiled = n > 0 && rank >= 2 && perm.back() != rank - 1;

  SmallVector<Type> workgroup;
  if (tiled)
    workgroup.push_back(
        workgroupBuffer(op->getContext(), kTile * kTileStride, element));
  GpuKernel kernel =
      createGpuKernel(moduleBuilder, loc, name, op->getOperandTypes(),
                      op->getResultTypes(), workgroup);
  OpBuilder b = OpBuilder::atBlockBegin(&kernel.function.getBody().front());
  IndexMath im{b, loc};
  Value in = flatten(b, loc, kernel.inputs[0]);
  Value out = flatten(b, loc, kernel.outputs[0]);

  if (!tiled) {
    setLaunch(kernel, ceilDiv(n, kBlock), kBlock);
    Value position = im.globalId(kBlock);
    ifThen(b, loc, im.lt(position, im.c(n)), [&] {
      SmallVector<Value> index = im.delinearize(position, resultShape);
      Value offset = im.c(0);
      for (auto [i, j] : llvm::enumerate(index))
        offset = im.add(offset, im.mul(j, im.c(inStrides[perm[i]])));
      Value x = memref::LoadOp::create(b, loc, in, offset);
      memref::StoreOp::create(b, loc, x, out, position);
    });
    gpu::ReturnOp::create(b, loc);
    return kernel;
  }

  int64_t dimA = perm.back(), dimB = rank - 1;
  int64_t sizeA = shape[dimA], sizeB = shape[dimB];
  int64_t tilesA = ceilDiv(sizeA, kTile), tilesB = ceilDiv(sizeB, kTile);
  SmallVector<int64_t> batchDims, batchShape;
  for (int64_t d = 0; d < rank; ++d)
    if (d != dimA && d != dimB) {
      batchDims.push_back(d);
      batchShape.push_back(shape[d]);
    }
  setLaunch(kernel, tilesA * tilesB * numel(batchShape), kBlock);

  Value thread = im.threadId(), blockId = im.blockId();
  Value tx = im.rem(thread, kTile), ty = im.div(thread, kTile);
  Value tileB = im.mul(im.rem(blockId, tilesB), im.c(kTile));
  Value tileA = im.mul(im.rem(im.div(blockId, tilesB), tilesA), im.c(kTile));
  Value inBase = im.c(0), outBase = im.c(0);
  if (!batchDims.empty()) {
    SmallVector<Value> batch =
        im.delinearize(im.div(blockId, tilesA * tilesB), batchShape);
    for (auto [k, d] : llvm::enumerate(batchDims)) {
      inBase = im.add(inBase, im.mul(batch[k], im.c(inStrides[d])));
      outBase = im.add(outBase, im.mul(batch[k], im.c(outStrides[d])));
    }
  }
  // Partial tiles only where the extent is not a multiple of the tile.
  auto inside = [&](Value a, Value bIndex) -> Value {
    Value condition;
    for (auto [index, size] : {std::pair(a, sizeA), std::pair(bIndex, sizeB)}) {
      if (size % kTile == 0)
        continue;
      Value lt = im.lt(index, im.c(size));
      condition = condition ? arith::AndIOp::create(b, loc, condition, lt) : lt;
    }
    return condition;
  };
  Value tile = kernel.workgroup[0];

  // Read: row ty + 8r of the tile is A, column tx is B (consecutive in the
  // operand).
  Value b0 = im.add(tileB, tx);
  for (int64_t r = 0; r < kTile; r += kTileRows) {
    Value row = im.add(ty, im.c(r));
    Value a = im.add(tileA, row);
    ifThen(b, loc, inside(a, b0), [&] {
      Value offset =
          im.add(inBase, im.add(im.mul(a, im.c(inStrides[dimA])), b0));
      Value x = memref::LoadOp::create(b, loc, in, offset);
      memref::StoreOp::create(b, loc, x, tile,
                              im.add(im.mul(row, im.c(kTileStride)), tx));
    });
  }
  // Every thread reaches the barrier: the bounds checks only guard memory
  // accesses.
  gpu::BarrierOp::create(b, loc);
  // Write: thread tx takes A (consecutive in the result), tile column
  // ty + 8r.
  Value a0 = im.add(tileA, tx);
  for (int64_t r = 0; r < kTile; r += kTileRows) {
    Value column = im.add(ty, im.c(r));
    Value bIndex = im.add(tileB, column);
    ifThen(b, loc, inside(a0, bIndex), [&] {
      Value x = memref::LoadOp::create(
          b, loc, tile, im.add(im.mul(tx, im.c(kTileStride)), column));
      Value offset =
          im.add(outBase, im.add(a0, im.mul(bIndex, im.c(outStrides[dimB]))));
      memref::StoreOp::create(b, loc, x, out, offset);
    });
  }
  gpu::ReturnOp::create(b, loc);
  return kernel;
}

} // namespace genesis::cuda
