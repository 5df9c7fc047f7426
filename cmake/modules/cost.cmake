# Cost-model extras: the XLA conformance-vector runner (shardlab-cost-conformance)
# and its ctest registration. Depends only on shardlab_cost, never on the IR.
if(NOT EMSCRIPTEN)
  set(SHARDLAB_COST_ROOT ${CMAKE_CURRENT_LIST_DIR}/../..)
  file(GLOB SHARDLAB_COST_CONFORMANCE_SOURCES CONFIGURE_DEPENDS
       ${SHARDLAB_COST_ROOT}/tests/conformance/xla/*.cpp)
  add_executable(shardlab-cost-conformance ${SHARDLAB_COST_CONFORMANCE_SOURCES})
  target_link_libraries(shardlab-cost-conformance PRIVATE shardlab_cost)
  target_compile_options(shardlab-cost-conformance PRIVATE ${SHARDLAB_WARNINGS})
  if(SHARDLAB_BUILD_TESTS OR TARGET shardlab_cost_tests)
    add_test(NAME xla-vectors
             COMMAND shardlab-cost-conformance
                     ${SHARDLAB_COST_ROOT}/../shared/conformance/xla/vectors.json
                     --passing ${SHARDLAB_COST_ROOT}/tests/conformance/xla/passing.txt)
  endif()
endif()
