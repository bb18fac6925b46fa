// racecheck_named_barrier PATTERN: the epilogue of a warp-specialised kernel in a few lines, to
// show what compute-sanitizer's racecheck makes of it (scripts/check/sanitize.sh runs every pattern
// and records the hazards it reports; docs/NOTES.md, "Racecheck and named barriers", explains
// them).
//
// A block of 384 threads: warpgroups 0 and 1 are the consumers, 2 the producer. The consumers
// write a shared tile; every thread then reads words other threads wrote.
//   producer_reads   consumers: bar.sync 2, 256; write. Everyone: __syncthreads; read.
//                    Correct: the block-wide barrier orders every write before every read.
//   both_named       the same, and the producer runs bar.sync 1, 128 once first. Correct.
//   consumers_read   consumers: bar.sync 2, 256; write; bar.sync 2, 256; read; the producer
//                    reads nothing. Correct: the kernels' epilogue (store_consumers_tile).
//   no_barrier       consumers write; everyone reads with no barrier between: a real race, the
//                    control that shows the tool does report one.
// Then the producer writes and the consumers read (a persistent kernel's work after its GEMM
// tiles):
//   producer_ahead   the producer runs bar.sync 1, 128 twice, the consumers bar.sync 2, 256
//                    once; the producer writes; everyone: __syncthreads; the consumers read.
//                    Correct.
//   producer_behind  the same with the producer passing no named barrier. Correct.
// `racecheck_named_barrier --list` prints the patterns' names, one a line. Exit status 0 when the
// kernel ran, 2 on a bad argument; the values read are not checked (only the hazards matter).
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstring>

#include "base/cuda_check.h"

namespace {

enum class Pattern {
  ProducerReads,
  BothNamed,
  ConsumersRead,
  NoBarrier,
  ProducerAhead,
  ProducerBehind
};
constexpr const char* kPatternNames[] = {"producer_reads", "both_named",     "consumers_read",
                                         "no_barrier",     "producer_ahead", "producer_behind"};
constexpr int kPatterns = sizeof(kPatternNames) / sizeof(kPatternNames[0]);

constexpr int kThreads = 384, kConsumerThreads = 256, kTileFloats = 4 * kConsumerThreads;

__device__ __forceinline__ void named_barrier(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

// producer_ahead and producer_behind: the producer writes words 0 … 4·128 − 1 of the tile, the
// consumers read them.
__device__ void producer_writes(float* tile, float* out, Pattern pattern) {
  constexpr int kProducerThreads = kThreads - kConsumerThreads;
  const int tid = threadIdx.x, ptid = tid - kConsumerThreads;
  if (ptid < 0) {
    named_barrier(2, kConsumerThreads);
  } else if (pattern == Pattern::ProducerAhead) {
    named_barrier(1, kProducerThreads);
    named_barrier(1, kProducerThreads);
  }
  if (ptid >= 0)
    for (int i = 0; i < 4; ++i) tile[4 * ptid + i] = float(ptid + i);
  __syncthreads();
  if (ptid < 0) out[blockIdx.x * kThreads + tid] = tile[(4 * tid + 37) % (4 * kProducerThreads)];
}

// out: gridDim.x × 384 floats, one per thread.
__global__ void __launch_bounds__(kThreads, 1) epilogue_pattern(float* out, Pattern pattern) {
  __shared__ float tile[kTileFloats];
  const int tid = threadIdx.x;
  const bool consumer = tid < kConsumerThreads;
  if (pattern == Pattern::ProducerAhead || pattern == Pattern::ProducerBehind) {
    producer_writes(tile, out, pattern);
    return;
  }
  if (pattern == Pattern::BothNamed && !consumer) named_barrier(1, kThreads - kConsumerThreads);
  if (consumer) {
    if (pattern != Pattern::NoBarrier) named_barrier(2, kConsumerThreads);
    for (int i = 0; i < 4; ++i) tile[4 * tid + i] = float(tid + i);
  }
  if (pattern == Pattern::ConsumersRead) {
    if (!consumer) return;
    named_barrier(2, kConsumerThreads);
  } else if (pattern != Pattern::NoBarrier) {
    __syncthreads();
  }
  // Words of the tile that a thread 9 or more consumers away wrote.
  out[blockIdx.x * kThreads + tid] = tile[(4 * tid + 37) % kTileFloats];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "--list") == 0) {
    for (const char* name : kPatternNames) std::printf("%s\n", name);
    return 0;
  }
  int chosen = -1;
  for (int i = 0; i < kPatterns && argc == 2; ++i)
    if (std::strcmp(argv[1], kPatternNames[i]) == 0) chosen = i;
  if (chosen < 0) {
    std::fprintf(stderr, "usage: racecheck_named_barrier PATTERN, one of:");
    for (const char* name : kPatternNames) std::fprintf(stderr, " %s", name);
    std::fprintf(stderr, "\n");
    return 2;
  }
  try {
    constexpr int kBlocks = 4;
    float* out = nullptr;
    CUDA_CHECK(cudaMalloc(&out, kBlocks * kThreads * sizeof(float)));
    epilogue_pattern<<<kBlocks, kThreads>>>(out, static_cast<Pattern>(chosen));
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaFree(out));
  } catch (const gemm_mlp::Error& e) {
    std::fprintf(stderr, "racecheck_named_barrier: %s\n", e.what());
    return 1;
  }
  std::printf("%s: ran\n", kPatternNames[chosen]);
  return 0;
}
