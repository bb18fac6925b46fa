#include "models/mlp.h"

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

std::string MLP::layer_sizes() const {
  std::string s = std::to_string(inputs_);
  for (int h : hidden_) s += "-" + std::to_string(h);
  return s + "-" + std::to_string(classes_);
}

}  // namespace models
