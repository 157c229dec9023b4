# peak perplexity must give the same value with 1 and 2 threads (within 1e-4
# relative) and a finite one.   cmake -DPEAK=<exe> -DTEXT=<file> -P perplexity_threads.cmake
foreach(threads 1 2)
  execute_process(COMMAND ${PEAK} perplexity -f ${TEXT} -c 256 -t ${threads}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 300)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "peak perplexity -t ${threads} failed (${rc}): ${err}")
  endif()
  if(NOT out MATCHES "Final estimate: PPL = ([0-9]+\\.[0-9]+) \\+/- ([0-9]+\\.[0-9]+)")
    message(FATAL_ERROR "no final estimate in: ${out}")
  endif()
  set(ppl_${threads} ${CMAKE_MATCH_1})
endforeach()
# CMake has no floating point: equal 4-decimal prints (PPL ~4) bound the
# relative difference well below 1e-4.
if(NOT ppl_1 STREQUAL ppl_2)
  message(FATAL_ERROR "perplexity differs between 1 thread (${ppl_1}) and 2 threads (${ppl_2})")
endif()
if(ppl_1 STREQUAL "inf" OR ppl_1 STREQUAL "nan")
  message(FATAL_ERROR "perplexity is not finite")
endif()
message(STATUS "PPL ${ppl_1} with 1 and 2 threads")
