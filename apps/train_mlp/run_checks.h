// train_mlp's checks around a run: before it, that the model fits in memory; after it, a warning
// when the loss exploded but stayed finite.
#pragma once

#include "apps/train_mlp/options.h"
#include "apps/train_mlp/report.h"
#include "engine/engine.h"

// The model's memory from the flags' sizes, before anything is allocated: its parameters, their
// gradients and the optimiser's buffers (one for SGD, two for Adam), 4 bytes each, and a batch of
// `batch` rows' activations (each layer's output and input gradient); on the host two copies of
// the parameters more (the optimiser's move into one buffer, a save's or a check's download), on
// the GPU twice the whole (the profiling pass trains a scratch copy). At most the GPU's memory, or
// the host's (base/memory_limit.h: what is available, and what `ulimit -v` leaves).
void require_model_fits(const Options& o, int features, int classes, int batch,
                        engine::Device device);

// A loss that explodes but stays finite (Adam at --lr 1e6 ends near 1e14) passes the non-finite
// checks. A model that has learned nothing and gives every class the same probability scores
// ln(classes); a last epoch's mean loss above twice that is far worse than knowing nothing. A
// working run ends well below ln(classes) (a first epoch on a few examples may end just above it).
void warn_if_loss_exploded(const RunResult& run, int classes, const Options& o);
