//===- CudaDataKernels.cpp - Data-movement GPU kernels --------------------===//
//
// Part of genesis-lower-cuda: the transpose emitter, and the gather
// emitter (slice, pad, concat, broadcast_in_dim, iota, take; scatter_add).
//
//===----------------------------------------------------------------------===//

#include "dialect/IR/GenesisOps.h"
#include "passes/Conversion/CudaEmitters.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <functional>

using namespace mlir;

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
  for (auto [g, groupFirst] : llvm::enumerate(firsts)) {
    int64_t first = groupFirst; // a lambda captures variables, not bindings
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
/// thread copies up to 16 bytes of it (the widest power of two of elements
/// dividing the run) through the index map, as one vector load and store.
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
    // 16 bytes per thread where the innermost run allows it: the run is
    // contiguous on both sides, so a group of `width` elements starting at
    // a multiple of it stays in one run, aligned.
    int64_t bytes = llvm::divideCeil(element.getIntOrFloatBitWidth(), 8);
    int64_t width = 1;
    if (rank > 0 && element.isIntOrFloat() &&
        element.getIntOrFloatBitWidth() % 8 == 0 && bytes <= 4)
      for (int64_t w = 16 / bytes; w > 1; w /= 2)
        if (shape.back() % w == 0) {
          width = w;
          break;
        }
    int64_t groups = n / width;
    setLaunch(kernel, ceilDiv(groups, kBlock), kBlock);
    Value group = im.globalId(kBlock);
    ifThen(b, loc, im.lt(group, im.c(groups)), [&] {
      Value position = im.mul(group, im.c(width));
      SmallVector<Value> index = im.delinearize(position, resultShape);
      Value offset = im.c(0);
      for (auto [i, j] : llvm::enumerate(index))
        offset = im.add(offset, im.mul(j, im.c(inStrides[perm[i]])));
      if (width == 1) {
        Value x = memref::LoadOp::create(b, loc, in, offset);
        memref::StoreOp::create(b, loc, x, out, position);
        return;
      }
      auto vectorType = VectorType::get({width}, element);
      llvm::Align alignment(width * bytes);
      Value x =
          vector::LoadOp::create(b, loc, vectorType, in, ValueRange{offset},
                                 /*nontemporal=*/false, alignment);
      vector::StoreOp::create(b, loc, x, out, ValueRange{position},
                              /*nontemporal=*/false, alignment);
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

//===----------------------------------------------------------------------===//
// Gather emitter
//===----------------------------------------------------------------------===//

namespace {

/// Columns each lane of the scatter_add kernel accumulates: a warp covers
/// up to 8 x 32 columns of a result row, so it reads the indices once for
/// all of them.
constexpr int64_t kScatterColumns = 8;

/// Consecutive result rows a scatter_add warp accumulates: it reads the
/// indices once for all of them (the scan over the indices is the kernel's
/// cost when the result has many rows, as an embedding gradient does).
constexpr int64_t kScatterRows = 4;

/// Matches a scatter_add warp loads before adding them (in index order):
/// 2 keeps the kernel at 128 registers, two blocks per SM (4 needed 166 and
/// ran 1.7x slower, measured on an embedding gradient).
constexpr int64_t kScatterMatches = 2;

bool isPlainNumeric(Type type) {
  return type.isF32() || type.isF64() || type.isInteger(32) ||
         type.isInteger(64);
}

/// `then()` if `condition`, else `otherwise()`.
Value ifElse(OpBuilder &b, Location loc, Value condition, Type type,
             function_ref<Value()> then, function_ref<Value()> otherwise) {
  auto branch = scf::IfOp::create(b, loc, TypeRange{type}, condition,
                                  /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&branch.getThenRegion().front());
  scf::YieldOp::create(b, loc, then());
  b.setInsertionPointToStart(&branch.getElseRegion().front());
  scf::YieldOp::create(b, loc, otherwise());
  return branch.getResult(0);
}

Value cmp(OpBuilder &b, Location loc, arith::CmpIPredicate predicate, Value x,
          Value y) {
  return arith::CmpIOp::create(b, loc, predicate, x, y);
}

Value both(OpBuilder &b, Location loc, Value x, Value y) {
  return x ? arith::AndIOp::create(b, loc, x, y).getResult() : y;
}

/// An index (i32 or i64) clamped into [0, bound) as the CPU kernels clamp
/// it; in its own type, since the index type of the kernels is 32-bit and
/// the cast would truncate first.
Value clampedId(OpBuilder &b, Location loc, Value id, int64_t bound) {
  Type type = id.getType();
  id = arith::MaxSIOp::create(b, loc, id,
                              arith::ConstantIntOp::create(b, loc, type, 0));
  id = arith::MinSIOp::create(
      b, loc, id, arith::ConstantIntOp::create(b, loc, type, bound - 1));
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), id);
}

/// `body(i)` for i = first, first + step, ... below end, the builder inside
/// the loop.
void forEach(OpBuilder &b, Location loc, Value first, int64_t end, int64_t step,
             function_ref<void(Value)> body) {
  IndexMath im{b, loc};
  auto loop = scf::ForOp::create(b, loc, first, im.c(end), im.c(step));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(loop.getBody()->getTerminator());
  body(loop.getInductionVar());
}

/// The element of `op`'s result at the flat `position`, read from the
/// flattened inputs `in`.
Value gatherElement(Operation *op, OpBuilder &b, Location loc, Value position,
                    ArrayRef<Value> in) {
  IndexMath im{b, loc};
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  ArrayRef<int64_t> shape = resultType.getShape();
  Type element = resultType.getElementType();
  auto load = [&](unsigned k, Value offset) -> Value {
    return memref::LoadOp::create(b, loc, in[k], offset);
  };
  auto operandShape = [&](unsigned k) {
    return cast<RankedTensorType>(op->getOperand(k).getType()).getShape();
  };
  if (isa<RopeOp>(op)) {
    // y = x cos + rotate_half(x) sin over [..., S, D]: x's partner half a
    // row away, negated in the row's first half; the [S, D] tables repeat
    // every S * D elements.
    int64_t depth = shape.back(), half = depth / 2;
    Value first = im.lt(im.rem(position, depth), im.c(half));
    Value partner = arith::SelectOp::create(
        b, loc, first, im.add(position, im.c(half)),
        arith::SubIOp::create(b, loc, position, im.c(half)));
    Value x = load(0, position), r = load(0, partner);
    Value rotated = arith::SelectOp::create(
        b, loc, first, arith::NegFOp::create(b, loc, r), r);
    Value table = im.rem(position, shape[shape.size() - 2] * depth);
    return arith::AddFOp::create(
        b, loc, arith::MulFOp::create(b, loc, x, load(1, table)),
        arith::MulFOp::create(b, loc, rotated, load(2, table)));
  }
  if (auto slice = dyn_cast<SliceOp>(op)) {
    SmallVector<int64_t> strides = rowMajorStrides(operandShape(0));
    SmallVector<Value> j = im.delinearize(position, shape);
    int64_t base = 0;
    for (auto [d, stride] : llvm::enumerate(strides))
      base += slice.getStart()[d] * stride;
    Value offset = im.c(base);
    for (auto [d, stride] : llvm::enumerate(strides))
      if (shape[d] != 1)
        offset =
            im.add(offset, im.mul(j[d], im.c(slice.getStride()[d] * stride)));
    return load(0, offset);
  }
  if (auto broadcast = dyn_cast<BroadcastInDimOp>(op)) {
    ArrayRef<int64_t> from = operandShape(0);
    SmallVector<int64_t> strides = rowMajorStrides(from);
    SmallVector<Value> j = im.delinearize(position, shape);
    Value offset = im.c(0);
    for (auto [i, d] : llvm::enumerate(broadcast.getBroadcastDimensions()))
      if (from[i] != 1)
        offset = im.add(offset, im.mul(j[d], im.c(strides[i])));
    return load(0, offset);
  }
  if (auto pad = dyn_cast<PadOp>(op)) {
    ArrayRef<int64_t> from = operandShape(0);
    auto zero = [&]() -> Value {
      return arith::ConstantOp::create(b, loc,
                                       cast<TypedAttr>(b.getZeroAttr(element)));
    };
    if (numel(from) == 0)
      return zero();
    SmallVector<int64_t> strides = rowMajorStrides(from);
    SmallVector<Value> j = im.delinearize(position, shape);
    // j[d] holds operand element (j[d] - low) / step when it is at or past
    // low, before the high padding, and on the step.
    Value inside, offset = im.c(0);
    for (auto [d, stride] : llvm::enumerate(strides)) {
      int64_t low = pad.getLow()[d], step = pad.getInterior()[d] + 1;
      int64_t end = low + (from[d] - 1) * step + 1;
      Value t = j[d];
      if (low > 0) {
        inside = both(b, loc, inside,
                      cmp(b, loc, arith::CmpIPredicate::uge, t, im.c(low)));
        t = arith::SubIOp::create(b, loc, t, im.c(low));
      }
      if (shape[d] > end)
        inside = both(b, loc, inside, im.lt(t, im.c(end - low)));
      if (step != 1)
        inside = both(
            b, loc, inside,
            cmp(b, loc, arith::CmpIPredicate::eq, im.rem(t, step), im.c(0)));
      offset = im.add(offset, im.mul(im.div(t, step), im.c(stride)));
    }
    if (!inside)
      return load(0, offset);
    return ifElse(
        b, loc, inside, element, [&] { return load(0, offset); }, zero);
  }
  if (auto concat = dyn_cast<ConcatOp>(op)) {
    int64_t dim = concat.getDim();
    int64_t outer = numel(shape.take_front(dim));
    int64_t inner = numel(shape.drop_front(dim + 1));
    SmallVector<Value> at =
        im.delinearize(position, {outer, shape[dim], inner});
    // Input k holds [offset, offset + size) of the concatenated dimension.
    std::function<Value(unsigned, int64_t)> from = [&](unsigned k,
                                                       int64_t offset) {
      int64_t size = operandShape(k)[dim];
      auto read = [&]() -> Value {
        Value local = arith::SubIOp::create(b, loc, at[1], im.c(offset));
        return load(k, im.add(im.mul(im.add(im.mul(at[0], im.c(size)), local),
                                     im.c(inner)),
                              at[2]));
      };
      if (k + 1 == op->getNumOperands())
        return read();
      return ifElse(b, loc, im.lt(at[1], im.c(offset + size)), element, read,
                    [&] { return from(k + 1, offset + size); });
    };
    return from(0, 0);
  }
  if (auto take = dyn_cast<TakeOp>(op)) {
    ArrayRef<int64_t> table = operandShape(0);
    int64_t axis = take.getAxis(), rows = table[axis];
    int64_t outer = numel(table.take_front(axis));
    int64_t inner = numel(table.drop_front(axis + 1));
    SmallVector<Value> at =
        im.delinearize(position, {outer, numel(operandShape(1)), inner});
    Value row = clampedId(b, loc, load(1, at[1]), rows);
    return load(
        0, im.add(im.mul(im.add(im.mul(at[0], im.c(rows)), row), im.c(inner)),
                  at[2]));
  }
  auto iota = cast<IotaOp>(op);
  int64_t dim = iota.getDim();
  Value j =
      im.rem(im.div(position, numel(shape.drop_front(dim + 1))), shape[dim]);
  if (!isa<FloatType>(element))
    return arith::IndexCastOp::create(b, loc, element, j);
  return arith::SIToFPOp::create(
      b, loc, element, arith::IndexCastOp::create(b, loc, b.getI64Type(), j));
}

/// scatter_add viewed as result [outer, rows, inner] += updates [outer,
/// count, inner] at the (clamped) indices. A block per item (outer, block
/// of up to 4 consecutive rows, group of up to 8 x 32 columns); warp w of
/// the block walks the w-th eighth of the indices in order, 32 at a time:
/// every lane loads one, the warp ORs the lanes' bits for indices inside
/// the row block (one redux.sync), then adds the matching updates lowest
/// bit first, each to its row's sums for columns lane + 32q. Warp 0 starts
/// from the operand and adds the other warps' sums in warp order through
/// shared memory. So each element sums its updates in a fixed order, in
/// f64 for f32, without atomics; a frequent index's updates are shared by
/// eight warps. (Each item reads all indices: the scan, not the updates,
/// is the cost on an embedding gradient, whatever the ids.)
FailureOr<GpuKernel> emitScatterAddKernel(ScatterAddOp op, StringRef name,
                                          OpBuilder &moduleBuilder) {
  Location loc = op.getLoc();
  RankedTensorType type = op.getOperand().getType();
  ArrayRef<int64_t> shape = type.getShape();
  Type element = type.getElementType();
  int64_t axis = op.getAxis(), rows = shape[axis];
  int64_t outer = numel(shape.take_front(axis));
  int64_t inner = numel(shape.drop_front(axis + 1));
  int64_t count = op.getIndices().getType().getNumElements();
  int64_t perLane =
      std::clamp<int64_t>(ceilDiv(inner, kWarp), 1, kScatterColumns);
  int64_t span = perLane * kWarp;
  int64_t groups = ceilDiv(inner, span);
  int64_t rowsPerWarp = std::min(rows, kScatterRows);
  int64_t rowBlocks = rows == 0 ? 0 : ceilDiv(rows, rowsPerWarp);
  int64_t items = outer * rowBlocks * groups;
  int64_t warps = kBlock / kWarp;
  int64_t grid = std::min(items, kMaxGridBlocks);
  // Warp w of a block scans ids [w * segment, (w + 1) * segment).
  int64_t segment = ceilDiv(ceilDiv(count, warps), kWarp) * kWarp;
  int64_t slots = rowsPerWarp * perLane;
  bool widened = element.isF32();
  Type sumType = widened ? Float64Type::get(op.getContext()) : element;

  GpuKernel kernel = createGpuKernel(
      moduleBuilder, loc, name, op->getOperandTypes(), op->getResultTypes(),
      {workgroupBuffer(op.getContext(), slots * kWarp, sumType)});
  setLaunch(kernel, grid, kBlock);
  OpBuilder b = OpBuilder::atBlockBegin(&kernel.function.getBody().front());
  IndexMath im{b, loc};
  if (items == 0 || inner == 0) {
    gpu::ReturnOp::create(b, loc);
    return kernel;
  }
  Value operand = flatten(b, loc, kernel.inputs[0]);
  Value ids = flatten(b, loc, kernel.inputs[1]);
  Value updates = flatten(b, loc, kernel.inputs[2]);
  Value out = flatten(b, loc, kernel.outputs[0]);
  Value partials = kernel.workgroup[0];
  auto widen = [&](OpBuilder &ob, Value x) -> Value {
    return widened ? arith::ExtFOp::create(ob, loc, ob.getF64Type(), x) : x;
  };
  auto add = [&](OpBuilder &ob, Value x, Value y) -> Value {
    if (isa<FloatType>(element))
      return arith::AddFOp::create(ob, loc, x, y);
    return arith::AddIOp::create(ob, loc, x, y);
  };
  Type i32 = b.getI32Type();
  auto i32Constant = [&](OpBuilder &ob, int64_t v) -> Value {
    return arith::ConstantIntOp::create(ob, loc, i32, v);
  };

  Value thread = im.threadId();
  Value lane = im.rem(thread, kWarp);
  Value warp = im.div(thread, kWarp);
  Value laneBit = arith::ShLIOp::create(
      b, loc, i32Constant(b, 1), arith::IndexCastOp::create(b, loc, i32, lane));
  Value leader = cmp(b, loc, arith::CmpIPredicate::eq, warp, im.c(0));
  Value segmentBegin =
      arith::MinUIOp::create(b, loc, im.mul(warp, im.c(segment)), im.c(count));
  Value segmentEnd = arith::MinUIOp::create(
      b, loc, im.add(segmentBegin, im.c(segment)), im.c(count));
  // A block per item; the loop bounds are uniform across the block, so all
  // its threads reach every barrier and all a warp's lanes every shuffle.
  forEach(
      b, loc, im.blockId(), items, std::max<int64_t>(grid, 1), [&](Value item) {
        SmallVector<Value> at =
            im.delinearize(item, {outer, rowBlocks, groups});
        Value firstRow = im.mul(at[1], im.c(rowsPerWarp));
        // Lanes past the row's end read its last column and skip the store.
        SmallVector<Value> columns, reads;
        for (int64_t q = 0; q < perLane; ++q) {
          Value column =
              im.add(im.mul(at[2], im.c(span)), im.add(lane, im.c(q * kWarp)));
          columns.push_back(column);
          reads.push_back(
              inner % span == 0
                  ? column
                  : arith::MinUIOp::create(b, loc, column, im.c(inner - 1))
                        .getResult());
        }
        // Row r of the block: rowBases[r]; a row past the end reads the
        // last row and skips the store. sums[r * perLane + q].
        SmallVector<Value> rowBases, rowValid;
        for (int64_t r = 0; r < rowsPerWarp; ++r) {
          Value row = im.add(firstRow, im.c(r));
          rowValid.push_back(rows % rowsPerWarp == 0 ? Value()
                                                     : im.lt(row, im.c(rows)));
          Value safeRow =
              rows % rowsPerWarp == 0
                  ? row
                  : arith::MinUIOp::create(b, loc, row, im.c(rows - 1))
                        .getResult();
          rowBases.push_back(
              im.mul(im.add(im.mul(at[0], im.c(rows)), safeRow), im.c(inner)));
        }
        Value updateBase = im.mul(at[0], im.c(count * inner));
        // Warp 0's sums start from the operand, the others' from zero.
        SmallVector<Type> sumTypes(slots, sumType);
        auto start = scf::IfOp::create(b, loc, sumTypes, leader,
                                       /*withElseRegion=*/true);
        {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(&start.getThenRegion().front());
          SmallVector<Value> loaded;
          for (Value rowBase : rowBases)
            for (Value column : reads)
              loaded.push_back(
                  widen(b, memref::LoadOp::create(b, loc, operand,
                                                  im.add(rowBase, column))));
          scf::YieldOp::create(b, loc, loaded);
          b.setInsertionPointToStart(&start.getElseRegion().front());
          Value zero = arith::ConstantOp::create(b, loc, sumType,
                                                 b.getZeroAttr(sumType));
          scf::YieldOp::create(b, loc, SmallVector<Value>(slots, zero));
        }
        SmallVector<Value> sums(start.getResults());
        auto chunks = scf::ForOp::create(
            b, loc, segmentBegin, segmentEnd, im.c(kWarp), sums,
            [&](OpBuilder &cb, Location, Value base, ValueRange carried) {
              IndexMath cm{cb, loc};
              Value index = cm.add(base, lane);
              Value safe =
                  count % kWarp == 0
                      ? index
                      : arith::MinUIOp::create(cb, loc, index, cm.c(count - 1))
                            .getResult();
              Value target = clampedId(
                  cb, loc, memref::LoadOp::create(cb, loc, ids, safe), rows);
              // target - firstRow < rowsPerWarp, unsigned: in the block.
              Value match = cmp(cb, loc, arith::CmpIPredicate::ult,
                                cm.sub(target, firstRow), cm.c(rowsPerWarp));
              if (count % kWarp != 0)
                match = both(cb, loc, match, cm.lt(index, cm.c(count)));
              // The warp's ballot: one redux.sync (every lane takes part).
              Value bits = gpu::SubgroupReduceOp::create(
                  cb, loc,
                  arith::SelectOp::create(cb, loc, match, laneBit,
                                          i32Constant(cb, 0)),
                  gpu::AllReduceOperation::OR, /*uniform=*/true);
              SmallVector<Value> state{bits};
              state.append(carried.begin(), carried.end());
              SmallVector<Type> stateTypes{i32};
              stateTypes.append(sumTypes);
              auto matches = scf::WhileOp::create(
                  cb, loc, stateTypes, state,
                  [&](OpBuilder &wb, Location, ValueRange current) {
                    Value more = cmp(wb, loc, arith::CmpIPredicate::ne,
                                     current[0], i32Constant(wb, 0));
                    scf::ConditionOp::create(wb, loc, more, current);
                  },
                  [&](OpBuilder &wb, Location, ValueRange current) {
                    IndexMath wm{wb, loc};
                    // Up to kScatterMatches matches per iteration, their
                    // loads issued before any add, so that a row with many
                    // updates waits for one load latency per group of them.
                    Value set = current[0];
                    SmallVector<Value> has, rowOf;
                    SmallVector<SmallVector<Value>> loaded;
                    for (int64_t m = 0; m < kScatterMatches; ++m) {
                      has.push_back(cmp(wb, loc, arith::CmpIPredicate::ne, set,
                                        i32Constant(wb, 0)));
                      // The lowest set bit's position is the exponent of
                      // its value as an f32 (math.cttz has no NVVM lowering
                      // here); 0 when no bit is left.
                      Value lowest = arith::AndIOp::create(
                          wb, loc, set,
                          arith::SubIOp::create(wb, loc, i32Constant(wb, 0),
                                                set));
                      Value exponent = arith::ShRUIOp::create(
                          wb, loc,
                          arith::BitcastOp::create(
                              wb, loc, i32,
                              arith::UIToFPOp::create(wb, loc, wb.getF32Type(),
                                                      lowest)),
                          i32Constant(wb, 23));
                      Value bit = arith::SelectOp::create(
                          wb, loc, has.back(),
                          arith::SubIOp::create(wb, loc, exponent,
                                                i32Constant(wb, 127)),
                          i32Constant(wb, 0));
                      Value k = arith::IndexCastOp::create(
                          wb, loc, wb.getIndexType(), bit);
                      Value j = wm.add(base, k);
                      Value from = wm.add(updateBase, wm.mul(j, wm.c(inner)));
                      // The match's row in the block (every lane reads the
                      // same index).
                      rowOf.push_back(wm.sub(
                          clampedId(wb, loc,
                                    memref::LoadOp::create(wb, loc, ids, j),
                                    rows),
                          firstRow));
                      loaded.emplace_back();
                      for (Value column : reads)
                        loaded.back().push_back(widen(
                            wb, memref::LoadOp::create(wb, loc, updates,
                                                       wm.add(from, column))));
                      set = arith::AndIOp::create(
                          wb, loc, set,
                          arith::SubIOp::create(wb, loc, set,
                                                i32Constant(wb, 1)));
                    }
                    SmallVector<Value> sums(current.drop_front());
                    for (int64_t m = 0; m < kScatterMatches; ++m)
                      for (int64_t row = 0; row < rowsPerWarp; ++row) {
                        Value mine = arith::AndIOp::create(
                            wb, loc, has[m],
                            cmp(wb, loc, arith::CmpIPredicate::eq, rowOf[m],
                                wm.c(row)));
                        for (int64_t q = 0; q < perLane; ++q) {
                          Value &sum = sums[row * perLane + q];
                          sum = arith::SelectOp::create(
                              wb, loc, mine, add(wb, sum, loaded[m][q]), sum);
                        }
                      }
                    SmallVector<Value> next{set};
                    next.append(sums);
                    scf::YieldOp::create(wb, loc, next);
                  });
              scf::YieldOp::create(cb, loc, matches.getResults().drop_front());
            });
        // Warp 0 adds the other warps' partial sums in warp order, one
        // warp's at a time through shared memory.
        SmallVector<Value> total(chunks.getResults());
        for (int64_t w = 1; w < warps; ++w) {
          gpu::BarrierOp::create(b, loc);
          ifThen(b, loc, cmp(b, loc, arith::CmpIPredicate::eq, warp, im.c(w)),
                 [&] {
                   for (int64_t slot = 0; slot < slots; ++slot)
                     memref::StoreOp::create(b, loc, total[slot], partials,
                                             im.add(im.c(slot * kWarp), lane));
                 });
          gpu::BarrierOp::create(b, loc);
          auto gather = scf::IfOp::create(b, loc, sumTypes, leader,
                                          /*withElseRegion=*/true);
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(&gather.getThenRegion().front());
          SmallVector<Value> added;
          for (int64_t slot = 0; slot < slots; ++slot)
            added.push_back(
                add(b, total[slot],
                    memref::LoadOp::create(b, loc, partials,
                                           im.add(im.c(slot * kWarp), lane))));
          scf::YieldOp::create(b, loc, added);
          b.setInsertionPointToStart(&gather.getElseRegion().front());
          scf::YieldOp::create(b, loc, total);
          b.setInsertionPointAfter(gather);
          total.assign(gather.getResults().begin(), gather.getResults().end());
        }
        for (int64_t r = 0; r < rowsPerWarp; ++r)
          for (auto [q, columnAt] : llvm::enumerate(columns)) {
            Value column = columnAt; // a lambda captures variables only
            Value sum = total[r * perLane + q];
            if (widened)
              sum = arith::TruncFOp::create(b, loc, element, sum);
            Value valid =
                inner % span == 0 ? Value() : im.lt(column, im.c(inner));
            if (rowValid[r])
              valid = both(b, loc, valid, rowValid[r]);
            valid = both(b, loc, valid, leader);
            Value rowBase = rowBases[r];
            ifThen(b, loc, valid, [&] {
              memref::StoreOp::create(b, loc, sum, out,
                                      im.add(rowBase, column));
            });
          }
      });
  gpu::ReturnOp::create(b, loc);
  return kernel;
}

} // namespace

bool hasGpuGatherKernel(Operation *op) {
  if (isa<SliceOp, PadOp, ConcatOp, BroadcastInDimOp, TakeOp>(op))
    return true;
  if (auto rope = dyn_cast<RopeOp>(op)) {
    Type element = rope.getType().getElementType();
    return (element.isF32() || element.isF64()) &&
           rope.getCos().getType().getElementType() == element &&
           rope.getSin().getType().getElementType() == element;
  }
  if (auto iota = dyn_cast<IotaOp>(op))
    return isPlainNumeric(
        cast<RankedTensorType>(iota.getResult().getType()).getElementType());
  if (auto scatter = dyn_cast<ScatterAddOp>(op))
    return isPlainNumeric(scatter.getOperand().getType().getElementType());
  return false;
}

/// A grid-stride loop (256-thread blocks, at most kMaxGridBlocks) with a
/// thread per result element, which loads the element it comes from (or
/// computes it: iota, pad's zeros, rope from two elements of its row and the
/// tables); consecutive threads read consecutive
/// elements within each contiguous run of the source. scatter_add: see
/// emitScatterAddKernel.
FailureOr<GpuKernel> emitGatherKernel(Operation *op, StringRef name,
                                      OpBuilder &moduleBuilder) {
  if (auto scatter = dyn_cast<ScatterAddOp>(op))
    return emitScatterAddKernel(scatter, name, moduleBuilder);
  Location loc = op->getLoc();
  int64_t n =
      cast<RankedTensorType>(op->getResult(0).getType()).getNumElements();
  int64_t grid = std::min(ceilDiv(n, kBlock), kMaxGridBlocks);
  GpuKernel kernel = createGpuKernel(
      moduleBuilder, loc, name, op->getOperandTypes(), op->getResultTypes());
  setLaunch(kernel, grid, kBlock);
  OpBuilder b = OpBuilder::atBlockBegin(&kernel.function.getBody().front());
  IndexMath im{b, loc};
  SmallVector<Value> in;
  for (Value input : kernel.inputs)
    in.push_back(flatten(b, loc, input));
  Value out = flatten(b, loc, kernel.outputs[0]);
  forEach(b, loc, im.globalId(kBlock), n, std::max<int64_t>(grid, 1) * kBlock,
          [&](Value position) {
            memref::StoreOp::create(
                b, loc, gatherElement(op, b, loc, position, in), out, position);
          });
  gpu::ReturnOp::create(b, loc);
  return kernel;
}

} // namespace genesis::cuda
