# The interpreter's CLI (shardlab-run); the interpreter itself is the
# interpreter layer of the core (core/src/interpreter).
if(NOT EMSCRIPTEN)
  add_executable(shardlab-run
                 ${CMAKE_CURRENT_LIST_DIR}/../../core/tools/shardlab_run.cpp)
  target_link_libraries(shardlab-run PRIVATE shardlab_partition_check)
  target_compile_options(shardlab-run PRIVATE ${SHARDLAB_WARNINGS})
  # A deliberately breakable shardlab-run (SHARDLAB_FAULT_DROP_COLLECTIVE,
  # SHARDLAB_FAULT_SLICE_OFFSET) for the test of the partition stage.
  add_executable(shardlab-run-faulty
                 ${CMAKE_CURRENT_LIST_DIR}/../../core/tools/shardlab_run.cpp)
  target_link_libraries(shardlab-run-faulty PRIVATE shardlab_partition_check)
  target_compile_options(shardlab-run-faulty PRIVATE ${SHARDLAB_WARNINGS})
  target_compile_definitions(shardlab-run-faulty PRIVATE
                             SHARDLAB_FAULT_INJECTION=1)
  # hello and the playground's examples, partitioned (their own shardings
  # and two seeds) and run on simulated devices, equal their global run;
  # the faulty build (a collective dropped) must be caught.
  if(SHARDLAB_BUILD_TESTS)
    find_package(Python3 REQUIRED COMPONENTS Interpreter)
    add_test(NAME examples-partition
             COMMAND ${Python3_EXECUTABLE}
                     ${CMAKE_CURRENT_LIST_DIR}/../../tests/examples/test_examples_partition.py
                     --interpreter $<TARGET_FILE:shardlab-run>
                     --faulty $<TARGET_FILE:shardlab-run-faulty>)
    # Pipeline parallelism (bench/models/gen_pipeline.py): self-checking
    # pipelines equal the step computed in Python's integers, globally and
    # partitioned; their estimate (ticks, GEMMs, permutes, memory in
    # flight) equals the one worked out by hand.
    add_test(NAME pipeline
             COMMAND ${Python3_EXECUTABLE}
                     ${CMAKE_CURRENT_LIST_DIR}/../../tests/examples/test_pipeline.py
                     --run $<TARGET_FILE:shardlab-run>
                     --schedule $<TARGET_FILE:shardlab-schedule>)
    # Recomputation as a choice (shardlab-recompute): every rewrite of a
    # generated step computes its results bit for bit; its estimate is the
    # generator's step with that policy, GEMMs and memory as counted.
    # Context parallelism (a ring attention over "cp", as the generator
    # writes it in shard_map): permutes, bytes and attention time per
    # device as worked out by hand.
    add_test(NAME context_parallel
             COMMAND ${Python3_EXECUTABLE}
                     ${CMAKE_CURRENT_LIST_DIR}/../../tests/examples/test_context_parallel.py
                     --schedule $<TARGET_FILE:shardlab-schedule>)
    add_test(NAME recompute
             COMMAND ${Python3_EXECUTABLE}
                     ${CMAKE_CURRENT_LIST_DIR}/../../tests/examples/test_recompute.py
                     --opt $<TARGET_FILE:shardlab-opt>
                     --run $<TARGET_FILE:shardlab-run>
                     --schedule $<TARGET_FILE:shardlab-schedule>)
    # The generator's layouts (dp, ZeRO-1, ZeRO-2, FSDP; tensor and
    # sequence parallelism; experts over dp), partitioned and run on
    # simulated devices, compute the global step's gradients; a faulty
    # interpreter does not.
    add_test(NAME training_step_partition
             COMMAND ${Python3_EXECUTABLE}
                     ${CMAKE_CURRENT_LIST_DIR}/../../tests/schedule/check_training_step_partition.py
                     --interpreter $<TARGET_FILE:shardlab-run>
                     --faulty $<TARGET_FILE:shardlab-run-faulty>)
  endif()
endif()
