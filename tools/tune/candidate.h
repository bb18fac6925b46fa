// A tune candidate: one tile of one production kernel, named in a *_candidates.h header of this
// folder and instantiated in its own translation unit (tools/tune/CMakeLists.txt writes one per
// candidate, so that they compile in parallel: `#include` the header, then
// TUNE_CANDIDATE(name, order)). Each candidate registers itself at start-up; the tune programs
// time candidates() in order.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <string>
#include <vector>

#include "kernels/gemm.h"

namespace tune {

enum class Kind {
  FastLarge,  // fast's large tile, run unsplit (fast_candidates.h)
  FastSmall,  // fast's small tile with a split-K policy (fast_candidates.h)
  Wgmma,      // a tile of the production wgmma pipeline, as both its large and small tile
              // (wgmma_candidates.h)
  Tf32x3,     // a tf32x3_fast split tile, run on every shape (tf32x3_candidates.h)
  MmaSyncTn,  // an mma.sync split tile at weight-gradient shapes (tn_candidates.h)
};

// How a FastSmall candidate splits K: plan_split_k's options (SplitKOptions, split_k.cuh), or, with
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
  int order;                             // its place in its list (tools/tune/CMakeLists.txt)
  LaunchFn launch = nullptr;             // every kind but FastSmall
  SplitLaunchFn launch_split = nullptr;  // FastSmall
};

// Every candidate linked into the program, in the lists' order.
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
