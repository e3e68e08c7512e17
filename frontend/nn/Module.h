//===- Module.h - nn::Module, parameters and containers ---------*- C++ -*-===//
//
// PyTorch's module model in C++: a Module owns named parameters and buffers
// (host arrays with their values) and named child modules; names compose with
// dots exactly as torch does, so state_dict keys match PyTorch and Hugging
// Face checkpoints ("layers.0.self_attn.q_proj.weight"). Binding a module to
// a Trace turns each parameter into a function argument; inside forward(), a
// Parameter converts to the Tensor of that argument.
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_FRONTEND_NN_MODULE_H
#define GENESIS_FRONTEND_NN_MODULE_H

#include "frontend/Tensor.h"
#include "runtime/formats/ArrayIO.h"
#include "runtime/support/HostArray.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace genesis::nn {

class Parameter {
public:
  Parameter(HostArray data, bool requires_grad)
      : data_(std::move(data)), requiresGrad_(requires_grad) {}

  HostArray &data() { return data_; }
  const HostArray &data() const { return data_; }
  bool requires_grad() const { return requiresGrad_; }

  /// The argument this parameter was bound to by the most recent
  /// Trace::bind; throws if it was never bound.
  Tensor tensor(Site site = Site::current()) const;
  operator Tensor() const { return tensor(); }

  /// Set by Trace::bind.
  void bind(Tensor traced, std::string name) {
    traced_ = traced;
    name_ = std::move(name);
  }

private:
  HostArray data_;
  bool requiresGrad_;
  Tensor traced_;
  std::string name_;
};

class Module {
public:
  Module() = default;
  virtual ~Module() = default;
  Module(const Module &) = delete;
  Module &operator=(const Module &) = delete;

  /// The single-tensor forward of layers and Sequential.
  virtual Tensor forward(const Tensor &x);
  Tensor operator()(const Tensor &x) { return forward(x); }

  using NamedParameters = std::vector<std::pair<std::string, Parameter *>>;
  /// Own parameters in registration order, then each child's, recursively.
  NamedParameters named_parameters();
  NamedParameters named_buffers();
  /// Pre-order, this module first under the name "".
  std::vector<std::pair<std::string, Module *>> named_modules();
  int64_t num_parameters();

  /// Copies of the parameters and buffers, keyed as PyTorch keys them.
  NamedArrays state_dict();
  /// Copies values in by key after checking every key, dtype and shape;
  /// with `strict`, missing or unexpected keys are errors. Nothing changes
  /// if any check fails.
  void load_state_dict(const NamedArrays &state, bool strict = true);

  /// Converts every floating-point parameter and buffer to `dtype`
  /// (torch's module.to(dtype); e.g. F64 for gradient checks).
  void to(DType dtype);

  void train(bool mode = true);
  void eval() { train(false); }
  bool is_training() const { return training_; }

protected:
  Parameter &register_parameter(const std::string &name, HostArray data);
  Parameter &register_buffer(const std::string &name, HostArray data);
  template <typename M>
  std::shared_ptr<M> register_module(const std::string &name,
                                     std::shared_ptr<M> module) {
    checkName(name);
    children_.emplace_back(name, module);
    return module;
  }

private:
  void checkName(const std::string &name) const;
  void collect(const std::string &prefix, bool buffers, NamedParameters &out);

  std::vector<std::pair<std::string, std::unique_ptr<Parameter>>> parameters_;
  std::vector<std::pair<std::string, std::unique_ptr<Parameter>>> buffers_;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
  bool training_ = true;
};

/// Applies its children in order (names "0", "1", ...).
class Sequential : public Module {
public:
  Sequential(std::initializer_list<std::shared_ptr<Module>> modules);
  void push_back(std::shared_ptr<Module> module);
  Tensor forward(const Tensor &x) override;
  size_t size() const { return layers_.size(); }

private:
  std::vector<std::shared_ptr<Module>> layers_;
};

/// An indexable list of modules (names "0", "1", ...); no forward of its own.
template <typename M = Module> class ModuleList : public Module {
public:
  void push_back(std::shared_ptr<M> module) {
    items_.push_back(
        register_module(std::to_string(items_.size()), std::move(module)));
  }
  M &operator[](size_t i) { return *items_.at(i); }
  size_t size() const { return items_.size(); }
  auto begin() { return items_.begin(); }
  auto end() { return items_.end(); }

private:
  std::vector<std::shared_ptr<M>> items_;
};

} // namespace genesis::nn

#endif // GENESIS_FRONTEND_NN_MODULE_H
