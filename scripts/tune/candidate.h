// A tune candidate: one tile config of one kernel, compiled in its own translation unit by
// tune_tiles.sh or wgmma_tiles.sh from a *_candidate.cu file, with the config given as -D macros:
//   TUNE_NAME   its name, a string literal: -DTUNE_NAME='"ye"'
//   TUNE_CFG    the config's template arguments: -DTUNE_CFG='128\, 128\, 16\, ...' (nvcc splits
//               -D values at unescaped commas)
//   TUNE_ORDER  its place in the script's list, an integer
// Each candidate registers itself at start-up (TUNE_REGISTER); the tune programs time
// candidates() in order.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <string>
#include <vector>

#include "kernels/gemm.h"

namespace tune {

enum class Kind {
  FastLarge,  // fast's large tile, run unsplit (fast_candidate.cu)
  FastSmall,  // fast's small tile with a split-K policy (fast_candidate.cu, TUNE_SMALL)
  Tf32Large,  // step 7's large tile; its small tile as shipped (tf32_candidate.cu)
  Wgmma,      // step 8 or 9, the config as both large and small tile (wgmma_candidate.cu)
  Tf32x3,     // a tf32x3_fast split tile, run on every shape (tf32x3_candidate.cu)
};

// How a FastSmall candidate splits K: plan_split_k's constants (split_k.cuh), or, with
// forced_splits > 0, that many slices (fewer where K is short), the planner bypassed.
struct SplitPolicy {
  int min_k_tiles, max_splits, blocks_per_sm, forced_splits;

  std::string name() const {
    return forced_splits > 0 ? "split " + std::to_string(forced_splits)
                             : std::to_string(min_k_tiles) + "/" + std::to_string(max_splits) +
                                   "/" + std::to_string(blocks_per_sm);
  }
};

using LaunchFn = void (*)(const gemm::Problem&, cudaStream_t);
// Launches with the plan the policy gives; returns its split count.
using SplitLaunchFn = int (*)(const gemm::Problem&, const SplitPolicy&, cudaStream_t);

struct Candidate {
  const char* name;
  Kind kind;
  int order;
  LaunchFn launch = nullptr;             // every kind but FastSmall
  SplitLaunchFn launch_split = nullptr;  // FastSmall
};

// Every candidate linked into the program, in the scripts' order.
inline std::vector<Candidate>& candidates() {
  static std::vector<Candidate> all;
  return all;
}

inline bool add_candidate(const Candidate& c) {
  std::vector<Candidate>& all = candidates();
  const auto later = std::find_if(all.begin(), all.end(),
                                  [&](const Candidate& other) { return other.order > c.order; });
  all.insert(later, c);
  return true;
}

inline bool any_of_kind(Kind kind) {
  return std::any_of(candidates().begin(), candidates().end(),
                     [&](const Candidate& c) { return c.kind == kind; });
}

}  // namespace tune

// In a *_candidate.cu file: registers the candidate that TUNE_NAME and TUNE_ORDER name.
#define TUNE_REGISTER(kind, launch, launch_split) \
  static const bool tune_registered_ =            \
      ::tune::add_candidate({TUNE_NAME, kind, TUNE_ORDER, launch, launch_split})
