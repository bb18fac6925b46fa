// The `auto` variant: for each call, the fastest correct fp32 kernel of this project for the
// nearest measured shape of the same layout on this GPU (auto_table.h says how "nearest" is
// measured), from auto_table.inc. That table is written by gemm_bench --from-json --auto-table from
// the GPU runs its "// From:" line names (scripts/check/gpu_check.sh measures its shapes: the
// GEMMs of the three standard models' steps and squares in NN, NT and TN), which are committed in
// docs/results/ beside it (one block of lines per GPU: scripts/docs/update_auto_table.py), and
// shipped in the repository. On a GPU the table does not list, or a layout it lacks, auto takes
// fast, the production fp32 kernel, which adapts its tile to the problem.
//   A: op(A) is M×K, B: op(B) is K×N, C is M×N.
#include <cmath>
#include <mutex>
#include <string>

#include "base/cuda_check.h"
#include "kernels/auto_table.h"
#include "kernels/launchers.h"

namespace gemm::detail {
namespace {

const std::string& device_name() {
  static std::mutex mutex;
  static std::string names[64];
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  if (device < 0 || device >= 64) throw Error("auto: device index out of range");
  std::lock_guard<std::mutex> lock(mutex);
  if (names[device].empty()) {
    cudaDeviceProp prop{};
    CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    names[device] = prop.name;
  }
  return names[device];
}

// Distance between shapes in log space: a 2× difference in any dimension counts the same.
double shape_distance(const AutoEntry& e, const Problem& p) {
  return std::fabs(std::log2(double(e.m) / p.m)) + std::fabs(std::log2(double(e.n) / p.n)) +
         std::fabs(std::log2(double(e.k) / p.k));
}

}  // namespace

const std::vector<AutoEntry>& auto_table() {
  static const std::vector<AutoEntry> table = {
#include "kernels/auto_table.inc"
  };
  return table;
}

const char* auto_choice(const std::vector<AutoEntry>& table, const std::string& device,
                        const Problem& p) {
  const std::string layout = layout_name(p.op_a, p.op_b);
  const AutoEntry* best = nullptr;
  double best_distance = 0.0;
  for (const AutoEntry& e : table) {
    if (device != e.device || layout != e.layout) continue;
    const double d = shape_distance(e, p);
    if (!best || d < best_distance) best = &e, best_distance = d;
  }
  return best ? best->variant : kAutoFallback;
}

const char* auto_choice(const Problem& p) { return auto_choice(auto_table(), device_name(), p); }

void launch_auto(const Problem& p, cudaStream_t stream) {
  const std::string name = auto_choice(p);  // named: find_variant must not see a temporary
  const Variant& v = find_variant(name);
  if (v.device != Device::CUDA || v.precision != Precision::FP32 || v.launch == launch_auto)
    throw Error(std::string("auto: table entry '") + v.name + "' is not a device fp32 kernel");
  v.launch(p, stream);
}

}  // namespace gemm::detail
