#include "gemm_harness.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <sstream>
#include <thread>

#include "base/device_buffer.h"
#include "ref_gemm.h"

namespace gemm_test {
namespace {

constexpr std::size_t kAlign = 64;  // floats: 256 bytes, as cudaMalloc aligns
constexpr std::size_t kGuard = 64;  // sentinel floats before and after each C block
constexpr std::uint32_t kSentinelBits = 0x7FC0BEEFu;  // a NaN with a payload no kernel makes

std::size_t align_up(std::size_t x) { return (x + kAlign - 1) / kAlign * kAlign; }

float sentinel() {
  float f;
  std::memcpy(&f, &kSentinelBits, sizeof f);
  return f;
}

std::uint32_t bits_of(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

const float kNaN = std::numeric_limits<float>::quiet_NaN();

// Random values in [-1, 1], never zero, so that no product vanishes and every element counts; or
// (wide_range) a random sign times 2^u, u uniform in [-12, 12]: magnitudes over 24 octaves, where
// rounding an operand to TF32 shows at the fp32 tolerance.
struct Values {
  std::mt19937_64 rng;
  std::uniform_real_distribution<float> dist{-1.0f, 1.0f};
  bool wide_range;
  Values(std::uint64_t seed, bool wide) : rng(seed), wide_range(wide) {}
  float operator()() {
    if (wide_range) {
      const float x = dist(rng);
      return std::copysign(std::exp2(12.0f * dist(rng)), x);
    }
    for (;;) {
      const float x = dist(rng);
      if (std::fabs(x) >= 1.0f / 1024.0f) return x;
    }
  }
};

void fill(const Case& c, const Placement& at, float* buf) {
  Values value(c.seed, c.wide_range);
  for (int r = 0; r < c.rows_a(); ++r)
    for (int col = 0; col < c.lda; ++col)
      buf[at.a + std::size_t(r) * c.lda + col] = col < c.cols_a() ? value() : kNaN;
  for (int r = 0; r < c.rows_b(); ++r)
    for (int col = 0; col < c.ldb; ++col)
      buf[at.b + std::size_t(r) * c.ldb + col] = col < c.cols_b() ? value() : kNaN;
  for (int j = 0; j < c.n; ++j) buf[at.bias + j] = value();
  if (c.epilogue == gemm::EpilogueOp::ReluMask)
    for (int r = 0; r < c.m; ++r)
      for (int col = 0; col < c.ldmask; ++col)
        buf[at.mask + std::size_t(r) * c.ldmask + col] = col < c.n ? value() : kNaN;
  std::fill(buf + at.c_begin, buf + at.c_end, sentinel());
  // beta = 0: C must only be written, so NaN poison fails any element left unwritten or read.
  for (int i = 0; i < c.m; ++i)
    for (int j = 0; j < c.n; ++j)
      buf[at.c + std::size_t(i) * c.ldc + j] = c.beta == 0.0f ? kNaN : value();
}

// Calls f(i) for i in [0, n) on all cores, in the given order of priority.
template <class F>
void parallel_for(const std::vector<std::size_t>& order, F&& f) {
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  const unsigned n_threads = unsigned(std::min<std::size_t>(std::min(hw, 32u), order.size()));
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t w; (w = next.fetch_add(1)) < order.size();) f(order[w]);
  };
  std::vector<std::thread> threads;
  for (unsigned t = 1; t < n_threads; ++t) threads.emplace_back(worker);
  worker();
  for (auto& t : threads) t.join();
}

}  // namespace

gemm::Problem problem_of(const Case& c, const Placement& at, float* base) {
  gemm::Problem p;
  p.op_a = c.op_a;
  p.op_b = c.op_b;
  p.m = c.m;
  p.n = c.n;
  p.k = c.k;
  p.alpha = c.alpha;
  p.beta = c.beta;
  p.a = base + at.a;
  p.lda = c.lda;
  p.b = base + at.b;
  p.ldb = c.ldb;
  p.c = base + at.c;
  p.ldc = c.ldc;
  p.epilogue = c.epilogue;
  if (c.epilogue == gemm::EpilogueOp::Bias || c.epilogue == gemm::EpilogueOp::BiasRelu)
    p.bias = base + at.bias;
  if (c.epilogue == gemm::EpilogueOp::ReluMask) {
    p.mask = base + at.mask;
    p.ldmask = c.ldmask;
  }
  return p;
}

std::string Case::describe() const {
  std::ostringstream s;
  s << m << "x" << n << "x" << k << " " << gemm::layout_name(op_a, op_b) << " lda=" << lda
    << " ldb=" << ldb << " ldc=" << ldc << " offsets(a,b,c)=(" << off_a << "," << off_b << ","
    << off_c << ") alpha=" << alpha << " beta=" << beta;
  if (epilogue != gemm::EpilogueOp::None)
    s << " epilogue=" << gemm::epilogue_name(epilogue) << " ldmask=" << ldmask
      << " offsets(bias,mask)=(" << off_bias << "," << off_mask << ")";
  if (wide_range) s << " wide-range";
  s << " seed=" << seed;
  return s.str();
}

Case finished(Case c) {
  if (c.lda == 0) c.lda = c.cols_a();
  if (c.ldb == 0) c.ldb = c.cols_b();
  if (c.ldc == 0) c.ldc = c.n;
  if (c.ldmask == 0) c.ldmask = c.n;
  return c;
}

Batch::Batch(std::vector<Case> cases) : cases_(std::move(cases)), input_(nullptr, std::free) {
  std::size_t cursor = 0;
  for (Case& c : cases_) {
    c = finished(c);
    Placement at;
    at.a = align_up(cursor) + c.off_a;
    cursor = at.a + std::size_t(c.rows_a()) * c.lda;
    at.b = align_up(cursor) + c.off_b;
    cursor = at.b + std::size_t(c.rows_b()) * c.ldb;
    at.bias = align_up(cursor) + c.off_bias;
    cursor = at.bias + std::size_t(c.n);
    at.mask = align_up(cursor) + c.off_mask;
    if (c.epilogue == gemm::EpilogueOp::ReluMask) cursor = at.mask + std::size_t(c.m) * c.ldmask;
    at.c_begin = align_up(cursor);
    at.c = align_up(at.c_begin + kGuard) + c.off_c;
    at.c_end = at.c + std::size_t(c.m) * c.ldc + kGuard;
    cursor = at.c_end;
    at_.push_back(at);
  }
  total_ = align_up(cursor);
  const std::size_t bytes = std::max<std::size_t>(total_, kAlign) * sizeof(float);
  input_.reset(static_cast<float*>(std::aligned_alloc(kAlign * sizeof(float), bytes)));
  if (!input_) throw std::bad_alloc();
  std::fill(input_.get(), input_.get() + total_, 0.0f);
  std::vector<std::size_t> order(cases_.size());
  std::iota(order.begin(), order.end(), std::size_t(0));
  parallel_for(order, [&](std::size_t i) { fill(cases_[i], at_[i], input_.get()); });
}

std::vector<float> run_batch(const gemm::Variant& variant, const Batch& batch,
                             std::vector<std::string>& errors) {
  const auto& cases = batch.cases();
  const auto& at = batch.placements();
  errors.assign(cases.size(), "");
  std::vector<float> out(batch.input(), batch.input() + batch.size());

  if (variant.device == gemm::Device::CPU) {
    for (std::size_t i = 0; i < cases.size(); ++i) {
      try {
        gemm::run(variant, problem_of(cases[i], at[i], out.data()));
      } catch (const std::exception& e) {
        errors[i] = std::string("threw: ") + e.what();
      }
    }
    return out;
  }

  gemm::DeviceBuffer<float> d(batch.size());
  d.upload(batch.input(), batch.size());
  for (std::size_t i = 0; i < cases.size(); ++i) {
    try {
      gemm::run(variant, problem_of(cases[i], at[i], d.data()));
    } catch (const std::exception& e) {
      errors[i] = std::string("threw: ") + e.what();
    }
    const cudaError_t err = cudaDeviceSynchronize();
    if (err != cudaSuccess) {
      errors[i] += std::string(" CUDA error after the call: ") + cudaGetErrorName(err) + " (" +
                   cudaGetErrorString(err) + ")";
      cudaGetLastError();  // clears an ordinary error; a sticky one survives the next call
      if (cudaDeviceSynchronize() != cudaSuccess) {
        // A sticky error (illegal address, …): the context is gone; nothing after runs.
        for (std::size_t j = i + 1; j < cases.size(); ++j)
          errors[j] = "not run: the CUDA context was lost in an earlier case";
        return out;
      }
    }
  }
  d.download(out.data(), batch.size());
  return out;
}

std::string check_case(const Batch& batch, std::size_t i, const float* output, double tol,
                       double* worst_ratio_out) {
  const Case& c = batch.cases()[i];
  const Placement& at = batch.placements()[i];
  const float* in = batch.input();

  // Nothing outside the M×N region may change: guards, offset and ldc padding.
  for (std::size_t x = at.c_begin; x < at.c_end; ++x) {
    const bool inside = x >= at.c && x < at.c + std::size_t(c.m) * c.ldc &&
                        (x - at.c) % std::size_t(c.ldc) < std::size_t(c.n);
    if (!inside && bits_of(output[x]) != kSentinelBits) {
      std::ostringstream s;
      const long long rel = static_cast<long long>(x) - static_cast<long long>(at.c);
      s << c.describe() << ": wrote outside the M x N region, at C" << (rel < 0 ? "" : "+") << rel
        << " floats";
      if (rel >= 0 && rel < static_cast<long long>(c.m) * c.ldc)
        s << " (row " << rel / c.ldc << ", column " << rel % c.ldc << " >= N = " << c.n
          << ", in the ldc padding)";
      else
        s << " (in the guard " << (rel < 0 ? "before" : "after") << " C)";
      s << ": found " << output[x] << ", expected it untouched";
      return s.str();
    }
  }

  std::vector<double> dot, abs_sum;
  ref_gemm(c.op_a, c.op_b, c.m, c.n, c.k, in + at.a, c.lda, in + at.b, c.ldb, dot, abs_sum);

  long bad = 0;
  double worst_ratio = -1.0;
  int wi = 0, wj = 0;
  double w_got = 0, w_want = 0, w_bound = 0;
  for (int r = 0; r < c.m; ++r)
    for (int col = 0; col < c.n; ++col) {
      const std::size_t e = std::size_t(r) * c.n + col;
      const std::size_t x = at.c + std::size_t(r) * c.ldc + col;
      const double c0 = c.beta == 0.0f ? 0.0 : double(in[x]);
      double want = double(c.alpha) * dot[e] + double(c.beta) * c0;
      double bound =
          tol * (std::fabs(double(c.alpha)) * abs_sum[e] + std::fabs(double(c.beta) * c0)) +
          gemm::kToleranceFloor;
      // The epilogue, in double. ReLU and the mask are 1-Lipschitz, so the bound carries over.
      const double bias = in[at.bias + col];
      switch (c.epilogue) {
        case gemm::EpilogueOp::Bias:
          want += bias;
          bound += tol * std::fabs(bias);
          break;
        case gemm::EpilogueOp::BiasRelu:
          want = std::max(want + bias, 0.0);
          bound += tol * std::fabs(bias);
          break;
        case gemm::EpilogueOp::ReluMask:
          if (!(in[at.mask + std::size_t(r) * c.ldmask + col] > 0.0f)) want = 0.0;
          break;
        default:
          break;
      }
      const double got = output[x];
      const double ratio = std::isfinite(got) ? std::fabs(got - want) / bound
                                              : std::numeric_limits<double>::infinity();
      if (!(ratio <= 1.0)) ++bad;
      if (ratio > worst_ratio) {
        worst_ratio = ratio;
        wi = r, wj = col;
        w_got = got, w_want = want, w_bound = bound;
      }
    }
  if (worst_ratio_out) *worst_ratio_out = worst_ratio;
  if (bad == 0) return "";
  std::ostringstream s;
  s.precision(9);
  s << c.describe() << ": " << bad << " of " << long(c.m) * c.n
    << " elements out of bound; worst C[" << wi << "][" << wj << "] (offset "
    << long(wi) * c.ldc + wj << "): got " << w_got << ", want " << w_want << ", |diff| "
    << std::fabs(w_got - w_want) << " > bound " << w_bound << " (tol " << tol << ", ratio "
    << worst_ratio << ")";
  return s.str();
}

std::vector<std::string> run_and_check(const gemm::Variant& variant, const Batch& batch) {
  std::vector<std::string> errors;
  const std::vector<float> out = run_batch(variant, batch, errors);
  const double tol = gemm::tolerance(variant.precision);

  // The reference dominates the run time: biggest cases first, on all cores.
  std::vector<std::size_t> order(batch.cases().size());
  std::iota(order.begin(), order.end(), std::size_t(0));
  std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    return batch.cases()[x].fma_count() > batch.cases()[y].fma_count();
  });
  std::vector<std::string> verdicts(order.size());
  parallel_for(order, [&](std::size_t i) {
    if (errors[i].empty()) verdicts[i] = check_case(batch, i, out.data(), tol);
  });

  std::vector<std::string> failures;
  for (std::size_t i = 0; i < order.size(); ++i) {
    if (!errors[i].empty())
      failures.push_back(batch.cases()[i].describe() + ": " + errors[i]);
    else if (!verdicts[i].empty())
      failures.push_back(verdicts[i]);
  }
  return failures;
}

}  // namespace gemm_test
