// --step-graph: the training step's CUDA graph as JSON (engine/runtime/graph_topology.h), recorded
// when the trainer captures the step and written when the run ends. scripts/check/critical_path.py
// reads it.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "engine/engine.h"

class StepGraphRecorder {
 public:
  // Records every graph captured in ctx from now on; the last one is written.
  explicit StepGraphRecorder(engine::Context& ctx);
  ~StepGraphRecorder();  // stops recording
  StepGraphRecorder(const StepGraphRecorder&) = delete;
  StepGraphRecorder& operator=(const StepGraphRecorder&) = delete;

  // Writes the last graph captured, with `about` (the variant and model) and the batch size, to
  // `path` and says so. Throws naming --step-graph and the path when none was captured, with the
  // trainer's graph_note() when it says why.
  void write(const std::string& path, std::map<std::string, std::string> about, int batch,
             const std::string& graph_note) const;

 private:
  engine::Context& ctx_;
  std::optional<engine::GraphTopology> last_;
};
