// engine/runtime/graph_topology.h without a GPU: the kernel edges of a hand-made node list, through
// nodes that are not kernels, the JSON written from them, and the lists that cannot be read.
#include "engine/runtime/graph_topology.h"

#include <gtest/gtest.h>

#include <array>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "base/cuda_check.h"
#include "expect_error.h"

namespace {

using engine::GraphNode;
using engine::topology_of;

GraphNode kernel(const std::string& name) {
  GraphNode n;
  n.type = "kernel";
  n.kernel.name = name + "(float*)";
  n.kernel.mangled = "_Z" + std::to_string(name.size()) + name + "Pf";
  n.kernel.grid = {static_cast<unsigned>(name.size()), 2, 1};
  n.kernel.block = {128, 1, 1};
  return n;
}

GraphNode other(const std::string& type) {
  GraphNode n;
  n.type = type;
  return n;
}

// a; an event record after a, then b; a memset after a, then c; an empty join of b and c, then d;
// e after a (also after d through the join, and directly).
std::vector<GraphNode> forked_nodes() {
  return {kernel("a"), other("event_record"), kernel("b"), other("memset"),
          kernel("c"), other("empty"),        kernel("d"), kernel("e")};
}
const std::vector<std::pair<size_t, size_t>> kForkedEdges = {
    {0, 1}, {1, 2}, {0, 3}, {3, 4}, {2, 5}, {4, 5}, {5, 6}, {0, 7}, {6, 7}, {5, 7}};

TEST(GraphTopology, EdgesPassThroughNodesThatAreNotKernels) {
  const engine::GraphTopology t = topology_of(forked_nodes(), kForkedEdges);
  ASSERT_EQ(t.kernels.size(), 5u);
  std::vector<std::string> names;
  for (const engine::KernelNode& k : t.kernels) names.push_back(k.name);
  EXPECT_EQ(names, (std::vector<std::string>{"a(float*)", "b(float*)", "c(float*)", "d(float*)",
                                             "e(float*)"}));
  // e waits for a and d directly, and for b and c through the join.
  const std::vector<std::pair<int, int>> edges = {{0, 1}, {0, 2}, {0, 4}, {1, 3},
                                                  {1, 4}, {2, 3}, {2, 4}, {3, 4}};
  EXPECT_EQ(t.edges, edges);
  EXPECT_EQ(t.other_nodes,
            (std::map<std::string, int>{{"empty", 1}, {"event_record", 1}, {"memset", 1}}));
}

TEST(GraphTopology, JsonListsKernelsEdgesAndTheRun) {
  const engine::GraphTopology t = topology_of(forked_nodes(), kForkedEdges);
  const nlohmann::json doc =
      nlohmann::json::parse(engine::topology_json(t, {{"variant", "tf32_fast"}, {"batch", "256"}}));
  EXPECT_EQ(doc.at("format"), "gemm-mlp graph topology 1");
  EXPECT_EQ(doc.at("variant"), "tf32_fast");
  EXPECT_EQ(doc.at("batch"), "256");
  ASSERT_EQ(doc.at("kernels").size(), 5u);
  const nlohmann::json& c = doc.at("kernels").at(2);
  EXPECT_EQ(c.at("index"), 2);
  EXPECT_EQ(c.at("name"), "c(float*)");
  EXPECT_EQ(c.at("mangled"), "_Z1cPf");
  EXPECT_EQ(c.at("grid"), nlohmann::json::array({1, 2, 1}));
  EXPECT_EQ(c.at("block"), nlohmann::json::array({128, 1, 1}));
  EXPECT_EQ(doc.at("edges").size(), 8u);
  EXPECT_EQ(doc.at("edges").at(7), nlohmann::json::array({3, 4}));
  EXPECT_EQ(doc.at("other_nodes").at("memset"), 1);
  EXPECT_THROW_WITH(engine::topology_json(t, {{"edges", "x"}}), gemm_mlp::Error,
                    "'edges' is a key of the format");
}

TEST(GraphTopology, ListsThatCannotBeReadAreErrors) {
  const std::vector<GraphNode> nodes = {kernel("a"), kernel("b")};
  EXPECT_THROW_WITH(topology_of(nodes, {{1, 0}}), gemm_mlp::Error,
                    "node 0 waits for node 1, which is not earlier: the nodes are not listed in "
                    "creation order");
  EXPECT_THROW_WITH(topology_of(nodes, {{0, 2}}), gemm_mlp::Error,
                    "edge 0 -> 2 names a node outside the graph's 2");
  EXPECT_THROW_WITH(topology_of({kernel("a"), other("child_graph")}, {{0, 1}}), gemm_mlp::Error,
                    "node 1 is a child_graph node, whose kernels cannot be listed");
}

}  // namespace
