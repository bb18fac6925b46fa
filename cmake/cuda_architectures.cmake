# The default CUDA architectures: what this machine needs, so that a first build compiles each
# kernel once. Included before project(), only when neither -DCMAKE_CUDA_ARCHITECTURES nor the
# CUDAARCHS environment variable chose them:
#   - with GPUs, the compute capabilities nvidia-smi reports (an H200: 90);
#   - without one, 80 alone: the oldest architecture the project supports. Its PTX is embedded
#     beside the sm_80 code, and the driver compiles it for any newer GPU at the first launch, so
#     the binaries still run on every GPU the project supports.
# More, for binaries to copy to other machines: -DCMAKE_CUDA_ARCHITECTURES="80;86;89;90" (the
# former default) or all-major. The Hopper-only kernels are built as sm_90a whatever the list
# says (kernels/CMakeLists.txt).
set(gemm_mlp_oldest_architecture 80)
set(gemm_mlp_detected "")
find_program(GEMM_MLP_NVIDIA_SMI nvidia-smi)
mark_as_advanced(GEMM_MLP_NVIDIA_SMI)
if(GEMM_MLP_NVIDIA_SMI)
  execute_process(COMMAND ${GEMM_MLP_NVIDIA_SMI} --query-gpu=compute_cap --format=csv,noheader
                  OUTPUT_VARIABLE gemm_mlp_caps RESULT_VARIABLE gemm_mlp_rc ERROR_QUIET TIMEOUT 20)
  if(gemm_mlp_rc EQUAL 0)
    string(REPLACE "\n" ";" gemm_mlp_caps "${gemm_mlp_caps}")
    foreach(cap IN LISTS gemm_mlp_caps)
      string(STRIP "${cap}" cap)
      if(cap MATCHES "^([0-9]+)\\.([0-9])$")
        set(arch "${CMAKE_MATCH_1}${CMAKE_MATCH_2}")
        if(arch LESS gemm_mlp_oldest_architecture)
          message(WARNING "gemm_mlp: a GPU of compute capability ${cap} is below the project's "
                          "8.0; building for ${gemm_mlp_oldest_architecture}, which it cannot run "
                          "(the programs will use the CPU)")
          set(arch ${gemm_mlp_oldest_architecture})
        endif()
        list(APPEND gemm_mlp_detected ${arch})
      endif()
    endforeach()
    list(REMOVE_DUPLICATES gemm_mlp_detected)
    list(SORT gemm_mlp_detected COMPARE NATURAL)
  endif()
endif()
if(gemm_mlp_detected)
  set(gemm_mlp_why "the GPUs nvidia-smi reports")
else()
  set(gemm_mlp_detected ${gemm_mlp_oldest_architecture})
  set(gemm_mlp_why "no GPU found: the oldest supported, which newer GPUs run through its PTX")
endif()
set(CMAKE_CUDA_ARCHITECTURES "${gemm_mlp_detected}" CACHE STRING
    "CUDA architectures to build for (default: this machine's GPUs, or 80 without one)")
message(STATUS "gemm_mlp: CUDA architectures ${gemm_mlp_detected} (${gemm_mlp_why}); "
               "-DCMAKE_CUDA_ARCHITECTURES=\"80;86;89;90\" or all-major builds for more")
