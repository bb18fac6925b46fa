// One epoch of training steps, and the untimed epoch that measures the GEMM time (train_mlp).
#pragma once

#include <cstdint>

#include "apps/train_mlp/options.h"
#include "apps/train_mlp/report.h"
#include "data/loader.h"
#include "engine/engine.h"

// Steps first .. num_batches()-1 of an epoch; returns the index after the last step taken (less
// than num_batches() when a stop signal came). The loader gathers each step's batch from the
// device-side step counter (BatchLoader::batch_at), so that a replayed graph gathers a new batch
// each time, and a run resumed at step `first` of the epoch gathers that step's batch. Every step
// but the epoch's last also gathers the next step's batch at its end (Gather::ThisAndNext).
int run_epoch(engine::Trainer& trainer, data::BatchLoader& loader, const engine::Tensor& x,
              const engine::LabelTensor& y, Progress* progress, int first = 0);

// The GEMM time of one epoch, measured on a scratch copy of the model (built after the real one,
// so the real one's initialisation does not depend on it); it also loads every kernel and cuBLAS
// before the timed epochs. The step is captured with CUDA event nodes around every GEMM and the
// intervals are read after each replay (a wait per step, which only this pass makes); an epoch's
// GEMM time is the mean replayed step's times the epoch's batches (the partial one counted by its
// share of rows). Without a graph (--no-graph, a capture that failed, or a driver that cannot time
// events in a graph) the GEMMs are timed one by one with events around each launch, which
// include launch gaps.
double profile_gemm_seconds(const Options& o, engine::Context& ctx, data::BatchLoader& loader,
                            const engine::Tensor& x, const engine::LabelTensor& y, int features,
                            int classes, int64_t total_steps, const char* variant);
