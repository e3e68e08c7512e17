//===- LrSchedule.cpp - Learning-rate schedules ---------------------------===//

#include "runtime/support/LrSchedule.h"
#include "runtime/support/Error.h"

#include <algorithm>
#include <cmath>

namespace genesis::optim {

Schedule lambda_lr(double base_lr, std::function<double(int64_t)> factor) {
  return [=](int64_t step) { return base_lr * factor(step); };
}

Schedule step_lr(double base_lr, int64_t step_size, double gamma) {
  if (step_size < 1)
    throw Error("step_lr: step_size must be >= 1");
  return [=](int64_t step) {
    return base_lr * std::pow(gamma, static_cast<double>(step / step_size));
  };
}

Schedule exponential_lr(double base_lr, double gamma) {
  return [=](int64_t step) {
    return base_lr * std::pow(gamma, static_cast<double>(step));
  };
}

Schedule cosine_annealing_lr(double base_lr, int64_t t_max, double eta_min) {
  if (t_max < 1)
    throw Error("cosine_annealing_lr: T_max must be >= 1");
  return [=](int64_t step) {
    return eta_min + (base_lr - eta_min) *
                         (1 + std::cos(M_PI * static_cast<double>(step) /
                                       static_cast<double>(t_max))) /
                         2;
  };
}

Schedule warmup_cosine_lr(double base_lr, int64_t warmup, int64_t total,
                          double min_lr) {
  if (warmup < 0 || total <= warmup)
    throw Error("warmup_cosine_lr: need 0 <= warmup < total");
  return [=](int64_t step) {
    if (step < warmup)
      return base_lr * static_cast<double>(step + 1) /
             static_cast<double>(warmup);
    double progress = std::min(1.0, static_cast<double>(step - warmup) /
                                        static_cast<double>(total - warmup));
    return min_lr + (base_lr - min_lr) * (1 + std::cos(M_PI * progress)) / 2;
  };
}

} // namespace genesis::optim
