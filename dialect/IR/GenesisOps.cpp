//===- GenesisOps.cpp - Genesis dialect ops -------------------------------===//
//
// Shape rules (inferReturnTypes), verifiers, folders and custom assembly of
// the genesis ops. Each shape rule is written once, here: the verifier checks
// a parsed op against it and the frontend calls it at trace time, so both
// report the same message.
//
//===----------------------------------------------------------------------===//

#include "dialect/IR/GenesisOps.h"
#include "dialect/IR/ShapeRule.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLExtras.h"

#include <numeric>

using namespace mlir;
using namespace genesis;

namespace {

/// Shape rule of genesis.matmul and genesis.library_call: the result type of
/// `op(lhs, rhs)` with optional transposes of the two innermost dimensions.
FailureOr<RankedTensorType> inferMatmulType(const ShapeRule &rule, Value lhs,
                                            Value rhs, bool transposeLhs,
                                            bool transposeRhs) {
  auto lhsType = rule.ranked(lhs, "lhs");
  auto rhsType = rule.ranked(rhs, "rhs");
  if (failed(lhsType) || failed(rhsType))
    return failure();
  int64_t rank = lhsType->getRank();
  if (rank < 2 || rhsType->getRank() != rank) {
    (void)rule.fail("operands must have equal rank >= 2, got ", *lhsType,
                    " and ", *rhsType);
    return failure();
  }
  if (lhsType->getElementType() != rhsType->getElementType()) {
    (void)rule.fail("operands must have the same element type, got ", *lhsType,
                    " and ", *rhsType);
    return failure();
  }
  ArrayRef<int64_t> a = lhsType->getShape(), b = rhsType->getShape();
  if (a.drop_back(2) != b.drop_back(2)) {
    (void)rule.fail("batch dimensions must match (broadcast explicitly), got ",
                    *lhsType, " and ", *rhsType);
    return failure();
  }
  int64_t m = transposeLhs ? a[rank - 1] : a[rank - 2];
  int64_t kLhs = transposeLhs ? a[rank - 2] : a[rank - 1];
  int64_t kRhs = transposeRhs ? b[rank - 1] : b[rank - 2];
  int64_t n = transposeRhs ? b[rank - 2] : b[rank - 1];
  if (kLhs != kRhs) {
    (void)rule.fail("contraction dimensions differ: lhs ", *lhsType,
                    transposeLhs ? " (transposed)" : "", " has K = ", kLhs,
                    ", rhs ", *rhsType, transposeRhs ? " (transposed)" : "",
                    " has K = ", kRhs);
    return failure();
  }
  SmallVector<int64_t> shape(a.drop_back(2));
  shape.append({m, n});
  return RankedTensorType::get(shape, lhsType->getElementType());
}

/// Shape of genesis.take(operand, indices, axis).
FailureOr<RankedTensorType> inferTakeType(const ShapeRule &rule, Value operand,
                                          Value indices, int64_t axis) {
  auto operandType = rule.ranked(operand, "operand");
  auto indicesType = rule.ranked(indices, "indices");
  if (failed(operandType) || failed(indicesType) ||
      failed(rule.checkDim(axis, operandType->getRank(), "axis")))
    return failure();
  ArrayRef<int64_t> shape = operandType->getShape();
  // No index is in range of an empty axis (PyTorch's index_select fails).
  if (shape[axis] == 0 && indicesType->getNumElements() != 0) {
    (void)rule.fail("axis ", axis, " of the operand ", *operandType,
                    " is empty, so no index of ", *indicesType,
                    " can be in range");
    return failure();
  }
  SmallVector<int64_t> result(shape.take_front(axis));
  llvm::append_range(result, indicesType->getShape());
  llvm::append_range(result, shape.drop_front(axis + 1));
  return RankedTensorType::get(result, operandType->getElementType());
}

bool isSplatOf(Attribute attr, double floatValue, bool negativeZero = false) {
  auto splat = dyn_cast_if_present<SplatElementsAttr>(attr);
  if (!splat)
    return false;
  Type elt = splat.getElementType();
  if (isa<FloatType>(elt)) {
    APFloat value = splat.getSplatValue<APFloat>();
    if (floatValue == 0.0)
      return value.isZero() && value.isNegative() == negativeZero;
    bool losesInfo = false;
    value.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven,
                  &losesInfo);
    return value.convertToDouble() == floatValue;
  }
  if (elt.isInteger(1))
    return false;
  return splat.getSplatValue<APInt>().getSExtValue() ==
         static_cast<int64_t>(floatValue);
}

bool isIntegerTensor(Type type) {
  return isa<IntegerType>(cast<ShapedType>(type).getElementType());
}

} // namespace

//===----------------------------------------------------------------------===//
// Custom assembly: `custom<SameOperandTypes>` prints one type when both
// operands share it (the only valid case) and two otherwise.
//===----------------------------------------------------------------------===//

static ParseResult parseSameOperandTypes(OpAsmParser &parser, Type &lhs,
                                         Type &rhs) {
  if (parser.parseType(lhs))
    return failure();
  rhs = lhs;
  if (succeeded(parser.parseOptionalComma()))
    return parser.parseType(rhs);
  return success();
}

static void printSameOperandTypes(OpAsmPrinter &printer, Operation *, Type lhs,
                                  Type rhs) {
  printer << lhs;
  if (lhs != rhs)
    printer << ", " << rhs;
}

#define GET_OP_CLASSES
#include "dialect/IR/GenesisOps.cpp.inc"

//===----------------------------------------------------------------------===//
// Constant
//===----------------------------------------------------------------------===//

LogicalResult ConstantOp::inferReturnTypes(MLIRContext *,
                                           std::optional<Location> loc,
                                           Adaptor adaptor,
                                           SmallVectorImpl<Type> &types) {
  auto type = dyn_cast<RankedTensorType>(adaptor.getValue().getType());
  if (!type)
    return ShapeRule(loc, getOperationName())
        .fail("value must be a ranked tensor, got ",
              adaptor.getValue().getType());
  types.push_back(type);
  return success();
}

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

//===----------------------------------------------------------------------===//
// Elementwise ops
//===----------------------------------------------------------------------===//

#define GENESIS_SAME_TYPE_AS_OPERAND(OP)                                       \
  LogicalResult OP::inferReturnTypes(MLIRContext *, std::optional<Location>,   \
                                     Adaptor adaptor,                          \
                                     SmallVectorImpl<Type> &types) {           \
    types.push_back(adaptor.getOperand().getType());                           \
    return success();                                                          \
  }
GENESIS_SAME_TYPE_AS_OPERAND(NegOp)
GENESIS_SAME_TYPE_AS_OPERAND(AbsOp)
GENESIS_SAME_TYPE_AS_OPERAND(SignOp)
GENESIS_SAME_TYPE_AS_OPERAND(ExpOp)
GENESIS_SAME_TYPE_AS_OPERAND(LogOp)
GENESIS_SAME_TYPE_AS_OPERAND(SqrtOp)
GENESIS_SAME_TYPE_AS_OPERAND(RsqrtOp)
GENESIS_SAME_TYPE_AS_OPERAND(TanhOp)
GENESIS_SAME_TYPE_AS_OPERAND(SigmoidOp)
GENESIS_SAME_TYPE_AS_OPERAND(ReluOp)
GENESIS_SAME_TYPE_AS_OPERAND(GeluOp)
GENESIS_SAME_TYPE_AS_OPERAND(SiluOp)
GENESIS_SAME_TYPE_AS_OPERAND(SinOp)
GENESIS_SAME_TYPE_AS_OPERAND(CosOp)
GENESIS_SAME_TYPE_AS_OPERAND(NotOp)
GENESIS_SAME_TYPE_AS_OPERAND(ErfOp)
GENESIS_SAME_TYPE_AS_OPERAND(StopGradientOp)
GENESIS_SAME_TYPE_AS_OPERAND(AllReduceOp)
#undef GENESIS_SAME_TYPE_AS_OPERAND

// Binary elementwise ops take identical operand types: broadcasting is
// explicit in the genesis dialect.
#define GENESIS_BINARY_SHAPE_RULE(OP)                                          \
  LogicalResult OP::inferReturnTypes(                                          \
      MLIRContext *, std::optional<Location> loc, Adaptor adaptor,             \
      SmallVectorImpl<Type> &types) {                                          \
    if (failed(ShapeRule(loc, getOperationName())                              \
                   .checkSameType(adaptor.getLhs(), adaptor.getRhs(), "lhs",   \
                                  "rhs (broadcast explicitly with "            \
                                  "genesis.broadcast_in_dim)")))               \
      return failure();                                                        \
    types.push_back(adaptor.getLhs().getType());                               \
    return success();                                                          \
  }
GENESIS_BINARY_SHAPE_RULE(AddOp)
GENESIS_BINARY_SHAPE_RULE(SubOp)
GENESIS_BINARY_SHAPE_RULE(MulOp)
GENESIS_BINARY_SHAPE_RULE(DivOp)
GENESIS_BINARY_SHAPE_RULE(PowOp)
GENESIS_BINARY_SHAPE_RULE(MaxOp)
GENESIS_BINARY_SHAPE_RULE(MinOp)
GENESIS_BINARY_SHAPE_RULE(AndOp)
GENESIS_BINARY_SHAPE_RULE(OrOp)
#undef GENESIS_BINARY_SHAPE_RULE

OpFoldResult NegOp::fold(FoldAdaptor) {
  if (auto inner = getOperand().getDefiningOp<NegOp>())
    return inner.getOperand();
  return {};
}

OpFoldResult AddOp::fold(FoldAdaptor adaptor) {
  // x + (-0.0) == x for every float x; x + 0.0 is not (it maps -0.0 to 0.0).
  bool floatType = !isIntegerTensor(getType());
  if (isSplatOf(adaptor.getRhs(), 0.0, /*negativeZero=*/floatType))
    return getLhs();
  return {};
}

OpFoldResult SubOp::fold(FoldAdaptor adaptor) {
  if (isSplatOf(adaptor.getRhs(), 0.0))
    return getLhs();
  return {};
}

OpFoldResult MulOp::fold(FoldAdaptor adaptor) {
  if (isSplatOf(adaptor.getRhs(), 1.0))
    return getLhs();
  return {};
}

OpFoldResult DivOp::fold(FoldAdaptor adaptor) {
  if (isSplatOf(adaptor.getRhs(), 1.0))
    return getLhs();
  return {};
}

LogicalResult CompareOp::inferReturnTypes(MLIRContext *context,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  ShapeRule rule(loc, getOperationName());
  if (failed(
          rule.checkSameType(adaptor.getLhs(), adaptor.getRhs(), "lhs", "rhs")))
    return failure();
  auto type = rule.ranked(adaptor.getLhs(), "lhs");
  if (failed(type))
    return failure();
  types.push_back(type->clone(IntegerType::get(context, 1)));
  return success();
}

LogicalResult SelectOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  ShapeRule rule(loc, getOperationName());
  if (failed(rule.checkSameType(adaptor.getOnTrue(), adaptor.getOnFalse(),
                                "on_true", "on_false")))
    return failure();
  auto condition = rule.ranked(adaptor.getCondition(), "condition");
  auto value = rule.ranked(adaptor.getOnTrue(), "on_true");
  if (failed(condition) || failed(value))
    return failure();
  if (condition->getShape() != value->getShape())
    return rule.fail("condition ", *condition,
                     " must have the shape of the values ", *value);
  types.push_back(*value);
  return success();
}

OpFoldResult CastOp::fold(FoldAdaptor) {
  if (getOperand().getType() == getType())
    return getOperand();
  return {};
}

//===----------------------------------------------------------------------===//
// Shape ops
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::verify() {
  RankedTensorType from = getOperand().getType(), to = getType();
  if (from.getElementType() != to.getElementType())
    return emitOpError("element type must be preserved, got ")
           << from << " -> " << to;
  if (from.getNumElements() != to.getNumElements())
    return emitOpError("element count must be preserved, got ")
           << from << " (" << from.getNumElements() << " elements) -> " << to
           << " (" << to.getNumElements() << " elements)";
  return success();
}

OpFoldResult ReshapeOp::fold(FoldAdaptor) {
  if (getOperand().getType() == getType())
    return getOperand();
  if (auto inner = getOperand().getDefiningOp<ReshapeOp>()) {
    getOperandMutable().assign(inner.getOperand());
    return getResult();
  }
  return {};
}

LogicalResult TransposeOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  ShapeRule rule(loc, getOperationName());
  auto type = rule.ranked(adaptor.getOperand(), "operand");
  if (failed(type))
    return failure();
  ArrayRef<int64_t> permutation = adaptor.getPermutation();
  int64_t rank = type->getRank();
  SmallVector<bool> seen(rank, false);
  bool valid = static_cast<int64_t>(permutation.size()) == rank;
  for (int64_t p : permutation) {
    valid = valid && p >= 0 && p < rank && !seen[p];
    if (valid)
      seen[p] = true;
  }
  if (!valid)
    return rule.fail("permutation [", permutation,
                     "] is not a permutation of [0, ", rank, ")");
  SmallVector<int64_t> shape;
  for (int64_t p : permutation)
    shape.push_back(type->getDimSize(p));
  types.push_back(type->clone(shape));
  return success();
}

OpFoldResult TransposeOp::fold(FoldAdaptor) {
  auto isIdentity = [](ArrayRef<int64_t> permutation) {
    return llvm::all_of(llvm::enumerate(permutation), [](auto entry) {
      return static_cast<int64_t>(entry.index()) == entry.value();
    });
  };
  if (auto inner = getOperand().getDefiningOp<TransposeOp>()) {
    // transpose(transpose(x, p), q) == transpose(x, r) with r[i] = p[q[i]].
    SmallVector<int64_t> composed;
    for (int64_t q : getPermutation())
      composed.push_back(inner.getPermutation()[q]);
    if (isIdentity(composed))
      return inner.getOperand();
    getOperandMutable().assign(inner.getOperand());
    setPermutation(composed);
    return getResult();
  }
  if (isIdentity(getPermutation()))
    return getOperand();
  return {};
}

LogicalResult SliceOp::inferReturnTypes(MLIRContext *,
                                        std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &types) {
  ShapeRule rule(loc, getOperationName());
  auto type = rule.ranked(adaptor.getOperand(), "operand");
  if (failed(type))
    return failure();
  ArrayRef<int64_t> start = adaptor.getStart(), limit = adaptor.getLimit(),
                    stride = adaptor.getStride();
  int64_t rank = type->getRank();
  if (failed(rule.checkPerDimension(rank, start, limit, stride,
                                    "start, limit and stride")))
    return failure();
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d) {
    if (!(0 <= start[d] && start[d] <= limit[d] &&
          limit[d] <= type->getDimSize(d)))
      return rule.fail("dimension ", d, " needs 0 <= start (", start[d],
                       ") <= limit (", limit[d], ") <= size (",
                       type->getDimSize(d), ")");
    if (stride[d] < 1)
      return rule.fail("stride of dimension ", d, " must be >= 1, got ",
                       stride[d]);
    // ceil((limit - start) / stride), written so that a huge stride cannot
    // overflow.
    int64_t extent = limit[d] - start[d];
    shape.push_back(extent == 0 ? 0 : (extent - 1) / stride[d] + 1);
  }
  types.push_back(type->clone(shape));
  return success();
}

OpFoldResult SliceOp::fold(FoldAdaptor) {
  if (getOperand().getType() == getType())
    return getOperand();
  return {};
}

LogicalResult PadOp::inferReturnTypes(MLIRContext *,
                                      std::optional<Location> loc,
                                      Adaptor adaptor,
                                      SmallVectorImpl<Type> &types) {
  ShapeRule rule(loc, getOperationName());
  auto type = rule.ranked(adaptor.getOperand(), "operand");
  if (failed(type))
    return failure();
  ArrayRef<int64_t> low = adaptor.getLow(), high = adaptor.getHigh(),
                    interior = adaptor.getInterior();
  int64_t rank = type->getRank();
  if (failed(rule.checkPerDimension(rank, low, high, interior,
                                    "low, high and interior")))
    return failure();
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d) {
    if (low[d] < 0 || high[d] < 0 || interior[d] < 0)
      return rule.fail("padding of dimension ", d, " must be non-negative");
    int64_t size = type->getDimSize(d), interiorTotal, padded;
    if (__builtin_mul_overflow(std::max<int64_t>(size - 1, 0), interior[d],
                               &interiorTotal) ||
        __builtin_add_overflow(interiorTotal, size, &padded) ||
        __builtin_add_overflow(padded, low[d], &padded) ||
        __builtin_add_overflow(padded, high[d], &padded))
      return rule.fail("padded size of dimension ", d, " overflows int64");
    shape.push_back(padded);
  }
  types.push_back(type->clone(shape));
  return success();
}

LogicalResult ConcatOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  ShapeRule rule(loc, getOperationName());
  if (adaptor.getInputs().empty())
    return rule.fail("needs at least one input");
  auto first = rule.ranked(adaptor.getInputs()[0], "input #0");
  int64_t dim = adaptor.getDim();
  if (failed(first) || failed(rule.checkDim(dim, first->getRank(), "dim")))
    return failure();
  SmallVector<int64_t> shape(first->getShape());
  for (auto [i, input] : llvm::enumerate(adaptor.getInputs().drop_front())) {
    auto type = dyn_cast<RankedTensorType>(input.getType());
    bool compatible = type && type.getRank() == first->getRank() &&
                      type.getElementType() == first->getElementType();
    for (int64_t d = 0; compatible && d < first->getRank(); ++d)
      compatible = d == dim || type.getDimSize(d) == first->getDimSize(d);
    if (!compatible)
      return rule.fail("input #", i + 1, " of type ", input.getType(),
                       " does not match input #0 of type ", *first,
                       " outside dimension ", dim);
    shape[dim] += type.getDimSize(dim);
  }
  types.push_back(first->clone(shape));
  return success();
}

OpFoldResult ConcatOp::fold(FoldAdaptor) {
  if (getInputs().size() == 1)
    return getInputs()[0];
  return {};
}

LogicalResult BroadcastInDimOp::verify() {
  RankedTensorType from = getOperand().getType(), to = getType();
  ArrayRef<int64_t> dims = getBroadcastDimensions();
  if (from.getElementType() != to.getElementType())
    return emitOpError("element type must be preserved, got ")
           << from << " -> " << to;
  if (static_cast<int64_t>(dims.size()) != from.getRank())
    return emitOpError("broadcast_dimensions needs one entry per operand "
                       "dimension (")
           << from.getRank() << "), got " << dims.size();
  for (auto [i, dim] : llvm::enumerate(dims)) {
    if (dim < 0 || dim >= to.getRank() || (i > 0 && dim <= dims[i - 1]))
      return emitOpError("broadcast_dimensions must be strictly increasing "
                         "and below the result rank ")
             << to.getRank();
    int64_t size = from.getDimSize(i);
    if (size != 1 && size != to.getDimSize(dim))
      return emitOpError("operand dimension ")
             << i << " (size " << size << ") cannot broadcast to result "
             << "dimension " << dim << " (size " << to.getDimSize(dim) << ")";
  }
  return success();
}

OpFoldResult BroadcastInDimOp::fold(FoldAdaptor) {
  if (getOperand().getType() == getType())
    return getOperand();
  return {};
}

LogicalResult IotaOp::verify() {
  // I64Attr getters return uint64_t; compare and print the signed value.
  int64_t dim = getDim();
  if (dim < 0 || dim >= getType().getRank())
    return emitOpError("dim ")
           << dim << " is out of range for rank " << getType().getRank();
  return success();
}

LogicalResult TakeOp::inferReturnTypes(MLIRContext *,
                                       std::optional<Location> loc,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &types) {
  auto type =
      inferTakeType(ShapeRule(loc, getOperationName()), adaptor.getOperand(),
                    adaptor.getIndices(), adaptor.getAxis());
  if (failed(type))
    return failure();
  types.push_back(*type);
  return success();
}

LogicalResult ScatterAddOp::inferReturnTypes(MLIRContext *,
                                             std::optional<Location> loc,
                                             Adaptor adaptor,
                                             SmallVectorImpl<Type> &types) {
  ShapeRule rule(loc, getOperationName());
  auto taken = inferTakeType(rule, adaptor.getOperand(), adaptor.getIndices(),
                             adaptor.getAxis());
  if (failed(taken))
    return failure();
  if (adaptor.getUpdates().getType() != *taken)
    return rule.fail("updates must have type ", *taken,
                     " (what genesis.take gives for these operands), got ",
                     adaptor.getUpdates().getType());
  types.push_back(adaptor.getOperand().getType());
  return success();
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

/// Result type of reducing `dims` of `operand`, shared by the reductions.
/// `hasIdentity`: false for max, min and argmax, which (as in PyTorch) have
/// no value for an empty dimension.
static LogicalResult inferReduceType(const ShapeRule &rule, Value operand,
                                     ArrayRef<int64_t> dims, bool keepdim,
                                     SmallVectorImpl<Type> &types,
                                     bool hasIdentity = true) {
  auto type = rule.ranked(operand, "operand");
  if (failed(type))
    return failure();
  SmallVector<int64_t> shape;
  size_t next = 0;
  for (int64_t d = 0; d < type->getRank(); ++d) {
    bool reduced = next < dims.size() && dims[next] == d;
    if (reduced && !hasIdentity && type->getDimSize(d) == 0)
      return rule.fail("cannot reduce dimension ", d, " of ", *type,
                       ": it is empty, and max, min and argmax of no "
                       "elements are undefined");
    if (reduced)
      ++next;
    if (!reduced)
      shape.push_back(type->getDimSize(d));
    else if (keepdim)
      shape.push_back(1);
  }
  if (next != dims.size())
    return rule.fail("dims [", dims,
                     "] must be strictly increasing and each below the rank ",
                     type->getRank());
  types.push_back(type->clone(shape));
  return success();
}

#define GENESIS_REDUCE_SHAPE_RULE(OP, HAS_IDENTITY)                            \
  LogicalResult OP::inferReturnTypes(                                          \
      MLIRContext *, std::optional<Location> loc, Adaptor adaptor,             \
      SmallVectorImpl<Type> &types) {                                          \
    return inferReduceType(ShapeRule(loc, getOperationName()),                 \
                           adaptor.getOperand(), adaptor.getDims(),            \
                           adaptor.getKeepdim(), types, HAS_IDENTITY);         \
  }
GENESIS_REDUCE_SHAPE_RULE(ReduceSumOp, true)
GENESIS_REDUCE_SHAPE_RULE(ReduceMaxOp, false)
GENESIS_REDUCE_SHAPE_RULE(ReduceMinOp, false)
#undef GENESIS_REDUCE_SHAPE_RULE

LogicalResult ArgmaxOp::inferReturnTypes(MLIRContext *context,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  ShapeRule rule(loc, getOperationName());
  auto type = rule.ranked(adaptor.getOperand(), "operand");
  int64_t dim = adaptor.getDim();
  if (failed(type) || failed(rule.checkDim(dim, type->getRank(), "dim")))
    return failure();
  SmallVector<Type> reduced;
  if (failed(inferReduceType(rule, adaptor.getOperand(), {dim},
                             adaptor.getKeepdim(), reduced,
                             /*hasIdentity=*/false)))
    return failure();
  types.push_back(cast<RankedTensorType>(reduced.front())
                      .clone(IntegerType::get(context, 64)));
  return success();
}

//===----------------------------------------------------------------------===//
// Compound ops
//===----------------------------------------------------------------------===//

LogicalResult MatmulOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  auto type = inferMatmulType(
      ShapeRule(loc, getOperationName()), adaptor.getLhs(), adaptor.getRhs(),
      adaptor.getTransposeLhs(), adaptor.getTransposeRhs());
  if (failed(type))
    return failure();
  types.push_back(*type);
  return success();
}

#define GENESIS_SOFTMAX_SHAPE_RULE(OP)                                         \
  LogicalResult OP::inferReturnTypes(                                          \
      MLIRContext *, std::optional<Location> loc, Adaptor adaptor,             \
      SmallVectorImpl<Type> &types) {                                          \
    ShapeRule rule(loc, getOperationName());                                   \
    auto type = rule.ranked(adaptor.getOperand(), "operand");                  \
    if (failed(type) ||                                                        \
        failed(rule.checkDim(adaptor.getDim(), type->getRank(), "dim")))       \
      return failure();                                                        \
    types.push_back(*type);                                                    \
    return success();                                                          \
  }
GENESIS_SOFTMAX_SHAPE_RULE(SoftmaxOp)
GENESIS_SOFTMAX_SHAPE_RULE(LogSoftmaxOp)
#undef GENESIS_SOFTMAX_SHAPE_RULE

LogicalResult LayerNormOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  ShapeRule rule(loc, getOperationName());
  auto type = rule.ranked(adaptor.getOperand(), "operand");
  if (failed(type))
    return failure();
  if (type->getRank() < 1)
    return rule.fail("operand must have rank >= 1");
  int64_t channels = type->getShape().back();
  if ((adaptor.getWeight() &&
       failed(rule.checkVector(adaptor.getWeight(), channels,
                               type->getElementType(), "weight"))) ||
      (adaptor.getBias() &&
       failed(rule.checkVector(adaptor.getBias(), channels,
                               type->getElementType(), "bias"))))
    return failure();
  types.push_back(*type);
  return success();
}

LogicalResult RmsNormOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  ShapeRule rule(loc, getOperationName());
  auto type = rule.ranked(adaptor.getOperand(), "operand");
  if (failed(type))
    return failure();
  if (type->getRank() < 1)
    return rule.fail("operand must have rank >= 1");
  if (failed(rule.checkVector(adaptor.getWeight(), type->getShape().back(),
                              type->getElementType(), "weight")))
    return failure();
  types.push_back(*type);
  return success();
}

LogicalResult RopeOp::inferReturnTypes(MLIRContext *,
                                       std::optional<Location> loc,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &types) {
  ShapeRule rule(loc, getOperationName());
  auto type = rule.ranked(adaptor.getOperand(), "operand");
  if (failed(type))
    return failure();
  int64_t rank = type->getRank();
  if (rank < 2 || type->getShape().back() % 2 != 0)
    return rule.fail("operand must be [..., S, D] with D even, got ", *type);
  auto table = RankedTensorType::get(type->getShape().take_back(2),
                                     type->getElementType());
  if (adaptor.getCos().getType() != table ||
      adaptor.getSin().getType() != table)
    return rule.fail("cos and sin must both have type ", table, ", got ",
                     adaptor.getCos().getType(), " and ",
                     adaptor.getSin().getType());
  types.push_back(*type);
  return success();
}

/// Shape rule of genesis.cross_entropy, shared with its gradient op.
static FailureOr<RankedTensorType>
inferCrossEntropyType(const ShapeRule &rule, Value logitsValue,
                      Value labelsValue, double labelSmoothing,
                      LossReduction reduction) {
  auto logits = rule.ranked(logitsValue, "logits");
  auto labels = rule.ranked(labelsValue, "labels");
  if (failed(logits) || failed(labels))
    return failure();
  if (logits->getRank() != 2 || labels->getRank() != 1 ||
      labels->getDimSize(0) != logits->getDimSize(0)) {
    (void)rule.fail("logits must be [N, C] and labels [N], got ", *logits,
                    " and ", *labels);
    return failure();
  }
  if (failed(rule.checkUnitInterval(labelSmoothing, "label_smoothing",
                                    /*closedAbove=*/true)))
    return failure();
  SmallVector<int64_t> shape;
  if (reduction == LossReduction::none)
    shape.push_back(logits->getDimSize(0));
  // 16-bit logits give an f32 loss, as under PyTorch's autocast.
  Type element = logits->getElementType();
  if (element.getIntOrFloatBitWidth() == 16)
    element = Float32Type::get(element.getContext());
  return RankedTensorType::get(shape, element);
}

LogicalResult CrossEntropyOp::inferReturnTypes(MLIRContext *,
                                               std::optional<Location> loc,
                                               Adaptor adaptor,
                                               SmallVectorImpl<Type> &types) {
  auto type = inferCrossEntropyType(
      ShapeRule(loc, getOperationName()), adaptor.getLogits(),
      adaptor.getLabels(), adaptor.getLabelSmoothing().convertToDouble(),
      adaptor.getReduction());
  if (failed(type))
    return failure();
  types.push_back(*type);
  return success();
}

LogicalResult
CrossEntropyGradOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                     Adaptor adaptor,
                                     SmallVectorImpl<Type> &types) {
  ShapeRule rule(loc, getOperationName());
  auto type = inferCrossEntropyType(
      rule, adaptor.getLogits(), adaptor.getLabels(),
      adaptor.getLabelSmoothing().convertToDouble(), adaptor.getReduction());
  if (failed(type))
    return failure();
  if (adaptor.getLossGrad().getType() != *type)
    return rule.fail("loss_grad must have the loss type ", *type, ", got ",
                     adaptor.getLossGrad().getType());
  types.push_back(adaptor.getLogits().getType());
  return success();
}

LogicalResult CrossEntropyWithGradOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  ShapeRule rule(loc, getOperationName());
  auto type = inferCrossEntropyType(
      rule, adaptor.getLogits(), adaptor.getLabels(),
      adaptor.getLabelSmoothing().convertToDouble(), LossReduction::none);
  if (failed(type))
    return failure();
  if (adaptor.getLossGrad().getType() != *type)
    return rule.fail("loss_grad must have the loss type ", *type, ", got ",
                     adaptor.getLossGrad().getType());
  types.append({*type, adaptor.getLogits().getType()});
  return success();
}

LogicalResult DropoutOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  ShapeRule rule(loc, getOperationName());
  if (failed(rule.checkUnitInterval(adaptor.getProbability().convertToDouble(),
                                    "probability", /*closedAbove=*/false)))
    return failure();
  // I64Attr getters return uint64_t: test the signed value.
  int64_t offset = adaptor.getOffset();
  if (offset < 0)
    return rule.fail("offset must be >= 0, got ", offset);
  types.push_back(adaptor.getOperand().getType());
  return success();
}

//===----------------------------------------------------------------------===//
// Optimizer ops
//===----------------------------------------------------------------------===//

LogicalResult SgdUpdateOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  if (failed(ShapeRule(loc, getOperationName())
                 .checkSameType(adaptor.getParam(), adaptor.getGrad(), "param",
                                "grad")))
    return failure();
  types.push_back(adaptor.getParam().getType());
  return success();
}

LogicalResult SgdMomentumUpdateOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  ShapeRule rule(loc, getOperationName());
  if (failed(rule.checkSameType(adaptor.getParam(), adaptor.getGrad(), "param",
                                "grad")) ||
      failed(rule.checkSameType(adaptor.getParam(), adaptor.getMomentumBuffer(),
                                "param", "momentum_buffer")))
    return failure();
  if (!(adaptor.getMomentum().convertToDouble() > 0.0))
    return rule.fail("momentum must be > 0 (use genesis.sgd_update without "
                     "momentum)");
  if (adaptor.getNesterov() && adaptor.getDampening().convertToDouble() != 0.0)
    return rule.fail("nesterov momentum requires zero dampening");
  types.append(2, adaptor.getParam().getType());
  return success();
}

/// Shape rule shared by genesis.adam_update and genesis.adamw_update.
template <typename AdaptorT>
static LogicalResult inferAdamTypes(const ShapeRule &rule, AdaptorT adaptor,
                                    SmallVectorImpl<Type> &types) {
  if (failed(rule.checkSameType(adaptor.getParam(), adaptor.getGrad(), "param",
                                "grad")) ||
      failed(rule.checkSameType(adaptor.getParam(), adaptor.getExpAvg(),
                                "param", "exp_avg")) ||
      failed(rule.checkSameType(adaptor.getParam(), adaptor.getExpAvgSq(),
                                "param", "exp_avg_sq")) ||
      failed(rule.checkUnitInterval(adaptor.getBeta1().convertToDouble(),
                                    "beta1", /*closedAbove=*/false)) ||
      failed(rule.checkUnitInterval(adaptor.getBeta2().convertToDouble(),
                                    "beta2", /*closedAbove=*/false)))
    return failure();
  if (!(adaptor.getEpsilon().convertToDouble() >= 0.0))
    return rule.fail("epsilon must be >= 0");
  types.append(3, adaptor.getParam().getType());
  return success();
}

LogicalResult AdamUpdateOp::inferReturnTypes(MLIRContext *,
                                             std::optional<Location> loc,
                                             Adaptor adaptor,
                                             SmallVectorImpl<Type> &types) {
  return inferAdamTypes(ShapeRule(loc, getOperationName()), adaptor, types);
}

LogicalResult AdamWUpdateOp::inferReturnTypes(MLIRContext *,
                                              std::optional<Location> loc,
                                              Adaptor adaptor,
                                              SmallVectorImpl<Type> &types) {
  return inferAdamTypes(ShapeRule(loc, getOperationName()), adaptor, types);
}

LogicalResult GlobalNormOp::inferReturnTypes(MLIRContext *context,
                                             std::optional<Location> loc,
                                             Adaptor adaptor,
                                             SmallVectorImpl<Type> &types) {
  if (adaptor.getInputs().empty())
    return ShapeRule(loc, getOperationName()).fail("needs at least one input");
  bool wide = llvm::any_of(adaptor.getInputs().getTypes(), [](Type type) {
    return cast<ShapedType>(type).getElementType().isF64();
  });
  types.push_back(RankedTensorType::get(
      {}, wide ? Type(Float64Type::get(context)) : Float32Type::get(context)));
  return success();
}

//===----------------------------------------------------------------------===//
// Structure ops
//===----------------------------------------------------------------------===//

LogicalResult FusionOp::verifyRegions() {
  Block &body = getBody().front();
  if (body.getArgumentTypes() != getInputs().getTypes())
    return emitOpError("body arguments must match the input types");
  auto yield = dyn_cast<YieldOp>(body.getTerminator());
  if (!yield)
    return emitOpError("body must end with genesis.yield");
  if (yield.getValues().getTypes() != getResultTypes())
    return emitOpError("yielded types must match the result types");
  return success();
}

LogicalResult LibraryCallOp::inferReturnTypes(MLIRContext *,
                                              std::optional<Location> loc,
                                              Adaptor adaptor,
                                              SmallVectorImpl<Type> &types) {
  ShapeRule rule(loc, getOperationName());
  auto type =
      inferMatmulType(rule, adaptor.getLhs(), adaptor.getRhs(),
                      adaptor.getTransposeLhs(), adaptor.getTransposeRhs());
  if (failed(type))
    return failure();
  GemmEpilogue epilogue = adaptor.getEpilogue();
  bool wantsBias = epilogue == GemmEpilogue::bias ||
                   epilogue == GemmEpilogue::bias_relu ||
                   epilogue == GemmEpilogue::bias_gelu;
  if (wantsBias != static_cast<bool>(adaptor.getBias()))
    return rule.fail("epilogue '", stringifyGemmEpilogue(epilogue), "' ",
                     wantsBias ? "needs" : "takes no", " bias operand");
  if (wantsBias &&
      failed(rule.checkVector(adaptor.getBias(), type->getShape().back(),
                              type->getElementType(), "bias")))
    return failure();
  bool wantsAux = epilogue == GemmEpilogue::dgelu;
  if (wantsAux != static_cast<bool>(adaptor.getAux()))
    return rule.fail("epilogue '", stringifyGemmEpilogue(epilogue), "' ",
                     wantsAux ? "needs" : "takes no", " aux operand");
  if (wantsAux && type->getRank() != 2)
    return rule.fail("epilogue 'dgelu' takes rank-2 operands (one GEMM)");
  if (wantsAux && adaptor.getAux().getType() != *type)
    return rule.fail("aux operand of type ", adaptor.getAux().getType(),
                     " differs from the result type ", *type);
  types.push_back(*type);
  return success();
}
