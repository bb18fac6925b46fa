// Hopper warpgroup MMA (wgmma) building blocks of steps 8 to 11: the 128-byte swizzled K-major
// shared tile that wgmma reads TF32 operands from, its loaders and matrix descriptor, the wgmma
// instruction and its fences, the arithmetic (one or three TF32 products, wgmma_ops), and the
// warpgroup's K-tile product, its store to C and its staging in shared memory. Both operands come
// from shared memory (CUTLASS's "SS"); fast/wgmma_register_a.cu has the register-A form ("RS").
// sm_90a only: include from files that kernels/CMakeLists.txt compiles for sm_90a.
#pragma once

#include <cstdint>

#include "kernels/pipeline.cuh"

#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#error "wgmma code must be compiled for sm_90a only (kernels/CMakeLists.txt does so)"
#endif

namespace gemm::detail {

constexpr int kWgmmaM = 64, kWgmmaN = 128, kWgmmaK = 8;  // one wgmma.m64n128k8 per warpgroup
constexpr int kPanelK = 32;                              // floats in one 128-byte swizzled row

// Shared tile of BX rows × BK k, K-major with the 128-byte swizzle, in panels of 32 k: in a
// panel, row x holds its 32 values as eight 16-byte chunks, chunk c stored at position
// c ^ (x mod 8). 8 rows of a panel form a 1024-byte atom.
template <int BX>
__device__ __forceinline__ int swizzled(int x, int k) {
  const int chunk = ((k % kPanelK) / 4) ^ (x % 8);
  return (k / kPanelK) * BX * kPanelK + x * kPanelK + chunk * 4 + k % 4;
}

// Fills a swizzled BX×BK tile from (x0, k0), zeros outside the operand, in two calls: fetch()
// starts reading global memory and store() completes the tile one K step later, so the reads have
// a whole K step to arrive. Specialised on the operand's contiguous dim.
template <int BX, int BK, int NT, bool KMajor>
struct SwizzledTileLoader;

// K-major operand: store() copies each row's 16-byte chunks straight into place with
// cp.async; 8 consecutive threads copy 128 contiguous bytes.
template <int BX, int BK, int NT>
struct SwizzledTileLoader<BX, BK, NT, true> {
  int k0 = 0;
  __device__ __forceinline__ void fetch(const Operand<true>&, int, int k, int) { k0 = k; }
  __device__ __forceinline__ void store(float* tile, const Operand<true>& op, int x0,
                                        int tid) const {
    // Not for_each_strided: unrolled, the copies' hoisted addresses took step 8's 128×128 tile
    // from 125 to 144 registers (NN), which cost more than it saved (docs/NOTES.md, "8. wgmma").
#pragma unroll
    for (int i = tid; i < BX * BK / 4; i += NT) {
      const int x = i / (BK / 4), k = (i % (BK / 4)) * 4;
      float* dst = tile + swizzled<BX>(x, k);
      if (op.vec4_fits(x0 + x, k0 + k)) {
        cp_async16(dst, op.p + op.offset(x0 + x, k0 + k));
      } else {
#pragma unroll
        for (int j = 0; j < 4; ++j) cp_async_element(dst + j, op, x0 + x, k0 + k + j);
      }
    }
  }
};

// MN-major operand: transposed through registers. A thread owns 4×4 blocks (4 x by 4 k):
// fetch() reads a block as four float4 rows along x, store() writes it as four float4 columns
// along k. The lane arrangement serves both sides: for each k, 8 lanes read 128 contiguous bytes,
// and the 8 lanes of each store phase hit 8 different swizzled chunks (no bank conflicts).
template <int BX, int BK, int NT>
struct SwizzledTileLoader<BX, BK, NT, false> {
  static constexpr int kBlocks = BX * BK / 16;
  static constexpr int kPerThread = (kBlocks + NT - 1) / NT;
  static_assert(BX % 32 == 0 && BK % 16 == 0 && NT % 32 == 0,
                "a warp transposes 32 x by 16 k at a time");
  float4 rows[kPerThread][4];

  // Block i's origin: lanes 2j, 2j+1 take neighbouring x; lane bits 1–2 pick k, bits 3–4 x.
  __device__ __forceinline__ static int2 block_origin(int i) {
    const int group = i / 32, lane = i % 32;
    const int xb = (group % (BX / 32)) * 8 + (lane & 1) + 2 * (lane >> 3);
    const int kb = (group / (BX / 32)) * 4 + ((lane >> 1) & 3);
    return make_int2(4 * xb, 4 * kb);
  }
  __device__ __forceinline__ void fetch(const Operand<false>& op, int x0, int k0, int tid) {
#pragma unroll
    for (int r = 0; r < kPerThread; ++r) {
      const int i = tid + r * NT;
      if (kBlocks % NT != 0 && i >= kBlocks) break;
      const int2 o = block_origin(i);
#pragma unroll
      for (int j = 0; j < 4; ++j) rows[r][j] = op.load4(x0 + o.x, k0 + o.y + j);
    }
  }
  __device__ __forceinline__ void store(float* tile, const Operand<false>&, int, int tid) const {
#pragma unroll
    for (int r = 0; r < kPerThread; ++r) {
      const int i = tid + r * NT;
      if (kBlocks % NT != 0 && i >= kBlocks) break;
      store_block(tile, block_origin(i), rows[r]);
    }
  }
  // fetch() and store() at once, a block at a time (few registers): for a source with short
  // latency, such as a tile in shared memory viewed as an Operand.
  __device__ __forceinline__ static void copy(float* tile, const Operand<false>& op, int x0, int k0,
                                              int tid) {
#pragma unroll
    for (int r = 0; r < kPerThread; ++r) {
      const int i = tid + r * NT;
      if (kBlocks % NT != 0 && i >= kBlocks) break;
      const int2 o = block_origin(i);
      float4 v[4];
#pragma unroll
      for (int j = 0; j < 4; ++j) v[j] = op.load4(x0 + o.x, k0 + o.y + j);
      store_block(tile, o, v);
    }
  }

 private:
  // Writes the 4×4 block at o, held as four rows along x, as four float4 columns along k.
  __device__ __forceinline__ static void store_block(float* tile, int2 o, const float4 (&v)[4]) {
    auto column = [&](int dx) -> float4& {
      return *reinterpret_cast<float4*>(tile + swizzled<BX>(o.x + dx, o.y));
    };
    column(0) = make_float4(v[0].x, v[1].x, v[2].x, v[3].x);
    column(1) = make_float4(v[0].y, v[1].y, v[2].y, v[3].y);
    column(2) = make_float4(v[0].z, v[1].z, v[2].z, v[3].z);
    column(3) = make_float4(v[0].w, v[1].w, v[2].w, v[3].w);
  }
};

// Matrix descriptor of a swizzled K-major tile: start address, stride 1024 bytes between 8-row
// atoms, 128-byte swizzle. (The leading byte offset is unused by this layout; 1 by convention.)
__device__ __forceinline__ uint64_t sw128_descriptor(const float* tile) {
  const uint64_t address = smem_address(tile);
  return ((address & 0x3FFFF) >> 4) | (uint64_t(1) << 16) | (uint64_t(1024 >> 4) << 32) |
         (uint64_t(1) << 62);
}

// Makes this thread's completed cp.async writes visible to wgmma, which reads through the async
// proxy.
__device__ __forceinline__ void fence_proxy_async() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
template <int kPending>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending) : "memory");
}
// Keeps the compiler from moving accumulator accesses across the asynchronous MMAs.
template <int N>
__device__ __forceinline__ void fence_operands(float (&d)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// The register list "%0, …, %63" and the matching "+f" operands of 64 accumulators d[0..63], for
// the wgmma instructions' inline assembly (here and in fast/wgmma_register_a.cu).
#define GEMM_WGMMA_REGISTERS_0_63            \
  "%0, %1, %2, %3, %4, %5, %6, %7, "         \
  "%8, %9, %10, %11, %12, %13, %14, %15, "   \
  "%16, %17, %18, %19, %20, %21, %22, %23, " \
  "%24, %25, %26, %27, %28, %29, %30, %31, " \
  "%32, %33, %34, %35, %36, %37, %38, %39, " \
  "%40, %41, %42, %43, %44, %45, %46, %47, " \
  "%48, %49, %50, %51, %52, %53, %54, %55, " \
  "%56, %57, %58, %59, %60, %61, %62, %63"
#define GEMM_WGMMA_ACCUMULATORS_64(d)                                                             \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
      "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]),    \
      "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]),  \
      "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]),  \
      "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]),  \
      "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]),  \
      "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]),  \
      "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]),  \
      "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])

// d[64×128] += A[64×8] · B[8×128], both K-major in shared memory ("SS"); d is this warpgroup's
// accumulator (see the epilogue for which element each thread holds).
__device__ __forceinline__ void wgmma_m64n128k8_ss(float (&d)[64], uint64_t desc_a,
                                                   uint64_t desc_b) {
  asm volatile(
      "{\n.reg .pred accumulate;\nsetp.ne.b32 accumulate, %66, 0;\n"  // scale-d = 1: d += A·B
      "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 {" GEMM_WGMMA_REGISTERS_0_63
      "}, "
      "%64, %65, accumulate, 1, 1;\n}\n"
      : GEMM_WGMMA_ACCUMULATORS_64(d)
      : "l"(desc_a), "l"(desc_b), "r"(1));
}

// The arithmetic of the wgmma kernels: what one 64×128×8 step of a warpgroup issues, and what a
// stage holds. Tf32x1 (steps 8 and 9, tf32_fast) is one TF32 product; Tf32x3 (step 11,
// tf32x3_fast) three, fp32-accurate. (The mma.sync family has its own pair.)
namespace wgmma_ops {

// One TF32 product per wgmma step, the fp32 operands read as they are stored: the tensor cores use
// the top 19 bits of each value (TF32 truncation). A stage holds one part, the tiles as loaded.
struct Tf32x1 {
  static constexpr int kParts = 1;  // nothing derived from the landed tiles (no prepare step)
  // d[64×128] += a[64×8] · b[8×128]; a and b point into the stage's tiles (no remainders).
  __device__ __forceinline__ static void mma(float (&d)[64], const float* a, const float* b,
                                             int /*lo_offset*/) {
    wgmma_m64n128k8_ss(d, sw128_descriptor(a), sw128_descriptor(b));
  }
};

// Three TF32 products per wgmma step, fp32-accurate (step 11 has the idea). wgmma reads its
// operands from shared memory, so a stage holds a second part after the tiles as loaded (hi): the
// same swizzled tiles holding lo(x) = tf32(x − trunc(x)), which prepare() writes. The high part is
// the landed tile itself, which the tensor cores read as trunc(x), its top 19 bits; hi + lo then
// carries x to about 2⁻²¹ relative. Inputs must be finite: an infinite x gives lo = ∞ − ∞ = NaN.
struct Tf32x3 {
  static constexpr int kParts = 2;  // the tiles as loaded (hi), then their remainders (lo)

  // x − trunc(x), the bits the tensor cores drop, is exact in fp32; rounded to TF32 it is lo.
  __device__ __forceinline__ static float remainder(float x) {
    const float hi = __uint_as_float(__float_as_uint(x) & 0xFFFFE000u);  // top 19 bits
    return __uint_as_float(to_tf32(x - hi));
  }
  // The remainders of a stage's tiles (A and B, kPartFloats floats at `part`) into `lo`, in the
  // same layout; this thread's share of kThreads, in float4s (the remainders keep the swizzle).
  template <int kPartFloats, int kThreads>
  __device__ __forceinline__ static void prepare(const float* part, float* lo, int tid) {
    static_assert(kPartFloats % (4 * kThreads) == 0, "every thread takes the same float4 count");
#pragma unroll
    for (int i = 4 * tid; i < kPartFloats; i += 4 * kThreads) {
      const float4 x = *reinterpret_cast<const float4*>(part + i);
      *reinterpret_cast<float4*>(lo + i) =
          make_float4(remainder(x.x), remainder(x.y), remainder(x.z), remainder(x.w));
    }
  }
  // The stage's second part, right after its first.
  template <int kPartFloats, int kThreads>
  __device__ __forceinline__ static void prepare(float* part, int tid) {
    prepare<kPartFloats, kThreads>(part, part + kPartFloats, tid);
  }
  // The remainders of a and b lie lo_offset floats further on. The small products first, so that
  // they are not rounded away against the large one.
  __device__ __forceinline__ static void mma(float (&d)[64], const float* a, const float* b,
                                             int lo_offset) {
    wgmma_m64n128k8_ss(d, sw128_descriptor(a + lo_offset), sw128_descriptor(b));
    wgmma_m64n128k8_ss(d, sw128_descriptor(a), sw128_descriptor(b + lo_offset));
    wgmma_m64n128k8_ss(d, sw128_descriptor(a), sw128_descriptor(b));
  }
};

}  // namespace wgmma_ops

// One K tile of a warpgroup's product: acc[WM×BN] += A[WM×BK] · B[BK×BN], issued asynchronously
// and committed as one wgmma group; acc[i][j] is the 64×128 wgmma tile at rows 64i, columns 128j.
// a_rows: the warpgroup's WM rows of a BM×BK swizzled A tile; b_tile: a BN×BK swizzled B tile.
// Arithmetic issues the products of each 64×128×8 step; where it reads the tiles' remainders
// too (Tf32x3), they lie lo_offset floats further on than the tiles.
template <int BM, int BN, int BK, int WM, class Arithmetic = wgmma_ops::Tf32x1>
__device__ __forceinline__ void wgmma_k_tile(float (&acc)[WM / kWgmmaM][BN / kWgmmaN][64],
                                             const float* a_rows, const float* b_tile,
                                             int lo_offset = 0) {
  static_assert(WM % kWgmmaM == 0, "a warpgroup's rows are split into 64-row wgmma tiles");
  static_assert(BN % kWgmmaN == 0, "B's columns are split into 128-column wgmma tiles");
  static_assert(BK % kPanelK == 0, "the K tile is a whole number of 32-float swizzled panels");
  wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < BK; kk += kWgmmaK) {
    // Panel kk/32; within it, a k step is 32 bytes into each swizzled row.
    const float* a = a_rows + (kk / kPanelK) * BM * kPanelK + kk % kPanelK;
    const float* b = b_tile + (kk / kPanelK) * BN * kPanelK + kk % kPanelK;
#pragma unroll
    for (int i = 0; i < WM / kWgmmaM; ++i)  // 64 rows further on: 8 whole atoms
#pragma unroll
      for (int j = 0; j < BN / kWgmmaN; ++j)  // 128 rows of B further on: 16 whole atoms
        Arithmetic::mma(acc[i][j], a + i * kWgmmaM * kPanelK, b + j * kWgmmaN * kPanelK, lo_offset);
  }
  wgmma_commit();
}

// Writes a warpgroup's 64×BN accumulators to C from (row0, col0). Warp w holds rows
// 16w..16w+15; for each 8-column block j of wgmma tile t, acc[t][4j..4j+1] are
// (lane/4, 8j + 2·(lane%4) + {0,1}) and acc[t][4j+2..4j+3] the same 8 rows further down.
template <int BN>
__device__ __forceinline__ void store_warpgroup_tile(const Epilogue& c,
                                                     const float (&acc)[BN / kWgmmaN][64], int row0,
                                                     int col0, int thread_in_wg) {
  const int warp = thread_in_wg / 32, lane = thread_in_wg % 32;
  const int row = row0 + warp * 16 + lane / 4;
#pragma unroll
  for (int t = 0; t < BN / kWgmmaN; ++t)
#pragma unroll
    for (int j = 0; j < kWgmmaN / 8; ++j) {
      const int col = col0 + t * kWgmmaN + 8 * j + 2 * (lane % 4);
      c.store(row, col, acc[t][4 * j]);
      c.store(row, col + 1, acc[t][4 * j + 1]);
      c.store(row + 8, col, acc[t][4 * j + 2]);
      c.store(row + 8, col + 1, acc[t][4 * j + 3]);
    }
}

// Writes a warpgroup's 64×BN accumulators (held as store_warpgroup_tile says) into a shared
// tile of row stride LD from `rows`, a float2 per pair of columns; LD ≡ 8 (mod 32) spreads each
// half-warp's four rows over all 32 banks.
template <int BN, int LD>
__device__ __forceinline__ void stage_warpgroup_tile(float* rows,
                                                     const float (&acc)[BN / kWgmmaN][64],
                                                     int thread_in_wg) {
  static_assert(LD % 32 == 8, "a row stride of 8 (mod 32) floats keeps the float2 writes apart");
  const int warp = thread_in_wg / 32, lane = thread_in_wg % 32;
  float* row = rows + (warp * 16 + lane / 4) * LD;
#pragma unroll
  for (int t = 0; t < BN / kWgmmaN; ++t)
#pragma unroll
    for (int j = 0; j < kWgmmaN / 8; ++j) {
      const int col = t * kWgmmaN + 8 * j + 2 * (lane % 4);
      *reinterpret_cast<float2*>(row + col) = make_float2(acc[t][4 * j], acc[t][4 * j + 1]);
      *reinterpret_cast<float2*>(row + 8 * LD + col) =
          make_float2(acc[t][4 * j + 2], acc[t][4 * j + 3]);
    }
}

}  // namespace gemm::detail
