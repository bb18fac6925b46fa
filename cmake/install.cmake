# `cmake --install` puts the programs train_mlp, predict and gemm_bench in bin/ (when built, with
# scripts/setup/fetch_mnist.sh as gemm_mlp_fetch_mnist, which their hints name), the
# five libraries (static, or shared with BUILD_SHARED_LIBS) in lib/, their public headers (under
# include/gemm_mlp/, so that #include "engine/engine.h" works as in this tree) and a package that
# find_package finds:
#   find_package(gemm_mlp CONFIG REQUIRED)
#   target_link_libraries(app PRIVATE gemm_mlp::models)   # or ::engine, ::data, ::kernels
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(GEMM_MLP_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/gemm_mlp)
install(TARGETS gemm_base gemm_kernels gemm_engine gemm_data gemm_models EXPORT gemm_mlpTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(EXPORT gemm_mlpTargets NAMESPACE gemm_mlp:: DESTINATION ${GEMM_MLP_CMAKE_DIR})
if(GEMM_MLP_BUILD_APPS)
  install(TARGETS train_mlp predict gemm_bench RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  # The script the programs' hints name for a missing dataset (data::fetch_command finds it beside
  # them): gemm_mlp_fetch_mnist [fashion] DIR.
  install(PROGRAMS ${PROJECT_SOURCE_DIR}/scripts/setup/fetch_mnist.sh
          DESTINATION ${CMAKE_INSTALL_BINDIR} RENAME gemm_mlp_fetch_mnist)
endif()

# The public headers: the GEMM contract, and everything in base/ (the error type), engine/, models/
# and data/ (engine/runtime/backend.h is included by engine/network/optim.h).
install(FILES ${PROJECT_SOURCE_DIR}/kernels/gemm.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/gemm_mlp/kernels)
foreach(dir base engine models data)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${dir}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/gemm_mlp/${dir}
          FILES_MATCHING PATTERN "*.h")
endforeach()

configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/gemm_mlpConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/gemm_mlpConfig.cmake
                              INSTALL_DESTINATION ${GEMM_MLP_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/gemm_mlpConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/gemm_mlpConfig.cmake
              ${PROJECT_BINARY_DIR}/gemm_mlpConfigVersion.cmake
        DESTINATION ${GEMM_MLP_CMAKE_DIR})
