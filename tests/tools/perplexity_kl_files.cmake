# `peak perplexity --kl-divergence` refuses base files that do not fit, with a
# message: truncated or extended, another vocabulary, another window length,
# another text, a token outside the vocabulary, a row that is not a
# log-probability's.
#   cmake -DPEAK=<exe> -DTEXT=<file> -DWORK=<dir> -DOTHER_MODEL=<gguf> -P perplexity_kl_files.cmake
set(base ${WORK}/kl_files_base.kld)
set(bad ${WORK}/kl_files_bad.kld)
execute_process(COMMAND ${PEAK} perplexity -f ${TEXT} -c 16 --chunks 2 --kl-divergence-base ${base}
                RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "writing the base failed: ${err}")
endif()
# 20 header bytes, 2 x 16 tokens, then 2 x 7 rows of 2 x (512 + 4) bytes.
file(SIZE ${base} size)
if(NOT size EQUAL 14596)
  message(FATAL_ERROR "the base has ${size} bytes, expected 14596")
endif()

# expect(<exit> <stderr regex> <args...>)
function(expect code pattern)
  execute_process(COMMAND ${PEAK} perplexity ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL code OR NOT err MATCHES "${pattern}")
    message(FATAL_ERROR "peak perplexity ${ARGN}: exit ${rc}, expected ${code} and '${pattern}'\n${err}")
  endif()
endfunction()
# Overwrites the bytes at `offset` of a fresh copy of the base with `bytes` (printf escapes).
function(patch offset bytes)
  execute_process(COMMAND sh -c "cp '${base}' '${bad}' && printf '${bytes}' | dd of='${bad}' bs=1 seek=${offset} conv=notrunc 2>/dev/null")
endfunction()

expect(0 "kl-divergence: 2 windows of 16" --kl-divergence-base ${base} --kl-divergence)
expect(0 "" --kl-divergence-base ${base} --kl-divergence -f ${TEXT} -c 16)
execute_process(COMMAND sh -c "head -c 14000 '${base}' > '${bad}'")
expect(1 "has 14000 bytes, but its header announces 2 windows of 16 tokens and a vocabulary of 512 \\(14596 bytes\\)"
       --kl-divergence-base ${bad} --kl-divergence)
execute_process(COMMAND sh -c "cat '${base}' '${base}' > '${bad}'")
expect(1 "has 29192 bytes" --kl-divergence-base ${bad} --kl-divergence)
expect(1 "was written for a vocabulary of 512 tokens, the model has"
       -m ${OTHER_MODEL} --kl-divergence-base ${base} --kl-divergence)
expect(2 "has windows of 16 tokens, not 32" --kl-divergence-base ${base} --kl-divergence -c 32)
file(WRITE ${WORK}/kl_files_other.txt "The dog ran to the park and played with a ball all day long, and then it went home to sleep.")
expect(1 "tokenizes differently" --kl-divergence-base ${base} --kl-divergence -f ${WORK}/kl_files_other.txt)
patch(24 "\\377\\377\\377\\177")  # the second token: INT32_MAX
expect(1 "has token 2147483647 at position 1, outside the vocabulary of 512" --kl-divergence-base ${bad} --kl-divergence)
patch(148 "\\000\\000\\300\\177")  # the first row's scale: NaN
expect(1 "row 0 of .* has a scale or minimum \\(nan" --kl-divergence-base ${bad} --kl-divergence)
patch(8 "\\003\\000\\000\\000")  # windows of 3 tokens
expect(1 "has windows of 3 tokens; they must be between 4 and" --kl-divergence-base ${bad} --kl-divergence)
patch(12 "\\000\\000\\000\\200")  # a negative vocabulary
expect(1 "has a vocabulary of -2147483648 tokens" --kl-divergence-base ${bad} --kl-divergence)
patch(16 "\\377\\377\\377\\177")  # 2^31 - 1 windows: the size cannot match
expect(1 "header announces 2147483647 windows" --kl-divergence-base ${bad} --kl-divergence)
