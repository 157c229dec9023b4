// `peak <command> [options]`: dispatches to one sub-command per source file.
#include <cstdio>
#include <cstring>

#include "commands.h"
#include "peak/peak.h"

namespace {

struct Command {
  const char* name;
  int (*run)(int argc, char** argv);
  const char* summary;
};

const Command kCommands[] = {
    {"chat", run_chat, "chat with a model (the bundled demo model when none is given)"},
    {"run", run_run, "continue a prompt and print the completion"},
    {"bench", run_bench, "prompt and generation speed (llama-bench style), with a bandwidth probe"},
    {"perplexity", run_perplexity, "perplexity of a model over a text file"},
    {"quantize", run_quantize, "quantize an F32/F16/BF16 model (Q4_0, Q8_0, Q4_K_M ...)"},
    {"synth", run_synth, "write a random-weight model with a real model's shapes"},
    {"inspect", run_inspect, "show a GGUF file's header, metadata and tensors, or the CPU paths"},
};

void print_usage(std::FILE* out) {
  std::fprintf(out, "usage: peak <command> [options]\n\ncommands:\n");
  for (const Command& c : kCommands) std::fprintf(out, "  %-10s %s\n", c.name, c.summary);
  std::fprintf(out, "\n'peak <command> --help' describes a command's options.\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    print_usage(stderr);
    return 2;
  }
  const char* name = argv[1];
  if (std::strcmp(name, "--help") == 0 || std::strcmp(name, "-h") == 0 || std::strcmp(name, "help") == 0) {
    print_usage(stdout);
    return 0;
  }
  if (std::strcmp(name, "--version") == 0) {
    std::printf("peak %s\n", peak_version());
    return 0;
  }
  for (const Command& c : kCommands) {
    if (std::strcmp(name, c.name) == 0) return c.run(argc - 1, argv + 1);
  }
  std::fprintf(stderr, "peak: unknown command '%s'\n", name);
  print_usage(stderr);
  return 2;
}
