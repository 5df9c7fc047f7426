# ctest driver: runs shardlab-cost on the bundled table and checks the JSON
# fields; bad input must exit non-zero with a message.
# Usage: cmake -DCLI=path/to/shardlab-cost -DTABLE=table.json -P this-file
function(run_cli out_var)
  execute_process(COMMAND ${CLI} ${ARGN} --json RESULT_VARIABLE rc
                  OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "shardlab-cost ${ARGN} failed (${rc}): ${err}")
  endif()
  set(${out_var} "${out}" PARENT_SCOPE)
endfunction()

function(expect_field json field expected)
  string(JSON value ERROR_VARIABLE error GET "${json}" ${field})
  if(error OR (NOT "${expected}" STREQUAL "*" AND
               NOT "${value}" STREQUAL "${expected}"))
    message(FATAL_ERROR "field ${field}: got '${value}' (${error}), "
                        "expected '${expected}' in ${json}")
  endif()
endfunction()

function(expect_positive json)
  string(JSON t GET "${json}" time_us)
  if(NOT t GREATER 0)
    message(FATAL_ERROR "time_us not positive in ${json}")
  endif()
endfunction()

run_cli(ar collective --op all-reduce --bytes 1048576 --group-size 8
        --nodes 1 --tables ${TABLE})
expect_field("${ar}" model "collective-table/exact")
expect_field("${ar}" explanation "*")
expect_positive("${ar}")

run_cli(dcn collective --op all-gather --bytes 1048576 --group-size 16
        --nodes 2 --preset h100 --sol-options nic_speed_gbps=50)
expect_field("${dcn}" model "s-curve/ring all-gather")
expect_positive("${dcn}")

run_cli(nvl collective --op reduce-scatter --bytes 4096 --group-size 4)
expect_field("${nvl}" model "analytical/nvlink-ring")

run_cli(mm gemm --b 1 --m 1024 --n 1024 --k 1024 --dtypes bf16xbf16->bf16
        --tables ${TABLE} --mode accurate)
expect_field("${mm}" model "*")
expect_field("${mm}" explanation "*")
expect_positive("${mm}")

foreach(bad "--bytes;-1" "--bytes;abc" "--bytes;8;--mode;fast"
        "--bytes;8;--nodes;0" "--bytes;8;--bogus;1" "--bytes;8;--preset;tpu"
        "--bytes;8;--gpus-per-node;4" "--bytes;8;--tables;/nonexistent")
  execute_process(COMMAND ${CLI} collective --op all-reduce --group-size 8
                          ${bad}
                  RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
  if(rc EQUAL 0 OR NOT err MATCHES "error: ")
    message(FATAL_ERROR "'${bad}' should fail with a message, got ${rc}")
  endif()
endforeach()
