// Reading the text a command takes from a file (`-f`): a prompt, a perplexity
// text, the texts to embed or the documents to rerank, one a line.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

// The most a text file may hold: far beyond any prompt or evaluation text, and
// a bound on what an endless stream could make us read.
constexpr size_t kMaxTextFileBytes = size_t{64} << 20;

// The whole file. A regular file, a FIFO or a pipe is read; a directory, a
// device (/dev/zero) or a socket is refused; "-" reads standard input, whatever
// it is. More than kMaxTextFileBytes is refused. Throws CommandError naming `what` and the path.
std::string read_text_file(const std::string& path, const std::string& what);

// The texts of a file, one per line (read_text_file): a last newline ends the
// last line, "\r\n" counts as "\n". An empty line, or no line at all, is
// refused with CommandError naming the path and the line.
std::vector<std::string> read_text_lines(const std::string& path);
