// Fresh directories for tests of what a write leaves behind: listing one shows
// every file the write created, temporary files included.
#pragma once

#include <string>
#include <vector>

namespace peak::test {

// Creates a new, empty directory "<parent><stem>XXXXXX" and returns its path
// with a trailing '/'; throws std::runtime_error when it cannot.
std::string make_scratch_dir(const std::string& parent, const std::string& stem);
// The names in `dir` ("." and ".." left out), sorted.
std::vector<std::string> files_in(const std::string& dir);
// The whole content of a file ("" when it cannot be read).
std::string file_bytes(const std::string& path);

}  // namespace peak::test
