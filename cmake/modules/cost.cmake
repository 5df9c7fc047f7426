# Cost-model extras: the XLA conformance-vector runner (shardlab-cost-conformance)
# and its ctest registration. Depends only on shardlab_cost, never on the IR.
if(NOT EMSCRIPTEN)
  set(SHARDLAB_COST_ROOT ${CMAKE_CURRENT_LIST_DIR}/../..)
  file(GLOB SHARDLAB_COST_CONFORMANCE_SOURCES CONFIGURE_DEPENDS
       ${SHARDLAB_COST_ROOT}/tests/conformance/xla/*.cpp)
  add_executable(shardlab-cost-conformance ${SHARDLAB_COST_CONFORMANCE_SOURCES})
  target_link_libraries(shardlab-cost-conformance PRIVATE shardlab_cost)
  target_compile_options(shardlab-cost-conformance PRIVATE ${SHARDLAB_WARNINGS})
  # The vectors are read from $SHARDLAB_SHARED (scripts/test.sh sets it) or
  # from ../shared beside the source tree.
  get_filename_component(SHARDLAB_DEFAULT_SHARED ${SHARDLAB_COST_ROOT}/../shared ABSOLUTE)
  target_compile_definitions(shardlab-cost-conformance PRIVATE
    SHARDLAB_DEFAULT_VECTORS="${SHARDLAB_DEFAULT_SHARED}/conformance/xla/vectors.json")
  if(SHARDLAB_BUILD_TESTS OR TARGET shardlab_cost_tests)
    add_test(NAME xla-vectors
             COMMAND shardlab-cost-conformance
                     --passing ${SHARDLAB_COST_ROOT}/tests/conformance/xla/passing.txt)
    # 77: the vectors are missing and a person allowed that (NOT RUN).
    set_tests_properties(xla-vectors PROPERTIES SKIP_RETURN_CODE 77)
  endif()

  # The GEMM model against XLA's measured table: in-sample exactness and
  # leave-one-out error (tests/accuracy/gemm_accuracy.cpp).
  add_executable(shardlab-gemm-accuracy
                 ${SHARDLAB_COST_ROOT}/tests/accuracy/gemm_accuracy.cpp)
  target_link_libraries(shardlab-gemm-accuracy PRIVATE shardlab_cost)
  target_compile_options(shardlab-gemm-accuracy PRIVATE ${SHARDLAB_WARNINGS})
  target_compile_definitions(shardlab-gemm-accuracy PRIVATE
    SHARDLAB_DEFAULT_XLA_GEMM_TABLE="${SHARDLAB_DEFAULT_SHARED}/data/xla-perf-tables/matmul_perf_table.txtpb")
  if(SHARDLAB_BUILD_TESTS OR TARGET shardlab_cost_tests)
    add_test(NAME cost-accuracy COMMAND shardlab-gemm-accuracy)
    set_tests_properties(cost-accuracy PROPERTIES SKIP_RETURN_CODE 77)
    # The same checks on a model made wrong on purpose (rates 25% high):
    # the held-out and off-grid checks must fail on it.
    add_test(NAME cost-accuracy-fails-when-wrong
             COMMAND shardlab-gemm-accuracy --scale-model 1.25)
    set_tests_properties(cost-accuracy-fails-when-wrong PROPERTIES
      PASS_REGULAR_EXPRESSION
      "FAIL: sm_90 f32xf32->f32 accurate held-out above the goal.*FAIL: sm_90 f32xf32->f32: an off-grid query is not")
  endif()
endif()

# The cost CLI (shardlab-cost) over the JSON API, its argument-parsing tests
# and a CLI run on the bundled table.
if(NOT EMSCRIPTEN)
  add_library(shardlab_cost_cli STATIC ${SHARDLAB_COST_ROOT}/core/tools/cost_cli.cpp)
  target_link_libraries(shardlab_cost_cli PUBLIC shardlab_core)
  target_compile_options(shardlab_cost_cli PRIVATE ${SHARDLAB_WARNINGS})
  add_executable(shardlab-cost ${SHARDLAB_COST_ROOT}/core/tools/shardlab_cost.cpp)
  target_link_libraries(shardlab-cost PRIVATE shardlab_cost_cli)
  target_compile_options(shardlab-cost PRIVATE ${SHARDLAB_WARNINGS})
  if(SHARDLAB_BUILD_TESTS)
    find_package(doctest REQUIRED)
    add_executable(shardlab_cost_cli_tests
                   ${SHARDLAB_COST_ROOT}/tests/unit/cost/cli/cost_cli_test.cpp)
    target_include_directories(shardlab_cost_cli_tests PRIVATE
                               ${SHARDLAB_COST_ROOT}/core/tools)
    target_link_libraries(shardlab_cost_cli_tests PRIVATE shardlab_cost_cli
                                                          doctest::doctest)
    target_compile_options(shardlab_cost_cli_tests PRIVATE ${SHARDLAB_WARNINGS})
    target_compile_definitions(shardlab_cost_cli_tests PRIVATE
      SHARDLAB_SOURCE_DIR="${SHARDLAB_COST_ROOT}")
    add_test(NAME cost-cli-args COMMAND shardlab_cost_cli_tests)
    add_test(NAME cost-cli
             COMMAND ${CMAKE_COMMAND} -DCLI=$<TARGET_FILE:shardlab-cost>
                     -DTABLE=${SHARDLAB_COST_ROOT}/examples/tables/h100_analytical.shardlab.json
                     -P ${SHARDLAB_COST_ROOT}/tests/unit/cost/cli/run_cost_cli.cmake)
  endif()
endif()

# libFuzzer target over the table loaders (JSON loader/validator and XLA
# text-proto importers); seeds in tests/fuzz/cost_corpus and examples/tables.
if(SHARDLAB_BUILD_FUZZ)
  add_executable(shardlab_fuzz_cost_tables
                 ${CMAKE_CURRENT_LIST_DIR}/../../tests/fuzz/fuzz_cost_tables.cpp)
  target_compile_options(shardlab_fuzz_cost_tables PRIVATE -fsanitize=fuzzer)
  target_link_options(shardlab_fuzz_cost_tables PRIVATE -fsanitize=fuzzer)
  target_link_libraries(shardlab_fuzz_cost_tables PRIVATE shardlab_cost)
endif()
