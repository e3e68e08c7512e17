//===- GenesisDialect.cpp - Genesis dialect registration -----------------===//

#include "dialect/IR/GenesisDialect.h"
#include "dialect/IR/GenesisOps.h"

using namespace mlir;
using namespace genesis;

#include "dialect/IR/GenesisDialect.cpp.inc"
#include "dialect/IR/GenesisEnums.cpp.inc"
#include "dialect/IR/GenesisInterfaces.cpp.inc"

void GenesisDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialect/IR/GenesisOps.cpp.inc"
      >();
}

Operation *GenesisDialect::materializeConstant(OpBuilder &builder,
                                               Attribute value, Type type,
                                               Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return ConstantOp::create(builder, loc, elements);
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
