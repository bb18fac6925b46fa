// What train_mlp takes from a --resume or --eval checkpoint: the model's sizes and the run's
// settings.
#pragma once

#include <string>

#include "apps/train_mlp/options.h"

// --resume and --eval take the model from the checkpoint's tensors (models::mlp_sizes, from the
// header alone: no tensor data is read and no model built) and the run's settings from its
// metadata, each parsed as strictly as its flag; a flag given on the command line must agree.
// --resume needs every setting (a checkpoint that train_mlp wrote); --eval adopts those present,
// so that a PyTorch state_dict without metadata is scored, and --dataset there picks the data.
void adopt_checkpoint(Options& o, const std::string& flag, const std::string& path);
