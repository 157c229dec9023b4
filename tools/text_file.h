// Reading the text a command takes from a file (`-f`): a prompt, a perplexity text.
#pragma once

#include <cstddef>
#include <string>

// The most a text file may hold: far beyond any prompt or evaluation text, and
// a bound on what an endless stream could make us read.
constexpr size_t kMaxTextFileBytes = size_t{64} << 20;

// The whole file. A regular file, a FIFO or a pipe is read; a directory, a
// device (/dev/zero) or a socket is refused; "-" reads standard input, whatever
// it is. More than kMaxTextFileBytes is refused. Throws CommandError naming `what` and the path.
std::string read_text_file(const std::string& path, const std::string& what);
