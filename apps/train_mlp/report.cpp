#include "apps/train_mlp/report.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iomanip>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>

#include "apps/common/csv.h"
#include "engine/engine.h"

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

bool is_json(const std::string& path) {
  return path.size() >= 5 && path.compare(path.size() - 5, 5, ".json") == 0;
}

const std::vector<std::string> kHistoryColumns = {"epoch", "loss",    "train_acc", "test_acc",
                                                  "lr",    "epoch_s", "gemm_s",    "run_id"};

// A table as CSV, or (a path ending in .json) as a JSON list of objects; written whole
// (engine/checkpoint/atomic_file.h), so that an interrupted run leaves the previous version.
void write_table(const std::string& label, const std::string& path,
                 const std::vector<std::string>& columns,
                 const std::vector<std::vector<Cell>>& rows) {
  const bool json = is_json(path);
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
  engine::replace_file(label, path, f.str());
}

// The CSV or JSON history as text rows, in kHistoryColumns' order.
std::vector<std::vector<std::string>> history_rows(const std::string& path,
                                                   const std::string& text) {
  const std::string where = "--history " + path;
  std::vector<std::vector<std::string>> rows;
  if (is_json(path)) {
    nlohmann::json list;
    try {
      list = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {
      throw std::runtime_error(where + ": not valid JSON (" + e.what() + ")");
    }
    if (!list.is_array()) throw std::runtime_error(where + ": not a JSON list of epochs");
    for (const nlohmann::json& object : list) {
      std::vector<std::string> row;
      for (const std::string& c : kHistoryColumns) {
        if (!object.is_object() || !object.contains(c))
          throw std::runtime_error(where + ": a row has no '" + c + "'");
        const nlohmann::json& v = object[c];
        row.push_back(v.is_string() ? v.get<std::string>() : v.dump());
      }
      rows.push_back(row);
    }
    return rows;
  }
  std::istringstream in(text);
  std::string line;
  bool header = true;
  while (std::getline(in, line)) {
    std::vector<std::string> row;
    std::istringstream fields(line);
    for (std::string field; std::getline(fields, field, ',');) row.push_back(field);
    if (header) {
      if (row != kHistoryColumns)
        throw std::runtime_error(where + ": its header is '" + line + "', not train_mlp's");
      header = false;
      continue;
    }
    if (row.size() != kHistoryColumns.size())
      throw std::runtime_error(where + ": the row '" + line + "' does not have " +
                               std::to_string(kHistoryColumns.size()) + " fields");
    rows.push_back(row);
  }
  if (header) throw std::runtime_error(where + ": empty (no header)");
  return rows;
}

}  // namespace

void write_history(const std::string& path, const std::vector<EpochLog>& epochs,
                   const std::string& run_id) {
  std::vector<std::vector<Cell>> rows;
  for (const EpochLog& e : epochs)
    rows.push_back({e.epoch, e.loss, e.train_acc, e.test_acc, e.lr, e.epoch_s, e.gemm_s, run_id});
  write_table("--history", path, kHistoryColumns, rows);
}

std::vector<EpochLog> read_history(const std::string& path, const std::string& run_id) {
  const std::string where = "--history " + path;
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    if (::access(path.c_str(), F_OK) != 0) return {};  // none yet
    throw std::runtime_error(where + ": cannot read it");
  }
  const std::string text{std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
  std::vector<EpochLog> out;
  int expected = 1;  // the rows are epochs 1, 2, ...
  for (const std::vector<std::string>& row : history_rows(path, text)) {
    if (row[7] != run_id)
      throw std::runtime_error(where + ": its rows are from another run (run_id " + row[7] +
                               ", this run's is " + run_id + "); name another file");
    EpochLog e{};
    double* numbers[] = {&e.loss, &e.train_acc, &e.test_acc, &e.lr, &e.epoch_s, &e.gemm_s};
    try {
      size_t used = 0;
      e.epoch = std::stoi(row[0], &used);
      if (used != row[0].size()) throw std::invalid_argument(row[0]);
      for (int c = 1; c <= 6; ++c) {
        *numbers[c - 1] = std::stod(row[c], &used);
        if (used != row[c].size()) throw std::invalid_argument(row[c]);
      }
    } catch (const std::exception&) {
      throw std::runtime_error(where + ": epoch row '" + row[0] +
                               "' holds a value that is not a number");
    }
    if (e.epoch != expected)
      throw std::runtime_error(where + ": row " + std::to_string(expected) + " is epoch " + row[0] +
                               ", not " + std::to_string(expected));
    ++expected;
    out.push_back(e);
  }
  return out;
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
  write_table("--results", path,
              {"variant", "s_per_epoch", "gemm_s_per_epoch", "gemm_share", "speedup_vs_naive",
               "final_test_acc"},
              rows);
}
