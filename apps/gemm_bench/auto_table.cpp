#include "apps/gemm_bench/auto_table.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <tuple>

#include "base/file_kind.h"
#include "engine/engine.h"

namespace bench {
namespace {

using Json = nlohmann::json;

// A timed result of a kernel auto may choose.
bool is_candidate(const Result& r) {
  return auto_candidate(gemm::find_variant(r.variant)) && timed(r.status) &&
         std::isfinite(r.timing.median_ms);
}

// A C++ string literal: JSON's escapes (\" \\ \n \u00XX) mean the same in C++.
std::string cpp_string(const std::string& s) { return Json(s).dump(); }

// The table's order: layout, then M, N, K.
using ShapeKey = std::tuple<std::string, int, int, int>;
ShapeKey key_of(const Shape& s) { return {s.layout(), s.m, s.n, s.k}; }

// row[name] as T; `what` names the file and the result for the error.
template <typename T>
T field(const Json& row, const char* name, const std::string& what) {
  if (!row.is_object() || !row.contains(name))
    throw UsageError(what + " has no field '" + name + "'");
  try {
    return row.at(name).get<T>();
  } catch (const Json::exception&) {
    throw UsageError(what + ": field '" + name + "' is " + row.at(name).dump() +
                     ", not of the type gemm_bench writes");
  }
}

Status parse_status(const std::string& text, const std::string& what) {
  for (Status s : {Status::Ok, Status::Capped, Status::Skipped, Status::Failed})
    if (text == status_name(s)) return s;
  throw UsageError(what + ": unknown status '" + text +
                   "' (expected ok, capped, skipped or FAILED)");
}

// The variant's place in the registry (dispatch.cpp): the ladder's steps in order, then production.
std::size_t registry_index(const std::string& name) {
  const std::vector<gemm::Variant>& all = gemm::variants();
  for (std::size_t i = 0; i < all.size(); ++i)
    if (name == all[i].name) return i;
  return all.size();
}

// Of one shape's candidates, the first in the registry's order whose median is within
// kAutoTieMargin of the fastest: warm (back to back in one graph, as a training step runs them)
// where every candidate was timed warm, else flushed.
const Result* pick_within_tie_margin(const std::vector<const Result*>& list) {
  const bool warm = std::all_of(list.begin(), list.end(),
                                [](const Result* r) { return std::isfinite(r->warm.median_ms); });
  const auto median = [&](const Result* r) {
    return warm ? r->warm.median_ms : r->timing.median_ms;
  };
  double fastest = INFINITY;
  for (const Result* r : list) fastest = std::min(fastest, median(r));
  const Result* pick = nullptr;
  for (const Result* r : list)
    if (median(r) <= fastest * (1 + kAutoTieMargin) &&
        (!pick || registry_index(r->variant) < registry_index(pick->variant)))
      pick = r;
  return pick;
}

}  // namespace

bool auto_candidate(const gemm::Variant& v) {
  const std::string name = v.name;
  return v.device == gemm::Device::CUDA && v.precision == gemm::Precision::FP32 && name != "auto" &&
         name.rfind("cublas", 0) != 0;
}

MeasuredRun read_results_json(const std::string& path) {
  const std::string file = "--from-json '" + path + "'";
  // Opening a FIFO would wait for a writer; a directory or a device is no results file either.
  if (const char* kind = gemm_mlp::non_regular_kind(path))
    throw UsageError(file + ": is " + kind + ", not a gemm_bench --json file");
  std::ifstream f(path);
  if (!f) throw UsageError(file + ": cannot read the file");
  Json doc;
  try {
    doc = Json::parse(f);
  } catch (const Json::exception& e) {
    throw UsageError(file + ": not JSON (" + e.what() + ")");
  }
  MeasuredRun run;
  run.path = path;
  if (!doc.is_object() || !doc.contains("device"))
    throw UsageError(file + " has no 'device': not a gemm_bench --json file");
  run.device = field<std::string>(doc["device"], "name", file + ": the device");
  if (!doc.contains("results") || !doc["results"].is_array())
    throw UsageError(file + " has no 'results' list: not a gemm_bench --json file");
  const Json& rows = doc["results"];
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const std::string what = file + ": result " + std::to_string(i);
    const Json& row = rows[i];
    Result r;
    const long long m = field<long long>(row, "m", what), n = field<long long>(row, "n", what),
                    k = field<long long>(row, "k", what);
    const std::string layout = field<std::string>(row, "layout", what);
    const std::string text =
        std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) + ":" + layout;
    try {
      r.shape = parse_shape(text);
    } catch (const UsageError& e) {
      throw UsageError(what + ": " + e.what());
    }
    r.variant = field<std::string>(row, "variant", what);
    try {
      r.precision = gemm::find_variant(r.variant).precision;
    } catch (const gemm::Error& e) {
      throw UsageError(what + ": " + e.what());
    }
    r.status = parse_status(field<std::string>(row, "status", what), what);
    if (!row.contains("ms_median")) throw UsageError(what + " has no field 'ms_median'");
    r.timing.median_ms = row["ms_median"].is_null() ? NAN : field<double>(row, "ms_median", what);
    // Runs before the warm timing have no warm field: their shapes are picked by flushed time.
    if (row.contains("warm_us_median") && !row["warm_us_median"].is_null())
      r.warm.median_ms = 1e-3 * field<double>(row, "warm_us_median", what);
    run.results.push_back(std::move(r));
  }
  return run;
}

std::vector<DeviceResults> merge_runs(const std::vector<MeasuredRun>& runs) {
  std::vector<DeviceResults> devices;
  // Per GPU, the last run that measured each shape.
  std::map<std::string, std::map<ShapeKey, std::size_t>> last_run;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    if (!last_run.count(runs[i].device)) devices.push_back({runs[i].device, {}});
    for (const Result& r : runs[i].results) last_run[runs[i].device][key_of(r.shape)] = i;
  }
  for (DeviceResults& d : devices)
    for (std::size_t i = 0; i < runs.size(); ++i)
      if (runs[i].device == d.device)
        for (const Result& r : runs[i].results)
          if (last_run[d.device][key_of(r.shape)] == i) d.results.push_back(r);
  return devices;
}

std::vector<std::string> write_auto_table(const std::string& path,
                                          const std::vector<DeviceResults>& devices,
                                          const std::vector<std::string>& sources) {
  std::ostringstream f;
  f << "// Written by gemm_bench --auto-table; one line per measured shape and layout:\n"
    << "// {device, layout, M, N, K, fastest correct fp32 variant of this project},\n"
    << "// medians within " << int(kAutoTieMargin * 100 + 0.5)
    << "% of the fastest a tie, won by the variant listed first.\n";
  if (!sources.empty()) {
    f << "// From:";
    for (const std::string& s : sources) f << " " << std::filesystem::path(s).filename().string();
    f << "\n";
  }
  std::vector<std::string> without;
  for (const DeviceResults& d : devices) {
    std::map<ShapeKey, std::vector<const Result*>> candidates;
    std::map<ShapeKey, std::string> shapes;  // every shape measured, as text
    for (const Result& r : d.results) {
      const ShapeKey key = key_of(r.shape);
      shapes[key] = r.shape.text() + ":" + r.shape.layout();
      if (is_candidate(r)) candidates[key].push_back(&r);
    }
    for (const auto& [key, list] : candidates) {
      const Result* r = pick_within_tie_margin(list);
      f << "{" << cpp_string(d.device) << ", \"" << r->shape.layout() << "\", " << r->shape.m
        << ", " << r->shape.n << ", " << r->shape.k << ", " << cpp_string(r->variant) << "},\n";
    }
    for (const auto& [key, text] : shapes)
      if (!candidates.count(key))
        without.push_back(devices.size() > 1 ? text + " on " + d.device : text);
  }
  engine::replace_file("--auto-table", path, f.str());
  return without;
}

}  // namespace bench
