#include "apps/gemm_bench/host_bench.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>

#include "apps/gemm_bench/device_info.h"
#include "apps/gemm_bench/report.h"
#include "base/memory_limit.h"
#include "base/openblas_threads.h"

namespace bench {
namespace {

constexpr int kCheckedElements = 64;

// Worst |c − Σ a·b| / bound over kCheckedElements sampled elements of C, in double.
double worst_sampled_error(const gemm::Problem& p, double tol, std::mt19937_64& rng) {
  const bool a_n = p.op_a == gemm::Op::N, b_n = p.op_b == gemm::Op::N;
  double worst = 0.0;
  for (int s = 0; s < kCheckedElements; ++s) {
    const int i = int(rng() % p.m), j = int(rng() % p.n);
    double dot = 0.0, scale = 0.0;
    for (int kk = 0; kk < p.k; ++kk) {
      const double x = a_n ? p.a[std::size_t(i) * p.lda + kk] : p.a[std::size_t(kk) * p.lda + i];
      const double y = b_n ? p.b[std::size_t(kk) * p.ldb + j] : p.b[std::size_t(j) * p.ldb + kk];
      dot += x * y, scale += std::fabs(x * y);
    }
    const double got = p.c[std::size_t(i) * p.ldc + j];
    const double bound = tol * scale + gemm::kToleranceFloor;
    worst = std::max(worst, std::isfinite(got) ? std::fabs(got - dot) / bound : INFINITY);
  }
  return worst;
}

// The rest of the warm-up (the checked run was the first), then timed runs until --reps or the
// time cap.
void time_host_runs(const gemm::Variant& cpu, const gemm::Problem& p, const Settings& settings,
                    Result& r) {
  using Clock = std::chrono::steady_clock;
  for (int w = 1; w < settings.warmup; ++w) gemm::run(cpu, p);
  std::vector<double> ms;
  const Clock::time_point begin = Clock::now();
  for (int rep = 0; rep < settings.reps; ++rep) {
    const Clock::time_point t0 = Clock::now();
    gemm::run(cpu, p);
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    if (rep + 1 >= kMinCappedReps && rep + 1 < settings.reps &&
        std::chrono::duration<double>(Clock::now() - begin).count() > settings.max_seconds) {
      r.status = Status::Capped;
      r.note = "capped at " + std::to_string(rep + 1) + " of " + std::to_string(settings.reps) +
               " reps by --max-seconds-per-case";
      break;
    }
  }
  r.timing = summarize(std::move(ms));
  r.tflops = r.shape.flop() / (r.timing.median_ms * 1e-3) / 1e12;
}

}  // namespace

std::uint64_t host_case_bytes(const Shape& s) {
  using gemm_mlp::byte_product;
  return byte_product({gemm_mlp::byte_sum({byte_product({std::uint64_t(s.m), std::uint64_t(s.k)}),
                                           byte_product({std::uint64_t(s.k), std::uint64_t(s.n)}),
                                           byte_product({std::uint64_t(s.m), std::uint64_t(s.n)})}),
                       sizeof(float)});
}

int run_host_bench(const std::vector<Shape>& shapes, const Settings& settings,
                   const std::string& csv, const std::string& json) {
  const std::string cpu_name = "cpu";  // named: find_variant must not see a temporary
  const gemm::Variant& cpu = gemm::find_variant(cpu_name);
  gemm::reserve_host_scratch();  // before the operands' memory
  std::printf(
      "device: host CPU (OpenBLAS%s); method: validate %d sampled elements in double, "
      "%d warm-up + %d timed runs (steady clock), median\n",
      gemm_mlp::openblas_threads_capped() ? ", one thread under this ulimit -v" : "",
      kCheckedElements, settings.warmup, settings.reps);
  print_host_table_header();
  std::mt19937_64 rng(settings.seed);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  std::vector<Result> results;
  int failed = 0;
  for (const Shape& shape : shapes) {
    std::vector<float> a(std::size_t(shape.m) * shape.k), b(std::size_t(shape.k) * shape.n),
        c(std::size_t(shape.m) * shape.n, NAN);
    for (float& x : a) x = value(rng);
    for (float& x : b) x = value(rng);
    const gemm::Problem p = tight_problem(shape, a.data(), b.data(), c.data());
    Result r;
    r.shape = shape;
    r.variant = cpu.name;
    r.precision = cpu.precision;
    gemm::run(cpu, p);
    r.max_err_ratio = worst_sampled_error(p, gemm::tolerance(cpu.precision), rng);
    if (r.max_err_ratio <= 1.0) {
      time_host_runs(cpu, p, settings, r);
    } else {
      r.status = Status::Failed;
      ++failed;
    }
    print_host_table_row(r);
    results.push_back(r);
  }
  if (!csv.empty()) write_csv(csv, host_info(), results);
  if (!json.empty()) write_json(json, host_info(), {settings, 0, kHostTiming}, results);
  return failed ? 1 : 0;
}

}  // namespace bench
