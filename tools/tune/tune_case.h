// One problem of a tune sweep: random A and B on the device, cuBLAS fp32's C for them, and the
// timing of a launch through gemm_bench's harness (apps/bench_common/timing.h: L2 flushed and C
// poisoned with NaN before every run, median of the runs).
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "apps/bench_common/shapes.h"
#include "apps/bench_common/timing.h"
#include "base/device_buffer.h"
#include "kernels/launchers.h"

namespace tune {

// Whether tune program `program` can run here: a usable CUDA device and, with needs_wgmma, one
// that runs the sm_90a steps; otherwise says why on stderr.
inline bool device_ready(const char* program, bool needs_wgmma) {
  if (!gemm::cuda_device_available()) {
    std::fprintf(stderr, "%s: no usable CUDA device\n", program);
    return false;
  }
  if (const char* why = needs_wgmma ? gemm::detail::wgmma_unavailable() : nullptr) {
    std::fprintf(stderr, "%s: %s\n", program, why);
    return false;
  }
  return true;
}

class Case {
 public:
  Case(const bench::Shape& shape, bench::Timer& timer)
      : shape_(shape),
        timer_(timer),
        a_(random_values(std::size_t(shape.m) * shape.k, 1)),
        b_(random_values(std::size_t(shape.k) * shape.n, 2)),
        c_(std::size_t(shape.m) * shape.n),
        p_(bench::tight_problem(shape, a_.data(), b_.data(), c_.data())) {
    gemm::detail::launch_cublas(p_, timer.stream());
    want_ = c_.download(timer.stream());
  }

  const gemm::Problem& problem() const { return p_; }
  std::string name() const { return shape_.text() + " " + shape_.layout(); }
  double tflops(double ms) const { return shape_.flop() / ms / 1e9; }

  // The median time of launch(problem(), stream) in ms. Afterwards C holds its result.
  template <class Launch>
  double median_ms(Launch&& launch) {
    const cudaStream_t stream = timer_.stream();
    const bench::Timing t =
        timer_.time([&] { launch(p_, stream); }, [&] { c_.fill_bytes(0xFF, stream); });  // NaN
    return t.median_ms;
  }

  // cuBLAS fp32 and TF32 on this problem, the baselines, printed on a line with name().
  struct Baselines {
    double fp32_ms, tf32_ms;
  };
  Baselines time_cublas() {
    const Baselines b{median_ms(gemm::detail::launch_cublas),
                      median_ms(gemm::detail::launch_cublas_tf32)};
    std::printf("%s  cublas %.1f TF  cublas_tf32 %.1f TF\n", name().c_str(), tflops(b.fp32_ms),
                tflops(b.tf32_ms));
    return b;
  }

  // Times launch on this problem and prints its row beside the baselines: TFLOP/s, % of cuBLAS
  // fp32 and TF32, µs and the largest difference from cuBLAS fp32.
  template <class Launch>
  void print_timed(const char* label, Launch&& launch, const Baselines& cublas) {
    const double ms = median_ms(launch);
    std::printf(
        "  %-16s %7.2f TF  %6.1f%% of cublas  %6.1f%% of cublas_tf32  %7.1f us  maxerr %.2e\n",
        label, tflops(ms), 100.0 * cublas.fp32_ms / ms, 100.0 * cublas.tf32_ms / ms, 1e3 * ms,
        max_error());
  }

  // The largest |C − C_cuBLAS| after the latest launch; NaN when an element is NaN (a missed
  // element keeps its poison).
  double max_error() const {
    const std::vector<float> got = c_.download(timer_.stream());
    double worst = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
      const double e = std::fabs(double(got[i]) - want_[i]);
      if (std::isnan(e)) return NAN;
      worst = std::max(worst, e);
    }
    return worst;
  }

 private:
  static std::vector<float> random_values(std::size_t n, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> uniform(-1, 1);
    std::vector<float> v(n);
    for (float& x : v) x = uniform(rng);
    return v;
  }

  bench::Shape shape_;
  bench::Timer& timer_;
  gemm::DeviceBuffer<float> a_, b_, c_;
  gemm::Problem p_;
  std::vector<float> want_;
};

}  // namespace tune
