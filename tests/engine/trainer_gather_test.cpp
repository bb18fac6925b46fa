// The trainer fed by a data loader's gather (Trainer::Fill): a step that gathers the next step's
// batch at its end (Gather::ThisAndNext) trains exactly as one that gathers its own batch first,
// on the CPU and in every way the GPU runs a step; and on the step kernel, a launch that gathers
// the next batch inside it (Trainer::set_batch_source), of one step or several (Trainer::steps),
// exactly as launches whose batches the loader gathers.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "data/loader.h"
#include "engine/engine.h"
#include "expect_error.h"
#include "gpu_test.h"
#include "random_data.h"

namespace {

using engine::Context;
using engine::Device;
using engine::Tensor;
using Gather = engine::Trainer::Gather;

constexpr int kCount = 100, kBatch = 32, kFeatures = 20, kClasses = 10, kEpochs = 3;

data::Dataset random_dataset() {
  std::mt19937_64 rng(17);
  data::Dataset ds;
  ds.count = kCount;
  ds.rows = 1;
  ds.cols = kFeatures;
  ds.classes = kClasses;
  ds.images = random_values(rng, kCount * kFeatures);
  for (int i = 0; i < kCount; ++i) ds.labels.push_back(static_cast<int32_t>(rng() % kClasses));
  return ds;
}

// How a run queues its steps on the GPU (ignored on the CPU).
enum class Way { OneStream, BranchedOneByOne, SerialGraph, BranchedGraph };

struct Trained {
  std::vector<double> losses;  // per step; on the step kernel, per epoch
  std::vector<float> weights;  // every parameter at the end
};

// Steps given to Trainer::steps, up to per_launch full batches at a time; on the step kernel
// (tf32_fast) where step_kernel, whose launches gather the next batch inside them (the loader's
// source) where inside.
struct Launches {
  bool step_kernel = false;
  bool inside = false;
  int per_launch = 1;
};

// kEpochs epochs as train_mlp runs them: with `ahead`, every step (or launch) but the epoch's last
// gathers the next one's batch. Without drop_last each epoch ends with a partial batch of 4 rows;
// with it, with a full one, so the graph of steps that gather only their own batch runs too. With
// `launches` the losses are taken once an epoch: the same sums in the same order however many
// steps a launch runs.
Trained train(Device device, Way way, bool ahead, bool drop_last,
              const Launches* launches = nullptr) {
  const bool on_kernel = launches != nullptr && launches->step_kernel;
  const char* variant = on_kernel ? "tf32_fast" : device == Device::CUDA ? "auto" : "cpu";
  Context ctx(device, variant, 3);
  engine::Sequential net;
  net.add<engine::Linear>(ctx, kFeatures, 48);
  net.add<engine::ReLU>();
  net.add<engine::Linear>(ctx, 48, 32);
  net.add<engine::ReLU>();
  net.add<engine::Linear>(ctx, 32, kClasses);
  engine::TrainerOptions o;
  o.max_batch = kBatch;
  o.sgd = {0.1f, 0.9f, 5e-4f, 10};
  o.cuda_graph = way == Way::SerialGraph || way == Way::BranchedGraph;
  o.parallel_step = way != Way::OneStream && way != Way::SerialGraph;
  o.branch_launch_by_launch = way == Way::BranchedOneByOne;
  o.step_kernel = on_kernel;
  engine::Trainer trainer(ctx, net, o);
  EXPECT_EQ(trainer.step_kernel_active(), on_kernel) << trainer.step_kernel_note();
  data::BatchLoader loader(random_dataset(), kBatch, 9, device, drop_last, ctx.stream());
  if (on_kernel && launches->inside) trainer.set_batch_source(loader.source());
  const data::BatchLoader::Batch buffer = loader.buffer();
  const Tensor x = Tensor::view(device, buffer.x, kBatch, kFeatures);
  const engine::LabelTensor y = engine::LabelTensor::view(device, buffer.y, kBatch);
  const auto gather = [&loader](cudaStream_t stream, const int64_t* step) {
    loader.batch_at(step, stream);
  };
  Trained run;
  for (int epoch = 0; epoch < kEpochs; ++epoch) {
    loader.begin_epoch(epoch);
    const int batches = loader.num_batches(), full = kCount / kBatch;
    for (int i = 0; i < batches;) {
      const int size = std::min(kBatch, kCount - i * kBatch);
      const int count =
          size == kBatch && launches != nullptr ? std::min(launches->per_launch, full - i) : 1;
      const Gather plan = ahead && i + count < batches ? Gather::ThisAndNext : Gather::ThisStep;
      if (count > 1)
        trainer.steps(x, y, gather, count, plan);
      else
        trainer.step(x.first_rows(size), y.first(size), gather, plan);
      i += count;
      if (launches == nullptr) run.losses.push_back(trainer.take_metrics().loss_sum);
    }
    if (launches != nullptr) run.losses.push_back(trainer.take_metrics().loss_sum);
  }
  EXPECT_EQ(trainer.graph_active(), o.cuda_graph && device == Device::CUDA && !on_kernel)
      << trainer.graph_note();
  for (engine::Parameter* p : net.parameters()) {
    const std::vector<float> values = p->value.download(ctx.stream());
    run.weights.insert(run.weights.end(), values.begin(), values.end());
  }
  return run;
}

void expect_same(const Trained& expected, const Trained& got) {
  EXPECT_EQ(expected.losses, got.losses);
  EXPECT_EQ(expected.weights, got.weights);
}

TEST(TrainerGather, NextBatchAheadMatchesEachStepsOwnOnTheCpu) {
  for (bool drop_last : {false, true}) {
    SCOPED_TRACE(drop_last ? "drop_last" : "partial last batch");
    const Trained own = train(Device::CPU, Way::OneStream, false, drop_last);
    EXPECT_EQ(own.losses.size(), static_cast<size_t>(kEpochs * (drop_last ? 3 : 4)));
    expect_same(own, train(Device::CPU, Way::OneStream, true, drop_last));
  }
}

TEST(TrainerGather, NextBatchAheadMatchesEachStepsOwnOnTheGpu) {
  GPU_TEST_OR_SKIP();
  const char* names[] = {"one stream", "branched, one by one", "serial graph", "branched graph"};
  for (bool drop_last : {false, true}) {
    const Trained own = train(Device::CUDA, Way::OneStream, false, drop_last);
    for (Way way : {Way::OneStream, Way::BranchedOneByOne, Way::SerialGraph, Way::BranchedGraph})
      for (bool ahead : {false, true}) {
        SCOPED_TRACE(std::string(names[static_cast<int>(way)]) + (ahead ? ", ahead" : ", own") +
                     (drop_last ? ", drop_last" : ", partial last batch"));
        expect_same(own, train(Device::CUDA, way, ahead, drop_last));
      }
  }
}

// The step kernel's launches of per_launch steps, the next batch gathered inside them, train to
// the same bits as launches of a step whose batches the loader gathers before and after them. A
// test a case: each is two trainings, which racecheck stretches to minutes (sanitize.sh).
void expect_the_step_kernel_gathers_as_the_loader(bool drop_last, int per_launch) {
  GPU_TEST_OR_SKIP();
  if (const char* why = gemm::unavailable_reason(gemm::find_variant("tf32_fast")))
    GTEST_SKIP() << why;
  const Launches loader_gathers{true, false, 1}, inside{true, true, per_launch};
  const Trained own = train(Device::CUDA, Way::OneStream, false, drop_last, &loader_gathers);
  ASSERT_EQ(own.losses.size(), static_cast<size_t>(kEpochs));
  expect_same(own, train(Device::CUDA, Way::OneStream, true, drop_last, &inside));
}
TEST(TrainerGather, TheStepKernelGathersTheNextBatchInsideItsLaunch) {
  expect_the_step_kernel_gathers_as_the_loader(false, 1);
}
TEST(TrainerGather, TheStepKernelGathersInsideLaunchesOfThreeSteps) {
  expect_the_step_kernel_gathers_as_the_loader(false, 3);
}
TEST(TrainerGather, TheStepKernelGathersTheNextBatchInsideItsLaunchDroppingTheRest) {
  expect_the_step_kernel_gathers_as_the_loader(true, 1);
}
TEST(TrainerGather, TheStepKernelGathersInsideLaunchesOfTwoStepsDroppingTheRest) {
  expect_the_step_kernel_gathers_as_the_loader(true, 2);
}

// A launch of several steps runs full batches of one epoch: one that would reach the partial
// batch, or the next epoch, is refused by name before anything is queued.
TEST(TrainerGather, TheStepKernelRefusesALaunchPastTheEpochsFullBatches) {
  GPU_TEST_OR_SKIP();
  if (const char* why = gemm::unavailable_reason(gemm::find_variant("tf32_fast")))
    GTEST_SKIP() << why;
  Context ctx(Device::CUDA, "tf32_fast", 3);
  engine::Sequential net;
  net.add<engine::Linear>(ctx, kFeatures, kClasses);
  engine::TrainerOptions o;
  o.max_batch = kBatch;
  o.step_kernel = true;
  engine::Trainer trainer(ctx, net, o);
  ASSERT_TRUE(trainer.step_kernel_active()) << trainer.step_kernel_note();
  data::BatchLoader loader(random_dataset(), kBatch, 9, Device::CUDA, false, ctx.stream());
  trainer.set_batch_source(loader.source());
  loader.begin_epoch(0);
  const Tensor x = Tensor::view(Device::CUDA, loader.buffer().x, kBatch, kFeatures);
  const engine::LabelTensor y = engine::LabelTensor::view(Device::CUDA, loader.buffer().y, kBatch);
  const auto gather = [&loader](cudaStream_t stream, const int64_t* step) {
    loader.batch_at(step, stream);
  };
  // Batches 0..2 are full, batch 3 has 4 rows.
  EXPECT_THROW_WITH(trainer.steps(x, y, gather, 4), gemm_mlp::Error, "reaches batch 3 of 4 rows");
  trainer.steps(x, y, gather, 3, Gather::ThisAndNext);
  trainer.step(x.first_rows(4), y.first(4), gather);
  EXPECT_EQ(trainer.steps(), 4);
  EXPECT_THROW_WITH(trainer.steps(x, y, gather, 5), gemm_mlp::Error, "crosses the epoch's end");
  EXPECT_EQ(trainer.take_metrics().seen, kCount);
}

// Without the step kernel, steps() is as many step() calls, each gathering the next batch.
TEST(TrainerGather, StepsAreStepCallsOnTheCpu) {
  for (bool drop_last : {false, true}) {
    SCOPED_TRACE(drop_last ? "drop_last" : "partial last batch");
    const Launches one{false, false, 1}, three{false, false, 3};
    expect_same(train(Device::CPU, Way::OneStream, true, drop_last, &one),
                train(Device::CPU, Way::OneStream, true, drop_last, &three));
  }
}

// A trainer of one layer (4 inputs, 3 classes) on the CPU, and a batch of two rows for it.
struct SmallTrainer {
  Context ctx{Device::CPU, 1};
  engine::Linear layer{ctx, 4, 3};
  engine::Trainer trainer{ctx, layer, options()};
  const Tensor x = Tensor::from_host(Device::CPU, 2, 4, {1, 2, 3, 4, 5, 6, 7, 8});
  const engine::LabelTensor y{Device::CPU, std::vector<int32_t>{0, 2}};
  static engine::TrainerOptions options(
      engine::TrainerOptions::Loss loss = engine::TrainerOptions::Loss::CrossEntropy) {
    engine::TrainerOptions o;
    o.max_batch = 2;
    o.loss = loss;
    return o;
  }
};

TEST(TrainerGather, StepsRefuseACountBelowOneAndSeveralWithoutAFill) {
  SmallTrainer t;
  EXPECT_THROW_WITH(t.trainer.steps(t.x, t.y, nullptr, 0), gemm_mlp::Error, "steps() of 0 steps");
  EXPECT_THROW_WITH(t.trainer.steps(t.x, t.y, nullptr, 2), gemm_mlp::Error, "needs a fill");
  EXPECT_EQ(t.trainer.steps(), 0);
  t.trainer.steps(t.x, t.y, nullptr, 1);  // one step on the caller's batch
  EXPECT_EQ(t.trainer.steps(), 1);
}

TEST(TrainerGather, ABatchSourceIsCheckedAndIsForLabels) {
  SmallTrainer t;
  EXPECT_THROW_WITH(t.trainer.set_batch_source({}), gemm_mlp::Error, "needs its images");
  const float images[8] = {};
  const int32_t labels[2] = {}, order[2] = {0, 1};
  gemm_mlp::BatchSource s{images, labels, order, 2, 4, 2, 2};
  EXPECT_THROW_WITH(t.trainer.set_batch_source(s), gemm_mlp::Error, "has no batch 1 of 2");
  s.batches = 0;
  EXPECT_THROW_WITH(t.trainer.set_batch_source(s), gemm_mlp::Error, "must all be >= 1");
  s.batches = 1;
  t.trainer.set_batch_source(s);
  engine::Trainer regression(t.ctx, t.layer,
                             SmallTrainer::options(engine::TrainerOptions::Loss::MeanSquaredError));
  EXPECT_THROW_WITH(regression.set_batch_source(s), gemm_mlp::Error, "set_batch_source is for");
}

TEST(TrainerGather, GatheringAheadNeedsAFill) {
  SmallTrainer t;
  EXPECT_THROW_WITH(t.trainer.step(t.x, t.y, nullptr, Gather::ThisAndNext), gemm_mlp::Error,
                    "Gather::ThisAndNext without a fill");
}

}  // namespace
