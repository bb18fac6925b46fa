// Candidate tiles of the production wgmma pipeline (kernels/fast/wgmma_pipeline.cuh: tf32_fast's
// kernel beside the register-A one, and tf32x3_fast's with Tf32x3), each run as both the large and
// the small tile, so that every shape runs it. Shipped (kernels/fast/wgmma_pipeline_tiles.cuh):
// Ws256x128s4c2 as the large tile, Ws128x128s4c2 as the small one; X3_128x128s4c2 for 3×TF32. The
// names: block tile M×N, stages (the most wanted), consumer warpgroups. tools/tune/CMakeLists.txt
// lists which to build, one translation unit each.
#pragma once

#include "kernels/fast/wgmma_pipeline_kernel.cuh"
#include "tools/tune/candidate.h"

namespace tune::wgmma_tiles {

using gemm::detail::wgmma_ops::Tf32x1;
using gemm::detail::wgmma_ops::Tf32x3;

// A pipeline tile as wgmma_pipeline.cuh names one: block tile M×N, the most stages wanted,
// consumer warpgroups, arithmetic.
template <int M, int N, int Stages, int Consumers, class Arith>
struct Tile {
  static constexpr int kBlockM = M, kBlockN = N, kStages = Stages, kConsumers = Consumers;
  using Arithmetic = Arith;
};

using Ws256x128s4c2 = Tile<256, 128, 4, 2, Tf32x1>;
using Ws128x256s4c2 = Tile<128, 256, 4, 2, Tf32x1>;
using Ws128x128s4c2 = Tile<128, 128, 4, 2, Tf32x1>;
using Ws256x128s3c2 = Tile<256, 128, 3, 2, Tf32x1>;
using Ws128x128s6c2 = Tile<128, 128, 6, 2, Tf32x1>;
using Ws128x128s4c1 = Tile<128, 128, 4, 1, Tf32x1>;

// tf32x3_fast's tile (shipped: X3_128x128s4c2), 3×TF32, in as many stages as fit: a stage holds
// one part, and the remainders a ring of two more (wgmma_pipeline.cuh).
using X3_128x128s3c2 = Tile<128, 128, 3, 2, Tf32x3>;
using X3_128x128s4c2 = Tile<128, 128, 4, 2, Tf32x3>;
using X3_128x128s5c2 = Tile<128, 128, 5, 2, Tf32x3>;

template <class Candidate>
void launch(const gemm::Problem& p, cudaStream_t stream) {
  gemm::detail::launch_wgmma_pipeline_tiles<Candidate, Candidate>(p, stream);
}

}  // namespace tune::wgmma_tiles

// Registers candidate `name` (a tile above) at place `order`.
#define TUNE_CANDIDATE(name, order)                           \
  static const bool tune_registered_ = ::tune::add_candidate( \
      {#name, ::tune::Kind::Wgmma, order, ::tune::wgmma_tiles::launch<::tune::wgmma_tiles::name>})
