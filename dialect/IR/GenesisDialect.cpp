//===- GenesisDialect.cpp - Genesis dialect registration -----------------===//

#include "dialect/IR/GenesisDialect.h"
#include "dialect/IR/GenesisOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace genesis;

#include "dialect/IR/GenesisDialect.cpp.inc"
#include "dialect/IR/GenesisEnums.cpp.inc"
#include "dialect/IR/GenesisInterfaces.cpp.inc"
#define GET_ATTRDEF_CLASSES
#include "dialect/IR/GenesisAttrs.cpp.inc"

void GenesisDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialect/IR/GenesisOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialect/IR/GenesisAttrs.cpp.inc"
      >();
}

LogicalResult LaunchAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 ArrayRef<int64_t> grid,
                                 ArrayRef<int64_t> block, int64_t shared) {
  if (grid.size() != 3 || block.size() != 3)
    return emitError() << "#genesis.launch needs 3 grid and 3 block sizes "
                          "(x, y, z), got "
                       << grid.size() << " and " << block.size();
  for (int64_t size : llvm::concat<const int64_t>(grid, block))
    if (size < 1)
      return emitError() << "#genesis.launch sizes must be at least 1, got "
                         << size;
  if (grid[0] > INT32_MAX || grid[1] > 65535 || grid[2] > 65535)
    return emitError() << "#genesis.launch grid [" << grid[0] << ", " << grid[1]
                       << ", " << grid[2]
                       << "] exceeds CUDA's [2^31 - 1, 65535, 65535]";
  if (block[0] > 1024 || block[1] > 1024 || block[2] > 64 ||
      block[0] * block[1] * block[2] > 1024)
    return emitError() << "#genesis.launch block [" << block[0] << ", "
                       << block[1] << ", " << block[2]
                       << "] exceeds CUDA's 1024 threads ([1024, 1024, 64])";
  if (shared < 0 || shared > 227 * 1024)
    return emitError() << "#genesis.launch shared memory " << shared
                       << " B is outside [0, 227 KiB]";
  return success();
}

Operation *GenesisDialect::materializeConstant(OpBuilder &builder,
                                               Attribute value, Type type,
                                               Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return ConstantOp::create(builder, loc, elements);
}

namespace {

/// The roles a function argument may play (plans bind each by its role).
constexpr llvm::StringLiteral kArgumentRoles[] = {
    "parameter", "optimizer_state", "input",   "lr",
    "step",      "buffer",          "rng_seed"};

/// genesis.name: a non-empty string, unique among the function's arguments
/// (or among its results), because plans and the evaluator bind arguments
/// and results by name. genesis.role (arguments only): one of
/// kArgumentRoles.
LogicalResult verifyNameOrRole(Operation *op, unsigned index,
                               NamedAttribute attribute, bool isResult) {
  auto function = dyn_cast<FunctionOpInterface>(op);
  StringRef attrName = attribute.getName().getValue();
  const char *what = isResult ? "result" : "argument";
  if (attrName == "genesis.name") {
    auto name = dyn_cast<StringAttr>(attribute.getValue());
    if (!name || name.getValue().empty())
      return op->emitOpError() << what << " #" << index
                               << ": genesis.name must be a non-empty string";
    if (!function)
      return success();
    unsigned count =
        isResult ? function.getNumResults() : function.getNumArguments();
    for (unsigned other = 0; other < index && other < count; ++other) {
      auto otherName =
          isResult
              ? function.getResultAttrOfType<StringAttr>(other, "genesis.name")
              : function.getArgAttrOfType<StringAttr>(other, "genesis.name");
      if (otherName == name)
        return op->emitOpError()
               << what << "s #" << other << " and #" << index
               << " have the same genesis.name '" << name.getValue()
               << "'; names bind values and must be unique (in @"
               << SymbolTable::getSymbolName(op).getValue() << ")";
    }
    return success();
  }
  if (attrName == "genesis.role") {
    auto role = dyn_cast<StringAttr>(attribute.getValue());
    if (isResult)
      return op->emitOpError()
             << "result #" << index << ": genesis.role is for arguments";
    if (!role || !llvm::is_contained(kArgumentRoles, role.getValue())) {
      std::string roles;
      for (StringRef known : kArgumentRoles)
        roles += (roles.empty() ? "" : ", ") + known.str();
      return op->emitOpError()
             << "argument #" << index << ": genesis.role "
             << attribute.getValue() << " is not one of " << roles;
    }
  }
  return success();
}

} // namespace

LogicalResult GenesisDialect::verifyOperationAttribute(Operation *op,
                                                       NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  // On an op, the kernel it runs as; on a function, the mark of a kernel.
  bool kernelMark =
      isa<FunctionOpInterface>(op) && isa<UnitAttr>(attr.getValue());
  if (name == kKernelAttrName && !kernelMark &&
      !isa<FlatSymbolRefAttr>(attr.getValue()))
    return op->emitOpError()
           << kKernelAttrName << " must name a kernel symbol (@name), got "
           << attr.getValue();
  if (name == kLaunchAttrName && !isa<LaunchAttr>(attr.getValue()))
    return op->emitOpError()
           << kLaunchAttrName << " must be a #genesis.launch, got "
           << attr.getValue();
  return success();
}

LogicalResult GenesisDialect::verifyRegionArgAttribute(Operation *op, unsigned,
                                                       unsigned argIndex,
                                                       NamedAttribute attr) {
  return verifyNameOrRole(op, argIndex, attr, /*isResult=*/false);
}

LogicalResult GenesisDialect::verifyRegionResultAttribute(Operation *op,
                                                          unsigned,
                                                          unsigned resultIndex,
                                                          NamedAttribute attr) {
  return verifyNameOrRole(op, resultIndex, attr, /*isResult=*/true);
}

std::string genesis::describeLocation(Location loc) {
  std::string text = "<unknown location>";
  loc->walk([&](Location inner) {
    if (auto file = dyn_cast<FileLineColLoc>(inner)) {
      text = (file.getFilename().strref() + ":" + Twine(file.getLine())).str();
      if (file.getColumn() != 0)
        text += ":" + std::to_string(file.getColumn());
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return text;
}
