//===- GenesisInterfaces.td - Differentiation interfaces ---*- tablegen -*-===//
//
// How ops take part in reverse-mode differentiation (genesis-autodiff).
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_DIALECT_IR_GENESISINTERFACES_TD
#define GENESIS_DIALECT_IR_GENESISINTERFACES_TD

include "mlir/IR/OpBase.td"

def Genesis_DifferentiableOpInterface
    : OpInterface<"DifferentiableOpInterface"> {
  let cppNamespace = "::genesis";
  let description = [{
    An op that states its vector-Jacobian product (VJP): given cotangents of
    its results, it builds the ops computing the cotangents of its operands.
    Each op's VJP is written once, in GenesisGradients.cpp, in the order of
    GenesisOps.td.
  }];
  let methods = [
    InterfaceMethod<[{
        Builds, at the builder's insertion point, the cotangent of every
        operand given `resultGrads` (one per result; a null value means the
        result receives no gradient, i.e. zero). Fills `operandGrads` with
        one value per operand, null where the operand gets no gradient
        (integer operands, or operands the op's derivative ignores).
      }], "void", "buildVjp",
      (ins "::mlir::OpBuilder &":$builder,
           "::llvm::ArrayRef<::mlir::Value>":$resultGrads,
           "::llvm::SmallVectorImpl<::mlir::Value> &":$operandGrads)>,
  ];
}

// Gradients do not flow through the op: its results are integers or
// booleans, or are defined to be constant under differentiation
// (stop_gradient, sign, optimizer updates).
def Genesis_NonDifferentiable : NativeOpTrait<"NonDifferentiable"> {
  let cppNamespace = "::genesis::OpTrait";
}

// Ops implementing the interface list this trait.
defvar Genesis_Differentiable =
    DeclareOpInterfaceMethods<Genesis_DifferentiableOpInterface>;

#endif // GENESIS_DIALECT_IR_GENESISINTERFACES_TD
