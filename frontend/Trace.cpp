//===- Trace.cpp - Recording a model function as genesis IR ---------------===//

#include "frontend/Trace.h"
#include "dialect/Evaluator/Evaluator.h"
#include "dialect/IR/GenesisDialect.h"
#include "dialect/Utils/DiagnosticCapture.h"
#include "frontend/nn/Module.h"

#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"

using namespace mlir;

namespace genesis {

std::shared_ptr<Trace::Shared> Trace::newModule() {
  auto shared = std::make_shared<Trace::Shared>();
  shared->context = std::make_unique<MLIRContext>();
  shared->context->loadDialect<GenesisDialect, func::FuncDialect>();
  shared->module = ModuleOp::create(UnknownLoc::get(shared->context.get()));
  return shared;
}

Trace::Trace(const std::string &functionName)
    : Trace(functionName, newModule()) {}

Trace::Trace(const std::string &functionName, Trace &other)
    : Trace(functionName, other.shared_) {}

Trace::Trace(const std::string &functionName, std::shared_ptr<Shared> shared)
    : shared_(std::move(shared)), builder_(shared_->context.get()) {
  ModuleOp module = shared_->module.get();
  if (module.lookupSymbol(functionName))
    throw Error("the traced module already has a function @" + functionName);
  builder_.setInsertionPointToEnd(module.getBody());
  function_ =
      func::FuncOp::create(builder_, UnknownLoc::get(&context()), functionName,
                           builder_.getFunctionType({}, {}));
  builder_.setInsertionPointToEnd(function_.addEntryBlock());
}

Trace::~Trace() = default;

Location Trace::location(Site site) {
  return FileLineColLoc::get(&context(), site.file, site.line, 0);
}

void Trace::fail(Site site, const std::string &message) {
  throw Error(describeLocation(location(site)) + ": " + message);
}

void Trace::checkOpen(Site site) const {
  if (finished_)
    throw Error(std::string(site.file) + ":" + std::to_string(site.line) +
                ": the trace of @" +
                func::FuncOp(function_).getSymName().str() +
                " is finished; no more ops can be added");
}

Operation *Trace::insert(OperationState &state) {
  DiagnosticCapture capture(&context());
  Operation *op = builder_.create(state);
  auto invalid = [&](const char *what) {
    std::string message =
        capture.firstError(describeLocation(op->getLoc()) + ": '" +
                           op->getName().getStringRef().str() + "' op " + what);
    op->erase();
    throw Error(message);
  };
  if (auto inference = dyn_cast<InferTypeOpInterface>(op)) {
    SmallVector<Type> types;
    if (failed(inference.inferReturnTypes(
            &context(), op->getLoc(), op->getOperands(),
            op->getRawDictionaryAttrs(), op->getPropertiesStorage(),
            op->getRegions(), types)))
      invalid("has operands of invalid types");
    for (auto [result, type] : llvm::zip(op->getResults(), types))
      result.setType(type);
  }
  if (failed(verify(op)))
    invalid("is invalid");
  return op;
}

BlockArgument Trace::addArgument(const std::string &name,
                                 const std::string &role, Type type,
                                 Site site) {
  checkOpen(site);
  for (unsigned i = 0; i < function_.getNumArguments(); ++i)
    if (auto existing =
            function_.getArgAttrOfType<StringAttr>(i, "genesis.name");
        existing && existing.getValue() == name)
      fail(site, "@" + function_.getSymName().str() +
                     " already has an argument named '" + name + "'");
  unsigned index = function_.getNumArguments();
  DictionaryAttr attributes = builder_.getDictionaryAttr(
      {builder_.getNamedAttr("genesis.name", builder_.getStringAttr(name)),
       builder_.getNamedAttr("genesis.role", builder_.getStringAttr(role))});
  if (failed(function_.insertArgument(index, type, attributes, location(site))))
    fail(site, "cannot add argument '" + name + "'");
  bound_.push_back(nullptr);
  return function_.getArgument(index);
}

Tensor Trace::input(const std::string &name, DType dtype, const Shape &shape,
                    Site site) {
  for (int64_t size : shape)
    if (size < 0)
      fail(site, "input '" + name + "' has a negative dimension");
  auto type = RankedTensorType::get(shape, elementTypeOf(&context(), dtype));
  return Tensor(addArgument(name, "input", type, site), this);
}

void Trace::bind(nn::Module &module, const std::string &prefix, Site site) {
  bindModule(module, std::nullopt, prefix, site);
}

void Trace::bind_cast(nn::Module &module, DType compute,
                      const std::string &prefix, Site site) {
  bindModule(module, compute, prefix, site);
}

void Trace::bindModule(nn::Module &module, std::optional<DType> compute,
                       const std::string &prefix, Site site) {
  auto bindAll = [&](const nn::Module::NamedParameters &named,
                     const char *role) {
    for (auto &[name, parameter] : named) {
      const HostArray &data = parameter->data();
      auto type = RankedTensorType::get(
          data.shape(), elementTypeOf(&context(), data.dtype()));
      BlockArgument argument = addArgument(prefix + name, role, type, site);
      bound_.back() = &data;
      Tensor traced(argument, this);
      if (compute && isFloatDType(data.dtype()) && data.dtype() != *compute)
        traced = traced.to(*compute, site);
      parameter->bind(traced, prefix + name);
    }
  };
  bindAll(module.named_parameters(), "parameter");
  bindAll(module.named_buffers(), "buffer");
}

Tensor Trace::rng_seed() {
  if (!seed_)
    seed_ = Tensor(addArgument("rng_seed", "rng_seed",
                               RankedTensorType::get({}, builder_.getI64Type()),
                               Site::current()),
                   this);
  return *seed_;
}

int64_t Trace::reserve_rng_offsets(int64_t count) {
  int64_t first = nextRngOffset_;
  nextRngOffset_ += count;
  return first;
}

void Trace::output(const std::string &name, const Tensor &value, Site site) {
  checkOpen(site);
  if (&value.trace() != this)
    fail(site, "output '" + name + "' belongs to another trace");
  outputs_.push_back(value.value());
  outputNames_.push_back(name);
}

func::FuncOp Trace::finish() {
  if (finished_)
    return function_;
  finished_ = true;
  func::ReturnOp::create(builder_, function_.getLoc(), outputs_);
  Block &entry = function_.getBody().front();
  function_.setFunctionType(builder_.getFunctionType(
      entry.getArgumentTypes(), ValueRange(outputs_).getTypes()));
  for (auto [i, name] : llvm::enumerate(outputNames_))
    function_.setResultAttr(i, "genesis.name", builder_.getStringAttr(name));
  DiagnosticCapture capture(&context());
  // The function alone: another trace may still be recording into the
  // module.
  if (failed(verify(function_)))
    throw Error(capture.firstError("the traced function failed to verify"));
  return function_;
}

std::string Trace::str() {
  finish();
  std::string text;
  llvm::raw_string_ostream os(text);
  module().print(os);
  return text;
}

std::vector<HostArray>
Trace::arguments(const std::map<std::string, HostArray> &inputs) const {
  func::FuncOp function = function_;
  std::vector<HostArray> arguments;
  for (unsigned i = 0; i < bound_.size(); ++i) {
    if (bound_[i]) {
      arguments.push_back(*bound_[i]);
      continue;
    }
    std::string name =
        function.getArgAttrOfType<StringAttr>(i, "genesis.name").str();
    auto it = inputs.find(name);
    if (it == inputs.end())
      throw Error("@" + function.getSymName().str() + " needs input '" + name +
                  "'");
    arguments.push_back(it->second);
  }
  return arguments;
}

} // namespace genesis
