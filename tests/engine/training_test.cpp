// Training smoke test on the CPU backend: a small MLP learns a synthetic, separable problem
// (Gaussian blobs in 16 dimensions) to > 95% held-out accuracy in well under a second.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "engine/engine.h"

namespace {

using engine::Device;
using engine::Tensor;

struct Blobs {
  std::vector<float> x;
  std::vector<int32_t> y;
};

// `classes` centres drawn in [−1, 1]^dims, points = centre + N(0, 0.35²) per coordinate.
Blobs make_blobs(int count, int dims, int classes, const std::vector<float>& centres,
                 std::mt19937_64& rng) {
  std::normal_distribution<float> noise(0.0f, 0.35f);
  std::uniform_int_distribution<int> pick(0, classes - 1);
  Blobs b;
  for (int i = 0; i < count; ++i) {
    const int c = pick(rng);
    for (int d = 0; d < dims; ++d) b.x.push_back(centres[c * dims + d] + noise(rng));
    b.y.push_back(c);
  }
  return b;
}

TEST(Training, CpuMlpLearnsBlobs) {
  const int dims = 16, classes = 4, batch = 32, train_n = 640, test_n = 320;
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> centres(classes * dims);
  for (float& c : centres) c = u(rng);
  const Blobs train = make_blobs(train_n, dims, classes, centres, rng);
  const Blobs test = make_blobs(test_n, dims, classes, centres, rng);

  engine::Context ctx(Device::CPU, "cpu", 1);
  engine::Sequential net;
  net.add<engine::Linear>(ctx, dims, 32);
  net.add<engine::ReLU>();
  net.add<engine::Linear>(ctx, 32, classes);
  engine::TrainerOptions options;
  options.max_batch = batch;
  options.sgd = {0.05f, 0.9f, 0.0f, 0};
  engine::Trainer trainer(ctx, net, options);

  Tensor x_train = Tensor::from_host(Device::CPU, train_n, dims, train.x);
  const engine::LabelTensor y_train(Device::CPU, train.y);
  for (int epoch = 0; epoch < 5; ++epoch)
    for (int i = 0; i < train_n / batch; ++i) {
      Tensor xb = Tensor::view(Device::CPU, x_train.data() + i * batch * dims, batch, dims);
      const engine::LabelTensor yb =
          engine::LabelTensor::view(Device::CPU, y_train.data() + i * batch, batch);
      trainer.step(xb, yb);
    }
  EXPECT_EQ(trainer.steps(), 5 * (train_n / batch));
  EXPECT_LT(trainer.take_metrics().mean_loss(), 1.0);

  const Tensor x_test = Tensor::from_host(Device::CPU, test_n, dims, test.x);
  const engine::MetricTotals t = trainer.evaluate(x_test, engine::LabelTensor(Device::CPU, test.y));
  EXPECT_EQ(t.seen, test_n);
  EXPECT_GT(t.accuracy(), 0.95) << "loss " << t.mean_loss();
}

}  // namespace
