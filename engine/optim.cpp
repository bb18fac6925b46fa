#include "engine/optim.h"

#include <cmath>

#include "engine/backend.h"
#include "engine/checks.h"

namespace engine {

Optimizer::Optimizer(std::vector<Parameter*> params, float lr)
    : params_(std::move(params)), lr_(lr) {
  for (Parameter* p : params_)
    if (p == nullptr) throw Error("optimizer: a null parameter");
}

namespace {

void require_parameters(Context& ctx, const std::vector<Parameter*>& params, const char* who) {
  for (Parameter* p : params) {
    detail::require_on(ctx, p->value, std::string(who) + ": parameter " + p->name);
    detail::require_on(ctx, p->grad, std::string(who) + ": gradient of " + p->name);
    detail::require_shape(p->grad, p->value.rows(), p->value.cols(),
                          std::string(who) + ": gradient of " + p->name);
  }
}

}  // namespace

Sgd::Sgd(Context& ctx, std::vector<Parameter*> params, SgdOptions options)
    : Optimizer(std::move(params), options.lr), options_(options) {
  if (!(options.lr >= 0.0f) || !(options.momentum >= 0.0f) || !(options.weight_decay >= 0.0f))
    throw Error("sgd: lr, momentum and weight_decay must be >= 0");
  require_parameters(ctx, params_, "sgd");
  if (options.momentum > 0.0f)
    for (Parameter* p : params_)
      velocity_.emplace_back(ctx.device(), p->value.rows(), p->value.cols());
}

void Sgd::step(Context& ctx) {
  for (size_t i = 0; i < params_.size(); ++i) {
    Parameter& p = *params_[i];
    float* v = velocity_.empty() ? nullptr : velocity_[i].data();
    if (ctx.is_cuda())
      cuda::sgd_step(p.value.data(), p.grad.data(), v, p.value.size(), lr_, options_.momentum,
                     options_.weight_decay, ctx.stream());
    else
      host::sgd_step(p.value.data(), p.grad.data(), v, p.value.size(), lr_, options_.momentum,
                     options_.weight_decay);
  }
}

Adam::Adam(Context& ctx, std::vector<Parameter*> params, AdamOptions options)
    : Optimizer(std::move(params), options.lr), options_(options) {
  const AdamOptions& o = options;
  if (!(o.lr >= 0.0f) || !(o.beta1 >= 0.0f && o.beta1 < 1.0f) ||
      !(o.beta2 >= 0.0f && o.beta2 < 1.0f) || !(o.eps > 0.0f) || !(o.weight_decay >= 0.0f))
    throw Error("adam: needs lr >= 0, 0 <= beta1, beta2 < 1, eps > 0, weight_decay >= 0");
  require_parameters(ctx, params_, "adam");
  for (Parameter* p : params_) {
    m_.emplace_back(ctx.device(), p->value.rows(), p->value.cols());
    v_.emplace_back(ctx.device(), p->value.rows(), p->value.cols());
  }
}

void Adam::step(Context& ctx) {
  ++t_;
  // Bias corrections in double on the host, so that large t loses nothing.
  const auto c1 = static_cast<float>(1.0 - std::pow(static_cast<double>(options_.beta1), t_));
  const auto c2 = static_cast<float>(1.0 - std::pow(static_cast<double>(options_.beta2), t_));
  const AdamOptions& o = options_;
  for (size_t i = 0; i < params_.size(); ++i) {
    Parameter& p = *params_[i];
    if (ctx.is_cuda())
      cuda::adam_step(p.value.data(), p.grad.data(), m_[i].data(), v_[i].data(), p.value.size(),
                      lr_, o.beta1, o.beta2, o.eps, o.weight_decay, c1, c2, ctx.stream());
    else
      host::adam_step(p.value.data(), p.grad.data(), m_[i].data(), v_[i].data(), p.value.size(),
                      lr_, o.beta1, o.beta2, o.eps, o.weight_decay, c1, c2);
  }
}

}  // namespace engine
