// train_mlp --eval: a checkpoint's test loss and accuracy.
#pragma once

#include "apps/train_mlp/options.h"
#include "engine/engine.h"

// --eval: the checkpoint's test loss and accuracy. The layer sizes come from its tensors' shapes
// (complete_options); they must fit the data's images and classes before the model is built.
// The GEMM variant: `variant` (--gemm), or null for the device's default (auto on CUDA, cpu on the
// CPU). Returns the exit status.
int evaluate_checkpoint(const Options& o, engine::Device device, const gemm::Variant* variant);
