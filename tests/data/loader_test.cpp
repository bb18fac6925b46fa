#include "data/loader.h"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "gpu_test.h"
#include "test_files.h"

namespace {

using data::BatchLoader;
using data::Dataset;
using data_test::error_of;
using data_test::expect_mentions;
using gemm_mlp::Device;

// Sample i has pixels i·1000 + f and label i mod 10, so every gathered row says where it came from.
Dataset numbered_dataset(int count, int features) {
  Dataset ds;
  ds.count = count;
  ds.rows = 1;
  ds.cols = features;
  ds.images.resize(static_cast<size_t>(count) * features);
  ds.labels.resize(count);
  for (int i = 0; i < count; ++i) {
    for (int f = 0; f < features; ++f)
      ds.images[static_cast<size_t>(i) * features + f] = static_cast<float>(i * 1000 + f);
    ds.labels[i] = i % 10;
  }
  return ds;
}

// The sample indices of one host batch, checking each row is an intact copy of its sample.
std::vector<int> ids_of(const BatchLoader::Batch& b, int features) {
  std::vector<int> ids;
  for (int r = 0; r < b.size; ++r) {
    const int id = static_cast<int>(b.x[static_cast<size_t>(r) * features]) / 1000;
    for (int f = 0; f < features; ++f)
      EXPECT_EQ(b.x[static_cast<size_t>(r) * features + f], static_cast<float>(id * 1000 + f));
    EXPECT_EQ(b.y[r], id % 10);
    ids.push_back(id);
  }
  return ids;
}

// All sample indices of one epoch, in batch order, and the batch sizes.
std::pair<std::vector<int>, std::vector<int>> epoch_order(BatchLoader& loader, int epoch) {
  loader.begin_epoch(epoch);
  std::vector<int> order, sizes;
  for (int i = 0; i < loader.num_batches(); ++i) {
    const BatchLoader::Batch b = loader.batch(i);
    const std::vector<int> ids = ids_of(b, loader.features());
    order.insert(order.end(), ids.begin(), ids.end());
    sizes.push_back(b.size);
  }
  return {order, sizes};
}

std::vector<int> sorted(std::vector<int> v) {
  std::sort(v.begin(), v.end());
  return v;
}

std::vector<int> range(int n) {
  std::vector<int> v(n);
  std::iota(v.begin(), v.end(), 0);
  return v;
}

TEST(BatchLoaderHost, EverySampleOncePerEpochWithTrueLastBatch) {
  BatchLoader loader(numbered_dataset(10, 5), 3, 42, Device::CPU);
  EXPECT_EQ(loader.num_batches(), 4);
  EXPECT_EQ(loader.dropped_per_epoch(), 0);
  for (int epoch = 0; epoch < 3; ++epoch) {
    const auto [order, sizes] = epoch_order(loader, epoch);
    EXPECT_EQ(sorted(order), range(10)) << "epoch " << epoch;
    EXPECT_EQ(sizes, (std::vector<int>{3, 3, 3, 1})) << "the last batch is not padded";
  }
}

TEST(BatchLoaderHost, ExactMultipleHasNoPartialBatch) {
  BatchLoader loader(numbered_dataset(12, 2), 4, 1, Device::CPU);
  EXPECT_EQ(loader.num_batches(), 3);
  EXPECT_EQ(epoch_order(loader, 0).second, (std::vector<int>{4, 4, 4}));
}

TEST(BatchLoaderHost, BatchLargerThanDatasetIsOneBatch) {
  BatchLoader loader(numbered_dataset(5, 3), 64, 7, Device::CPU);
  EXPECT_EQ(loader.num_batches(), 1);
  const auto [order, sizes] = epoch_order(loader, 0);
  EXPECT_EQ(sorted(order), range(5));
  EXPECT_EQ(sizes, (std::vector<int>{5}));
}

TEST(BatchLoaderHost, DropLastReportsSkippedSamples) {
  BatchLoader loader(numbered_dataset(10, 2), 3, 42, Device::CPU, /*drop_last=*/true);
  EXPECT_EQ(loader.num_batches(), 3);
  EXPECT_EQ(loader.dropped_per_epoch(), 1);
  std::set<int> dropped;
  for (int epoch = 0; epoch < 8; ++epoch) {
    const auto [order, sizes] = epoch_order(loader, epoch);
    EXPECT_EQ(sizes, (std::vector<int>{3, 3, 3}));
    const std::set<int> seen(order.begin(), order.end());
    ASSERT_EQ(seen.size(), 9u) << "no sample twice in an epoch";
    for (int i = 0; i < 10; ++i)
      if (!seen.count(i)) dropped.insert(i);
  }
  EXPECT_GT(dropped.size(), 1u) << "the skipped sample should change from epoch to epoch";
}

TEST(BatchLoaderHost, OrderDependsOnlyOnSeedAndEpoch) {
  BatchLoader a(numbered_dataset(50, 1), 8, 1234, Device::CPU);
  BatchLoader b(numbered_dataset(50, 1), 8, 1234, Device::CPU);
  BatchLoader other_seed(numbered_dataset(50, 1), 8, 1235, Device::CPU);
  const std::vector<int> a0 = epoch_order(a, 0).first;
  const std::vector<int> a1 = epoch_order(a, 1).first;
  EXPECT_EQ(epoch_order(b, 1).first, a1) << "same seed, same epoch";
  EXPECT_EQ(epoch_order(b, 0).first, a0) << "epochs can be replayed in any order";
  EXPECT_NE(a0, a1) << "a new epoch reshuffles";
  EXPECT_NE(epoch_order(other_seed, 0).first, a0) << "a new seed reshuffles";
  EXPECT_NE(a0, range(50)) << "epoch 0 is shuffled too";
}

TEST(BatchLoaderHost, OrderIsPinned) {
  // mt19937_64, seed_seq and the shuffle are all fully specified, so this order is the same with
  // every compiler and standard library (it was also checked against a separate implementation
  // written from the standard's definitions). A change here changes every run's data order.
  BatchLoader loader(numbered_dataset(10, 1), 10, 42, Device::CPU);
  EXPECT_EQ(epoch_order(loader, 0).first, (std::vector<int>{3, 5, 4, 1, 7, 8, 6, 2, 9, 0}));
}

TEST(BatchLoaderHost, ShuffleIsUniform) {
  // All 24 orders of 4 samples over 2400 epochs: about 100 each. A classic off-by-one in
  // Fisher–Yates (drawing from [0, i) instead of [0, i]) never yields some orders at all.
  BatchLoader loader(numbered_dataset(4, 1), 4, 9, Device::CPU);
  std::map<std::vector<int>, int> seen;
  for (int epoch = 0; epoch < 2400; ++epoch) ++seen[epoch_order(loader, epoch).first];
  EXPECT_EQ(seen.size(), 24u);
  for (const auto& [order, n] : seen) {
    EXPECT_GT(n, 55);
    EXPECT_LT(n, 145);
  }
}

TEST(BatchLoaderHost, WholeSetInOriginalOrder) {
  const Dataset ds = numbered_dataset(7, 3);
  BatchLoader loader(ds, 2, 3, Device::CPU);
  EXPECT_EQ(loader.count(), 7);
  EXPECT_EQ(loader.features(), 3);
  EXPECT_EQ(loader.batch_size(), 2);
  EXPECT_EQ(loader.device(), Device::CPU);
  EXPECT_TRUE(std::equal(ds.images.begin(), ds.images.end(), loader.all_images()));
  EXPECT_TRUE(std::equal(ds.labels.begin(), ds.labels.end(), loader.all_labels()));
}

TEST(BatchLoaderHost, MovedLoaderKeepsWorking) {
  BatchLoader a(numbered_dataset(9, 2), 4, 5, Device::CPU);
  const std::vector<int> want = epoch_order(a, 2).first;
  BatchLoader b(std::move(a));
  EXPECT_EQ(epoch_order(b, 2).first, want);
  BatchLoader c(numbered_dataset(3, 1), 1, 0, Device::CPU);
  c = std::move(b);
  EXPECT_EQ(c.count(), 9);
  EXPECT_EQ(epoch_order(c, 2).first, want);
}

TEST(BatchLoaderHost, RejectsBadArguments) {
  const Dataset ds = numbered_dataset(10, 2);
  expect_mentions(error_of([&] { BatchLoader(ds, 0, 1, Device::CPU); }), {"batch size", "0"});
  expect_mentions(error_of([&] { BatchLoader(ds, -3, 1, Device::CPU); }), {"batch size", "-3"});
  expect_mentions(error_of([&] { BatchLoader(Dataset{}, 4, 1, Device::CPU); }), {"empty dataset"});
  Dataset short_labels = ds;
  short_labels.labels.pop_back();
  expect_mentions(error_of([&] { BatchLoader(short_labels, 4, 1, Device::CPU); }),
                  {"inconsistent dataset", "9 labels"});
  expect_mentions(error_of([&] { BatchLoader(ds, 11, 1, Device::CPU, true); }),
                  {"batch size 11", "10 samples", "drop_last"});
  // The same arguments are rejected before any CUDA call, so this holds without a GPU too.
  expect_mentions(error_of([&] { BatchLoader(ds, 0, 1, Device::CUDA); }), {"batch size"});

  BatchLoader loader(ds, 4, 1, Device::CPU);
  expect_mentions(error_of([&] { loader.batch(0); }), {"before begin_epoch"});
  loader.begin_epoch(0);
  expect_mentions(error_of([&] { loader.batch(3); }), {"batch index 3", "0..2"});
  expect_mentions(error_of([&] { loader.batch(-1); }), {"batch index -1"});
}

// The device loader gathers exactly what the host loader gathers for the same seed, by batch index
// and by a step counter in device memory (batch_at), at row lengths 37 and 36.
TEST(BatchLoaderDevice, MatchesHostLoader) {
  GPU_TEST_OR_SKIP();
  const int count = 1000, batch = 128;  // last batch 104 rows
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  int64_t* d_step = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&d_step), sizeof(int64_t)), cudaSuccess);
  for (int features : {37, 36}) {
    const Dataset ds = numbered_dataset(count, features);
    for (bool drop_last : {false, true}) {
      BatchLoader host(ds, batch, 77, Device::CPU, drop_last);
      BatchLoader device(ds, batch, 77, Device::CUDA, drop_last, stream);
      ASSERT_EQ(device.num_batches(), host.num_batches());
      EXPECT_EQ(device.dropped_per_epoch(), host.dropped_per_epoch());
      std::vector<float> x(static_cast<size_t>(batch) * features);
      std::vector<int32_t> y(batch);
      // The gathered batch d on the host, poisoned first, against the host loader's h.
      const auto expect_batch = [&](const BatchLoader::Batch& h, const BatchLoader::Batch& d) {
        std::fill(x.begin(), x.end(), -1.0f);
        std::fill(y.begin(), y.end(), -1);
        ASSERT_EQ(cudaMemcpyAsync(x.data(), d.x, sizeof(float) * h.size * features,
                                  cudaMemcpyDeviceToHost, stream),
                  cudaSuccess);
        ASSERT_EQ(cudaMemcpyAsync(y.data(), d.y, sizeof(int32_t) * h.size, cudaMemcpyDeviceToHost,
                                  stream),
                  cudaSuccess);
        ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
        EXPECT_TRUE(std::equal(h.x, h.x + static_cast<size_t>(h.size) * features, x.begin()));
        EXPECT_TRUE(std::equal(h.y, h.y + h.size, y.begin()));
      };
      for (int epoch = 0; epoch < 3; ++epoch) {
        host.begin_epoch(epoch);
        device.begin_epoch(epoch);
        for (int i = 0; i < host.num_batches(); ++i) {
          SCOPED_TRACE("features " + std::to_string(features) + " epoch " + std::to_string(epoch) +
                       " batch " + std::to_string(i));
          const BatchLoader::Batch h = host.batch(i);
          const BatchLoader::Batch d = device.batch(i);
          ASSERT_EQ(d.size, h.size);
          expect_batch(h, d);
          const int64_t step = static_cast<int64_t>(epoch) * host.num_batches() + i;
          ASSERT_EQ(cudaMemcpyAsync(d_step, &step, sizeof step, cudaMemcpyHostToDevice, stream),
                    cudaSuccess);
          expect_batch(h, device.batch_at(d_step));
        }
      }
      std::vector<float> all(ds.images.size());
      std::vector<int32_t> labels(count);
      ASSERT_EQ(cudaMemcpy(all.data(), device.all_images(), sizeof(float) * all.size(),
                           cudaMemcpyDeviceToHost),
                cudaSuccess);
      ASSERT_EQ(cudaMemcpy(labels.data(), device.all_labels(), sizeof(int32_t) * count,
                           cudaMemcpyDeviceToHost),
                cudaSuccess);
      EXPECT_EQ(all, ds.images);
      EXPECT_EQ(labels, ds.labels);
    }
  }
  EXPECT_EQ(cudaFree(d_step), cudaSuccess);
  EXPECT_EQ(cudaStreamDestroy(stream), cudaSuccess);
}

}  // namespace
