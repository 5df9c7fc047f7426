# nlohmann_json for Emscripten builds: Debian's package lives under /usr,
# which must not be on an Emscripten include path (its libc headers would
# shadow Emscripten's). Copy only the nlohmann headers into the build tree
# and expose them as the usual imported target.
set(_shardlab_nlohmann_src /usr/include/nlohmann)
set(_shardlab_nlohmann_dst ${CMAKE_BINARY_DIR}/nlohmann-include)
if(NOT EXISTS ${_shardlab_nlohmann_src}/json.hpp)
  set(nlohmann_json_FOUND FALSE)
  set(nlohmann_json_NOT_FOUND_MESSAGE
      "nlohmann-json3-dev is not installed (${_shardlab_nlohmann_src})")
  return()
endif()
file(COPY ${_shardlab_nlohmann_src} DESTINATION ${_shardlab_nlohmann_dst})
if(NOT TARGET nlohmann_json::nlohmann_json)
  add_library(nlohmann_json::nlohmann_json INTERFACE IMPORTED)
  set_target_properties(nlohmann_json::nlohmann_json PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES ${_shardlab_nlohmann_dst})
endif()
set(nlohmann_json_FOUND TRUE)
