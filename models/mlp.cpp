#include "models/mlp.h"

#include <algorithm>
#include <climits>
#include <set>

namespace models {

MLP::MLP(engine::Context& ctx, int inputs, const std::vector<int>& hidden, int classes)
    : inputs_(inputs), classes_(classes), hidden_(hidden) {
  if (inputs < 1 || classes < 2)
    throw gemm_mlp::Error("MLP: needs inputs >= 1 and classes >= 2, got " + std::to_string(inputs) +
                          " and " + std::to_string(classes));
  int width = inputs;
  for (int h : hidden) {
    if (h < 1) throw gemm_mlp::Error("MLP: hidden sizes must be >= 1, got " + std::to_string(h));
    add<engine::Linear>(ctx, width, h);
    add<engine::ReLU>();
    width = h;
  }
  add<engine::Linear>(ctx, width, classes);
}

std::string MLP::layer_sizes() const { return MlpSizes{inputs_, hidden_, classes_}.text(); }

std::string MlpSizes::text() const {
  std::string s = std::to_string(inputs);
  for (int h : hidden) s += "-" + std::to_string(h);
  return s + "-" + std::to_string(classes);
}

double mlp_parameter_count(int inputs, const std::vector<int>& hidden, int classes) {
  double count = 0.0, width = inputs;
  for (int h : hidden) count += (width + 1) * h, width = h;
  return count + (width + 1) * classes;
}

namespace {

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

// Why a tensor that is not one of the chain's does not fit: "7.weight" sits at a ReLU's index or
// after a gap; any other name is no Linear layer's.
std::string misfit_reason(const std::string& name, int layers) {
  const size_t dot = name.find('.');
  const std::string index = name.substr(0, dot),
                    kind = dot == std::string::npos ? "" : name.substr(dot + 1);
  const bool numbered = !index.empty() && index.size() <= 6 &&
                        index.find_first_not_of("0123456789") == std::string::npos &&
                        (index == "0" || index[0] != '0') && (kind == "weight" || kind == "bias");
  if (!numbered) return "it is no Linear layer's weight or bias";
  const int i = std::stoi(index);
  if (i % 2 == 1) return "index " + index + " is a ReLU's, which has no parameters";
  return "a gap: no '" + std::to_string(2 * layers) + ".weight' before it";
}

}  // namespace

MlpSizes mlp_sizes(const std::string& path, const engine::safetensors::Header& header) {
  const std::string file = "checkpoint " + path;
  const auto find = [&](const std::string& name) -> const engine::safetensors::TensorInfo* {
    for (const auto& t : header.tensors)
      if (t.name == name) return &t;
    return nullptr;
  };
  std::vector<int> sizes;
  std::set<std::string> chain;
  int layers = 0;
  for (;; ++layers) {
    const std::string w = std::to_string(2 * layers) + ".weight";
    const std::string b = std::to_string(2 * layers) + ".bias";
    const engine::safetensors::TensorInfo *wt = find(w), *bt = find(b);
    if (wt == nullptr && bt == nullptr) break;
    if (wt == nullptr) throw gemm_mlp::Error(file + ": tensor '" + b + "' has no '" + w + "'");
    if (bt == nullptr) throw gemm_mlp::Error(file + ": tensor '" + w + "' has no '" + b + "'");
    const std::vector<int64_t>& ws = wt->shape;
    if (ws.size() != 2 || ws[0] < 1 || ws[1] < 1 || ws[0] > INT_MAX || ws[1] > INT_MAX)
      throw gemm_mlp::Error(file + ": tensor '" + w + "' has shape " + shape_text(ws) +
                            ", expected [outputs, inputs] (an nn.Linear's weight)");
    const int out = static_cast<int>(ws[0]), in = static_cast<int>(ws[1]);
    if (!sizes.empty() && in != sizes.back())
      throw gemm_mlp::Error(file + ": tensor '" + w + "' has shape " + shape_text(ws) +
                            ", expected [" + std::to_string(out) + "," +
                            std::to_string(sizes.back()) + "]: its inputs are the " +
                            std::to_string(sizes.back()) + " outputs of '" +
                            std::to_string(2 * layers - 2) + ".weight'");
    if (sizes.empty()) sizes.push_back(in);
    if (bt->shape != std::vector<int64_t>{out} && bt->shape != std::vector<int64_t>{1, out})
      throw gemm_mlp::Error(file + ": tensor '" + b + "' has shape " + shape_text(bt->shape) +
                            ", expected [" + std::to_string(out) + "] (the outputs of '" + w +
                            "')");
    sizes.push_back(out);
    chain.insert(w), chain.insert(b);
  }
  for (const auto& t : header.tensors)
    if (!chain.count(t.name))
      throw gemm_mlp::Error(
          file + ": tensor '" + t.name + "' " + shape_text(t.shape) + " does not fit an MLP (" +
          misfit_reason(t.name, layers) +
          "); one saved as nn.Sequential(Linear, ReLU, ..., Linear) has 0.weight, 0.bias, "
          "2.weight, 2.bias, ... and nothing else");
  if (layers == 0) throw gemm_mlp::Error(file + ": holds no tensors");
  MlpSizes s{sizes.front(), std::vector<int>(sizes.begin() + 1, sizes.end() - 1), sizes.back()};
  if (s.classes < 2)
    throw gemm_mlp::Error(file + ": tensor '" + std::to_string(2 * layers - 2) +
                          ".weight' gives 1 output; a classifier needs at least 2 classes");
  std::string hidden;
  for (int h : s.hidden) hidden += (hidden.empty() ? "" : ",") + std::to_string(h);
  const auto agree = [&](const char* key, const std::string& value, const std::string& what) {
    const auto it = header.metadata.find(key);
    if (it != header.metadata.end() && it->second != value)
      throw gemm_mlp::Error(file + ": metadata '" + key + "' is '" + it->second +
                            "', but the tensors give " + what);
  };
  agree("layers", s.text(), s.text());
  agree("hidden", hidden, "hidden '" + hidden + "' (" + s.text() + ")");
  engine::safetensors::require_fits_in_memory(path, header);
  return s;
}

}  // namespace models
