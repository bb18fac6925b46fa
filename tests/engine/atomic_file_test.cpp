// Files replaced whole (engine/checkpoint/atomic_file.h): the old version stays when a write fails
// (a full disk), targets that are not regular files are refused untouched, two writers of one path
// both succeed, and what a killed writer left is cleaned up.
#include "engine/checkpoint/atomic_file.h"

#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

#include "base/cuda_check.h"  // gemm_mlp::Error
#include "expect_error.h"

namespace {

class AtomicFile : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = ::testing::TempDir() + "atomic_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::system(("rm -rf '" + path_ + "'").c_str());
  }
  void TearDown() override {
    engine::testing::set_file_hook(nullptr);
    std::system(("rm -rf '" + path_ + "'*").c_str());
  }
  std::string contents() const {
    std::ifstream f(path_, std::ios::binary);
    return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
  }
  // The files beside path_ whose name starts with its own.
  int files_beside() const {
    const size_t slash = path_.find_last_of('/');
    const std::string dir = path_.substr(0, slash), prefix = path_.substr(slash + 1);
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) return -1;
    int n = 0;
    while (const dirent* e = ::readdir(d)) n += std::string(e->d_name).rfind(prefix, 0) == 0;
    ::closedir(d);
    return n;
  }
  std::string path_;
};

TEST_F(AtomicFile, AFailedWriteLeavesTheOldVersionAndNoTemporaryFile) {
  engine::replace_file("--history", path_, "old");
  for (engine::testing::FileStep at :
       {engine::testing::FileStep::Create, engine::testing::FileStep::Write,
        engine::testing::FileStep::Sync, engine::testing::FileStep::Rename}) {
    static engine::testing::FileStep fail_at;
    fail_at = at;
    engine::testing::set_file_hook([](engine::testing::FileStep step, const std::string&) {
      return step == fail_at ? ENOSPC : 0;
    });
    EXPECT_THROW_WITH(engine::replace_file("--history", path_, "new"), gemm_mlp::Error,
                      "--history " + path_ + ": ");
    EXPECT_THROW_WITH(engine::replace_file("--history", path_, "new"), gemm_mlp::Error,
                      "No space left on device");
    EXPECT_EQ(contents(), "old");
    EXPECT_EQ(files_beside(), 1);
  }
  engine::testing::set_file_hook(nullptr);
  engine::replace_file("--history", path_, "new");
  EXPECT_EQ(contents(), "new");
  EXPECT_EQ(files_beside(), 1);
}

// A directory, a FIFO, a symbolic link (even to a regular file) and, where the test may make one
// (as root), a copy of /dev/null: each refused, before anything is written, and left as it was.
TEST_F(AtomicFile, RefusesATargetThatIsNotARegularFile) {
  ASSERT_EQ(::mkdir(path_.c_str(), 0755), 0);
  EXPECT_THROW_WITH(engine::replace_file("--save", path_, "x"), gemm_mlp::Error,
                    "--save " + path_ + ": exists and is a directory, not a regular file");
  ASSERT_EQ(::rmdir(path_.c_str()), 0);
  ASSERT_EQ(::mkfifo(path_.c_str(), 0644), 0);
  EXPECT_THROW_WITH(engine::replace_file("--save", path_, "x"), gemm_mlp::Error,
                    "exists and is a FIFO (named pipe), not a regular file; refusing");
  ASSERT_EQ(std::remove(path_.c_str()), 0);
  const std::string target = path_ + ".target";
  std::ofstream(target) << "kept";
  ASSERT_EQ(::symlink(target.c_str(), path_.c_str()), 0);
  EXPECT_THROW_WITH(engine::replace_file("--save", path_, "x"), gemm_mlp::Error,
                    "is a symbolic link");
  struct stat st {};
  ASSERT_EQ(::lstat(path_.c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  EXPECT_EQ(contents(), "kept");
  ASSERT_EQ(std::remove(path_.c_str()), 0);
  if (::mknod(path_.c_str(), S_IFCHR | 0666, ::makedev(1, 3)) == 0) {  // root only
    EXPECT_THROW_WITH(engine::replace_file("--save", path_, "x"), gemm_mlp::Error,
                      "exists and is a character device");
    ASSERT_EQ(::lstat(path_.c_str(), &st), 0);
    EXPECT_TRUE(S_ISCHR(st.st_mode));
  }
  EXPECT_EQ(files_beside(), ::lstat(path_.c_str(), &st) == 0 ? 2 : 1);  // no temporary file
  EXPECT_THROW_WITH(engine::replace_file("--save", path_ + "/", "x"), gemm_mlp::Error,
                    "not a file name");
}

// Two writers of one path at once: each write succeeds (no shared temporary name), and the file
// is always one of them whole.
TEST_F(AtomicFile, TwoWritersOfOnePathBothSucceed) {
  const std::string a(4096, 'a'), b(8192, 'b');
  auto writer = [&](const std::string& bytes, int& failures) {
    for (int i = 0; i < 50; ++i) try {
        engine::replace_file("--save", path_, bytes);
      } catch (const gemm_mlp::Error&) {
        ++failures;
      }
  };
  int failures_a = 0, failures_b = 0;
  std::thread ta(writer, std::cref(a), std::ref(failures_a));
  std::thread tb(writer, std::cref(b), std::ref(failures_b));
  ta.join();
  tb.join();
  EXPECT_EQ(failures_a + failures_b, 0);
  const std::string last = contents();
  EXPECT_TRUE(last == a || last == b);
  EXPECT_EQ(files_beside(), 1);
}

// A temporary file of a writer whose process is gone is removed by the next write; one of a live
// process (this one) is left alone.
TEST_F(AtomicFile, TemporaryFilesOfKilledWritersAreRemoved) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) ::_exit(0);
  ASSERT_EQ(::waitpid(child, nullptr, 0), child);  // a pid whose process is gone
  const std::string stale = path_ + ".tmp." + std::to_string(child) + ".0";
  const std::string live = path_ + ".tmp." + std::to_string(::getpid()) + ".999999";
  std::ofstream(stale) << "left by a killed save";
  std::ofstream(live) << "being written";
  engine::replace_file("--save", path_, "new");
  EXPECT_FALSE(std::ifstream(stale).good());
  EXPECT_TRUE(std::ifstream(live).good());
  EXPECT_EQ(contents(), "new");
}

}  // namespace

namespace {

// require_can_write, before any work: a name that fits but whose temporary name does not, and a
// folder that is not a real one, fail with the system's reason; a good name leaves nothing behind.
TEST_F(AtomicFile, RequireCanWriteChecksTheTemporaryNameToo) {
  const std::string folder = path_.substr(0, path_.find_last_of('/') + 1);
  const std::string fits(250, 'n');  // NAME_MAX is 255; "….tmp.<pid>.99" is longer
  EXPECT_THROW_WITH(engine::require_can_write("--save", folder + fits), gemm_mlp::Error,
                    "the name is too long for the file system (with the suffix of the temporary");
  EXPECT_THROW_WITH(engine::require_can_write("--history", "/proc/self/h.csv"), gemm_mlp::Error,
                    "--history /proc/self/h.csv: cannot be written");
  EXPECT_THROW_WITH(engine::require_can_write("--save", path_ + "/missing/m.safetensors"),
                    gemm_mlp::Error, "No such file or directory");
  engine::require_can_write("--save", path_);
  EXPECT_EQ(files_beside(), 0);
}

}  // namespace
