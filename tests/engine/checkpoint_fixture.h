// The Checkpoint fixture of checkpoint_test.cpp and checkpoint_pair_test.cpp: a checkpoint path
// named after the running test (removed with its optimiser file and lock afterwards), a small
// model, and the file's bytes and JSON header.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

#include "engine/engine.h"

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
  static void build(engine::Context& ctx, engine::Sequential& net, int hidden) {
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
