# `peak embed` on all-MiniLM-L6-v2's shapes with BGE's WordPiece vocabulary:
# JSON holds one array of 384 floats per text, CSV the same numbers one line
# per text, every vector of length 1 (and not all so with --no-normalize),
# texts from -p equal the same texts from a file, and --pooling none gives
# each text as many vectors as `peak tokenize` gives it tokens ([CLS] ... [SEP]).
#   cmake -DPEAK=<exe> -DMODEL=<gguf> -DNORMS=<vector_norms exe> -DWORK=<dir> -P embed_output.cmake
include(${CMAKE_CURRENT_LIST_DIR}/script_checks.cmake)

set(texts ${WORK}/embed_texts.txt)
file(WRITE ${texts} "what is the capital of france?\nParis is the capital of France.\r\nbananas\n")

# The innermost arrays of a JSON text as written (string(JSON) would reformat
# the numbers), without brackets, their commas made |, as a list of strings.
function(json_vectors out json)
  string(REGEX MATCHALL "\\[[^][]+\\]" arrays "${json}")
  set(vectors)
  foreach(a ${arrays})
    string(REGEX REPLACE "[][]" "" a "${a}")
    string(REPLACE "," "|" a "${a}")
    list(APPEND vectors "${a}")
  endforeach()
  set(${out} "${vectors}" PARENT_SCOPE)
endfunction()

peak_stdout(json embed -m ${MODEL} -f ${texts} -t 2)
string(JSON n LENGTH "${json}")
expect_equal("JSON texts" ${n} 3)
peak_stdout(csv embed -m ${MODEL} -f ${texts} -t 2 --format csv)
string(REGEX REPLACE "\n$" "" csv "${csv}")
string(REPLACE "\n" ";" csv_lines "${csv}")
list(LENGTH csv_lines n)
expect_equal("CSV lines" ${n} 3)
json_vectors(vectors "${json}")
foreach(i 0 1 2)
  string(JSON n LENGTH "${json}" ${i})
  expect_equal("floats of text ${i}" ${n} 384)
  list(GET csv_lines ${i} line)
  string(REPLACE "," "|" line "${line}")
  list(GET vectors ${i} v)
  expect_equal("text ${i} in CSV and JSON" "${line}" "${v}")
endforeach()

file(WRITE ${WORK}/embed.csv "${csv}\n")
execute_process(COMMAND ${NORMS} ${WORK}/embed.csv OUTPUT_VARIABLE norms RESULT_VARIABLE rc)
expect_equal("vector_norms" ${rc} 0)
expect_equal("lengths" "${norms}" "384 1.0000\n384 1.0000\n384 1.0000\n")
peak_stdout(raw embed -m ${MODEL} -f ${texts} --format csv --no-normalize)
file(WRITE ${WORK}/embed_raw.csv "${raw}")
execute_process(COMMAND ${NORMS} ${WORK}/embed_raw.csv OUTPUT_VARIABLE norms)
if(norms STREQUAL "384 1.0000\n384 1.0000\n384 1.0000\n")
  message(FATAL_ERROR "--no-normalize gave vectors of length 1")
endif()

# -p, once per text, gives what the file's lines give.
peak_stdout(prompted embed -m ${MODEL} -p "bananas" -p "what is the capital of france?" -t 2)
json_vectors(prompted "${prompted}")
list(GET prompted 0 a)
list(GET vectors 2 b)
expect_equal("-p bananas" "${a}" "${b}")
list(GET prompted 1 a)
list(GET vectors 0 b)
expect_equal("-p 'what is ...'" "${a}" "${b}")

# --pooling none: a vector per token, as many as the tokenizer gives with special tokens.
peak_stdout(ids tokenize -m ${MODEL} -p "bananas" --ids)
string(REGEX MATCHALL "[0-9]+" ids "${ids}")
list(LENGTH ids n_tokens)
peak_stdout(tokens embed -m ${MODEL} -p "bananas" --pooling none)
string(JSON n LENGTH "${tokens}" 0)
expect_equal("token vectors of 'bananas'" ${n} ${n_tokens})
string(JSON n LENGTH "${tokens}" 0 0)
expect_equal("floats per token vector" ${n} 384)

# --truncate with a batch of 4: "a text of more than four tokens" is embedded
# as [CLS] a text [SEP], the end token kept last, which is "a text" whole.
peak_stdout(cut embed -m ${MODEL} -p "a text of more than four tokens" --truncate -b 4 -t 2)
peak_stdout(short embed -m ${MODEL} -p "a text" -b 4 -t 2)
expect_equal("--truncate -b 4" "${cut}" "${short}")

# --dimensions 8: the first 8 floats of each raw vector (--no-normalize), and
# normalised after the cut: of length 1.
peak_stdout(first8 embed -m ${MODEL} -f ${texts} --format csv --no-normalize --dimensions 8)
string(REGEX REPLACE "\n$" "" first8 "${first8}")
string(REPLACE "\n" ";" first8 "${first8}")
string(REGEX REPLACE "\n$" "" raw "${raw}")
string(REPLACE "\n" ";" raw_lines "${raw}")
foreach(i 0 1 2)
  list(GET raw_lines ${i} line)
  string(REPLACE "," ";" line "${line}")
  list(SUBLIST line 0 8 line)
  string(REPLACE ";" "," line "${line}")
  list(GET first8 ${i} cut_line)
  expect_equal("--dimensions 8 of text ${i}" "${cut_line}" "${line}")
endforeach()
peak_stdout(short8 embed -m ${MODEL} -f ${texts} --format csv --dimensions 8)
file(WRITE ${WORK}/embed_8.csv "${short8}")
execute_process(COMMAND ${NORMS} ${WORK}/embed_8.csv OUTPUT_VARIABLE norms)
expect_equal("lengths of 8 floats" "${norms}" "8 1.0000\n8 1.0000\n8 1.0000\n")
