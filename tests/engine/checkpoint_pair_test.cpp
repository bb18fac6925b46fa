// The training pair (a model file and an optimiser file) whole after a stop or a failure at every
// step of a save, the pair of two runs refused, a stale model file repaired, and one writer per
// path.
#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "checkpoint_fixture.h"
#include "engine/engine.h"
#include "expect_error.h"

namespace {

using engine::Context;
using engine::Device;
using engine::Tensor;

// A 3-4-2 model and its SGD trainer on one fixed batch: every step changes the parameters and the
// momentum.
struct TinyRun {
  explicit TinyRun(uint64_t seed) : ctx(Device::CPU, "cpu", seed) {
    net.add<engine::Linear>(ctx, 3, 4);
    net.add<engine::ReLU>();
    net.add<engine::Linear>(ctx, 4, 2);
    engine::TrainerOptions o;
    o.max_batch = 4;
    o.sgd.lr = 0.1f, o.sgd.momentum = 0.9f, o.sgd.weight_decay = 0.0f;
    trainer = std::make_unique<engine::Trainer>(ctx, net, o);
  }
  void step() { trainer->step(x, y); }
  // A step saved to `path` as run "run-a", then a second step not saved: the parameters and
  // momentum of each.
  std::pair<std::vector<float>, std::vector<float>> save_then_step(const std::string& path) {
    step();
    save(path, "run-a");
    std::vector<float> saved = values();
    step();
    return {std::move(saved), values()};
  }
  std::vector<float> values() { return trainer->optimizer().values().download(); }
  void save(const std::string& path, const std::string& run_id) {
    engine::save_training_checkpoint(ctx, path, net.parameters(), trainer->optimizer(),
                                     {{"run_id", run_id}});
  }
  engine::ResumePoint load(const std::string& path) {
    return engine::load_training_checkpoint(ctx, path, net.parameters(), trainer->optimizer());
  }
  Context ctx;
  engine::Sequential net;
  std::unique_ptr<engine::Trainer> trainer;
  const Tensor x = Tensor::from_host(Device::CPU, 4, 3, {1, 2, 3, -1, 0, 2, 0.5f, -2, 1, 3, 1, -1});
  const engine::LabelTensor y{Device::CPU, {0, 1, 1, 0}};
};

// The temporary files of a save of `path` (its model and optimiser files) left in its folder.
int temporaries(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  const std::string folder = path.substr(0, slash), base = path.substr(slash + 1);
  const std::string state = engine::optimizer_state_path(base);
  int n = 0;
  DIR* dir = ::opendir(folder.c_str());
  while (const dirent* e = ::readdir(dir)) {
    const std::string name = e->d_name;
    n += name.rfind(base + ".tmp.", 0) == 0 || name.rfind(state + ".tmp.", 0) == 0;
  }
  ::closedir(dir);
  return n;
}

// A pair save makes 9 file steps: create, write and flush the model's temporary file, then the
// optimiser's; rename the optimiser file, then the model file; flush the folder.
constexpr int kPairSaveSteps = 9;
constexpr int kRenameOptimizer = 6, kRenameModel = 7;
int hook_calls = 0, hook_at = -1, hook_errno = 0;

// run.save(path, "run-a") in a child that stops (as a kill -9 would) just before file step
// `stop`, or, with stop = kPairSaveSteps, after the last.
void save_stopped_at(TinyRun& run, const std::string& path, int stop) {
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    hook_calls = 0, hook_at = stop;
    engine::testing::set_file_hook([](engine::testing::FileStep, const std::string&) {
      if (hook_calls++ == hook_at) ::_exit(0);
      return 0;
    });
    try {
      run.save(path, "run-a");
    } catch (...) {
      ::_exit(2);
    }
    ::_exit(hook_calls == kPairSaveSteps ? 0 : 3);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

// The process stops (as a kill -9 would) just before file step `stop` of a save, in a child, for
// every step and after the last: the pair then loads as the previous save or the new one, never a
// mix, and says so when the model file is the previous one; the next save removes what the
// stopped one left.
TEST_F(Checkpoint, TrainingPairIsWholeAfterAStopAtEveryStepOfASave) {
  for (int stop = 0; stop <= kPairSaveSteps; ++stop) {
    SCOPED_TRACE("stopped before file step " + std::to_string(stop));
    TinyRun run(1);
    const auto [before, after] = run.save_then_step(path_);
    save_stopped_at(run, path_, stop);
    if (HasFatalFailure()) return;

    const bool state_renamed = stop > kRenameOptimizer, model_renamed = stop > kRenameModel;
    TinyRun resumed(2);  // another initialisation: what it ends with was loaded
    const engine::ResumePoint point = resumed.load(path_);
    EXPECT_EQ(point.metadata.at("step"), state_renamed ? "2" : "1");
    EXPECT_EQ(resumed.values(), state_renamed ? after : before);
    EXPECT_EQ(resumed.trainer->optimizer().read_steps(resumed.ctx), state_renamed ? 2 : 1);
    if (state_renamed && !model_renamed)
      EXPECT_NE(point.note.find("is from another save of this run (step 1)"), std::string::npos)
          << point.note;
    else
      EXPECT_EQ(point.note, "");
    EXPECT_EQ(engine::read_checkpoint_metadata(path_).at("step"), model_renamed ? "2" : "1");
    resumed.save(path_, "run-a");
    EXPECT_EQ(temporaries(path_), 0);
  }
}

// A full disk (or any failure) at each file step: the save throws naming the reason, removes its
// temporary files, and the pair loads as the previous save, or as the new one once the
// optimiser file is in place.
TEST_F(Checkpoint, TrainingPairIsWholeAfterAFailureAtEveryStepOfASave) {
  for (int fail = 0; fail < kPairSaveSteps; ++fail) {
    SCOPED_TRACE("failed at file step " + std::to_string(fail));
    TinyRun run(1);
    const auto [before, after] = run.save_then_step(path_);
    hook_calls = 0, hook_at = fail, hook_errno = fail == kRenameOptimizer ? EXDEV : ENOSPC;
    engine::testing::set_file_hook([](engine::testing::FileStep, const std::string&) {
      return hook_calls++ == hook_at ? hook_errno : 0;
    });
    EXPECT_THROW_WITH(run.save(path_, "run-a"), gemm_mlp::Error, std::strerror(hook_errno));
    engine::testing::set_file_hook(nullptr);
    EXPECT_EQ(temporaries(path_), 0);
    TinyRun resumed(2);
    const bool state_renamed = fail > kRenameOptimizer;
    EXPECT_EQ(resumed.load(path_).metadata.at("step"), state_renamed ? "2" : "1");
    EXPECT_EQ(resumed.values(), state_renamed ? after : before);
  }
}

// The pair's files must come from one run; files without a run's and a save's identity (an
// optimiser file alone, or one written before they were recorded) are not a resume point.
TEST_F(Checkpoint, TrainingPairOfTwoRunsIsRefused) {
  const std::string other = ::testing::TempDir() + "ckpt_other_run.safetensors";
  TinyRun a(1), b(2);
  a.save(path_, "run-a");
  b.save(other, "run-b");
  ASSERT_EQ(std::rename(engine::optimizer_state_path(other).c_str(),
                        engine::optimizer_state_path(path_).c_str()),
            0);
  EXPECT_THROW_WITH(a.load(path_), gemm_mlp::Error,
                    "are from different runs (run_id run-a and run-b)");
  EXPECT_THROW_WITH(engine::read_resume_point(path_), gemm_mlp::Error, "different runs");
  EXPECT_THROW_WITH(engine::repair_model_file(path_), gemm_mlp::Error, "different runs");
  // To use the parameters, the file named is taken: the optimiser file beside it is another run's.
  EXPECT_EQ(engine::find_parameters(path_).path, path_);
  EXPECT_EQ(engine::find_parameters(path_).note, "");
  engine::save_optimizer_state(a.ctx, engine::optimizer_state_path(path_), a.trainer->optimizer());
  EXPECT_THROW_WITH(a.load(path_), gemm_mlp::Error, "no 'run_id' in its metadata");
  EXPECT_THROW_WITH(engine::save_training_checkpoint(a.ctx, path_, a.net.parameters(),
                                                     a.trainer->optimizer(), {}),
                    gemm_mlp::Error, "needs a 'run_id'");
  std::remove(other.c_str());
}

bool file_exists(const std::string& path) { return std::ifstream(path).good(); }

// The first save, stopped between its two renames, leaves the optimiser file alone: it resumes,
// its parameters are the ones used, and repair_model_file writes the model file from it.
TEST_F(Checkpoint, FirstSaveStoppedBetweenRenamesLeavesAResumePoint) {
  TinyRun run(1);
  run.step();
  save_stopped_at(run, path_, kRenameModel);
  ASSERT_FALSE(file_exists(path_));
  const std::string state = engine::optimizer_state_path(path_);
  ASSERT_TRUE(file_exists(state));

  const engine::ResumePoint point = engine::read_resume_point(path_);
  EXPECT_TRUE(point.model_stale);
  EXPECT_NE(point.note.find(path_ +
                            " is missing, as a first save stopped between its two renames "
                            "leaves it; resuming from " +
                            state + " (step 1)"),
            std::string::npos)
      << point.note;
  TinyRun resumed(2);
  EXPECT_EQ(resumed.load(path_).metadata.at("step"), "1");
  EXPECT_EQ(resumed.values(), run.values());

  const engine::ParameterFile file = engine::find_parameters(path_);
  EXPECT_EQ(file.path, state);
  EXPECT_NE(file.note.find(path_ +
                           " is missing (a first save stopped between its two renames "
                           "leaves only the optimiser file); using the parameters in " +
                           state + " (step 1)"),
            std::string::npos)
      << file.note;
  ASSERT_EQ(file.header.tensors.size(), 4u);  // the parameters, not momentum_buffer
  TinyRun fresh(3);
  engine::load_parameters(fresh.ctx, file, fresh.net.parameters());
  EXPECT_EQ(fresh.values(), run.values());

  const std::string note = engine::repair_model_file(path_);
  EXPECT_NE(note.find(path_ + " was missing; rewrote it from the parameters in " + state +
                      " (step 1), so that the pair is one save again"),
            std::string::npos)
      << note;
  EXPECT_EQ(engine::read_checkpoint_metadata(path_).at("save_id"), point.metadata.at("save_id"));
  EXPECT_EQ(engine::read_checkpoint_metadata(path_).count("state_tensors"), 0u);
  TinyRun loaded(4);
  engine::load_checkpoint(loaded.ctx, path_, loaded.net.parameters());
  EXPECT_EQ(loaded.values(), run.values());
  EXPECT_EQ(engine::repair_model_file(path_), "");
  EXPECT_EQ(engine::find_parameters(path_).path, path_);
  EXPECT_FALSE(engine::read_resume_point(path_).model_stale);
  EXPECT_FALSE(file_exists(path_ + ".lock"));
}

// A later save stopped between its two renames leaves a stale model file: the parameters used
// are the optimiser file's (newer), said so, and the repair makes the pair one save again.
TEST_F(Checkpoint, StaleModelFileIsNotUsedAndIsRepaired) {
  TinyRun run(1);
  run.step();
  run.save(path_, "run-a");
  const std::vector<float> before = run.values();
  run.step();
  save_stopped_at(run, path_, kRenameModel);
  const std::string state = engine::optimizer_state_path(path_);
  const engine::ParameterFile file = engine::find_parameters(path_);
  EXPECT_EQ(file.path, state);
  EXPECT_NE(file.note.find(path_ + " is from an earlier save (step 1) than " + state +
                           " (step 2), as a save stopped between its two renames leaves them; "
                           "using the newer parameters in " +
                           state),
            std::string::npos)
      << file.note;
  TinyRun fresh(3);
  engine::load_parameters(fresh.ctx, file, fresh.net.parameters());
  EXPECT_EQ(fresh.values(), run.values());
  EXPECT_NE(fresh.values(), before);
  EXPECT_TRUE(engine::read_resume_point(path_).model_stale);

  const std::string note = engine::repair_model_file(path_);
  EXPECT_NE(note.find(path_ +
                      " was from an earlier save (step 1); rewrote it from the parameters "
                      "in " +
                      state + " (step 2)"),
            std::string::npos)
      << note;
  TinyRun loaded(4);
  const engine::Metadata m = engine::load_checkpoint(loaded.ctx, path_, loaded.net.parameters());
  EXPECT_EQ(loaded.values(), run.values());
  EXPECT_EQ(m.at("step"), "2");
  EXPECT_EQ(engine::read_resume_point(path_).note, "");
  EXPECT_EQ(engine::find_parameters(path_).path, path_);
}

// One writer per path: a second lock, from this process or another, is refused naming the
// holder's pid; a save of another process is refused while it is held; a lock file that a killed
// holder left behind blocks nothing.
TEST_F(Checkpoint, OneWriterPerPath) {
  const std::string lock_file = path_ + ".lock";
  TinyRun run(1);
  {
    engine::CheckpointLock lock(path_);
    EXPECT_EQ(lock.lock_path(), lock_file);
    EXPECT_TRUE(engine::CheckpointLock::held(path_));
    EXPECT_THROW_WITH(engine::CheckpointLock again(path_), gemm_mlp::Error,
                      "this process holds its lock " + lock_file + " already");
    run.save(path_, "run-a");  // its holder saves
    for (int save = 0; save < 2; ++save) {
      int fds[2];
      ASSERT_EQ(::pipe(fds), 0);
      std::fflush(nullptr);
      const pid_t pid = ::fork();
      ASSERT_GE(pid, 0);
      if (pid == 0) {
        ::close(fds[0]);
        try {
          if (save)
            run.save(path_, "run-b");
          else
            engine::CheckpointLock other(path_);
        } catch (const std::exception& e) {
          const ssize_t n = ::write(fds[1], e.what(), std::strlen(e.what()));
          ::_exit(n > 0 ? 1 : 2);
        }
        ::_exit(0);
      }
      ::close(fds[1]);
      std::string message;
      char buf[512];
      for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) message.append(buf, n);
      ::close(fds[0]);
      int status = 0;
      ::waitpid(pid, &status, 0);
      EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1) << status;
      EXPECT_NE(message.find("checkpoint " + path_ + " is being written by another run (pid " +
                             std::to_string(::getpid()) + ", which holds " + lock_file +
                             "); two runs saving to one path would overwrite each other's "
                             "saves: wait for that run to end, or save to another path"),
                std::string::npos)
          << message;
    }
  }
  EXPECT_FALSE(engine::CheckpointLock::held(path_));
  EXPECT_FALSE(file_exists(lock_file));  // removed on release
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    new engine::CheckpointLock(path_);  // never released: the process ends holding it
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_TRUE(file_exists(lock_file));
  EXPECT_NO_THROW(engine::CheckpointLock after(path_));
  run.save(path_, "run-a");
}

}  // namespace
