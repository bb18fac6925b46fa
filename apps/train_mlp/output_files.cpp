// The files a train_mlp run writes, checked before any work (output_files.h).
#include "apps/train_mlp/output_files.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <stdexcept>

#include "engine/engine.h"

// The file a path names, as one string: its folder resolved (links, "..", "."), then its name.
namespace {

std::string file_identity(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  const std::string dir =
      slash == std::string::npos ? "." : path.substr(0, std::max<size_t>(slash, 1));
  char* real = ::realpath(dir.c_str(), nullptr);
  if (real == nullptr) return path;
  const std::string out = std::string(real) + "/" + path.substr(slash + 1);
  std::free(real);
  return out;
}

}  // namespace

// No two of the files a run writes may be one file: each would overwrite the other.
void require_distinct(const std::vector<std::pair<std::string, std::string>>& targets) {
  for (size_t i = 0; i < targets.size(); ++i)
    for (size_t j = i + 1; j < targets.size(); ++j)
      if (file_identity(targets[i].second) == file_identity(targets[j].second))
        throw std::runtime_error(targets[i].first + " " + targets[i].second + " and " +
                                 targets[j].first + " " + targets[j].second + " are the same file");
}
