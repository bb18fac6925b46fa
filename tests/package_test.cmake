# Installs the built project into a scratch prefix, runs the installed programs from there, then
# configures, builds and runs examples/consumer's three programs against it (a classifier and two
# regressions), as another CMake project would use the package. The libraries are static or
# shared, as the build made them (BUILD_SHARED_LIBS).
#   cmake -DBUILD_DIR=… -DSOURCE_DIR=… -DWORK_DIR=… -DLIBRARIES=… -DAPPS=ON|OFF \
#         -P package_test.cmake
foreach(var BUILD_DIR SOURCE_DIR WORK_DIR LIBRARIES APPS)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "package_test.cmake: -D${var}=… is required")
  endif()
endforeach()
file(REMOVE_RECURSE ${WORK_DIR})

function(step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "package_test: `${ARGN}` failed (${rc}):\n${out}\n${err}")
  endif()
  set(step_output "${out}" PARENT_SCOPE)
endfunction()

step(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix)
foreach(header base/cuda_check.h engine/engine.h kernels/gemm.h models/mlp.h data/loader.h)
  if(NOT EXISTS ${WORK_DIR}/prefix/include/gemm_mlp/${header})
    message(FATAL_ERROR "package_test: include/gemm_mlp/${header} was not installed")
  endif()
endforeach()
# LIBRARIES: the five libraries' file names, comma-separated (libgemm_engine.a or .so …).
string(REPLACE "," ";" libraries "${LIBRARIES}")
foreach(library IN LISTS libraries)
  file(GLOB found ${WORK_DIR}/prefix/lib*/${library})
  if(NOT found)
    message(FATAL_ERROR "package_test: ${library} was not installed")
  endif()
endforeach()
# The installed programs start from the prefix, with no library path set: their RPATH finds the
# shared libraries.
if(APPS)
  foreach(program train_mlp predict gemm_bench)
    step(${CMAKE_COMMAND} -E env --unset=LD_LIBRARY_PATH ${WORK_DIR}/prefix/bin/${program} --help)
    if(NOT step_output MATCHES "Usage")
      message(FATAL_ERROR "package_test: bin/${program} --help printed no usage:\n${step_output}")
    endif()
  endforeach()
  # A missing dataset's hint names the installed fetch script (not the source tree's), which runs.
  execute_process(COMMAND ${WORK_DIR}/prefix/bin/train_mlp --device cpu
                          --data-dir ${WORK_DIR}/no-data RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  if(rc EQUAL 0 OR NOT err MATCHES "run: ${WORK_DIR}/prefix/bin/gemm_mlp_fetch_mnist ")
    message(FATAL_ERROR "package_test: a missing dataset's hint does not name "
                        "bin/gemm_mlp_fetch_mnist (exit ${rc}):\n${out}${err}")
  endif()
  step(${WORK_DIR}/prefix/bin/gemm_mlp_fetch_mnist --help)
endif()
# The parent build's dependency locations (stb, a CMAKE_PREFIX_PATH for nlohmann_json …), so that
# a machine with them outside the system paths configures the same way.
set(prefix_path "${WORK_DIR}/prefix")
if(PREFIX_PATH)
  string(APPEND prefix_path ";${PREFIX_PATH}")
endif()
step(${CMAKE_COMMAND} -S ${SOURCE_DIR}/examples/consumer -B ${WORK_DIR}/build
     "-DCMAKE_PREFIX_PATH=${prefix_path}" -DCMAKE_BUILD_TYPE=Release)
step(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
foreach(program xor_mlp fit_sine regression)
  step(${CMAKE_COMMAND} -E env --unset=LD_LIBRARY_PATH ${WORK_DIR}/build/${program})
  message(STATUS "package_test: ${step_output}")
endforeach()
# regression's first line is the trained network's loss, evaluated, not the mean of every training
# step's (which reads as a bad fit right above a good one).
if(NOT step_output MATCHES "^mse 0\\.000[0-9]+ \\(the mean over the 1000 training steps: ")
  message(FATAL_ERROR "package_test: regression printed no evaluated mse below 0.001:\n${step_output}")
endif()

# As a subproject: no tests, no apps, and no build type written into the parent's cache.
file(WRITE ${WORK_DIR}/parent/CMakeLists.txt
     "cmake_minimum_required(VERSION 3.24)\nproject(parent LANGUAGES CXX)\n"
     "add_subdirectory(${SOURCE_DIR} gemm_mlp)\n")
step(${CMAKE_COMMAND} -S ${WORK_DIR}/parent -B ${WORK_DIR}/parent-build
     -DSTB_INCLUDE_DIR=${STB_INCLUDE_DIR} "-DCMAKE_PREFIX_PATH=${PREFIX_PATH}")
file(STRINGS ${WORK_DIR}/parent-build/CMakeCache.txt cache)
foreach(wanted "CMAKE_BUILD_TYPE:STRING=" "GEMM_MLP_BUILD_TESTS:BOOL=OFF"
        "GEMM_MLP_BUILD_APPS:BOOL=OFF")
  list(FIND cache "${wanted}" found)
  if(found EQUAL -1)
    message(FATAL_ERROR "package_test: as a subproject, the parent's cache lacks '${wanted}'")
  endif()
endforeach()
