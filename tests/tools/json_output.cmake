# --json output is one valid JSON document on stdout, with the values the text
# output shows: `peak run --json` (the same completion as the streamed text,
# token ids with BOS first, invalid UTF-8 in the prompt as U+FFFD) and `peak
# perplexity --json` (per-window values, the final one the text's), also with
# --kl-divergence.
#   cmake -DPEAK=<exe> -DTEXT=<file> -DWORK=<dir> -P json_output.cmake
include(${CMAKE_CURRENT_LIST_DIR}/script_checks.cmake)

# peak run
peak_stdout(json run -p "Once upon a time" -n 16 --temp 0 --json)
peak_stdout(text run -p "Once upon a time" -n 16 --temp 0 --no-echo)
string(JSON completion GET "${json}" completion)
string(REGEX REPLACE "\n$" "" text "${text}")
expect_equal("the JSON completion" "${completion}" "${text}")
string(JSON n LENGTH "${json}" completion_tokens)
expect_equal("completion tokens" ${n} 16)
string(JSON first GET "${json}" prompt_tokens 0)
expect_equal("the first prompt token (BOS)" ${first} 1)
string(JSON n LENGTH "${json}" prompt_tokens)
expect_equal("prompt tokens" ${n} 5)
string(JSON reason GET "${json}" stop_reason)
expect_equal("stop reason" ${reason} max_tokens)
string(JSON rate GET "${json}" timings generation_tokens_per_s)
if(NOT rate GREATER 0)
  message(FATAL_ERROR "no generation rate in ${json}")
endif()
execute_process(COMMAND sh -c "printf 'Lily\\377\"\\\\' > '${WORK}/invalid_prompt.txt'")
peak_stdout(json run -f ${WORK}/invalid_prompt.txt -n 2 --json)
string(JSON prompt GET "${json}" prompt)
string(HEX "${prompt}" prompt_hex)
expect_equal("the invalid prompt (hex: Lily, U+FFFD, quote, backslash)" ${prompt_hex} 4c696c79efbfbd225c)

# peak perplexity
peak_stdout(text perplexity -f ${TEXT} -c 128 --chunks 4)
peak_stdout(json perplexity -f ${TEXT} -c 128 --chunks 4 --json --kl-divergence-base ${WORK}/json_base.kld)
string(REGEX MATCH "Final estimate: PPL = ([0-9.]+)" _ "${text}")
set(final ${CMAKE_MATCH_1})
string(JSON ppl GET "${json}" ppl)
string(JSON n LENGTH "${json}" windows)
expect_equal("windows" ${n} 4)
string(JSON last GET "${json}" windows 3 ppl)
expect_equal("the last window's PPL" ${last} ${ppl})
math(EXPR scored "4 * (128 - 1 - 64)")
string(JSON n GET "${json}" n_scored)
expect_equal("scored tokens" ${n} ${scored})
# 4 decimals as the text prints them: compare the JSON value's first digits.
string(SUBSTRING "${ppl}" 0 5 ppl_start)
string(SUBSTRING "${final}" 0 5 final_start)
expect_equal("the final PPL" ${ppl_start} ${final_start})
peak_stdout(json perplexity --kl-divergence-base ${WORK}/json_base.kld --kl-divergence --json)
foreach(key ppl ppl_base kld kld_error same_top_p rms_delta_p ln_ppl_ratio)
  string(JSON v GET "${json}" ${key})
endforeach()
string(JSON median GET "${json}" kld_quantiles median)
string(JSON top GET "${json}" same_top_p)
expect_equal("same top p of the model against itself" ${top} 1)
string(JSON n LENGTH "${json}" windows)
expect_equal("KL windows" ${n} 4)
