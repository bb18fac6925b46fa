// Step 9 — warp specialisation with TMA copies. In step 8 every warp both copies and multiplies,
// and one block barrier per K tile holds all of them to the pace of the slowest copy. Here one
// producer warpgroup only fills shared memory and the consumer warpgroups only issue wgmma; they
// hand stages to each other through two mbarriers per stage ("full": the tile has landed;
// "empty": every consumer has finished reading it), so neither side waits for more than the one
// stage it needs. Global reads are the TMA engine's, one instruction per tile from one thread:
// a K-major tile lands already 128-byte swizzled, as wgmma reads it; an MN-major one
// lands as stored, in a staging slot, and the producer's threads transpose it in shared memory.
// (Transposing straight from global memory through registers, as 08 does, held NN back here
// (docs/KERNELS.md, "9. wgmma_ws"): a thread's arrive on "full" releases its writes and so first
// waits for all its loads in flight, which exposes their latency at every stage.) Change from 08:
// the K loop splits into a producer loop and a consumer loop; the block barrier becomes per-stage
// mbarriers; tiles come by TMA; each consumer owns 128 rows. The kernel is in wgmma_ws.cuh,
// shared with step 11; this file gives it its arithmetic (one TF32 product) and its tiles.
//   A: op(A) is M×K, B: op(B) is K×N, C is M×N.
#include <string>

#include "kernels/launchers.h"
#include "kernels/wgmma_ws.cuh"

namespace gemm::detail {
namespace {

// Measured on the H200 (docs/KERNELS.md): two consumers of 128×128 on a 256×128 tile for large
// grids; 128×128 (two consumers of 64×128) with split-K when the large tile leaves
// multiprocessors idle.
using LargeTile = WsConfig<256, 128, 4, 2, Tf32Product>;
using SmallTile = WsConfig<128, 128, 4, 2, Tf32Product>;

}  // namespace

// In the library only: a tune candidate (scripts/tune/) including this file must not define
// these again.
#ifndef GEMM_TUNE_CANDIDATE
void launch_wgmma_ws(const Problem& p, cudaStream_t stream) {
  launch_wgmma_ws_tiles<LargeTile, SmallTile>(p, stream);
}
#endif

}  // namespace gemm::detail
