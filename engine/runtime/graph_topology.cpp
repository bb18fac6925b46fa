#include "engine/runtime/graph_topology.h"

#include <cudaTypedefs.h>
#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "base/cuda_check.h"

namespace engine {

using gemm_mlp::Error;

namespace {

#if CUDART_VERSION >= 12050  // graph_topology's helpers (below: topology_of, which needs no GPU)
std::string demangled(const std::string& mangled) {
  int status = 0;
  char* text = abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status);
  if (status != 0 || text == nullptr) return mangled;  // a C name (extern "C" kernels) stays
  std::string out(text);
  std::free(text);
  return out;
}

const char* node_type_name(cudaGraphNodeType type) {
  switch (type) {
    case cudaGraphNodeTypeKernel:
      return "kernel";
    case cudaGraphNodeTypeMemcpy:
      return "memcpy";
    case cudaGraphNodeTypeMemset:
      return "memset";
    case cudaGraphNodeTypeHost:
      return "host";
    case cudaGraphNodeTypeGraph:
      return "child_graph";
    case cudaGraphNodeTypeEmpty:
      return "empty";
    case cudaGraphNodeTypeWaitEvent:
      return "event_wait";
    case cudaGraphNodeTypeEventRecord:
      return "event_record";
    case cudaGraphNodeTypeExtSemaphoreSignal:
      return "semaphore_signal";
    case cudaGraphNodeTypeExtSemaphoreWait:
      return "semaphore_wait";
    case cudaGraphNodeTypeMemAlloc:
      return "mem_alloc";
    case cudaGraphNodeTypeMemFree:
      return "mem_free";
    case cudaGraphNodeTypeConditional:
      return "conditional";
    default:
      return "unknown";
  }
}

// The edges with their data (CUDA 13 gave cudaGraphGetEdges the signature of 12.3's _v2).
cudaError_t graph_edges(cudaGraph_t graph, cudaGraphNode_t* from, cudaGraphNode_t* to,
                        cudaGraphEdgeData* data, size_t* count) {
#if CUDART_VERSION >= 13000
  return cudaGraphGetEdges(graph, from, to, data, count);
#else
  return cudaGraphGetEdges_v2(graph, from, to, data, count);
#endif
}

// A driver function through the runtime (no link to libcuda): the kernel's name and launch shape
// are read with the driver's calls, which see kernels launched through either API (cuBLAS's too).
template <class Function>
Function driver_function(const char* symbol, unsigned version) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  CUDA_CHECK(cudaGetDriverEntryPointByVersion(symbol, &fn, version, cudaEnableDefault, &found));
  if (found != cudaDriverEntryPointSuccess || fn == nullptr)
    throw Error(std::string("graph topology: the CUDA driver has no ") + symbol + " (version " +
                std::to_string(version) + "; update the driver)");
  return reinterpret_cast<Function>(fn);
}

void driver_check(CUresult result, const char* call, size_t node) {
  if (result != CUDA_SUCCESS)
    throw Error(std::string("graph topology: ") + call + " failed with CUresult " +
                std::to_string(static_cast<int>(result)) + " on node " + std::to_string(node));
}

KernelNode read_kernel(cudaGraphNode_t node, size_t index) {
  static const auto get_params =
      driver_function<PFN_cuGraphKernelNodeGetParams_v12000>("cuGraphKernelNodeGetParams", 12000);
  static const auto func_name = driver_function<PFN_cuFuncGetName_v12030>("cuFuncGetName", 12030);
  static const auto kernel_name =
      driver_function<PFN_cuKernelGetName_v12030>("cuKernelGetName", 12030);
  CUDA_KERNEL_NODE_PARAMS_v2 p{};
  driver_check(get_params(reinterpret_cast<CUgraphNode>(node), &p), "cuGraphKernelNodeGetParams",
               index);
  const char* name = nullptr;
  if (p.func != nullptr)
    driver_check(func_name(&name, p.func), "cuFuncGetName", index);
  else if (p.kern != nullptr)
    driver_check(kernel_name(&name, p.kern), "cuKernelGetName", index);
  if (name == nullptr)
    throw Error("graph topology: kernel node " + std::to_string(index) + " names no function");
  KernelNode k;
  k.mangled = name;
  k.name = demangled(k.mangled);
  k.grid = {p.gridDimX, p.gridDimY, p.gridDimZ};
  k.block = {p.blockDimX, p.blockDimY, p.blockDimZ};
  k.shared_bytes = p.sharedMemBytes;
  return k;
}
#endif

}  // namespace

GraphTopology topology_of(const std::vector<GraphNode>& nodes,
                          const std::vector<std::pair<size_t, size_t>>& edges) {
  std::vector<std::vector<size_t>> waits_for(nodes.size());
  for (const auto& [from, to] : edges) {
    if (from >= nodes.size() || to >= nodes.size())
      throw Error("graph topology: edge " + std::to_string(from) + " -> " + std::to_string(to) +
                  " names a node outside the graph's " + std::to_string(nodes.size()));
    if (from >= to)
      throw Error("graph topology: node " + std::to_string(to) + " waits for node " +
                  std::to_string(from) +
                  ", which is not earlier: the nodes are not listed in creation order, so the "
                  "kernels' order cannot be matched with a launch-by-launch run");
    waits_for[to].push_back(from);
  }
  GraphTopology t;
  std::vector<int> kernel_index(nodes.size(), -1);
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].type == "child_graph" || nodes[i].type == "conditional")
      throw Error("graph topology: node " + std::to_string(i) + " is a " + nodes[i].type +
                  " node, whose kernels cannot be listed");
    if (nodes[i].type == "kernel") {
      kernel_index[i] = static_cast<int>(t.kernels.size());
      t.kernels.push_back(nodes[i].kernel);
    } else {
      ++t.other_nodes[nodes[i].type];
    }
  }
  // The kernels each node waits for, nearest first: through a node that is not a kernel, its own.
  // Nodes come in creation order, so a node's dependencies are resolved before it.
  std::vector<std::vector<int>> kernels_before(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    std::vector<int>& before = kernels_before[i];
    for (size_t d : waits_for[i]) {
      if (kernel_index[d] >= 0)
        before.push_back(kernel_index[d]);
      else
        before.insert(before.end(), kernels_before[d].begin(), kernels_before[d].end());
    }
    std::sort(before.begin(), before.end());
    before.erase(std::unique(before.begin(), before.end()), before.end());
    if (kernel_index[i] >= 0)
      for (int k : before) t.edges.emplace_back(k, kernel_index[i]);
  }
  std::sort(t.edges.begin(), t.edges.end());
  return t;
}

GraphTopology graph_topology(cudaGraph_t graph) {
#if CUDART_VERSION < 12050
  (void)graph;
  throw Error(
      "graph topology: reading a graph's kernels needs CUDA 12.5 or newer at build time "
      "(this build: CUDART_VERSION " +
      std::to_string(CUDART_VERSION) + ")");
#else
  size_t count = 0;
  CUDA_CHECK(cudaGraphGetNodes(graph, nullptr, &count));
  std::vector<cudaGraphNode_t> handles(count);
  if (count > 0) CUDA_CHECK(cudaGraphGetNodes(graph, handles.data(), &count));
  handles.resize(count);
  std::map<cudaGraphNode_t, size_t> index_of;
  std::vector<GraphNode> nodes(count);
  for (size_t i = 0; i < count; ++i) {
    index_of[handles[i]] = i;
    cudaGraphNodeType type{};
    CUDA_CHECK(cudaGraphNodeGetType(handles[i], &type));
    nodes[i].type = node_type_name(type);
    if (type == cudaGraphNodeTypeKernel) nodes[i].kernel = read_kernel(handles[i], i);
  }
  size_t edge_count = 0;
  CUDA_CHECK(graph_edges(graph, nullptr, nullptr, nullptr, &edge_count));
  std::vector<cudaGraphNode_t> from(edge_count), to(edge_count);
  std::vector<cudaGraphEdgeData> data(edge_count);  // asked for, so that the query is not lossy
  if (edge_count > 0)
    CUDA_CHECK(graph_edges(graph, from.data(), to.data(), data.data(), &edge_count));
  std::vector<std::pair<size_t, size_t>> edges;
  for (size_t e = 0; e < edge_count; ++e) {
    const auto a = index_of.find(from[e]), b = index_of.find(to[e]);
    if (a == index_of.end() || b == index_of.end())
      throw Error("graph topology: cudaGraphGetEdges named a node that cudaGraphGetNodes did not");
    edges.emplace_back(a->second, b->second);
  }
  return topology_of(nodes, edges);
#endif
}

std::string topology_json(const GraphTopology& t, const std::map<std::string, std::string>& about) {
  nlohmann::ordered_json doc;
  doc["format"] = "gemm-mlp graph topology 1";
  for (const auto& [key, value] : about) {
    if (doc.contains(key) || key == "kernels" || key == "edges" || key == "other_nodes")
      throw Error("graph topology: '" + key + "' is a key of the format, not one to add");
    doc[key] = value;
  }
  nlohmann::ordered_json kernels = nlohmann::ordered_json::array();
  for (size_t i = 0; i < t.kernels.size(); ++i) {
    const KernelNode& k = t.kernels[i];
    kernels.push_back({{"index", i},
                       {"name", k.name},
                       {"mangled", k.mangled},
                       {"grid", k.grid},
                       {"block", k.block},
                       {"shared_bytes", k.shared_bytes}});
  }
  doc["kernels"] = kernels;
  nlohmann::ordered_json edges = nlohmann::ordered_json::array();
  for (const auto& [a, b] : t.edges) edges.push_back({a, b});
  doc["edges"] = edges;
  doc["other_nodes"] = t.other_nodes;
  return doc.dump(1) + "\n";
}

}  // namespace engine
