// Checkpoints (safetensors): round trips of parameters, metadata and optimiser state; a resumed
// run that continues exactly; and the errors of bad files, each naming the file and the tensor.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
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
  std::ofstream(path_ + ".tmp") << "left by a killed save";
  engine::save_checkpoint(a, path_, saved.parameters(), {{"layers", "3-4-2"}});
  EXPECT_FALSE(std::ifstream(path_ + ".tmp").good());  // replaced, then renamed
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

}  // namespace
