// Checkpoints (safetensors): round trips of parameters, metadata and optimiser state; a resumed
// run that continues exactly; PyTorch's dtypes; and the errors of bad files, each naming the file
// and the tensor. The training pair's saves and their stops: checkpoint_pair_test.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "checkpoint_fixture.h"
#include "engine/engine.h"
#include "expect_error.h"
#include "random_data.h"

namespace {

using engine::Context;
using engine::Device;
using engine::Tensor;

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
