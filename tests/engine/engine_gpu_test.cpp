// The CUDA backend against the CPU backend, op by op, for every device GEMM variant in the table
// (the trainer's graph replay: trainer_gpu_test.cpp). Sizes are deliberately not tile multiples
// (batch 37, widths 100 and 70, 10 classes).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "compare_to_cpu.h"
#include "engine/engine.h"
#include "gpu_test.h"
#include "random_data.h"

namespace {

using engine::Context;
using engine::Device;
using engine::Tensor;

TEST(EngineGpu, TensorTransfersAndViews) {
  GPU_TEST_OR_SKIP();
  Context ctx(Device::CUDA, "naive", 1);
  Tensor t = Tensor::from_host(Device::CUDA, 3, 2, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(t.download(ctx.stream()), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  Tensor zeros(Device::CUDA, 2, 2);
  EXPECT_EQ(zeros.download(), (std::vector<float>{0, 0, 0, 0}));
  Tensor head = t.first_rows(2);
  EXPECT_EQ(head.download(), (std::vector<float>{1, 2, 3, 4}));
  Tensor host(Device::CPU, 3, 2);
  host.copy_from(t, ctx.stream());
  EXPECT_EQ(host.download(), t.download());
  Tensor back(Device::CUDA, 3, 2);
  back.copy_from(host, ctx.stream());
  EXPECT_EQ(back.download(), t.download());

  // A CPU tensor handed to a CUDA context is an error, not a crash.
  Tensor y(Device::CUDA, 3, 2), x_host(Device::CPU, 3, 2);
  EXPECT_THROW(engine::relu_forward(ctx, x_host, y), gemm_mlp::Error);
  const engine::LabelTensor host_labels(Device::CPU, {0, 1, 0});
  engine::Metrics metrics(ctx);
  EXPECT_THROW(
      engine::softmax_cross_entropy(ctx, t, host_labels, nullptr, metrics.counters(), nullptr),
      gemm_mlp::Error);
}

TEST(EngineGpu, OpsMatchCpuForEveryVariant) {
  GPU_TEST_OR_SKIP();
  const int batch = 37, in = 100, out = 70;
  std::mt19937_64 rng(21);
  const std::vector<float> xv = random_values(rng, batch * in), wv = random_values(rng, out * in),
                           bv = random_values(rng, out), dyv = random_values(rng, batch * out);

  // The CPU reference.
  Context cpu(Device::CPU, "cpu", 1);
  Tensor x = Tensor::from_host(Device::CPU, batch, in, xv);
  Tensor w = Tensor::from_host(Device::CPU, out, in, wv);
  Tensor b = Tensor::from_host(Device::CPU, 1, out, bv);
  Tensor dy = Tensor::from_host(Device::CPU, batch, out, dyv);
  Tensor y(Device::CPU, batch, out), r(Device::CPU, batch, out), dr(Device::CPU, batch, out);
  Tensor dx(Device::CPU, batch, in), dw(Device::CPU, out, in), db(Device::CPU, 1, out);
  engine::linear_forward(cpu, x, w, b, y);
  engine::linear_backward(cpu, x, w, dy, &dx, dw, db);
  engine::relu_forward(cpu, y, r);
  engine::relu_backward(cpu, r, dy, dr);
  // The fused forms: bias + ReLU in the forward epilogue; the input gradient masked by the input
  // (here max(x, 0), a ReLU's output), gradients overwritten.
  std::vector<float> xrv = xv;
  for (float& v : xrv) v = std::max(v, 0.0f);
  Tensor xr = Tensor::from_host(Device::CPU, batch, in, xrv), yf(Device::CPU, batch, out);
  Tensor dxm(Device::CPU, batch, in), dwo(Device::CPU, out, in), dbo(Device::CPU, 1, out);
  engine::linear_forward(cpu, x, w, b, yf, engine::Activation::Relu);
  engine::linear_backward(cpu, xr, w, dy, &dxm, dwo, dbo, {false, true});

  for (const gemm::Variant* v : device_variants())
    for_variant(*v, [&] {
      Context ctx(Device::CUDA, *v, 1);
      Tensor gx = Tensor::from_host(Device::CUDA, batch, in, xv);
      Tensor gw = Tensor::from_host(Device::CUDA, out, in, wv);
      Tensor gb = Tensor::from_host(Device::CUDA, 1, out, bv);
      Tensor gdy = Tensor::from_host(Device::CUDA, batch, out, dyv);
      Tensor gy(Device::CUDA, batch, out), gr(Device::CUDA, batch, out),
          gdr(Device::CUDA, batch, out);
      Tensor gdx(Device::CUDA, batch, in), gdw(Device::CUDA, out, in), gdb(Device::CUDA, 1, out);
      engine::linear_forward(ctx, gx, gw, gb, gy);
      engine::linear_backward(ctx, gx, gw, gdy, &gdx, gdw, gdb);
      // ReLU from the CPU's y, so that TF32 rounding cannot flip a sign and the comparison is
      // exact.
      gy.upload(y.download(), ctx.stream());
      engine::relu_forward(ctx, gy, gr);
      engine::relu_backward(ctx, gr, gdy, gdr);
      const double tol = tolerance_against_cpu(*v);
      expect_close(gy.download(ctx.stream()), y.download(), 0.0, "relu input");
      expect_close(gdx.download(ctx.stream()), dx.download(), tol, "dX");
      expect_close(gdw.download(ctx.stream()), dw.download(), tol, "dW");
      expect_close(gdb.download(ctx.stream()), db.download(), 1e-5, "db");
      expect_close(gr.download(ctx.stream()), r.download(), 0.0, "relu");
      expect_close(gdr.download(ctx.stream()), dr.download(), 0.0, "relu backward");

      Tensor gxr = Tensor::from_host(Device::CUDA, batch, in, xrv), gyf(Device::CUDA, batch, out);
      Tensor gdxm(Device::CUDA, batch, in), gdwo = Tensor::from_host(Device::CUDA, out, in, wv),
                                            gdbo = Tensor::from_host(Device::CUDA, 1, out, bv);
      engine::linear_forward(ctx, gx, gw, gb, gyf, engine::Activation::Relu);
      engine::linear_backward(ctx, gxr, gw, gdy, &gdxm, gdwo, gdbo, {false, true});
      expect_close(gyf.download(ctx.stream()), yf.download(), tol, "fused bias + ReLU");
      expect_close(gdxm.download(ctx.stream()), dxm.download(), tol, "dX masked by the input");
      expect_close(gdwo.download(ctx.stream()), dwo.download(), tol, "dW overwritten");
      expect_close(gdbo.download(ctx.stream()), dbo.download(), 1e-5, "db overwritten");
    });
}

TEST(EngineGpu, LinearForwardMatchesCpuForEveryVariant) {
  GPU_TEST_OR_SKIP();
  for (int batch : {1, 37, 256}) {
    const int in = 784, out = 10;
    std::mt19937_64 rng(batch);
    const std::vector<float> xv = random_values(rng, batch * in), wv = random_values(rng, out * in),
                             bv = random_values(rng, out);
    Context cpu(Device::CPU, "cpu", 1);
    Tensor x = Tensor::from_host(Device::CPU, batch, in, xv);
    Tensor w = Tensor::from_host(Device::CPU, out, in, wv);
    Tensor b = Tensor::from_host(Device::CPU, 1, out, bv);
    Tensor y(Device::CPU, batch, out);
    engine::linear_forward(cpu, x, w, b, y);
    for (const gemm::Variant* v : device_variants())
      for_variant(*v, [&] {
        SCOPED_TRACE("batch " + std::to_string(batch));
        Context ctx(Device::CUDA, *v, 1);
        Tensor gx = Tensor::from_host(Device::CUDA, batch, in, xv);
        Tensor gw = Tensor::from_host(Device::CUDA, out, in, wv);
        Tensor gb = Tensor::from_host(Device::CUDA, 1, out, bv);
        Tensor gy(Device::CUDA, batch, out);
        engine::linear_forward(ctx, gx, gw, gb, gy);
        expect_close(gy.download(ctx.stream()), y.download(), tolerance_against_cpu(*v), "Y");
      });
  }
}

TEST(EngineGpu, SoftmaxCrossEntropyAndMetricsMatchCpu) {
  GPU_TEST_OR_SKIP();
  const int batch = 37, classes = 10;
  std::mt19937_64 rng(5);
  std::vector<float> zv = random_values(rng, batch * classes);
  for (float& z : zv) z *= 4.0f;
  std::vector<int32_t> labels(batch);
  for (int i = 0; i < batch; ++i) labels[i] = (i * 7) % classes;

  Context cpu(Device::CPU, "cpu", 1);
  engine::Metrics cm(cpu);
  engine::SoftmaxCrossEntropy closs;
  closs.prepare(cpu, 64, classes);
  Tensor z = Tensor::from_host(Device::CPU, batch, classes, zv);
  const std::vector<float> d_ref =
      closs.forward_backward(cpu, z, engine::LabelTensor(Device::CPU, labels), cm).download();
  const engine::MetricTotals t_ref = cm.read(cpu);

  Context ctx(Device::CUDA, "naive", 1);
  engine::Metrics gm(ctx);
  engine::SoftmaxCrossEntropy gloss;
  gloss.prepare(ctx, 64, classes);
  const engine::LabelTensor glabels(Device::CUDA, labels);
  Tensor gz = Tensor::from_host(Device::CUDA, batch, classes, zv);
  const Tensor& gd = gloss.forward_backward(ctx, gz, glabels, gm);
  expect_close(gd.download(ctx.stream()), d_ref, 1e-5, "dLogits");
  const engine::MetricTotals t = gm.read(ctx);
  EXPECT_EQ(t.seen, batch);
  EXPECT_EQ(t.correct, t_ref.correct);
  EXPECT_NEAR(t.loss_sum, t_ref.loss_sum, 1e-4 * t_ref.loss_sum);

  const std::vector<int32_t> bad(batch, 11);
  const engine::LabelTensor gbad(Device::CUDA, bad);
  gloss.forward(ctx, gz, gbad, gm);
  EXPECT_THROW(gm.read(ctx), gemm_mlp::Error);
}

TEST(EngineGpu, OptimisersMatchCpu) {
  GPU_TEST_OR_SKIP();
  std::mt19937_64 rng(8);
  const std::vector<float> wv = random_values(rng, 1000), gv = random_values(rng, 1000);
  for (int which = 0; which < 2; ++which) {
    std::vector<float> results[2];
    for (int dev = 0; dev < 2; ++dev) {
      const Device d = dev == 0 ? Device::CPU : Device::CUDA;
      Context ctx(d, dev == 0 ? "cpu" : "naive", 1);
      engine::Parameter p{"p", Tensor::from_host(d, 10, 100, wv),
                          Tensor::from_host(d, 10, 100, gv)};
      std::unique_ptr<engine::Optimizer> opt;  // cosine schedules, so that lr changes each step
      if (which == 0)
        opt = std::make_unique<engine::Sgd>(ctx, std::vector<engine::Parameter*>{&p},
                                            engine::SgdOptions{0.1f, 0.9f, 1e-3f, 4});
      else
        opt = std::make_unique<engine::Adam>(
            ctx, std::vector<engine::Parameter*>{&p},
            engine::AdamOptions{1e-2f, 0.9f, 0.999f, 1e-8f, 1e-3f, 4});
      for (int s = 0; s < 3; ++s) opt->step(ctx);
      results[dev] = p.value.download(ctx.stream());
    }
    expect_close(results[1], results[0], 1e-6, which == 0 ? "sgd" : "adam");
  }
}

TEST(EngineGpu, CurandInitIsSeededAndBounded) {
  GPU_TEST_OR_SKIP();
  std::vector<float> first;
  for (int round = 0; round < 2; ++round) {
    Context ctx(Device::CUDA, "naive", 77);
    engine::Linear lin(ctx, 300, 200);
    const std::vector<float> w = lin.weight().value.download(ctx.stream());
    const float bound = std::sqrt(6.0f / 300);
    float wmax = 0.0f;
    double mean = 0.0;
    for (float v : w) wmax = std::max(wmax, std::fabs(v)), mean += v;
    EXPECT_LE(wmax, bound);
    EXPECT_GT(wmax, 0.95f * bound);
    EXPECT_NEAR(mean / w.size(), 0.0, 0.01);
    if (round == 0)
      first = w;
    else
      EXPECT_EQ(w, first);  // same seed, same weights
  }
}

// A side stream starts after the main stream's work queued before fork(), and join() makes the
// main stream wait for it: a side-stream ReLU of a large GEMM's output sees the whole output, and
// the main stream's copy after join() sees the whole ReLU. Outside Branches, fork() gives 0.
TEST(EngineGpu, BranchesOrderSideStreamsBetweenForkAndJoin) {
  GPU_TEST_OR_SKIP();
  Context ctx(Device::CUDA, "fast", 1);
  EXPECT_EQ(ctx.fork(), 0);
  const int n = 2048;
  std::mt19937_64 rng(3);
  const Tensor x = Tensor::from_host(Device::CUDA, n, n, random_values(rng, n * n));
  const Tensor w = Tensor::from_host(Device::CUDA, n, n, random_values(rng, n * n));
  Tensor b(Device::CUDA, 1, n), y(Device::CUDA, n, n), relu(Device::CUDA, n, n),
      copy(Device::CUDA, n, n);
  for (int round = 0; round < 3; ++round) {
    engine::zero(ctx, relu);
    ctx.synchronize();
    {
      const Context::Branches branches(ctx);
      engine::linear_forward(ctx, x, w, b, y);  // main: long enough to expose a missing wait
      const int side = ctx.fork();
      ASSERT_GE(side, 1);
      ASSERT_NE(ctx.fork(), side);  // handed out in turn
      ctx.on(side, [&] {
        EXPECT_NE(ctx.stream(), nullptr);
        engine::relu_forward(ctx, y, relu);
      });
      ctx.join();
      copy.copy_from(relu, ctx.stream());
    }
    const std::vector<float> ys = y.download(ctx.stream()), copied = copy.download(ctx.stream());
    size_t wrong = 0;
    for (size_t i = 0; i < ys.size(); ++i) wrong += copied[i] != std::max(ys[i], 0.0f);
    EXPECT_EQ(wrong, 0u) << "round " << round;
  }
}

TEST(EngineGpu, GemmTimersGrowBetweenEpochs) {
  GPU_TEST_OR_SKIP();
  Context ctx(Device::CUDA, "tiled", 1);
  Tensor x(Device::CUDA, 64, 64), w(Device::CUDA, 64, 64), b(Device::CUDA, 1, 64),
      y(Device::CUDA, 64, 64);
  // First epoch: the pool is empty, so its GEMMs run untimed; the pool then grows.
  ctx.begin_epoch();
  for (int i = 0; i < 5; ++i) engine::linear_forward(ctx, x, w, b, y);
  engine::EpochTimes t = ctx.end_epoch();
  EXPECT_EQ(t.gemm_calls, 5);
  EXPECT_EQ(t.gemm_untimed, 5);
  ctx.begin_epoch();
  for (int i = 0; i < 5; ++i) engine::linear_forward(ctx, x, w, b, y);
  t = ctx.end_epoch();
  EXPECT_EQ(t.gemm_calls, 5);
  EXPECT_EQ(t.gemm_untimed, 0);
  EXPECT_GT(t.gemm_s, 0.0);
  EXPECT_GE(t.epoch_s, t.gemm_s);
}

}  // namespace
