//===- Grad.cpp - Differentiating traces -----------------------------------===//

#include "frontend/Grad.h"
#include "dialect/Utils/DiagnosticCapture.h"
#include "passes/Passes.h"

using namespace mlir;

namespace genesis {

func::FuncOp value_and_grad(Trace &trace, const std::vector<std::string> &wrt) {
  func::FuncOp forward = trace.finish();
  SmallVector<unsigned> chosen;
  for (const std::string &name : wrt) {
    std::optional<unsigned> found;
    for (unsigned i = 0; i < forward.getNumArguments(); ++i)
      if (auto attr = forward.getArgAttrOfType<StringAttr>(i, "genesis.name");
          attr && attr.getValue() == name)
        found = i;
    if (!found)
      throw Error("value_and_grad: @" + forward.getSymName().str() +
                  " has no argument named '" + name + "'");
    chosen.push_back(*found);
  }
  if (wrt.empty())
    for (unsigned i = 0; i < forward.getNumArguments(); ++i)
      if (auto role = forward.getArgAttrOfType<StringAttr>(i, "genesis.role");
          role && role.getValue() == "parameter")
        chosen.push_back(i);
  DiagnosticCapture capture(forward.getContext());
  FailureOr<func::FuncOp> gradient = differentiate(forward, chosen);
  if (failed(gradient))
    throw Error(capture.firstError("value_and_grad: differentiation of @" +
                                   forward.getSymName().str() + " failed"));
  return *gradient;
}

} // namespace genesis
