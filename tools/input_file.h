// Reading what a command takes from a file: a prompt (`-f`), a perplexity
// text, the texts to embed or the documents to rerank (one a line), a grammar,
// a picture.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

// The most an input file may hold: far beyond any prompt, evaluation text or
// picture, and a bound on what an endless stream could make us read.
constexpr size_t kMaxInputFileBytes = size_t{64} << 20;

// The whole file. A regular file, a FIFO or a pipe is read; a directory, a
// device (/dev/zero) or a socket is refused; "-" reads standard input, whatever
// it is. More than kMaxInputFileBytes is refused. Throws CommandError naming `what` and the path.
std::string read_input_file(const std::string& path, const std::string& what);

// The texts of a file, one per line (read_input_file): a last newline ends the
// last line, "\r\n" counts as "\n". An empty line, or no line at all, is
// refused with CommandError naming the path and the line.
std::vector<std::string> read_text_lines(const std::string& path);
