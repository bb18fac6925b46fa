// Helpers shared by every GEMM kernel: the operand view that hides op(N/T), bounds-checked and
// vectorised tile loads into shared memory, the alpha/beta epilogue, and grid sizing.
//
// Every operand is seen as an X×K matrix, X being M for A and N for B:
//   A: element(m, k) = op(A)[m][k]        B: element(n, k) = op(B)[k][n]
// In memory one of the two dimensions is contiguous. K-major: k is contiguous, element(x, k) is
// at p[x·ld + k] (A with op N, B with op T). MN-major: x is contiguous, element(x, k) is at
// p[k·ld + x] (A with op T, B with op N). Kernels are templated on one bool per operand, KMajor,
// so NN, NT, TN and TT all share code. Shared tiles use the same two words (TileLayout).
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "base/cuda_check.h"
#include "kernels/gemm.h"

namespace gemm::detail {

template <bool KMajor>
struct Operand {
  const float* p;
  int ld;
  int extent_x;  // M or N
  int extent_k;  // K
  bool vec4_ok;  // base 16-byte aligned and ld % 4 == 0: float4 loads along the contiguous dim

  __device__ __forceinline__ int64_t offset(int x, int k) const {
    return KMajor ? int64_t(x) * ld + k : int64_t(k) * ld + x;
  }
  __device__ __forceinline__ bool in_bounds(int x, int k) const {
    return x < extent_x && k < extent_k;
  }
  // Whether the whole BX×BK tile from (x0, k0) is inside: then its loads need no checks.
  __device__ __forceinline__ bool tile_inside(int x0, int k0, int bx, int bk) const {
    return x0 + bx <= extent_x && k0 + bk <= extent_k;
  }
  // Unchecked element; the caller knows (x, k) is inside.
  __device__ __forceinline__ float get(int x, int k) const { return p[offset(x, k)]; }
  // Element, or 0 outside the matrix: zeros add nothing to the dot products.
  __device__ __forceinline__ float at(int x, int k) const {
    return in_bounds(x, k) ? get(x, k) : 0.0f;
  }
  // Whether the 4 elements from (x, k) along the contiguous dim can be one aligned float4 load.
  // Callers keep x (or k) a multiple of 4 along the contiguous dim, so ld % 4 == 0 and an aligned
  // base make the address aligned.
  __device__ __forceinline__ bool vec4_fits(int x, int k) const {
    return vec4_ok &&
           (KMajor ? (x < extent_x && k + 3 < extent_k) : (k < extent_k && x + 3 < extent_x));
  }
  // The 4 elements from (x, k) along the contiguous dim: one 128-bit load where it fits, else
  // four bounds-checked scalar loads (edges, misaligned pointers or leading dimensions).
  __device__ __forceinline__ float4 load4(int x, int k) const {
    if (vec4_fits(x, k)) return *reinterpret_cast<const float4*>(p + offset(x, k));
    if (KMajor) return make_float4(at(x, k), at(x, k + 1), at(x, k + 2), at(x, k + 3));
    return make_float4(at(x, k), at(x + 1, k), at(x + 2, k), at(x + 3, k));
  }
};

inline bool aligned16(const void* ptr) { return reinterpret_cast<uintptr_t>(ptr) % 16 == 0; }

template <bool KMajor>
Operand<KMajor> operand_a(const Problem& p) {
  return {p.a, p.lda, p.m, p.k, aligned16(p.a) && p.lda % 4 == 0};
}
template <bool KMajor>
Operand<KMajor> operand_b(const Problem& p) {
  return {p.b, p.ldb, p.n, p.k, aligned16(p.b) && p.ldb % 4 == 0};
}

// Calls f(std::bool_constant<A is K-major>, std::bool_constant<B is K-major>), turning
// the run-time layout into compile-time template arguments.
template <class F>
void with_layout(const Problem& p, F&& f) {
  auto with_b = [&](auto a_k_major) {
    if (p.op_b == Op::T)
      f(a_k_major, std::true_type{});
    else
      f(a_k_major, std::false_type{});
  };
  if (p.op_a == Op::N)
    with_b(std::true_type{});
  else
    with_b(std::false_type{});
}

// Calls f(i) for i = tid, tid + NT, … below kCount, for the NT threads of a block (tid < NT). The
// trip count is a compile-time constant, so the loop unrolls fully and its index arithmetic
// folds; written as `for (i = tid; i < kCount; i += NT)` it does not (the count depends on tid),
// and every tile copy paid for a loop with a remainder (docs/NOTES.md, "The tile copies").
template <int kCount, int NT, class F>
__device__ __forceinline__ void for_each_strided(int tid, F&& f) {
#pragma unroll
  for (int j = 0; j < (kCount + NT - 1) / NT; ++j) {
    const int i = j * NT + tid;
    if (kCount % NT == 0 || i < kCount) f(i);
  }
}

// How a shared tile is stored. MN-major, tile[kk·LDS + x], lets a thread read several X values of
// one k as a float4 (the B side, and A in the register-blocked steps). K-major, tile[x·LDS + kk],
// lets a thread read several k of its one row of A as a float4 (steps 2 and 3).
enum class TileLayout { MNMajor, KMajor };

template <TileLayout Layout, int LDS>
__device__ __forceinline__ int tile_index(int x, int kk) {
  return Layout == TileLayout::MNMajor ? kk * LDS + x : x * LDS + kk;
}

// Scalar tile load by NT threads: tile(x, kk) = element(x0 + x, k0 + kk). Consecutive threads walk
// the operand's contiguous dim so the global reads coalesce. Interior tiles (all but the last row
// and column of blocks, and the last K tile) skip the per-element bounds checks.
template <int BK, int BX, int LDS, int NT, TileLayout Layout = TileLayout::MNMajor, bool KMajor>
__device__ __forceinline__ void load_tile(float* tile, const Operand<KMajor>& op, int x0, int k0,
                                          int tid) {
  const bool inside = op.tile_inside(x0, k0, BX, BK);
  for_each_strided<BK * BX, NT>(tid, [&](int i) {
    const int x = KMajor ? i / BK : i % BX;
    const int kk = KMajor ? i % BK : i / BX;
    tile[tile_index<Layout, LDS>(x, kk)] =
        inside ? op.get(x0 + x, k0 + kk) : op.at(x0 + x, k0 + kk);
  });
}

// Four consecutive elements along the operand's contiguous dim per thread and step: one float4
// global load where aligned and inside (Operand::load4). Where the tile is contiguous along the
// same dim the float4 is stored whole; otherwise it is transposed on the way in, four scalar
// stores.
template <int BK, int BX, int LDS, int NT, TileLayout Layout = TileLayout::MNMajor, bool KMajor>
__device__ __forceinline__ void load_tile_vec4(float* tile, const Operand<KMajor>& op, int x0,
                                               int k0, int tid) {
  static_assert(BK % 4 == 0 && BX % 4 == 0, "vectorised tiles need BK and BX multiples of 4");
  static_assert(LDS % 4 == 0, "the tile's row stride must keep float4 stores 16-byte aligned");
  constexpr bool kSameContiguousDim = KMajor == (Layout == TileLayout::KMajor);
  for_each_strided<BK * BX / 4, NT>(tid, [&](int i) {
    const int x = KMajor ? i / (BK / 4) : (i % (BX / 4)) * 4;
    const int kk = KMajor ? (i % (BK / 4)) * 4 : i / (BX / 4);
    const float4 v = op.load4(x0 + x, k0 + kk);
    if (kSameContiguousDim) {
      *reinterpret_cast<float4*>(&tile[tile_index<Layout, LDS>(x, kk)]) = v;
    } else {  // step j along the operand's contiguous dim
      const int dx = KMajor ? 0 : 1, dk = KMajor ? 1 : 0;
      tile[tile_index<Layout, LDS>(x + 0 * dx, kk + 0 * dk)] = v.x;
      tile[tile_index<Layout, LDS>(x + 1 * dx, kk + 1 * dk)] = v.y;
      tile[tile_index<Layout, LDS>(x + 2 * dx, kk + 2 * dk)] = v.z;
      tile[tile_index<Layout, LDS>(x + 3 * dx, kk + 3 * dk)] = v.w;
    }
  });
}

// C ← finish(alpha·acc + beta·C), bounds-checked, where finish is the problem's epilogue (gemm.h):
// nothing, + bias[col], max(· + bias[col], 0), or zeroed where mask[row][col] ≤ 0. With beta == 0,
// C is not read. Every variant stores through here, so each gets every epilogue in every layout.
struct Epilogue {
  float* c;
  int ldc;
  int m, n;
  float alpha, beta;
  bool vec4_ok;  // c 16-byte aligned and ldc % 4 == 0
  EpilogueOp op = EpilogueOp::None;
  const float* bias = nullptr;  // n values
  const float* mask = nullptr;  // m×n, row stride ldmask
  int ldmask = 0;

  // v = alpha·acc + beta·C for the element at (row, col), which is inside.
  __device__ __forceinline__ float finish(int row, int col, float v) const {
    switch (op) {
      case EpilogueOp::Bias:
        return v + bias[col];
      case EpilogueOp::BiasRelu:
        return fmaxf(v + bias[col], 0.0f);
      case EpilogueOp::ReluMask:
        return mask[int64_t(row) * ldmask + col] > 0.0f ? v : 0.0f;
      default:
        return v;
    }
  }

  __device__ __forceinline__ void store(int row, int col, float acc) const {
    if (row >= m || col >= n) return;
    float* dst = c + int64_t(row) * ldc + col;
    *dst = finish(row, col, beta == 0.0f ? alpha * acc : alpha * acc + beta * *dst);
  }
  // Four consecutive columns from `col` (a multiple of 4): one float4 where aligned and inside.
  __device__ __forceinline__ void store4(int row, int col, float4 acc) const {
    if (row >= m) return;
    if (vec4_ok && col + 3 < n) {
      float4* dst = reinterpret_cast<float4*>(c + int64_t(row) * ldc + col);
      float4 out = make_float4(alpha * acc.x, alpha * acc.y, alpha * acc.z, alpha * acc.w);
      if (beta != 0.0f) {
        const float4 old = *dst;
        out.x += beta * old.x;
        out.y += beta * old.y;
        out.z += beta * old.z;
        out.w += beta * old.w;
      }
      if (op != EpilogueOp::None) {
        out.x = finish(row, col + 0, out.x);
        out.y = finish(row, col + 1, out.y);
        out.z = finish(row, col + 2, out.z);
        out.w = finish(row, col + 3, out.w);
      }
      *dst = out;
      return;
    }
    store(row, col + 0, acc.x);
    store(row, col + 1, acc.y);
    store(row, col + 2, acc.z);
    store(row, col + 3, acc.w);
  }
};

inline Epilogue epilogue(const Problem& p) {
  return {p.c,        p.ldc,  p.m,    p.n,     p.alpha, p.beta, aligned16(p.c) && p.ldc % 4 == 0,
          p.epilogue, p.bias, p.mask, p.ldmask};
}

// Stores a BM×BN tile staged in shared memory (row stride LD) to C at (m0, n0): NT threads, BN/4
// per row, each a float4 of consecutive columns, so a warp writes whole 128-byte lines.
template <int BM, int BN, int LD, int NT>
__device__ __forceinline__ void store_staged_tile(const Epilogue& c, const float* tile, int m0,
                                                  int n0, int tid) {
  static_assert(BN % 4 == 0 && LD % 4 == 0 && NT % (BN / 4) == 0,
                "a row is read a float4 at a time by a whole number of row groups of threads");
  constexpr int kRowsPerPass = NT / (BN / 4);
  const int col = (tid % (BN / 4)) * 4;
  for (int r = tid / (BN / 4); r < BM; r += kRowsPerPass)
    c.store4(m0 + r, n0 + col, *reinterpret_cast<const float4*>(tile + r * LD + col));
}

// Number of BM×BN output tiles, for launchers choosing a tile that fills the chip.
template <int BM, int BN>
long tile_count(const Problem& p) {
  return long((p.m + BM - 1) / BM) * ((p.n + BN - 1) / BN);
}

// x rounded to TF32 (10-bit mantissa, to nearest, ties away from zero), as the bits of an fp32
// value: the tensor-core steps' operand conversion.
__device__ __forceinline__ uint32_t to_tf32(float x) {
  uint32_t r;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
  return r;
}

// Grid of BM×BN output tiles: x over N, y over M. Throws if M is beyond the grid's y limit.
template <int BM, int BN>
dim3 tile_grid(const Problem& p) {
  const unsigned gx = (p.n + BN - 1) / BN, gy = (p.m + BM - 1) / BM;
  if (gy > 65535u)
    throw Error("gemm: M = " + std::to_string(p.m) + " needs more than 65535 blocks");
  return dim3(gx, gy);
}

// Launches, for p's layout, the kernel that kernel_for(a_k_major, b_k_major) names: a __global__
// taking (Operand<A is K-major>, Operand<B is K-major>, Epilogue). KERNEL_FOR_LAYOUT(my_kernel)
// writes kernel_for for a kernel template my_kernel<bool KMajorA, bool KMajorB>.
#define KERNEL_FOR_LAYOUT(kernel)                                          \
  [](auto a_k_major, auto b_k_major) {                                     \
    return kernel<decltype(a_k_major)::value, decltype(b_k_major)::value>; \
  }
template <class KernelFor>
void launch_for_layout(const Problem& p, dim3 grid, dim3 block, cudaStream_t stream,
                       KernelFor&& kernel_for) {
  with_layout(p, [&](auto a_k_major, auto b_k_major) {
    constexpr bool KMajorA = decltype(a_k_major)::value, KMajorB = decltype(b_k_major)::value;
    const auto kernel = kernel_for(a_k_major, b_k_major);
    kernel<<<grid, block, 0, stream>>>(operand_a<KMajorA>(p), operand_b<KMajorB>(p), epilogue(p));
  });
  CUDA_CHECK_LAUNCH();
}

// Scratch memory on `stream`'s device: one grow-only buffer per use, device and stream, so the
// first call of a shape allocates and later calls do not. Nothing is freed before exit, so a CUDA
// graph that captured a call keeps valid pointers; capture after one uncaptured call of each
// shape, since an allocation inside a capture fails. Where a ScopedWorkspaceAllocator is
// installed (gemm.h), each request goes to its allocator instead. A launcher asks once per use
// and call.
enum class WorkspaceUse { SplitK, Transpose, Cublas };
float* stream_workspace(WorkspaceUse use, size_t floats, cudaStream_t stream);  // split_k.cu

// Multiprocessors of the current device, for launchers that size their tiles to fill the chip.
inline int multiprocessor_count() {
  int device = 0, count = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device));
  return count;
}

// Blocks of Kernel resident on one multiprocessor at once, launched with `threads` threads and
// `dynamic_smem` bytes of dynamic shared memory: queried once per kernel, so a kernel is always
// asked about with the same launch (a kernel's registers and shared memory are fixed per build).
template <auto Kernel>
int resident_blocks(int threads, int dynamic_smem = 0) {
  static const int resident = [&] {
    int blocks = 0;
    CUDA_CHECK(
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, Kernel, threads, dynamic_smem));
    return blocks;
  }();
  return resident;
}

}  // namespace gemm::detail
