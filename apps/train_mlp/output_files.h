// The files a train_mlp run writes (--save, --history, --results, --step-graph), checked before
// any work.
#pragma once

#include <string>
#include <utility>
#include <vector>

// A file the run will write, checked before any work: a file name (not a folder), in a folder
// that exists and is writable, and not something other than a regular file (which the rename
// that writes it would replace).
void require_writable(const std::string& flag, const std::string& path);

// No two of the files a run writes may be one file: each would overwrite the other. Each target
// is a flag and its path.
void require_distinct(const std::vector<std::pair<std::string, std::string>>& targets);
