// `peak <command> [options]`: dispatches to one sub-command per source file.
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>

#include "cli_args.h"
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
    {"serve", run_serve, "an OpenAI-compatible HTTP server, with a chat page"},
    {"bench", run_bench, "prompt and generation speed (llama-bench style), with a bandwidth probe"},
    {"perplexity", run_perplexity, "perplexity of a model over a text file, or its KL divergence from another"},
    {"embed", run_embed, "the vectors an embedding model (BGE, all-MiniLM ...) gives texts, as JSON or CSV"},
    {"rerank", run_rerank,
     "documents ordered by a reranker's relevance to a query (ms-marco-MiniLM, Qwen3-Reranker ...), as JSON"},
    {"tokenize", run_tokenize, "the tokens of a text (a vocabulary-only GGUF file is enough)"},
    {"grammar", run_grammar, "check texts against a GBNF grammar or a JSON Schema (grammar check)"},
    {"quantize", run_quantize, "quantize an F32/F16/BF16 model (Q4_0, Q8_0, Q4_K_M ...)"},
    {"synth", run_synth, "write a random-weight model with a real model's shapes"},
    {"lora", run_lora, "merge a LoRA adapter into its model, or write a random one"},
    {"inspect", run_inspect, "show a GGUF file's header, metadata and tensors, or the CPU paths"},
};

// `peak bench --chat`, `--embed` and `--mmproj` are programs of their own: their messages say so.
const Command kChatBench = {"bench --chat", run_chat_bench, nullptr};
const Command kEmbedBench = {"bench --embed", run_embed_bench, nullptr};
const Command kImageBench = {"bench --mmproj", run_image_bench, nullptr};

const Command* find_command(const char* name, int argc, char** argv) {
  for (const Command& c : kCommands) {
    if (std::strcmp(name, c.name) != 0) continue;
    if (c.run == run_bench) {
      for (int i = 2; i < argc; ++i) {
        if (std::strcmp(argv[i], "--chat") == 0) return &kChatBench;
        if (std::strcmp(argv[i], "--embed") == 0) return &kEmbedBench;
        if (std::strcmp(argv[i], "--mmproj") == 0) return &kImageBench;
      }
    }
    return &c;
  }
  return nullptr;
}

// Output that did not reach stdout (a full disk, a closed pipe) fails the
// command: 1 and a message, as for any other error.
int check_stdout(const Command& c, int status) {
  errno = 0;
  if (std::fflush(stdout) == 0 && !std::ferror(stdout)) return status;
  const int err = errno;
  std::fprintf(stderr, "peak %s: cannot write to standard output: %s\n", c.name,
               err != 0 ? std::strerror(err) : "a write failed");
  return 1;
}

// Runs a command on its arguments (argv[0] is its name). What it throws ends it
// with one line "peak <command>: <message>" on stderr and exit status 2 for a
// usage error, 1 for anything else.
int run_command(const Command& c, int argc, char** argv) {
  try {
    return check_stdout(c, c.run(argc, argv));
  } catch (const UsageError& e) {
    std::fprintf(stderr, "peak %s: %s\n", c.name, e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "peak %s: %s\n", c.name, e.what());
    return 1;
  }
}

void print_usage(std::FILE* out) {
  std::fprintf(out, "usage: peak <command> [options]\n\ncommands:\n");
  for (const Command& c : kCommands) std::fprintf(out, "  %-10s %s\n", c.name, c.summary);
  std::fprintf(out, "\n'peak <command> --help' describes a command's options.\n");
}

// SIGINT, SIGTERM, SIGHUP (the terminal closed) and SIGQUIT end the process as
// they would by default, but first remove the temporary file of a model or
// session being written, which would otherwise be left behind
// ("OUT.gguf.partial-..."). A signal the process
// started with ignored (nohup, a background job) stays ignored. `peak chat`
// replaces the SIGINT handler with one that stops the answer being written.
void remove_temporary_files_and_die(int sig) {
  peak_remove_temporary_files();
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

void install_signal_handlers() {
  for (const int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) {
    struct sigaction old {};
    if (sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;
    struct sigaction sa {};
    sa.sa_handler = remove_temporary_files_and_die;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, nullptr);
  }
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
  install_signal_handlers();
  if (const Command* c = find_command(name, argc, argv)) return run_command(*c, argc - 1, argv + 1);
  std::fprintf(stderr, "peak: unknown command '%s'\n", name);
  print_usage(stderr);
  return 2;
}
