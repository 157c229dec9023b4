# `peak embed` on a preset's model: two texts give two vectors of the model's
# width, each of length 1, and different ones.
#   cmake -DPEAK=<exe> -DMODEL=<gguf> -DN_EMBD=<width> -DNORMS=<vector_norms exe> -DWORK=<file stem> -P embed_vectors.cmake
include(${CMAKE_CURRENT_LIST_DIR}/script_checks.cmake)

peak_stdout(csv embed -m ${MODEL} -p "what is the capital of france?" -p "Paris is the capital of France." --format csv)
file(WRITE ${WORK}.csv "${csv}")
execute_process(COMMAND ${NORMS} ${WORK}.csv OUTPUT_VARIABLE norms RESULT_VARIABLE rc)
expect_equal("vector_norms" ${rc} 0)
expect_equal("lengths" "${norms}" "${N_EMBD} 1.0000\n${N_EMBD} 1.0000\n")
string(REPLACE "\n" ";" lines "${csv}")
list(GET lines 0 first)
list(GET lines 1 second)
if(first STREQUAL second)
  message(FATAL_ERROR "two texts gave the same vector")
endif()
