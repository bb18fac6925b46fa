// The K-major copies of a TN GEMM (k_major_copies.h).
//   A: op(A) is M×K, B: op(B) is K×N, C is M×N.
#include <algorithm>
#include <string>

#include "base/launch.cuh"
#include "kernels/common.cuh"
#include "kernels/fast/k_major_copies.h"
#include "kernels/fast/phase_times.cuh"

namespace gemm::detail {
namespace {

// Copies of MN-major A (K×M, stored) and B (K×N) as K-major M×K and N×K matrices of row stride
// ld_k, through shared memory in 64×64 blocks (the rows padded against bank conflicts); blockIdx.z
// picks the operand. A thread reads four elements along the operand's rows as one float4 where
// they are aligned and inside, and writes four along the copy's rows as one (ld_k % 4 == 0), so
// that enough bytes are in flight to copy at the memory's pace.
constexpr int kTransposeTile = 64, kTransposeThreads = 256;
constexpr int kTransposeQuads = kTransposeTile / 4;  // float4s along a tile's row
__global__ void __launch_bounds__(kTransposeThreads)
    transpose_to_k_major(Operand<false> a, Operand<false> b, float* a_k, float* b_k, int ld_k) {
  GEMM_PHASE_BEGIN(KMajorCopy);
  await_prior_kernels();
  GEMM_PHASE(Awaited);
  const Operand<false>& op = blockIdx.z == 0 ? a : b;
  float* dst = blockIdx.z == 0 ? a_k : b_k;
  const int x0 = blockIdx.x * kTransposeTile, k0 = blockIdx.y * kTransposeTile;
  if (x0 >= op.extent_x) return;  // the grid covers the longer of the operands copied
  __shared__ float tile[kTransposeTile][kTransposeTile + 1];  // [k][x]
  for (int i = threadIdx.x; i < kTransposeTile * kTransposeQuads; i += kTransposeThreads) {
    const int k = i / kTransposeQuads, x = i % kTransposeQuads * 4;
    const float4 v = op.load4(x0 + x, k0 + k);  // along x, coalesced; zeros outside
    tile[k][x] = v.x, tile[k][x + 1] = v.y, tile[k][x + 2] = v.z, tile[k][x + 3] = v.w;
  }
  __syncthreads();
  for (int i = threadIdx.x; i < kTransposeTile * kTransposeQuads; i += kTransposeThreads) {
    const int r = i / kTransposeQuads, q = i % kTransposeQuads * 4;  // the copy's row x0 + r
    const int x = x0 + r, k = k0 + q;
    if (x >= op.extent_x) continue;
    float* out = dst + int64_t(x) * ld_k + k;  // along k, coalesced
    if (k + 3 < op.extent_k) {
      *reinterpret_cast<float4*>(out) =
          make_float4(tile[q][r], tile[q + 1][r], tile[q + 2][r], tile[q + 3][r]);
    } else {
      for (int j = 0; j < 4 && k + j < op.extent_k; ++j) out[j] = tile[q + j][r];
    }
  }
  GEMM_PHASE(Stored);
  GEMM_PHASE_END();
}

}  // namespace

bool k_major_copies_pay(const Problem& p) {
  if (p.op_a != Op::T || p.op_b != Op::N) return false;
  const double flops = 2.0 * p.m * p.n * p.k, copied = (double(p.m) + p.n) * p.k;
  return flops >= kCopiesMinFlopsPerElement * copied;
}

namespace {

// The copies' row stride: K rounded up to 16-byte rows, as TMA needs.
int k_major_ld(const Problem& p) { return (p.k + 3) / 4 * 4; }

// Copies A, and with with_b B, K-major into the Transpose workspace (rows of k_major_ld(p)
// floats): A as M×K from the workspace's start, B as N×K after it.
float* copy_k_major(const Problem& p, bool with_b, cudaStream_t stream) {
  const int ld_k = k_major_ld(p);
  if (p.op_a != Op::T || p.op_b != Op::N) throw Error("gemm: K-major copies serve TN only");
  const long k_blocks = (p.k + kTransposeTile - 1) / kTransposeTile;
  if (k_blocks > 65535)
    throw Error("gemm: K-major copies take K up to " + std::to_string(65535L * kTransposeTile));
  const size_t rows = with_b ? size_t(p.m) + p.n : size_t(p.m);
  float* a_k = stream_workspace(WorkspaceUse::Transpose, size_t(ld_k) * rows, stream);
  const int x_extent = with_b ? std::max(p.m, p.n) : p.m;
  const dim3 grid((x_extent + kTransposeTile - 1) / kTransposeTile, unsigned(k_blocks),
                  with_b ? 2 : 1);
  launch_kernel(transpose_to_k_major, {grid, dim3(kTransposeThreads), 0, stream},
                operand_a<false>(p), operand_b<false>(p), a_k, a_k + size_t(ld_k) * p.m, ld_k);
  return a_k;
}

}  // namespace

void launch_tn_on_k_major_copies(const Problem& p, cudaStream_t stream,
                                 void (*launch_nt)(const Problem&, cudaStream_t)) {
  const int ld_k = k_major_ld(p);
  const float* a_k = copy_k_major(p, /*with_b=*/true, stream);
  Problem nt = p;
  nt.op_a = Op::N, nt.a = a_k, nt.lda = ld_k;
  nt.op_b = Op::T, nt.b = a_k + size_t(ld_k) * p.m, nt.ldb = ld_k;
  launch_nt(nt, stream);
}

void launch_tn_on_k_major_a(const Problem& p, cudaStream_t stream,
                            void (*launch_nn)(const Problem&, cudaStream_t)) {
  Problem nn = p;
  nn.op_a = Op::N, nn.a = copy_k_major(p, /*with_b=*/false, stream), nn.lda = k_major_ld(p);
  launch_nn(nn, stream);
}

}  // namespace gemm::detail
