// gemm_bench: times the device GEMM variants against cuBLAS, after validating each one.
//
//   gemm_bench                                   every device variant, the default shapes
//   gemm_bench --variants naive,vec --shapes 4096,256x1024x784:NT --csv out.csv
//   gemm_bench --list
//
// Method, per shape and variant:
//   1. Validate: C poisoned with NaN, one run, compared element-wise with cuBLAS fp32 (TF32 off)
//      on the same inputs: |c − ref| ≤ tol·Σ_k|a_ik·b_kj| + tiny, Σ|a·b| computed as |A|·|B|.
//      tol = 1e-5 (FP32 variants) or 2e-3 (TF32 variants), plus 1e-5 for the reference's own fp32
//      rounding. A failing variant is reported FAILED and makes the exit status 1.
//   2. Warm up (--warmup runs), then --reps timed runs. Before each run, outside the timed region:
//      C is poisoned again (stale C cannot help) and a buffer of 2× the L2 size is written, so
//      every run starts with a cold L2. The flush also keeps the GPU busy while the host queues
//      the start event and the launch, so host launch overhead does not leak into the timing.
//      Each run is timed with its own pair of CUDA events; we report median, min and p90.
//      Timed runs call the variant's launcher directly (the validated problem is reused), so the
//      per-call argument checks of gemm::run are not timed.
//   3. cuBLAS fp32 is always timed on the same shape, and cuBLAS TF32 beside any TF32 variant.
//
// --max-seconds-per-case caps the timed reps of a slow case (naive at 8192³): it then runs fewer
// reps, at least 3, and says so in the table and files. --skip-slow skips such a case instead.
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "apps/gemm_bench/bench_kernels.h"
#include "kernels/cuda_check.h"
#include "kernels/gemm.h"

namespace {

using gemm::Op;

constexpr double kRefTol = 1e-5;  // the cuBLAS fp32 reference's own rounding
constexpr int kMinCappedReps = 3;

double tolerance(gemm::Precision p) { return p == gemm::Precision::TF32 ? 2e-3 : 1e-5; }
const char* precision_name(gemm::Precision p) {
  return p == gemm::Precision::TF32 ? "TF32" : "FP32";
}

struct Shape {
  int m, n, k;
  Op op_a = Op::N, op_b = Op::N;
  std::string text() const {
    return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
  }
  std::string layout() const { return gemm::layout_name(op_a, op_b); }
};

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// "4096" (square, NN), "256x1024x784" (NN) or "256x1024x784:NT".
Shape parse_shape(const std::string& s) {
  const auto bad = [&](const std::string& why) {
    return UsageError("bad --shapes entry '" + s + "': " + why +
                      " (expected N, MxNxK or MxNxK:LAYOUT with LAYOUT one of NN, NT, TN, TT)");
  };
  std::string dims = s, layout = "NN";
  if (const auto colon = s.find(':'); colon != std::string::npos) {
    dims = s.substr(0, colon);
    layout = s.substr(colon + 1);
    for (char& ch : layout) ch = char(std::toupper(static_cast<unsigned char>(ch)));
  }
  if (layout.size() != 2 || (layout[0] != 'N' && layout[0] != 'T') ||
      (layout[1] != 'N' && layout[1] != 'T'))
    throw bad("unknown layout '" + layout + "'");
  std::vector<long> v;
  std::stringstream ss(dims);
  for (std::string part; std::getline(ss, part, 'x');) {
    if (part.empty() || part.find_first_not_of("0123456789") != std::string::npos)
      throw bad("'" + part + "' is not a positive integer");
    v.push_back(std::stol(part));
  }
  if (v.size() == 1) v = {v[0], v[0], v[0]};
  if (v.size() != 3) throw bad("need 1 or 3 dimensions");
  for (long x : v)
    if (x < 1 || x > 65536) throw bad("dimensions must be in 1..65536");
  return {int(v[0]), int(v[1]), int(v[2]), Op(layout[0]), Op(layout[1])};
}

std::vector<Shape> default_shapes() {
  std::vector<Shape> out;
  for (int s : {256, 512, 1024, 2048, 4096, 8192}) out.push_back({s, s, s});
  // The MLP's (784-1024-1024-10 at batch 256): forward NT, input gradient NN, weight gradient TN,
  // and the output layer's forward.
  out.push_back({256, 1024, 784, Op::N, Op::T});
  out.push_back({256, 784, 1024, Op::N, Op::N});
  out.push_back({1024, 784, 256, Op::T, Op::N});
  out.push_back({256, 10, 1024, Op::N, Op::T});
  return out;
}

struct DeviceBuffer {
  float* p = nullptr;
  explicit DeviceBuffer(std::size_t n) {
    CUDA_CHECK(
        cudaMalloc(reinterpret_cast<void**>(&p), std::max<std::size_t>(n, 1) * sizeof(float)));
  }
  ~DeviceBuffer() { cudaFree(p); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

struct Events {
  cudaEvent_t start = nullptr, stop = nullptr;
  Events() {
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
  }
  ~Events() {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
  }
};

struct Result {
  Shape shape;
  std::string variant;
  gemm::Precision precision = gemm::Precision::FP32;
  std::string status = "ok";  // ok, capped, FAILED, skipped
  std::string note;
  int reps = 0;
  double ms_median = NAN, ms_min = NAN, ms_p90 = NAN;
  double tflops = NAN, pct_cublas = NAN, pct_cublas_tf32 = NAN;
  double max_err_ratio = NAN;
};

struct Settings {
  int reps = 30;
  int warmup = 5;
  double max_seconds = 20.0;
  bool skip_slow = false;
  std::uint64_t seed = 1234;
  std::string auto_table;  // where to write the `auto` variant's table, if anywhere
};

// One shape's inputs and reference on the device, shared by every variant.
class Bench {
 public:
  Bench(const Shape& s, const Settings& settings, cudaStream_t stream, float* flush,
        std::size_t flush_bytes)
      : s_(s),
        set_(settings),
        stream_(stream),
        flush_(flush),
        flush_bytes_(flush_bytes),
        na_(std::size_t(s.m) * s.k),
        nb_(std::size_t(s.k) * s.n),
        nc_(std::size_t(s.m) * s.n),
        a_(na_),
        b_(nb_),
        c_(nc_),
        ref_(nc_),
        scale_(nc_) {
    bench::fill_random(a_.p, na_, settings.seed ^ (0xA000ull + s.m * 31ull + s.k), stream);
    bench::fill_random(b_.p, nb_, settings.seed ^ (0xB000ull + s.n * 37ull + s.k), stream);
    // Reference: cuBLAS fp32; scale: |A|·|B| = Σ_k |a_ik·b_kj|.
    gemm::run("cublas", problem(a_.p, b_.p, ref_.p), stream);
    {
      DeviceBuffer abs_a(na_), abs_b(nb_);
      bench::abs_copy(abs_a.p, a_.p, na_, stream);
      bench::abs_copy(abs_b.p, b_.p, nb_, stream);
      gemm::run("cublas", problem(abs_a.p, abs_b.p, scale_.p), stream);
      CUDA_CHECK(cudaStreamSynchronize(stream));
    }
  }

  Result measure(const gemm::Variant& v) {
    Result r;
    r.shape = s_;
    r.variant = v.name;
    r.precision = v.precision;
    const gemm::Problem p = problem(a_.p, b_.p, c_.p);

    // 1. Validate.
    try {
      poison_c();
      gemm::run(v, p, stream_);
      CUDA_CHECK(cudaStreamSynchronize(stream_));
      const double tol = tolerance(v.precision) + kRefTol;
      const bench::Comparison cmp = bench::compare(c_.p, ref_.p, scale_.p, nc_, tol, stream_);
      r.max_err_ratio = cmp.worst_ratio;
      if (cmp.bad > 0) {
        std::ostringstream msg;
        msg.precision(8);
        msg << cmp.bad << " of " << nc_ << " elements off; worst C[" << cmp.worst_index / s_.n
            << "][" << cmp.worst_index % s_.n << "] got " << cmp.got << " want " << cmp.want
            << " bound " << cmp.bound;
        r.status = "FAILED";
        r.note = msg.str();
        return r;
      }
    } catch (const gemm::Error& e) {
      r.status = "FAILED";
      r.note = e.what();
      return r;
    }

    try {
      time_runs(v, p, r);
    } catch (const gemm::Error& e) {
      r.status = "FAILED";
      r.note = std::string("while timing: ") + e.what();
    }
    return r;
  }

 private:
  // Warm-up, then the timed runs; fills r's timings (or marks it skipped or capped).
  void time_runs(const gemm::Variant& v, const gemm::Problem& p, Result& r) {
    // 2. Warm up, estimating the time per run.
    Events ev;
    std::vector<double> warm_ms;
    const auto timed_run = [&] {
      poison_c();
      CUDA_CHECK(cudaMemsetAsync(flush_, 0, flush_bytes_, stream_));
      CUDA_CHECK(cudaEventRecord(ev.start, stream_));
      v.launch(p, stream_);
      CUDA_CHECK(cudaEventRecord(ev.stop, stream_));
      CUDA_CHECK(cudaEventSynchronize(ev.stop));
      float ms = 0;
      CUDA_CHECK(cudaEventElapsedTime(&ms, ev.start, ev.stop));
      return double(ms);
    };
    for (int i = 0; i < std::max(1, set_.warmup); ++i) {
      warm_ms.push_back(timed_run());
      if (warm_ms.back() * 1e-3 * (i + 1) > set_.max_seconds / 4) break;  // slow: enough warm-up
    }
    const double est_s = *std::min_element(warm_ms.begin(), warm_ms.end()) * 1e-3;

    int reps = set_.reps;
    if (est_s * reps > set_.max_seconds) {
      if (set_.skip_slow) {
        r.status = "skipped";
        r.note = "--skip-slow: " + std::to_string(reps) + " reps would take about " +
                 std::to_string(int(est_s * reps)) + " s";
        return;
      }
      reps = std::max(kMinCappedReps, int(set_.max_seconds / est_s));
      if (reps < set_.reps) {
        r.status = "capped";
        r.note = "capped at " + std::to_string(reps) + " of " + std::to_string(set_.reps) +
                 " reps by --max-seconds-per-case";
      } else {
        reps = set_.reps;
      }
    }

    // 3. Time.
    std::vector<double> ms;
    for (int i = 0; i < reps; ++i) ms.push_back(timed_run());
    std::sort(ms.begin(), ms.end());
    r.reps = reps;
    r.ms_min = ms.front();
    r.ms_median =
        ms.size() % 2 ? ms[ms.size() / 2] : 0.5 * (ms[ms.size() / 2 - 1] + ms[ms.size() / 2]);
    r.ms_p90 = ms[std::min(ms.size() - 1, std::size_t(std::ceil(0.9 * ms.size())) - 1)];
    r.tflops = 2.0 * s_.m * double(s_.n) * s_.k / (r.ms_median * 1e-3) / 1e12;
  }

  gemm::Problem problem(const float* a, const float* b, float* c) const {
    gemm::Problem p;
    p.op_a = s_.op_a;
    p.op_b = s_.op_b;
    p.m = s_.m, p.n = s_.n, p.k = s_.k;
    p.a = a, p.b = b, p.c = c;
    p.lda = s_.op_a == Op::N ? s_.k : s_.m;  // tight leading dimensions
    p.ldb = s_.op_b == Op::N ? s_.n : s_.k;
    p.ldc = s_.n;
    p.alpha = 1.0f, p.beta = 0.0f;
    return p;
  }
  void poison_c() { CUDA_CHECK(cudaMemsetAsync(c_.p, 0xFF, nc_ * sizeof(float), stream_)); }  // NaN

  Shape s_;
  Settings set_;
  cudaStream_t stream_;
  float* flush_;
  std::size_t flush_bytes_;
  std::size_t na_, nb_, nc_;
  DeviceBuffer a_, b_, c_, ref_, scale_;
};

std::string fmt(double x, int decimals) {
  if (std::isnan(x)) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, x);
  return buf;
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += ch;
    } else if (static_cast<unsigned char>(ch) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", ch);
      out += buf;
    } else {
      out += ch;
    }
  }
  return out + "\"";
}
std::string json_number(double x, int decimals = 6) {
  return std::isnan(x) || std::isinf(x) ? "null" : fmt(x, decimals);
}
std::string json_sci(double x) {  // small ratios keep their digits
  if (std::isnan(x) || std::isinf(x)) return "null";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3e", x);
  return buf;
}
std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char ch : s) out += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return out + "\"";
}

struct DeviceInfo {
  std::string name;
  int sms = 0, clock_mhz = 0, mem_clock_mhz = 0, cc_major = 0, cc_minor = 0;
  long long l2_bytes = 0, mem_bytes = 0;
  int runtime = 0, driver = 0, cublas = 0;
};

std::string version_text(int v) {  // 13000 → "13.0"
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

DeviceInfo device_info(int device) {
  DeviceInfo d;
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  d.name = prop.name;
  d.sms = prop.multiProcessorCount;
  d.cc_major = prop.major, d.cc_minor = prop.minor;
  d.l2_bytes = prop.l2CacheSize;
  d.mem_bytes = static_cast<long long>(prop.totalGlobalMem);
  int khz = 0;
  if (cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, device) == cudaSuccess)
    d.clock_mhz = khz / 1000;
  if (cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, device) == cudaSuccess)
    d.mem_clock_mhz = khz / 1000;
  cudaGetLastError();
  CUDA_CHECK(cudaRuntimeGetVersion(&d.runtime));
  CUDA_CHECK(cudaDriverGetVersion(&d.driver));
  int major = 0, minor = 0, patch = 0;
  if (cublasGetProperty(MAJOR_VERSION, &major) == CUBLAS_STATUS_SUCCESS &&
      cublasGetProperty(MINOR_VERSION, &minor) == CUBLAS_STATUS_SUCCESS &&
      cublasGetProperty(PATCH_LEVEL, &patch) == CUBLAS_STATUS_SUCCESS)
    d.cublas = major * 10000 + minor * 100 + patch;
  return d;
}

void write_csv(const std::string& path, const DeviceInfo& d, const std::vector<Result>& rs) {
  std::ofstream f(path);
  if (!f) throw UsageError("cannot write --csv file '" + path + "'");
  f << "device,m,n,k,layout,variant,precision,status,reps,ms_median,ms_min,ms_p90,tflops,"
       "pct_cublas,pct_cublas_tf32,max_err_ratio,note\n";
  for (const Result& r : rs)
    f << csv_field(d.name) << ',' << r.shape.m << ',' << r.shape.n << ',' << r.shape.k << ','
      << r.shape.layout() << ',' << r.variant << ',' << precision_name(r.precision) << ','
      << r.status << ',' << r.reps << ',' << json_number(r.ms_median) << ','
      << json_number(r.ms_min) << ',' << json_number(r.ms_p90) << ',' << json_number(r.tflops, 4)
      << ',' << json_number(r.pct_cublas, 2) << ',' << json_number(r.pct_cublas_tf32, 2) << ','
      << json_sci(r.max_err_ratio) << ',' << csv_field(r.note) << '\n';
  if (!f) throw UsageError("failed writing '" + path + "'");
}

// The `auto` variant's table (kernels/auto_table.inc): for each measured shape and layout, the
// fastest of this project's fp32 kernels that passed validation. cuBLAS, TF32 kernels and auto
// itself are not candidates.
void write_auto_table(const std::string& path, const DeviceInfo& d, const std::vector<Result>& rs) {
  std::map<std::string, const Result*> best;  // key: shape and layout
  for (const Result& r : rs) {
    const gemm::Variant& v = gemm::find_variant(r.variant);
    const bool candidate = v.memory == gemm::Memory::Device &&
                           v.precision == gemm::Precision::FP32 && r.variant != "auto" &&
                           r.variant.rfind("cublas", 0) != 0 &&
                           (r.status == "ok" || r.status == "capped") && std::isfinite(r.ms_median);
    if (!candidate) continue;
    const std::string key = r.shape.text() + ":" + r.shape.layout();
    if (!best.count(key) || r.ms_median < best[key]->ms_median) best[key] = &r;
  }
  std::ofstream f(path);
  if (!f) throw UsageError("cannot write --auto-table file '" + path + "'");
  f << "// Written by gemm_bench --auto-table; one line per measured shape and layout:\n"
    << "// {device, layout, M, N, K, fastest correct fp32 variant of this project}.\n";
  for (const auto& [key, r] : best)
    f << "{" << json_string(d.name) << ", \"" << r->shape.layout() << "\", " << r->shape.m << ", "
      << r->shape.n << ", " << r->shape.k << ", " << json_string(r->variant) << "},\n";
  if (!f) throw UsageError("failed writing --auto-table file '" + path + "'");
}

void write_json(const std::string& path, const DeviceInfo& d, const Settings& set,
                std::size_t flush_bytes, const std::vector<Result>& rs) {
  std::ofstream f(path);
  if (!f) throw UsageError("cannot write --json file '" + path + "'");
  f << "{\n  \"device\": {\"name\": " << json_string(d.name) << ", \"compute_capability\": \""
    << d.cc_major << "." << d.cc_minor << "\", \"sms\": " << d.sms
    << ", \"clock_mhz\": " << d.clock_mhz << ", \"memory_clock_mhz\": " << d.mem_clock_mhz
    << ", \"l2_bytes\": " << d.l2_bytes << ", \"memory_bytes\": " << d.mem_bytes << "},\n";
  f << "  \"cuda_runtime\": \"" << version_text(d.runtime) << "\", \"cuda_driver\": \""
    << version_text(d.driver) << "\", \"cublas\": " << d.cublas << ",\n";
  f << "  \"method\": {\"reps\": " << set.reps << ", \"warmup\": " << set.warmup
    << ", \"max_seconds_per_case\": " << json_number(set.max_seconds, 1)
    << ", \"l2_flush_bytes\": " << flush_bytes
    << ", \"timing\": \"CUDA events per run, median of reps\", \"alpha\": 1, \"beta\": 0},\n";
  f << "  \"results\": [\n";
  for (std::size_t i = 0; i < rs.size(); ++i) {
    const Result& r = rs[i];
    f << "    {\"m\": " << r.shape.m << ", \"n\": " << r.shape.n << ", \"k\": " << r.shape.k
      << ", \"layout\": \"" << r.shape.layout() << "\", \"variant\": " << json_string(r.variant)
      << ", \"precision\": \"" << precision_name(r.precision) << "\", \"status\": \"" << r.status
      << "\", \"reps\": " << r.reps << ", \"ms_median\": " << json_number(r.ms_median)
      << ", \"ms_min\": " << json_number(r.ms_min) << ", \"ms_p90\": " << json_number(r.ms_p90)
      << ", \"tflops\": " << json_number(r.tflops, 4)
      << ", \"pct_cublas\": " << json_number(r.pct_cublas, 2)
      << ", \"pct_cublas_tf32\": " << json_number(r.pct_cublas_tf32, 2)
      << ", \"max_err_ratio\": " << json_sci(r.max_err_ratio)
      << ", \"note\": " << json_string(r.note) << "}" << (i + 1 < rs.size() ? "," : "") << "\n";
  }
  f << "  ]\n}\n";
  if (!f) throw UsageError("failed writing '" + path + "'");
}

void print_variants() {
  std::printf("%-14s %-7s %-5s %s\n", "variant", "memory", "prec", "summary");
  for (const gemm::Variant& v : gemm::variants())
    std::printf("%-14s %-7s %-5s %s\n", v.name,
                v.memory == gemm::Memory::Device ? "device" : "host", precision_name(v.precision),
                v.summary);
}

// --variants cpu: the host variant (OpenBLAS), timed on its own with a steady clock around each
// call (no GPU needed). Inputs are random in [-1, 1], C poisoned with NaN; 64 sampled elements are
// checked against double-precision dot products with the fp32 tolerance before timing.
int run_host_bench(const std::vector<Shape>& shapes, const Settings& set, const std::string& csv) {
  const gemm::Variant& cpu = gemm::find_variant("cpu");
  std::vector<Result> results;
  std::printf(
      "device: host CPU (OpenBLAS); method: validate 64 sampled elements in double, "
      "%d warm-up + %d timed runs (steady clock), median\n",
      set.warmup, set.reps);
  std::printf("%-18s %-6s %10s %10s %10s\n", "shape", "layout", "ms", "GFLOP/s", "check");
  std::mt19937_64 rng(set.seed);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  int failed = 0;
  for (const Shape& sh : shapes) {
    const bool an = sh.op_a == Op::N, bn = sh.op_b == Op::N;
    gemm::Problem p;
    p.op_a = sh.op_a, p.op_b = sh.op_b, p.m = sh.m, p.n = sh.n, p.k = sh.k;
    p.lda = an ? sh.k : sh.m, p.ldb = bn ? sh.n : sh.k, p.ldc = sh.n;
    std::vector<float> a(size_t(sh.m) * sh.k), b(size_t(sh.k) * sh.n), c(size_t(sh.m) * sh.n, NAN);
    for (float& x : a) x = value(rng);
    for (float& x : b) x = value(rng);
    p.a = a.data(), p.b = b.data(), p.c = c.data();
    Result r;
    r.shape = sh;
    r.variant = cpu.name;
    gemm::run(cpu, p);
    // The check: |c − Σ a·b| ≤ 1e-5·Σ|a·b| + tiny at sampled elements.
    double worst = 0.0;
    for (int s = 0; s < 64; ++s) {
      const int i = int(rng() % sh.m), j = int(rng() % sh.n);
      double dot = 0.0, scale = 0.0;
      for (int kk = 0; kk < sh.k; ++kk) {
        const double x = an ? a[size_t(i) * p.lda + kk] : a[size_t(kk) * p.lda + i];
        const double y = bn ? b[size_t(kk) * p.ldb + j] : b[size_t(j) * p.ldb + kk];
        dot += x * y, scale += std::fabs(x * y);
      }
      const double got = c[size_t(i) * p.ldc + j];
      const double ratio =
          std::isfinite(got) ? std::fabs(got - dot) / (1e-5 * scale + 1e-20) : INFINITY;
      worst = std::max(worst, ratio);
    }
    r.max_err_ratio = worst;
    if (!(worst <= 1.0)) {
      r.status = "FAILED";
      ++failed;
    } else {
      using Clock = std::chrono::steady_clock;
      for (int w = 1; w < set.warmup; ++w) gemm::run(cpu, p);
      std::vector<double> ms;
      const Clock::time_point begin = Clock::now();
      for (int rep = 0; rep < set.reps; ++rep) {
        const Clock::time_point t0 = Clock::now();
        gemm::run(cpu, p);
        ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
        if (rep >= 2 &&
            std::chrono::duration<double>(Clock::now() - begin).count() > set.max_seconds) {
          r.status = "capped";
          break;
        }
      }
      std::sort(ms.begin(), ms.end());
      r.reps = int(ms.size());
      r.ms_median = ms[ms.size() / 2];
      r.ms_min = ms.front();
      r.ms_p90 = ms[std::min(ms.size() - 1, ms.size() * 9 / 10)];
      r.tflops = 2.0 * sh.m * double(sh.n) * sh.k / (r.ms_median * 1e-3) / 1e12;
    }
    std::printf("%-18s %-6s %10s %10s %10s\n", sh.text().c_str(), sh.layout().c_str(),
                fmt(r.ms_median, 3).c_str(), fmt(1e3 * r.tflops, 1).c_str(), r.status.c_str());
    results.push_back(r);
  }
  if (!csv.empty()) {
    DeviceInfo host;
    host.name = "host CPU (OpenBLAS)";
    write_csv(csv, host, results);
  }
  return failed ? 1 : 0;
}

int run_bench(const std::vector<std::string>& variant_names,
              const std::vector<std::string>& shape_texts, const Settings& set, int device,
              const std::string& csv, const std::string& json) {
  // Variants: the requested ones (default: every device variant), plus the cuBLAS baselines.
  std::vector<const gemm::Variant*> chosen;
  if (variant_names.empty()) {
    for (const gemm::Variant& v : gemm::variants())
      if (v.memory == gemm::Memory::Device) chosen.push_back(&v);
  } else {
    for (const std::string& name : variant_names) {
      const gemm::Variant* v;
      try {
        v = &gemm::find_variant(name);
      } catch (const gemm::Error& e) {
        throw UsageError(e.what());
      }
      if (v->memory != gemm::Memory::Device) {
        if (variant_names.size() > 1)
          throw UsageError("variant '" + name +
                           "' runs on the host: time it on its own (--variants " + name + ")");
        std::vector<Shape> host_shapes;
        for (const std::string& t : shape_texts) host_shapes.push_back(parse_shape(t));
        if (host_shapes.empty())
          for (int n : {256, 512, 1024}) host_shapes.push_back({n, n, n});
        return run_host_bench(host_shapes, set, csv);
      }
      if (std::find(chosen.begin(), chosen.end(), v) == chosen.end()) chosen.push_back(v);
    }
  }
  const gemm::Variant& cublas = gemm::find_variant("cublas");
  const gemm::Variant& cublas_tf32 = gemm::find_variant("cublas_tf32");
  const bool any_tf32 = std::any_of(chosen.begin(), chosen.end(), [](const gemm::Variant* v) {
    return v->precision == gemm::Precision::TF32;
  });
  // Timing order: baselines first (the percentages need them); print order: the table's.
  std::vector<const gemm::Variant*> order = {&cublas};
  if (any_tf32) order.push_back(&cublas_tf32);
  for (const gemm::Variant* v : chosen)
    if (std::find(order.begin(), order.end(), v) == order.end()) order.push_back(v);

  std::vector<Shape> shapes;
  if (shape_texts.empty())
    shapes = default_shapes();
  else
    for (const std::string& t : shape_texts) shapes.push_back(parse_shape(t));

  // The GPU.
  if (!gemm::cuda_device_available()) {
    int count = 0;
    const cudaError_t err = cudaGetDeviceCount(&count);
    throw UsageError(std::string("no NVIDIA driver or GPU found (cudaGetDeviceCount: ") +
                     (err == cudaSuccess ? "0 devices" : cudaGetErrorString(err)) +
                     "); gemm_bench needs a GPU");
  }
  int count = 0;
  CUDA_CHECK(cudaGetDeviceCount(&count));
  if (device < 0 || device >= count)
    throw UsageError("--device " + std::to_string(device) + " out of range (" +
                     std::to_string(count) + " devices)");
  CUDA_CHECK(cudaSetDevice(device));
  const DeviceInfo info = device_info(device);
  std::printf("device: %s (sm_%d%d, %d SMs, %d MHz max clock, %d MHz memory clock, L2 %.0f MiB)\n",
              info.name.c_str(), info.cc_major, info.cc_minor, info.sms, info.clock_mhz,
              info.mem_clock_mhz, info.l2_bytes / 1048576.0);
  std::printf("CUDA runtime %s, driver %s, cuBLAS %d.%d.%d\n", version_text(info.runtime).c_str(),
              version_text(info.driver).c_str(), info.cublas / 10000, info.cublas / 100 % 100,
              info.cublas % 100);
  const std::size_t flush_bytes =
      std::max<std::size_t>(2 * std::size_t(std::max(0LL, info.l2_bytes)), 64u << 20);
  std::printf(
      "method: validate vs cuBLAS fp32, %d warm-up + %d timed runs (CUDA events), median;"
      " L2 flushed (%.0f MiB written) and C poisoned before every run; alpha=1, beta=0;"
      " cap %.0f s per case\n\n",
      set.warmup, set.reps, flush_bytes / 1048576.0, set.max_seconds);

  // A variant this GPU cannot run (wgmma off Hopper): an error when asked for by name, a notice
  // when it came with the default list.
  for (auto it = order.begin(); it != order.end();) {
    if (const char* why = gemm::unavailable_reason(**it)) {
      if (!variant_names.empty()) throw UsageError(why);
      std::printf("skipped: %s\n", why);
      it = order.erase(it);
    } else {
      ++it;
    }
  }

  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  DeviceBuffer flush(flush_bytes / sizeof(float));

  std::vector<Result> all;
  bool failed = false, context_lost = false;
  std::printf("%-16s %-6s %-12s %10s %9s %9s %9s  %s\n", "shape", "layout", "variant", "ms",
              "TFLOP/s", "%cuBLAS", "%cuTF32", "status");
  for (const Shape& s : shapes) {
    std::map<std::string, Result> by_name;
    {
      Bench bench(s, set, stream, flush.p, flush_bytes);
      for (const gemm::Variant* v : order) {
        Result r = bench.measure(*v);
        if (r.status == "FAILED") {
          failed = true;
          // A kernel fault kills the context: then nothing more can be measured.
          cudaGetLastError();
          if (cudaDeviceSynchronize() != cudaSuccess) context_lost = true;
        }
        by_name[v->name] = r;
        if (context_lost) break;
      }
    }
    const double base = by_name.count("cublas") ? by_name["cublas"].ms_median : NAN;
    const double base_tf32 = by_name.count("cublas_tf32") ? by_name["cublas_tf32"].ms_median : NAN;
    for (const gemm::Variant& v : gemm::variants()) {  // the table's order
      if (!by_name.count(v.name)) continue;
      Result& r = by_name[v.name];
      r.pct_cublas = 100.0 * base / r.ms_median;
      if (r.precision == gemm::Precision::TF32) r.pct_cublas_tf32 = 100.0 * base_tf32 / r.ms_median;
      std::string status = r.status;
      if (!r.note.empty()) status += ": " + r.note;
      std::printf("%-16s %-6s %-12s %10s %9s %9s %9s  %s\n", s.text().c_str(), s.layout().c_str(),
                  r.variant.c_str(), fmt(r.ms_median, 4).c_str(), fmt(r.tflops, 2).c_str(),
                  fmt(r.pct_cublas, 1).c_str(), fmt(r.pct_cublas_tf32, 1).c_str(), status.c_str());
      all.push_back(r);
    }
    std::printf("\n");
    std::fflush(stdout);
    if (context_lost) {
      std::fprintf(stderr,
                   "gemm_bench: the CUDA context was lost after a kernel fault; stopping\n");
      break;
    }
  }
  cudaStreamDestroy(stream);

  if (!csv.empty()) write_csv(csv, info, all);
  if (!json.empty()) write_json(json, info, set, flush_bytes, all);
  if (!set.auto_table.empty()) write_auto_table(set.auto_table, info, all);
  if (failed) {
    std::fprintf(stderr, "gemm_bench: FAILED validation:");
    for (const Result& r : all)
      if (r.status == "FAILED")
        std::fprintf(stderr, " %s@%s:%s", r.variant.c_str(), r.shape.text().c_str(),
                     r.shape.layout().c_str());
    std::fprintf(stderr, "\n");
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "gemm_bench: validates every device GEMM variant against cuBLAS, then times it (CUDA events, "
      "L2 flushed and C poisoned before each run, median of --reps runs) beside cuBLAS fp32 (TF32 "
      "off) and, for TF32 variants, cuBLAS TF32. Exit status: 0 ok, 1 a variant failed "
      "validation, 2 bad usage or no GPU."};
  std::vector<std::string> variants, shapes;
  Settings set;
  int device = 0;
  std::string csv, json;
  bool list = false;
  app.add_option("--variants", variants,
                 "Comma-separated device variants to time (default: every device variant). "
                 "cuBLAS fp32 is always timed, cuBLAS TF32 beside any TF32 variant. "
                 "--variants cpu times the host variant alone, without a GPU (default shapes "
                 "256, 512, 1024)")
      ->delimiter(',');
  app.add_option("--shapes", shapes,
                 "Comma-separated shapes: N (square N^3, layout NN), MxNxK (NN) or MxNxK:LAYOUT, "
                 "LAYOUT in NN,NT,TN,TT (default: squares 256..8192 NN, and the MLP's "
                 "256x1024x784:NT, 256x784x1024:NN, 1024x784x256:TN, 256x10x1024:NT)")
      ->delimiter(',');
  app.add_option("--reps", set.reps, "Timed runs per case, at least 20")
      ->check(CLI::Range(20, 100000))
      ->capture_default_str();
  app.add_option("--warmup", set.warmup, "Untimed warm-up runs per case")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  app.add_option("--max-seconds-per-case", set.max_seconds,
                 "Time cap per shape and variant: a slower case runs fewer reps (at least 3), "
                 "marked 'capped'")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_flag("--skip-slow", set.skip_slow,
               "Skip a case that would exceed --max-seconds-per-case instead of capping its reps");
  app.add_option("--csv", csv, "Write the results as CSV to this file");
  app.add_option("--json", json, "Write the results, device and method as JSON to this file");
  app.add_option("--auto-table", set.auto_table,
                 "Write the table the `auto` variant chooses from (kernels/auto_table.inc): the "
                 "fastest correct fp32 kernel of this project per measured shape and layout");
  app.add_option("--seed", set.seed, "Seed of the random inputs")->capture_default_str();
  app.add_option("--device", device, "CUDA device index")->capture_default_str();
  app.add_flag("--list", list, "List the variants (name, memory, precision, summary) and exit");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  if (list) {
    print_variants();
    return 0;
  }
  try {
    return run_bench(variants, shapes, set, device, csv, json);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "gemm_bench: error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gemm_bench: error: %s\n", e.what());
    return 1;
  }
}
