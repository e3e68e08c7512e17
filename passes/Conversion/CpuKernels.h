//===- CpuKernels.h - Pieces of genesis-lower-cpu ---------------*- C++ -*-===//
//
// Shared by the fusion emitter (LowerToCpu.cpp) and the kernels of ops that
// run outside fusions (CpuOpKernels.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_PASSES_CONVERSION_CPUKERNELS_H
#define GENESIS_PASSES_CONVERSION_CPUKERNELS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace genesis::cpu {

/// A kernel function `name(inputs..., outputs... : memref, begin, end :
/// index)` marked `genesis.kernel`, with `genesis.outer_extent` = the extent
/// of its outermost loop (the range the runtime may split). The body is an
/// empty entry block.
mlir::func::FuncOp createKernel(mlir::OpBuilder &moduleBuilder,
                                mlir::Location loc, llvm::StringRef name,
                                mlir::TypeRange inputs, mlir::TypeRange outputs,
                                int64_t outerExtent);

/// Loops over `shape`, the outermost over [begin, end) (the kernel's range),
/// calling `body` inside with the index; a rank-0 shape runs `body` once
/// when begin < end.
mlir::LogicalResult buildLoopNest(
    mlir::OpBuilder &b, mlir::Location loc, llvm::ArrayRef<int64_t> shape,
    mlir::Value begin, mlir::Value end,
    llvm::function_ref<mlir::LogicalResult(mlir::OpBuilder &, mlir::ValueRange)>
        body);

/// Whether `op`, outside any fusion, is compiled into a kernel of its own.
bool hasOpKernel(mlir::Operation *op);

/// Emits the kernel of such an op: operands then results as memrefs.
mlir::FailureOr<mlir::func::FuncOp>
emitOpKernel(mlir::Operation *op, llvm::StringRef name,
             mlir::OpBuilder &moduleBuilder);

/// Data-movement ops outside fusions (CpuDataKernels.cpp): transpose,
/// slice, pad, concat, broadcast_in_dim, take, scatter_add, iota, argmax.
bool hasDataKernel(mlir::Operation *op);
/// The extent of the outermost loop of such an op's kernel.
int64_t dataKernelOuterExtent(mlir::Operation *op);
/// Fills `kernel` (made by createKernel) for such an op.
mlir::LogicalResult emitDataKernel(mlir::Operation *op, mlir::func::FuncOp kernel);

/// Row ops outside fusions (CpuRowKernels.cpp): layer_norm, rms_norm, rope,
/// attention, attention_grad, global_norm (f32/f64).
bool hasRowKernel(mlir::Operation *op);
/// The extent of the outermost loop of such an op's kernel.
int64_t rowKernelOuterExtent(mlir::Operation *op);
/// Fills `kernel` (made by createKernel) for such an op.
mlir::LogicalResult emitRowKernel(mlir::Operation *op, mlir::func::FuncOp kernel);

} // namespace genesis::cpu

#endif // GENESIS_PASSES_CONVERSION_CPUKERNELS_H
