// The CUDA backend against the CPU backend, op by op, for every device GEMM variant in the table.
// Sizes are deliberately not tile multiples (batch 37, widths 100 and 70, 10 classes).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "gpu_test.h"
#include "random_data.h"

namespace {

using engine::Context;
using engine::Device;
using engine::Tensor;

// max |got − ref| ≤ tol · max |ref|: a normwise bound, loose enough for TF32's 10-bit inputs
// (tol 2e-2) and tight for fp32 (tol 1e-5 would do for one GEMM; 1e-4 leaves room for the
// different summation orders of OpenBLAS and the kernels). NaN never passes.
void expect_close(const std::vector<float>& got, const std::vector<float>& ref, double tol,
                  const std::string& what) {
  ASSERT_EQ(got.size(), ref.size()) << what;
  double scale = 0.0, worst = 0.0;
  for (float r : ref) scale = std::max(scale, static_cast<double>(std::fabs(r)));
  size_t worst_i = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_FALSE(std::isnan(got[i])) << what << "[" << i << "] is NaN";
    const double d = std::fabs(static_cast<double>(got[i]) - ref[i]);
    if (d > worst) worst = d, worst_i = i;
  }
  EXPECT_LE(worst, tol * scale + 1e-7)
      << what << ": worst at [" << worst_i << "] got " << got[worst_i] << ", ref " << ref[worst_i]
      << " (max |ref| " << scale << ")";
}

// Runs `body` for one variant; an exception fails that variant and the loop goes on to the next.
template <class F>
void for_variant(const gemm::Variant& v, F&& body) {
  SCOPED_TRACE(v.name);
  try {
    body();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "variant " << v.name << " threw: " << e.what();
  }
}

double tolerance(const gemm::Variant& v) {
  return v.precision == gemm::Precision::TF32 ? 2e-2 : 1e-4;
}

// The device variants this GPU runs (all of them on the H200; wgmma needs Hopper).
std::vector<const gemm::Variant*> device_variants() {
  std::vector<const gemm::Variant*> out;
  for (const gemm::Variant& v : gemm::variants())
    if (v.memory == gemm::Memory::Device && !gemm::unavailable_reason(v)) out.push_back(&v);
  return out;
}

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
  EXPECT_THROW(engine::relu_forward(ctx, x_host, y), engine::Error);
  const engine::LabelTensor host_labels(Device::CPU, {0, 1, 0});
  engine::Metrics metrics(ctx);
  EXPECT_THROW(engine::softmax_cross_entropy(ctx, t, host_labels, nullptr, metrics.counters()),
               engine::Error);
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
      const double tol = tolerance(*v);
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
        expect_close(gy.download(ctx.stream()), y.download(), tolerance(*v), "Y");
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
  EXPECT_THROW(gm.read(ctx), engine::Error);
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

// The trainer's two ways, for every device variant and both optimisers: replaying the captured
// graph and running launch by launch give the same losses and parameters, bit for bit. Batches
// from two buffers (so the graph is captured again when the input changes) and a partial batch
// (run launch by launch in both).
TEST(EngineGpu, GraphReplayMatchesLaunchByLaunch) {
  GPU_TEST_OR_SKIP();
  const int batch = 32, in = 50, classes = 10;
  std::mt19937_64 rng(31);
  const std::vector<float> xa = random_values(rng, batch * in), xb = random_values(rng, batch * in);
  std::vector<int32_t> ya(batch), yb(batch);
  for (int i = 0; i < batch; ++i) ya[i] = (i * 3) % classes, yb[i] = (i * 7 + 1) % classes;
  for (const gemm::Variant* v : device_variants())
    for (int adam = 0; adam < 2; ++adam)
      for_variant(*v, [&] {
        SCOPED_TRACE(adam ? "adam" : "sgd");
        std::vector<double> losses[2];
        std::vector<float> weights[2];
        for (int graph = 0; graph < 2; ++graph) {
          Context ctx(Device::CUDA, *v, 5);
          engine::Sequential net;
          net.add<engine::Linear>(ctx, in, 64);
          net.add<engine::ReLU>();
          net.add<engine::Linear>(ctx, 64, 48);
          net.add<engine::ReLU>();
          net.add<engine::Linear>(ctx, 48, classes);
          engine::TrainerOptions o;
          o.max_batch = batch;
          o.classes = classes;
          o.optimizer = adam ? engine::TrainerOptions::Optimizer::Adam
                             : engine::TrainerOptions::Optimizer::Sgd;
          o.sgd = {0.1f, 0.9f, 5e-4f, 12};
          o.adam.lr = 1e-2f, o.adam.cosine_steps = 12;
          o.cuda_graph = graph == 1;
          engine::Trainer trainer(ctx, net, o);
          const Tensor x_a = Tensor::from_host(Device::CUDA, batch, in, xa);
          const Tensor x_b = Tensor::from_host(Device::CUDA, batch, in, xb);
          const engine::LabelTensor y_a(Device::CUDA, ya), y_b(Device::CUDA, yb);
          for (int s = 0; s < 12; ++s) {
            if (s == 5)
              trainer.step(x_a.first_rows(19), y_a.first(19));
            else if (s < 5)
              trainer.step(x_a, y_a);
            else
              trainer.step(x_b, y_b);
            losses[graph].push_back(trainer.take_metrics().loss_sum);
          }
          EXPECT_EQ(trainer.graph_active(), graph == 1) << trainer.graph_note();
          EXPECT_EQ(trainer.steps(), 12);
          weights[graph] = net.parameters()[0]->value.download(ctx.stream());
        }
        EXPECT_EQ(losses[0], losses[1]);
        EXPECT_EQ(weights[0], weights[1]);
        EXPECT_TRUE(std::isfinite(losses[1].back()));
      });
}

// The optimiser state saved after graph replays records the steps the device took (a captured
// step is queued once but runs at every replay), and resuming from it continues bit for bit.
TEST(EngineGpu, OptimizerStateAfterGraphReplaysResumesExactly) {
  GPU_TEST_OR_SKIP();
  const int batch = 16, in = 12, classes = 4;
  std::mt19937_64 rng(41);
  const std::vector<float> xv = random_values(rng, batch * in);
  std::vector<int32_t> yv(batch);
  for (int i = 0; i < batch; ++i) yv[i] = i % classes;
  const std::string path = ::testing::TempDir() + "gpu_resume.safetensors";
  const std::string optim = engine::optimizer_state_path(path);
  auto run = [&](int steps, bool resume, bool save) {
    Context ctx(Device::CUDA, "warptile", 3);
    engine::Sequential net;
    net.add<engine::Linear>(ctx, in, 32);
    net.add<engine::ReLU>();
    net.add<engine::Linear>(ctx, 32, classes);
    engine::TrainerOptions o;
    o.max_batch = batch, o.classes = classes;
    o.sgd = {0.1f, 0.9f, 1e-3f, 20};
    engine::Trainer trainer(ctx, net, o);
    if (resume) {
      engine::load_checkpoint(ctx, path, net.parameters());
      engine::load_optimizer_state(ctx, optim, trainer.optimizer());
      trainer.resume_from_optimizer();
    }
    const Tensor x = Tensor::from_host(Device::CUDA, batch, in, xv);
    const engine::LabelTensor y(Device::CUDA, yv);
    for (int s = 0; s < steps; ++s) trainer.step(x, y);
    EXPECT_TRUE(trainer.graph_active()) << trainer.graph_note();
    if (save) {
      engine::save_checkpoint(ctx, path, net.parameters());
      engine::save_optimizer_state(ctx, optim, trainer.optimizer());
    }
    return net.parameters()[0]->value.download(ctx.stream());
  };
  const std::vector<float> straight = run(10, false, false);
  run(6, false, true);
  EXPECT_EQ(engine::read_checkpoint_metadata(optim).at("step"), "6");
  EXPECT_EQ(run(4, true, false), straight);
  std::remove(path.c_str());
  std::remove(optim.c_str());
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
