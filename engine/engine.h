// The whole engine in one include, for applications and toy models.
#pragma once

#include "engine/checkpoint.h"
#include "engine/context.h"
#include "engine/loss.h"
#include "engine/module.h"
#include "engine/ops.h"
#include "engine/optim.h"
#include "engine/tensor.h"
#include "engine/trainer.h"
