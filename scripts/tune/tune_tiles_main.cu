// Times the tile candidates that tune_tiles.sh compiled, beside cuBLAS, and reports each one's
// largest difference from cuBLAS fp32 (a sanity check; the test suite is the correctness proof).
//   Large (warptile, tf32 LargeTile candidates): 2048³ and 4096³.
//   Small (warptile SmallTile candidates on the forced small path): the MLP's larger GEMMs, each
//   candidate under every split-K policy of kPolicies (planner constants or fixed split counts).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "kernels/cuda_check.h"
#include "kernels/launchers.h"
#include "scripts/tune/median_ms.h"

using gemm::Op;
using gemm::Problem;
using LaunchFn = void (*)(const Problem&, cudaStream_t);

enum class Kind { Warptile, Tf32, Small };
struct Candidate {
  const char* name;
  LaunchFn launch;
  Kind kind;
};
#include "candidates.inc"

// The split-K policy the small candidates read (tune_split.h), set before each timing.
namespace tune_split {
int min_k_tiles = 4, max_splits = 16, blocks_per_sm = 1, forced_splits = 0, last_splits = 0;
}  // namespace tune_split

// The planner's constants, or (forced_splits > 0) a fixed split count that bypasses it.
struct Policy {
  int min_k_tiles, max_splits, blocks_per_sm, forced_splits;
  std::string name() const {
    return forced_splits > 0 ? "split " + std::to_string(forced_splits)
                             : std::to_string(min_k_tiles) + "/" + std::to_string(max_splits) +
                                   "/" + std::to_string(blocks_per_sm);
  }
};
// The first is warptile's as shipped. Up to 8 slices, warptile sums them in a cluster (sm_90);
// more go through the workspace and a second kernel.
constexpr Policy kPolicies[] = {{4, 8, 3, 0}, {2, 8, 4, 0}, {4, 16, 2, 0}, {0, 0, 0, 1},
                                {0, 0, 0, 2}, {0, 0, 0, 3}, {0, 0, 0, 4},  {0, 0, 0, 5},
                                {0, 0, 0, 6}, {0, 0, 0, 7}, {0, 0, 0, 8},  {0, 0, 0, 12},
                                {0, 0, 0, 16}};

// One problem's device buffers, random A and B, and cuBLAS fp32's C for it.
struct Case {
  Problem p;
  std::vector<float> want, got;
  float* buffers[4] = {};
  double flop;

  Case(Op op_a, Op op_b, int m, int n, int k) : flop(2.0 * m * n * k) {
    const size_t sizes[4] = {size_t(m) * k, size_t(k) * n, size_t(m) * n, size_t(m) * n};
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> uniform(-1, 1);
    for (int i = 0; i < 4; ++i) {
      CUDA_CHECK(cudaMalloc(&buffers[i], sizes[i] * sizeof(float)));
      if (i < 2) {
        std::vector<float> host(sizes[i]);
        for (float& x : host) x = uniform(rng);
        CUDA_CHECK(
            cudaMemcpy(buffers[i], host.data(), sizes[i] * sizeof(float), cudaMemcpyHostToDevice));
      }
    }
    const int lda = op_a == Op::N ? k : m, ldb = op_b == Op::N ? n : k;
    p = Problem{op_a, op_b, m, n, k, 1.0f, buffers[0], lda, buffers[1], ldb, 0.0f, buffers[3], n};
    gemm::detail::launch_cublas(p, nullptr);
    want.resize(sizes[2]);
    got.resize(sizes[2]);
    CUDA_CHECK(cudaMemcpy(want.data(), p.c, want.size() * sizeof(float), cudaMemcpyDeviceToHost));
    p.c = buffers[2];  // candidates write here
  }
  Case(const Case&) = delete;
  Case& operator=(const Case&) = delete;
  ~Case() {
    for (float* b : buffers) cudaFree(b);
  }
  std::string name() const {
    return std::to_string(p.m) + "x" + std::to_string(p.n) + "x" + std::to_string(p.k) + " " +
           char(p.op_a) + char(p.op_b);
  }
  // Largest |C − C_cuBLAS| after the latest launch.
  double max_error() {
    CUDA_CHECK(cudaMemcpy(got.data(), p.c, got.size() * sizeof(float), cudaMemcpyDeviceToHost));
    double e = 0;
    for (size_t i = 0; i < got.size(); ++i) e = std::max(e, double(std::fabs(got[i] - want[i])));
    return e;
  }
  double tflops(float ms) const { return flop / ms / 1e9; }
};

static bool any_of_kind(Kind kind) {
  return std::any_of(std::begin(kCandidates), std::end(kCandidates),
                     [&](const Candidate& c) { return c.kind == kind; });
}

static void large_section() {
  std::printf("\n== Large tiles: warptile (06) and tf32 (07) LargeTile candidates ==\n");
  struct Shape {
    int n;
    Op op_a, op_b;
  };
  const Shape shapes[] = {{2048, Op::N, Op::N},
                          {2048, Op::T, Op::N},
                          {4096, Op::N, Op::N},
                          {4096, Op::T, Op::N},
                          {4096, Op::N, Op::T}};
  for (const Shape& s : shapes) {
    Case c(s.op_a, s.op_b, s.n, s.n, s.n);
    const float cublas_ms = median_ms(gemm::detail::launch_cublas, c.p, 1);
    const float cublas_tf32_ms = median_ms(gemm::detail::launch_cublas_tf32, c.p, 1);
    std::printf("%s  cublas %.1f TF  cublas_tf32 %.1f TF\n", c.name().c_str(), c.tflops(cublas_ms),
                c.tflops(cublas_tf32_ms));
    for (const Candidate& cand : kCandidates) {
      if (cand.kind == Kind::Small) continue;
      const bool tf32 = cand.kind == Kind::Tf32;
      const float ms = median_ms(cand.launch, c.p, 1);
      const float base = tf32 ? cublas_tf32_ms : cublas_ms;
      std::printf("  %s %.1f TF  %.1f%% of %s  maxerr %.2e\n", cand.name, c.tflops(ms),
                  100.0 * base / ms, tf32 ? "cublas_tf32" : "cublas", c.max_error());
    }
  }
}

static void small_section() {
  std::printf(
      "\n== Small path: warptile SmallTile candidates (small path forced) × split-K policy ==\n"
      "policy = min K tiles per slice / split cap / blocks wanted per SM (shipped 4/8/3),\n"
      "  or split N: a fixed split count\n");
  struct Shape {
    int m, n, k;
    Op op_a, op_b;
  };
  // The GEMMs of a training step of the 784-1024-1024-10 MLP at batch 256 that are not tiny:
  // forward (NT), input gradient (NN) and weight gradient (TN) of each layer.
  const Shape shapes[] = {{256, 1024, 784, Op::N, Op::T},  {256, 784, 1024, Op::N, Op::N},
                          {1024, 784, 256, Op::T, Op::N},  {256, 1024, 1024, Op::N, Op::T},
                          {256, 1024, 1024, Op::N, Op::N}, {1024, 1024, 256, Op::T, Op::N},
                          {256, 10, 1024, Op::N, Op::T}};
  constexpr int kReps = 20;  // runs per timing sample: these take tens of microseconds
  for (const Shape& s : shapes) {
    Case c(s.op_a, s.op_b, s.m, s.n, s.k);
    const float cublas_ms = median_ms(gemm::detail::launch_cublas, c.p, kReps);
    const float shipped_ms = median_ms(gemm::detail::launch_warptile, c.p, kReps);
    std::printf("%s  cublas %.2f TF  warptile as built %.2f TF (%.1f%%, maxerr %.2e)\n",
                c.name().c_str(), c.tflops(cublas_ms), c.tflops(shipped_ms),
                100.0 * cublas_ms / shipped_ms, c.max_error());
    struct Row {
      std::string line;
      float ms;
    };
    std::vector<Row> rows;
    for (const Candidate& cand : kCandidates) {
      if (cand.kind != Kind::Small) continue;
      for (const Policy& pol : kPolicies) {
        tune_split::min_k_tiles = pol.min_k_tiles;
        tune_split::max_splits = pol.max_splits;
        tune_split::blocks_per_sm = pol.blocks_per_sm;
        tune_split::forced_splits = pol.forced_splits;
        const float ms = median_ms(cand.launch, c.p, kReps);
        const double err = c.max_error();
        char line[160];
        std::snprintf(line, sizeof line,
                      "  %s %-8s  splits %2d  %.2f TF  %.1f%% of cublas  maxerr %.2e%s", cand.name,
                      pol.name().c_str(), tune_split::last_splits, c.tflops(ms),
                      100.0 * cublas_ms / ms, err, err > 1e-3 ? "  WRONG" : "");
        std::printf("%s\n", line);
        rows.push_back({line, ms});
      }
    }
    std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.ms < b.ms; });
    std::printf(" fastest for %s:\n", c.name().c_str());
    for (size_t i = 0; i < std::min<size_t>(5, rows.size()); ++i)
      std::printf("%s\n", rows[i].line.c_str());
  }
}

int main() {
  if (!gemm::cuda_device_available()) {
    std::fprintf(stderr, "tune_tiles: no usable CUDA device\n");
    return 2;
  }
  if (any_of_kind(Kind::Warptile) || any_of_kind(Kind::Tf32)) large_section();
  if (any_of_kind(Kind::Small)) small_section();
  return 0;
}
