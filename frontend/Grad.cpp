//===- Grad.cpp - Differentiating traces ----------------------------------===//

#include "frontend/Grad.h"
#include "dialect/Evaluator/Evaluator.h"
#include "dialect/Utils/DiagnosticCapture.h"
#include "passes/Passes.h"

#include <map>
#include <memory>

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

namespace {
/// One traced and differentiated instance of a function per signature.
struct Compiled {
  std::unique_ptr<Trace> trace;
  func::FuncOp gradient;
};
} // namespace

std::function<std::pair<HostArray, std::vector<HostArray>>(
    const std::vector<HostArray> &)>
value_and_grad(TracedFunction f, std::vector<int> argnums) {
  auto cache = std::make_shared<std::map<std::string, Compiled>>();
  return [f = std::move(f), argnums = std::move(argnums),
          cache](const std::vector<HostArray> &arguments) {
    std::string signature;
    for (const HostArray &argument : arguments)
      signature += argument.typeString() + ";";
    auto it = cache->find(signature);
    if (it == cache->end()) {
      Compiled compiled{std::make_unique<Trace>("f"), {}};
      std::vector<Tensor> tensors;
      for (size_t i = 0; i < arguments.size(); ++i)
        tensors.push_back(compiled.trace->input("arg" + std::to_string(i),
                                                arguments[i].dtype(),
                                                arguments[i].shape()));
      std::vector<std::string> wrt;
      for (int n : argnums) {
        if (n < 0 || static_cast<size_t>(n) >= arguments.size())
          throw Error("value_and_grad: argnum " + std::to_string(n) +
                      " is out of range for " +
                      std::to_string(arguments.size()) + " arguments");
        wrt.push_back("arg" + std::to_string(n));
      }
      compiled.trace->output("value", f(tensors));
      compiled.gradient = value_and_grad(*compiled.trace, wrt);
      it = cache->emplace(signature, std::move(compiled)).first;
    }
    std::vector<HostArray> results = evaluate(it->second.gradient, arguments);
    HostArray value = std::move(results.front());
    results.erase(results.begin());
    return std::make_pair(std::move(value), std::move(results));
  };
}

std::function<std::vector<HostArray>(const std::vector<HostArray> &)>
grad(TracedFunction f, std::vector<int> argnums) {
  auto both = value_and_grad(std::move(f), std::move(argnums));
  return [both](const std::vector<HostArray> &arguments) {
    return both(arguments).second;
  };
}

} // namespace genesis
