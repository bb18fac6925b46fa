# The CUDA build's defaults for this machine, so that a first build compiles each kernel once and
# carries only what the machine can use. Included before project().
#
# CMAKE_CUDA_ARCHITECTURES, unless -DCMAKE_CUDA_ARCHITECTURES or the CUDAARCHS environment
# variable chose them:
#   - with GPUs, the compute capabilities nvidia-smi reports (an H200: 90);
#   - without one, 80 alone: the oldest architecture the project supports. Its PTX is embedded
#     beside the sm_80 code, and the driver compiles it for any newer GPU at the first launch, so
#     the binaries still run on every GPU the project supports.
# More, for binaries to copy to other machines: -DCMAKE_CUDA_ARCHITECTURES="80;86;89;90" (the
# former default), any list of 80 or newer. all and all-major are refused: they include
# architectures below 8.0, which lack the cp.async the kernels use. The Hopper-only kernels are
# built as sm_90a whatever the list says (kernels/CMakeLists.txt).
#
# GEMM_MLP_LINEINFO (-lineinfo: device line tables, which compute-sanitizer and Nsight Compute
# report source lines with; they make the device code two to three times larger): on where
# nvidia-smi finds a GPU, off elsewhere.
set(gemm_mlp_oldest_architecture 80)
set(gemm_mlp_gpu_architectures "")
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
                          "8.0; building for ${gemm_mlp_oldest_architecture}, whose code that GPU "
                          "cannot run: train_mlp and predict take --device cpu")
          set(arch ${gemm_mlp_oldest_architecture})
        endif()
        list(APPEND gemm_mlp_gpu_architectures ${arch})
      endif()
    endforeach()
    list(REMOVE_DUPLICATES gemm_mlp_gpu_architectures)
    list(SORT gemm_mlp_gpu_architectures COMPARE NATURAL)
  endif()
endif()

if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES AND NOT DEFINED ENV{CUDAARCHS})
  if(gemm_mlp_gpu_architectures)
    set(gemm_mlp_architectures ${gemm_mlp_gpu_architectures})
    set(gemm_mlp_why "the GPUs nvidia-smi reports")
  else()
    set(gemm_mlp_architectures ${gemm_mlp_oldest_architecture})
    set(gemm_mlp_why "no GPU found: the oldest supported, which newer GPUs run through its PTX")
  endif()
  set(CMAKE_CUDA_ARCHITECTURES "${gemm_mlp_architectures}" CACHE STRING
      "CUDA architectures to build for (default: this machine's GPUs, or 80 without one)")
  message(STATUS "gemm_mlp: CUDA architectures ${gemm_mlp_architectures} (${gemm_mlp_why}); "
                 "-DCMAKE_CUDA_ARCHITECTURES=\"80;86;89;90\" builds for more")
endif()

# A list chosen by hand: every entry 80 or newer, checked here rather than by an #error deep in
# the build.
if(DEFINED CMAKE_CUDA_ARCHITECTURES)
  set(gemm_mlp_chosen "${CMAKE_CUDA_ARCHITECTURES}")
  set(gemm_mlp_source "CMAKE_CUDA_ARCHITECTURES")
else()
  set(gemm_mlp_chosen "$ENV{CUDAARCHS}")
  set(gemm_mlp_source "the CUDAARCHS environment variable")
endif()
foreach(arch IN LISTS gemm_mlp_chosen)
  if(arch MATCHES "^([0-9]+)[a-z]?(-real|-virtual)?$")
    if(CMAKE_MATCH_1 LESS gemm_mlp_oldest_architecture)
      message(FATAL_ERROR "gemm_mlp: ${gemm_mlp_source} lists ${arch}, below "
                          "${gemm_mlp_oldest_architecture}: the kernels need cp.async (sm_80 or "
                          "newer). For example: -DCMAKE_CUDA_ARCHITECTURES=\"80;86;89;90\"")
    endif()
  elseif(arch STREQUAL "all" OR arch STREQUAL "all-major")
    message(FATAL_ERROR "gemm_mlp: ${gemm_mlp_source} is '${arch}', which includes architectures "
                        "below ${gemm_mlp_oldest_architecture} that lack the kernels' cp.async; "
                        "list them instead, for example -DCMAKE_CUDA_ARCHITECTURES=\"80;86;89;90\"")
  endif()
endforeach()

if(gemm_mlp_gpu_architectures)
  set(gemm_mlp_lineinfo_default ON)
else()
  set(gemm_mlp_lineinfo_default OFF)
endif()
option(GEMM_MLP_LINEINFO "Compile device code with -lineinfo (for compute-sanitizer and Nsight)"
       ${gemm_mlp_lineinfo_default})
