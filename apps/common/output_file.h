// A file an app will write (train_mlp's --save, --history, --results; gemm_bench's --csv, --json,
// --auto-table), checked before any work. The write itself goes through engine/atomic_file.h, so
// that a failed write (a full disk) leaves the old file whole.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "engine/engine.h"

namespace apps {

// Throws std::runtime_error naming `flag` and `path` unless `path` is a file name (not blank, no
// space at either end, not a folder), in a folder that exists and is writable, and not something
// other than a regular file (which the rename that writes it would replace). The name in full, the
// temporary one it is written through included, is tried in that folder (too long a name, /proc):
// before any work, not after it.
inline void require_writable(const std::string& flag, const std::string& path) {
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
  engine::require_can_write(flag, path);
}

}  // namespace apps
