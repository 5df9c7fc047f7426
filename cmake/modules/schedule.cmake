# The scheduler CLI (shardlab-schedule); the scheduler itself is part of
# shardlab_core (core/src/schedule).
if(NOT EMSCRIPTEN)
  add_executable(shardlab-schedule
                 ${CMAKE_CURRENT_LIST_DIR}/../../core/tools/shardlab_schedule.cpp)
  target_link_libraries(shardlab-schedule PRIVATE shardlab_core)
  target_compile_options(shardlab-schedule PRIVATE ${SHARDLAB_WARNINGS})
endif()

# The CLI end to end on every examples/schedule/*.mlir (propagation,
# explicit collectives, schedule, report fields and invariants, flags).
if(SHARDLAB_BUILD_TESTS AND NOT EMSCRIPTEN)
  find_package(Python3 COMPONENTS Interpreter)
  if(Python3_Interpreter_FOUND)
    add_test(NAME schedule_cli
             COMMAND Python3::Interpreter
                     ${CMAKE_CURRENT_LIST_DIR}/../../tests/schedule/check_schedule_cli.py
                     --cli $<TARGET_FILE:shardlab-schedule>)
    # Every architecture and recomputation policy of the training-step
    # generator (bench/models) through the CLI.
    add_test(NAME training_step_generator
             COMMAND Python3::Interpreter
                     ${CMAKE_CURRENT_LIST_DIR}/../../tests/schedule/check_training_step_generator.py
                     --cli $<TARGET_FILE:shardlab-schedule>)
    # The published runs' measured steps and model FLOPs against what the
    # papers state (parameter counts, LLaMA 65B's tokens a GPU a second).
    add_test(NAME published-runs-measured
             COMMAND Python3::Interpreter
                     ${CMAKE_CURRENT_LIST_DIR}/../../tests/schedule/check_published_runs.py)
    # The validation bands compiled into the core are the ones the current
    # model gives on the published runs (bench/published).
    add_test(NAME validation-bands-current
             COMMAND Python3::Interpreter
                     ${CMAKE_CURRENT_LIST_DIR}/../../bench/published/run.py
                     --build $<TARGET_FILE_DIR:shardlab-schedule>
                     --variants "shardlab,XLA's default schedule" --check-bands
                     ${CMAKE_CURRENT_LIST_DIR}/../../core/src/schedule/validation_bands.inc)
  endif()
endif()
