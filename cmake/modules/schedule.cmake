# The scheduler CLI (shardlab-schedule); the scheduler itself is part of
# shardlab_core (core/src/schedule).
if(NOT EMSCRIPTEN)
  add_executable(shardlab-schedule
                 ${CMAKE_CURRENT_LIST_DIR}/../../core/tools/shardlab_schedule.cpp)
  target_link_libraries(shardlab-schedule PRIVATE shardlab_core)
  target_compile_options(shardlab-schedule PRIVATE ${SHARDLAB_WARNINGS})
endif()
