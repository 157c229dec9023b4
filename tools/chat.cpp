// peak chat: an interactive conversation with a model, streamed as it is
// generated. Lines come from the terminal, or from stdin when it is not one
// (scriptable). Without -m it runs the bundled demo model.
//
// Every turn formats the whole conversation with the model's chat template and
// feeds only the text the KV cache has not seen yet, so each answer costs the
// new message, not the whole history.
#include <csignal>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include <unistd.h>

#include "cli_args.h"
#include "commands.h"
#include "model_session.h"

namespace {

// Ctrl-C: the first stops the current answer, a second (or one at the prompt) exits.
volatile int g_abort = 0;
volatile int g_generating = 0;

void on_sigint(int) {
  if (g_abort || !g_generating) {
    const char nl = '\n';
    (void)!::write(STDOUT_FILENO, &nl, 1);
    ::_exit(130);
  }
  g_abort = 1;
}

struct ChatOptions {
  GenerationOptions gen;
  std::string system;
  std::string template_name;  // empty: the model's; "raw": no template
  bool demo = false;
};

void print_help() {
  std::printf(
      "usage: peak chat [-m MODEL] [--system TEXT] [options]\n"
      "  Chats with a model. Type a message and press Enter; /help lists the commands.\n"
      "  Without -m it runs the bundled demo model, a tiny story model (not an assistant).\n"
      "  When stdin is not a terminal, every line is a message (scriptable).\n"
      "  --system TEXT             system prompt\n"
      "  --chat-template NAME      chatml, llama2, llama3, mistral-v7, gemma, phi3, zephyr, ...,\n"
      "                            or raw (no template: the text continues as written)\n"
      "%s",
      generation_options_help());
}

ChatOptions parse(int argc, char** argv, bool* help) {
  ChatOptions o;
  ArgCursor args(argc, argv);
  while (!args.done()) {
    const char* a = args.peek();
    if (parse_generation_option(args, o.gen)) continue;
    args.next();
    if (!std::strcmp(a, "-h") || !std::strcmp(a, "--help")) {
      *help = true;
      return o;
    } else if (!std::strcmp(a, "--system") || !std::strcmp(a, "-sys")) {
      o.system = args.value(a);
    } else if (!std::strcmp(a, "--chat-template")) {
      o.template_name = args.value(a);
    } else {
      throw UsageError(std::string("unknown option '") + a + "' (see peak chat --help)");
    }
  }
  return o;
}

class ChatSession {
 public:
  ChatSession(LoadedModel& m, const ChatOptions& o, bool tty)
      : m_(m), options_(o), tty_(tty), raw_(o.template_name == "raw") {
    if (!o.system.empty()) messages_.push_back({"system", o.system});
  }

  // One user turn. Throws CommandError when the context cannot take it.
  void answer(const std::string& user_text) {
    messages_.push_back({"user", user_text});
    std::string prompt = raw_ ? user_text : new_template_text();
    peak_generate_params gp = peak_generate_default_params();
    gp.max_tokens = options_.gen.n_predict;
    gp.add_special = peak_context_n_used(m_.context.get()) == 0 ? 1 : 0;
    gp.parse_special = raw_ ? 0 : 1;
    gp.abort_flag = &g_abort;
    gp.user_data = this;
    gp.on_text = [](const char* text, size_t n, void* self) {
      auto* s = static_cast<ChatSession*>(self);
      std::fwrite(text, 1, n, stdout);
      std::fflush(stdout);
      s->reply_.append(text, n);
      return 1;
    };
    reply_.clear();
    last_ = peak_generate_result{};
    last_.struct_size = sizeof last_;
    g_abort = 0;
    g_generating = 1;
    const peak_status status = peak_generate(m_.context.get(), m_.sampler.get(), prompt.data(), prompt.size(), &gp, &last_);
    g_generating = 0;
    std::printf("\n");
    if (status != PEAK_OK) {
      messages_.pop_back();
      throw CommandError(std::string(peak_last_error()) +
                         (status == PEAK_ERR_CONTEXT_FULL ? " (type /reset to start a new conversation)" : ""));
    }
    if (last_.stop_reason == PEAK_STOP_CONTEXT_FULL) {
      std::fprintf(stderr, "peak chat: the answer stopped: the context is full (type /reset to start over)\n");
    }
    messages_.push_back({"assistant", reply_});
    if (!raw_) formatted_length_ = format(false).size();
    ++turns_;
    print_turn_stats();
  }

  void reset() {
    check_status(peak_kv_clear(m_.context.get()));
    peak_sampler_reset(m_.sampler.get());
    messages_.clear();
    if (!options_.system.empty()) messages_.push_back({"system", options_.system});
    formatted_length_ = 0;
    turns_ = 0;
  }

  void print_stats() const {
    std::printf("model:    %s (%s, %d layers, vocab %d), chat template %s\n", m_.info.name, m_.info.architecture,
                m_.info.n_layer, m_.info.n_vocab, raw_ ? "raw" : template_in_use().c_str());
    std::printf("context:  %u of %u tokens used, %d turns\n", peak_context_n_used(m_.context.get()),
                peak_context_n_ctx(m_.context.get()), turns_);
    if (turns_ > 0) {
      std::printf("last turn: prompt %d tokens (%.1f tokens/s), answer %d tokens (%.1f tokens/s)\n",
                  last_.n_prompt_tokens, rate(last_.n_prompt_tokens, last_.prompt_seconds), last_.n_generated_tokens,
                  rate(last_.n_generated_tokens, last_.generate_seconds));
    }
  }

 private:
  static double rate(int n, double seconds) { return seconds > 0 ? n / seconds : 0.0; }

  std::string format(bool add_generation_prompt) const {
    std::vector<peak_chat_message> list;
    for (const auto& [role, content] : messages_) list.push_back({role.c_str(), content.c_str()});
    const char* name = options_.template_name.empty() ? nullptr : options_.template_name.c_str();
    size_t length = 0;
    peak_status s = peak_chat_apply_template(m_.model.get(), name, list.data(), list.size(), add_generation_prompt,
                                             nullptr, 0, &length);
    if (s != PEAK_ERR_BUFFER_TOO_SMALL && s != PEAK_OK) check_status(s);
    std::string text(length, '\0');
    check_status(peak_chat_apply_template(m_.model.get(), name, list.data(), list.size(), add_generation_prompt,
                                          text.data(), text.size(), &length));
    return text;
  }

  // The part of the formatted conversation the KV cache has not seen.
  std::string new_template_text() {
    const std::string full = format(true);
    if (formatted_length_ <= full.size()) return full.substr(formatted_length_);
    // The template rewrote earlier turns: start the cache over.
    check_status(peak_kv_clear(m_.context.get()));
    return full;
  }

  std::string template_in_use() const {
    return options_.template_name.empty() ? m_.info.chat_template : options_.template_name;
  }

  void print_turn_stats() const {
    const char* on = tty_ ? "\033[2m" : "";
    const char* off = tty_ ? "\033[0m" : "";
    std::fprintf(tty_ ? stdout : stderr, "%s[prompt %d tokens, %.1f tokens/s | answer %d tokens, %.1f tokens/s | context %u/%u]%s\n",
                 on, last_.n_prompt_tokens, rate(last_.n_prompt_tokens, last_.prompt_seconds),
                 last_.n_generated_tokens, rate(last_.n_generated_tokens, last_.generate_seconds),
                 peak_context_n_used(m_.context.get()), peak_context_n_ctx(m_.context.get()), off);
  }

  LoadedModel& m_;
  const ChatOptions& options_;
  bool tty_;
  bool raw_;
  std::vector<std::pair<std::string, std::string>> messages_;  // role, content
  size_t formatted_length_ = 0;  // bytes of the formatted conversation already in the cache
  std::string reply_;
  peak_generate_result last_{};
  int turns_ = 0;
};

void print_commands() {
  std::printf("/reset  start a new conversation\n/stats  context use and speed\n/help   this list\n/quit   leave (or Ctrl-D)\n"
              "Ctrl-C stops an answer; a second Ctrl-C leaves.\n");
}

}  // namespace

int run_chat(int argc, char** argv) {
  try {
    bool help = false;
    ChatOptions o = parse(argc, argv, &help);
    if (help) {
      print_help();
      return 0;
    }
    const bool tty_in = ::isatty(STDIN_FILENO) != 0;
    const bool tty_out = ::isatty(STDOUT_FILENO) != 0;
    std::string path = o.gen.model_path;
    if (path.empty()) {
      path = demo_model_path();
      o.demo = true;
      if (o.template_name.empty()) o.template_name = "raw";
      std::fprintf(stderr,
                   "peak chat: no model given (-m), so this is the bundled demo model stories260K: a tiny model that "
                   "writes children's stories, not an assistant. Start a story and it goes on.\n");
    }
    LoadedModel m = load_model(path, o.gen);
    if (o.template_name.empty() && m.info.chat_template_warning[0]) {
      std::fprintf(stderr, "peak chat: %s\n", m.info.chat_template_warning);
    }
    struct sigaction sa {};
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, nullptr);

    ChatSession session(m, o, tty_out);
    if (tty_in) std::printf("%s: type a message, /help for commands\n", m.info.name[0] ? m.info.name : path.c_str());
    std::string line;
    while (true) {
      if (tty_in) {
        std::printf(tty_out ? "\033[32m> \033[0m" : "> ");
        std::fflush(stdout);
      }
      if (!std::getline(std::cin, line)) break;  // EOF: leave cleanly
      if (line.empty()) continue;
      if (line[0] == '/') {
        if (line == "/quit" || line == "/exit") break;
        if (line == "/reset") {
          session.reset();
          std::printf("(new conversation)\n");
        } else if (line == "/stats") {
          session.print_stats();
        } else if (line == "/help") {
          print_commands();
        } else {
          std::printf("unknown command '%s'\n", line.c_str());
          print_commands();
        }
        continue;
      }
      try {
        session.answer(line);
      } catch (const CommandError& e) {
        std::fprintf(stderr, "peak chat: %s\n", e.what());
      }
    }
    if (tty_in) std::printf("\n");
    return 0;
  } catch (const UsageError& e) {
    std::fprintf(stderr, "peak chat: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "peak chat: %s\n", e.what());
    return 1;
  }
}
