#include "apps/gemm_bench/auto_table.h"

#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

namespace bench {
namespace {

bool is_candidate(const Result& r) {
  const gemm::Variant& v = gemm::find_variant(r.variant);
  return v.device == gemm::Device::CUDA && v.precision == gemm::Precision::FP32 &&
         r.variant != "auto" && r.variant.rfind("cublas", 0) != 0 && timed(r.status) &&
         std::isfinite(r.timing.median_ms);
}

// A C++ string literal: JSON's escapes (\" \\ \n \u00XX) mean the same in C++.
std::string cpp_string(const std::string& s) { return nlohmann::json(s).dump(); }

}  // namespace

void write_auto_table(const std::string& path, const DeviceInfo& d,
                      const std::vector<Result>& results) {
  std::map<std::string, const Result*> best;  // key: shape and layout
  for (const Result& r : results) {
    if (!is_candidate(r)) continue;
    const std::string key = r.shape.text() + ":" + r.shape.layout();
    if (!best.count(key) || r.timing.median_ms < best[key]->timing.median_ms) best[key] = &r;
  }
  std::ofstream f(path);
  if (!f) throw UsageError("cannot write --auto-table file '" + path + "'");
  f << "// Written by gemm_bench --auto-table; one line per measured shape and layout:\n"
    << "// {device, layout, M, N, K, fastest correct fp32 variant of this project}.\n";
  for (const auto& [key, r] : best)
    f << "{" << cpp_string(d.name) << ", \"" << r->shape.layout() << "\", " << r->shape.m << ", "
      << r->shape.n << ", " << r->shape.k << ", " << cpp_string(r->variant) << "},\n";
  f.flush();
  if (!f) throw UsageError("failed writing --auto-table file '" + path + "'");
}

}  // namespace bench
