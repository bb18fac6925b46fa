// Gemm/Malformed.<Kind>/<variant>: validation errors, for every variant, no GPU needed; and
// Gemm/DevicePointers.HostPointerRejected/<device variant>.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/device_buffer.h"
#include "gemm_harness.h"
#include "gpu_test.h"
#include "kernels/gemm.h"
#include "variant_test.h"

namespace gemm_test {
namespace {

using gemm::Op;

// ---------------------------------------------------------------------------------------------
// Malformed calls: gemm::Error with a message naming the problem, never a crash. Validation runs
// before anything touches the GPU, so these run for every variant without one.

// Expects gemm::run to throw gemm::Error whose message contains every one of `needles`.
void expect_error(const std::string& variant, const gemm::Problem& p,
                  const std::vector<std::string>& needles, const std::string& what) {
  try {
    gemm::run(variant, p);
    ADD_FAILURE() << what << ": no gemm::Error thrown";
  } catch (const gemm::Error& e) {
    const std::string msg = e.what();
    for (const std::string& n : needles)
      EXPECT_NE(msg.find(n), std::string::npos)
          << what << ": message lacks \"" << n << "\"; got: " << msg;
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ": threw something other than gemm::Error: " << e.what();
  }
}

class Malformed : public Parameterised<std::string, Malformed> {
 public:
  void BadSizes();
  void LeadingDimTooSmall();
  void NullPointers();
  void BadOp();
  void BadEpilogue();

 protected:
  // M = 5, N = 6, K = 7 (distinct, so a message names the right one), tight lds, in host
  // buffers big enough for any layout. A device variant never reaches them: validation throws
  // first.
  std::vector<float> a_ = std::vector<float>(64, 1.0f), b_ = a_, c_ = a_;
  gemm::Problem valid(Op op_a, Op op_b) {
    gemm::Problem p;
    p.op_a = op_a, p.op_b = op_b;
    p.m = 5, p.n = 6, p.k = 7;
    p.a = a_.data(), p.b = b_.data(), p.c = c_.data();
    p.lda = op_a == Op::N ? 7 : 5;
    p.ldb = op_b == Op::N ? 6 : 7;
    p.ldc = 6;
    return p;
  }
  // After the errors, a device variant must still work: the errors did not poison the context.
  void TearDown() override {
    const gemm::Variant& v = gemm::find_variant(GetParam());
    if (v.device != gemm::Device::CUDA || !gemm::cuda_device_available()) return;
    Batch batch({Case{Op::N, Op::T, 9, 10, 11}});
    const auto failures = run_and_check(v, batch);
    EXPECT_TRUE(failures.empty()) << "variant unusable after rejected calls: " << failures[0];
  }
};

void Malformed::BadSizes() {
  for (int bad : {0, -1, -1000}) {
    for (int which = 0; which < 3; ++which) {
      gemm::Problem p = valid(Op::N, Op::N);
      (which == 0 ? p.m : which == 1 ? p.n : p.k) = bad;
      expect_error(GetParam(), p, {"M, N and K must be >= 1", std::to_string(bad)},
                   std::string("dimension ") + "MNK"[which] + " = " + std::to_string(bad));
    }
  }
}

void Malformed::LeadingDimTooSmall() {
  for (Op op_a : {Op::N, Op::T})
    for (Op op_b : {Op::N, Op::T}) {
      const std::string layout = gemm::layout_name(op_a, op_b);
      const gemm::Problem ok = valid(op_a, op_b);
      for (int delta : {1, 3}) {
        gemm::Problem p = ok;
        p.lda = ok.lda - delta;
        expect_error(GetParam(), p, {"lda = " + std::to_string(p.lda), std::to_string(ok.lda)},
                     layout + " lda too small");
        p = ok;
        p.ldb = ok.ldb - delta;
        expect_error(GetParam(), p, {"ldb = " + std::to_string(p.ldb), std::to_string(ok.ldb)},
                     layout + " ldb too small");
        p = ok;
        p.ldc = ok.ldc - delta;
        expect_error(GetParam(), p, {"ldc = " + std::to_string(p.ldc), std::to_string(ok.ldc)},
                     layout + " ldc too small");
      }
      gemm::Problem p = ok;
      p.lda = 0;
      expect_error(GetParam(), p, {"lda = 0"}, layout + " lda = 0");
      p = ok;
      p.ldc = -4;
      expect_error(GetParam(), p, {"ldc = -4"}, layout + " ldc = -4");
    }
}

void Malformed::NullPointers() {
  gemm::Problem p = valid(Op::N, Op::T);
  p.a = nullptr;
  expect_error(GetParam(), p, {"A is a null pointer"}, "null A");
  p = valid(Op::N, Op::T);
  p.b = nullptr;
  expect_error(GetParam(), p, {"B is a null pointer"}, "null B");
  p = valid(Op::N, Op::T);
  p.c = nullptr;
  expect_error(GetParam(), p, {"C is a null pointer"}, "null C");
}

void Malformed::BadEpilogue() {
  gemm::Problem p = valid(Op::N, Op::T);
  p.epilogue = gemm::EpilogueOp::Bias;
  expect_error(GetParam(), p, {"epilogue bias needs a bias"}, "bias epilogue without a bias");
  p.epilogue = gemm::EpilogueOp::BiasRelu;
  expect_error(GetParam(), p, {"epilogue bias_relu needs a bias"}, "bias_relu without a bias");
  p.epilogue = gemm::EpilogueOp::ReluMask;
  expect_error(GetParam(), p, {"relu_mask needs a mask"}, "relu_mask without a mask");
  p.mask = a_.data();
  p.ldmask = 5;
  expect_error(GetParam(), p, {"ldmask = 5", "6"}, "relu_mask with ldmask < N");
  p.epilogue = static_cast<gemm::EpilogueOp>(9);
  expect_error(GetParam(), p, {"epilogue must be one of"}, "an unknown epilogue");
}

void Malformed::BadOp() {
  gemm::Problem p = valid(Op::N, Op::N);
  p.op_a = static_cast<Op>('X');
  expect_error(GetParam(), p, {"op_a and op_b"}, "op_a = 'X'");
}

const bool malformed_registered = [] {
  Malformed::register_all("Gemm/Malformed",
                          {{"BadSizes", &Malformed::BadSizes},
                           {"LeadingDimTooSmall", &Malformed::LeadingDimTooSmall},
                           {"NullPointers", &Malformed::NullPointers},
                           {"BadOp", &Malformed::BadOp},
                           {"BadEpilogue", &Malformed::BadEpilogue}},
                          variant_names(false), variant_param_name);
  return true;
}();

class DevicePointers : public Parameterised<std::string, DevicePointers> {
 public:
  void HostPointerRejected();
};

// A host pointer handed to a device variant is rejected before any kernel touches it, naming the
// operand, and the variant works afterwards.
void DevicePointers::HostPointerRejected() {
  VARIANT_TEST_OR_SKIP(gemm::find_variant(GetParam()));
  gemm::DeviceBuffer<float> da(64), db(64), dc(64);
  std::vector<float> host(64, 1.0f);
  gemm::Problem p;
  p.m = 4, p.n = 4, p.k = 4, p.lda = 4, p.ldb = 4, p.ldc = 4;
  const float* names_a[] = {host.data(), da.data(), da.data()};
  const float* names_b[] = {db.data(), host.data(), db.data()};
  float* names_c[] = {dc.data(), dc.data(), host.data()};
  const char* which[] = {"A is not device memory", "B is not device memory",
                         "C is not device memory"};
  for (int i = 0; i < 3; ++i) {
    p.a = names_a[i], p.b = names_b[i], p.c = names_c[i];
    expect_error(GetParam(), p, {which[i], GetParam()}, std::string("host ") + "ABC"[i]);
  }
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  Batch batch({Case{Op::T, Op::N, 9, 10, 11}});
  const auto failures = run_and_check(gemm::find_variant(GetParam()), batch);
  EXPECT_TRUE(failures.empty()) << failures[0];
}

const bool device_pointers_registered = [] {
  DevicePointers::register_all("Gemm/DevicePointers",
                               {{"HostPointerRejected", &DevicePointers::HostPointerRejected}},
                               variant_names(true), variant_param_name);
  return true;
}();

}  // namespace
}  // namespace gemm_test
