// The kernels library as -DGEMM_MLP_GPU_KERNELS=OFF builds it (scripts/train.sh on a machine
// without a GPU): every variant still listed, each device one unavailable with the reason that
// says how to rebuild, and refused when run, never a silent fallback; the host variant runs.
// Built from kernels/dispatch.cpp, no_gpu_kernels.cpp, auto.cpp and cpu.cpp with
// GEMM_MLP_NO_GPU_KERNELS defined, as kernels/CMakeLists.txt builds them then. No GPU needed.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernels/gemm.h"

namespace {

constexpr const char* kRebuild = "rebuild with cmake -S . -B build -DGEMM_MLP_GPU_KERNELS=ON";

TEST(NoGpuKernels, EveryDeviceVariantIsUnavailableAndSaysHowToRebuild) {
  int device_variants = 0;
  for (const gemm::Variant& v : gemm::variants()) {
    const char* why = gemm::unavailable_reason(v);
    if (v.device == gemm::Device::CPU) {
      EXPECT_EQ(why, nullptr) << v.name;
      continue;
    }
    ++device_variants;
    ASSERT_NE(why, nullptr) << v.name;
    EXPECT_NE(std::string(why).find("this build has no GPU kernels"), std::string::npos) << why;
    EXPECT_NE(std::string(why).find(kRebuild), std::string::npos) << why;
  }
  EXPECT_GE(device_variants, 10);
}

TEST(NoGpuKernels, RunningADeviceVariantThrowsNamingIt) {
  std::vector<float> a(4, 1.0f), b(4, 1.0f), c(4, 0.0f);
  gemm::Problem p{};
  p.m = p.n = p.k = 2;
  p.a = a.data(), p.b = b.data(), p.c = c.data();
  p.lda = p.ldb = p.ldc = 2;
  p.alpha = 1.0f, p.beta = 0.0f;
  for (const char* name : {"vec", "wgmma", "tf32_fast", "auto", "cublas"}) {
    try {
      gemm::run(name, p);
      ADD_FAILURE() << name << " ran";
    } catch (const gemm::Error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(std::string("gemm: ") + name + ": this build has no GPU kernels"),
                std::string::npos)
          << what;
    }
  }
  gemm::run("cpu", p);  // the host variant is there
  for (float v : c) EXPECT_EQ(v, 2.0f);
}

}  // namespace
