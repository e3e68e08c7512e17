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

} // namespace genesis::cpu

#endif // GENESIS_PASSES_CONVERSION_CPUKERNELS_H
