// The multilayer perceptron that train_mlp trains on MNIST:
//   inputs → [Linear → ReLU] for each hidden size → Linear → classes (logits)
// e.g. MLP(ctx, 784, {1024, 1024}, 10) is 784-1024-1024-10. It is an engine::Sequential, so
// prepare / forward / backward / parameters come from there.
#pragma once

#include <string>
#include <vector>

#include "engine/context.h"
#include "engine/module.h"

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

}  // namespace models
