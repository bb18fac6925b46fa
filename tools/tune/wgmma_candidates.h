// Candidate tiles of the production wgmma pipeline (kernels/fast/wgmma_pipeline.cuh: tf32_fast's
// kernel beside the register-A one, and tf32x3_fast's with Tf32x3), each run as both the large and
// the small tile, so that every shape runs it. Shipped (kernels/fast/wgmma_pipeline.cu):
// Ws256x128s4c2 as the large tile, Ws128x128s4c2 as the small one; X3_128x128s4c2 for 3×TF32. The
// names: block tile M×N, stages (the most wanted), consumer warpgroups. tools/tune/CMakeLists.txt
// lists which to build, one translation unit each.
#pragma once

#include "kernels/fast/wgmma_pipeline.cuh"
#include "tools/tune/candidate.h"

namespace tune::wgmma_tiles {

using gemm::detail::wgmma_ops::Tf32x1;
using gemm::detail::wgmma_ops::Tf32x3;

struct Ws256x128s4c2 {
  static constexpr int kBlockM = 256, kBlockN = 128, kStages = 4, kConsumers = 2;
  using Arithmetic = Tf32x1;
};
struct Ws128x256s4c2 {
  static constexpr int kBlockM = 128, kBlockN = 256, kStages = 4, kConsumers = 2;
  using Arithmetic = Tf32x1;
};
struct Ws128x128s4c2 {
  static constexpr int kBlockM = 128, kBlockN = 128, kStages = 4, kConsumers = 2;
  using Arithmetic = Tf32x1;
};
struct Ws256x128s3c2 {
  static constexpr int kBlockM = 256, kBlockN = 128, kStages = 3, kConsumers = 2;
  using Arithmetic = Tf32x1;
};
struct Ws128x128s6c2 {
  static constexpr int kBlockM = 128, kBlockN = 128, kStages = 6, kConsumers = 2;
  using Arithmetic = Tf32x1;
};
struct Ws128x128s4c1 {
  static constexpr int kBlockM = 128, kBlockN = 128, kStages = 4, kConsumers = 1;
  using Arithmetic = Tf32x1;
};

// tf32x3_fast's tile (shipped: X3_128x128s4c2), 3×TF32, in as many stages as fit: a stage holds
// one part, and the remainders a ring of two more (wgmma_pipeline.cuh).
struct X3_128x128s3c2 {
  static constexpr int kBlockM = 128, kBlockN = 128, kStages = 3, kConsumers = 2;
  using Arithmetic = Tf32x3;
};
struct X3_128x128s4c2 {
  static constexpr int kBlockM = 128, kBlockN = 128, kStages = 4, kConsumers = 2;
  using Arithmetic = Tf32x3;
};
struct X3_128x128s5c2 {
  static constexpr int kBlockM = 128, kBlockN = 128, kStages = 5, kConsumers = 2;
  using Arithmetic = Tf32x3;
};

template <class Tile>
void launch(const gemm::Problem& p, cudaStream_t stream) {
  gemm::detail::launch_wgmma_pipeline_tiles<Tile, Tile>(p, stream);
}

}  // namespace tune::wgmma_tiles

// Registers candidate `name` (a tile above) at place `order`.
#define TUNE_CANDIDATE(name, order)                           \
  static const bool tune_registered_ = ::tune::add_candidate( \
      {#name, ::tune::Kind::Wgmma, order, ::tune::wgmma_tiles::launch<::tune::wgmma_tiles::name>})
