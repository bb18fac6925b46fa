// NN in TF32 with wgmma's A operand in registers: the production TF32 kernel's NN path
// (tf32_fast.cu), beside the ladder. wgmma reads TF32 operands from shared memory only K-major, so
// steps 8 and 9 transpose NN's B tile (K×N, N contiguous) in shared memory at every stage, and at
// the large NN GEMMs that transpose sets the pace, not the tensor cores (docs/NOTES.md,
// "tf32_fast"). wgmma's A operand may instead come from registers, in any layout the threads can
// load. So this kernel computes Cᵀ = Bᵀ·Aᵀ: B is wgmma's A, loaded by the consumers from the tile
// as TMA lands it, and A (K-major) is wgmma's B, read from shared memory as steps 8 to 11 read it;
// the output tile is staged back into C's layout. No thread transposes anything, so one producer
// warp only issues the TMA copies. Aligned operands only (TMA); tf32_fast sends others to the wgmma
// pipeline (wgmma_pipeline.cuh).
// The arithmetic is a parameter. With wgmma_ops::Tf32x3 (tf32x3_fast's NN) each fragment's
// remainders are taken in registers as it is loaded; only the shared-memory operand's remainders
// need shared memory, a ring of two A tiles that the consumers prepare as in the wgmma pipeline.
//   A: op(A) is M×K (K contiguous), B: op(B) is K×N (N contiguous), C is M×N. sm_90a.
#include <string>

#include "kernels/fast/wgmma_pipeline.cuh"
#include "kernels/launchers.h"

namespace gemm::detail {
namespace {

// d[64×256] += a[64×8] · B[8×256], a in registers and B K-major in shared memory (as wgmma.cuh's
// tiles): CUTLASS's "RS" operand sources, where wgmma.cuh's steps are "SS". a is wgmma's A
// fragment: lane l of warp w holds rows r = 16w + l/4 and r + 8 at k = l%4 and k + 4, as a[0] (r,
// k), a[1] (r + 8, k), a[2] (r, k + 4), a[3] (r + 8, k + 4). d is held as store_warpgroup_tile
// says, over 32 blocks of 8 columns.
__device__ __forceinline__ void wgmma_m64n256k8_rs(float (&d)[128], const uint32_t (&a)[4],
                                                   uint64_t desc_b) {
  asm volatile(
      "{\n.reg .pred accumulate;\nsetp.ne.b32 accumulate, %133, 0;\n"  // scale-d = 1: d += a·B
      "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 {" GEMM_WGMMA_REGISTERS_0_63
      ", "
      "%64, %65, %66, %67, %68, %69, %70, %71, "
      "%72, %73, %74, %75, %76, %77, %78, %79, "
      "%80, %81, %82, %83, %84, %85, %86, %87, "
      "%88, %89, %90, %91, %92, %93, %94, %95, "
      "%96, %97, %98, %99, %100, %101, %102, %103, "
      "%104, %105, %106, %107, %108, %109, %110, %111, "
      "%112, %113, %114, %115, %116, %117, %118, %119, "
      "%120, %121, %122, %123, %124, %125, %126, %127"
      "}, {%128, %129, %130, %131}, %132, accumulate, 1, 1;\n}\n"
      : GEMM_WGMMA_ACCUMULATORS_64(d), GEMM_WGMMA_ACCUMULATORS_64((d + 64))
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(1));
}

// A block computes a BM×BN tile of C as wgmma's Cᵀ: each consumer warpgroup owns 64 columns of C
// (wgmma's M) by all BM rows (wgmma's N, one m64n256k8 per k step). Two consumers (a 256×128 tile
// of C); 4 stages in TF32, 3 beside the ring of remainders in 3×TF32.
struct RsTile {
  static constexpr int kConsumers = 2, kStages = 4;
  using Arithmetic = wgmma_ops::Tf32x1;
};
struct RsTf32x3Tile {
  static constexpr int kConsumers = 2, kStages = 3;
  using Arithmetic = wgmma_ops::Tf32x3;
};

// Tile's derived sizes.
template <class Tile>
struct RsShape {
  using Arithmetic = typename Tile::Arithmetic;
  static constexpr int kConsumers = Tile::kConsumers, kStages = Tile::kStages;
  static constexpr int kBm = 256, kBn = 64 * kConsumers, kBk = kPanelK;
  static constexpr int kThreads = 128 * kConsumers + 32;  // + one producer warp
  // A stage: A's tile, K-major and swizzled as swizzled<BM>() says (one TMA box), then B's, BN/32
  // boxes of 32 n by 32 k, each k a 128-byte row swizzled the same way.
  static constexpr int kATileFloats = kBm * kBk, kBoxFloats = kPanelK * kBk;
  static constexpr int kStageFloats = kATileFloats + kBn * kBk;
  // After the stages, where the arithmetic takes remainders: a ring of two A tiles' remainders.
  static constexpr bool kPrepared = Arithmetic::kParts > 1;
  static constexpr int kDerivedFloats = kPrepared ? 2 * kATileFloats : 0;
  static constexpr int kOutputLd = kBn + 4;  // staged C rows, 16-byte aligned
  static constexpr int kSmemBytes = (kStages * kStageFloats + kDerivedFloats) * int(sizeof(float)) +
                                    2 * kStages * int(sizeof(uint64_t)) + 1024;
  static_assert(kStageFloats % 256 == 0, "every stage and box starts on a 1024-byte swizzle atom");
  static_assert(kBm * kOutputLd <= kStages * kStageFloats,
                "the staged output tile must fit over the stages");
  static_assert(kSmemBytes <= 227 * 1024, "shared memory per block is limited to 227 KB");
};

// Where a consumer thread's fragment element lies in its 64 columns of B's stage tile. The
// fragment's row r (a column n of C) is chosen so that each load of a warp hits 32 banks: the 8
// rows of lane group l%4 = const fall in two 16-byte chunks 4 apart (c and c + 4), which the
// swizzle (chunk ^ k mod 8, k = l%4 or l%4 + 4) keeps apart for the 4 values of k. Rows
// r = 16w + 8h + g (g = lane/4) are columns 32(w/2) + 4(2(w%2) + h) + g%4 + 16(g/4).
__device__ __forceinline__ int fragment_column(int warp, int half, int g) {
  return 32 * (warp / 2) + 4 * (2 * (warp % 2) + half) + g % 4 + 16 * (g / 4);
}
// Offset of element (column n, k) in a warpgroup's two boxes, for k < 8; the next k step of 8 is
// 8 whole 128-byte rows further on, with the same swizzle.
__device__ __forceinline__ int fragment_offset(int n, int k) {
  return (n / kPanelK) * kPanelK * kPanelK + k * kPanelK + (((n % kPanelK) / 4) ^ k) * 4 + n % 4;
}

template <class Cfg, bool kClusterSplit>
__global__ void __launch_bounds__(Cfg::kThreads, 1)
    wgmma_register_a_kernel(Operand<true> a, Operand<false> b, Epilogue c, int k_per_split,
                            const __grid_constant__ CUtensorMap map_a,
                            const __grid_constant__ CUtensorMap map_b) {
  GEMM_PHASE_BEGIN(RegisterA);
  const int k_begin = blockIdx.z * k_per_split;
  enter_k_slice(a, b, c, k_per_split, !kClusterSplit);
  extern __shared__ float smem_raw[];
  float* smem = smem_raw + ((1024 - smem_address(smem_raw) % 1024) % 1024) / sizeof(float);
  float* derived = smem + Cfg::kStages * Cfg::kStageFloats;  // the ring, where kPrepared
  uint64_t* full = reinterpret_cast<uint64_t*>(derived + Cfg::kDerivedFloats);
  uint64_t* empty = full + Cfg::kStages;
  const int tid = threadIdx.x, warpgroup = tid / 128;
  const int m0 = blockIdx.y * Cfg::kBm, n0 = blockIdx.x * Cfg::kBn;
  auto a_tile = [&](int stage) { return smem + stage * Cfg::kStageFloats; };
  auto b_tile = [&](int stage) { return a_tile(stage) + Cfg::kATileFloats; };
  const int k_tiles = (a.extent_k + Cfg::kBk - 1) / Cfg::kBk;

  if (tid == 0) {
    for (int s = 0; s < Cfg::kStages; ++s) {
      mbarrier_init(&full[s], 1);                       // the producer thread, + TMA bytes
      mbarrier_init(&empty[s], 128 * Cfg::kConsumers);  // every consumer thread
    }
    fence_mbarrier_init();
    prefetch_tile_map(&map_a);  // the set-up reads no global memory: it overlaps the last kernel
    prefetch_tile_map(&map_b);
  }
  __syncthreads();
  GEMM_PHASE(SetUp);
  await_prior_kernels();
  GEMM_PHASE(Awaited);

  if (warpgroup == Cfg::kConsumers) {
    // Producer: one thread waits for the consumers to empty a stage and refills it by TMA.
    if (tid == 128 * Cfg::kConsumers) {
      for (int kt = 0; kt < k_tiles; ++kt) {
        const int stage = kt % Cfg::kStages, k = k_begin + kt * Cfg::kBk;
        if (kt >= Cfg::kStages) mbarrier_wait(&empty[stage], (kt / Cfg::kStages - 1) & 1);
        mbarrier_expect_bytes(&full[stage], Cfg::kStageFloats * int(sizeof(float)));
        tma_load_tile(a_tile(stage), &map_a, k, m0, &full[stage]);
        for (int box = 0; box < Cfg::kBn / kPanelK; ++box)
          tma_load_tile(b_tile(stage) + box * Cfg::kBoxFloats, &map_b, n0 + box * kPanelK, k,
                        &full[stage]);
        mbarrier_arrive(&full[stage]);
      }
    }
  } else {
    // Consumers: a K tile is groups of k steps; a group's fragments are loaded into registers,
    // then its k steps issued as one wgmma group. wgmma reads those registers asynchronously, and
    // ptxas serialises every wgmma of a warpgroup that writes wgmma inputs while any of its groups
    // is in flight; so a warpgroup loads only once its previous group has completed, and the other
    // consumer's group keeps the tensor cores busy meanwhile. TF32 takes two groups of two k steps
    // (a whole K tile's fragments at once took 166 of the 168 registers a thread has here, and
    // spilled). 3×TF32 holds each fragment's remainder too, so it takes four groups of one k step:
    // with two of two, ptxas ran short of registers and serialised the wgmma (warning C7512).
    // In 3×TF32 a K tile first has its A remainders prepared, as the wgmma pipeline's consumers
    // prepare theirs, while the previous group still runs.
    const int lane = tid % 32, warp = (tid % 128) / 32, g = lane / 4, t = lane % 4;
    int offset[4];  // of a[0..3] in the first k step: rows r, r + 8 at k = t, then at k = t + 4
    for (int i = 0; i < 4; ++i)
      offset[i] = warpgroup * 64 * kPanelK +
                  fragment_offset(fragment_column(warp, i % 2, g), t + 4 * (i / 2));
    float acc[128] = {};
    fence_operands(acc);
    constexpr int kGroups = Cfg::kPrepared ? 4 : 2;
    constexpr int kStepsPerGroup = Cfg::kBk / kWgmmaK / kGroups;
    static_assert(Cfg::kBk / kWgmmaK % kGroups == 0,
                  "a K tile's k steps must split into whole groups");
    for (int kt = 0; kt < k_tiles; ++kt) {
      const int stage = kt % Cfg::kStages;
      mbarrier_wait(&full[stage], (kt / Cfg::kStages) & 1);
      if (kt == 0) GEMM_PHASE(FirstStage);
      [[maybe_unused]] float* a_lo = derived + (kt % 2) * Cfg::kATileFloats;  // where kPrepared
      if constexpr (Cfg::kPrepared) {
        // Its ring slot was last read by both consumers' wgmma of tile kt − 2, which every
        // consumer thread reported on that stage's "empty" barrier.
        if (kt >= 2) mbarrier_wait(&empty[(kt - 2) % Cfg::kStages], ((kt - 2) / Cfg::kStages) & 1);
        Cfg::Arithmetic::template prepare<Cfg::kATileFloats, 128 * Cfg::kConsumers>(a_tile(stage),
                                                                                    a_lo, tid);
        fence_proxy_async();
        consumer_barrier(128 * Cfg::kConsumers);
      }
#pragma unroll
      for (int group = 0; group < kGroups; ++group) {
        wgmma_wait<0>();  // the previous group is done: its registers and its stage are free
        if (group == 0 && kt > 0) mbarrier_arrive(&empty[(kt - 1) % Cfg::kStages]);
        uint32_t frag[kStepsPerGroup][4];
#pragma unroll
        for (int s = 0; s < kStepsPerGroup; ++s)
#pragma unroll
          for (int i = 0; i < 4; ++i)
            frag[s][i] = __float_as_uint(
                b_tile(stage)[offset[i] + (group * kStepsPerGroup + s) * kWgmmaK * kPanelK]);
        uint32_t frag_lo[kStepsPerGroup][4];  // 3×TF32: the fragments' remainders
        if constexpr (Cfg::kPrepared)
#pragma unroll
          for (int s = 0; s < kStepsPerGroup; ++s)
#pragma unroll
            for (int i = 0; i < 4; ++i)
              frag_lo[s][i] =
                  __float_as_uint(Cfg::Arithmetic::remainder(__uint_as_float(frag[s][i])));
        wgmma_fence();
#pragma unroll
        for (int s = 0; s < kStepsPerGroup; ++s) {
          const int k = (group * kStepsPerGroup + s) * kWgmmaK;
          const uint64_t a_desc = sw128_descriptor(a_tile(stage) + k);
          if constexpr (Cfg::kPrepared) {  // the small products first, as wgmma_ops::Tf32x3
            wgmma_m64n256k8_rs(acc, frag_lo[s], a_desc);
            wgmma_m64n256k8_rs(acc, frag[s], sw128_descriptor(a_lo + k));
          }
          wgmma_m64n256k8_rs(acc, frag[s], a_desc);
        }
        wgmma_commit();
      }
    }
    wgmma_wait<0>();
    fence_operands(acc);
    GEMM_PHASE(KLoop);
    // Once every consumer is done reading the stages, the output tile is staged over them in C's
    // layout: acc[4j + 2h + e] is row r = 16·warp + 8h + g, column 8j + 2t + e of Cᵀ.
    consumer_barrier(128 * Cfg::kConsumers);
    for (int h = 0; h < 2; ++h) {
      float* column = smem + warpgroup * 64 + fragment_column(warp, h, g);
#pragma unroll
      for (int j = 0; j < 32; ++j)
#pragma unroll
        for (int e = 0; e < 2; ++e)
          column[(8 * j + 2 * t + e) * Cfg::kOutputLd] = acc[4 * j + 2 * h + e];
    }
    GEMM_PHASE(Staged);
  }

  store_consumers_tile<Cfg::kBm, Cfg::kBn, Cfg::kOutputLd, 128 * Cfg::kConsumers, kClusterSplit>(
      c, smem, m0, n0, tid);
  GEMM_PHASE_END();
}

using Tile = RsShape<RsTile>;  // both arithmetics: the same block tile, the same plan

}  // namespace

bool wgmma_register_a_serves(const Problem& p) {
  return p.op_a == Op::N && p.op_b == Op::N && operand_a<true>(p).vec4_ok &&
         operand_b<false>(p).vec4_ok;
}

namespace {

// The tile where it gives every multiprocessor a block; otherwise K split across blocks until the
// grid fills one wave, as the wgmma pipeline's small tile does.
SplitK register_a_plan(const Problem& p, int sms) {
  const long tiles = tile_count<Tile::kBm, Tile::kBn>(p);
  return tiles >= sms ? SplitK{1, p.k} : plan_split_k<Tile::kBk>(p, tiles, sms, {.one_wave = true});
}

}  // namespace

bool wgmma_register_a_fills_half(const Problem& p, int sms) {
  return 2 * tile_count<Tile::kBm, Tile::kBn>(p) * register_a_plan(p, sms).splits >= sms;
}

namespace {

// A tensor map for TMA copies of an MN-major operand in boxes of 32 x by 32 k, each k's 128-byte
// row swizzled as wgmma.cuh's swizzled<32>() swizzles a K-major row: chunk c of k at c ^ (k mod 8)
// (the register-A kernel's B, wgmma_register_a.cu). Throws as encode_tile_map does.
inline CUtensorMap make_swizzled_mn_tile_map(const Operand<false>& op) {
  return encode_tile_map(op, kPanelK, kPanelK, CU_TENSOR_MAP_SWIZZLE_128B);
}

template <class Cfg>
void launch_register_a(const Problem& p, cudaStream_t stream) {
  static_assert(Cfg::kBm == Tile::kBm && Cfg::kBn == Tile::kBn, "one block tile, one split plan");
  if (const char* why = wgmma_unavailable()) throw Error(std::string("gemm: ") + why);
  if (!wgmma_register_a_serves(p))
    throw Error("gemm: the register-A wgmma kernel serves NN with 16-byte aligned A and B only");
  const Operand<true> a = operand_a<true>(p);
  const Operand<false> b = operand_b<false>(p);
  launch_planned_split_k<Cfg::kBk, wgmma_register_a_kernel<Cfg, true>,
                         wgmma_register_a_kernel<Cfg, false>>(
      p, register_a_plan(p, multiprocessor_count()), tile_grid<Cfg::kBm, Cfg::kBn>(p),
      Cfg::kThreads, Cfg::kSmemBytes, stream, a, b, make_tile_map(a, Cfg::kBm),
      make_swizzled_mn_tile_map(b));
}

}  // namespace

void launch_wgmma_register_a(const Problem& p, cudaStream_t stream) {
  launch_register_a<Tile>(p, stream);
}

void launch_wgmma_register_a_tf32x3(const Problem& p, cudaStream_t stream) {
  launch_register_a<RsShape<RsTf32x3Tile>>(p, stream);
}

}  // namespace gemm::detail
