// train_mlp's checkpoints and --resume, on a tiny dataset on the CPU (no MNIST needed): saving,
// resuming exactly, a stop by signal or kill -9 at any moment, and the files a crash leaves.
#include <gtest/gtest.h>
#include <sys/ioctl.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "app_files.h"
#include "gpu_test.h"

namespace {

using namespace app_test;

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream f(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(f, line);) lines.push_back(line);
  return lines;
}

// Files in the folder of `path` whose name starts with its name and ".tmp".
int temporaries_of(const std::string& path) {
  const Result r = run("ls -d '" + path + "'.tmp* '" + engine::optimizer_state_path(path) +
                       "'.tmp* 2>/dev/null | wc -l");
  return std::stoi(r.output);
}

// Whether the process sleeps in a pipe write, as /proc/PID/wchan names it (anon_pipe_write,
// pipe_write or pipe_wait, by kernel); true where the kernel does not say (empty or "0").
bool sleeps_in_pipe(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/wchan");
  std::string where;
  std::getline(f, where);
  return where.empty() || where == "0" || where.find("pipe") != std::string::npos;
}

// Waits until the child, which the test does not read yet, blocks on its full output pipe: its
// output stops growing while it still runs, asleep in a pipe write (on a loaded machine a child
// that is merely descheduled also stops growing). False if it never does (within a minute).
bool wait_until_blocked(const Child& c) {
  int pending = -1, unchanged = 0;
  for (int i = 0; i < 30000 && unchanged < 100; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    int now = 0;
    if (::ioctl(c.out, FIONREAD, &now) != 0 || ::waitpid(c.pid, nullptr, WNOHANG) != 0)
      return false;
    unchanged = now > 0 && now == pending && sleeps_in_pipe(c.pid) ? unchanged + 1 : 0;
    pending = now;
  }
  return unchanged >= 100;
}

// Every tensor of a checkpoint, for a bit-for-bit comparison.
std::vector<engine::safetensors::Entry> tensors_of(const std::string& path) {
  return engine::safetensors::read(path).tensors;
}

bool same_tensors(const std::string& a, const std::string& b) {
  const auto ta = tensors_of(a), tb = tensors_of(b);
  if (ta.size() != tb.size()) return false;
  for (size_t i = 0; i < ta.size(); ++i)
    if (ta[i].name != tb[i].name || ta[i].shape != tb[i].shape || ta[i].values != tb[i].values)
      return false;
  return true;
}

// SIGTERM or SIGINT: the run finishes its step, saves, prints the command that resumes it and
// exits 143 or 130; that command ends the run with the same parameters, bit for bit, as a run
// never stopped (cosine schedule). The child's output pipe is kept full so that it blocks within
// an epoch, where the signal then reaches it: a stop in mid-epoch, at the same step every time.
void stop_by_signal_and_resume(const std::string& device_flags, bool cpu) {
  // 96 steps an epoch, a line each: more than a full pipe, so that the run blocks in mid-epoch.
  const std::string dir = write_tiny_dataset(4, 384);
  const std::string straight = test_file("_straight.safetensors");
  const std::string common = kTrain + device_flags + " --hidden 8 --batch 4 --data-dir " + dir +
                             " --epochs 4 --log-interval 1";
  const Result s = run(common + " --save " + straight);
  ASSERT_EQ(s.status, 0) << s.output;
  for (int sig : {SIGTERM, SIGINT}) {
    SCOPED_TRACE(sig == SIGTERM ? "SIGTERM" : "SIGINT");
    const std::string ckpt = test_file(std::to_string(sig) + ".safetensors");
    const std::string history = test_file(std::to_string(sig) + "_history.csv");
    std::remove(ckpt.c_str());
    const Child child = spawn(common + " --save " + ckpt + " --history " + history, 8192);
    ASSERT_GT(child.pid, 0);
    ASSERT_TRUE(wait_until_blocked(child)) << "the run did not block on its full output pipe";
    ::kill(child.pid, sig);
    const Result stopped = finish(child);
    ASSERT_EQ(stopped.status, 128 + sig) << stopped.output;
    const size_t at = stopped.output.find("stopped by ");
    ASSERT_NE(at, std::string::npos) << stopped.output;
    // Where the pipe fills depends on the output's bytes, the same in every CPU run: in mid-epoch.
    if (cpu) {
      EXPECT_EQ(stopped.output.find(" after 0 of epoch "), std::string::npos) << stopped.output;
      EXPECT_NE(stopped.output.find("'s 96 steps; saved " + ckpt + " and "), std::string::npos)
          << stopped.output;
    }
    const size_t command = stopped.output.find("resume with: ");
    ASSERT_NE(command, std::string::npos) << stopped.output;
    const std::string line =
        stopped.output.substr(command + 13, stopped.output.find('\n', command) - command - 13);
    EXPECT_NE(line.find("--resume " + ckpt + " "), std::string::npos) << line;
    const Result resumed = run(line);
    ASSERT_EQ(resumed.status, 0) << line << "\n" << resumed.output;
    if (cpu) {
      EXPECT_NE(resumed.output.find(" of epoch "), std::string::npos) << resumed.output;
    }
    EXPECT_TRUE(same_tensors(ckpt, straight));
    EXPECT_TRUE(
        same_tensors(engine::optimizer_state_path(ckpt), engine::optimizer_state_path(straight)));
    EXPECT_EQ(lines_of(history).size(), 5u);  // every epoch, the stopped one once
  }
  // Without --save: the same stop, saying that nothing was saved.
  const Child child = spawn(common, 8192);
  ASSERT_TRUE(wait_until_blocked(child));
  ::kill(child.pid, SIGTERM);
  const Result stopped = finish(child);
  EXPECT_EQ(stopped.status, 143) << stopped.output;
  EXPECT_NE(stopped.output.find("nothing saved (no --save)"), std::string::npos) << stopped.output;
}

// --resume keeps writing its checkpoint, and --history keeps the earlier epochs' rows; resuming a
// finished run trains nothing and writes nothing; a shorter --epochs, or another run's history,
// is an error before any work.
TEST(TrainMlp, ResumeKeepsSavingAndKeepsOneHistory) {
  const std::string dir = write_tiny_dataset(4, 24);
  const std::string ckpt = test_file(".safetensors"), history = test_file("_history.csv");
  std::remove(history.c_str());
  const std::string resume = kTrain + " --device cpu --data-dir " + dir + " --resume " + ckpt;
  Result r = run(tiny_train(dir) + " --epochs 2 --save " + ckpt + " --history " + history);
  ASSERT_EQ(r.status, 0) << r.output;
  r = run(resume + " --epochs 4 --history " + history);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("resumed from " + engine::optimizer_state_path(ckpt) + " (save "),
            std::string::npos)
      << r.output;
  const engine::Metadata m = engine::read_checkpoint_metadata(ckpt);
  EXPECT_EQ(m.at("epoch"), "4");  // saved by the resumed run
  EXPECT_EQ(m.at("epochs"), "4");
  const std::vector<std::string> rows = lines_of(history);
  ASSERT_EQ(rows.size(), 5u) << file_bytes(history);
  EXPECT_EQ(rows[0], "epoch,loss,train_acc,test_acc,lr,epoch_s,gemm_s,run_id");
  for (int e = 1; e <= 4; ++e) {
    EXPECT_EQ(rows[e].substr(0, 2), std::to_string(e) + ",") << rows[e];
    EXPECT_EQ(rows[e].substr(rows[e].rfind(',') + 1), m.at("run_id")) << rows[e];
  }

  const std::string model = file_bytes(ckpt),
                    state = file_bytes(engine::optimizer_state_path(ckpt));
  for (const std::string& again : {resume, resume + " --epochs 4"}) {
    r = run(again + " --history " + history);
    EXPECT_EQ(r.status, 0) << r.output;
    EXPECT_NE(
        r.output.find("nothing to train: " + ckpt + " was saved after epoch 4, and --epochs is 4"),
        std::string::npos)
        << r.output;
    EXPECT_EQ(r.output.find("nan"), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("GEMM time"), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("saved " + ckpt + " ("), std::string::npos) << r.output;
  }
  EXPECT_FAILS_WITH(resume + " --epochs 3", "--epochs 3 is below the 4 epochs");
  EXPECT_EQ(file_bytes(ckpt), model);
  EXPECT_EQ(file_bytes(engine::optimizer_state_path(ckpt)), state);
  EXPECT_EQ(lines_of(history).size(), 5u);

  const std::string other = test_file("_other.csv");
  ASSERT_EQ(run(tiny_train(dir) + " --epochs 1 --history " + other).status, 0);
  EXPECT_FAILS_WITH(resume + " --epochs 5 --history " + other, "its rows are from another run");
  EXPECT_EQ(file_bytes(ckpt), model);

  // A row the checkpoint does not hold (a run killed between writing its history and saving) is
  // dropped, saying so.
  std::ofstream(history, std::ios::app) << "5,9,0,0,0,0,0," << m.at("run_id") << "\n";
  r = run(resume + " --epochs 5 --history " + history);
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("dropping the rows of epochs 5 to 5, which " + ckpt + " does not hold"),
            std::string::npos)
      << r.output;
  const std::vector<std::string> after = lines_of(history);
  ASSERT_EQ(after.size(), 6u);
  EXPECT_EQ(after[5].substr(0, 2), "5,");
  EXPECT_NE(after[5].substr(0, 4), "5,9,");
}

// Both files of a checkpoint name the run; --train-limit and the GEMM variant are recorded and
// adopted like the other settings.
TEST(TrainMlp, ResumeChecksTheRunAndAdoptsItsSettings) {
  const std::string dir = write_tiny_dataset(4, 24);
  const std::string a = test_file("_a.safetensors"), b = test_file("_b.safetensors");
  ASSERT_EQ(run(tiny_train(dir) + " --epochs 1 --train-limit 16 --save " + a).status, 0);
  const engine::Metadata m = engine::read_checkpoint_metadata(a);
  EXPECT_EQ(m.at("train_limit"), "16");
  EXPECT_EQ(m.at("variant"), "cpu");
  EXPECT_EQ(m.at("run_id"),
            engine::read_checkpoint_metadata(engine::optimizer_state_path(a)).at("run_id"));
  const std::string resume = kTrain + " --device cpu --data-dir " + dir + " --resume ";
  EXPECT_FAILS_WITH(resume + a + " --epochs 2 --train-limit 12",
                    "the checkpoint has train_limit 16, which --train-limit contradicts");
  EXPECT_FAILS_WITH(resume + a + " --epochs 2 --gemm naive",  // may differ: taken, then checked
                    "--gemm naive runs on the GPU, but training runs on the CPU");
  Result r = run(resume + a + " --epochs 2");  // 16 examples: 4 steps an epoch, as saved
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("16 training examples"), std::string::npos) << r.output;
  write_tiny_dataset(4, 12);  // the same folder, fewer examples than the run had
  EXPECT_FAILS_WITH(resume + a + " --epochs 3",
                    "the run trained on 16 examples an epoch; the data here (" + dir +
                        ", --train-limit 16) has 12");

  ASSERT_EQ(run(tiny_train(dir) + " --epochs 1 --seed 2 --train-limit 16 --save " + b).status, 0);
  ASSERT_EQ(
      std::rename(engine::optimizer_state_path(b).c_str(), engine::optimizer_state_path(a).c_str()),
      0);
  EXPECT_FAILS_WITH(resume + a + " --epochs 3", "are from different runs");
}

TEST(TrainMlp, StopBySignalSavesAndResumesExactly) {
  stop_by_signal_and_resume(" --device cpu", true);
}

// The same on the GPU, where a resumed step gathers its batch from the step counter on the device
// and the step is replayed as a CUDA graph.
TEST(TrainMlp, StopBySignalSavesAndResumesExactlyOnTheGpu) {
  GPU_TEST_OR_SKIP();
  stop_by_signal_and_resume(" --device cuda --gemm vec", false);
}

// kill -9 at moments spread over a run whose time goes mostly to saving (one step an epoch): each
// time, the checkpoint left is a pair that resumes, and the run carries on to the end with one
// history.
TEST(TrainMlp, KillDuringSavesLeavesAPairThatResumes) {
  const std::string dir = write_tiny_dataset(4, 4);
  const std::string ckpt = test_file(".safetensors"), history = test_file("_history.csv");
  std::remove(ckpt.c_str());
  std::remove(engine::optimizer_state_path(ckpt).c_str());
  const std::string resume =
      kTrain + " --device cpu --data-dir " + dir + " --resume " + ckpt + " --history " + history;
  int checked = 0;  // kills that found a checkpoint to resume (a kill may come before the first)
  for (int i = 0; i < 40 && checked < 6; ++i) {
    const bool exists = std::ifstream(ckpt).good();
    const Child child = spawn(exists ? resume
                                     : tiny_train(dir) + " --epochs 100000 --save " + ckpt +
                                           " --history " + history);
    // The first run's kill waits for its first save: on a loaded machine, starting and loading
    // can outlast every delay below, and then no kill would find a checkpoint.
    for (int waited = 0; !exists && !std::ifstream(ckpt).good() && waited < 60000; waited += 10)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    std::this_thread::sleep_for(std::chrono::milliseconds(150 + 37 * (i % 8)));
    ::kill(child.pid, SIGKILL);
    finish(child);
    if (!std::ifstream(ckpt).good()) continue;
    EXPECT_NO_THROW(engine::read_resume_point(ckpt));
    ++checked;
  }
  EXPECT_EQ(checked, 6);
  ASSERT_TRUE(std::ifstream(ckpt).good());
  const int saved = std::stoi(engine::read_resume_point(ckpt).metadata.at("epoch"));
  const Result r = run(resume + " --epochs " + std::to_string(saved + 2));
  ASSERT_EQ(r.status, 0) << r.output;
  const std::vector<std::string> rows = lines_of(history);
  ASSERT_EQ(rows.size(), static_cast<size_t>(saved + 3));
  EXPECT_EQ(rows.back().substr(0, rows.back().find(',')), std::to_string(saved + 2));
  EXPECT_EQ(temporaries_of(ckpt), 0);  // what the killed saves left is gone
}

// Two runs saving to one path: the second is refused before it trains, naming the path and the
// first's pid; once the first is gone (killed: its lock file is left behind), a run saves there.
TEST(TrainMlp, ASecondRunSavingToOnePathIsRefused) {
  const std::string dir = write_tiny_dataset(4, 8);
  const std::string ckpt = test_file(".safetensors"), lock = ckpt + ".lock";
  std::remove(ckpt.c_str());
  std::remove(lock.c_str());
  const Child first = spawn(tiny_train(dir) + " --epochs 100000 --save " + ckpt);
  ASSERT_GT(first.pid, 0);
  for (int i = 0; i < 3000 && !std::ifstream(ckpt).good(); ++i)  // saving: it holds the lock
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_TRUE(std::ifstream(lock).good());
  const Result second = run(tiny_train(dir) + " --epochs 1 --seed 2 --save " + ckpt);
  EXPECT_EQ(second.status, 1) << second.output;
  EXPECT_NE(second.output.find("train_mlp: error: checkpoint " + ckpt +
                               " is being written by another run (pid " +
                               std::to_string(first.pid) + ", which holds " + lock +
                               "); two runs saving to one path would overwrite each other's "
                               "saves: wait for that run to end, or save to another path"),
            std::string::npos)
      << second.output;
  EXPECT_EQ(second.output.find("epoch  1/1"), std::string::npos) << second.output;
  // --resume of the same path is a second writer too.
  EXPECT_FAILS_WITH(
      kTrain + " --device cpu --data-dir " + dir + " --resume " + ckpt + " --epochs 200000",
      "is being written by another run (pid " + std::to_string(first.pid));
  ::kill(first.pid, SIGKILL);
  finish(first);
  EXPECT_TRUE(std::ifstream(lock).good());  // left behind, holding nothing
  const Result after = run(tiny_train(dir) + " --epochs 1 --seed 2 --save " + ckpt);
  EXPECT_EQ(after.status, 0) << after.output;
  EXPECT_FALSE(std::ifstream(lock).good());  // removed by the run that released it
  EXPECT_EQ(temporaries_of(ckpt), 0);
}

// The first save stopped between its two renames leaves the optimiser file alone (here: the
// model file removed): --eval and predict use it and say so; --resume continues from it and
// writes the model file again, saying so.
TEST(TrainMlp, OnlyTheOptimiserFileLeftIsUsedAndRepaired) {
  const std::string dir = write_tiny_dataset(4, 8);
  const std::string ckpt = test_file(".safetensors"), kept = test_file("_kept.safetensors");
  const std::string state = engine::optimizer_state_path(ckpt);
  ASSERT_EQ(run(tiny_train(dir) + " --epochs 1 --save " + ckpt).status, 0);
  ASSERT_EQ(std::rename(ckpt.c_str(), kept.c_str()), 0);
  const std::string eval = kTrain + " --device cpu --data-dir " + dir + " --eval ";
  // --eval: the same scores as the model file's, with a note.
  const Result good = run(eval + kept);
  ASSERT_EQ(good.status, 0) << good.output;
  const Result e = run(eval + ckpt);
  ASSERT_EQ(e.status, 0) << e.output;
  EXPECT_NE(e.output.find("note: " + ckpt +
                          " is missing (a first save stopped between its two renames leaves "
                          "only the optimiser file); using the parameters in " +
                          state + " (step 2, epoch 1)"),
            std::string::npos)
      << e.output;
  const auto scores = [](const std::string& out) { return out.substr(out.find("test loss")); };
  EXPECT_EQ(scores(e.output), scores(good.output));
  // predict: the same classes and probabilities, with a note.
  const std::string image = save_image();
  const Result p = run(kPredict + " --device cpu --model " + ckpt + " " + image);
  const Result p_good = run(kPredict + " --device cpu --model " + kept + " " + image);
  ASSERT_EQ(p.status, 0) << p.output;
  EXPECT_NE(p.output.find("predict: note: " + ckpt + " is missing"), std::string::npos) << p.output;
  EXPECT_EQ(p.output.substr(p.output.find(image + ":")), p_good.output);
  // --resume: continues, and writes the model file again.
  const Result r =
      run(kTrain + " --device cpu --data-dir " + dir + " --resume " + ckpt + " --epochs 2");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("note: " + ckpt +
                          " is missing, as a first save stopped between its "
                          "two renames leaves it; resuming from " +
                          state),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("note: " + ckpt + " was missing; rewrote it from the parameters in " +
                          state + " (step 2, epoch 1), so that the pair is one save again"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("epoch  2/2"), std::string::npos) << r.output;
  EXPECT_EQ(engine::read_checkpoint_metadata(ckpt).at("epoch"), "2");
}

// The last save stopped between its two renames leaves the model file one save behind: --eval and
// predict use the newer optimiser file and say so; --resume of the finished run has nothing to
// train but rewrites the model file, byte for byte the one the save would have written.
TEST(TrainMlp, StaleModelFileIsNotUsedAndResumeRepairsIt) {
  const std::string dir = write_tiny_dataset(4, 8);
  const std::string ckpt = test_file(".safetensors"), older = test_file("_epoch1.safetensors");
  const std::string newer = test_file("_epoch2.safetensors");
  const std::string state = engine::optimizer_state_path(ckpt);
  const std::string resume = kTrain + " --device cpu --data-dir " + dir + " --resume " + ckpt;
  ASSERT_EQ(run(tiny_train(dir) + " --epochs 1 --schedule constant --save " + ckpt).status, 0);
  ASSERT_EQ(run("cp " + ckpt + " " + older).status, 0);
  ASSERT_EQ(run(resume + " --epochs 2").status, 0);
  ASSERT_EQ(run("cp " + ckpt + " " + newer + " && cp " + older + " " + ckpt).status, 0);

  const std::string note = "note: " + ckpt + " is from an earlier save (step 2, epoch 1) than " +
                           state +
                           " (step 4, epoch 2), as a save stopped between its two renames "
                           "leaves them; using the newer parameters in " +
                           state;
  const std::string eval = kTrain + " --device cpu --data-dir " + dir + " --eval ";
  const Result e = run(eval + ckpt), e_new = run(eval + newer);
  ASSERT_EQ(e.status, 0) << e.output;
  EXPECT_NE(e.output.find(note), std::string::npos) << e.output;
  const auto scores = [](const std::string& out) { return out.substr(out.find("test loss")); };
  EXPECT_EQ(scores(e.output), scores(e_new.output));
  const std::string image = save_image();
  const Result p = run(kPredict + " --device cpu --model " + ckpt + " " + image);
  const Result p_new = run(kPredict + " --device cpu --model " + newer + " " + image);
  ASSERT_EQ(p.status, 0) << p.output;
  EXPECT_NE(p.output.find("predict: " + note.substr(0, note.find(" than "))), std::string::npos)
      << p.output;
  EXPECT_EQ(p.output.substr(p.output.find(image + ":")), p_new.output);

  const Result r = run(resume);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("note: " + ckpt +
                          " was from an earlier save (step 2, epoch 1); rewrote "
                          "it from the parameters in " +
                          state + " (step 4, epoch 2), so that the pair is one save again"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("nothing to train: "), std::string::npos) << r.output;
  EXPECT_TRUE(file_bytes(ckpt) == file_bytes(newer)) << "the model file is not the save's";
  const Result again = run(resume);  // the pair is whole: no note
  EXPECT_EQ(again.output.find("note: "), std::string::npos) << again.output;
}

// A flipped exponent bit in a saved weight: --eval, predict and --resume refuse the file, naming
// the tensor, instead of scoring 10% with exit 0.
TEST(TrainMlp, AFlippedBitIsRefused) {
  const std::string dir = write_tiny_dataset(4, 8);
  const std::string ckpt = test_file(".safetensors");
  ASSERT_EQ(run(tiny_train(dir) + " --epochs 1 --save " + ckpt).status, 0);
  for (const std::string& file : {ckpt, engine::optimizer_state_path(ckpt)}) {
    const engine::safetensors::Header h = engine::safetensors::read_header(file);
    const auto w = std::find_if(h.tensors.begin(), h.tensors.end(),
                                [](const auto& t) { return t.name == "0.weight"; });
    std::string bytes = file_bytes(file);
    uint64_t n = 0;
    for (int i = 0; i < 8; ++i) n |= uint64_t(static_cast<unsigned char>(bytes[i])) << (8 * i);
    bytes[8 + n + w->begin + 3] ^= 0x40;  // bit 30 of the first value: its exponent's highest
    std::ofstream(file, std::ios::binary | std::ios::trunc) << bytes;
  }
  const std::string damaged = "checkpoint " + ckpt + ": tensor '0.weight': its data's CRC-32 is ";
  EXPECT_FAILS_WITH(kTrain + " --device cpu --data-dir " + dir + " --eval " + ckpt, damaged);
  EXPECT_FAILS_WITH(kPredict + " --device cpu --model " + ckpt + " " + save_image(), damaged);
  EXPECT_FAILS_WITH(
      kTrain + " --device cpu --data-dir " + dir + " --resume " + ckpt + " --epochs 2",
      "checkpoint " + engine::optimizer_state_path(ckpt) +
          ": tensor '0.weight': its data's CRC-32");
}

// --resume checks the data: a fingerprint of the training set in the metadata, compared before
// any training.
TEST(TrainMlp, ResumeOnOtherDataIsRefused) {
  const std::string dir = write_tiny_dataset(4, 8);
  const std::string ckpt = test_file(".safetensors");
  ASSERT_EQ(run(tiny_train(dir) + " --epochs 1 --save " + ckpt).status, 0);
  const std::string saved = engine::read_checkpoint_metadata(ckpt).at("data_fingerprint");
  EXPECT_EQ(saved.rfind("fnv1a64:", 0), 0u) << saved;
  {  // one pixel of the training images changed, the count the same
    std::fstream f(dir + "/train-images-idx3-ubyte",
                   std::ios::binary | std::ios::in | std::ios::out);
    f.seekp(16 + 5);
    f.put(static_cast<char>(200));
  }
  const Result r =
      run(kTrain + " --device cpu --data-dir " + dir + " --resume " + ckpt + " --epochs 2");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("--resume " + ckpt + ": the run trained on data of fingerprint " + saved +
                          ", but the data here (" + dir + ", --train-limit 0) has fingerprint "),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("epoch  2/2"), std::string::npos) << r.output;
}

// A second signal stops at once and says that no save was made. The run blocks on its full output
// pipe (as in StopBySignalSavesAndResumesExactly); the first signal's notice then blocks in its
// handler, so the second arrives while the first is being handled: two signals, every time.
TEST(TrainMlp, ASecondSignalStopsAtOnceSayingNoSaveWasMade) {
  const std::string dir = write_tiny_dataset(4, 384);
  const std::string ckpt = test_file(".safetensors");
  const Child child = spawn(tiny_train(dir) + " --epochs 4 --log-interval 1 --save " + ckpt, 8192);
  ASSERT_GT(child.pid, 0);
  ASSERT_TRUE(wait_until_blocked(child)) << "the run did not block on its full output pipe";
  ::kill(child.pid, SIGINT);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  ::kill(child.pid, SIGINT);
  const Result r = finish(child);
  EXPECT_EQ(r.status, -1) << "not ended by the signal:\n" << r.output;
  EXPECT_NE(r.output.find("train_mlp: second signal: stopped at once; no save was made (the last "
                          "complete save, if any, stays whole)"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("resume with:"), std::string::npos) << r.output;
}

// --resume of a checkpoint that cannot be replaced (chattr +i) is refused before training, not
// after its first epoch. Needs root and a file system with the flag (else skipped).
TEST(TrainMlp, ResumeOfAnImmutableCheckpointIsRefusedBeforeTraining) {
  const std::string dir = write_tiny_dataset(4, 8), ckpt = test_file(".safetensors");
  std::system(("chattr -i " + ckpt + " 2>/dev/null").c_str());
  ASSERT_EQ(run(tiny_train(dir) + " --epochs 1 --save " + ckpt).status, 0);
  if (std::system(("chattr +i " + ckpt + " 2>/dev/null").c_str()) != 0)
    GTEST_SKIP() << "chattr +i is not available here (root and ext4 or similar needed)";
  const Result r =
      run(kTrain + " --device cpu --data-dir " + dir + " --resume " + ckpt + " --epochs 2");
  std::system(("chattr -i " + ckpt).c_str());
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("--resume " + ckpt + ": exists and is immutable (chattr +i)"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("epoch  2/2"), std::string::npos) << r.output;
}

}  // namespace
