# Native collectors (native_collectors/): a pure C++ planning library that
# builds everywhere (sweeps, statistics, bandwidth formulas, metadata, resume;
# unit-tested in shardlab_cost_tests), and the CUDA/NCCL/cuBLASLt programs
# shardlab-collect-collectives and shardlab-collect-gemm, built only when a
# CUDA toolkit (and, for collectives, NCCL) is found. MPI is optional.
if(EMSCRIPTEN)
  return()
endif()

set(SHARDLAB_COLLECTORS_DIR ${CMAKE_CURRENT_LIST_DIR}/../../native_collectors)
file(GLOB SHARDLAB_COLLECTORS_PLAN_SOURCES CONFIGURE_DEPENDS
     ${SHARDLAB_COLLECTORS_DIR}/src/*.cpp)
add_library(shardlab_collectors_plan STATIC ${SHARDLAB_COLLECTORS_PLAN_SOURCES})
target_include_directories(shardlab_collectors_plan PUBLIC
                           ${SHARDLAB_COLLECTORS_DIR}/include)
target_compile_options(shardlab_collectors_plan PRIVATE ${SHARDLAB_WARNINGS})
target_link_libraries(shardlab_collectors_plan PUBLIC shardlab_cost)
if(TARGET shardlab_cost_tests)
  target_link_libraries(shardlab_cost_tests PRIVATE shardlab_collectors_plan)
endif()

option(SHARDLAB_BUILD_COLLECTORS
       "Build the CUDA collectors when a CUDA toolkit is found" ON)
option(SHARDLAB_COLLECTORS_MPI "Build the collectors with MPI when found" ON)
if(NOT SHARDLAB_BUILD_COLLECTORS)
  return()
endif()

include(CheckLanguage)
check_language(CUDA)
find_package(CUDAToolkit QUIET)
if(NOT CMAKE_CUDA_COMPILER OR NOT CUDAToolkit_FOUND)
  message(STATUS "shardlab collectors: no CUDA toolkit, not built")
  return()
endif()
if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
  set(CMAKE_CUDA_ARCHITECTURES 80 90 100)
endif()
enable_language(CUDA)
# One CUDA runtime: the shared one that CUDA::cudart also links.
set(CMAKE_CUDA_RUNTIME_LIBRARY Shared)

# NCCL: next to the toolkit, or NCCL_ROOT / NCCL_LIBRARY (e.g. the
# nvidia-nccl-cu13 wheel's nvidia/nccl directory, which has libnccl.so.2).
find_path(NCCL_INCLUDE_DIR nccl.h
          HINTS ${NCCL_ROOT}/include ${CUDAToolkit_INCLUDE_DIRS})
find_library(NCCL_LIBRARY NAMES nccl libnccl.so.2
             HINTS ${NCCL_ROOT}/lib ${CUDAToolkit_LIBRARY_DIR})

set(SHARDLAB_COLLECTORS_CUDA ${SHARDLAB_COLLECTORS_DIR}/cuda)
add_library(shardlab_collectors_cuda STATIC
            ${SHARDLAB_COLLECTORS_CUDA}/device_info.cpp
            ${SHARDLAB_COLLECTORS_CUDA}/progress.cpp
            ${SHARDLAB_COLLECTORS_CUDA}/kernels.cu)
target_include_directories(shardlab_collectors_cuda PUBLIC
                           ${SHARDLAB_COLLECTORS_CUDA})
target_link_libraries(shardlab_collectors_cuda PUBLIC
                      shardlab_collectors_plan CUDA::cudart ${CMAKE_DL_LIBS})
target_compile_options(shardlab_collectors_cuda PRIVATE
                       $<$<COMPILE_LANGUAGE:CXX>:${SHARDLAB_WARNINGS}>)
# The kernels need only C++17 (CMake 3.25 has no CUDA20 dialect for nvcc).
set_target_properties(shardlab_collectors_cuda PROPERTIES CUDA_STANDARD 17
                      CUDA_STANDARD_REQUIRED ON)

add_executable(shardlab-collect-gemm ${SHARDLAB_COLLECTORS_CUDA}/gemm_main.cpp
                                     ${SHARDLAB_COLLECTORS_CUDA}/gemm_runner.cpp)
target_link_libraries(shardlab-collect-gemm PRIVATE shardlab_collectors_cuda
                      CUDA::cublasLt)
target_compile_options(shardlab-collect-gemm PRIVATE ${SHARDLAB_WARNINGS})
set(SHARDLAB_COLLECTOR_TARGETS shardlab-collect-gemm)

if(NCCL_INCLUDE_DIR AND NCCL_LIBRARY)
  add_executable(shardlab-collect-collectives
                 ${SHARDLAB_COLLECTORS_CUDA}/collectives_main.cpp
                 ${SHARDLAB_COLLECTORS_CUDA}/collectives_runner.cpp
                 ${SHARDLAB_COLLECTORS_CUDA}/launcher.cpp)
  target_include_directories(shardlab-collect-collectives PRIVATE
                             ${NCCL_INCLUDE_DIR})
  target_link_libraries(shardlab-collect-collectives PRIVATE
                        shardlab_collectors_cuda ${NCCL_LIBRARY})
  target_compile_options(shardlab-collect-collectives PRIVATE
                         ${SHARDLAB_WARNINGS})
  if(SHARDLAB_COLLECTORS_MPI)
    enable_language(C) # FindMPI's C component needs it
    find_package(MPI QUIET COMPONENTS C)
  endif()
  if(MPI_C_FOUND)
    target_link_libraries(shardlab-collect-collectives PRIVATE MPI::MPI_C)
    target_compile_definitions(shardlab-collect-collectives PRIVATE
                               SHARDLAB_WITH_MPI=1 OMPI_SKIP_MPICXX=1
                               MPICH_SKIP_MPICXX=1)
  endif()
  list(APPEND SHARDLAB_COLLECTOR_TARGETS shardlab-collect-collectives)
  message(STATUS "shardlab collectors: NCCL ${NCCL_LIBRARY}, MPI ${MPI_C_FOUND}")
else()
  message(STATUS "shardlab collectors: NCCL not found, collective sweep not built")
endif()
add_custom_target(shardlab_collectors DEPENDS ${SHARDLAB_COLLECTOR_TARGETS})

# GPU-free checks of the programs: help, dry-run plans, and a clear error
# (not a crash) when no CUDA device is visible. tests/expect_run.py checks the
# exit status as well as the output (PASS_REGULAR_EXPRESSION alone would pass
# a crash after the matching line).
if(SHARDLAB_BUILD_TESTS)
  find_package(Python3 REQUIRED COMPONENTS Interpreter)
  set(SHARDLAB_EXPECT ${Python3_EXECUTABLE}
      ${CMAKE_CURRENT_LIST_DIR}/../../tests/expect_run.py)
  function(shardlab_expect_test name exit_status regex)
    add_test(NAME ${name}
             COMMAND ${SHARDLAB_EXPECT} --exit ${exit_status} --regex ${regex}
                     -- ${ARGN})
    set_tests_properties(${name} PROPERTIES ENVIRONMENT "CUDA_VISIBLE_DEVICES=")
  endfunction()
  shardlab_expect_test(collectors-gemm-dry-run 0 "# 750 points"
                       $<TARGET_FILE:shardlab-collect-gemm> --dry-run)
  shardlab_expect_test(collectors-gemm-no-gpu 1 "error: no CUDA device"
                       $<TARGET_FILE:shardlab-collect-gemm>
                       --out ${CMAKE_CURRENT_BINARY_DIR}/no_gpu_gemm.json)
  shardlab_expect_test(collectors-gemm-bad-flag 2 "unknown flag '--bogus'"
                       $<TARGET_FILE:shardlab-collect-gemm> --bogus)
  if(TARGET shardlab-collect-collectives)
    shardlab_expect_test(collectors-collectives-dry-run 0 "# 440 points"
                         $<TARGET_FILE:shardlab-collect-collectives> --dry-run)
    shardlab_expect_test(collectors-collectives-dry-run-2-nodes 0
      "all-reduce f32 1048576 \\[8,2\\]<=\\[2,8\\]T\\(1,0\\) non_world_level"
      $<TARGET_FILE:shardlab-collect-collectives> --dry-run --nodes 2
      --ops all-reduce -b 1M -e 1M)
    shardlab_expect_test(collectors-collectives-no-gpu 1 "error: no CUDA device"
                         $<TARGET_FILE:shardlab-collect-collectives>
                         --out ${CMAKE_CURRENT_BINARY_DIR}/no_gpu_coll.json)
  endif()
endif()
