// The project's GEMM kernels as PyTorch operators, namespace gemm_mlp:
//
//   gemm_mlp::matmul(Tensor a, Tensor b, str variant="default") -> Tensor
//       a is M×K, b is K×N: a @ b, a new M×N tensor (row-major).
//   gemm_mlp::linear(Tensor x, Tensor weight, Tensor? bias=None, bool relu=False,
//                    str variant="default") -> Tensor
//       x is M×K, weight N×K (nn.Linear's out × in), bias N values: x @ weightᵀ + bias, then ReLU
//       if relu, in one kernel: the bias and ReLU run in the GEMM's epilogue (kernels/gemm.h).
//
// Operands are float32 CUDA matrices on one device. A row-major one (strides (ld, 1), ld ≥ its
// columns) is read as layout N, a plain transpose (strides (1, ld), ld ≥ its rows; w.t() of a
// row-major w) as layout T, both in place with their leading dimension and storage offset, at any
// alignment. Any other (a column slice with a step, an expanded tensor) is first copied to a
// contiguous tensor, as torch.mm copies it. variant is any device variant of `gemm_bench --list`,
// or "default": tf32x3_fast on Hopper (compute capability 9.0), fast elsewhere.
//
// A call enqueues its kernels on PyTorch's current stream, without synchronising; its scratch
// memory comes from PyTorch's caching allocator in that stream's order (CUDA graphs capture it).
//
// Autograd is here, in C++, as torchvision registers its ops' (an Autograd kernel around a
// torch::autograd::Function that calls the op below autograd): a call costs no Python beyond the
// binding. The backward's GEMMs run through the same op, in the layouts of a linear layer
// Y = X·Wᵀ + b (W is out × in), each operand a view:
//   forward          Y  = X·Wᵀ    linear(x, weight): W read transposed (NT)
//   input gradient   dX = dZ·W    matmul(dz, weight)  (NN)
//   weight gradient  dW = dZᵀ·X   matmul(dz.t(), x)   (TN)
// with dZ = dY where the ReLU's output is > 0. The fake (meta) implementations, which
// torch.compile traces with, are registered in Python (gemm_mlp_torch/_ops.py).
#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/autograd.h>
#include <torch/library.h>

#include <climits>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kernels/gemm.h"
#include "messages.h"

namespace {

// The kernels' scratch memory from PyTorch's caching allocator, held until the op returns, then
// back to the cache for later work on the same stream (which runs after the kernels that used it).
class CachingAllocatorWorkspace final : public gemm::WorkspaceAllocator {
 public:
  explicit CachingAllocatorWorkspace(const at::Device& device)
      : options_(at::TensorOptions().dtype(at::kByte).device(device)) {}
  void* allocate(std::size_t bytes, cudaStream_t) override {
    blocks_.push_back(at::empty({static_cast<int64_t>(bytes)}, options_));
    return blocks_.back().mutable_data_ptr();
  }

 private:
  at::TensorOptions options_;
  std::vector<at::Tensor> blocks_;
};

void check_matrix(const char* op, const char* name, const at::Tensor& t, int64_t dims) {
  GEMM_MLP_OP_CHECK(t.is_cuda(), op, ": ", name, " is on ", t.device(),
                    "; the op runs on CUDA tensors only (move it with .cuda())");
  GEMM_MLP_OP_CHECK(
      t.scalar_type() == at::kFloat, op, ": ", name, " is ", t.scalar_type(),
      "; the op takes float32 only, the precision its kernels compute in (use .float(), "
      "or torch.matmul for other dtypes)");
  GEMM_MLP_OP_CHECK(t.dim() == dims, op, ": ", name, " must be ", dims, "-D, got shape ",
                    t.sizes());
  for (int64_t d = 0; d < dims; ++d)
    GEMM_MLP_OP_CHECK(t.size(d) <= INT_MAX, op, ": ", name, " has shape ", t.sizes(),
                      ", which does not fit the kernels' 32-bit sizes (at most ", INT_MAX, ")");
}

// An operand of logical shape rows×cols as the kernels read it.
struct Operand {
  gemm::Op op;
  int ld;
  at::Tensor tensor;  // the argument itself, or its contiguous copy
};

Operand as_operand(const at::Tensor& t) {
  const int64_t rows = t.size(0), cols = t.size(1), s0 = t.stride(0), s1 = t.stride(1);
  // A dimension of size 1 has no meaningful stride.
  if ((cols == 1 || s1 == 1) && (rows == 1 || (s0 >= cols && s0 <= INT_MAX)))
    return {gemm::Op::N, static_cast<int>(rows == 1 ? cols : s0), t};
  if ((rows == 1 || s0 == 1) && (cols == 1 || (s1 >= rows && s1 <= INT_MAX)))
    return {gemm::Op::T, static_cast<int>(cols == 1 ? rows : s1), t};
  return {gemm::Op::N, static_cast<int>(cols), t.contiguous()};
}

// What "default" stands for: tf32x3_fast on Hopper, where its wgmma kernels run; fast elsewhere.
const char* default_variant_name(const cudaDeviceProp& props) {
  return props.major == 9 && props.minor == 0 ? "tf32x3_fast" : "fast";
}

// The device by index: a reference returned from a function given a temporary Device is what
// GCC's -Wdangling-reference suspects, though the variants live for the whole process.
const gemm::Variant& resolve_variant(const char* op, const std::string& name,
                                     c10::DeviceIndex device) {
  const cudaDeviceProp* props = at::cuda::getDeviceProperties(device);
  GEMM_MLP_OP_CHECK(props->major >= 8, op, ": ", props->name, " has compute capability ",
                    props->major, ".", props->minor,
                    "; gemm-mlp's kernels need 8.0 or newer (cp.async)");
  if (name == "default") {
    const std::string default_name = default_variant_name(*props);
    const gemm::Variant& fallback = gemm::find_variant(default_name);
    if (default_name != "tf32x3_fast") {
      TORCH_WARN_ONCE(gemm_mlp_torch::message(
          "gemm_mlp: ", props->name, " (compute capability ", props->major, ".", props->minor,
          ") is not a Hopper GPU, for which the default variant "
          "tf32x3_fast is built; the default here is '",
          fallback.name,
          "' (fp32 on the CUDA cores). variant='tf32x3_fast' runs its portable "
          "3xTF32 kernel instead."));
    }
    return fallback;
  }
  const gemm::Variant* variant = nullptr;
  try {
    variant = &gemm::find_variant(name);
  } catch (const gemm::Error& e) {
    GEMM_MLP_OP_CHECK(false, op, ": ", e.what(), ", or 'default'");
  }
  GEMM_MLP_OP_CHECK(variant->device == gemm::Device::CUDA, op, ": variant '", name,
                    "' runs on the host; the op takes CUDA tensors and a device variant");
  if (const char* why = gemm::unavailable_reason(*variant))
    GEMM_MLP_OP_CHECK(false, op, ": variant '", name, "' cannot run on ", props->name, ": ", why);
  return *variant;
}

// C = op(a)·op(b) (+ bias, ReLU), a logically M×K, b K×N; the checks are the caller's.
at::Tensor run_gemm(const char* op, const at::Tensor& a, const at::Tensor& b,
                    const std::optional<at::Tensor>& bias, bool relu,
                    const std::string& variant_name) {
  const c10::cuda::CUDAGuard guard(a.device());
  const gemm::Variant& variant = resolve_variant(op, variant_name, a.device().index());
  const int64_t m = a.size(0), k = a.size(1), n = b.size(1);
  at::Tensor c = at::empty({m, n}, a.options());
  if (m == 0 || n == 0) return c;
  if (k == 0) {  // an empty sum: the bias alone
    if (bias)
      c.copy_(bias->unsqueeze(0).expand({m, n}));
    else
      c.zero_();
    return relu ? c.relu_() : c;
  }

  const Operand oa = as_operand(a), ob = as_operand(b);
  gemm::Problem p;
  p.op_a = oa.op, p.op_b = ob.op;
  p.m = static_cast<int>(m), p.n = static_cast<int>(n), p.k = static_cast<int>(k);
  p.a = oa.tensor.const_data_ptr<float>(), p.lda = oa.ld;
  p.b = ob.tensor.const_data_ptr<float>(), p.ldb = ob.ld;
  p.c = c.mutable_data_ptr<float>(), p.ldc = static_cast<int>(n);
  at::Tensor bias_values;
  if (bias) {
    bias_values = bias->stride(0) == 1 ? *bias : bias->contiguous();
    p.epilogue = relu ? gemm::EpilogueOp::BiasRelu : gemm::EpilogueOp::Bias;
    p.bias = bias_values.const_data_ptr<float>();
  }

  CachingAllocatorWorkspace workspace(a.device());
  const gemm::ScopedWorkspaceAllocator scope(workspace);
  const cudaStream_t stream = c10::cuda::getCurrentCUDAStream(a.device().index()).stream();
  try {
    // validate() and the launch, without gemm::run's cudaPointerGetAttributes per operand: the
    // tensors' devices are checked above, and a call's overhead is what this op is measured on.
    gemm::validate(p);
    variant.launch(p, stream);
  } catch (const gemm::Error& e) {
    GEMM_MLP_OP_CHECK(false, op, ": ", e.what());
  }
  if (relu && !bias) c.relu_();  // no ReLU-only epilogue; one more pass over C
  return c;
}

void check_same_device(const char* op, const char* name, const at::Tensor& t,
                       const at::Tensor& first) {
  GEMM_MLP_OP_CHECK(t.device() == first.device(), op, ": ", name, " is on ", t.device(), " but ",
                    "the first operand is on ", first.device(), "; all must be on one GPU");
}

at::Tensor matmul_op(const at::Tensor& a, const at::Tensor& b, const std::string& variant) {
  constexpr const char* op = "gemm_mlp::matmul";
  check_matrix(op, "a", a, 2);
  check_matrix(op, "b", b, 2);
  check_same_device(op, "b", b, a);
  GEMM_MLP_OP_CHECK(a.size(1) == b.size(0), op, ": a is ", a.sizes(), " and b is ", b.sizes(),
                    "; a's columns must equal b's rows (a is M x K, b is K x N)");
  return run_gemm(op, a, b, std::nullopt, false, variant);
}

at::Tensor linear_op(const at::Tensor& x, const at::Tensor& weight,
                     const std::optional<at::Tensor>& bias, bool relu, const std::string& variant) {
  constexpr const char* op = "gemm_mlp::linear";
  check_matrix(op, "x", x, 2);
  check_matrix(op, "weight", weight, 2);
  check_same_device(op, "weight", weight, x);
  GEMM_MLP_OP_CHECK(x.size(1) == weight.size(1), op, ": x is ", x.sizes(), " and weight is ",
                    weight.sizes(), "; x's columns must equal weight's (x is M x K, weight N x K)");
  if (bias) {
    check_matrix(op, "bias", *bias, 1);
    check_same_device(op, "bias", *bias, x);
    GEMM_MLP_OP_CHECK(bias->size(0) == weight.size(0), op, ": bias has ", bias->size(0),
                      " values, weight has ", weight.size(0), " rows; they must match (N)");
  }
  return run_gemm(op, x, weight.t(), bias, relu, variant);
}

// --- Autograd ----------------------------------------------------------------------------------

// The ops through the dispatcher: below autograd (under the forward's guard) the kernels above, or
// the fake implementations while torch.compile traces; with autograd, the functions below.
at::Tensor call_matmul(const at::Tensor& a, const at::Tensor& b, const std::string& variant) {
  static const auto op = c10::Dispatcher::singleton()
                             .findSchemaOrThrow("gemm_mlp::matmul", "")
                             .typed<decltype(matmul_op)>();
  return op.call(a, b, variant);
}

at::Tensor call_linear(const at::Tensor& x, const at::Tensor& weight,
                       const std::optional<at::Tensor>& bias, bool relu,
                       const std::string& variant) {
  static const auto op = c10::Dispatcher::singleton()
                             .findSchemaOrThrow("gemm_mlp::linear", "")
                             .typed<decltype(linear_op)>();
  return op.call(x, weight, bias, relu, variant);
}

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// C = A·B; dA = dC·Bᵀ, dB = Aᵀ·dC.
class MatmulFunction : public torch::autograd::Function<MatmulFunction> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& a, const at::Tensor& b,
                            const std::string& variant) {
    ctx->saved_data["variant"] = variant;
    ctx->save_for_backward({a, b});
    const at::AutoDispatchBelowADInplaceOrView below_autograd;
    return call_matmul(a, b, variant);
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const variable_list saved = ctx->get_saved_variables();
    const std::string variant = ctx->saved_data["variant"].toStringRef();
    at::Tensor grad_a, grad_b;
    if (ctx->needs_input_grad(0)) grad_a = call_matmul(grads[0], saved[1].t(), variant);
    if (ctx->needs_input_grad(1)) grad_b = call_matmul(saved[0].t(), grads[0], variant);
    return {grad_a, grad_b, at::Tensor()};
  }
};

// Y = relu?(X·Wᵀ + b). The bias stays an optional: Function::apply refuses an undefined tensor
// (it asks every tensor input for its device), and takes an absent optional as no input at all,
// so the bias has a gradient edge, the third, only when it is there.
class LinearFunction : public torch::autograd::Function<LinearFunction> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& weight,
                            const std::optional<at::Tensor>& bias, bool relu,
                            const std::string& variant) {
    const bool has_bias = bias && bias->defined();
    ctx->saved_data["variant"] = variant;
    ctx->saved_data["relu"] = relu;
    ctx->saved_data["has_bias"] = has_bias;
    at::Tensor y;
    {
      const at::AutoDispatchBelowADInplaceOrView below_autograd;
      y = call_linear(x, weight, has_bias ? bias : std::nullopt, relu, variant);
    }
    // With ReLU, its output says where the gradient passes (> 0 exactly where its input was).
    ctx->save_for_backward({x, weight, relu ? y : at::Tensor()});
    return y;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const variable_list saved = ctx->get_saved_variables();
    const std::string variant = ctx->saved_data["variant"].toStringRef();
    at::Tensor grad = grads[0];
    if (ctx->saved_data["relu"].toBool()) grad = at::where(saved[2] > 0, grad, 0.0);
    at::Tensor grad_x, grad_weight, grad_bias;
    if (ctx->needs_input_grad(0)) grad_x = call_matmul(grad, saved[1], variant);           // NN
    if (ctx->needs_input_grad(1)) grad_weight = call_matmul(grad.t(), saved[0], variant);  // TN
    // Without a bias there is no third edge to ask about.
    if (ctx->saved_data["has_bias"].toBool() && ctx->needs_input_grad(2)) grad_bias = grad.sum(0);
    // One gradient per forward argument, the bias's position included either way.
    return {grad_x, grad_weight, grad_bias, at::Tensor(), at::Tensor()};
  }
};

at::Tensor matmul_autograd(const at::Tensor& a, const at::Tensor& b, const std::string& variant) {
  return MatmulFunction::apply(a, b, variant);
}

at::Tensor linear_autograd(const at::Tensor& x, const at::Tensor& weight,
                           const std::optional<at::Tensor>& bias, bool relu,
                           const std::string& variant) {
  return LinearFunction::apply(x, weight, bias, relu, variant);
}

// Queries. One line per device variant, "name<TAB>fp32|tf32<TAB>why it cannot run on the current
// GPU, or nothing", for gemm_mlp_torch.variants().
std::string variant_table() {
  std::string table;
  for (const gemm::Variant& v : gemm::variants()) {
    if (v.device != gemm::Device::CUDA) continue;
    const char* why = gemm::cuda_device_available() ? gemm::unavailable_reason(v) : "no GPU";
    table += std::string(v.name) + '\t' + (v.precision == gemm::Precision::TF32 ? "tf32" : "fp32") +
             '\t' + (why ? why : "") + '\n';
  }
  return table;
}

// The variant "default" runs on the current GPU, for gemm_mlp_torch.default_variant().
std::string default_variant() {
  return default_variant_name(*at::cuda::getCurrentDeviceProperties());
}

}  // namespace

TORCH_LIBRARY(gemm_mlp, m) {
  m.def("matmul(Tensor a, Tensor b, str variant=\"default\") -> Tensor");
  m.def(
      "linear(Tensor x, Tensor weight, Tensor? bias=None, bool relu=False, "
      "str variant=\"default\") -> Tensor");
  m.def("variants() -> str", &variant_table);
  m.def("default_variant() -> str", &default_variant);
}

TORCH_LIBRARY_IMPL(gemm_mlp, CUDA, m) {
  m.impl("matmul", &matmul_op);
  m.impl("linear", &linear_op);
}

TORCH_LIBRARY_IMPL(gemm_mlp, Autograd, m) {
  m.impl("matmul", &matmul_autograd);
  m.impl("linear", &linear_autograd);
}

// CPU tensors reach the same functions, whose first check refuses them by name (rather than the
// dispatcher's list of backends without a kernel).
TORCH_LIBRARY_IMPL(gemm_mlp, CPU, m) {
  m.impl("matmul", &matmul_op);
  m.impl("linear", &linear_op);
}
