// The one dispatch point: the table of variants, argument validation, and run().
#include <cstdint>

#include "base/cuda_check.h"
#include "kernels/gemm.h"
#include "kernels/launchers.h"

namespace gemm {

const std::vector<Variant>& variants() {
  using namespace detail;
  static const std::vector<Variant> table = {
      {"naive", Device::CUDA, Precision::FP32, "one thread per element of C", launch_naive},
      {"tiled", Device::CUDA, Precision::FP32, "32x32 tiles of A and B in shared memory",
       launch_tiled},
      {"vec", Device::CUDA, Precision::FP32, "tiling with 128-bit float4 loads and stores",
       launch_vec},
      {"regtile", Device::CUDA, Precision::FP32,
       "128x128 block tile, 8x8 outputs per thread in registers", launch_regtile},
      {"dbuf", Device::CUDA, Precision::FP32,
       "regtile with two shared buffers, the next K tile loaded into registers during compute",
       launch_double_buffer},
      {"warptile", Device::CUDA, Precision::FP32,
       "block tile split into warp tiles, each into thread tiles", launch_warptile},
      {"tf32", Device::CUDA, Precision::TF32,
       "warp-level mma.sync TF32 tensor cores, fp32 accumulation; split-K", launch_tf32_mma},
      {"wgmma", Device::CUDA, Precision::TF32,
       "Hopper only: warpgroup wgmma TF32 from swizzled shared tiles; split-K", launch_wgmma,
       wgmma_unavailable},
      {"wgmma_ws", Device::CUDA, Precision::TF32,
       "Hopper only: wgmma fed by a TMA producer warpgroup through mbarriers; split-K",
       launch_wgmma_ws, wgmma_unavailable},
      {"tf32x3", Device::CUDA, Precision::FP32,
       "fp32-accurate TF32 tensor cores: each value split in two, three mma.sync per step",
       launch_tf32x3},
      {"tf32x3_ws", Device::CUDA, Precision::FP32,
       "Hopper only: fp32-accurate 3xTF32 on wgmma_ws, the remainders in shared memory",
       launch_tf32x3_ws, wgmma_unavailable},
      {"fast", Device::CUDA, Precision::FP32,
       "production fp32: warptile with a tile per shape, a deeper pipeline and split-K",
       launch_fast},
      {"tf32_fast", Device::CUDA, Precision::TF32,
       "production TF32: NN with B in registers, TN on K-major copies, else warp-specialised wgmma",
       launch_tf32_fast},
      {"tf32x3_fast", Device::CUDA, Precision::FP32,
       "production 3xTF32: steps 10 and 11 with a kernel and tile per shape", launch_tf32x3_fast},
      {"auto", Device::CUDA, Precision::FP32,
       "per shape and layout, the fastest fp32 kernel measured on this GPU", launch_auto},
      {"cublas", Device::CUDA, Precision::FP32, "cuBLAS SGEMM, TF32 off (reference)",
       launch_cublas},
      {"cublas_tf32", Device::CUDA, Precision::TF32, "cuBLAS SGEMM on TF32 tensor cores",
       launch_cublas_tf32},
      {"cpu", Device::CPU, Precision::FP32, "OpenBLAS cblas_sgemm on the host", launch_cpu},
  };
  return table;
}

const Variant& find_variant(const std::string& name) {
  for (const Variant& v : variants())
    if (name == v.name) return v;
  std::string msg = "gemm: unknown variant '" + name + "'; known variants:";
  for (const Variant& v : variants()) msg += std::string(" ") + v.name;
  throw Error(msg);
}

#ifdef GEMM_MLP_NO_GPU_KERNELS
namespace detail {
const char* no_gpu_kernels_reason();  // no_gpu_kernels.cpp, in a build without GPU kernels
}
#endif

const char* unavailable_reason(const Variant& variant) {
#ifdef GEMM_MLP_NO_GPU_KERNELS
  if (variant.device == Device::CUDA) return detail::no_gpu_kernels_reason();
#endif
  return variant.unavailable ? variant.unavailable() : nullptr;
}

std::string layout_name(Op op_a, Op op_b) {
  return std::string(1, static_cast<char>(op_a)) + static_cast<char>(op_b);
}

const char* epilogue_name(EpilogueOp e) {
  switch (e) {
    case EpilogueOp::None:
      return "none";
    case EpilogueOp::Bias:
      return "bias";
    case EpilogueOp::BiasRelu:
      return "bias_relu";
    case EpilogueOp::ReluMask:
      return "relu_mask";
  }
  return "unknown";
}

namespace {

void require(bool ok, const std::string& what) {
  if (!ok) throw Error("gemm: " + what);
}

void require_ld(int ld, int needed, const char* ld_name, const char* why) {
  require(ld >= needed, std::string(ld_name) + " = " + std::to_string(ld) + " is smaller than " +
                            std::to_string(needed) + ", the row length of " + why);
}

bool is_op(Op op) { return op == Op::N || op == Op::T; }

}  // namespace

void validate(const Problem& p) {
  require(is_op(p.op_a) && is_op(p.op_b), "op_a and op_b must each be Op::N or Op::T");
  require(p.m >= 1 && p.n >= 1 && p.k >= 1,
          "M, N and K must be >= 1 (got M = " + std::to_string(p.m) +
              ", N = " + std::to_string(p.n) + ", K = " + std::to_string(p.k) + ")");
  require(p.a != nullptr, "A is a null pointer");
  require(p.b != nullptr, "B is a null pointer");
  require(p.c != nullptr, "C is a null pointer");
  if (p.op_a == Op::N)
    require_ld(p.lda, p.k, "lda", "A (M x K, op_a = N)");
  else
    require_ld(p.lda, p.m, "lda", "A (K x M, op_a = T)");
  if (p.op_b == Op::N)
    require_ld(p.ldb, p.n, "ldb", "B (K x N, op_b = N)");
  else
    require_ld(p.ldb, p.k, "ldb", "B (N x K, op_b = T)");
  require_ld(p.ldc, p.n, "ldc", "C (M x N)");
  switch (p.epilogue) {
    case EpilogueOp::None:
      break;
    case EpilogueOp::Bias:
    case EpilogueOp::BiasRelu:
      require(p.bias != nullptr,
              std::string("epilogue ") + epilogue_name(p.epilogue) + " needs a bias (N values)");
      break;
    case EpilogueOp::ReluMask:
      require(p.mask != nullptr, "epilogue relu_mask needs a mask (M x N)");
      require_ld(p.ldmask, p.n, "ldmask", "the mask (M x N)");
      break;
    default:
      require(false, "epilogue must be one of none, bias, bias_relu, relu_mask");
  }
}

namespace {

// A device variant handed host memory would fault inside the kernel and poison the context; catch
// it here instead. cudaPointerGetAttributes does not synchronise.
void require_device_pointer(const void* ptr, const char* name, const char* variant) {
  cudaPointerAttributes attr{};
  CUDA_CHECK(cudaPointerGetAttributes(&attr, ptr));
  require(
      attr.type == cudaMemoryTypeDevice || attr.type == cudaMemoryTypeManaged,
      std::string(name) + " is not device memory, but variant '" + variant + "' runs on the GPU");
}

}  // namespace

void run(const Variant& variant, const Problem& p, cudaStream_t stream) {
  validate(p);
#ifdef GEMM_MLP_NO_GPU_KERNELS
  if (variant.device == Device::CUDA)
    throw Error(std::string("gemm: ") + variant.name + ": " + detail::no_gpu_kernels_reason());
#endif
  if (variant.device == Device::CUDA) {
    require_device_pointer(p.a, "A", variant.name);
    require_device_pointer(p.b, "B", variant.name);
    require_device_pointer(p.c, "C", variant.name);
    if (p.bias) require_device_pointer(p.bias, "the bias", variant.name);
    if (p.mask) require_device_pointer(p.mask, "the mask", variant.name);
  }
  variant.launch(p, stream);
}

void run(const std::string& variant, const Problem& p, cudaStream_t stream) {
  run(find_variant(variant), p, stream);
}

namespace {
thread_local WorkspaceAllocator* installed_allocator = nullptr;
}  // namespace

ScopedWorkspaceAllocator::ScopedWorkspaceAllocator(WorkspaceAllocator& allocator)
    : previous_(installed_allocator) {
  installed_allocator = &allocator;
}

ScopedWorkspaceAllocator::~ScopedWorkspaceAllocator() { installed_allocator = previous_; }

namespace detail {
WorkspaceAllocator* installed_workspace_allocator() { return installed_allocator; }
}  // namespace detail

}  // namespace gemm
