// The files a train_mlp run writes (--save, --history, --results, --step-graph), checked before
// any work.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "apps/common/output_file.h"  // apps::require_writable: each file, before any work

// No two of the files a run writes may be one file: each would overwrite the other. Each target
// is a flag and its path.
void require_distinct(const std::vector<std::pair<std::string, std::string>>& targets);
