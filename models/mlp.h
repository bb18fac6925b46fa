// The multilayer perceptron that train_mlp trains on MNIST:
//   inputs → [Linear → ReLU] for each hidden size → Linear → classes (logits)
// e.g. MLP(ctx, 784, {1024, 1024}, 10) is 784-1024-1024-10. It is an engine::Sequential, so
// prepare / forward / backward / parameters come from there.
#pragma once

#include <string>
#include <vector>

#include "engine/engine.h"

namespace models {

class MLP : public engine::Sequential {
 public:
  MLP(engine::Context& ctx, int inputs, const std::vector<int>& hidden, int classes);

  int inputs() const { return inputs_; }
  int classes() const { return classes_; }
  const std::vector<int>& hidden() const { return hidden_; }
  std::string layer_sizes() const;  // "784-1024-1024-10"

 private:
  int inputs_, classes_;
  std::vector<int> hidden_;
};

// The parameters of inputs-hidden...-classes (weights and biases); a double, as sizes from a flag
// may overflow any integer before they are refused.
double mlp_parameter_count(int inputs, const std::vector<int>& hidden, int classes);

// The layer sizes of a saved MLP, e.g. {784, {1024, 1024}, 10}.
struct MlpSizes {
  int inputs = 0;
  std::vector<int> hidden;
  int classes = 0;
  std::string text() const;  // "784-1024-1024-10", as MLP::layer_sizes()
};

// The layer sizes of the MLP whose checkpoint `path` has this header, from the tensors' names and
// shapes alone (no metadata needed: a PyTorch state_dict of nn.Sequential(Linear, ReLU, ...,
// Linear) has them): 0.weight [out, in] and 0.bias [out], then 2.weight, 2.bias, ..., in order,
// with no gap and nothing else, each layer's inputs the previous one's outputs, at least 2
// classes, and the parameters within safetensors::require_fits_in_memory. Where the metadata has
// 'layers' or 'hidden', it must agree. Throws gemm_mlp::Error naming the file, and the tensor with
// its shape and what was expected, or the key with its value and what the tensors say.
MlpSizes mlp_sizes(const std::string& path, const engine::safetensors::Header& header);

}  // namespace models
