// What a path names, for the errors that refuse anything but a regular file: opening a FIFO waits
// for a writer, and a directory or a device holds no data file.
//   file_kind(mode)          "a directory", "a FIFO (named pipe)", … for a stat() mode
//   non_regular_kind(path)   nullptr where path is a regular file (links followed) or absent,
//                            else its file_kind
#pragma once

#include <sys/stat.h>

#include <string>

namespace gemm_mlp {

inline const char* file_kind(mode_t mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISLNK(mode)) return "a symbolic link (name the file it points to)";  // lstat() only
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

inline const char* non_regular_kind(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode)) return nullptr;
  return file_kind(st.st_mode);
}

}  // namespace gemm_mlp
