#include "apps/train_mlp/step_graph.h"

#include <iostream>
#include <stdexcept>

#include "engine/engine.h"

StepGraphRecorder::StepGraphRecorder(engine::Context& ctx) : ctx_(ctx) {
  ctx_.set_capture_hook([this](cudaGraph_t graph) { last_ = engine::graph_topology(graph); });
}

StepGraphRecorder::~StepGraphRecorder() { ctx_.set_capture_hook(nullptr); }

void StepGraphRecorder::write(const std::string& path, std::map<std::string, std::string> about,
                              int batch, const std::string& graph_note) const {
  if (!last_)
    throw std::runtime_error(
        "--step-graph " + path + ": the training step was not captured as a CUDA graph (" +
        (graph_note.empty() ? "the trainer captures the run's second full-size batch; this run "
                              "had fewer: raise --train-limit or --epochs"
                            : graph_note) +
        "); nothing was written");
  about["batch"] = std::to_string(batch);
  engine::replace_file("--step-graph", path, engine::topology_json(*last_, about));
  std::cout << "step graph written to " << path << "\n";
}
