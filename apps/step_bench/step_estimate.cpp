// step_estimate: what the step kernel's cost model (engine/step_plan.h, UnitCost) says one
// training step takes, scheduled as the kernel schedules it (group_units with a tile a block where
// sooner, schedule_groups on the soonest cluster), with today's unit costs and with parts of them
// changed: what a lever would gain before it is built. No GPU needed: docs/NOTES.md, "What would
// pay".
//
//   step_estimate [--models 784-1024-1024-10:256,...] [--cluster-size 4] [--clusters 30]
//                 [--arithmetic tf32|tf32x3] [--cost PART=VALUE,...]... [--csv FILE]
//
// --clusters is how many clusters of --cluster-size blocks are resident at once (the H200 runs 30
// of 4 and 15 of 8: step_bench prints the grid). Each --cost is a case of its own, today's costs
// with the named parts replaced: fixed, cluster_sum, nt, nn, tn (µs a K tile of that layout),
// other, handoff (µs), update_ns (ns a parameter). Prints, per model, today's estimate and each
// case's, in µs and as a fraction of today's.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "apps/common/csv.h"
#include "apps/common/model_spec.h"
#include "apps/common/number_flags.h"
#include "apps/common/parse_number.h"
#include "engine/step_plan.h"

namespace {

namespace sp = engine::step_plan;

// "tn=0.5,fixed=2.5" → today's costs with those parts replaced.
sp::UnitCost parse_cost(const std::string& text, sp::UnitCost cost) {
  const std::map<std::string, double*> parts = {
      {"fixed", &cost.fixed_us},     {"cluster_sum", &cost.cluster_sum_us},
      {"nt", &cost.forward_us},      {"nn", &cost.input_grad_us},
      {"tn", &cost.weight_grad_us},  {"other", &cost.other_us},
      {"handoff", &cost.handoff_us}, {"update_ns", &cost.update_ns_per_parameter}};
  std::stringstream in(text);
  int count = 0;
  for (std::string item; std::getline(in, item, ',');) {
    const size_t eq = item.find('=');
    const auto part = parts.find(item.substr(0, eq));
    if (eq == std::string::npos || part == parts.end())
      apps::bad_value("--cost", item,
                      "PART=VALUE, PART one of fixed, cluster_sum, nt, nn, tn, other, handoff, "
                      "update_ns");
    *part->second =
        apps::parse_real("--cost " + part->first, item.substr(eq + 1), apps::Range::NonNegative);
    ++count;
  }
  if (count == 0 || text.back() == ',') apps::bad_value("--cost", text, "PART=VALUE,...");
  return cost;
}

// The step's estimate, µs: the plan of one step, in the kernel's groups and schedule.
double estimate(const sp::StepShape& shape, int size, int clusters, const sp::UnitCost& cost) {
  sp::UnitSizes sizes;  // the kernel's (engine/step_kernel.cu, unit_sizes): 128×128 tiles,
  sizes.k_granule = cost.k_tile;  // whole K tiles, a Loss and a Gather row a warp of the cluster
  sizes.loss_rows = sizes.gather_rows = 12 * size;  // 384 threads: 12 warps a block
  const sp::Plan plan = sp::make_plan(shape, sizes, sp::Scope::Step, 1);
  const std::vector<sp::Group> groups = sp::group_units(plan, size, clusters, cost);
  const sp::Schedule schedule =
      sp::schedule_groups(plan, groups, size, std::min(static_cast<int>(groups.size()), clusters),
                          cost, sp::Assignment::Soonest);
  return sp::estimated_us(plan, schedule, size, cost);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "The step kernel's cost model: one training step's estimate, today and with "
      "parts of the unit costs changed"};
  std::string models = "784-1024-1024-10:256";
  std::string arithmetic = "tf32";
  int size = 4, clusters = 30;
  std::vector<std::string> costs;
  std::string csv_path;
  app.add_option("--models", models, "comma-separated WIDTH-...-WIDTH:BATCH");
  app.add_option("--cluster-size", size, "blocks a cluster")
      ->transform(CLI::IsMember({"1", "2", "4", "8"}));
  app.add_option("--clusters", clusters, "clusters resident at once")
      ->transform(apps::decimal_integer(1, 1024));
  app.add_option("--arithmetic", arithmetic, "whose unit costs: tf32 or tf32x3")
      ->transform(CLI::IsMember({"tf32", "tf32x3"}));
  app.add_option("--cost", costs, "a case: PART=VALUE,... (repeatable)");
  app.add_option("--csv", csv_path, "also write the table here");
  CLI11_PARSE(app, argc, argv);
  try {
    const sp::UnitCost today = arithmetic == "tf32x3" ? sp::kTf32x3UnitCost : sp::kTf32UnitCost;
    std::vector<std::pair<std::string, sp::UnitCost>> cases = {{"today", today}};
    for (const std::string& c : costs) cases.emplace_back(c, parse_cost(c, today));
    std::vector<std::pair<std::string, sp::StepShape>> shapes;
    if (models.empty() || models.back() == ',')
      apps::bad_value("--models", models, "WIDTH-...-WIDTH:BATCH, comma-separated");
    std::stringstream in(models);
    for (std::string m; std::getline(in, m, ',');) {
      const apps::ModelSpec spec = apps::parse_model_spec("--models", m, 2);
      shapes.emplace_back(m, sp::StepShape{spec.widths, spec.batch});
    }
    std::ofstream csv;
    if (!csv_path.empty()) {
      csv.open(csv_path);
      if (!csv) throw std::runtime_error("--csv: cannot write " + csv_path);
      csv << apps::csv_row(
          {"model", "arithmetic", "cluster_size", "clusters", "case", "estimate_us", "over_today"});
    }
    for (const auto& [name, shape] : shapes) {
      std::printf("%s, %s, clusters of %d, %d clusters\n", name.c_str(), arithmetic.c_str(), size,
                  clusters);
      const double base = estimate(shape, size, clusters, today);
      for (const auto& [label, cost] : cases) {
        const double us = estimate(shape, size, clusters, cost);
        std::printf("  %-48s %7.1f us  %5.2f\n", label.c_str(), us, us / base);
        if (csv)
          csv << apps::csv_row({name, arithmetic, std::to_string(size), std::to_string(clusters),
                                label, std::to_string(us), std::to_string(us / base)});
      }
    }
    if (csv && !csv.flush()) throw std::runtime_error("--csv: cannot write " + csv_path);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "step_estimate: %s\n", e.what());
    return 1;
  }
  return 0;
}
