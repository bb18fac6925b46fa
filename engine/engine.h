// The whole engine in one include, for applications, models and toy models: the public headers of
// its three rooms (engine/CMakeLists.txt), runtime/ (Tensor, Context, a captured graph's
// topology), network/ (ops, losses, optimisers, modules, the Trainer) and checkpoint/
// (safetensors, checkpoints, files replaced whole).
#pragma once

#include "engine/checkpoint/atomic_file.h"
#include "engine/checkpoint/checkpoint.h"
#include "engine/checkpoint/safetensors.h"
#include "engine/network/loss.h"
#include "engine/network/module.h"
#include "engine/network/ops.h"
#include "engine/network/optim.h"
#include "engine/network/trainer.h"
#include "engine/runtime/context.h"
#include "engine/runtime/graph_topology.h"
#include "engine/runtime/tensor.h"
