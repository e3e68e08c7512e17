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

/// Columns of a result row each thread of a scatter_add block owns: a block
/// covers up to 4 x 256 columns of its rows, so it reads each update row it
/// takes once, coalesced.
constexpr int64_t kScatterColumnsPerThread = 4;

/// Sums a scatter_add thread keeps (its rows x its columns): 32 f64 stay in
/// registers.
constexpr int64_t kScatterSums = 32;

/// Indices each lane of a scatter_add block loads per round, all in flight
/// before the first compare: a round covers 8 warps x 32 x 16 = 4096
/// indices, and their lists take 16 KiB of shared memory.
constexpr int64_t kScatterIdsPerLane = 16;

/// Matching entries a scatter_add thread loads before adding them (in index
/// order), so that a frequent row's thousands of updates wait for one load
/// latency per 16: a block is alone with such a row (an embedding gradient
/// of text), so its loads in flight set the kernel's time (8: 1.00 ms, 16:
/// 0.80 ms on GPT-2's byte-level benchmark batch, whose space is 29% of the
/// ids; 204 registers, one block per SM).
constexpr int64_t kScatterEntriesPerStep = 16;

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
/// count, inner] at the (clamped) indices. A block per item (outer, block of
/// up to 32 consecutive rows, group of up to 4 x 256 columns); thread t owns
/// columns t + 256q of the block's rows, its sums in registers starting from
/// the operand. The block scans the indices in rounds of 4096: warp w loads
/// the w-th eighth of a round's indices (16 per lane, all in flight) and
/// appends those inside the row block, in index order, to its list in shared
/// memory (a ballot and a popcount give each lane its slot); after a barrier
/// every thread walks the eight lists in warp order, 16 entries at a time,
/// and adds the matching update rows' elements to its row's sums (a switch
/// on the row, uniform across the block). So each element sums its updates in
/// index order, in f64 for f32, without atomics, and the indices are read
/// once per block of rows (an embedding gradient's cost was that scan when a
/// block covered 4 rows).
FailureOr<GpuKernel> emitScatterAddKernel(ScatterAddOp op, StringRef name,
                                          OpBuilder &moduleBuilder) {
  Location loc = op.getLoc();
  MLIRContext *context = op.getContext();
  RankedTensorType type = op.getOperand().getType();
  ArrayRef<int64_t> shape = type.getShape();
  Type element = type.getElementType();
  int64_t axis = op.getAxis(), rows = shape[axis];
  int64_t outer = numel(shape.take_front(axis));
  int64_t inner = numel(shape.drop_front(axis + 1));
  int64_t count = op.getIndices().getType().getNumElements();
  int64_t perThread =
      std::clamp<int64_t>(ceilDiv(inner, kBlock), 1, kScatterColumnsPerThread);
  int64_t span = perThread * kBlock;
  int64_t groups = ceilDiv(inner, span);
  int64_t blockRows = std::clamp<int64_t>(kScatterSums / perThread, 1,
                                          std::max<int64_t>(rows, 1));
  int64_t rowBlocks = rows == 0 ? 0 : ceilDiv(rows, blockRows);
  int64_t items = outer * rowBlocks * groups;
  int64_t warps = kBlock / kWarp;
  int64_t perWarp = kWarp * kScatterIdsPerLane;
  int64_t perRound = warps * perWarp;
  int64_t rounds = ceilDiv(count, perRound);
  int64_t grid = std::min(items, kMaxGridBlocks);
  bool widened = element.isF32();
  Type i32 = IntegerType::get(context, 32);

  GpuKernel kernel = createGpuKernel(
      moduleBuilder, loc, name, op->getOperandTypes(), op->getResultTypes(),
      {workgroupBuffer(context, perRound, i32),
       workgroupBuffer(context, warps, i32)});
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
  Value lists = kernel.workgroup[0], listSizes = kernel.workgroup[1];
  auto widen = [&](OpBuilder &ob, Value x) -> Value {
    return widened ? arith::ExtFOp::create(ob, loc, ob.getF64Type(), x) : x;
  };
  auto add = [&](OpBuilder &ob, Value x, Value y) -> Value {
    if (isa<FloatType>(element))
      return arith::AddFOp::create(ob, loc, x, y);
    return arith::AddIOp::create(ob, loc, x, y);
  };
  auto i32Constant = [&](OpBuilder &ob, int64_t v) -> Value {
    return arith::ConstantIntOp::create(ob, loc, i32, v);
  };
  auto toIndex = [&](OpBuilder &ob, Value v) -> Value {
    return arith::IndexCastOp::create(ob, loc, ob.getIndexType(), v);
  };
  auto popcount = [&](OpBuilder &ob, Value v) -> Value {
    // llvm.ctpop is one popc (math.ctpop has no NVVM lowering here).
    return LLVM::CtPopOp::create(ob, loc, v.getType(), v);
  };

  Value thread = im.threadId();
  Value lane = im.rem(thread, kWarp);
  Value warp = im.div(thread, kWarp);
  Value laneBit = arith::ShLIOp::create(
      b, loc, i32Constant(b, 1), arith::IndexCastOp::create(b, loc, i32, lane));
  Value lanesBelow = arith::SubIOp::create(b, loc, laneBit, i32Constant(b, 1));
  // A block per item; the loop bounds are uniform across the block, so all
  // its threads reach every barrier and all a warp's lanes every ballot.
  forEach(
      b, loc, im.blockId(), items, std::max<int64_t>(grid, 1), [&](Value item) {
        SmallVector<Value> at =
            im.delinearize(item, {outer, rowBlocks, groups});
        Value firstRow = im.mul(at[1], im.c(blockRows));
        // Threads past the row's end read its last column and skip the
        // store.
        SmallVector<Value> columns, reads;
        for (int64_t q = 0; q < perThread; ++q) {
          Value column = im.add(im.mul(at[2], im.c(span)),
                                im.add(thread, im.c(q * kBlock)));
          columns.push_back(column);
          reads.push_back(
              inner % span == 0
                  ? column
                  : arith::MinUIOp::create(b, loc, column, im.c(inner - 1))
                        .getResult());
        }
        // Row r of the block starts at rowBases[r]; a row past the end
        // reads the last row and skips the store. sums[r * perThread + q].
        SmallVector<Value> rowBases, rowValid, sums;
        for (int64_t r = 0; r < blockRows; ++r) {
          Value row = im.add(firstRow, im.c(r));
          bool whole = rows % blockRows == 0;
          rowValid.push_back(whole ? Value() : im.lt(row, im.c(rows)));
          Value safeRow =
              whole ? row
                    : arith::MinUIOp::create(b, loc, row, im.c(rows - 1))
                          .getResult();
          rowBases.push_back(
              im.mul(im.add(im.mul(at[0], im.c(rows)), safeRow), im.c(inner)));
          for (Value column : reads)
            sums.push_back(widen(
                b, memref::LoadOp::create(b, loc, operand,
                                          im.add(rowBases.back(), column))));
        }
        Value updateBase = im.mul(at[0], im.c(count * inner));
        auto roundLoop = scf::ForOp::create(
            b, loc, im.c(0), im.c(rounds), im.c(1), sums,
            [&](OpBuilder &rb, Location, Value round, ValueRange carried) {
              IndexMath rm{rb, loc};
              Value roundBase = rm.mul(round, rm.c(perRound));
              Value warpBase = rm.add(roundBase, rm.mul(warp, rm.c(perWarp)));
              // The lane's indices, loaded before any is compared.
              SmallVector<Value> positions, targets;
              for (int64_t s = 0; s < kScatterIdsPerLane; ++s) {
                Value index = rm.add(warpBase, rm.add(lane, rm.c(s * kWarp)));
                Value safe = count % perRound == 0
                                 ? index
                                 : arith::MinUIOp::create(rb, loc, index,
                                                          rm.c(count - 1))
                                       .getResult();
                positions.push_back(index);
                targets.push_back(clampedId(
                    rb, loc, memref::LoadOp::create(rb, loc, ids, safe), rows));
              }
              Value cursor = i32Constant(rb, 0);
              Value listBase = rm.mul(warp, rm.c(perWarp));
              for (int64_t s = 0; s < kScatterIdsPerLane; ++s) {
                // target - firstRow < blockRows, unsigned: in the block.
                Value offset = rm.sub(targets[s], firstRow);
                Value match = cmp(rb, loc, arith::CmpIPredicate::ult, offset,
                                  rm.c(blockRows));
                if (count % perRound != 0)
                  match =
                      both(rb, loc, match, rm.lt(positions[s], rm.c(count)));
                // The warp's ballot: one redux.sync (every lane takes part).
                Value bits = gpu::SubgroupReduceOp::create(
                    rb, loc,
                    arith::SelectOp::create(rb, loc, match, laneBit,
                                            i32Constant(rb, 0)),
                    gpu::AllReduceOperation::OR, /*uniform=*/true);
                Value slot = arith::AddIOp::create(
                    rb, loc, cursor,
                    popcount(rb,
                             arith::AndIOp::create(rb, loc, bits, lanesBelow)));
                // The entry: the index's place in the warp's share of the
                // round, times blockRows, plus its row in the block.
                Value entry = rm.add(
                    rm.mul(rm.add(lane, rm.c(s * kWarp)), rm.c(blockRows)),
                    offset);
                ifThen(rb, loc, match, [&] {
                  memref::StoreOp::create(
                      rb, loc, arith::IndexCastOp::create(rb, loc, i32, entry),
                      lists, rm.add(listBase, toIndex(rb, slot)));
                });
                cursor =
                    arith::AddIOp::create(rb, loc, cursor, popcount(rb, bits));
              }
              ifThen(
                  rb, loc,
                  cmp(rb, loc, arith::CmpIPredicate::eq, lane, rm.c(0)), [&] {
                    memref::StoreOp::create(rb, loc, cursor, listSizes, warp);
                  });
              gpu::BarrierOp::create(rb, loc);
              // Every thread adds the lists' updates in warp order.
              auto warpLoop = scf::ForOp::create(
                  rb, loc, rm.c(0), rm.c(warps), rm.c(1), carried,
                  [&](OpBuilder &wb, Location, Value w, ValueRange partial) {
                    IndexMath wm{wb, loc};
                    Value size = toIndex(
                        wb, memref::LoadOp::create(wb, loc, listSizes, w));
                    Value base = wm.mul(w, wm.c(perWarp));
                    // kScatterEntriesPerStep entries at a time, their loads
                    // issued before any add: a frequent row's block walks
                    // thousands (an embedding gradient of text).
                    auto entryLoop = scf::ForOp::create(
                        wb, loc, wm.c(0), size, wm.c(kScatterEntriesPerStep),
                        partial,
                        [&](OpBuilder &eb, Location, Value e,
                            ValueRange current) {
                          IndexMath em{eb, loc};
                          Value last = em.sub(size, em.c(1));
                          SmallVector<Value> valid, rowOffsets;
                          SmallVector<SmallVector<Value>> loaded;
                          for (int64_t u = 0; u < kScatterEntriesPerStep; ++u) {
                            Value k = em.add(e, em.c(u));
                            valid.push_back(em.lt(k, size));
                            Value entry = toIndex(
                                eb, memref::LoadOp::create(
                                        eb, loc, lists,
                                        em.add(base, arith::MinUIOp::create(
                                                         eb, loc, k, last))));
                            rowOffsets.push_back(em.rem(entry, blockRows));
                            Value j =
                                em.add(roundBase,
                                       em.add(base, em.div(entry, blockRows)));
                            Value from =
                                em.add(updateBase, em.mul(j, em.c(inner)));
                            loaded.emplace_back();
                            for (Value column : reads)
                              loaded.back().push_back(
                                  widen(eb, memref::LoadOp::create(
                                                eb, loc, updates,
                                                em.add(from, column))));
                          }
                          // Every thread takes the same entry, so the switch
                          // on its row is uniform: one branch, perThread adds.
                          SmallVector<Value> next(current);
                          SmallVector<int64_t> cases;
                          for (int64_t r = 0; r < blockRows; ++r)
                            cases.push_back(r);
                          for (int64_t u = 0; u < kScatterEntriesPerStep; ++u) {
                            Value row = arith::SelectOp::create(
                                eb, loc, valid[u], rowOffsets[u],
                                em.c(blockRows));
                            auto addTo = scf::IndexSwitchOp::create(
                                eb, loc, ValueRange(next).getTypes(), row,
                                cases, blockRows);
                            OpBuilder::InsertionGuard guard(eb);
                            for (int64_t r = 0; r <= blockRows; ++r) {
                              Region &region = r < blockRows
                                                   ? addTo.getCaseRegions()[r]
                                                   : addTo.getDefaultRegion();
                              eb.setInsertionPointToStart(
                                  &region.emplaceBlock());
                              SmallVector<Value> updated(next);
                              for (int64_t q = 0;
                                   r < blockRows && q < perThread; ++q) {
                                Value &sum = updated[r * perThread + q];
                                sum = add(eb, sum, loaded[u][q]);
                              }
                              scf::YieldOp::create(eb, loc, updated);
                            }
                            eb.setInsertionPointAfter(addTo);
                            next.assign(addTo.getResults().begin(),
                                        addTo.getResults().end());
                          }
                          scf::YieldOp::create(eb, loc, next);
                        });
                    scf::YieldOp::create(wb, loc, entryLoop.getResults());
                  });
              // The lists are rewritten by the next round.
              gpu::BarrierOp::create(rb, loc);
              scf::YieldOp::create(rb, loc, warpLoop.getResults());
            });
        for (int64_t r = 0; r < blockRows; ++r)
          for (auto [q, columnAt] : llvm::enumerate(columns)) {
            Value column = columnAt; // a lambda captures variables only
            Value sum = roundLoop.getResult(r * perThread + q);
            if (widened)
              sum = arith::TruncFOp::create(b, loc, element, sum);
            Value valid =
                inner % span == 0 ? Value() : im.lt(column, im.c(inner));
            if (rowValid[r])
              valid = both(b, loc, valid, rowValid[r]);
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
