#include "engine/network/module.h"

#include <cmath>

#include "engine/network/ops.h"

namespace engine {

void Module::zero_grad(Context& ctx) {
  for (Parameter* p : parameters()) zero(ctx, p->grad);
}

int64_t Module::parameter_count() {
  int64_t n = 0;
  for (Parameter* p : parameters()) n += p->value.size();
  return n;
}

void Module::check_input(const Tensor& x, int max_batch, int cols, const char* who) const {
  if (max_batch == 0) throw Error(std::string(who) + ": forward before prepare()");
  if (x.rows() < 1 || x.rows() > max_batch || x.cols() != cols)
    throw Error(std::string(who) + ": input is " + x.shape() + ", prepared for up to " +
                std::to_string(max_batch) + "x" + std::to_string(cols));
}

// ---------------------------------------------------------------------------------------------
// Linear

Linear::Linear(Context& ctx, int in, int out) : in_(in), out_(out) {
  if (in < 1 || out < 1)
    throw Error("Linear: in and out must be >= 1, got " + std::to_string(in) + " and " +
                std::to_string(out));
  weight_ = {"weight", Tensor(ctx.device(), out, in), Tensor(ctx.device(), out, in)};
  bias_ = {"bias", Tensor(ctx.device(), 1, out), Tensor(ctx.device(), 1, out)};
  uniform_init(ctx, weight_.value, std::sqrt(6.0f / static_cast<float>(in)));
  uniform_init(ctx, bias_.value, 1.0f / std::sqrt(static_cast<float>(in)));
}

int Linear::prepare(Context& ctx, int max_batch, int in_features) {
  if (in_features != in_)
    throw Error("Linear(" + std::to_string(in_) + " -> " + std::to_string(out_) + "): gets " +
                std::to_string(in_features) + " input features");
  if (max_batch < 1) throw Error("Linear: max_batch must be >= 1");
  max_batch_ = max_batch;
  y_buf_ = Tensor(ctx.device(), max_batch, out_);
  dx_buf_ = needs_input_grad() ? Tensor(ctx.device(), max_batch, in_) : Tensor();
  return out_;
}

const Tensor& Linear::forward(Context& ctx, const Tensor& x) {
  check_input(x, max_batch_, in_, "Linear");
  x_ = x.first_rows(x.rows());  // a read-only view: backward needs x for dW
  y_ = y_buf_.first_rows(x.rows());
  linear_forward(ctx, x_, weight_.value, bias_.value, y_,
                 relu_after_ ? Activation::Relu : Activation::None);
  return y_;
}

const Tensor& Linear::backward(Context& ctx, const Tensor& dy) {
  if (x_.empty()) throw Error("Linear: backward before forward");
  Tensor* dx = nullptr;
  if (needs_input_grad()) {
    dx_ = dx_buf_.first_rows(x_.rows());
    dx = &dx_;
  } else {
    dx_ = Tensor();
  }
  const LinearGradStreams streams = linear_backward(ctx, x_, weight_.value, dy, dx, weight_.grad,
                                                    bias_.grad, {accumulate_grads(), relu_before_});
  weight_.grad_stream = streams.weight;
  bias_.grad_stream = streams.bias;
  return dx_;
}

std::string Linear::describe() const {
  return "Linear(" + std::to_string(in_) + " -> " + std::to_string(out_) + ")";
}

// ---------------------------------------------------------------------------------------------
// ReLU

int ReLU::prepare(Context& ctx, int max_batch, int in_features) {
  if (max_batch < 1 || in_features < 1) throw Error("ReLU: max_batch and in_features must be >= 1");
  max_batch_ = max_batch;
  features_ = in_features;
  y_buf_ = applied_before_ ? Tensor() : Tensor(ctx.device(), max_batch, in_features);
  const bool computes_dx = needs_input_grad() && !masked_after_;
  dx_buf_ = computes_dx ? Tensor(ctx.device(), max_batch, in_features) : Tensor();
  return in_features;
}

const Tensor& ReLU::forward(Context& ctx, const Tensor& x) {
  check_input(x, max_batch_, features_, "ReLU");
  if (applied_before_) {
    y_ = x.first_rows(x.rows());  // already max(·, 0)
    return y_;
  }
  y_ = y_buf_.first_rows(x.rows());
  relu_forward(ctx, x, y_);
  return y_;
}

const Tensor& ReLU::backward(Context& ctx, const Tensor& dy) {
  if (y_.empty()) throw Error("ReLU: backward before forward");
  if (!needs_input_grad()) {
    dx_ = Tensor();
    return dx_;
  }
  if (masked_after_) {
    dx_ = dy.first_rows(dy.rows());  // already masked by the Linear after
    return dx_;
  }
  dx_ = dx_buf_.first_rows(y_.rows());
  relu_backward(ctx, y_, dy, dx_);
  return dx_;
}

// ---------------------------------------------------------------------------------------------
// Sequential

Module& Sequential::add(std::unique_ptr<Module> module) {
  if (!module) throw Error("Sequential: add(nullptr)");
  if (prepared_) throw Error("Sequential: add after prepare()");
  const std::string prefix = std::to_string(modules_.size()) + ".";
  for (Parameter* p : module->parameters()) p->name = prefix + p->name;
  modules_.push_back(std::move(module));
  return *modules_.back();
}

int Sequential::prepare(Context& ctx, int max_batch, int in_features) {
  if (modules_.empty()) throw Error("Sequential: prepare() of an empty network");
  const auto linear_at = [&](size_t i) {
    return i < modules_.size() ? dynamic_cast<Linear*>(modules_[i].get()) : nullptr;
  };
  const auto relu_at = [&](size_t i) {
    return i < modules_.size() ? dynamic_cast<ReLU*>(modules_[i].get()) : nullptr;
  };
  for (size_t i = 0; i < modules_.size(); ++i) {
    if (Linear* linear = linear_at(i))
      linear->fuse_relu_after(false), linear->fuse_relu_before(false);
    if (ReLU* relu = relu_at(i)) relu->set_fused(false, false);
  }
  if (fuse_)
    for (size_t i = 0; i + 1 < modules_.size(); ++i) {
      Linear* before = linear_at(i);
      ReLU* relu = relu_at(i + 1);
      if (!before || !relu) continue;
      Linear* after = linear_at(i + 2);
      before->fuse_relu_after(true);
      if (after) after->fuse_relu_before(true);
      relu->set_fused(true, after != nullptr);
    }
  int features = in_features;
  for (size_t i = 0; i < modules_.size(); ++i) {
    modules_[i]->set_needs_input_grad(i == 0 ? needs_input_grad() : true);
    modules_[i]->set_accumulate_grads(accumulate_grads());
    features = modules_[i]->prepare(ctx, max_batch, features);
  }
  prepared_ = true;
  return features;
}

int Sequential::prepare(Context& ctx, int max_batch) {
  const int in = in_features();
  if (in == 0)
    throw Error(
        "Sequential: the first module does not fix the input width; use "
        "prepare(ctx, max_batch, in_features)");
  return prepare(ctx, max_batch, in);
}

int Sequential::in_features() const { return modules_.empty() ? 0 : modules_[0]->in_features(); }

const Tensor& Sequential::forward(Context& ctx, const Tensor& x) {
  if (!prepared_) throw Error("Sequential: forward before prepare()");
  const Tensor* h = &x;
  for (auto& m : modules_) h = &m->forward(ctx, *h);
  return *h;
}

const Tensor& Sequential::backward(Context& ctx, const Tensor& dy) {
  if (!prepared_) throw Error("Sequential: backward before prepare()");
  const Tensor* g = &dy;
  for (size_t i = modules_.size(); i-- > 0;) {
    g = &modules_[i]->backward(ctx, *g);
    if (g->empty()) break;  // only the first module may stop the chain (no input gradient)
  }
  return g->empty() ? empty_ : *g;
}

std::vector<Parameter*> Sequential::parameters() {
  std::vector<Parameter*> all;
  for (auto& m : modules_)
    for (Parameter* p : m->parameters()) all.push_back(p);
  return all;
}

std::string Sequential::describe() const {
  std::string s = "Sequential(";
  for (size_t i = 0; i < modules_.size(); ++i) s += (i ? ", " : "") + modules_[i]->describe();
  return s + ")";
}

}  // namespace engine
