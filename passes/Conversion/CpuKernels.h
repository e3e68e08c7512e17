//===- CpuKernels.h - Pieces of genesis-lower-cpu ---------------*- C++ -*-===//
//
// Shared by the fusion emitter (LowerToCpu.cpp) and the kernels of ops that
// run outside fusions (CpuOpKernels.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_PASSES_CONVERSION_CPUKERNELS_H
#define GENESIS_PASSES_CONVERSION_CPUKERNELS_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"

namespace genesis::cpu {

/// f64 (and index) arithmetic inside a kernel: the op kernels compute in f64
/// and round once when they store, as the reference evaluator does.
struct KernelMath {
  mlir::OpBuilder &b;
  mlir::Location loc;
  mlir::Type f64 = b.getF64Type();

  mlir::Value c(double v) {
    return mlir::arith::ConstantOp::create(b, loc, f64, b.getFloatAttr(f64, v));
  }
  mlir::Value idx(int64_t v) {
    return mlir::arith::ConstantIndexOp::create(b, loc, v);
  }
  mlir::Value widen(mlir::Value v) {
    return v.getType() == f64 ? v : mlir::arith::ExtFOp::create(b, loc, f64, v);
  }
  mlir::Value narrow(mlir::Value v, mlir::Type to) {
    return to == f64 ? v : mlir::arith::TruncFOp::create(b, loc, to, v);
  }
  /// `v` rounded to `to` and widened back: a value as the evaluator stores it.
  mlir::Value roundTo(mlir::Value v, mlir::Type to) {
    return widen(narrow(v, to));
  }
  mlir::Value add(mlir::Value x, mlir::Value y) {
    return mlir::arith::AddFOp::create(b, loc, x, y);
  }
  mlir::Value sub(mlir::Value x, mlir::Value y) {
    return mlir::arith::SubFOp::create(b, loc, x, y);
  }
  mlir::Value mul(mlir::Value x, mlir::Value y) {
    return mlir::arith::MulFOp::create(b, loc, x, y);
  }
  mlir::Value div(mlir::Value x, mlir::Value y) {
    return mlir::arith::DivFOp::create(b, loc, x, y);
  }
  mlir::Value neg(mlir::Value x) {
    return mlir::arith::NegFOp::create(b, loc, x);
  }
  /// NaN-propagating maximum.
  mlir::Value max(mlir::Value x, mlir::Value y) {
    return mlir::arith::MaximumFOp::create(b, loc, x, y);
  }
  mlir::Value exp(mlir::Value x) {
    return mlir::math::ExpOp::create(b, loc, x);
  }
  mlir::Value log(mlir::Value x) {
    return mlir::math::LogOp::create(b, loc, x);
  }
  mlir::Value sqrt(mlir::Value x) {
    return mlir::math::SqrtOp::create(b, loc, x);
  }
  mlir::Value pow(mlir::Value x, mlir::Value y) {
    return mlir::math::PowFOp::create(b, loc, x, y);
  }
  mlir::Value select(mlir::Value cond, mlir::Value x, mlir::Value y) {
    return mlir::arith::SelectOp::create(b, loc, cond, x, y);
  }
  mlir::Value fcmp(mlir::arith::CmpFPredicate p, mlir::Value x, mlir::Value y) {
    return mlir::arith::CmpFOp::create(b, loc, p, x, y);
  }
  mlir::Value icmp(mlir::arith::CmpIPredicate p, mlir::Value x, mlir::Value y) {
    return mlir::arith::CmpIOp::create(b, loc, p, x, y);
  }
  mlir::Value iadd(mlir::Value x, mlir::Value y) {
    return mlir::arith::AddIOp::create(b, loc, x, y);
  }
  mlir::Value imul(mlir::Value x, mlir::Value y) {
    return mlir::arith::MulIOp::create(b, loc, x, y);
  }
  mlir::Value idiv(mlir::Value x, mlir::Value y) {
    return mlir::arith::DivUIOp::create(b, loc, x, y);
  }
  mlir::Value irem(mlir::Value x, mlir::Value y) {
    return mlir::arith::RemUIOp::create(b, loc, x, y);
  }
  mlir::Value load(mlir::Value memref, mlir::ValueRange index) {
    return widen(mlir::memref::LoadOp::create(b, loc, memref, index));
  }
  void store(mlir::Value v, mlir::Value memref, mlir::ValueRange index) {
    mlir::Type element =
        mlir::cast<mlir::MemRefType>(memref.getType()).getElementType();
    mlir::memref::StoreOp::create(b, loc, narrow(v, element), memref, index);
  }
};

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

/// Emits the kernel of such an op: operands then results as memrefs. With
/// `flattenElementwise`, the elementwise ops (optimizer updates, dropout)
/// take their operands and results of the parameter's shape flattened to
/// 1-D, so the outer loop covers every element.
mlir::FailureOr<mlir::func::FuncOp>
emitOpKernel(mlir::Operation *op, llvm::StringRef name,
             mlir::OpBuilder &moduleBuilder, bool flattenElementwise = false);

/// Data-movement ops outside fusions (CpuDataKernels.cpp): transpose,
/// slice, pad, concat, broadcast_in_dim, take, scatter_add, iota, argmax.
bool hasDataKernel(mlir::Operation *op);
/// The extent of the outermost loop of such an op's kernel.
int64_t dataKernelOuterExtent(mlir::Operation *op);
/// Fills `kernel` (made by createKernel) for such an op.
mlir::LogicalResult emitDataKernel(mlir::Operation *op,
                                   mlir::func::FuncOp kernel);

/// Row ops outside fusions (CpuRowKernels.cpp): layer_norm, rms_norm, rope,
/// attention, attention_grad, global_norm (f32/f64).
bool hasRowKernel(mlir::Operation *op);
/// The extent of the outermost loop of such an op's kernel.
int64_t rowKernelOuterExtent(mlir::Operation *op);
/// Fills `kernel` (made by createKernel) for such an op.
mlir::LogicalResult emitRowKernel(mlir::Operation *op,
                                  mlir::func::FuncOp kernel);

} // namespace genesis::cpu

#endif // GENESIS_PASSES_CONVERSION_CPUKERNELS_H
