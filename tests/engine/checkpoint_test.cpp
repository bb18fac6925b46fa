// Checkpoints (safetensors): round trips of parameters, metadata and optimiser state; a resumed
// run that continues exactly; the training pair, whole after a stop or a failure at every step of
// a save; and the errors of bad files, each naming the file and the tensor.
#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "expect_error.h"
#include "random_data.h"

namespace {

using engine::Context;
using engine::Device;
using engine::Tensor;

class Checkpoint : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = ::testing::TempDir() + "ckpt_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".safetensors";
  }
  void TearDown() override {
    std::remove(path_.c_str());
    std::remove(engine::optimizer_state_path(path_).c_str());
    std::remove((path_ + ".lock").c_str());
  }
  static void build(Context& ctx, engine::Sequential& net, int hidden) {
    net.add<engine::Linear>(ctx, 3, hidden);
    net.add<engine::ReLU>();
    net.add<engine::Linear>(ctx, hidden, 2);
  }
  std::string read_bytes() const {
    std::ifstream f(path_, std::ios::binary);
    return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
  }
  void write_bytes(const std::string& b) const {
    std::ofstream(path_, std::ios::binary | std::ios::trunc) << b;
  }
  // `good` (a whole file) with its JSON header replaced, the data kept.
  static std::string with_header(const std::string& good, const std::string& header) {
    uint64_t n = 0;
    for (int i = 0; i < 8; ++i) n |= uint64_t(static_cast<unsigned char>(good[i])) << (8 * i);
    std::string out;
    for (int i = 0; i < 8; ++i)
      out.push_back(static_cast<char>(uint64_t(header.size()) >> (8 * i)));
    return out + header + good.substr(8 + n);
  }
  std::string header() const {
    const std::string good = read_bytes();
    uint64_t n = 0;
    for (int i = 0; i < 8; ++i) n |= uint64_t(static_cast<unsigned char>(good[i])) << (8 * i);
    return good.substr(8, n);
  }
  std::string path_;
};

TEST_F(Checkpoint, RoundTripWithPyTorchNamesAndMetadata) {
  Context a(Device::CPU, "cpu", 1), b(Device::CPU, "cpu", 2);
  engine::Sequential saved, loaded;
  build(a, saved, 4);
  build(b, loaded, 4);  // different seed: different weights until loaded
  engine::save_checkpoint(a, path_, saved.parameters(), {{"layers", "3-4-2"}});
  const std::string h = header();
  EXPECT_NE(h.find("\"0.weight\":{\"data_offsets\":[0,48],\"dtype\":\"F32\",\"shape\":[4,3]}"),
            std::string::npos)
      << h;
  EXPECT_NE(h.find("\"0.bias\":{\"data_offsets\":[48,64],\"dtype\":\"F32\",\"shape\":[4]}"),
            std::string::npos)
      << h;
  EXPECT_EQ(read_bytes().size() % 8, 0u);
  const engine::Metadata m = engine::load_checkpoint(b, path_, loaded.parameters());
  EXPECT_EQ(m.at("layers"), "3-4-2");
  EXPECT_EQ(engine::read_checkpoint_metadata(path_).at("layers"), "3-4-2");
  const auto ps = saved.parameters(), pl = loaded.parameters();
  for (size_t i = 0; i < ps.size(); ++i)
    EXPECT_EQ(ps[i]->value.download(), pl[i]->value.download()) << ps[i]->name;
}

TEST_F(Checkpoint, ErrorsNameTheFileAndTheTensor) {
  Context ctx(Device::CPU, "cpu", 1);
  engine::Sequential net, other_shape, fewer;
  build(ctx, net, 4);
  build(ctx, other_shape, 5);
  fewer.add<engine::Linear>(ctx, 3, 2);
  EXPECT_THROW_WITH(engine::load_checkpoint(ctx, path_, net.parameters()), gemm_mlp::Error,
                    "cannot open");
  EXPECT_THROW_WITH(engine::load_checkpoint(ctx, ::testing::TempDir(), net.parameters()),
                    gemm_mlp::Error, "is a directory");
  EXPECT_THROW_WITH(engine::save_checkpoint(ctx, "", net.parameters()), gemm_mlp::Error,
                    "empty path");
  EXPECT_THROW_WITH(
      engine::save_checkpoint(ctx, "/nonexistent-dir/x.safetensors", net.parameters()),
      gemm_mlp::Error, "cannot create");
  engine::save_checkpoint(ctx, path_, net.parameters());
  EXPECT_THROW_WITH(engine::load_checkpoint(ctx, path_, other_shape.parameters()), gemm_mlp::Error,
                    "tensor '0.weight' has shape [4,3], the model expects [5,3]");
  EXPECT_THROW_WITH(engine::load_checkpoint(ctx, path_, fewer.parameters()), gemm_mlp::Error,
                    "tensor '2.bias' is not in the model");

  const std::string good = read_bytes(), h = header();
  write_bytes(good.substr(0, good.size() - 4));
  EXPECT_THROW_WITH(engine::load_checkpoint(ctx, path_, net.parameters()), gemm_mlp::Error,
                    "tensor '2.bias': data_offsets");
  write_bytes(good.substr(0, 5));
  EXPECT_THROW_WITH(engine::load_checkpoint(ctx, path_, net.parameters()), gemm_mlp::Error,
                    "shorter than");
  write_bytes(std::string("\xff\xff\xff\xff\xff\xff\xff\x7f", 8) + good.substr(8));
  EXPECT_THROW_WITH(engine::load_checkpoint(ctx, path_, net.parameters()), gemm_mlp::Error,
                    "does not fit the file");
  write_bytes(with_header(good, std::string(h.size(), '{')));
  EXPECT_THROW_WITH(engine::load_checkpoint(ctx, path_, net.parameters()), gemm_mlp::Error,
                    "not valid JSON");
  std::string i8 = h;
  i8.replace(i8.find("F32"), 3, "I8");
  write_bytes(with_header(good, i8));
  EXPECT_THROW_WITH(engine::load_checkpoint(ctx, path_, net.parameters()), gemm_mlp::Error,
                    "dtype \"I8\"; F32, F16, BF16 and F64 are read");
  std::string f16 = h;  // F16 is read, but needs 2 bytes a value
  f16.replace(f16.find("F32"), 3, "F16");
  write_bytes(with_header(good, f16));
  EXPECT_THROW_WITH(engine::load_checkpoint(ctx, path_, net.parameters()), gemm_mlp::Error,
                    "tensor '0.bias': 16 bytes for shape [4] of F16 (8 expected)");
  std::string missing = h;  // the tensor and its checksum renamed
  for (size_t at; (at = missing.find("2.bias")) != std::string::npos;)
    missing.replace(at, 6, "9.bias");
  write_bytes(with_header(good, missing));
  EXPECT_THROW_WITH(engine::load_checkpoint(ctx, path_, net.parameters()), gemm_mlp::Error,
                    "tensor '9.bias' is not in the model");

  // A NaN in 0.weight's data (its first value: the data starts right after the header): its
  // checksum no longer matches; without the checksum, the value itself is refused.
  std::string nan = good;
  const float bad = std::nanf("");
  std::memcpy(&nan[8 + h.size()], &bad, 4);
  write_bytes(nan);
  EXPECT_THROW_WITH(engine::load_checkpoint(ctx, path_, net.parameters()), gemm_mlp::Error,
                    "tensor '0.weight': its data's CRC-32 is ");
  std::string unchecked = h;
  const size_t crc = unchecked.find("\"crc32:0.weight\"");
  ASSERT_NE(crc, std::string::npos) << h;
  unchecked.replace(crc, 16, "\"no_crc:0.weight\"");
  write_bytes(with_header(nan, unchecked));
  EXPECT_THROW_WITH(engine::load_checkpoint(ctx, path_, net.parameters()), gemm_mlp::Error,
                    "tensor '0.weight' holds a non-finite value at index 0");
}

// The header alone: names (sorted), shapes and metadata, with no tensor data read (a NaN in the
// data is only found by read()); a file written with no metadata, as PyTorch's save_file does.
TEST_F(Checkpoint, HeaderAloneGivesNamesShapesAndMetadata) {
  Context ctx(Device::CPU, "cpu", 1);
  engine::Sequential net;
  build(ctx, net, 4);
  engine::save_checkpoint(ctx, path_, net.parameters(), {{"layers", "3-4-2"}});
  std::string bytes = read_bytes();
  const float nan = std::nanf("");
  std::memcpy(&bytes[8 + header().size()], &nan, 4);
  write_bytes(bytes);
  const engine::safetensors::Header h = engine::safetensors::read_header(path_);
  EXPECT_EQ(h.metadata, (engine::Metadata{{"layers", "3-4-2"}}));
  ASSERT_EQ(h.tensors.size(), 4u);
  EXPECT_EQ(h.tensors[0].name, "0.bias");
  EXPECT_EQ(h.tensors[1].name, "0.weight");
  EXPECT_EQ(h.tensors[1].shape, (std::vector<int64_t>{4, 3}));
  EXPECT_EQ(h.tensors[2].shape, (std::vector<int64_t>{2}));
  EXPECT_EQ(h.data_bytes, 4u * (12 + 4 + 8 + 2));
  EXPECT_EQ(engine::read_checkpoint_metadata(path_).at("layers"), "3-4-2");
  EXPECT_TRUE(h.tensors[1].has_crc32);
  EXPECT_THROW_WITH(engine::safetensors::read(path_), gemm_mlp::Error,
                    "tensor '0.weight': its data's CRC-32");

  engine::safetensors::write(path_, {{"0.weight", {2, 3}, std::vector<float>(6, 0.5f)}}, {});
  const engine::safetensors::Header plain = engine::safetensors::read_header(path_);
  EXPECT_TRUE(plain.metadata.empty());
  ASSERT_EQ(plain.tensors.size(), 1u);
  EXPECT_EQ(plain.tensors[0].shape, (std::vector<int64_t>{2, 3}));
}

// A file larger than its header accounts for (here a 30 GiB sparse one) is refused from the
// header, without reading it; tensors that the header sizes beyond the memory available
// (a 4 TiB sparse file) are refused before any allocation, naming the size, file and limit.
TEST_F(Checkpoint, SizesAreCheckedFromTheHeaderBeforeReading) {
  Context ctx(Device::CPU, "cpu", 1);
  engine::Sequential net;
  build(ctx, net, 4);
  engine::save_checkpoint(ctx, path_, net.parameters());
  const uint64_t good_size = read_bytes().size();
  if (::truncate(path_.c_str(), off_t{30} << 30) != 0)
    GTEST_SKIP() << "this file system cannot hold a 30 GiB sparse file";
  EXPECT_THROW_WITH(engine::safetensors::read_header(path_), gemm_mlp::Error,
                    std::to_string((30ull << 30) - good_size) +
                        " data bytes after the last tensor (the file is 32212254720 bytes; its "
                        "header accounts for " +
                        std::to_string(good_size) + ")");
  EXPECT_THROW_WITH(engine::safetensors::read(path_), gemm_mlp::Error, "after the last tensor");

  std::string huge =
      "{\"0.weight\":{\"dtype\":\"F32\",\"shape\":[1048576,1048576],"
      "\"data_offsets\":[0,4398046511104]}}";
  huge.append((8 - huge.size() % 8) % 8, ' ');
  std::string bytes;
  for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<char>(uint64_t(huge.size()) >> (8 * i)));
  write_bytes(bytes + huge);
  if (::truncate(path_.c_str(), static_cast<off_t>(8 + huge.size() + (4ull << 40))) != 0)
    GTEST_SKIP() << "this file system cannot hold a 4 TiB sparse file";
  EXPECT_EQ(engine::safetensors::read_header(path_).data_bytes, 4ull << 40);
  EXPECT_THROW_WITH(engine::safetensors::read(path_), gemm_mlp::Error,
                    "checkpoint " + path_ +
                        ": its tensors (twice 4.0 TiB (4398046511104 bytes), as read and "
                        "loaded) needs 8.0 TiB");
}

// A run of 2 + 2 epochs, stopped and resumed from its checkpoints, gives the same losses and
// weights as 4 epochs straight: with a constant rate (N then M more) and with the cosine schedule
// of the planned 4 epochs (an interrupted run), for SGD with momentum and for Adam.
TEST_F(Checkpoint, ResumedRunContinuesExactly) {
  const int batch = 8, in = 5, classes = 3, n = 40;
  std::mt19937_64 rng(3);
  const std::vector<float> xv = random_values(rng, n * in);
  std::vector<int32_t> yv(n);
  for (int i = 0; i < n; ++i) yv[i] = i % classes;
  for (int adam = 0; adam < 2; ++adam)
    for (int64_t cosine_steps : {int64_t(0), int64_t(4 * n / batch)}) {
      SCOPED_TRACE(std::string(adam ? "adam" : "sgd") + (cosine_steps ? ", cosine" : ", constant"));
      auto run = [&](int first_epoch, int last_epoch, bool resume, std::vector<double>& losses) {
        Context ctx(Device::CPU, "cpu", 9);
        engine::Sequential net;
        net.add<engine::Linear>(ctx, in, 16);
        net.add<engine::ReLU>();
        net.add<engine::Linear>(ctx, 16, classes);
        engine::TrainerOptions o;
        o.max_batch = batch;
        o.optimizer =
            adam ? engine::TrainerOptions::Optimizer::Adam : engine::TrainerOptions::Optimizer::Sgd;
        o.sgd = {0.1f, 0.9f, 1e-3f, cosine_steps};
        o.adam.lr = 1e-2f, o.adam.cosine_steps = cosine_steps;
        engine::Trainer trainer(ctx, net, o);
        if (resume) {
          engine::load_checkpoint(ctx, path_, net.parameters());
          engine::load_optimizer_state(ctx, engine::optimizer_state_path(path_),
                                       trainer.optimizer());
          trainer.resume_from_optimizer();
        }
        const Tensor x = Tensor::from_host(Device::CPU, n, in, xv);
        const engine::LabelTensor y(Device::CPU, yv);
        for (int e = first_epoch; e <= last_epoch; ++e) {
          for (int b = 0; b < n / batch; ++b)
            trainer.step(Tensor::view(Device::CPU, x.data() + b * batch * in, batch, in),
                         engine::LabelTensor::view(Device::CPU, y.data() + b * batch, batch));
          losses.push_back(trainer.take_metrics().loss_sum);
        }
        engine::save_checkpoint(ctx, path_, net.parameters());
        engine::save_optimizer_state(ctx, engine::optimizer_state_path(path_), trainer.optimizer());
        return net.parameters()[0]->value.download();
      };
      std::vector<double> straight, parts;
      const std::vector<float> w_straight = run(1, 4, false, straight);
      run(1, 2, false, parts);
      const std::vector<float> w_resumed = run(3, 4, true, parts);
      EXPECT_EQ(parts, straight);
      EXPECT_EQ(w_resumed, w_straight);
    }
}

TEST_F(Checkpoint, OptimizerStateErrors) {
  Context ctx(Device::CPU, "cpu", 1);
  engine::Sequential net;
  build(ctx, net, 4);
  engine::Sgd sgd(ctx, net.parameters(), {0.1f, 0.9f, 0.0f, 0});
  engine::save_checkpoint(ctx, path_, net.parameters());  // no 'step', no momentum_buffer
  EXPECT_THROW_WITH(engine::load_optimizer_state(ctx, path_, sgd), gemm_mlp::Error, "no 'step'");
  engine::save_optimizer_state(ctx, path_, sgd);
  engine::Adam adam(ctx, net.parameters(), {});
  EXPECT_THROW_WITH(engine::load_optimizer_state(ctx, path_, adam), gemm_mlp::Error,
                    "tensor 'momentum_buffer' is not");
  EXPECT_EQ(engine::optimizer_state_path("a/m.safetensors"), "a/m.optim.safetensors");
  EXPECT_EQ(engine::optimizer_state_path("m.bin"), "m.bin.optim.safetensors");
}

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
    run.step();
    run.save(path_, "run-a");
    const std::vector<float> before = run.values();
    run.step();
    const std::vector<float> after = run.values();
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
    run.step();
    run.save(path_, "run-a");
    const std::vector<float> before = run.values();
    run.step();
    const std::vector<float> after = run.values();
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

// A file as PyTorch's save_file writes it: no metadata, so no checksums; each tensor's dtype and
// its bytes (little-endian, as the host is).
struct RawTensor {
  std::string name, dtype;
  std::vector<int64_t> shape;
  std::string bytes;
};

template <class T>
std::string bytes_of(const std::vector<T>& values) {
  std::string out(values.size() * sizeof(T), '\0');
  std::memcpy(out.data(), values.data(), out.size());
  return out;
}

std::string raw_file(const std::vector<RawTensor>& tensors) {
  nlohmann::json header = nlohmann::json::object();
  std::string data;
  for (const RawTensor& t : tensors) {
    header[t.name] = {{"dtype", t.dtype},
                      {"shape", t.shape},
                      {"data_offsets", {data.size(), data.size() + t.bytes.size()}}};
    data += t.bytes;
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  std::string out;
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>(uint64_t(text.size()) >> (8 * i)));
  return out + text + data;
}

// F16 and BF16 tensors load exactly (subnormals and the largest values included), F64 rounded to
// the nearest fp32; a value beyond fp32's range is an error naming the tensor and the index. A
// file without checksums loads.
TEST_F(Checkpoint, PyTorchDtypesLoadAsFp32) {
  Context ctx(Device::CPU, "cpu", 1);
  engine::Sequential net;
  build(ctx, net, 4);  // 0.weight [4,3], 0.bias [4], 2.weight [2,4], 2.bias [2]
  const std::vector<uint16_t> bf16 = {0x3F80, 0xC2F7, 0x0001, 0x7F7F, 0x8000, 0x3EAB,
                                      0x4049, 0xBF00, 0x0080, 0x3C00, 0x4000, 0xC040};
  const std::vector<uint16_t> f16 = {0x3C00, 0x0001, 0x7BFF, 0x8400};
  const std::vector<double> f64 = {0.1, 1.0 / 3, 1e-50, -2.5, 3.4028234e38, -1e-40, 7, 1e-3};
  const std::vector<float> f32 = {0.25f, -8.0f};
  write_bytes(raw_file({{"0.weight", "BF16", {4, 3}, bytes_of(bf16)},
                        {"0.bias", "F16", {4}, bytes_of(f16)},
                        {"2.weight", "F64", {2, 4}, bytes_of(f64)},
                        {"2.bias", "F32", {2}, bytes_of(f32)}}));
  const engine::Metadata m = engine::load_checkpoint(ctx, path_, net.parameters());
  EXPECT_TRUE(m.empty());
  const auto params = net.parameters();
  std::vector<float> want_bf16;
  for (uint16_t b : bf16) {
    const uint32_t bits = uint32_t(b) << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    want_bf16.push_back(f);
  }
  EXPECT_EQ(params[0]->value.download(), want_bf16);
  EXPECT_EQ(want_bf16[1], -123.5f);
  EXPECT_EQ(want_bf16[2], std::ldexp(1.0f, -133));
  EXPECT_EQ(params[1]->value.download(),
            (std::vector<float>{1.0f, std::ldexp(1.0f, -24), 65504.0f, -std::ldexp(1.0f, -14)}));
  std::vector<float> want_f64;
  for (double d : f64) want_f64.push_back(static_cast<float>(d));
  EXPECT_EQ(params[2]->value.download(), want_f64);
  EXPECT_EQ(want_f64[2], 0.0f);
  EXPECT_EQ(params[3]->value.download(), f32);
  const engine::safetensors::Header h = engine::safetensors::read_header(path_);
  EXPECT_EQ(h.tensors[0].dtype, engine::safetensors::Dtype::F16);  // 0.bias
  EXPECT_FALSE(h.tensors[0].has_crc32);

  std::vector<double> too_big = f64;
  too_big[5] = -1e39;
  write_bytes(raw_file({{"0.weight", "BF16", {4, 3}, bytes_of(bf16)},
                        {"0.bias", "F16", {4}, bytes_of(f16)},
                        {"2.weight", "F64", {2, 4}, bytes_of(too_big)},
                        {"2.bias", "F32", {2}, bytes_of(f32)}}));
  EXPECT_THROW_WITH(engine::load_checkpoint(ctx, path_, net.parameters()), gemm_mlp::Error,
                    "tensor '2.weight' (F64) holds -1e+39 at index 5, beyond "
                    "fp32's range");
  std::vector<uint16_t> inf16 = f16;
  inf16[2] = 0x7C00;
  write_bytes(raw_file({{"0.bias", "F16", {4}, bytes_of(inf16)}}));
  EXPECT_THROW_WITH(engine::safetensors::read(path_), gemm_mlp::Error,
                    "tensor '0.bias' holds a non-finite value at index 2");
}

// Every tensor's bytes carry a CRC-32 in the metadata: a flipped exponent bit in a saved weight is
// an error naming the tensor and the file, not a model that scores 10%.
TEST_F(Checkpoint, AFlippedBitIsAnError) {
  Context ctx(Device::CPU, "cpu", 1);
  engine::Sequential net;
  build(ctx, net, 4);
  engine::save_checkpoint(ctx, path_, net.parameters(), {{"layers", "3-4-2"}});
  const engine::safetensors::Header h = engine::safetensors::read_header(path_);
  EXPECT_EQ(h.metadata, (engine::Metadata{{"layers", "3-4-2"}}));  // the checksums apart
  for (const auto& t : h.tensors) EXPECT_TRUE(t.has_crc32) << t.name;
  EXPECT_NE(header().find("\"crc32:2.weight\":\""), std::string::npos) << header();
  const auto w = std::find_if(h.tensors.begin(), h.tensors.end(),
                              [](const auto& t) { return t.name == "2.weight"; });
  std::string bytes = read_bytes();
  bytes[8 + header().size() + w->begin + 3] ^= 0x40;  // bit 30: the exponent's highest
  write_bytes(bytes);
  EXPECT_THROW_WITH(engine::load_checkpoint(ctx, path_, net.parameters()), gemm_mlp::Error,
                    "checkpoint " + path_ + ": tensor '2.weight': its data's CRC-32 is ");
  // The key is the format's own.
  EXPECT_THROW_WITH(engine::save_checkpoint(ctx, path_, net.parameters(), {{"crc32:x", "0"}}),
                    gemm_mlp::Error, "metadata key 'crc32:x' starts with 'crc32:'");
  // A checksum that names no tensor, or is no CRC-32, is a malformed header.
  engine::save_checkpoint(ctx, path_, net.parameters());
  std::string other = header();
  other.replace(other.find("crc32:2.weight"), 14, "crc32:7.weight");
  write_bytes(with_header(read_bytes(), other));
  EXPECT_THROW_WITH(engine::safetensors::read_header(path_), gemm_mlp::Error,
                    "metadata 'crc32:7.weight' is the checksum of '7.weight', which is not in the "
                    "file");
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

TEST(Fingerprint, ChangesWithAnyByteAndEachPartsLength) {
  const std::vector<int32_t> labels = {1, 2, 3, 4, 5};
  std::vector<float> images(37, 0.5f);
  const auto of = [&] {
    return engine::fingerprint(
        {{labels.data(), labels.size() * 4}, {images.data(), images.size() * 4}});
  };
  const std::string a = of();
  EXPECT_EQ(a.size(), 8u + 16u);
  EXPECT_EQ(a.rfind("fnv1a64:", 0), 0u);
  EXPECT_EQ(of(), a);
  images[36] = 0.25f;  // the tail, past the last whole 8 bytes
  EXPECT_NE(of(), a);
  images[36] = 0.5f;
  EXPECT_EQ(of(), a);
  EXPECT_NE(engine::fingerprint({{labels.data(), 8}, {labels.data() + 2, 12}}),
            engine::fingerprint({{labels.data(), 12}, {labels.data() + 3, 8}}));
}

}  // namespace
