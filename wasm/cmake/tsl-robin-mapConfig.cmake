# tsl::robin_map for Emscripten builds: like nlohmann_jsonConfig.cmake here,
# Debian's headers live under /usr, which must not be on an Emscripten
# include path; copy only tsl/ into the build tree and expose the usual
# imported target.
set(_shardlab_tsl_src /usr/include/tsl)
set(_shardlab_tsl_dst ${CMAKE_BINARY_DIR}/tsl-include)
if(NOT EXISTS ${_shardlab_tsl_src}/robin_map.h)
  set(tsl-robin-map_FOUND FALSE)
  set(tsl-robin-map_NOT_FOUND_MESSAGE
      "robin-map-dev is not installed (${_shardlab_tsl_src})")
  return()
endif()
file(COPY ${_shardlab_tsl_src} DESTINATION ${_shardlab_tsl_dst})
if(NOT TARGET tsl::robin_map)
  add_library(tsl::robin_map INTERFACE IMPORTED)
  set_target_properties(tsl::robin_map PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES ${_shardlab_tsl_dst})
endif()
set(tsl-robin-map_FOUND TRUE)
