#include "engine/network/optim.h"

#include <cmath>

#include "base/cuda_check.h"
#include "engine/network/checks.h"

namespace engine {

namespace {

constexpr int64_t kSliceAlign = 64;  // floats: 256 bytes, as cudaMalloc aligns

int64_t aligned_size(int64_t n) { return (n + kSliceAlign - 1) / kSliceAlign * kSliceAlign; }

void require_parameters(Context& ctx, const std::vector<Parameter*>& params, const char* who) {
  if (params.empty()) throw Error(std::string(who) + ": no parameters to optimise");
  for (Parameter* p : params) {
    if (p == nullptr) throw Error(std::string(who) + ": a null parameter");
    detail::require_on(ctx, p->value, std::string(who) + ": parameter " + p->name);
    detail::require_on(ctx, p->grad, std::string(who) + ": gradient of " + p->name);
    detail::require_shape(p->grad, p->value.rows(), p->value.cols(),
                          std::string(who) + ": gradient of " + p->name);
  }
}

bool finite_and_non_negative(float x) { return std::isfinite(x) && x >= 0.0f; }

}  // namespace

Optimizer::Optimizer(Context& ctx, std::vector<Parameter*> params, LrSchedule schedule,
                     const char* who)
    : schedule_(schedule), step_(ctx) {
  require_parameters(ctx, params, who);
  if (!(std::isfinite(schedule.peak) && schedule.peak > 0.0f))
    throw Error(std::string(who) + ": lr must be finite and > 0, got " +
                std::to_string(schedule.peak));
  if (schedule.total_steps < 0) throw Error(std::string(who) + ": cosine_steps must be >= 0");
  int64_t total = 0;
  for (Parameter* p : params) total += aligned_size(p->value.size());
  if (total > INT32_MAX) throw Error(std::string(who) + ": more than 2^31 parameter values");
  values_ = Tensor(ctx.device(), 1, static_cast<int>(total));
  grads_ = Tensor(ctx.device(), 1, static_cast<int>(total));
  // Move each parameter (and its gradient) into its slice; the slices' padding stays zero.
  int64_t offset = 0;
  params_ = params;
  for (Parameter* p : params) {
    offsets_.push_back(offset);
    const int rows = p->value.rows(), cols = p->value.cols();
    Tensor value = Tensor::view(ctx.device(), values_.data() + offset, rows, cols);
    Tensor grad = Tensor::view(ctx.device(), grads_.data() + offset, rows, cols);
    value.copy_from(p->value, ctx.stream());
    grad.copy_from(p->grad, ctx.stream());
    p->value = std::move(value);
    p->grad = std::move(grad);
    offset += aligned_size(rows * static_cast<int64_t>(cols));
  }
  offsets_.push_back(offset);
}

Optimizer::~Optimizer() = default;

void Optimizer::step(Context& ctx) {
  count_step(ctx);
  apply(ctx);
}

void Optimizer::count_step(Context& ctx) {
  if (ctx.device() != step_.device())
    throw Error("optimizer: step with a context on another device");
  if (ctx.is_cuda())
    cuda::advance_step(step_.get(), ctx.stream());
  else
    ++*step_.get();
  ++steps_;
}

int64_t* Optimizer::count_step_elsewhere() {
  ++steps_;
  return step_.get();
}

void Optimizer::apply(Context& ctx) {
  if (ctx.device() != step_.device())
    throw Error("optimizer: apply with a context on another device");
  // Each run of parameters finished on one stream is updated there, once the main stream has
  // queued every read of the weights (the input-gradient GEMMs).
  const auto stream_of = [&](size_t i) {
    return ctx.forked(params_[i]->grad_stream) ? params_[i]->grad_stream : 0;
  };
  for (size_t first = 0, last = 0; first < params_.size(); first = last) {
    const int stream = stream_of(first);
    for (last = first + 1; last < params_.size() && stream_of(last) == stream;) ++last;
    ctx.follow_main(stream);
    ctx.on(stream, [&] { update(ctx, offsets_[first], offsets_[last] - offsets_[first]); });
  }
  ctx.join();
}

int64_t Optimizer::read_steps(Context& ctx) const {
  if (ctx.device() != step_.device())
    throw Error("optimizer: read_steps with a context on another device");
  return step_.read(ctx);
}

void Optimizer::set_steps(Context& ctx, int64_t steps) {
  if (steps < 0) throw Error("optimizer: a negative step count");
  if (ctx.device() != step_.device())
    throw Error("optimizer: set_steps with a context on another device");
  step_.write(steps);
  steps_ = steps;
}

Sgd::Sgd(Context& ctx, std::vector<Parameter*> params, SgdOptions options)
    : Optimizer(ctx, std::move(params), {options.lr, options.cosine_steps}, "sgd"),
      options_(options) {
  if (!finite_and_non_negative(options.momentum) || !finite_and_non_negative(options.weight_decay))
    throw Error("sgd: momentum and weight_decay must be finite and >= 0");
  if (options.momentum > 0.0f) velocity_ = Tensor(ctx.device(), 1, values_.cols());
}

std::vector<std::pair<std::string, Tensor*>> Sgd::state() {
  if (velocity_.empty()) return {};
  return {{"momentum_buffer", &velocity_}};
}

void Sgd::update(Context& ctx, int64_t offset, int64_t n) {
  float* w = values_.data() + offset;
  const float* g = grads_.data() + offset;
  float* v = velocity_.empty() ? nullptr : velocity_.data() + offset;
  if (ctx.is_cuda())
    cuda::sgd_step(w, g, v, n, device_step(), schedule_, options_.momentum, options_.weight_decay,
                   ctx.stream());
  else
    host::sgd_step(w, g, v, n, device_step(), schedule_, options_.momentum, options_.weight_decay);
}

Adam::Adam(Context& ctx, std::vector<Parameter*> params, AdamOptions options)
    : Optimizer(ctx, std::move(params), {options.lr, options.cosine_steps}, "adam"),
      options_(options) {
  const AdamOptions& o = options;
  if (!(o.beta1 >= 0.0f && o.beta1 < 1.0f) || !(o.beta2 >= 0.0f && o.beta2 < 1.0f) ||
      !(o.eps > 0.0f && std::isfinite(o.eps)) || !finite_and_non_negative(o.weight_decay))
    throw Error("adam: needs 0 <= beta1, beta2 < 1, finite eps > 0, finite weight_decay >= 0");
  m_ = Tensor(ctx.device(), 1, values_.cols());
  v_ = Tensor(ctx.device(), 1, values_.cols());
}

std::vector<std::pair<std::string, Tensor*>> Adam::state() {
  return {{"exp_avg", &m_}, {"exp_avg_sq", &v_}};
}

void Adam::update(Context& ctx, int64_t offset, int64_t n) {
  const AdamOptions& o = options_;
  float* w = values_.data() + offset;
  const float* g = grads_.data() + offset;
  float *m = m_.data() + offset, *v = v_.data() + offset;
  if (ctx.is_cuda())
    cuda::adam_step(w, g, m, v, n, device_step(), schedule_, o.beta1, o.beta2, o.eps,
                    o.weight_decay, ctx.stream());
  else
    host::adam_step(w, g, m, v, n, device_step(), schedule_, o.beta1, o.beta2, o.eps,
                    o.weight_decay);
}

}  // namespace engine
