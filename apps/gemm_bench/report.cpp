#include "apps/gemm_bench/report.h"

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>

#include "apps/common/csv.h"
#include "apps/common/output_file.h"
#include "engine/engine.h"

namespace bench {
namespace {

// Small error ratios keep their leading digits: "1.234e-02".
std::string scientific_text(double x) {
  if (!std::isfinite(x)) return "null";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3e", x);
  return buf;
}

// One CSV column / JSON field of a result. A number's JSON value is parsed from its CSV text, so
// both files carry the same digits.
struct Field {
  enum class Kind { Text, Integer, Real };
  const char* name;
  std::string text;
  Kind kind;

  nlohmann::ordered_json json() const {
    if (kind == Kind::Text) return text;
    if (kind == Kind::Integer) return std::stoll(text);
    if (text == "null") return nullptr;
    return std::stod(text);
  }
};

// The fields of a result, in the CSV's column order (after the device).
std::vector<Field> fields(const Result& r) {
  using Kind = Field::Kind;
  const Timing& t = r.timing;
  return {{"m", std::to_string(r.shape.m), Kind::Integer},
          {"n", std::to_string(r.shape.n), Kind::Integer},
          {"k", std::to_string(r.shape.k), Kind::Integer},
          {"layout", r.shape.layout(), Kind::Text},
          {"variant", r.variant, Kind::Text},
          {"precision", precision_name(r.precision), Kind::Text},
          {"status", status_name(r.status), Kind::Text},
          {"reps", std::to_string(t.runs), Kind::Integer},
          {"ms_median", fixed_text(t.median_ms, 6, "null"), Kind::Real},
          {"ms_min", fixed_text(t.min_ms, 6, "null"), Kind::Real},
          {"ms_p90", fixed_text(t.p90_ms, 6, "null"), Kind::Real},
          {"tflops", fixed_text(r.tflops, 4, "null"), Kind::Real},
          {"pct_cublas", fixed_text(r.pct_cublas, 2, "null"), Kind::Real},
          {"pct_cublas_tf32", fixed_text(r.pct_cublas_tf32, 2, "null"), Kind::Real},
          {"warm_us_median", fixed_text(1e3 * r.warm.median_ms, 3, "null"), Kind::Real},
          {"warm_us_min", fixed_text(1e3 * r.warm.min_ms, 3, "null"), Kind::Real},
          {"warm_tflops", fixed_text(r.warm_tflops, 4, "null"), Kind::Real},
          {"warm_pct_cublas", fixed_text(r.warm_pct_cublas, 2, "null"), Kind::Real},
          {"warm_pct_cublas_tf32", fixed_text(r.warm_pct_cublas_tf32, 2, "null"), Kind::Real},
          {"max_err_ratio", scientific_text(r.max_err_ratio), Kind::Real},
          {"note", r.note, Kind::Text}};
}

}  // namespace

void check_output_path(const std::string& path, const char* option) {
  try {
    apps::require_writable(option, path);
  } catch (const std::exception& e) {
    throw UsageError(e.what());
  }
}

std::string fixed_text(double x, int decimals, const char* missing) {
  if (!std::isfinite(x)) return missing;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, x);
  return buf;
}

void print_table_header() {
  std::printf("%-16s %-6s %-12s %10s %9s %9s %9s %9s %8s %8s  %s\n", "shape", "layout", "variant",
              "ms", "TFLOP/s", "%cuBLAS", "%cuTF32", "warm us", "%cuBLAS", "%cuTF32", "status");
}

void print_table_row(const Result& r) {
  std::string status = status_name(r.status);
  if (!r.note.empty()) status += ": " + r.note;
  std::printf("%-16s %-6s %-12s %10s %9s %9s %9s %9s %8s %8s  %s\n", r.shape.text().c_str(),
              r.shape.layout().c_str(), r.variant.c_str(),
              fixed_text(r.timing.median_ms, 4).c_str(), fixed_text(r.tflops, 2).c_str(),
              fixed_text(r.pct_cublas, 1).c_str(), fixed_text(r.pct_cublas_tf32, 1).c_str(),
              fixed_text(1e3 * r.warm.median_ms, 2).c_str(),
              fixed_text(r.warm_pct_cublas, 1).c_str(),
              fixed_text(r.warm_pct_cublas_tf32, 1).c_str(), status.c_str());
}

void print_host_table_header() {
  std::printf("%-18s %-6s %10s %10s %10s\n", "shape", "layout", "ms", "GFLOP/s", "check");
}

void print_host_table_row(const Result& r) {
  std::printf("%-18s %-6s %10s %10s %10s\n", r.shape.text().c_str(), r.shape.layout().c_str(),
              fixed_text(r.timing.median_ms, 3).c_str(), fixed_text(1e3 * r.tflops, 1).c_str(),
              status_name(r.status));
}

void write_csv(const std::string& path, const DeviceInfo& d, const std::vector<Result>& results) {
  std::ostringstream f;
  std::vector<std::string> header = {"device"};
  for (const Field& field : fields(Result{})) header.push_back(field.name);
  f << apps::csv_row(header);
  for (const Result& r : results) {
    std::vector<std::string> row = {d.name};
    for (Field& field : fields(r)) row.push_back(std::move(field.text));
    f << apps::csv_row(row);
  }
  engine::replace_file("--csv", path, f.str());
}

void write_json(const std::string& path, const DeviceInfo& d, const Method& method,
                const std::vector<Result>& results) {
  using Json = nlohmann::ordered_json;
  Json doc;
  if (d.host) {
    doc["device"] = {{"name", d.name}};
  } else {
    doc["device"] = {
        {"name", d.name},
        {"compute_capability", std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor)},
        {"sms", d.sms},
        {"clock_mhz", d.clock_mhz},
        {"memory_clock_mhz", d.mem_clock_mhz},
        {"l2_bytes", d.l2_bytes},
        {"memory_bytes", d.mem_bytes}};
    doc["cuda_runtime"] = version_text(d.runtime);
    doc["cuda_driver"] = version_text(d.driver);
    doc["cublas"] = d.cublas;
  }
  const Settings& s = method.settings;
  doc["method"] = {{"reps", s.reps},
                   {"warmup", s.warmup},
                   {"max_seconds_per_case",
                    Field{"", fixed_text(s.max_seconds, 3, "null"), Field::Kind::Real}.json()},
                   {"l2_flush_bytes", method.l2_flush_bytes},
                   {"timing", method.timing},
                   {"warm_timing", method.warm ? kWarmTiming : "none"},
                   {"warm_calls", method.warm ? s.warm_calls : 0},
                   {"warm_replays", method.warm ? s.warm_replays : 0},
                   {"alpha", 1},
                   {"beta", 0}};
  Json rows = Json::array();
  for (const Result& r : results) {
    Json row = Json::object();
    for (const Field& field : fields(r)) row[field.name] = field.json();
    rows.push_back(std::move(row));
  }
  doc["results"] = std::move(rows);
  engine::replace_file("--json", path, doc.dump(2) + "\n");
}

}  // namespace bench
