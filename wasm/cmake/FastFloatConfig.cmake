# fast_float for Emscripten builds: as tsl-robin-mapConfig.cmake here,
# Debian's headers live under /usr, which must not be on an Emscripten
# include path; copy only fast_float/ into the build tree and expose the
# usual imported target.
set(_shardlab_fast_float_src /usr/include/fast_float)
set(_shardlab_fast_float_dst ${CMAKE_BINARY_DIR}/fast-float-include)
if(NOT EXISTS ${_shardlab_fast_float_src}/fast_float.h)
  set(FastFloat_FOUND FALSE)
  set(FastFloat_NOT_FOUND_MESSAGE
      "libfast-float-dev is not installed (${_shardlab_fast_float_src})")
  return()
endif()
file(COPY ${_shardlab_fast_float_src} DESTINATION ${_shardlab_fast_float_dst})
if(NOT TARGET FastFloat::fast_float)
  add_library(FastFloat::fast_float INTERFACE IMPORTED)
  set_target_properties(FastFloat::fast_float PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES ${_shardlab_fast_float_dst})
endif()
set(FastFloat_FOUND TRUE)
