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

