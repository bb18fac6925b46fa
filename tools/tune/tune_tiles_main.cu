// tune_tiles: times the tile candidates of variant `fast` (fast_candidates.h) beside cuBLAS, each
// through gemm_bench's timing harness, and reports each one's largest difference from cuBLAS fp32
// (a sanity check; the test suite is the correctness proof). Run by scripts/tuning/tune.sh fast.
//   Large (fast's large tile, unsplit): 2048³ and 4096³.
//   Small (fast's small tile): the MLP's larger GEMMs and the odd models' small-M ones, beside
//   steps 5 and 6, each candidate under every split-K policy of kPolicies (planner constants or
//   fixed split counts).
#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "tools/tune/candidate.h"
#include "tools/tune/tune_case.h"

namespace {

using gemm::Op;
using tune::Kind;

// The first is fast's as shipped (kernels/fast/fast.cu); the second, its cap of 8 while it summed
// the slices in a cluster. The slices go through the workspace and a second kernel.
constexpr tune::SplitPolicy kPolicies[] = {{4, 16, 3, 0}, {4, 8, 3, 0}, {2, 8, 4, 0}, {4, 16, 2, 0},
                                           {0, 0, 0, 1},  {0, 0, 0, 2}, {0, 0, 0, 3}, {0, 0, 0, 4},
                                           {0, 0, 0, 5},  {0, 0, 0, 6}, {0, 0, 0, 7}, {0, 0, 0, 8},
                                           {0, 0, 0, 12}, {0, 0, 0, 16}};

// A result worse than this (max |C − C_cuBLAS| at these sizes, inputs in [-1, 1]) is flagged.
constexpr double kSuspectError = 1e-3;

void large_section(bench::Timer& timer) {
  std::printf("\n== Large tiles: fast's large-tile candidates, unsplit ==\n");
  const bench::Shape shapes[] = {{2048, 2048, 2048, Op::N, Op::N},
                                 {2048, 2048, 2048, Op::T, Op::N},
                                 {4096, 4096, 4096, Op::N, Op::N},
                                 {4096, 4096, 4096, Op::T, Op::N},
                                 {4096, 4096, 4096, Op::N, Op::T}};
  for (const bench::Shape& s : shapes) {
    tune::Case c(s, timer);
    const tune::Case::Baselines cublas = c.time_cublas();
    for (const tune::Candidate& cand : tune::candidates()) {
      if (cand.kind != Kind::FastLarge) continue;
      const double ms = c.median_ms(cand.launch);
      std::printf("  %s %.1f TF  %.1f%% of cublas  maxerr %.2e\n", cand.name, c.tflops(ms),
                  100.0 * cublas.fp32_ms / ms, c.max_error());
    }
  }
}

void small_section(bench::Timer& timer) {
  std::printf(
      "\n== Small path: fast's small-tile candidates × split-K policy ==\n"
      "policy = min K tiles per slice / split cap / blocks wanted per SM (shipped 4/16/3),\n"
      "  or split N: a fixed split count\n");
  // The GEMMs of a training step of the 784-1024-1024-10 MLP at batch 256 that are not tiny:
  // forward (NT), input gradient (NN) and weight gradient (TN) of each layer. Then the odd models'
  // GEMMs where fast lost most to steps 5 and 6 (docs/NOTES.md, "Gradients on few tiles, and two
  // ideas that did not pay"): 784-1500-100-10 at batch 96 and 784-777-333-10 at batch 200; and
  // those where it still loses to step 5 at 784-2000-2000-10, batch 384 (docs/NOTES.md, "Runs of
  // steps, the first layer's gradient, `fast` without clusters"). Last, the forward GEMMs of
  // 784-512-512-10 at batch 128, where auto's table takes steps 5 and 6 over fast.
  const bench::Shape shapes[] = {{256, 1024, 784, Op::N, Op::T},  {256, 784, 1024, Op::N, Op::N},
                                 {1024, 784, 256, Op::T, Op::N},  {256, 1024, 1024, Op::N, Op::T},
                                 {256, 1024, 1024, Op::N, Op::N}, {1024, 1024, 256, Op::T, Op::N},
                                 {256, 10, 1024, Op::N, Op::T},   {96, 100, 1500, Op::N, Op::T},
                                 {96, 1500, 784, Op::N, Op::T},   {96, 1500, 100, Op::N, Op::N},
                                 {200, 784, 777, Op::N, Op::N},   {384, 2000, 2000, Op::N, Op::T},
                                 {2000, 2000, 384, Op::T, Op::N}, {128, 512, 784, Op::N, Op::T},
                                 {128, 512, 512, Op::N, Op::T}};
  for (const bench::Shape& s : shapes) {
    tune::Case c(s, timer);
    const double cublas_ms = c.median_ms(gemm::detail::launch_cublas);
    const double shipped_ms = c.median_ms(gemm::detail::launch_fast);
    std::printf("%s  cublas %.2f TF  fast as built %.2f TF (%.1f%%, maxerr %.2e)", c.name().c_str(),
                c.tflops(cublas_ms), c.tflops(shipped_ms), 100.0 * cublas_ms / shipped_ms,
                c.max_error());
    const double dbuf_ms = c.median_ms(gemm::detail::launch_double_buffer);
    const double warptile_ms = c.median_ms(gemm::detail::launch_warptile);
    std::printf("  step 5 %.1f us  step 6 %.1f us\n", 1e3 * dbuf_ms, 1e3 * warptile_ms);
    struct Row {
      std::string line;
      double ms;
    };
    std::vector<Row> rows;
    for (const tune::Candidate& cand : tune::candidates()) {
      if (cand.kind != Kind::FastSmall) continue;
      for (const tune::SplitPolicy& policy : kPolicies) {
        int splits = 0;
        const double ms = c.median_ms([&](const gemm::Problem& p, cudaStream_t stream) {
          splits = cand.launch_split(p, policy, stream);
        });
        const double err = c.max_error();
        char line[160];
        std::snprintf(line, sizeof line,
                      "  %s %-8s  splits %2d  %.2f TF  %.1f%% of cublas  maxerr %.2e%s", cand.name,
                      policy.name().c_str(), splits, c.tflops(ms), 100.0 * cublas_ms / ms, err,
                      err <= kSuspectError ? "" : "  WRONG");
        std::printf("%s\n", line);
        rows.push_back({line, ms});
      }
    }
    std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.ms < b.ms; });
    std::printf(" fastest for %s:\n", c.name().c_str());
    for (std::size_t i = 0; i < std::min<std::size_t>(5, rows.size()); ++i)
      std::printf("%s\n", rows[i].line.c_str());
  }
}

// The sections named in `text` ("large", "small" or "large,small"); throws for any other name.
struct Sections {
  bool large = false, small = false;
};
Sections parse_sections(const std::string& text) {
  Sections s;
  std::size_t begin = 0;
  while (begin <= text.size()) {
    const std::size_t end = std::min(text.find(',', begin), text.size());
    const std::string name = text.substr(begin, end - begin);
    if (name == "large")
      s.large = true;
    else if (name == "small")
      s.small = true;
    else
      throw std::invalid_argument("unknown section '" + name + "' in '" + text +
                                  "' (sections: large, small, comma-separated)");
    begin = end + 1;
  }
  return s;
}

}  // namespace

// tune_tiles [sections]: sections as parse_sections takes them (default: both).
int main(int argc, char** argv) {
  if (argc > 2) {
    std::fprintf(stderr, "usage: tune_tiles [large|small|large,small]\n");
    return 2;
  }
  Sections sections;
  try {
    sections = parse_sections(argc == 2 ? argv[1] : "large,small");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tune_tiles: %s\n", e.what());
    return 2;
  }
  if (!tune::device_ready("tune_tiles", false)) return 2;
  try {
    bench::Timer timer(nullptr);
    if (sections.large && tune::any_of_kind(Kind::FastLarge)) large_section(timer);
    if (sections.small && tune::any_of_kind(Kind::FastSmall)) small_section(timer);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tune_tiles: %s\n", e.what());
    return 1;
  }
  return 0;
}
