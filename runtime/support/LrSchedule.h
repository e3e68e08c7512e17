//===- LrSchedule.h - Learning-rate schedules -------------------*- C++ -*-===//
//
// The learning rate is a session-bound tensor (role lr) that the host sets
// before each step, so the schedules live with the runtime: a program that
// only runs plans (no compiler) schedules its training as the frontend does.
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_RUNTIME_LRSCHEDULE_H
#define GENESIS_RUNTIME_LRSCHEDULE_H

#include <cstdint>
#include <functional>

namespace genesis::optim {

/// A learning rate as a function of the 0-based count of steps taken, as
/// torch's schedulers see it (`last_epoch`).
using Schedule = std::function<double(int64_t step)>;

/// torch.optim.lr_scheduler.LambdaLR: base_lr * factor(step).
Schedule lambda_lr(double base_lr, std::function<double(int64_t)> factor);
/// StepLR: base_lr * gamma^(step / step_size).
Schedule step_lr(double base_lr, int64_t step_size, double gamma = 0.1);
/// ExponentialLR: base_lr * gamma^step.
Schedule exponential_lr(double base_lr, double gamma);
/// CosineAnnealingLR: eta_min + (base_lr - eta_min)(1 + cos(pi step/T_max))/2.
Schedule cosine_annealing_lr(double base_lr, int64_t t_max,
                             double eta_min = 0.0);
/// Linear warmup from 0 over `warmup` steps, then cosine decay to `min_lr`
/// at `total` steps (the GPT/LLaMA recipe).
Schedule warmup_cosine_lr(double base_lr, int64_t warmup, int64_t total,
                          double min_lr = 0.0);

} // namespace genesis::optim

#endif // GENESIS_RUNTIME_LRSCHEDULE_H
