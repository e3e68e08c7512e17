//===- Module.cpp - nn::Module, parameters and containers ----------------===//

#include "frontend/nn/Module.h"

#include <map>

namespace genesis::nn {

Tensor Parameter::tensor(Site site) const {
  if (!traced_.defined())
    throw Error(std::string(site.file) + ":" + std::to_string(site.line) +
                ": a parameter of type " + data_.typeString() +
                " is used in a trace it was not bound to (call "
                "Trace::bind(module) first)");
  return traced_;
}

Tensor Module::forward(const Tensor &) {
  throw Error("this module has no single-tensor forward()");
}

void Module::checkName(const std::string &name) const {
  if (name.empty() || name.find('.') != std::string::npos)
    throw Error("module attribute name '" + name +
                "' must be non-empty and contain no '.'");
  auto taken = [&](const auto &list) {
    return std::any_of(list.begin(), list.end(),
                       [&](const auto &entry) { return entry.first == name; });
  };
  if (taken(parameters_) || taken(buffers_) || taken(children_))
    throw Error("module attribute '" + name + "' is registered twice");
}

Parameter &Module::register_parameter(const std::string &name, HostArray data) {
  checkName(name);
  parameters_.emplace_back(name,
                           std::make_unique<Parameter>(std::move(data),
                                                       /*requires_grad=*/true));
  return *parameters_.back().second;
}

Parameter &Module::register_buffer(const std::string &name, HostArray data) {
  checkName(name);
  buffers_.emplace_back(name,
                        std::make_unique<Parameter>(std::move(data),
                                                    /*requires_grad=*/false));
  return *buffers_.back().second;
}

void Module::collect(const std::string &prefix, bool buffers,
                     NamedParameters &out) {
  for (auto &[name, parameter] : buffers ? buffers_ : parameters_)
    out.emplace_back(prefix + name, parameter.get());
  for (auto &[name, child] : children_)
    child->collect(prefix + name + ".", buffers, out);
}

Module::NamedParameters Module::named_parameters() {
  NamedParameters out;
  collect("", /*buffers=*/false, out);
  return out;
}

Module::NamedParameters Module::named_buffers() {
  NamedParameters out;
  collect("", /*buffers=*/true, out);
  return out;
}

std::vector<std::pair<std::string, Module *>> Module::named_modules() {
  std::vector<std::pair<std::string, Module *>> out = {{"", this}};
  for (auto &[name, child] : children_)
    for (auto &[childName, module] : child->named_modules())
      out.emplace_back(childName.empty() ? name : name + "." + childName,
                       module);
  return out;
}

int64_t Module::num_parameters() {
  int64_t count = 0;
  for (auto &[name, parameter] : named_parameters())
    count += parameter->data().numel();
  return count;
}

NamedArrays Module::state_dict() {
  // PyTorch order: each module's parameters then its buffers, pre-order.
  NamedArrays state;
  for (auto &[prefix, module] : named_modules()) {
    std::string dotted = prefix.empty() ? "" : prefix + ".";
    for (auto &[name, parameter] : module->parameters_)
      state.emplace_back(dotted + name, parameter->data());
    for (auto &[name, buffer] : module->buffers_)
      state.emplace_back(dotted + name, buffer->data());
  }
  return state;
}

void Module::load_state_dict(const NamedArrays &state, bool strict) {
  std::map<std::string, Parameter *> targets;
  for (auto &[name, parameter] : named_parameters())
    targets[name] = parameter;
  for (auto &[name, buffer] : named_buffers())
    targets[name] = buffer;
  std::map<std::string, const HostArray *> given;
  for (const auto &[name, array] : state) {
    if (!given.emplace(name, &array).second)
      throw Error("load_state_dict: key '" + name + "' appears twice");
    auto it = targets.find(name);
    if (it == targets.end()) {
      if (strict)
        throw Error("load_state_dict: unexpected key '" + name + "'");
      continue;
    }
    if (!array.sameTypeAs(it->second->data()))
      throw Error("load_state_dict: '" + name + "' has type " +
                  array.typeString() + ", the module expects " +
                  it->second->data().typeString());
  }
  if (strict)
    for (const auto &[name, target] : targets)
      if (!given.count(name))
        throw Error("load_state_dict: missing key '" + name + "'");
  for (const auto &[name, array] : given)
    if (auto it = targets.find(name); it != targets.end())
      it->second->data() = *array;
}

void Module::to(DType dtype) {
  // As torch's module.to: only floating-point types.
  if (!isFloatDType(dtype))
    throw Error(std::string("Module::to: ") + dtypeName(dtype) +
                " is not a floating-point type; parameters convert only to "
                "f32, f64, bf16 or f16");
  auto convert = [dtype](Parameter *parameter) {
    HostArray &data = parameter->data();
    if (!isFloatDType(data.dtype()) || data.dtype() == dtype)
      return;
    data = data.toFloatType(dtype);
  };
  for (auto &[name, parameter] : named_parameters())
    convert(parameter);
  for (auto &[name, buffer] : named_buffers())
    convert(buffer);
}

void Module::train(bool mode) {
  for (auto &[name, module] : named_modules())
    module->training_ = mode;
}

Sequential::Sequential(std::initializer_list<std::shared_ptr<Module>> modules) {
  for (const auto &module : modules)
    push_back(module);
}

void Sequential::push_back(std::shared_ptr<Module> module) {
  layers_.push_back(
      register_module(std::to_string(layers_.size()), std::move(module)));
}

Tensor Sequential::forward(const Tensor &x) {
  Tensor y = x;
  for (auto &layer : layers_)
    y = layer->forward(y);
  return y;
}

} // namespace genesis::nn
