// Checkpoints (safetensors): round trips of parameters, metadata and optimiser state; a resumed
// run that continues exactly; the training pair, whole after a stop or a failure at every step of
// a save; and the errors of bad files, each naming the file and the tensor.
#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "engine/atomic_file.h"
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
  std::string f16 = h;
  f16.replace(f16.find("F32"), 3, "F16");
  write_bytes(with_header(good, f16));
  EXPECT_THROW_WITH(engine::load_checkpoint(ctx, path_, net.parameters()), gemm_mlp::Error,
                    "dtype \"F16\"");
  std::string missing = h;
  missing.replace(missing.find("\"2.bias\""), 8, "\"9.bias\"");
  write_bytes(with_header(good, missing));
  EXPECT_THROW_WITH(engine::load_checkpoint(ctx, path_, net.parameters()), gemm_mlp::Error,
                    "tensor '9.bias' is not in the model");

  // A NaN in 0.weight's data (its first value: the data starts right after the header).
  std::string nan = good;
  const float bad = std::nanf("");
  std::memcpy(&nan[8 + h.size()], &bad, 4);
  write_bytes(nan);
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
  EXPECT_THROW_WITH(engine::safetensors::read(path_), gemm_mlp::Error,
                    "tensor '0.weight' holds a non-finite value");

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
        run.save(path_, "run-a");
      } catch (...) {
        ::_exit(2);
      }
      ::_exit(hook_calls == kPairSaveSteps ? 0 : 3);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;

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
  engine::save_optimizer_state(a.ctx, engine::optimizer_state_path(path_), a.trainer->optimizer());
  EXPECT_THROW_WITH(a.load(path_), gemm_mlp::Error, "no 'run_id' in its metadata");
  EXPECT_THROW_WITH(engine::save_training_checkpoint(a.ctx, path_, a.net.parameters(),
                                                     a.trainer->optimizer(), {}),
                    gemm_mlp::Error, "needs a 'run_id'");
  std::remove(other.c_str());
}

}  // namespace
