// Variant `tf32x3_fast`: the production fp32-accurate tensor-core kernel, beside the ladder. It
// runs 3×TF32 (steps 10 and 11) with the kernel and the tile that suit the shape:
//   narrow: an output at most 16 rows or 16 columns (the MLP's output layer, N = 10, and its
//     weight gradient, M = 10): step 10's mma.sync kernel with a 16-wide tile, K split across
//     blocks. wgmma's tiles are at least 64 rows; step 11's 128×128 tile would be 92% padding.
//   short K: K at most one K tile (32; the output layer's input gradient, K = 10): step 10's
//     kernel with its output staged in shared memory and stored a row at a time, since these
//     blocks do little but store; a 64×128 tile where that gives every multiprocessor a block,
//     else 16×64.
//   on Hopper, the rest: step 11's kernel. Where both operands are MN-major (TN, the weight
//     gradients) and the GEMM does at least kTransposeMinFlopsPerElement flops per element it
//     would transpose, both are first copied K-major into a workspace and the GEMM runs as NT,
//     TMA straight into the tiles: step 11 transposes each MN-major tile in shared memory, which
//     costs TN two transposes per K tile (docs/KERNELS.md, "tf32x3_fast").
//   elsewhere: step 10's kernel with its own tiles.
// The configs came from scripts/tune/tf32x3_tiles.sh (docs/results/tuning_tf32x3_h200.txt).
//   A: op(A) is M×K, B: op(B) is K×N, C is M×N.
#include <algorithm>

#include "kernels/launchers.h"
#include "kernels/split_tf32.cuh"

namespace gemm::detail {
namespace {

using NarrowNTile = MmaConfig<64, 16, 32, 16, 16, 3>;             // 4 warps, 16×16 each
using NarrowMTile = MmaConfig<16, 64, 32, 16, 16, 3>;             // 4 warps, 16×16 each
using ShortKLargeTile = MmaConfig<64, 128, 32, 32, 64, 2, true>;  // 4 warps, 32×64 each
using ShortKSmallTile = MmaConfig<16, 64, 32, 16, 16, 2, true>;   // 4 warps, 16×16 each

// An output narrower than this in M or N takes a narrow tile; K up to this takes the short-K one.
constexpr int kNarrow = 16;
constexpr int kShortK = ShortKLargeTile::kBk;
static_assert(NarrowNTile::kBn == kNarrow && NarrowMTile::kBm == kNarrow,
              "a narrow tile is exactly as wide as the outputs it serves");

// The K-major copies pay for themselves where the GEMM does this many flops per element copied:
// 2·M·N·K / ((M + N)·K) ≥ 1200, i.e. M·N ≥ 600·(M + N). Measured: 1024 × 1024 (1024 flops per
// element) loses 11%, 4096 × 784 (1316) gains 19%.
constexpr double kTransposeMinFlopsPerElement = 1200;

// A step-10 tile with K split across blocks until the grid gives BlocksPerSm blocks per
// multiprocessor, in slices of at least kMinKTiles K tiles: these tiles are small and their
// blocks short, so several share a multiprocessor. scripts/tune/ times other configs through it.
constexpr int kBlocksPerSm = 4, kMinKTiles = 2, kMaxSplits = 16;
template <class Cfg, int BlocksPerSm = kBlocksPerSm>
void launch_split_tile(const Problem& p, cudaStream_t stream) {
  const SplitK plan =
      plan_split_k<Cfg::kBk>(p, tile_count<Cfg::kBm, Cfg::kBn>(p), multiprocessor_count(),
                             BlocksPerSm, kMaxSplits, kMinKTiles);
  launch_mma_sync_config<Cfg, SplitTf32>(p, plan, stream);
}

// Copies of MN-major A (K×M, stored) and B (K×N) as K-major M×K and N×K matrices of row stride
// ld_k, for the NT kernel. 32×32 blocks through shared memory (the column padded against bank
// conflicts), read and written a row at a time; blockIdx.z picks the operand.
constexpr int kTransposeTile = 32, kTransposeRows = 8;
__global__ void __launch_bounds__(kTransposeTile* kTransposeRows)
    transpose_to_k_major(Operand<false> a, Operand<false> b, float* a_k, float* b_k, int ld_k) {
  const Operand<false>& op = blockIdx.z == 0 ? a : b;
  float* dst = blockIdx.z == 0 ? a_k : b_k;
  const int x0 = blockIdx.x * kTransposeTile, k0 = blockIdx.y * kTransposeTile;
  if (x0 >= op.extent_x) return;  // the grid covers the longer of M and N
  __shared__ float tile[kTransposeTile][kTransposeTile + 1];
  for (int r = threadIdx.y; r < kTransposeTile; r += kTransposeRows)
    tile[r][threadIdx.x] = op.at(x0 + threadIdx.x, k0 + r);  // along x, coalesced
  __syncthreads();
  for (int r = threadIdx.y; r < kTransposeTile; r += kTransposeRows) {
    const int x = x0 + r, k = k0 + threadIdx.x;  // along k, coalesced
    if (x < op.extent_x && k < op.extent_k) dst[int64_t(x) * ld_k + k] = tile[threadIdx.x][r];
  }
}

bool worth_transposing(const Problem& p) {
  if (p.op_a != Op::T || p.op_b != Op::N) return false;
  const double flops = 2.0 * p.m * p.n * p.k, copied = (double(p.m) + p.n) * p.k;
  return flops >= kTransposeMinFlopsPerElement * copied;
}

// TN: A (K×M) and B (K×N) copied K-major into the workspace, then step 11 runs the GEMM as NT.
void launch_tn_as_nt(const Problem& p, cudaStream_t stream) {
  const int ld_k = (p.k + 3) / 4 * 4;  // 16-byte rows, as TMA needs
  const long k_blocks = (p.k + kTransposeTile - 1) / kTransposeTile;
  if (k_blocks > 65535) throw Error("gemm: tf32x3_fast transposes K up to 2^21");
  float* a_k =
      stream_workspace(WorkspaceUse::Transpose, size_t(ld_k) * (size_t(p.m) + p.n), stream);
  float* b_k = a_k + size_t(ld_k) * p.m;
  const dim3 grid((std::max(p.m, p.n) + kTransposeTile - 1) / kTransposeTile, unsigned(k_blocks),
                  2);
  transpose_to_k_major<<<grid, dim3(kTransposeTile, kTransposeRows), 0, stream>>>(
      operand_a<false>(p), operand_b<false>(p), a_k, b_k, ld_k);
  CUDA_CHECK_LAUNCH();
  Problem nt = p;
  nt.op_a = Op::N, nt.a = a_k, nt.lda = ld_k;
  nt.op_b = Op::T, nt.b = b_k, nt.ldb = ld_k;
  launch_tf32x3_ws(nt, stream);
}

}  // namespace

// In the library only: a tune candidate (scripts/tune/) including this file must not define it
// again.
#ifndef GEMM_TUNE_CANDIDATE
void launch_tf32x3_fast(const Problem& p, cudaStream_t stream) {
  if (p.n <= kNarrow) {
    launch_split_tile<NarrowNTile>(p, stream);
  } else if (p.m <= kNarrow) {
    launch_split_tile<NarrowMTile>(p, stream);
  } else if (p.k <= kShortK) {
    if (tile_count<ShortKLargeTile::kBm, ShortKLargeTile::kBn>(p) >= multiprocessor_count())
      launch_split_tile<ShortKLargeTile>(p, stream);
    else
      launch_split_tile<ShortKSmallTile>(p, stream);
  } else if (wgmma_unavailable()) {
    launch_tf32x3(p, stream);
  } else if (worth_transposing(p)) {
    launch_tn_as_nt(p, stream);
  } else {
    launch_tf32x3_ws(p, stream);
  }
}
#endif

}  // namespace gemm::detail
