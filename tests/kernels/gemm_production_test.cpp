// GemmProduction.*: paths of the production tensor-core variants that the correctness suite's
// shapes are too small to reach. TN GEMMs run on K-major copies (kernels/fast/k_major_copies.h;
// from M·N ≥ 600·(M + N)): tf32_fast and tf32x3_fast copy A alone and run NN on the register-A
// kernel where B is aligned, else copy A and B and run NT. K leaves the copies' rows padded; the
// second case has misaligned operands and leading dimensions. NN GEMMs that both run on the
// register-A kernel (kernels/fast/wgmma_register_a.cu, in TF32 and in 3×TF32, where its grid gives
// half the multiprocessors a block), with K unsplit, split in a cluster, and split through the
// workspace. Each is checked against the double reference in the variant's own tolerance.
// fast's small tile in fewer slices than planned, where the plan leaves a short last wave.
// The wgmma pipeline's large tile with K split, and its narrow tile. The wgmma pipeline run
// persistently, its barriers' phases carried from tile to tile. The TMA path from a thread that has
// set no context current (as PyTorch's autograd threads).
// Also, without a GPU: the copies' threshold and layout check, and which NN the register-A kernel
// serves.
#include <cuda.h>
#include <cudaTypedefs.h>
#include <gtest/gtest.h>

#include <exception>
#include <string>
#include <thread>
#include <vector>

#include "expect_error.h"
#include "gemm_harness.h"
#include "gpu_test.h"
#include "kernels/fast/k_major_copies.h"
#include "kernels/fast/wgmma_pipeline.h"
#include "kernels/gemm.h"
#include "kernels/launchers.h"

namespace gemm_test {
namespace {

void expect_tn_on_copies_correct(const char* name) {
  const gemm::Variant& variant = gemm::find_variant(name);
  VARIANT_TEST_OR_SKIP(variant);
  Case aligned;
  aligned.op_a = gemm::Op::T, aligned.op_b = gemm::Op::N;
  aligned.m = 3601, aligned.n = 3605, aligned.k = 37;
  aligned.seed = 1;
  Case misaligned = aligned;
  misaligned.m = 3650, misaligned.n = 3700, misaligned.k = 64;
  misaligned.lda = 3651, misaligned.ldb = 3703, misaligned.off_a = 1, misaligned.off_b = 3;
  misaligned.seed = 2;
  const Batch batch({finished(aligned), finished(misaligned)});
  const std::vector<std::string> failures = run_and_check(variant, batch);
  EXPECT_TRUE(failures.empty()) << failures.front();
}

TEST(GemmProduction, Tf32FastRunsLargeTnOnKMajorCopies) {
  expect_tn_on_copies_correct("tf32_fast");
}

TEST(GemmProduction, Tf32x3FastRunsLargeTnOnKMajorCopies) {
  expect_tn_on_copies_correct("tf32x3_fast");
}

// Tiles of 256 × 128 on the H200's 132 multiprocessors: 66 tiles with edges in both directions,
// wide leading dimensions and K not a multiple of 32 (unsplit); 48 tiles, K split in two in a
// cluster; 5 tiles, K split in 14 through the workspace; and misaligned operands (the wgmma
// pipeline, fast/wgmma_pipeline.cuh).
void expect_nn_on_register_a_correct(const char* name) {
  const gemm::Variant& variant = gemm::find_variant(name);
  VARIANT_TEST_OR_SKIP(variant);
  std::vector<Case> cases(4);
  cases[0].m = 1500, cases[0].n = 1400, cases[0].k = 77, cases[0].lda = 84, cases[0].ldb = 1412;
  cases[1].m = 1000, cases[1].n = 1500, cases[1].k = 3000;
  cases[2].m = 250, cases[2].n = 600, cases[2].k = 2100;
  cases[3].m = 700, cases[3].n = 900, cases[3].k = 300, cases[3].off_b = 1, cases[3].lda = 301;
  std::vector<Case> finished_cases;
  for (size_t i = 0; i < cases.size(); ++i) {
    cases[i].seed = 10 + i;
    finished_cases.push_back(finished(cases[i]));
  }
  const std::vector<std::string> failures = run_and_check(variant, Batch(finished_cases));
  EXPECT_TRUE(failures.empty()) << failures.front();
}

TEST(GemmProduction, Tf32FastRunsNnOnTheRegisterAKernel) {
  expect_nn_on_register_a_correct("tf32_fast");
}

TEST(GemmProduction, Tf32x3FastRunsNnOnTheRegisterAKernel) {
  expect_nn_on_register_a_correct("tf32x3_fast");
}

// The wgmma pipeline's large tile with K split in a cluster, where its slices cost less than the
// small tile's unsplit K loop (large_tile_split_beats_small, fast/split_k_rules.cuh): NT with 64
// large tiles, the last row of them half empty; and misaligned, through the producer's copies.
TEST(GemmProduction, Tf32FastSplitsTheLargeTileOfThePipeline) {
  const gemm::Variant& variant = gemm::find_variant("tf32_fast");
  VARIANT_TEST_OR_SKIP(variant);
  Case nt;
  nt.op_a = gemm::Op::N, nt.op_b = gemm::Op::T;
  nt.m = 384, nt.n = 4096, nt.k = 2048, nt.seed = 20;
  Case misaligned = nt;
  misaligned.m = 300, misaligned.n = 4000, misaligned.k = 2100, misaligned.seed = 21;
  misaligned.lda = 2103, misaligned.off_a = 1;
  const std::vector<std::string> failures =
      run_and_check(variant, Batch({finished(nt), finished(misaligned)}));
  EXPECT_TRUE(failures.empty()) << failures.front();
}

// The wgmma pipeline's narrow tile (64×128) with K split in a cluster, where it costs less than
// the small tile split (narrow_tile_beats_small, fast/split_k_rules.cuh): 100 rows (the second
// row of narrow tiles part empty) and misaligned operands and C, through the producer's copies,
// in both; the default model's first forward GEMM with bias and ReLU in the epilogue (in TF32 on
// the narrow tile, in 3×TF32 on the small one).
void expect_narrow_tile_correct(const char* name) {
  const gemm::Variant& variant = gemm::find_variant(name);
  VARIANT_TEST_OR_SKIP(variant);
  Case forward;
  forward.op_a = gemm::Op::N, forward.op_b = gemm::Op::T;
  forward.m = 256, forward.n = 1024, forward.k = 784, forward.seed = 30;
  forward.epilogue = gemm::EpilogueOp::BiasRelu, forward.off_bias = 1;
  Case short_m = forward;
  short_m.m = 100, short_m.n = 512, short_m.epilogue = gemm::EpilogueOp::None, short_m.seed = 31;
  Case misaligned = short_m;
  misaligned.m = 120, misaligned.n = 500, misaligned.k = 700, misaligned.seed = 32;
  misaligned.lda = 703, misaligned.ldb = 702, misaligned.ldc = 501;
  misaligned.off_a = 1, misaligned.off_b = 2, misaligned.off_c = 3;
  const std::vector<std::string> failures =
      run_and_check(variant, Batch({finished(forward), finished(short_m), finished(misaligned)}));
  EXPECT_TRUE(failures.empty()) << failures.front();
}

TEST(GemmProduction, Tf32FastSplitsTheNarrowTileOfThePipeline) {
  expect_narrow_tile_correct("tf32_fast");
}

TEST(GemmProduction, Tf32x3FastSplitsTheNarrowTileOfThePipeline) {
  expect_narrow_tile_correct("tf32x3_fast");
}

// fast's small tile where its planned slices leave a short last wave and fewer slices run
// (in_whole_waves, kernels/split_k.cuh): 384×2000 is 192 tiles of 64×64, K = 200 (13 K
// tiles) 3 planned slices, 2 run on the H200. NT as in a forward pass, NN with misaligned operands.
TEST(GemmProduction, FastTakesFewerSlicesOverAShortLastWave) {
  const gemm::Variant& variant = gemm::find_variant("fast");
  VARIANT_TEST_OR_SKIP(variant);
  Case nt;
  nt.op_b = gemm::Op::T;
  nt.m = 384, nt.n = 2000, nt.k = 200, nt.seed = 20;
  Case nn;
  nn.m = 380, nn.n = 1990, nn.k = 203, nn.lda = 205, nn.off_a = 1, nn.off_b = 2, nn.seed = 21;
  const std::vector<std::string> failures =
      run_and_check(variant, Batch({finished(nt), finished(nn)}));
  EXPECT_TRUE(failures.empty()) << failures.front();
}

// The wgmma pipeline run persistently (kernels/fast/wgmma_pipeline.h): each block computes output
// tile after output tile, its barriers' phases carried from one to the next. On 1, 3 and 7 blocks,
// so that blocks run up to 100 tiles, with K tile counts (1, 3, 7, 11, 50) that end tiles at every
// phase of the stages and the staging slots; NT (TMA straight into the tiles), NN and TN (staged
// and transposed), misaligned operands with wide leading dimensions, K not a multiple of 32, and a
// bias-ReLU epilogue. In the tile's own arithmetic: TF32, and fp32-accurate 3×TF32.
template <bool ThreeProducts, int Blocks>
void run_persistent(const gemm::Problem& p, cudaStream_t stream) {
  if constexpr (ThreeProducts)
    gemm::detail::launch_tf32x3_pipeline_persistent(p, Blocks, stream);
  else
    gemm::detail::launch_tf32_pipeline_persistent(p, Blocks, stream);
}

template <bool ThreeProducts>
gemm::Variant persistent_variant(gemm::LaunchFn launch) {
  return {ThreeProducts ? "tf32x3 pipeline, persistent" : "tf32 pipeline, persistent",
          gemm::Device::CUDA,
          ThreeProducts ? gemm::Precision::FP32 : gemm::Precision::TF32,
          "the wgmma pipeline with phases carried across tiles",
          launch,
          gemm::detail::wgmma_unavailable};
}

template <bool ThreeProducts>
void expect_persistent_pipeline_correct() {
  VARIANT_TEST_OR_SKIP(persistent_variant<ThreeProducts>(run_persistent<ThreeProducts, 1>));
  std::vector<Case> cases(6);
  cases[0].op_b = gemm::Op::T, cases[0].m = 700, cases[0].n = 900, cases[0].k = 96;  // 42 tiles
  cases[1].op_b = gemm::Op::T, cases[1].m = 300, cases[1].n = 260, cases[1].k = 1600;
  cases[2].m = 520, cases[2].n = 390, cases[2].k = 210;                              // NN: B staged
  cases[3].op_a = gemm::Op::T, cases[3].m = 400, cases[3].n = 300, cases[3].k = 20;  // TN
  cases[4].op_b = gemm::Op::T, cases[4].m = 257, cases[4].n = 300, cases[4].k = 333;
  cases[4].lda = 341, cases[4].ldb = 338, cases[4].off_a = 1, cases[4].off_b = 3;     // misaligned
  cases[5].op_b = gemm::Op::T, cases[5].m = 6400, cases[5].n = 129, cases[5].k = 32;  // 100 tiles
  cases[5].epilogue = gemm::EpilogueOp::BiasRelu;
  for (size_t i = 0; i < cases.size(); ++i) {
    cases[i].seed = 40 + i;
    cases[i] = finished(cases[i]);
  }
  const Batch batch(cases);
  const std::pair<int, gemm::LaunchFn> runs[] = {{1, run_persistent<ThreeProducts, 1>},
                                                 {3, run_persistent<ThreeProducts, 3>},
                                                 {7, run_persistent<ThreeProducts, 7>}};
  for (const auto& [blocks, launch] : runs) {
    const std::vector<std::string> failures =
        run_and_check(persistent_variant<ThreeProducts>(launch), batch);
    EXPECT_TRUE(failures.empty()) << blocks << " blocks: " << failures.front();
  }
}

TEST(GemmProduction, PipelineCarriesItsPhasesAcrossTilesInTf32) {
  expect_persistent_pipeline_correct<false>();
}

TEST(GemmProduction, PipelineCarriesItsPhasesAcrossTilesIn3xTf32) {
  expect_persistent_pipeline_correct<true>();
}

// tf32_fast launched from a new thread, on which no CUDA context is current until a runtime call
// binds one: the tensor maps' encoder needs one (kernels/tma.cuh).
bool fresh_thread_had_context = true;

bool context_is_current() {
  static const auto get_current = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found{};
    if (cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &fn, 4000, cudaEnableDefault, &found) !=
            cudaSuccess ||
        found != cudaDriverEntryPointSuccess)
      throw gemm::Error("the test cannot find cuCtxGetCurrent");
    return reinterpret_cast<PFN_cuCtxGetCurrent_v4000>(fn);
  }();
  CUcontext context = nullptr;
  return get_current(&context) == CUDA_SUCCESS && context != nullptr;
}

void launch_tf32_fast_on_a_fresh_thread(const gemm::Problem& p, cudaStream_t stream) {
  std::exception_ptr error;
  std::thread worker([&] {
    try {
      fresh_thread_had_context = context_is_current();
      gemm::find_variant("tf32_fast").launch(p, stream);
    } catch (...) {
      error = std::current_exception();
    }
  });
  worker.join();
  if (error) std::rethrow_exception(error);
}

TEST(GemmProduction, TmaPathRunsOnAThreadWithNoCurrentContext) {
  const gemm::Variant& tf32_fast = gemm::find_variant("tf32_fast");
  VARIANT_TEST_OR_SKIP(tf32_fast);
  Case nt;  // the pipeline's TMA path (NT, aligned)
  nt.op_b = gemm::Op::T, nt.m = 256, nt.n = 1024, nt.k = 784, nt.seed = 60;
  const Batch batch({finished(nt)});
  // Once here first, so that the launcher's one-time set-up (which binds a context) is done.
  std::vector<std::string> failures = run_and_check(tf32_fast, batch);
  ASSERT_TRUE(failures.empty()) << failures.front();
  gemm::Variant threaded = tf32_fast;
  threaded.launch = launch_tf32_fast_on_a_fresh_thread;
  failures = run_and_check(threaded, batch);
  EXPECT_TRUE(failures.empty()) << failures.front();
  EXPECT_FALSE(fresh_thread_had_context) << "the new thread had a context: the case is not tested";
}

gemm::Problem problem(gemm::Op op_a, gemm::Op op_b, int m, int n, int k) {
  gemm::Problem p{};
  p.op_a = op_a, p.op_b = op_b, p.m = m, p.n = n, p.k = k;
  return p;
}

// The threshold docs/NOTES.md gives its measurements for: M·N ≥ 600·(M + N), TN only.
TEST(GemmProduction, KMajorCopiesPayFromTwelveHundredFlopsPerElementInTnOnly) {
  using gemm::Op;
  using gemm::detail::k_major_copies_pay;
  EXPECT_FALSE(k_major_copies_pay(problem(Op::T, Op::N, 1024, 1024, 256)));  // 1024 per element
  EXPECT_FALSE(k_major_copies_pay(problem(Op::T, Op::N, 1024, 784, 256)));
  EXPECT_TRUE(k_major_copies_pay(problem(Op::T, Op::N, 4096, 784, 512)));  // 1316 per element
  EXPECT_TRUE(k_major_copies_pay(problem(Op::T, Op::N, 4096, 4096, 512)));
  EXPECT_TRUE(k_major_copies_pay(problem(Op::T, Op::N, 1200, 1200, 1)));  // exactly 1200
  EXPECT_FALSE(k_major_copies_pay(problem(Op::T, Op::N, 1199, 1199, 1)));
  for (Op a : {Op::N, Op::T})
    for (Op b : {Op::N, Op::T}) {
      if (a != Op::T || b != Op::N) {
        EXPECT_FALSE(k_major_copies_pay(problem(a, b, 4096, 4096, 512))) << gemm::layout_name(a, b);
      }
    }
}

TEST(GemmProduction, RegisterAKernelServesAlignedNnOnly) {
  using gemm::Op;
  alignas(16) static float buffer[64];
  gemm::Problem p = problem(Op::N, Op::N, 8, 8, 8);
  p.a = buffer, p.b = buffer, p.lda = 8, p.ldb = 8;
  EXPECT_TRUE(gemm::detail::wgmma_register_a_serves(p));
  for (Op a : {Op::N, Op::T})
    for (Op b : {Op::N, Op::T}) {
      gemm::Problem q = p;
      q.op_a = a, q.op_b = b;
      EXPECT_EQ(gemm::detail::wgmma_register_a_serves(q), a == Op::N && b == Op::N)
          << gemm::layout_name(a, b);
    }
  gemm::Problem misaligned = p;
  misaligned.b = buffer + 1;
  EXPECT_FALSE(gemm::detail::wgmma_register_a_serves(misaligned));
  gemm::Problem odd_ld = p;
  odd_ld.lda = 9;
  EXPECT_FALSE(gemm::detail::wgmma_register_a_serves(odd_ld));
}

TEST(GemmProduction, KMajorCopiesRefuseALayoutOtherThanTn) {
  const gemm::Problem nt = problem(gemm::Op::N, gemm::Op::T, 4096, 4096, 512);
  EXPECT_THROW_WITH(gemm::detail::launch_tn_on_k_major_copies(nt, nullptr, nullptr), gemm::Error,
                    "TN only");
}

}  // namespace
}  // namespace gemm_test
