// What gemm_bench measures per shape and variant, and the settings it measures with.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>

#include "apps/bench_common/shapes.h"
#include "apps/bench_common/timing.h"
#include "kernels/gemm.h"

namespace bench {

enum class Status {
  Ok,       // validated and timed
  Capped,   // validated, timed with fewer reps than asked (--max-seconds-per-case)
  Skipped,  // validated, not timed (--skip-slow)
  Failed,   // failed validation, or threw
};

// The status as the table, the CSV and the JSON write it.
inline const char* status_name(Status s) {
  switch (s) {
    case Status::Ok:
      return "ok";
    case Status::Capped:
      return "capped";
    case Status::Skipped:
      return "skipped";
    case Status::Failed:
      return "FAILED";
  }
  return "?";
}

inline bool timed(Status s) { return s == Status::Ok || s == Status::Capped; }

inline const char* precision_name(gemm::Precision p) {
  return p == gemm::Precision::TF32 ? "TF32" : "FP32";
}

struct Result {
  Shape shape;
  std::string variant;
  gemm::Precision precision = gemm::Precision::FP32;
  Status status = Status::Ok;
  std::string note;  // why it failed, was capped or skipped
  Timing timing;     // timing.runs: the reps actually timed
  double tflops = NAN, pct_cublas = NAN, pct_cublas_tf32 = NAN;
  // Warm in L2, back to back in one graph (timing.h, time_warm): per call; warm.runs is 0 where
  // not timed warm (--warm-calls 0, or a case skipped or failed).
  Timing warm;
  double warm_tflops = NAN, warm_pct_cublas = NAN, warm_pct_cublas_tf32 = NAN;
  double max_err_ratio = NAN;  // worst |c − ref| / bound; ≤ 1 passes
};

// The fewest timed reps of a case capped by --max-seconds-per-case.
constexpr int kMinCappedReps = 3;

struct Settings {
  int reps = kDefaultRuns;
  int warmup = kDefaultWarmup;
  double max_seconds = 20.0;  // per shape and variant
  bool skip_slow = false;
  int warm_calls = kDefaultWarmCalls;  // 0: no warm timing
  int warm_replays = kDefaultWarmReplays;
  std::uint64_t seed = 1234;
};

}  // namespace bench
