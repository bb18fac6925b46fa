// gemm_bench --phases: where a tile's time goes, from the production kernels' in-kernel
// timestamps (kernels/gemm.h, gemm::phase_times; a build configured with
// -DGEMM_MLP_PHASE_TIMES=ON).
//
// Per shape and variant: --warm-calls back-to-back calls in one CUDA graph, replayed once to warm
// up and once recorded. Per stamped kernel of a call (the production kernels of kernels/fast/: a TN
// GEMM may run a K-major copy first; the ladder's and the split-K reduction are not stamped), the
// table gives, in µs, the median over its blocks and over calls 1.. (call 0 has no call before
// it):
//   gap        its first block's start after the end of the kernel before it on the stream (the
//              previous call's last kernel, or the copy before it); negative where dependent
//              launch starts it while that kernel still runs
//   wait       → the kernel before it has finished (await_prior_kernels)
//   set-up     → barriers initialised (and TMA maps prefetched)
//   first stage  → the first K tile has landed
//   K loop     → the last product done       staged       → the output tile in shared memory
//   slices     → every K slice of its cluster has staged its partial (split-K in a cluster)
//   store      → the block's part of the tile in C (summed across the slices, where split)
//   exit       → the last instruction (after the cluster's closing barrier)
//   block      first instruction → last, per block
//   span       the kernel's first start → its last block's end, per call
// Each phase is timed from the one reached before it, in the order the block reached them (the
// wgmma kernels set up before they wait); a phase a kernel does not record is folded into the
// next one it does (the copy's work shows as its store).
#pragma once

#include <string>
#include <vector>

#include "apps/gemm_bench/options.h"

namespace bench {

// Runs --phases: the table on stdout, and as CSV with --csv. Exit status 0, or 1 when a variant
// failed validation.
int run_phases(const Options& o);

}  // namespace bench
