//===- Optim.cpp - Optimizers, schedules and the compiled train step ------===//

#include "frontend/Optim.h"
#include "dialect/Evaluator/Evaluator.h"
#include "dialect/Utils/DiagnosticCapture.h"
#include "passes/Passes.h"

#include <cmath>

using namespace mlir;

namespace genesis::optim {

namespace {
GenesisTrainStepOptions passOptions(const Optimizer &optimizer,
                                    const TrainStepOptions &options,
                                    double &lr) {
  GenesisTrainStepOptions result;
  result.noDecay.assign(options.no_decay.begin(), options.no_decay.end());
  result.clipGradNorm = options.clip_grad_norm;
  result.clipGradValue = options.clip_grad_value;
  result.accumulation = options.accumulation;
  result.lossScale = options.loss_scale;
  result.initScale = options.init_scale;
  result.growthInterval = options.growth_interval;
  if (auto *sgd = std::get_if<SGD>(&optimizer)) {
    result.optimizer = "sgd";
    result.momentum = sgd->momentum;
    result.dampening = sgd->dampening;
    result.nesterov = sgd->nesterov;
    result.weightDecay = sgd->weight_decay;
    lr = sgd->lr;
    return result;
  }
  auto adamLike = [&](const auto &adam, const char *name) {
    result.optimizer = name;
    result.beta1 = adam.beta1;
    result.beta2 = adam.beta2;
    result.epsilon = adam.eps;
    result.weightDecay = adam.weight_decay;
    lr = adam.lr;
  };
  if (auto *adam = std::get_if<Adam>(&optimizer))
    adamLike(*adam, "adam");
  else
    adamLike(std::get<AdamW>(optimizer), "adamw");
  return result;
}

std::string role(func::FuncOp function, unsigned i) {
  return function.getArgAttrOfType<StringAttr>(i, "genesis.role").str();
}
std::string name(func::FuncOp function, unsigned i) {
  return function.getArgAttrOfType<StringAttr>(i, "genesis.name").str();
}
} // namespace

TrainStep
compile_train_step(nn::Module &model, const LossFn &loss,
                   const Optimizer &optimizer,
                   const std::map<std::string, HostArray> &example_batch,
                   const TrainStepOptions &options) {
  TrainStep result;
  result.trace_ = std::make_unique<Trace>("loss");
  Trace &trace = *result.trace_;
  trace.bind(model);
  std::map<std::string, Tensor> batch;
  for (const auto &[name, array] : example_batch) {
    batch.emplace(name, trace.input(name, array.dtype(), array.shape()));
    result.batchNames_.push_back(name);
  }
  trace.output("loss", loss(batch));
  func::FuncOp forward = trace.finish();

  GenesisTrainStepOptions passOptionValues =
      passOptions(optimizer, options, result.defaultLr_);
  DiagnosticCapture capture(&trace.context());
  FailureOr<func::FuncOp> step = buildTrainStep(forward, passOptionValues);
  if (failed(step))
    throw Error(capture.firstError("compile_train_step: building the train "
                                   "step failed"));
  result.function_ = *step;
  for (auto &[name, parameter] : model.named_parameters())
    result.parameters_.push_back(parameter);
  for (unsigned i = 0; i < step->getNumArguments(); ++i)
    if (role(*step, i) == "optimizer_state") {
      auto type = cast<RankedTensorType>(step->getArgumentTypes()[i]);
      result.state_.emplace_back(
          name(*step, i),
          HostArray(dtypeOf(type.getElementType()),
                    std::vector<int64_t>(type.getShape().begin(),
                                         type.getShape().end())));
    }
  for (auto &[name, buffer] : model.named_buffers())
    result.buffers_[name] = buffer;
  return result;
}

double TrainStep::step(const std::map<std::string, HostArray> &batch,
                       double lr) {
  std::vector<HostArray> arguments;
  size_t parameter = 0, state = 0;
  for (unsigned i = 0; i < function_.getNumArguments(); ++i) {
    std::string kind = role(function_, i), argName = name(function_, i);
    if (kind == "parameter") {
      arguments.push_back(parameters_[parameter++]->data());
    } else if (kind == "optimizer_state") {
      arguments.push_back(state_[state++].second);
    } else if (kind == "buffer") {
      arguments.push_back(buffers_.at(argName)->data());
    } else if (kind == "rng_seed") {
      arguments.push_back(
          HostArray::fromValues<int64_t>(DType::I64, {}, {steps_}));
    } else if (kind == "lr") {
      arguments.push_back(HostArray::fromValues<double>(
          DType::F32, {}, {lr < 0 ? defaultLr_ : lr}));
    } else if (kind == "step") {
      arguments.push_back(
          HostArray::fromValues<int64_t>(DType::I64, {}, {steps_ + 1}));
    } else {
      auto it = batch.find(argName);
      if (it == batch.end())
        throw Error("TrainStep::step: the batch has no input '" + argName +
                    "'");
      arguments.push_back(it->second);
    }
  }
  std::vector<HostArray> results = evaluate(function_, arguments);
  for (size_t p = 0; p < parameters_.size(); ++p)
    parameters_[p]->data() = std::move(results[1 + p]);
  for (size_t s = 0; s < state_.size(); ++s)
    state_[s].second = std::move(results[1 + parameters_.size() + s]);
  ++steps_;
  return results[0].getDouble(0);
}

NamedArrays TrainStep::state_dict() const {
  NamedArrays state = state_;
  state.emplace_back("step",
                     HostArray::fromValues<int64_t>(DType::I64, {}, {steps_}));
  return state;
}

void TrainStep::load_state_dict(const NamedArrays &state) {
  if (state.size() != state_.size() + 1)
    throw Error("optimizer load_state_dict: expected " +
                std::to_string(state_.size() + 1) + " entries, got " +
                std::to_string(state.size()));
  for (size_t i = 0; i < state_.size(); ++i)
    if (state[i].first != state_[i].first ||
        !state[i].second.sameTypeAs(state_[i].second))
      throw Error("optimizer load_state_dict: entry " + std::to_string(i) +
                  " is '" + state[i].first + "' " +
                  state[i].second.typeString() + ", expected '" +
                  state_[i].first + "' " + state_[i].second.typeString());
  if (state.back().first != "step" ||
      state.back().second.dtype() != DType::I64 ||
      state.back().second.numel() != 1)
    throw Error("optimizer load_state_dict: the last entry must be the i64 "
                "'step'");
  for (size_t i = 0; i < state_.size(); ++i)
    state_[i].second = state[i].second;
  steps_ = state.back().second.getInt(0);
}

} // namespace genesis::optim
