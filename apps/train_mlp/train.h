// One variant's training run in train_mlp: the model built (or a --resume continued), the epochs
// trained, timed, evaluated and reported, the checkpoint saved after each epoch and when a signal
// stops the run.
#pragma once

#include "apps/train_mlp/options.h"
#include "apps/train_mlp/report.h"
#include "apps/train_mlp/resume.h"
#include "data/mnist.h"
#include "engine/engine.h"

// Trains the MLP with `variant` from epoch 1 (or where `resumed` left off) to o.epochs. Throws
// Stopped after saving when a signal stops it, and Diverged when the loss or a parameter becomes
// non-finite.
RunResult train(const Options& o, engine::Device device, const gemm::Variant& variant,
                const data::Dataset& train_set, const data::Dataset& test_set,
                const Resumed* resumed);
