# The WebAssembly module of the npm package (Emscripten builds only; see
# scripts/build-wasm.sh). One ES module with the .wasm inlined: the
# combination Emscripten 3.1.6 loads in Node >= 18, browsers and bundlers.
# ENVIRONMENT=web,worker leaves out 3.1.6's Node loader, which uses
# __dirname/require (absent in ES modules) and fetches the .wasm by path; the
# inlined base64 .wasm needs neither, so Node runs the web code path.
if(EMSCRIPTEN)
  set(SHARDLAB_WASM_ROOT ${CMAKE_CURRENT_LIST_DIR}/../..)
  # Catchable C++ exceptions: the API's last-resort guard turns anything
  # thrown into an error value instead of a trapped instance. WebAssembly's
  # own exception handling (-fwasm-exceptions, Node >= 17, Chrome >= 95,
  # Firefox >= 100, Safari >= 15.2) instead of 3.1.6's default JS-based
  # emulation, which routes every call that may throw through a JS
  # trampoline (invoke_*): 26-39% less WASM time and a 20% smaller module
  # (bench/RESULTS.md).
  # SHARDLAB_WASM_EXCEPTIONS=js builds the emulation instead, and =ignore
  # builds without exception handling (a throw aborts the instance), both
  # only to measure what exceptions cost (bench/RESULTS.md: with LTO,
  # ignoring them was within noise of -fwasm-exceptions).
  set(SHARDLAB_WASM_EXCEPTIONS "wasm" CACHE STRING
      "C++ exceptions in the WASM build: wasm (native), js (emulated) or ignore")
  if(SHARDLAB_WASM_EXCEPTIONS STREQUAL "js")
    set(SHARDLAB_WASM_EH -fexceptions)
  elseif(SHARDLAB_WASM_EXCEPTIONS STREQUAL "ignore")
    set(SHARDLAB_WASM_EH -fignore-exceptions)
  else()
    set(SHARDLAB_WASM_EH -fwasm-exceptions)
  endif()
  # WebAssembly SIMD (Node >= 16.4, Chrome >= 91, Firefox >= 89, Safari >=
  # 16.4): the scans over a whole module's text (support/byte_scan.h) test
  # 16 bytes at a time, as SSE2 does natively. OFF builds the scalar scans.
  option(SHARDLAB_WASM_SIMD "Build the WASM module with -msimd128" ON)
  # libc++'s string and vector members are instantiated in each translation
  # unit, not called in Emscripten's prebuilt libc++, so the short appends
  # that printing and parsing do per token can be inlined: 6% less time on
  # parse + print, 3% more code (bench/RESULTS.md).
  set(SHARDLAB_WASM_FLAGS ${SHARDLAB_WASM_EH} -D_LIBCPP_DISABLE_EXTERN_TEMPLATE=1)
  if(SHARDLAB_WASM_SIMD)
    list(APPEND SHARDLAB_WASM_FLAGS -msimd128)
  endif()
  # Link-time optimization: the core's layers call each other's small
  # functions (sharding accessors, parser and printer helpers) across
  # translation units, and a call costs more in WebAssembly than natively
  # (V8 checks the stack on entry and keeps fewer values in registers
  # across it). LTO inlines across the libraries: 4-7% less WASM time on
  # the 10k-op cases, 1% more code (bench/RESULTS.md). The link takes
  # about 3 minutes instead of 30 s; OFF for quicker iteration. (The native
  # build does not use LTO: with GCC 12 it ran more instructions, not
  # fewer.)
  option(SHARDLAB_WASM_LTO "Build the WASM module with link-time optimization" ON)
  if(SHARDLAB_WASM_LTO)
    list(APPEND SHARDLAB_WASM_FLAGS -flto)
  endif()
  foreach(lib ${SHARDLAB_LAYER_TARGETS})
    target_compile_options(${lib} PRIVATE ${SHARDLAB_WASM_FLAGS})
  endforeach()
  # Compiled for size: the strategy comparison and the per-device check run
  # rarely in the playground and spend their time in the layers below them
  # (propagation, export, the scheduler), which stay at -O3; so do the
  # strategy rewrites (pipeline stages, recomputation, ...: one pass over a
  # module per candidate) and the interpreter's rarely met ops (its
  # elementwise, dot, reduce and shape kernels stay at -O3). The page stays
  # within its 2 MiB gzip budget (bench/RESULTS.md).
  foreach(lib shardlab_strategy shardlab_partition_check)
    target_compile_options(${lib} PRIVATE -Os)
  endforeach()
  file(GLOB SHARDLAB_STRATEGY_REWRITES
       ${CMAKE_SOURCE_DIR}/core/src/passes/strategy/*.cpp)
  set_source_files_properties(${SHARDLAB_STRATEGY_REWRITES}
                              PROPERTIES COMPILE_OPTIONS -Os)
  # The per-device lowering (the steps after the export pipeline: gathers
  # for what an op reads whole, permutation factors, padding, local types)
  # runs once per estimate, in time linear in the module; its code is
  # compiled for size too, which keeps the page within budget as its rules
  # grow.
  foreach(step insert_replicated_to_unreduced
               replicate_need_replication_factors
               replicate_operands_of_unknown_ops
               replicate_inputs_of_custom_reductions resolve_permutation_factors
               permutation_analysis halo_exchange pad_for_divisibility
               convert_global_to_local global_to_local_ops
               global_to_local_gather_scatter global_to_local_collectives
               local_builder)
    set_source_files_properties(
      ${CMAKE_SOURCE_DIR}/core/src/passes/export/${step}.cpp
      PROPERTIES COMPILE_OPTIONS -Os)
  endforeach()
  foreach(rare checks convolution fft fused_attention gather_scatter quant
               rng_bit_generator triangular_solve windows)
    set_source_files_properties(
      ${CMAKE_SOURCE_DIR}/core/src/interpreter/${rare}.cpp
      PROPERTIES COMPILE_OPTIONS -Os)
  endforeach()
  add_executable(shardlab_wasm ${SHARDLAB_WASM_ROOT}/wasm/src/bindings.cpp
                               ${SHARDLAB_WASM_ROOT}/wasm/src/memcpy.cpp
                               ${SHARDLAB_WASM_ROOT}/wasm/src/memcmp.cpp)
  # The loops in memcpy.cpp and memcmp.cpp must stay loops, not become calls
  # of the functions they define.
  set_source_files_properties(${SHARDLAB_WASM_ROOT}/wasm/src/memcpy.cpp
                              ${SHARDLAB_WASM_ROOT}/wasm/src/memcmp.cpp
                              PROPERTIES COMPILE_OPTIONS -fno-builtin)
  # shardlab_internal: support/byte_scan.h (the reply's ASCII check).
  target_link_libraries(shardlab_wasm PRIVATE shardlab_core shardlab_internal)
  target_compile_options(shardlab_wasm PRIVATE ${SHARDLAB_WARNINGS}
                                               ${SHARDLAB_WASM_FLAGS})
  set_target_properties(shardlab_wasm PROPERTIES OUTPUT_NAME shardlab
                                                 SUFFIX .mjs)
  target_link_options(shardlab_wasm PRIVATE
    --bind ${SHARDLAB_WASM_FLAGS} -O3
    -sMODULARIZE=1 -sEXPORT_ES6=1 -sSINGLE_FILE=1
    -sEXPORT_NAME=createShardlabModule -sENVIRONMENT=web,worker
    # Up to 4 GB: comparing a 70B step with micro-batch splits unrolls
    # hundreds of micro-batches (about 1.5 GB of heap); 2 GB, the default,
    # left little room.
    -sALLOW_MEMORY_GROWTH=1 -sMAXIMUM_MEMORY=4GB -sFILESYSTEM=0
    -sNODEJS_CATCH_EXIT=0 -sNODEJS_CATCH_REJECTION=0)
endif()
