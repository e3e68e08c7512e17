//===- GenesisBase.td - Genesis dialect definition ---------*- tablegen -*-===//
//
// The genesis dialect: the dialect, its enums, type constraints and the base
// classes its ops share.
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_DIALECT_IR_GENESISBASE_TD
#define GENESIS_DIALECT_IR_GENESISBASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/CommonTypeConstraints.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Genesis_Dialect : Dialect {
  let name = "genesis";
  let cppNamespace = "::genesis";
  let summary = "Tensor-level operations of the Genesis deep-learning compiler";
  let description = [{
    The `genesis` dialect is the IR a traced Genesis model lives in. Its ops
    work on builtin ranked tensors with static shapes whose element type is
    one of `f32`, `f16`, `bf16`, `f64`, `i1`, `i32` or `i64`.

    Conventions shared by every op:

    * Shapes are static and broadcasting is explicit: an elementwise op
      requires operands of identical type; use `genesis.broadcast_in_dim` to
      expand an operand first. This keeps every op's shape rule local and
      makes the vector-Jacobian product of each op unambiguous.
    * Dimensions named by attributes (`dim`, `dims`, `axis`, `permutation`)
      are non-negative and smaller than the rank they index.
    * Floating-point results are those of the exact mathematical operation
      rounded to the result element type; the reference evaluator computes in
      f64 and rounds once, and it is the oracle for every backend.
    * Compound ops (`matmul`, `softmax`, `attention`, `cross_entropy`, ...)
      are kept whole because code generation and differentiation do better
      with them than with their decomposition.
  }];
  let hasConstantMaterializer = 1;
  // genesis.name and genesis.role on function arguments and results;
  // genesis.kernel and genesis.launch on ops.
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
  let hasOperationAttrVerify = 1;
  let useDefaultAttributePrinterParser = 1;
}

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def Genesis_CompareDirection : I32EnumAttr<"CompareDirection",
    "comparison performed by genesis.compare", [
      I32EnumAttrCase<"eq", 0>, I32EnumAttrCase<"ne", 1>,
      I32EnumAttrCase<"lt", 2>, I32EnumAttrCase<"le", 3>,
      I32EnumAttrCase<"gt", 4>, I32EnumAttrCase<"ge", 5>]> {
  let cppNamespace = "::genesis";
}

def Genesis_GeluApproximation : I32EnumAttr<"GeluApproximation",
    "formula used by genesis.gelu", [
      I32EnumAttrCase<"erf", 0>, I32EnumAttrCase<"tanh", 1>]> {
  let cppNamespace = "::genesis";
}

def Genesis_LossReduction : I32EnumAttr<"LossReduction",
    "how a loss reduces its per-example values", [
      I32EnumAttrCase<"none", 0>, I32EnumAttrCase<"mean", 1>,
      I32EnumAttrCase<"sum", 2>]> {
  let cppNamespace = "::genesis";
}

def Genesis_AllReduceKind : I32EnumAttr<"AllReduceKind",
    "combination performed by genesis.all_reduce", [
      I32EnumAttrCase<"sum", 0>, I32EnumAttrCase<"mean", 1>]> {
  let cppNamespace = "::genesis";
}

def Genesis_GemmEpilogue : I32EnumAttr<"GemmEpilogue",
    "epilogue fused into a genesis.library_call GEMM", [
      I32EnumAttrCase<"none", 0>, I32EnumAttrCase<"bias", 1>,
      I32EnumAttrCase<"relu", 2>, I32EnumAttrCase<"bias_relu", 3>,
      I32EnumAttrCase<"gelu", 4>, I32EnumAttrCase<"bias_gelu", 5>,
      I32EnumAttrCase<"dgelu", 6>]> {
  let cppNamespace = "::genesis";
}

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

def Genesis_FloatElement : AnyTypeOf<[F16, BF16, F32, F64]>;
def Genesis_IntElement : AnyTypeOf<[I32, I64]>;

def Genesis_Tensor : StaticShapeTensorOf<[F16, BF16, F32, F64, I1, I32, I64]>;
def Genesis_FloatTensor : StaticShapeTensorOf<[F16, BF16, F32, F64]>;
def Genesis_Float16Tensor : StaticShapeTensorOf<[F16, BF16]>;
def Genesis_F32Tensor : StaticShapeTensorOf<[F32]>;
def Genesis_NumericTensor : StaticShapeTensorOf<[F16, BF16, F32, F64, I32, I64]>;
def Genesis_IndexTensor : StaticShapeTensorOf<[I32, I64]>;
def Genesis_BoolTensor : StaticShapeTensorOf<[I1]>;
def Genesis_LogicalTensor : StaticShapeTensorOf<[I1, I32, I64]>;
def Genesis_ScalarF32 : 0DTensorOf<[F32]>;
def Genesis_ScalarI64 : 0DTensorOf<[I64]>;

//===----------------------------------------------------------------------===//
// Base classes
//===----------------------------------------------------------------------===//

class Genesis_Op<string mnemonic, list<Trait> traits = []>
    : Op<Genesis_Dialect, mnemonic, traits>;

// An op whose result types are computed from its operands and attributes by
// `inferReturnTypes`; the same function reports shape errors, so the verifier
// and the frontend share one statement of each shape rule.
class Genesis_InferredOp<string mnemonic, list<Trait> traits = []>
    : Genesis_Op<mnemonic, !listconcat(traits, [Pure, InferTypeOpAdaptor])>;

class Genesis_UnaryOp<string mnemonic, Type type, list<Trait> traits = []>
    : Genesis_InferredOp<mnemonic, !listconcat(traits, [Elementwise])> {
  let arguments = (ins type:$operand);
  let results = (outs type:$result);
  let assemblyFormat = "$operand attr-dict `:` type($operand)";
}

class Genesis_BinaryOp<string mnemonic, Type type, list<Trait> traits = []>
    : Genesis_InferredOp<mnemonic, !listconcat(traits, [Elementwise])> {
  let arguments = (ins type:$lhs, type:$rhs);
  let results = (outs type:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` custom<SameOperandTypes>(type($lhs), type($rhs))
  }];
}

#endif // GENESIS_DIALECT_IR_GENESISBASE_TD
