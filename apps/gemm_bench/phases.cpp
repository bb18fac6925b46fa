// gemm_bench --phases (phases.h).
#include "apps/gemm_bench/phases.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <vector>

#include "apps/bench_common/timing.h"
#include "apps/common/csv.h"
#include "apps/gemm_bench/device_case.h"
#include "apps/gemm_bench/device_info.h"
#include "apps/gemm_bench/report.h"
#include "base/cuda_check.h"
#include "engine/engine.h"

namespace bench {
namespace {

using gemm::phase_times::Kernel;
using gemm::phase_times::kPhases;
using gemm::phase_times::Phase;
using gemm::phase_times::Row;

// The default model's GEMMs (784-1024-1024-10 at batch 256), with its output layer's NT.
std::vector<Shape> default_phase_shapes() {
  return parse_shapes({"256x1024x784:NT", "256x1024x1024:NT", "256x1024x1024:NN",
                       "1024x1024x256:TN", "1024x784x256:TN", "256x10x1024:NT"},
                      {});
}

double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Column c of the table: 0 gap, 1..kPhases − 1 the phases Awaited..End, then block and span.
constexpr int kBlockColumn = kPhases, kSpanColumn = kPhases + 1, kColumns = kPhases + 2;
constexpr const char* kColumnNames[kColumns] = {"gap",    "wait",   "set-up", "first stage",
                                                "K loop", "staged", "slices", "store",
                                                "exit",   "block",  "span"};
static_assert(kPhases == 9, "a column name per phase");

struct KernelPhases {
  Kernel kernel;
  int blocks = 0, calls = 0;
  double us[kColumns];
};

// The table's rows for one case's recorded rows, in stream order within a call.
std::vector<KernelPhases> summarize_phases(const std::vector<Row>& rows) {
  // (call, kernel) → its rows.
  std::map<std::pair<int, int>, std::vector<const Row*>> by_call;
  int last_call = 0;
  for (const Row& r : rows) {
    by_call[{r.call, int(r.kernel)}].push_back(&r);
    last_call = std::max(last_call, r.call);
  }
  auto first_start = [](const std::vector<const Row*>& rs) {
    unsigned long long t = ~0ull;
    for (const Row* r : rs) t = std::min(t, r->ns[int(Phase::Start)]);
    return t;
  };
  auto last_end = [](const std::vector<const Row*>& rs) {
    unsigned long long t = 0;
    for (const Row* r : rs) t = std::max(t, r->ns[int(Phase::End)]);
    return t;
  };
  // Each call's kernels in the order they started, for the gaps.
  std::vector<std::vector<int>> order(last_call + 1);
  for (int call = 0; call <= last_call; ++call) {
    for (int k = 0; k < gemm::phase_times::kKernels; ++k)
      if (by_call.count({call, k})) order[call].push_back(k);
    std::sort(order[call].begin(), order[call].end(), [&](int x, int y) {
      return first_start(by_call[{call, x}]) < first_start(by_call[{call, y}]);
    });
  }
  std::map<int, std::vector<std::vector<double>>> samples;  // kernel → column → values (µs)
  std::map<int, int> blocks;
  for (int call = 1; call <= last_call; ++call) {
    for (std::size_t i = 0; i < order[call].size(); ++i) {
      const int k = order[call][i];
      const std::vector<const Row*>& rs = by_call[{call, k}];
      std::vector<std::vector<double>>& s = samples[k];
      s.resize(kColumns);
      blocks[k] = std::max(blocks[k], int(rs.size()));
      const std::vector<const Row*>* before = nullptr;
      if (i > 0) {
        before = &by_call[{call, order[call][i - 1]}];
      } else if (!order[call - 1].empty()) {
        before = &by_call[{call - 1, order[call - 1].back()}];
      }
      if (before) s[0].push_back(1e-3 * (double(first_start(rs)) - double(last_end(*before))));
      for (const Row* r : rs) {
        // The recorded phases in the order they were reached (a kernel may set up before it
        // waits), each from the one before it.
        std::vector<int> reached;
        for (int p = 1; p < kPhases; ++p)
          if (r->ns[p] != 0) reached.push_back(p);
        std::stable_sort(reached.begin(), reached.end(),
                         [&](int x, int y) { return r->ns[x] < r->ns[y]; });
        unsigned long long previous = r->ns[int(Phase::Start)];
        for (int p : reached) {
          s[p].push_back(1e-3 * double(r->ns[p] - previous));
          previous = r->ns[p];
        }
        s[kBlockColumn].push_back(1e-3 * double(r->ns[int(Phase::End)] - r->ns[int(Phase::Start)]));
      }
      s[kSpanColumn].push_back(1e-3 * double(last_end(rs) - first_start(rs)));
    }
  }
  std::vector<KernelPhases> out;
  for (int k : order[std::min(1, last_call)]) {
    KernelPhases kp{Kernel(k), blocks[k], last_call, {}};
    for (int c = 0; c < kColumns; ++c) kp.us[c] = median(samples[k][c]);
    out.push_back(kp);
  }
  return out;
}

}  // namespace

int run_phases(const Options& o) {
  if (!gemm::phase_times::compiled_in())
    throw UsageError(
        "--phases needs the in-kernel timestamps: configure a build with "
        "-DGEMM_MLP_PHASE_TIMES=ON (its kernels are slowed by them, so time nothing else there)");
  if (!o.json.empty() || !o.auto_table.empty() || !o.from_json.empty())
    throw UsageError("--phases writes its table with --csv only: drop --json and --auto-table");
  const int calls = o.settings.warm_calls;
  if (calls < 2 || calls > gemm::phase_times::kMaxCalls)
    throw UsageError("--phases needs --warm-calls in 2 .. " +
                     std::to_string(gemm::phase_times::kMaxCalls));
  if (o.csv_given) check_output_path(o.csv, "--csv");
  std::vector<const gemm::Variant*> variants;
  for (const std::string& name :
       o.variants.empty() ? std::vector<std::string>{"tf32_fast", "tf32x3_fast"} : o.variants) {
    const gemm::Variant* v;
    try {
      v = &gemm::find_variant(name);
    } catch (const gemm::Error& e) {
      throw UsageError(e.what());
    }
    if (v->device != gemm::Device::CUDA) throw UsageError("--phases times device variants only");
    if (const char* why = gemm::unavailable_reason(*v)) throw UsageError(why);
    variants.push_back(v);
  }
  const std::vector<Shape> shapes = parse_shapes(o.shapes, default_phase_shapes());
  const DeviceInfo info = select_device(o.device);
  print_device(info);
  std::printf(
      "phases: %d back-to-back calls in one CUDA graph, the second replay recorded; us, median "
      "over blocks and calls 1..%d; each phase from the one recorded before it\n\n",
      calls, calls - 1);
  std::printf("%-16s %-6s %-12s %-18s %6s", "shape", "layout", "variant", "kernel", "blocks");
  for (const char* name : kColumnNames) std::printf(" %11s", name);
  std::printf("\n");

  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  Timer timer(stream);
  std::vector<std::vector<std::string>> csv = {
      {"device", "m", "n", "k", "layout", "variant", "kernel", "blocks", "calls"}};
  for (const char* name : kColumnNames) csv[0].push_back(std::string(name) + " us");
  int status = 0;
  for (const Shape& s : shapes) {
    DeviceCase device_case(s, o.settings, timer);
    for (const gemm::Variant* v : variants) {
      std::vector<KernelPhases> table;
      try {
        table = summarize_phases(device_case.record_phases(*v, calls));
      } catch (const gemm::Error& e) {
        std::fprintf(stderr, "gemm_bench: %s at %s:%s: %s\n", v->name, s.text().c_str(),
                     s.layout().c_str(), e.what());
        status = 1;
        continue;
      }
      for (const KernelPhases& kp : table) {
        const char* kernel = gemm::phase_times::kernel_name(kp.kernel);
        std::printf("%-16s %-6s %-12s %-18s %6d", s.text().c_str(), s.layout().c_str(), v->name,
                    kernel, kp.blocks);
        std::vector<std::string> row = {info.name,
                                        std::to_string(s.m),
                                        std::to_string(s.n),
                                        std::to_string(s.k),
                                        s.layout(),
                                        v->name,
                                        kernel,
                                        std::to_string(kp.blocks),
                                        std::to_string(kp.calls)};
        for (double us : kp.us) {
          std::printf(" %11s", fixed_text(us, 2).c_str());
          row.push_back(fixed_text(us, 3, ""));
        }
        std::printf("\n");
        csv.push_back(std::move(row));
      }
    }
    std::printf("\n");
  }
  cudaStreamDestroy(stream);
  if (o.csv_given) {
    std::string text;
    for (const auto& row : csv) text += apps::csv_row(row);
    engine::replace_file("--csv", o.csv, text);
  }
  return status;
}

}  // namespace bench
