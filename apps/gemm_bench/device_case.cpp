#include "apps/gemm_bench/device_case.h"

#include <algorithm>
#include <sstream>
#include <vector>

#include "apps/gemm_bench/bench_kernels.h"
#include "base/cuda_check.h"
#include "base/memory_limit.h"

namespace bench {

DeviceCase::DeviceCase(const Shape& shape, const Settings& settings, Timer& timer)
    : shape_(shape),
      settings_(settings),
      timer_(timer),
      a_(std::size_t(shape.m) * shape.k),
      b_(std::size_t(shape.k) * shape.n),
      c_(std::size_t(shape.m) * shape.n),
      ref_(c_.size()),
      scale_(c_.size()) {
  const cudaStream_t stream = timer.stream();
  fill_random(a_.data(), a_.size(), settings.seed ^ (0xA000ull + shape.m * 31ull + shape.k),
              stream);
  fill_random(b_.data(), b_.size(), settings.seed ^ (0xB000ull + shape.n * 37ull + shape.k),
              stream);
  gemm::run("cublas", tight_problem(shape, a_.data(), b_.data(), ref_.data()), stream);
  // scale = |A|·|B| = Σ_k |a_ik·b_kj|.
  gemm::DeviceBuffer<float> abs_a(a_.size()), abs_b(b_.size());
  abs_copy(abs_a.data(), a_.data(), a_.size(), stream);
  abs_copy(abs_b.data(), b_.data(), b_.size(), stream);
  gemm::run("cublas", tight_problem(shape, abs_a.data(), abs_b.data(), scale_.data()), stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));
}

std::uint64_t DeviceCase::bytes_needed(const Shape& s) {
  using gemm_mlp::byte_product;
  const std::uint64_t a = byte_product({std::uint64_t(s.m), std::uint64_t(s.k)}),
                      b = byte_product({std::uint64_t(s.k), std::uint64_t(s.n)}),
                      c = byte_product({std::uint64_t(s.m), std::uint64_t(s.n)});
  // a_, b_ and their |·| copies; c_, ref_ and scale_.
  return byte_product({gemm_mlp::byte_sum({a, a, b, b, c, c, c}), sizeof(float)});
}

Result DeviceCase::measure(const gemm::Variant& v) {
  Result r;
  r.shape = shape_;
  r.variant = v.name;
  r.precision = v.precision;
  const gemm::Problem p = tight_problem(shape_, a_.data(), b_.data(), c_.data());
  bool validated = false;
  try {
    if (!validate(v, p, r)) return r;
    validated = true;
    time_runs(v, p, r);
  } catch (const gemm::Error& e) {
    r.status = Status::Failed;
    r.note = validated ? std::string("while timing: ") + e.what() : e.what();
  }
  return r;
}

bool DeviceCase::validate(const gemm::Variant& v, const gemm::Problem& p, Result& r) {
  const cudaStream_t stream = timer_.stream();
  poison_c();
  gemm::run(v, p, stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));
  const double tol = gemm::tolerance(v.precision) + gemm::tolerance(gemm::Precision::FP32);
  const Comparison cmp = compare(c_.data(), ref_.data(), scale_.data(), c_.size(), tol, stream);
  r.max_err_ratio = cmp.worst_ratio;
  if (cmp.bad == 0) return true;
  std::ostringstream msg;
  msg.precision(8);
  msg << cmp.bad << " of " << c_.size() << " elements off; worst C[" << cmp.worst_index / shape_.n
      << "][" << cmp.worst_index % shape_.n << "] got " << cmp.got << " want " << cmp.want
      << " bound " << cmp.bound;
  r.status = Status::Failed;
  r.note = msg.str();
  return false;
}

std::vector<gemm::phase_times::Row> DeviceCase::record_phases(const gemm::Variant& v, int calls) {
  const gemm::Problem p = tight_problem(shape_, a_.data(), b_.data(), c_.data());
  Result r;
  if (!validate(v, p, r)) throw gemm::Error(v.name + std::string(" is wrong here: ") + r.note);
  const Timer::WarmGraph graph(
      timer_.stream(), [&] { v.launch(p, timer_.stream()); }, calls);
  CUDA_CHECK(cudaGraphLaunch(graph.exec, timer_.stream()));  // warm: nothing recorded
  CUDA_CHECK(cudaStreamSynchronize(timer_.stream()));
  gemm::phase_times::start();
  CUDA_CHECK(cudaGraphLaunch(graph.exec, timer_.stream()));
  CUDA_CHECK(cudaStreamSynchronize(timer_.stream()));
  std::vector<gemm::phase_times::Row> rows = gemm::phase_times::collect();
  gemm::phase_times::stop();
  return rows;
}

void DeviceCase::time_runs(const gemm::Variant& v, const gemm::Problem& p, Result& r) {
  const Timer::Step launch = [&] { v.launch(p, timer_.stream()); };
  const Timer::Step poison = [&] { poison_c(); };

  // Warm up, estimating the time per run; a slow case stops early.
  std::vector<double> warm_ms;
  for (int i = 0; i < std::max(1, settings_.warmup); ++i) {
    warm_ms.push_back(timer_.time_once(launch, poison));
    if (warm_ms.back() * 1e-3 * (i + 1) > settings_.max_seconds / 4) break;
  }
  const double est_s = *std::min_element(warm_ms.begin(), warm_ms.end()) * 1e-3;

  int reps = settings_.reps;
  if (est_s * reps > settings_.max_seconds) {
    if (settings_.skip_slow) {
      r.status = Status::Skipped;
      r.note = "--skip-slow: " + std::to_string(reps) + " reps would take about " +
               std::to_string(int(est_s * reps)) + " s";
      return;
    }
    reps = std::max(kMinCappedReps, int(settings_.max_seconds / est_s));
    if (reps < settings_.reps) {
      r.status = Status::Capped;
      r.note = "capped at " + std::to_string(reps) + " of " + std::to_string(settings_.reps) +
               " reps by --max-seconds-per-case";
    } else {
      reps = settings_.reps;
    }
  }

  std::vector<double> ms;
  for (int i = 0; i < reps; ++i) ms.push_back(timer_.time_once(launch, poison));
  r.timing = summarize(std::move(ms));
  r.tflops = shape_.flop() / (r.timing.median_ms * 1e-3) / 1e12;
  time_warm(launch, est_s, r);
}

void DeviceCase::time_warm(const Timer::Step& launch, double est_s, Result& r) {
  if (settings_.warm_calls == 0) return;
  // The flushed estimate bounds a warm call's time; a slow case captures fewer calls.
  const int replays = settings_.warm_replays;
  const double per_call_budget = settings_.max_seconds / (replays + 2);
  const int calls = std::max(1, std::min(settings_.warm_calls, int(per_call_budget / est_s)));
  if (calls < settings_.warm_calls) {
    r.note += std::string(r.note.empty() ? "" : "; ") + "warm: " + std::to_string(calls) +
              " calls a graph (--max-seconds-per-case)";
  }
  r.warm = timer_.time_warm(launch, calls, replays);
  r.warm_tflops = shape_.flop() / (r.warm.median_ms * 1e-3) / 1e12;
}

}  // namespace bench
