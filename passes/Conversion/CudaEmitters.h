//===- CudaEmitters.h - GPU kernel emitter pieces ---------------*- C++ -*-===//
//
// Shared by the emitters of genesis-lower-cuda, one file per family (as
// XLA's emitters): kernel creation with its launch, index arithmetic,
// shared-memory buffers, warp and block reductions, and each emitter's entry
// point, which LowerToCuda.cpp's dispatch table chooses from.
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_PASSES_CONVERSION_CUDAEMITTERS_H
#define GENESIS_PASSES_CONVERSION_CUDAEMITTERS_H

#include "dialect/IR/GenesisOps.h"
#include "passes/Conversion/CudaKernels.h"
#include "passes/Conversion/ElementEmitter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"

namespace genesis::cuda {
// The MLIR names the emitters use, declared one by one (no using-directive
// in a header).
namespace arith = mlir::arith;
namespace gpu = mlir::gpu;
namespace memref = mlir::memref;
namespace vector = mlir::vector;
namespace LLVM = mlir::LLVM;
using mlir::ArrayRef;
using mlir::Block;
using mlir::cast;
using mlir::dyn_cast;
using mlir::FailureOr;
using mlir::function_ref;
using mlir::isa;
using mlir::Location;
using mlir::MemRefLayoutAttrInterface;
using mlir::MemRefType;
using mlir::MLIRContext;
using mlir::OpBuilder;
using mlir::Operation;
using mlir::OpFoldResult;
using mlir::RankedTensorType;
using mlir::ReassociationIndices;
using mlir::SmallVector;
using mlir::StringRef;
using mlir::Type;
using mlir::TypeRange;
using mlir::Value;
using mlir::ValueRange;
using mlir::VectorType;

inline constexpr int64_t kWarp = 32;
/// The streaming multiprocessors of an H100 SXM.
inline constexpr int64_t kSmCount = 132;
/// The resident threads of one SM (Hopper and Ampere).
inline constexpr int64_t kThreadsPerSm = 2048;
/// Enough resident blocks of 256 threads for every SM of an H100 (132 SMs, 8
/// blocks each); grid-stride loops cover the rest.
inline constexpr int64_t kMaxGridBlocks = kSmCount * 8;

inline int64_t numel(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

inline int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// Index arithmetic of a kernel body.
struct IndexMath {
  OpBuilder &b;
  Location loc;
  Value c(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubIOp::create(b, loc, x, y); }
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
  Value threadId() {
    return gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  }
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

inline GpuKernel createGpuKernel(OpBuilder &moduleBuilder, Location loc,
                                 StringRef name, TypeRange inputs,
                                 TypeRange outputs, TypeRange workgroup = {}) {
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
  // 16-byte aligned: the backend merges loads of consecutive elements into
  // vector loads, which need it (4-byte aligned buffers of 5 warps' totals
  // faulted with misaligned ld.shared.v4).
  for (auto [i, buffer] :
       llvm::enumerate(function.getWorkgroupAttributions())) {
    function.setWorkgroupAttributionAttr(i,
                                         LLVM::LLVMDialect::getAlignAttrName(),
                                         moduleBuilder.getI64IntegerAttr(16));
    kernel.workgroup.push_back(buffer);
  }
  return kernel;
}

/// Sets the kernel's launch and its `gpu.known_block_size`, which lets the
/// backend bound the thread indices.
inline void setLaunch(GpuKernel &kernel, int64_t grid, int64_t block) {
  kernel.launch.grid = {std::max<int64_t>(grid, 1), 1, 1};
  kernel.launch.block = {block, 1, 1};
  OpBuilder b(kernel.function);
  kernel.function.setKnownBlockSizeAttr(
      b.getDenseI32ArrayAttr({static_cast<int32_t>(block), 1, 1}));
}

inline MemRefType workgroupBuffer(MLIRContext *context, int64_t size,
                                  Type element) {
  return MemRefType::get(
      {size}, element, MemRefLayoutAttrInterface(),
      gpu::AddressSpaceAttr::get(context, gpu::AddressSpace::Workgroup));
}

/// `value` viewed as a 1-D memref of all its elements.
inline Value flatten(OpBuilder &b, Location loc, Value memref) {
  auto type = cast<MemRefType>(memref.getType());
  if (type.getRank() == 1)
    return memref;
  ReassociationIndices all;
  for (int64_t d = 0; d < type.getRank(); ++d)
    all.push_back(d);
  if (type.getRank() == 0)
    return memref::ExpandShapeOp::create(
        b, loc, MemRefType::get({1}, type.getElementType()), memref,
        ArrayRef<ReassociationIndices>{},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
  return memref::CollapseShapeOp::create(b, loc, memref,
                                         ArrayRef<ReassociationIndices>{all});
}

inline bool is32Bit(Type type) { return type.getIntOrFloatBitWidth() == 32; }

/// The alignment of a vector of `width` elements of `element` that starts
/// at a multiple of `width` in a 256-byte aligned buffer (at most 16).
inline llvm::Align laneAlignment(Type element, int64_t width) {
  return llvm::Align(
      std::min<int64_t>(16, width * static_cast<int64_t>(llvm::divideCeil(
                                        element.getIntOrFloatBitWidth(), 8))));
}

/// The row-major position of `index` in `memref`.
inline Value linearIndex(OpBuilder &b, Location loc, Value memref,
                         ValueRange index) {
  IndexMath im{b, loc};
  Value linear = im.c(0);
  for (auto [i, extent] :
       llvm::zip(index, cast<MemRefType>(memref.getType()).getShape()))
    linear = im.add(im.mul(linear, im.c(extent)), i);
  return linear;
}

/// The elements [index, index + width) along the last dimension of
/// `memref` (`flat` its 1-D view), loaded as one vector: a lane group whose
/// element walk kept its lanes consecutive (ElementEmitter::laneWidth).
inline SmallVector<Value> loadLanes(OpBuilder &b, Location loc, Value memref,
                                    Value flat, ValueRange index,
                                    int64_t width) {
  auto type = cast<MemRefType>(memref.getType());
  Value linear = linearIndex(b, loc, memref, index);
  Type element = type.getElementType();
  Value vector = vector::LoadOp::create(
      b, loc, VectorType::get({width}, element), flat, ValueRange{linear},
      /*nontemporal=*/false, laneAlignment(element, width));
  SmallVector<Value> lanes;
  for (int64_t l = 0; l < width; ++l)
    lanes.push_back(
        vector::ExtractOp::create(b, loc, vector, ArrayRef<int64_t>{l}));
  return lanes;
}

/// Lane-group reads for the elemental emitter (ElementEmitter::laneWidth):
/// every lane of a group walks the body alike, so the n-th contiguous read
/// of lane 0 is the n-th of every lane; lane 0 loads it as one vector and
/// lane l takes element l. Other reads load one element.
struct LaneLoads {
  /// `flat[k]`: input k's 1-D view where it may be read as vectors, else
  /// null.
  LaneLoads(ArrayRef<Value> inputs, ArrayRef<Value> flat, int64_t width)
      : inputs(inputs), flat(flat), width(width) {}

  SmallVector<Value> inputs, flat;
  int64_t width = 1;
  SmallVector<SmallVector<Value>> vectors;
  size_t reads = 0;
  int64_t lane = 0;

  /// Starts lane `l` of a group (lane 0 starts a new group).
  void beginLane(int64_t l) {
    lane = l;
    reads = 0;
    if (l == 0)
      vectors.clear();
  }

  FailureOr<Value> load(OpBuilder &b, Location loc, unsigned k,
                        ValueRange index, bool contiguous) {
    if (!contiguous || !flat[k])
      return memref::LoadOp::create(b, loc, inputs[k], index).getResult();
    size_t read = reads++;
    if (lane == 0)
      vectors.push_back(loadLanes(b, loc, inputs[k], flat[k], index, width));
    return vectors[read][lane];
  }
};

//===----------------------------------------------------------------------===//
// Warp and block reductions (CudaBlockReductions.cpp)
//===----------------------------------------------------------------------===//

/// Combines `value` across the 32 lanes of each warp with `combine`
/// (butterfly of xor shuffles: every lane ends with the total).
Value warpButterfly(OpBuilder &b, Location loc, Value value,
                    function_ref<Value(Value, Value)> combine);

/// Max or sum of f32 values as combining functions.
Value combineMaxOrSum(OpBuilder &b, Location loc, Value x, Value y, bool max);

/// Threads of a block per row of `columns` elements: a multiple of 32 up
/// to 1024 giving each thread at least 4 elements when the row allows.
int64_t rowBlockThreads(int64_t columns);

/// Combines each of `partials` (max or sum, as `maxes` says) over a block
/// of `warps` warps: a warp butterfly, the warp totals through the matching
/// `shareds` (one slot per warp) and one barrier, then every thread combines
/// them in warp order, so all threads get the same, deterministic totals.
/// `shareds` must not be reused without a barrier.
SmallVector<Value> blockAllReduceEach(OpBuilder &b, Location loc,
                                      ArrayRef<Value> partials,
                                      ArrayRef<Value> shareds,
                                      ArrayRef<bool> maxes, int64_t warps);
Value blockAllReduce(OpBuilder &b, Location loc, Value partial, Value shared,
                     int64_t warps, bool max);

/// The elements of one row a thread of a block holds: columns t, t + T, ...
/// (their `indices`, and whether each is inside the row), with the scalars
/// computed at each (to resume with ElementEmitter::resumeElement).
struct RowElements {
  SmallVector<SmallVector<Value>> indices;
  SmallVector<Value> inside;
  SmallVector<llvm::DenseMap<Value, Value>> saved;
};

/// A block of `threads` threads computes the reductions of row fusion body
/// `body` (rowFusionShape) over the row at `rowIndex` of `columns`
/// elements, as the row fusion emitter does: in stages by dependency depth,
/// each stage one blockAllReduceEach through `shareds` (one buffer of
/// threads / 32 slots per reduction of `body`, in body order: f64 for
/// sums, f32 for maxima); each reduction's total becomes
/// `emitter.given[its result]`. `emitter` reads the body's arguments.
FailureOr<RowElements> emitRowReductions(OpBuilder &b, Location loc,
                                         Block &body, ElementEmitter &emitter,
                                         ValueRange rowIndex, Value thread,
                                         int64_t threads, int64_t columns,
                                         ArrayRef<Value> shareds);

/// The shared-memory buffers emitRowReductions needs for `body`'s
/// reductions with `warps` warps.
SmallVector<Type> rowReductionBuffers(MLIRContext *context, Block &body,
                                      int64_t warps);

//===----------------------------------------------------------------------===//
// Emitters, one family per file
//===----------------------------------------------------------------------===//

/// A fusion without reductions: a grid-stride loop (CudaLoopEmitter.cpp).
FailureOr<GpuKernel> emitLoopFusion(FusionOp fusion, StringRef name,
                                    OpBuilder &moduleBuilder);

/// A fusion of reductions `roots` (reductionFusionRoots), yielded only,
/// beside side results of their operands' shape (CudaReductionEmitter.cpp).
FailureOr<GpuKernel> emitReductionFusion(FusionOp fusion,
                                         ArrayRef<Operation *> roots,
                                         StringRef name,
                                         OpBuilder &moduleBuilder);

/// A row fusion of row shape `rowType` (passes/Analysis/RowFusion.h): a
/// block per row (CudaRowFusionEmitter.cpp).
FailureOr<GpuKernel> emitRowFusion(FusionOp fusion, ArrayRef<int64_t> rowType,
                                   StringRef name, OpBuilder &moduleBuilder);

/// f32 softmax, log_softmax, layer_norm, rms_norm over the last dimension:
/// a block per row (CudaRowOpEmitter.cpp).
bool hasGpuRowKernel(Operation *op);
FailureOr<GpuKernel> emitRowKernel(Operation *op, StringRef name,
                                   OpBuilder &moduleBuilder);

/// f32 cross_entropy and cross_entropy_grad of rank-2 logits
/// (CudaCrossEntropyEmitter.cpp).
bool hasGpuCrossEntropyKernel(Operation *op);
FailureOr<GpuKernel> emitCrossEntropyKernel(Operation *op, StringRef name,
                                            OpBuilder &moduleBuilder);

/// genesis.decode_attention: a block per key/value head, its keys split
/// over the warps and merged (CudaDecodeAttentionEmitter.cpp).
bool isDecodeAttention(Operation *op);
FailureOr<GpuKernel> emitDecodeAttention(Operation *op, StringRef name,
                                         OpBuilder &moduleBuilder);

/// A genesis.library_call of at most kMaxGemvRows lhs rows against an
/// [N, K] weight, or a matrix-vector fusion of several with an epilogue
/// (passes/Analysis/MatrixVector.h): a warp per output column
/// (CudaGemvEmitter.cpp).
bool isGemv(Operation *op);
FailureOr<GpuKernel> emitGemv(Operation *op, StringRef name,
                              OpBuilder &moduleBuilder);

/// Any op with a CPU op kernel: that kernel, one outer iteration per thread
/// (CudaOpKernelEmitter.cpp).
FailureOr<GpuKernel> emitOuterLoopKernel(Operation *op, StringRef name,
                                         OpBuilder &moduleBuilder);

/// An op's CPU op kernel in the GPU module, called per thread: `function`
/// takes the op's operands and results as memrefs, then [begin, end) of its
/// outer loop of `extent` iterations; each thread runs `perThread` of them,
/// a block's width apart, so a block covers `kOuterLoopBlock * perThread`.
struct OuterLoopBody {
  mlir::func::FuncOp function;
  int64_t extent = 0;
  int64_t perThread = 1;
  int64_t blocks() const {
    return ceilDiv(extent, kOuterLoopBlock * perThread);
  }
  static constexpr int64_t kOuterLoopBlock = 128;
};
FailureOr<OuterLoopBody> emitOuterLoopBody(Operation *op, StringRef name,
                                           OpBuilder &moduleBuilder);
/// Calls `body` from a kernel of kOuterLoopBlock threads as its block number
/// `block` (of body.blocks()) with `arguments` (operands, then results).
void callOuterLoopBody(OpBuilder &b, Location loc, const OuterLoopBody &body,
                       ValueRange arguments, Value block);

/// A genesis.fusion of optimizer updates only (genesis-group-optimizer-
/// updates), of distinct inputs, whose updates read only those inputs, are
/// independent (updatesAreIndependent) and are yielded in order: one kernel
/// whose blocks are split among the updates (CudaOptimizerGroupEmitter.cpp).
bool isOptimizerGroup(Operation *op);
FailureOr<GpuKernel> emitOptimizerGroup(Operation *op, StringRef name,
                                        OpBuilder &moduleBuilder);

/// Transposes outside fusions (CudaDataKernels.cpp): a tiled transpose
/// through shared memory when the innermost dimension moves, else a loop.
bool hasGpuTransposeKernel(Operation *op);
FailureOr<GpuKernel> emitTransposeKernel(Operation *op, StringRef name,
                                         OpBuilder &moduleBuilder);

/// slice, pad, concat, broadcast_in_dim, iota and take outside fusions (a
/// thread per result element), and scatter_add (a warp per result row and
/// column group, no atomics) (CudaDataKernels.cpp).
bool hasGpuGatherKernel(Operation *op);
FailureOr<GpuKernel> emitGatherKernel(Operation *op, StringRef name,
                                      OpBuilder &moduleBuilder);

} // namespace genesis::cuda

#endif // GENESIS_PASSES_CONVERSION_CUDAEMITTERS_H
