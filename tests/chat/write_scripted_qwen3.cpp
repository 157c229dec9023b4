// Writes the scripted Qwen3 model (scripted_qwen3.h) for the CLI tests.
#include <cstdio>
#include <exception>

#include "scripted_qwen3.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: write_scripted_qwen3 FILE.gguf\n");
    return 2;
  }
  try {
    peak::test::write_scripted_qwen3(argv[1]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "write_scripted_qwen3: %s\n", e.what());
    return 1;
  }
  return 0;
}
