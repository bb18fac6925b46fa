// The topology of a captured CUDA graph: its kernels and which kernels each one waits for, as
// JSON (train_mlp --step-graph writes the training step's; scripts/check/critical_path.py weights
// it with each kernel's time and finds the longest chain).
//
//   ctx.set_capture_hook([&](cudaGraph_t g) { topology = engine::graph_topology(g); });
//   ... a capture ...
//   engine::replace_file("--step-graph", path, engine::topology_json(topology, {{"variant", v}}));
//
// Kernels are listed in the order their nodes were created. In a stream capture that is the order
// the work was queued, so a launch-by-launch run of the same code launches them in that order
// (critical_path.py matches the two by name). An edge (a, b) says that kernel b waits for kernel a,
// directly or through nodes that are not kernels (event records and waits, memsets, memcpys,
// empty nodes): those are left out of the list, their dependencies passed through, and counted by
// type in other_nodes. A child-graph or conditional node is an error: its kernels would be missing.
#pragma once

#include <cuda_runtime_api.h>

#include <array>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace engine {

struct KernelNode {
  std::string name;     // demangled, e.g. "void gemm::gather(float const*, ...)"
  std::string mangled;  // the symbol, as ncu --print-kernel-base mangled prints it
  std::array<unsigned, 3> grid{}, block{};
  unsigned shared_bytes = 0;  // dynamic shared memory per block
};

struct GraphTopology {
  std::vector<KernelNode> kernels;         // in creation order
  std::vector<std::pair<int, int>> edges;  // (a, b): kernel b waits for kernel a; sorted, unique
  std::map<std::string, int> other_nodes;  // the nodes that are not kernels, by type
};

// One node of a graph as graph_topology reads it: its type ("kernel", "memset", "event_record",
// ...) and, for a kernel, the kernel.
struct GraphNode {
  std::string type;
  KernelNode kernel;
};

// Reads `graph` (captured, not yet instantiated; Context::set_capture_hook hands it over).
// Throws gemm_mlp::Error naming the failed CUDA call, or the node that cannot be listed.
GraphTopology graph_topology(cudaGraph_t graph);

// The topology of nodes listed in creation order with their direct dependencies (from, to) as
// indices into `nodes`. Throws gemm_mlp::Error for an index out of range or an edge to an earlier
// node (then the list is not in creation order). The part of graph_topology that needs no GPU.
GraphTopology topology_of(const std::vector<GraphNode>& nodes,
                          const std::vector<std::pair<size_t, size_t>>& edges);

// {"format": "gemm-mlp graph topology 1", each `about` key, "kernels": [{"index", "name",
// "mangled", "grid", "block", "shared_bytes"}, ...], "edges": [[a, b], ...], "other_nodes": {...}}.
std::string topology_json(const GraphTopology& topology,
                          const std::map<std::string, std::string>& about = {});

}  // namespace engine
