#include "apps/train_mlp/report.h"

#include <cstdio>
#include <fstream>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <sstream>

#include "apps/common/csv.h"

namespace {

// One cell of a results table: a number, a name, or nothing (empty in CSV, null in JSON).
struct Cell {
  enum class Kind { Number, Text, None } kind;
  std::string text;      // as written to CSV
  double number = 0;     // Number: the value, for JSON
  bool integer = false;  // Number: written to JSON without a fraction
  Cell(double v) : kind(Kind::Number), text(format(v)), number(v) {}
  Cell(int v) : kind(Kind::Number), text(std::to_string(v)), number(v), integer(true) {}
  Cell(std::string v) : kind(Kind::Text), text(std::move(v)) {}
  static Cell none() { return Cell(Kind::None); }

 private:
  explicit Cell(Kind k) : kind(k) {}
  static std::string format(double v) {
    std::ostringstream s;
    s << std::setprecision(8) << v;
    return s.str();
  }
};

// A table as CSV, or (a path ending in .json) as a JSON list of objects; written to a temporary
// file and renamed, so that an interrupted run leaves the previous version whole.
void write_table(const std::string& path, const std::vector<std::string>& columns,
                 const std::vector<std::vector<Cell>>& rows) {
  const bool json = path.size() >= 5 && path.compare(path.size() - 5, 5, ".json") == 0;
  std::ostringstream f;
  if (json) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const std::vector<Cell>& row : rows) {
      nlohmann::ordered_json object = nlohmann::ordered_json::object();
      for (size_t c = 0; c < columns.size(); ++c) {
        const Cell& cell = row[c];
        if (cell.kind == Cell::Kind::Text)
          object[columns[c]] = cell.text;
        else if (cell.kind == Cell::Kind::Number && cell.integer)
          object[columns[c]] = static_cast<long long>(cell.number);
        else if (cell.kind == Cell::Kind::Number)
          object[columns[c]] = cell.number;
        else
          object[columns[c]] = nullptr;
      }
      list.push_back(std::move(object));
    }
    f << list.dump(2) << "\n";
  } else {
    f << apps::csv_row(columns);
    for (const std::vector<Cell>& row : rows) {
      std::vector<std::string> fields;
      for (const Cell& cell : row) fields.push_back(cell.text);
      f << apps::csv_row(fields);
    }
  }
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << f.str();
    if (!out.flush()) throw std::runtime_error("cannot write " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    throw std::runtime_error("cannot rename " + tmp + " to " + path);
}

}  // namespace

void write_history(const std::string& path, const std::vector<EpochLog>& epochs) {
  std::vector<std::vector<Cell>> rows;
  for (const EpochLog& e : epochs)
    rows.push_back({e.epoch, e.loss, e.train_acc, e.test_acc, e.lr, e.epoch_s, e.gemm_s});
  write_table(path, {"epoch", "loss", "train_acc", "test_acc", "lr", "epoch_s", "gemm_s"}, rows);
}

void print_table(const std::vector<RunResult>& runs) {
  const RunResult* naive = nullptr;
  for (const RunResult& r : runs)
    if (r.variant == "naive") naive = &r;
  std::printf("\n%-14s %10s %11s %10s %9s\n", "variant", "s/epoch", "GEMM share", "vs naive",
              "test acc");
  for (const RunResult& r : runs) {
    const std::string speedup =
        naive ? (std::ostringstream() << std::fixed << std::setprecision(2)
                                      << naive->mean_epoch_s() / r.mean_epoch_s() << "x")
                    .str()
              : "-";
    std::printf("%-14s %10.3f %10.1f%% %10s %8.2f%%\n", r.variant.c_str(), r.mean_epoch_s(),
                100 * r.mean_gemm_s() / r.mean_epoch_s(), speedup.c_str(),
                100 * r.epochs.back().test_acc);
  }
}

// CSV, or JSON when the name ends in .json.
void write_results(const std::string& path, const std::vector<RunResult>& runs) {
  const RunResult* naive = nullptr;
  for (const RunResult& r : runs)
    if (r.variant == "naive") naive = &r;
  std::vector<std::vector<Cell>> rows;
  for (const RunResult& r : runs)
    rows.push_back({r.variant, r.mean_epoch_s(), r.mean_gemm_s(),
                    r.mean_gemm_s() / r.mean_epoch_s(),
                    naive ? Cell(naive->mean_epoch_s() / r.mean_epoch_s()) : Cell::none(),
                    r.epochs.back().test_acc});
  write_table(path,
              {"variant", "s_per_epoch", "gemm_s_per_epoch", "gemm_share", "speedup_vs_naive",
               "final_test_acc"},
              rows);
}
