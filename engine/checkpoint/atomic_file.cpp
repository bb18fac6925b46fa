#include "engine/checkpoint/atomic_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/fs.h>  // FS_IOC_GETFLAGS: chattr's flags
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <string>

#include "base/file_kind.h"
#include "engine/runtime/tensor.h"  // gemm_mlp::Error

namespace engine {

namespace {

std::atomic<testing::FileHook> file_hook{nullptr};

// The injected errno for this step, or 0.
int injected(testing::FileStep step, const std::string& path) {
  const testing::FileHook hook = file_hook.load();
  return hook ? hook(step, path) : 0;
}

std::string folder_of(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// Removes PATH.tmp.<pid>.<n> files whose process is gone (a writer killed mid-save).
void remove_stale_temporaries(const std::string& path) {
  const std::string folder = folder_of(path);
  const size_t slash = path.find_last_of('/');
  const std::string prefix = (slash == std::string::npos ? path : path.substr(slash + 1)) + ".tmp.";
  DIR* dir = ::opendir(folder.c_str());
  if (dir == nullptr) return;  // creating the new file reports what is wrong with the folder
  while (const dirent* e = ::readdir(dir)) {
    const std::string name = e->d_name;
    if (name.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string rest = name.substr(prefix.size());
    const size_t dot = rest.find('.');
    if (dot == 0 || dot == std::string::npos ||
        rest.find_first_not_of("0123456789") != dot)  // not one of ours
      continue;
    const long pid = std::strtol(rest.substr(0, dot).c_str(), nullptr, 10);
    if (pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)
      ::unlink((folder + "/" + name).c_str());
  }
  ::closedir(dir);
}

}  // namespace

void require_regular_or_absent(const std::string& label, const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return;  // absent (or unreadable: creating it will say)
  if (!S_ISREG(st.st_mode))
    throw Error(label + " " + path + ": exists and is " + gemm_mlp::file_kind(st.st_mode) +
                ", not a regular file; refusing to replace it");
}

void require_can_write(const std::string& label, const std::string& path) {
  const std::string what = label + " " + path;
  if (path.empty() || path.back() == '/') throw Error(what + ": not a file name");
  require_regular_or_absent(label, path);
  // An immutable or append-only file (chattr +i, +a) is no file a rename may replace.
  const int existing = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
  if (existing >= 0) {
    int flags = 0;
    const bool got = ::ioctl(existing, FS_IOC_GETFLAGS, &flags) == 0;
    ::close(existing);
    if (got && (flags & (FS_IMMUTABLE_FL | FS_APPEND_FL)))
      throw Error(what + ": exists and is " +
                  (flags & FS_IMMUTABLE_FL ? "immutable (chattr +i)" : "append-only (chattr +a)") +
                  ": it cannot be replaced; clear that (chattr -i / -a) or write another file");
  }
  const std::string probe = path + ".tmp." + std::to_string(::getpid()) + ".99";
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    const int err = errno;
    if (err == ENAMETOOLONG)
      throw Error(what +
                  ": the name is too long for the file system (with the suffix of the "
                  "temporary file it is written through, " +
                  probe.substr(path.size()) + "): " + std::strerror(err));
    throw Error(what + ": cannot be written (a test file in " + folder_of(path) +
                " could not be created: " + std::strerror(err) + ")");
  }
  ::close(fd);
  ::unlink(probe.c_str());
}

StagedFile::StagedFile(const std::string& label, const std::string& path, const std::string& bytes)
    : label_(label), path_(path) {
  const std::string what = label_ + " " + path_;
  if (path.empty() || path.back() == '/')
    throw Error(what + ": not a file name; nothing was written");
  require_regular_or_absent(label_, path_);
  remove_stale_temporaries(path_);
  static std::atomic<unsigned> counter{0};
  int fd = -1;
  int err = injected(testing::FileStep::Create, path_);
  for (int attempt = 0; attempt < 100 && err == 0; ++attempt) {
    tmp_ = path_ + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
    fd = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0) break;
    err = errno == EEXIST ? 0 : errno;  // a stale name of a reused pid: take the next
  }
  if (fd < 0) {
    tmp_.clear();
    throw Error(what + ": cannot create a temporary file in " + folder_of(path_) + ": " +
                std::strerror(err ? err : EEXIST) + "; nothing was written");
  }
  size_t done = 0;
  err = injected(testing::FileStep::Write, tmp_);
  while (err == 0 && done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      err = n < 0 ? errno : EIO;
    else
      done += static_cast<size_t>(n);
  }
  if (err == 0) err = injected(testing::FileStep::Sync, tmp_);
  if (err == 0 && ::fsync(fd) != 0) err = errno;
  if (::close(fd) != 0 && err == 0) err = errno;  // e.g. a network file system's late ENOSPC
  if (err != 0) {
    ::unlink(tmp_.c_str());
    tmp_.clear();
    throw Error(what + ": writing it failed: " + std::strerror(err) + "; " + path_ +
                " is unchanged");
  }
}

StagedFile::~StagedFile() {
  if (!committed_ && !tmp_.empty()) ::unlink(tmp_.c_str());
}

void StagedFile::commit() {
  if (committed_) return;
  const std::string what = label_ + " " + path_;
  require_regular_or_absent(label_, path_);  // it may have changed since the file was staged
  int err = injected(testing::FileStep::Rename, path_);
  if (err == 0 && ::rename(tmp_.c_str(), path_.c_str()) != 0) err = errno;
  if (err != 0)
    throw Error(what + ": cannot rename " + tmp_ + " to it: " + std::strerror(err) + "; " + path_ +
                " is unchanged");
  committed_ = true;
}

void sync_folder(const std::string& label, const std::string& path) {
  const std::string folder = folder_of(path);
  int err = injected(testing::FileStep::SyncFolder, folder);
  if (err == 0) {
    const int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
      err = errno;
    } else {
      if (::fsync(fd) != 0) err = errno;
      ::close(fd);
    }
  }
  if (err != 0)
    throw Error(label + " " + path + ": written, but flushing its folder " + folder +
                " failed: " + std::strerror(err));
}

void replace_file(const std::string& label, const std::string& path, const std::string& bytes) {
  StagedFile file(label, path, bytes);
  file.commit();
  sync_folder(label, path);
}

namespace testing {
void set_file_hook(FileHook hook) { file_hook.store(hook); }
}  // namespace testing

}  // namespace engine
