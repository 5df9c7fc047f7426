# The interpreter's CLI (shardlab-run); the interpreter itself is the
# interpreter layer of the core (core/src/interpreter).
if(NOT EMSCRIPTEN)
  add_executable(shardlab-run
                 ${CMAKE_CURRENT_LIST_DIR}/../../core/tools/shardlab_run.cpp)
  target_link_libraries(shardlab-run PRIVATE shardlab_interpreter shardlab_text)
  target_compile_options(shardlab-run PRIVATE ${SHARDLAB_WARNINGS})
endif()
