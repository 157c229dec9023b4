# The CLI's own output files (peak run --logits-out, peak perplexity
# --kl-divergence-base) are written whole or not at all: a refused model leaves
# the old file as it was, the command's own input (model, prompt, text) is
# never written over, a FIFO is refused at once instead of waiting for a
# reader, and no temporary file stays behind.
#   cmake -DPEAK=<exe> -DMODEL=<stories260K.gguf> -DTEXT=<prose.txt> -DWORK=<dir> -P output_files.cmake
include(${CMAKE_CURRENT_LIST_DIR}/script_checks.cmake)

set(dir ${WORK}/output_files)
file(REMOVE_RECURSE ${dir})
file(MAKE_DIRECTORY ${dir})
file(COPY ${MODEL} ${TEXT} DESTINATION ${dir})
get_filename_component(model_name ${MODEL} NAME)
get_filename_component(text_name ${TEXT} NAME)
set(model ${dir}/${model_name})
set(text ${dir}/${text_name})
file(SHA256 ${model} model_sum)
file(SHA256 ${text} text_sum)

# peak_fails(<stderr fragment> <args...>): exit status 1 within 60 s, the message on stderr.
function(peak_fails fragment)
  execute_process(COMMAND ${PEAK} ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 60)
  if(NOT rc EQUAL 1)
    message(FATAL_ERROR "peak ${ARGN}: exit status ${rc} (expected 1): ${err}")
  endif()
  string(FIND "${err}" "${fragment}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "peak ${ARGN}: '${fragment}' not in: ${err}")
  endif()
endfunction()

function(expect_unchanged path sum)
  file(SHA256 ${path} now)
  expect_equal("${path}" "${now}" "${sum}")
endfunction()

# A refused model: the old output stays as it was.
file(WRITE ${dir}/logits.bin "old")
file(WRITE ${dir}/kl.bin "old")
peak_fails("${text_name}" run -m ${text} --logits-out ${dir}/logits.bin -p hi)
peak_fails("" perplexity -m ${text} -f ${text} --kl-divergence-base ${dir}/kl.bin)
file(READ ${dir}/logits.bin kept)
expect_equal("--logits-out after a refused model" "${kept}" "old")
file(READ ${dir}/kl.bin kept)
expect_equal("--kl-divergence-base after a refused model" "${kept}" "old")

# The command's own inputs, by name and through a link.
file(CREATE_LINK ${model} ${dir}/model-link.gguf SYMBOLIC)
peak_fails("it is the model" run -m ${model} --logits-out ${model} -p hi)
peak_fails("it is the model" run -m ${model} --logits-out ${dir}/model-link.gguf -p hi)
file(WRITE ${dir}/prompt.txt "Once upon a time")
peak_fails("it is the prompt file" run -m ${model} --logits-out ${dir}/prompt.txt -f ${dir}/prompt.txt)
peak_fails("it is the text" perplexity -m ${model} -f ${text} -c 64 --kl-divergence-base ${text})
peak_fails("it is the model" perplexity -m ${model} -f ${text} -c 64 --kl-divergence-base ${model})
expect_unchanged(${model} ${model_sum})
expect_unchanged(${text} ${text_sum})
file(READ ${dir}/prompt.txt kept)
expect_equal("the prompt file" "${kept}" "Once upon a time")

# A FIFO without a reader: refused at once.
execute_process(COMMAND mkfifo ${dir}/fifo RESULT_VARIABLE rc)
expect_equal("mkfifo" ${rc} 0)
peak_fails("not a regular file" run -m ${model} --logits-out ${dir}/fifo -p hi)
peak_fails("not a regular file" perplexity -m ${model} -f ${text} -c 64 --kl-divergence-base ${dir}/fifo)

# Written whole: 16 bytes of header, the prompt's ids, one row of 512 logits per id.
peak_stdout(json run -m ${model} --logits-out ${dir}/logits.bin -p "Once upon a time" -n 1 --json)
string(JSON n_prompt LENGTH "${json}" prompt_tokens)
file(SIZE ${dir}/logits.bin size)
math(EXPR expected "16 + 4 * ${n_prompt} + 4 * ${n_prompt} * 512")
expect_equal("the logits file's size" ${size} ${expected})
peak_stdout(ppl perplexity -m ${model} -f ${text} -c 64 --chunks 2 --kl-divergence-base ${dir}/kl.bin)
file(SIZE ${dir}/kl.bin size)
math(EXPR expected "20 + 4 * 2 * 64 + 2 * (64 - 1 - 32) * (512 + 4) * 2")
expect_equal("the KL base's size" ${size} ${expected})

file(GLOB left ${dir}/*.partial*)
expect_equal("temporary files left" "${left}" "")
