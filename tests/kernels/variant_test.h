// Registration of test_gemm's parameterised tests under the names ctest should list, and the
// helpers for naming them.
#pragma once

#include <gtest/gtest.h>

#include <cctype>
#include <string>
#include <utility>
#include <vector>

#include "kernels/gemm.h"

namespace gemm_test {

// A variant or parameter name as a test name: anything but letters and digits becomes '_'.
inline std::string safe_name(std::string s) {
  for (char& ch : s)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return s;
}

inline std::string variant_param_name(const std::string& v) { return safe_name(v); }

// The names of all variants, or of the device (CUDA) ones only.
inline std::vector<std::string> variant_names(bool device_only) {
  std::vector<std::string> out;
  for (const gemm::Variant& v : gemm::variants())
    if (!device_only || v.device == gemm::Device::CUDA) out.push_back(v.name);
  return out;
}

// gtest's TEST_P would give ctest names ending in "# GetParam() = …" (gtest_discover_tests keeps
// that comment when a test's parameter suffix is a name rather than an index), so the
// parameterised tests are registered by hand under the names ctest should list:
// <suite>.<Kind>/<param name>.
template <class P, class Self>
class Parameterised : public ::testing::Test {
 public:
  using Body = void (Self::*)();
  const P& GetParam() const { return param_; }
  void TestBody() override { (static_cast<Self*>(this)->*body_)(); }

  static void register_all(const char* suite,
                           const std::vector<std::pair<const char*, Body>>& bodies,
                           const std::vector<P>& params, std::string (*name)(const P&)) {
    for (const auto& [kind, body] : bodies)
      for (const P& param : params) {
        const std::string test = std::string(kind) + "/" + name(param);
        ::testing::RegisterTest(suite, test.c_str(), nullptr, nullptr, __FILE__, __LINE__,
                                [param, body = body]() -> Self* {
                                  auto* t = new Self;
                                  t->param_ = param;
                                  t->body_ = body;
                                  return t;
                                });
      }
  }

 private:
  P param_{};
  Body body_ = nullptr;
};

}  // namespace gemm_test
