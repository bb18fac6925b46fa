// The files a train_mlp run writes, checked before any work (output_files.h).
#include "apps/train_mlp/output_files.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "engine/engine.h"

// A file the run will write, checked before any work: a file name (not a folder), in a folder
// that exists and is writable, and not something other than a regular file (which the rename
// that writes it would replace).
void require_writable(const std::string& flag, const std::string& path) {
  if (path.empty()) throw std::runtime_error(flag + " needs a file name, got ''");
  if (path.back() == '/')
    throw std::runtime_error(flag + " " + path + ": names a folder; give a file name");
  const std::string name = path.substr(path.find_last_of('/') + 1);  // npos + 1: all of it
  const char* space = " \t\n\r\f\v";
  if (name.find_first_not_of(space) == std::string::npos)
    throw std::runtime_error(flag + " '" + path + "': the file name is blank");
  if (std::strchr(space, name.front()) || std::strchr(space, name.back()))
    throw std::runtime_error(flag + " '" + path +
                             "': the file name begins or ends with a space (a slip of the "
                             "quotes?); give it without");
  engine::require_regular_or_absent(flag, path);
  const size_t slash = path.find_last_of('/');
  const std::string dir =
      slash == std::string::npos ? "." : path.substr(0, std::max<size_t>(slash, 1));
  if (::access(dir.c_str(), W_OK) != 0)
    throw std::runtime_error(flag + " " + path + ": the folder " + dir +
                             " does not exist or is not writable");
  // The name in full, the temporary one it is written through included, in that folder (too long
  // a name, /proc): before any work, not after an epoch.
  engine::require_can_write(flag, path);
}

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
