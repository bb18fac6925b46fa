// CheckpointLock (checkpoint.h): one writer per checkpoint path, by flock(2) on a lock file beside
// it that holds the holder's pid.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "engine/checkpoint/checkpoint.h"

namespace engine {

namespace {

std::mutex held_mutex;
// The lock files held, and by which process: a child made by fork() inherits the set, not the
// locks' ownership (its own open of the file conflicts with its parent's).
std::map<std::pair<dev_t, ino_t>, pid_t> held_locks;

bool held_here(dev_t dev, ino_t ino) {
  const auto it = held_locks.find({dev, ino});
  return it != held_locks.end() && it->second == ::getpid();
}

}  // namespace

CheckpointLock::CheckpointLock(const std::string& path) : path_(path), lock_path_(path + ".lock") {
  if (path.empty()) throw Error("checkpoint: an empty path");
  const std::string what = "checkpoint " + path;
  for (int attempt = 0; attempt < 100; ++attempt) {
    fd_ = ::open(lock_path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0)
      throw Error(what + ": cannot create its lock file " + lock_path_ + ": " +
                  std::strerror(errno) +
                  " (a run that saves there needs to create files beside it)");
    struct stat st {};
    if (::fstat(fd_, &st) != 0) {
      const int e = errno;
      ::close(fd_);
      throw Error(what + ": cannot stat its lock file " + lock_path_ + ": " + std::strerror(e));
    }
    {
      const std::lock_guard<std::mutex> guard(held_mutex);
      if (held_here(st.st_dev, st.st_ino)) {
        ::close(fd_);
        throw Error(what + ": this process holds its lock " + lock_path_ +
                    " already (two writers of one path in one program)");
      }
    }
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      const int e = errno;
      char text[32] = {0};
      const ssize_t n = ::pread(fd_, text, sizeof text - 1, 0);
      ::close(fd_);
      if (e != EWOULDBLOCK)
        throw Error(what + ": cannot lock " + lock_path_ + ": " + std::strerror(e));
      std::string pid = n > 0 ? std::string(text, static_cast<size_t>(n)) : "";
      pid = pid.substr(0, pid.find_first_not_of("0123456789"));
      throw Error(what + " is being written by another run (" +
                  (pid.empty() ? std::string("pid unknown") : "pid " + pid) + ", which holds " +
                  lock_path_ +
                  "); two runs saving to one path would overwrite each other's saves: wait for "
                  "that run to end, or save to another path");
    }
    // A holder that released it removed the file: locked, but no longer the path's. Try again.
    struct stat now {};
    if (::stat(lock_path_.c_str(), &now) != 0 || now.st_dev != st.st_dev ||
        now.st_ino != st.st_ino) {
      ::close(fd_);
      continue;
    }
    const std::string pid = std::to_string(::getpid()) + "\n";
    if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, pid.data(), pid.size(), 0) < 0) {
      // The lock holds without the pid; a second run's message then says "pid unknown".
    }
    const std::lock_guard<std::mutex> guard(held_mutex);
    held_locks[{st.st_dev, st.st_ino}] = ::getpid();
    return;
  }
  throw Error(what + ": cannot take its lock " + lock_path_ +
              ": the file keeps being replaced; try again");
}

CheckpointLock::~CheckpointLock() {
  bool mine = false;  // not in a child made by fork(), whose copy this may be
  struct stat st {};
  if (::fstat(fd_, &st) == 0) {
    const std::lock_guard<std::mutex> guard(held_mutex);
    mine = held_here(st.st_dev, st.st_ino);
    if (mine) held_locks.erase({st.st_dev, st.st_ino});
  }
  if (mine) ::unlink(lock_path_.c_str());  // while locked: a waiter then sees a new file (above)
  ::close(fd_);
}

bool CheckpointLock::held(const std::string& path) {
  struct stat st {};
  if (::stat((path + ".lock").c_str(), &st) != 0) return false;
  const std::lock_guard<std::mutex> guard(held_mutex);
  return held_here(st.st_dev, st.st_ino);
}

}  // namespace engine
