// The short-K GEMM on CUDA cores (short_k_fma.h).
//   A: op(A) is M×K, B: op(B) is K×N, C is M×N.
#include "kernels/common.cuh"
#include "kernels/fast/short_k_fma.h"

namespace gemm::detail {
namespace {

constexpr int kThreads = 256, kColumns = 256;  // a float4 of columns per thread, 64 per row

// A[BM×K] and B[K×256] whole in shared memory (K padded to 16 with zeros), then each thread's
// RowsPerThread dot products of length 16, one FMA chain per element.
template <int RowsPerThread, bool KMajorA, bool KMajorB>
__global__ void __launch_bounds__(kThreads)
    short_k_fma_kernel(Operand<KMajorA> a, Operand<KMajorB> b, Epilogue c) {
  constexpr int kRows = 4 * RowsPerThread;                           // 4 row groups of 64 threads
  __shared__ __align__(16) float a_tile[kShortKFmaMaxK * kRows];     // [k][row]
  __shared__ __align__(16) float b_tile[kShortKFmaMaxK * kColumns];  // [k][column]
  const int m0 = blockIdx.y * kRows, n0 = blockIdx.x * kColumns, tid = threadIdx.x;
  load_tile<kShortKFmaMaxK, kRows, kRows, kThreads>(a_tile, a, m0, 0, tid);
  load_tile_vec4<kShortKFmaMaxK, kColumns, kColumns, kThreads>(b_tile, b, n0, 0, tid);
  __syncthreads();
  const int col = (tid % (kColumns / 4)) * 4, row0 = (tid / (kColumns / 4)) * RowsPerThread;
  float4 acc[RowsPerThread] = {};
#pragma unroll
  for (int k = 0; k < kShortKFmaMaxK; ++k) {
    const float4 bk = *reinterpret_cast<const float4*>(b_tile + k * kColumns + col);
#pragma unroll
    for (int r = 0; r < RowsPerThread; ++r) {
      const float ak = a_tile[k * kRows + row0 + r];
      acc[r].x = fmaf(ak, bk.x, acc[r].x);
      acc[r].y = fmaf(ak, bk.y, acc[r].y);
      acc[r].z = fmaf(ak, bk.z, acc[r].z);
      acc[r].w = fmaf(ak, bk.w, acc[r].w);
    }
  }
#pragma unroll
  for (int r = 0; r < RowsPerThread; ++r) c.store4(m0 + row0 + r, n0 + col, acc[r]);
}

}  // namespace

template <int RowsPerThread>
void launch_short_k_fma_rows(const Problem& p, cudaStream_t stream) {
  static_assert(RowsPerThread == 2 || RowsPerThread == 4 || RowsPerThread == 8,
                "a thread computes 2, 4 or 8 rows");
  if (p.k > kShortKFmaMaxK) throw Error("gemm: the short-K kernel takes K up to 16");
  launch_for_layout(p, tile_grid<4 * RowsPerThread, kColumns>(p), dim3(kThreads), stream,
                    [](auto a_k_major, auto b_k_major) {
                      return short_k_fma_kernel<RowsPerThread, decltype(a_k_major)::value,
                                                decltype(b_k_major)::value>;
                    });
}

template void launch_short_k_fma_rows<2>(const Problem&, cudaStream_t);
template void launch_short_k_fma_rows<4>(const Problem&, cudaStream_t);
template void launch_short_k_fma_rows<8>(const Problem&, cudaStream_t);

void launch_short_k_fma(const Problem& p, cudaStream_t stream) {
  const long enough = 2L * multiprocessor_count();
  if (tile_count<32, kColumns>(p) >= enough) {
    launch_short_k_fma_rows<8>(p, stream);
  } else if (tile_count<16, kColumns>(p) >= enough) {
    launch_short_k_fma_rows<4>(p, stream);
  } else {
    launch_short_k_fma_rows<2>(p, stream);
  }
}

}  // namespace gemm::detail
