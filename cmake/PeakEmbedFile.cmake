# Writes a C++ source holding a file's bytes, so that a binary carries its own
# assets (the web page of `peak serve`). Run as a script:
#   cmake -DINPUT=page.html -DOUTPUT=page.cpp -DSYMBOL=name -P PeakEmbedFile.cmake
# The source defines `extern const unsigned char SYMBOL[]` (the bytes and a NUL)
# and `extern const std::size_t SYMBOL_size` (the bytes without the NUL).
file(READ "${INPUT}" _hex HEX)
string(LENGTH "${_hex}" _hex_length)
math(EXPR _size "${_hex_length} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," _bytes "${_hex}")
string(REGEX REPLACE "((0x[0-9a-f][0-9a-f],){32})" "\\1\n" _bytes "${_bytes}")
file(WRITE "${OUTPUT}.tmp"
  "// Written by cmake/PeakEmbedFile.cmake from ${INPUT}; do not edit.\n"
  "#include <cstddef>\n"
  "extern const unsigned char ${SYMBOL}[] = {\n${_bytes}\n0};\n"
  "extern const std::size_t ${SYMBOL}_size = ${_size};\n")
configure_file("${OUTPUT}.tmp" "${OUTPUT}" COPYONLY)
file(REMOVE "${OUTPUT}.tmp")
