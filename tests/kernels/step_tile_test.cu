// kernels/fast/step_tile.cuh's tiles as a persistent kernel runs them: a training step's three
// layouts (NT forward, NN input gradient with the ReLU mask, TN weight gradient) interleaved on
// every block, each layout's barriers carried from one of its tiles to the next across the
// others', on 1, 3 and one block per tile, and in clusters of 2 and 3 blocks that share each
// tile's K (some shares empty at short K) and add their partials in distributed shared memory.
// Also two step shapes in one launch, so that a block runs tiles of one layout that stage an
// MN-major operand through TMA (aligned) after tiles that copy it with the threads (misaligned).
// Each output against ref_gemm within the arithmetic's tolerance (gemm_harness.h: fresh random
// operands, NaN in the padding, C poisoned, sentinels around it), in TF32 and 3×TF32.
// Shapes: the default model's step (784-1024-1024-10 at batch 256), odd sizes with misaligned
// operands, and short K. sm_90a: runs where tf32_fast runs on wgmma, else skips.
#include <cooperative_groups.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "base/device_buffer.h"
#include "base/launch.cuh"
#include "gemm_harness.h"
#include "gpu_test.h"
#include "kernels/fast/step_tile.cuh"

namespace {

using gemm::step_tile::Arithmetic;
using gemm::step_tile::Layout;
using gemm::step_tile::Tile;
using gemm::step_tile::TileGemm;

// One output tile of one of a launch's GEMMs (shape `shape`'s GEMM of that layout), over its
// whole K.
struct Job {
  Layout layout;
  int shape, m0, n0;
};

constexpr int kMaxShapes = 2;  // a step's three GEMMs of up to two shapes in one launch
struct Args {
  TileGemm<Layout::NT> nt[kMaxShapes];
  TileGemm<Layout::NN> nn[kMaxShapes];
  TileGemm<Layout::TN> tn[kMaxShapes];
  const Job* jobs;
  int count;
};
static_assert(sizeof(Args) <= 4096, "a kernel's parameters are at most 4 KB");

// Every block of cluster c of C (grid (C, 1, S), clusters of (1, 1, S)) runs jobs c, c + C, …,
// each its share of the tile's K.
template <Arithmetic A, Layout L>
__device__ int run_job(float* smem_raw, const TileGemm<L>& g, const Job& job, int issued) {
  const int rank = static_cast<int>(blockIdx.z), size = static_cast<int>(gridDim.z);
  const gemm::step_tile::KShare k = gemm::step_tile::k_share<A>(0, g.a.extent_k, rank, size);
  return gemm::step_tile::run_tile<A, L>(smem_raw, g, g.c, job.m0, job.n0, k.k0, k.k_len, issued,
                                         size > 1);
}

template <Arithmetic A>
__global__ void __launch_bounds__(Tile<A>::kThreads, 1)
    tiles_kernel(const __grid_constant__ Args a) {
  extern __shared__ float smem_raw[];
  if (threadIdx.x == 0) gemm::step_tile::init_pipelines<A>(smem_raw);
  if (gridDim.z > 1)
    cooperative_groups::this_cluster().sync();  // every block started before DSMEM is touched
  else
    __syncthreads();
  int nt = 0, nn = 0, tn = 0;  // K tiles each layout's pipeline has run
  for (int j = blockIdx.x; j < a.count; j += gridDim.x) {
    // Between two tiles, the step kernel's barriers: the cluster's (or the block's) after a
    // tile, and the block's before the next (its __syncthreads_and). With one __syncthreads()
    // alone, racecheck paired the staged output's reads with the next tile's producer writes
    // (docs/NOTES.md, "The step as one kernel").
    __syncthreads();
    const Job job = a.jobs[j];
    if (job.layout == Layout::NT)
      nt += run_job<A>(smem_raw, a.nt[job.shape], job, nt);
    else if (job.layout == Layout::NN)
      nn += run_job<A>(smem_raw, a.nn[job.shape], job, nn);
    else
      tn += run_job<A>(smem_raw, a.tn[job.shape], job, tn);
    if (gridDim.z > 1)
      cooperative_groups::this_cluster().sync();
    else
      __syncthreads();
  }
}

template <Arithmetic A>
constexpr auto kTilesKernel = tiles_kernel<A>;

// The cases' tiles (NT, NN, TN of each shape in turn), interleaved (NT, NN, TN, NT, …, a tile of
// each case in turn) so that every block runs every case.
std::vector<Job> jobs_of(const std::vector<gemm_test::Case>& cases) {
  const Layout layouts[] = {Layout::NT, Layout::NN, Layout::TN};
  std::vector<std::vector<Job>> per_case(cases.size());
  size_t total = 0;
  for (size_t i = 0; i < cases.size(); ++i)
    for (int m0 = 0; m0 < cases[i].m; m0 += Tile<Arithmetic::Tf32>::kM)
      for (int n0 = 0; n0 < cases[i].n; n0 += Tile<Arithmetic::Tf32>::kN, ++total)
        per_case[i].push_back({layouts[i % 3], static_cast<int>(i / 3), m0, n0});
  std::vector<Job> jobs;
  for (size_t t = 0; jobs.size() < total; ++t)
    for (const auto& tiles : per_case)
      if (t < tiles.size()) jobs.push_back(tiles[t]);
  return jobs;
}

// Runs the batch's cases (NT, NN, TN of each of its shapes) through the kernel on `clusters`
// clusters of `cluster` blocks; returns the output buffer.
template <Arithmetic A>
std::vector<float> run_tiles(const gemm_test::Batch& batch, int clusters, int cluster) {
  gemm::DeviceBuffer<float> buffer(batch.size());
  buffer.upload(batch.input(), batch.size());
  const auto& cases = batch.cases();
  const auto& at = batch.placements();
  Args a{};
  for (size_t shape = 0; shape < cases.size() / 3; ++shape) {
    const size_t i = 3 * shape;
    a.nt[shape] = gemm::step_tile::tile_gemm<A, Layout::NT>(
        gemm_test::problem_of(cases[i], at[i], buffer.data()));
    a.nn[shape] = gemm::step_tile::tile_gemm<A, Layout::NN>(
        gemm_test::problem_of(cases[i + 1], at[i + 1], buffer.data()));
    a.tn[shape] = gemm::step_tile::tile_gemm<A, Layout::TN>(
        gemm_test::problem_of(cases[i + 2], at[i + 2], buffer.data()));
  }
  const std::vector<Job> jobs = jobs_of(cases);
  gemm::DeviceBuffer<Job> device_jobs(jobs.size());
  device_jobs.upload(jobs.data(), jobs.size());
  a.jobs = device_jobs.data();
  a.count = static_cast<int>(jobs.size());
  CUDA_CHECK(cudaFuncSetAttribute(kTilesKernel<A>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  Tile<A>::kSmemBytes));
  gemm::LaunchShape shape{dim3(std::min(clusters, a.count), 1, cluster), dim3(Tile<A>::kThreads),
                          static_cast<size_t>(Tile<A>::kSmemBytes), nullptr,
                          static_cast<unsigned>(cluster)};
  gemm::launch_kernel(kTilesKernel<A>, shape, a);
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<float> out(batch.size());
  buffer.download(out.data(), out.size());
  return out;
}

gemm_test::Case make(gemm::Op op_a, gemm::Op op_b, int m, int n, int k, gemm::EpilogueOp epilogue,
                     std::uint64_t seed) {
  gemm_test::Case c;
  c.op_a = op_a, c.op_b = op_b;
  c.m = m, c.n = n, c.k = k;
  c.epilogue = epilogue;
  c.seed = seed;
  return c;
}

// NT, NN and TN cases, in that order: the step's three GEMMs of one layer at each shape.
std::vector<std::vector<gemm_test::Case>> step_shapes() {
  using gemm::EpilogueOp;
  using gemm::Op;
  std::vector<std::vector<gemm_test::Case>> all;
  // The default model's layer 1 at batch 256: Y = X·Wᵀ + b, ReLU; dX = (G·W) ⊙ [X > 0]; dW = Gᵀ·X.
  all.push_back({make(Op::N, Op::T, 256, 1024, 784, EpilogueOp::BiasRelu, 1),
                 make(Op::N, Op::N, 256, 784, 1024, EpilogueOp::ReluMask, 2),
                 make(Op::T, Op::N, 1024, 784, 256, EpilogueOp::None, 3)});
  // Odd sizes, misaligned operands (an odd offset, an odd leading dimension), partial tiles.
  std::vector<gemm_test::Case> odd = {make(Op::N, Op::T, 77, 129, 37, EpilogueOp::BiasRelu, 4),
                                      make(Op::N, Op::N, 100, 65, 300, EpilogueOp::ReluMask, 5),
                                      make(Op::T, Op::N, 33, 70, 41, EpilogueOp::None, 6)};
  odd[0].off_a = 1;
  odd[1].ldb = 67;
  odd[2].off_b = 3;
  odd[2].alpha = 0.5f;
  all.push_back(odd);
  // Short K: one K tile or less (clusters of 2 and 3 leave shares empty).
  all.push_back({make(Op::N, Op::T, 130, 5, 1, EpilogueOp::Bias, 7),
                 make(Op::N, Op::N, 64, 200, 31, EpilogueOp::None, 8),
                 make(Op::T, Op::N, 129, 129, 33, EpilogueOp::ReluMask, 9)});
  // The odd shape's GEMMs (nothing staged: their MN-major operands are misaligned), then a
  // smaller aligned step's (staged), in one launch.
  std::vector<gemm_test::Case> mixed = odd;
  for (gemm_test::Case c : {make(Op::N, Op::T, 64, 256, 96, EpilogueOp::BiasRelu, 10),
                            make(Op::N, Op::N, 64, 96, 256, EpilogueOp::ReluMask, 11),
                            make(Op::T, Op::N, 256, 96, 64, EpilogueOp::None, 12)})
    mixed.push_back(c);
  all.push_back(mixed);
  return all;
}

template <Arithmetic A>
void check_every_grid(double tol) {
  for (const auto& cases : step_shapes()) {
    const gemm_test::Batch batch(cases);
    for (int cluster : {1, 2, 3})
      for (int clusters : {1, 3, 1 << 20}) {  // the last: one cluster per tile
        SCOPED_TRACE("clusters of " + std::to_string(cluster) + ", " + std::to_string(clusters) +
                     " of them at most");
        const std::vector<float> out = run_tiles<A>(batch, clusters, cluster);
        for (size_t i = 0; i < cases.size(); ++i) {
          const std::string why = gemm_test::check_case(batch, i, out.data(), tol);
          EXPECT_EQ(why, "") << cases[i].describe();
        }
      }
  }
}

TEST(StepTile, RunsTheStepsThreeLayoutsOnEveryBlockInTf32) {
  VARIANT_TEST_OR_SKIP(gemm::find_variant("tf32_fast"));
  check_every_grid<Arithmetic::Tf32>(gemm::tolerance(gemm::Precision::TF32));
}

TEST(StepTile, RunsTheStepsThreeLayoutsOnEveryBlockIn3xTf32) {
  VARIANT_TEST_OR_SKIP(gemm::find_variant("tf32x3_fast"));
  check_every_grid<Arithmetic::Tf32x3>(gemm::tolerance(gemm::Precision::FP32));
}

TEST(StepTile, RefusesAGemmOfAnotherLayout) {
  VARIANT_TEST_OR_SKIP(gemm::find_variant("tf32_fast"));
  const gemm_test::Batch batch(
      {make(gemm::Op::N, gemm::Op::N, 8, 8, 8, gemm::EpilogueOp::None, 1)});
  gemm::DeviceBuffer<float> buffer(batch.size());
  const gemm::Problem nn =
      gemm_test::problem_of(batch.cases()[0], batch.placements()[0], buffer.data());
  try {
    gemm::step_tile::tile_gemm<Arithmetic::Tf32, Layout::NT>(nn);
    ADD_FAILURE() << "an NN GEMM was taken as NT";
  } catch (const gemm::Error& e) {
    EXPECT_NE(std::string(e.what()).find("a tile of layout NT given a NN GEMM"), std::string::npos)
        << e.what();
  }
}

}  // namespace
