// The trainer fed by a data loader's gather (Trainer::Fill): a step that gathers the next step's
// batch at its end (Gather::ThisAndNext) trains exactly as one that gathers its own batch first,
// on the CPU and in every way the GPU runs a step.
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
  std::vector<double> losses;  // per step
  std::vector<float> weights;  // every parameter at the end
};

// kEpochs epochs as train_mlp runs them: with `ahead`, every step but the epoch's last gathers
// the next one's batch. Without drop_last each epoch ends with a partial batch of 4 rows; with it,
// with a full one, so the graph of steps that gather only their own batch runs too.
Trained train(Device device, Way way, bool ahead, bool drop_last) {
  Context ctx(device, 3);
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
  engine::Trainer trainer(ctx, net, o);
  data::BatchLoader loader(random_dataset(), kBatch, 9, device, drop_last, ctx.stream());
  const data::BatchLoader::Batch buffer = loader.buffer();
  const Tensor x = Tensor::view(device, buffer.x, kBatch, kFeatures);
  const engine::LabelTensor y = engine::LabelTensor::view(device, buffer.y, kBatch);
  const auto gather = [&loader](cudaStream_t stream, const int64_t* step) {
    loader.batch_at(step, stream);
  };
  Trained run;
  for (int epoch = 0; epoch < kEpochs; ++epoch) {
    loader.begin_epoch(epoch);
    const int batches = loader.num_batches();
    for (int i = 0; i < batches; ++i) {
      const int size = std::min(kBatch, kCount - i * kBatch);
      const Gather plan = ahead && i + 1 < batches ? Gather::ThisAndNext : Gather::ThisStep;
      trainer.step(x.first_rows(size), y.first(size), gather, plan);
      run.losses.push_back(trainer.take_metrics().loss_sum);
    }
  }
  EXPECT_EQ(trainer.graph_active(), o.cuda_graph && device == Device::CUDA) << trainer.graph_note();
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

TEST(TrainerGather, GatheringAheadNeedsAFill) {
  Context ctx(Device::CPU, 1);
  engine::Linear layer(ctx, 4, 3);
  engine::TrainerOptions o;
  o.max_batch = 2;
  engine::Trainer trainer(ctx, layer, o);
  const Tensor x = Tensor::from_host(Device::CPU, 2, 4, {1, 2, 3, 4, 5, 6, 7, 8});
  const engine::LabelTensor y(Device::CPU, std::vector<int32_t>{0, 2});
  EXPECT_THROW_WITH(trainer.step(x, y, nullptr, Gather::ThisAndNext), gemm_mlp::Error,
                    "Gather::ThisAndNext without a fill");
}

}  // namespace
