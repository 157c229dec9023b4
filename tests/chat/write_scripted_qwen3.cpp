// Writes the scripted Qwen3 model (scripted_qwen3.h) for the CLI and C API tests.
#include <cstdio>
#include <cstring>
#include <exception>

#include "scripted_qwen3.h"

int main(int argc, char** argv) {
  using peak::test::Qwen3Script;
  struct Named {
    const char* name;
    Qwen3Script script;
  };
  const Named scripts[] = {{"answer", Qwen3Script::Answer},
                           {"call", Qwen3Script::Call},
                           {"text-then-call", Qwen3Script::TextThenCall},
                           {"call-again", Qwen3Script::CallAgain}};
  const Named* chosen = &scripts[0];
  if (argc == 3) {
    chosen = nullptr;
    for (const Named& n : scripts) {
      if (std::strcmp(argv[2], n.name) == 0) chosen = &n;
    }
  }
  if ((argc != 2 && argc != 3) || !chosen) {
    std::fprintf(stderr, "usage: write_scripted_qwen3 FILE.gguf [answer|call|text-then-call|call-again]\n");
    return 2;
  }
  try {
    peak::test::write_scripted_qwen3(argv[1], chosen->script);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "write_scripted_qwen3: %s\n", e.what());
    return 1;
  }
  return 0;
}
