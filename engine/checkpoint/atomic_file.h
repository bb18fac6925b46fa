// Files replaced whole. A new version is written beside the old one under a temporary name of its
// own (PATH.tmp.<pid>.<n>, created exclusively, so two writers of one path never share one),
// flushed to disk (fsync), and renamed over the old one; then the folder is flushed, so that the
// rename itself survives a power cut. A reader sees the old version or the new one, never a mix.
// A target that exists and is not a regular file (a device node, a FIFO, a directory, a symbolic
// link) is refused, before anything is written: the rename would replace it.
//
// Temporary files that a killed writer left behind (their process is gone) are removed by the
// next write of the same path.
#pragma once

#include <string>

namespace engine {

// A new version of `path`, written to a temporary file and flushed to disk; commit() puts it in
// place. Destroyed uncommitted (an error, or a second file of a pair failing), it removes its
// temporary file. Errors are gemm_mlp::Error naming `label path`, the step and the system's reason
// (e.g. "No space left on device"), and leave `path` as it was.
class StagedFile {
 public:
  StagedFile(const std::string& label, const std::string& path, const std::string& bytes);
  ~StagedFile();
  StagedFile(const StagedFile&) = delete;
  StagedFile& operator=(const StagedFile&) = delete;

  void commit();  // renames the temporary file over the path (once)
  const std::string& temporary() const { return tmp_; }

 private:
  std::string label_, path_, tmp_;
  bool committed_ = false;
};

// Flushes the folder that holds `path` (the renames just made in it). Throws gemm_mlp::Error.
void sync_folder(const std::string& label, const std::string& path);

// Writes `path` whole: StagedFile, commit, sync_folder.
void replace_file(const std::string& label, const std::string& path, const std::string& bytes);

// Throws gemm_mlp::Error when `path` exists and is not a regular file (naming what it is), or is
// a symbolic link. `label` starts the message (e.g. "--save").
void require_regular_or_absent(const std::string& label, const std::string& path);

// Before any work: throws gemm_mlp::Error when `path` could not be written as StagedFile writes
// it. Beside require_regular_or_absent, and an existing file that is immutable or append-only
// (chattr +i, +a: the rename would fail), it creates the longest temporary name a write of `path`
// can use (PATH.tmp.<pid>.99) in its folder, exclusively, and removes it at once: a name too long
// for the file system, a folder that is missing, not writable or not a real one (/proc, /sys)
// fail here, with the system's reason, and not after an epoch has trained. `label` starts the
// message (e.g. "--save").
void require_can_write(const std::string& label, const std::string& path);

namespace testing {

// Fault injection, for tests only: a hook called before each step of every StagedFile and
// sync_folder, with the step and the file it acts on. A non-zero return makes that step fail as
// if the system had returned that errno (e.g. ENOSPC); a hook may also end the process there, as
// a kill -9 at that instant would.
enum class FileStep { Create, Write, Sync, Rename, SyncFolder };
using FileHook = int (*)(FileStep step, const std::string& path);
void set_file_hook(FileHook hook);  // nullptr: none (the default)

}  // namespace testing

}  // namespace engine
