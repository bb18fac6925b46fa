// The split-K planner and its whole-wave rule (kernels/split_k.cuh), fast's finer-tile rule and the
// wgmma pipeline's tile choice (kernels/fast/split_k_rules.cuh) and the cluster way's split
// (kernels/fast/cluster_split_k.cuh): host logic, so it runs everywhere, GPU or not.
//
// Test names: SplitKPlanner.*
#include <gtest/gtest.h>

#include "kernels/fast/cluster_split_k.cuh"
#include "kernels/fast/split_k_rules.cuh"
#include "kernels/split_k.cuh"

namespace {

using gemm::detail::cluster_split;
using gemm::detail::finer_tile_beats_split;
using gemm::detail::in_whole_waves;
using gemm::detail::large_tile_split_beats_small;
using gemm::detail::narrow_tile_beats_small;
using gemm::detail::plan_split_k;
using gemm::detail::SplitK;

constexpr int kBk = 16;    // fast's small tile
constexpr int kSms = 132;  // an H200

gemm::Problem with_k(int k) {
  gemm::Problem p;
  p.m = p.n = 256;  // the planner reads only K; the caller counts the tiles
  p.k = k;
  return p;
}

// fast's call: 3 blocks per multiprocessor, at most 8 slices (one cluster).
SplitK fast_plan(long tiles, int k) {
  return plan_split_k<kBk>(with_k(k), tiles, kSms, {.blocks_per_sm = 3, .max_splits = 8});
}

TEST(SplitKPlanner, SlicesCoverKInWholeNonEmptyTiles) {
  for (int k : {1, 15, 16, 17, 63, 64, 256, 640, 784, 1000, 1024, 4096})
    for (long tiles : {1L, 4L, 52L, 64L, 131L, 132L, 208L, 256L, 395L, 396L, 1000L})
      for (int blocks_per_sm : {1, 3})
        for (int max_splits : {8, 16}) {
          const SplitK plan = plan_split_k<kBk>(
              with_k(k), tiles, kSms, {.blocks_per_sm = blocks_per_sm, .max_splits = max_splits});
          const int k_tiles = (k + kBk - 1) / kBk;
          SCOPED_TRACE("K = " + std::to_string(k) + ", " + std::to_string(tiles) + " tiles, " +
                       std::to_string(blocks_per_sm) + " per SM, cap " +
                       std::to_string(max_splits));
          EXPECT_GE(plan.splits, 1);
          EXPECT_LE(plan.splits, max_splits);
          EXPECT_EQ(plan.k_per_split % kBk, 0);
          EXPECT_GE(long(plan.splits) * plan.k_per_split, long(k));      // covers K
          EXPECT_LT(long(plan.splits - 1) * plan.k_per_split, long(k));  // last slice not empty
          if (plan.splits > 1) EXPECT_GE(plan.k_per_split / kBk, 4);     // kMinKTiles
          if (plan.splits == 1) EXPECT_EQ(plan.k_per_split, k_tiles * kBk);
        }
}

TEST(SplitKPlanner, SplitsOnlyGridsShortOfTheBlocksWanted) {
  EXPECT_EQ(fast_plan(396, 4096).splits, 1);  // 3 blocks on each of 132
  EXPECT_EQ(fast_plan(1000, 4096).splits, 1);
  EXPECT_EQ(fast_plan(395, 4096).splits, 2);
  EXPECT_EQ(fast_plan(1, 192).splits, 3);   // 12 K tiles: capped by the 4-K-tile minimum
  EXPECT_EQ(fast_plan(1, 48).splits, 1);    // 3 K tiles: too few to split
  EXPECT_EQ(fast_plan(1, 4096).splits, 8);  // capped at one cluster
}

TEST(SplitKPlanner, OneWaveRoundsTheSlicesDown) {
  // 28 tiles on 132 multiprocessors, 256 K tiles: 5 slices would make 140 blocks.
  auto one_block_plan = [](long tiles, bool one_wave) {
    return plan_split_k<kBk>(with_k(4096), tiles, kSms, {.one_wave = one_wave});
  };
  EXPECT_EQ(one_block_plan(28, false).splits, 5);
  EXPECT_EQ(one_block_plan(28, true).splits, 4);
  EXPECT_LE(28 * one_block_plan(28, true).splits, kSms);
  EXPECT_EQ(one_block_plan(16, true).splits, 8);   // 132 / 16 = 8.25
  EXPECT_EQ(one_block_plan(100, true).splits, 1);  // not even two slices each fit
}

TEST(SplitKPlanner, MlpShapes) {
  EXPECT_EQ(fast_plan(64, 784).splits, 7);   // 256×1024×784 NT: 7 slices of 7 K tiles
  EXPECT_EQ(fast_plan(52, 1024).splits, 8);  // 256×784×1024 NN
  EXPECT_EQ(fast_plan(208, 256).splits, 2);  // 1024×784×256 TN
}

// 256 tiles on 132 multiprocessors are 1.94 waves: already balanced. Split in 2, each slice of
// K = 256 would be 8 K tiles; of K = 1024, 32.
TEST(SplitKPlanner, LeavesBalancedGridsWithShortKUnsplit) {
  EXPECT_EQ(fast_plan(256, 256).splits, 1);   // 1024×1024×256 TN
  EXPECT_EQ(fast_plan(264, 256).splits, 1);   // two whole waves
  EXPECT_EQ(fast_plan(256, 1024).splits, 2);  // 1024³: long slices still pay
  EXPECT_EQ(fast_plan(208, 256).splits, 2);   // last wave 76 of 132: unbalanced
  EXPECT_EQ(fast_plan(100, 256).splits, 4);   // under one wave
}

// fast's plans in whole waves of resident blocks (4 of its small tile on each of 132).
constexpr long kResident = 4L * kSms;

TEST(SplitKPlanner, WholeWavesTakeFewerSlicesOverAShortLastWave) {
  // 384×2000×2000 NT: 192 tiles in 3 slices of 42 K tiles are 576 blocks, 48 past one wave;
  // 2 slices of 63 fit in one.
  const SplitK plan = fast_plan(192, 2000);
  ASSERT_EQ(plan.splits, 3);
  const SplitK waved = in_whole_waves<kBk>(with_k(2000), plan, 192, kResident);
  EXPECT_EQ(waved.splits, 2);
  EXPECT_EQ(waved.k_per_split, 63 * kBk);
  // Within one wave already: kept (the default model's 256×1024×784 NT, 7 slices of 64 tiles).
  const SplitK mlp = fast_plan(64, 784);
  EXPECT_EQ(in_whole_waves<kBk>(with_k(784), mlp, 64, kResident).splits, mlp.splits);
  // 300 tiles in 2 slices of 32 are 2 waves, unsplit 1 wave of 64: a tie keeps the plan.
  EXPECT_EQ(in_whole_waves<kBk>(with_k(1024), fast_plan(300, 1024), 300, kResident).splits, 2);
  // Occupancy unknown: the plan as it is.
  EXPECT_EQ(in_whole_waves<kBk>(with_k(2000), plan, 192, 0).splits, 3);
}

TEST(SplitKPlanner, WholeWavesCoverKInWholeNonEmptySlicesAndNeverAddSlices) {
  for (int k : {64, 256, 784, 1000, 2000, 4096})
    for (long tiles : {1L, 52L, 132L, 176L, 192L, 198L, 264L, 300L, 395L})
      for (long resident : {132L, 396L, 528L, 660L}) {
        const SplitK plan =
            plan_split_k<kBk>(with_k(k), tiles, kSms, {.blocks_per_sm = 3, .max_splits = 16});
        const SplitK waved = in_whole_waves<kBk>(with_k(k), plan, tiles, resident);
        SCOPED_TRACE("K = " + std::to_string(k) + ", " + std::to_string(tiles) + " tiles, " +
                     std::to_string(resident) + " resident");
        EXPECT_GE(waved.splits, 1);
        EXPECT_LE(waved.splits, plan.splits);
        EXPECT_EQ(waved.k_per_split % kBk, 0);
        EXPECT_GE(long(waved.splits) * waved.k_per_split, long(k));
        EXPECT_LT(long(waved.splits - 1) * waved.k_per_split, long(k));
      }
}

// An M×N×K problem in tiles of BM×BN, K split as the wgmma pipeline plans it: one wave of one
// block per multiprocessor, K tiles of 32.
struct TilePlan {
  long tiles;
  SplitK plan;
};
template <int BM, int BN>
TilePlan pipeline_plan(int m, int n, int k) {
  gemm::Problem p;
  p.m = m, p.n = n, p.k = k;
  const long tiles = gemm::detail::tile_count<BM, BN>(p);
  return {tiles, plan_split_k<32>(p, tiles, kSms, {.one_wave = true})};
}

// The wgmma pipeline's choice between its large tile (256×128) with K split and its small tile
// (128×128) as planned.
TEST(SplitKPlanner, LargeTileSplitReplacesLongUnsplitSmallTiles) {
  auto large_wins = [](int m, int n, int k) {
    const TilePlan large = pipeline_plan<256, 128>(m, n, k),
                   small = pipeline_plan<128, 128>(m, n, k);
    return large_tile_split_beats_small<32>(large.tiles, large.plan, small.tiles, small.plan, kSms);
  };
  EXPECT_TRUE(large_wins(512, 4096, 4096));  // 64 tiles in 2 slices of 64 K tiles, or 128 of 128
  EXPECT_TRUE(large_wins(384, 4096, 2048));  // 64 tiles in 2 slices of 32, or 96 of 64
  // gemm_sanitizer_cases' long K: 48 tiles in 2 slices of 32, or 72 of 63
  EXPECT_TRUE(large_wins(300, 3000, 2000));
  EXPECT_FALSE(large_wins(512, 4096, 784));   // slices of 13 K tiles do not pay for the sum
  EXPECT_FALSE(large_wins(256, 1024, 784));   // both split in 5: the small tile's K tiles cost less
  EXPECT_FALSE(large_wins(1024, 1024, 256));  // both split in 2
  EXPECT_FALSE(large_wins(1024, 4096, 4096));  // 128 large tiles: one wave unsplit, no split
}

// The wgmma pipeline's choice between its narrow tile (64×128) and its small tile (128×128), both
// with K split as planned: in TF32 (a narrow K tile 3 quarter small K tiles) and in 3×TF32 (5).
TEST(SplitKPlanner, NarrowTileReplacesTheSmallTileWhereBothSplit) {
  auto narrow_wins = [](long k_tile_cost, int m, int n, int k) {
    const TilePlan narrow = pipeline_plan<64, 128>(m, n, k),
                   small = pipeline_plan<128, 128>(m, n, k);
    return narrow_tile_beats_small<32>(narrow.tiles, narrow.plan, k_tile_cost, small.tiles,
                                       small.plan, kSms);
  };
  for (long cost : {3L, 5L}) {
    EXPECT_TRUE(narrow_wins(cost, 128, 512, 784));    // 8 tiles in 5 slices of 5, or 4 in 5 of 5
    EXPECT_TRUE(narrow_wins(cost, 128, 512, 512));    // 8 tiles in 4 slices of 4, or 4 in 4 of 4
    EXPECT_TRUE(narrow_wins(cost, 131, 67, 300));     // gemm_sanitizer_cases' split shapes
    EXPECT_FALSE(narrow_wins(cost, 512, 4096, 784));  // the small tile unsplit: 128 in one wave
    EXPECT_FALSE(narrow_wins(cost, 256, 1024, 64));   // K too short to split
  }
  // 32 tiles in 4 slices of 7 K tiles, or 16 in 5 of 5: longer slices pay in TF32 alone.
  EXPECT_TRUE(narrow_wins(3, 256, 1024, 784));
  EXPECT_FALSE(narrow_wins(5, 256, 1024, 784));
  EXPECT_TRUE(narrow_wins(3, 200, 1000, 700));  // 32 tiles in 4 slices of 6, or 16 in 5 of 5
  EXPECT_FALSE(narrow_wins(5, 200, 1000, 700));
}

// fast's choice between its 64×64 tile and the 64×32 one (the tile counts of M×N).
TEST(SplitKPlanner, FinerTileReplacesShortSlices) {
  auto finer_wins = [](long coarse_tiles, long fine_tiles, int k) {
    return finer_tile_beats_split<kBk>(fast_plan(coarse_tiles, k), fast_plan(fine_tiles, k));
  };
  EXPECT_TRUE(finer_wins(208, 400, 256));  // 1024×784×256 TN: 2 slices of 8 K tiles, or 400 tiles
  EXPECT_FALSE(finer_wins(256, 512, 1024));  // 1024³: slices of 32 K tiles pay
  EXPECT_FALSE(finer_wins(52, 100, 1024));   // 256×784×1024 NN: the finer grid splits too
  EXPECT_FALSE(finer_wins(256, 512, 256));   // 1024×1024×256 TN: not split in the first place
  EXPECT_FALSE(finer_wins(16, 32, 256));     // 10×1024×256 TN: both split
}

// The cluster way keeps the plan where its clusters fit, else takes the most slices that fit, up
// to slices 3/2 as long as the plan's; beyond that, none (the workspace way).
TEST(SplitKPlanner, ClusterSplitTakesTheMostSlicesThatFit) {
  const gemm::Problem p = with_k(1024);  // 64 K tiles of 16
  const SplitK plan{8, 8 * kBk};
  auto fitting = [&](int most) {
    return cluster_split<kBk>(p, plan, [most](int splits) { return splits <= most; });
  };
  EXPECT_EQ(fitting(8).splits, 8);
  EXPECT_EQ(fitting(8).k_per_split, 8 * kBk);
  EXPECT_EQ(fitting(7).splits, 7);  // 10 K tiles each, the last 4
  EXPECT_EQ(fitting(7).k_per_split, 10 * kBk);
  EXPECT_EQ(fitting(6).splits, 6);  // 11 K tiles: 11/8 of the plan's
  EXPECT_EQ(fitting(5).splits, 1);  // 13 K tiles: more than 3/2
  EXPECT_EQ(fitting(1).splits, 1);
  // A plan over the cluster limit starts at 8 slices; recounted so that no slice is empty.
  const SplitK sixteen{16, 4 * kBk};
  EXPECT_EQ(cluster_split<kBk>(p, sixteen, [](int) { return true; }).splits, 1);  // 2× as long
  const gemm::Problem short_k = with_k(5 * kBk);
  const SplitK five{5, kBk};
  const SplitK recounted = cluster_split<kBk>(short_k, five, [](int splits) { return splits < 5; });
  EXPECT_EQ(recounted.splits, 1);  // 4 slices would need 2 K tiles each: 2× as long
  const SplitK three = cluster_split<kBk>(with_k(6 * kBk), SplitK{3, 2 * kBk},
                                          [](int splits) { return splits == 3; });
  EXPECT_EQ(three.splits, 3);
}

}  // namespace
