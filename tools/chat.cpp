// peak chat: an interactive conversation with a model, streamed as it is
// generated. Messages come from the line editor at a terminal
// (terminal_line_reader.h), or line by line from stdin when it is not one
// (scriptable). Without -m it runs the bundled demo model.
//
// The conversation lives in a peak_session: a fixed-size KV cache holding the
// system prompt, a rolling summary of dropped history and the recent messages
// (SSSKV-lite), so a chat can go on for hours at a steady speed.
#include <csignal>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <unistd.h>

#include "cli_args.h"
#include "commands.h"
#include "image_prompt.h"
#include "line_history.h"
#include "line_render.h"
#include "model_session.h"
#include "terminal.h"
#include "terminal_line_reader.h"
#include "text_format.h"
#include "tool_options.h"

namespace {

// Ctrl-C during an answer: the first stops it, a second exits. At the line
// editor's prompt Ctrl-C is a key, not a signal (terminal_line_reader.h); a
// SIGINT that comes anyway, or one at a plain prompt, exits.
volatile int g_abort = 0;
volatile int g_generating = 0;

void on_sigint(int) {
  if (g_abort || !g_generating) {
    restore_terminal_from_signal();
    const char nl = '\n';
    (void)!::write(STDOUT_FILENO, &nl, 1);
    ::_exit(130);
  }
  g_abort = 1;
}

// The text a C API call writes as (buf, capacity, *length): its length first,
// then the text into a buffer with room for its NUL.
template <typename Call>
std::string fetch_text(Call call) {
  size_t n = 0;
  call(nullptr, 0, &n);
  std::vector<char> text(n + 1);
  check_status(call(text.data(), text.size(), &n));
  return std::string(text.data(), n);
}

struct ChatOptions : ChatSessionOptions {
  std::string system;
  std::string load_path;
  std::string mmproj;  // --mmproj: the model's image encoder, for /image
  ToolOptions tools;
  bool show_thinking = false;  // --show-thinking: print its reasoning (dim)
  bool dump_prompt = false;    // --dump-prompt: print what the model reads before each answer
};

void print_help() {
  std::printf(
      "usage: peak chat [-m MODEL] [--system TEXT] [options]\n"
      "  Chats with a model. Type a message and press Enter; /help lists the commands.\n"
      "  Without -m it runs the bundled demo model, a tiny story model (not an assistant).\n"
      "  At a terminal the line is edited as in readline (arrows, Home/End, Ctrl-W, Ctrl-U ...),\n"
      "  Up/Down recall earlier messages (kept in $XDG_STATE_HOME/peak/history, else\n"
      "  ~/.local/state/peak/history), a line ending in \\ continues the message on the next line,\n"
      "  and a paste is one message. Ctrl-C stops an answer or clears the line; Ctrl-C twice or\n"
      "  Ctrl-D leaves.\n"
      "  When stdin is not a terminal, every line is a message (scriptable).\n"
      "  --system TEXT             system prompt (kept for the whole conversation)\n"
      "  --chat-template NAME      chatml, llama2, llama3, mistral-v7, gemma, phi3, zephyr, ...,\n"
      "                            or raw (no template: the text continues as written)\n"
      "  --load FILE               continue a conversation saved with /save\n"
      "  --mmproj FILE             the model's image encoder (a projector file, llama.cpp's\n"
      "                            mmproj-*.gguf): /image FILE attaches a picture to the next message\n"
      "  --think on|off            thinking models (Qwen3, SmolLM3, ...): reason before answering\n"
      "                            (default off); the reasoning is never kept in the conversation\n"
      "  --show-thinking           print the reasoning, dim (to stderr when stdout is not a terminal)\n"
      "  --dump-prompt             print the text the model reads before each answer, control\n"
      "                            tokens written out, to stderr between [prompt] and [/prompt]\n"
      "  -c, --ctx-size N          sets --recent-max to N less the summary and headroom\n"
      "%s"
      "  After each call you type its result (a line, sent as it is) at a prompt naming the tool,\n"
      "  and the model answers the results (free to call again: required and a tool's name hold\n"
      "  only the answers to your messages).\n"
      "%s%s%s%s",
      kToolOptionsHelp, kGrammarOptionsHelp, session_options_help(),
      model_options_help("q8_0; f16 when the model's\n"
                         "                            head size is not a multiple of 32")
          .c_str(),
      sampling_options_help().c_str());
}

const char* mode_name(peak_memory_mode m) {
  return m == PEAK_MEMORY_SSSKV ? "ssskv" : m == PEAK_MEMORY_WINDOW ? "window" : "none";
}

ChatOptions parse(int argc, char** argv, bool* help) {
  ChatOptions o;
  ArgCursor args(argc, argv);
  while (!args.done()) {
    const char* a = args.peek();
    if (parse_chat_session_option(args, o)) continue;
    args.next();
    if (!std::strcmp(a, "-h") || !std::strcmp(a, "--help")) {
      *help = true;
      return o;
    } else if (!std::strcmp(a, "--system") || !std::strcmp(a, "-sys")) {
      o.system = args.value(a);
    } else if (!std::strcmp(a, "--load")) {
      o.load_path = args.value(a);
    } else if (!std::strcmp(a, "--mmproj")) {
      o.mmproj = args.value(a);
    } else if (!std::strcmp(a, "--show-thinking")) {
      o.show_thinking = true;
    } else if (!std::strcmp(a, "--dump-prompt")) {
      o.dump_prompt = true;
    } else if (parse_tool_option(a, args, o.tools)) {
      continue;
    } else if (parse_grammar_option(a, args, o.gen)) {
      continue;
    } else {
      throw UsageError(std::string("unknown option '") + a + "' (see peak chat --help)");
    }
  }
  check_tool_options(o.tools);
  return o;
}

// A tool call of the last answer, waiting for the result the user types.
struct PendingCall {
  std::string id;
  std::string name;
};

class Chat {
 public:
  Chat(LoadedModel& m, const ChatOptions& o, bool tty) : m_(m), o_(o), tty_(tty) {
    peak_session_params p = chat_session_params(o);
    if (!o.mmproj.empty()) {
      projector_ = load_projector(o.mmproj, m.info);
      projector_info_.struct_size = sizeof projector_info_;
      check_status(peak_projector_get_info(projector_.get(), &projector_info_));
      p.projector = projector_.get();
    }
    p.system_prompt = o.system.empty() ? nullptr : o.system.c_str();
    set_session_tools(o.tools, p);
    peak_session* s = create_tool_session(m.model.get(), p, o.tools);
    session_.reset(s);
    if (!m.adapter_uses.empty()) check_status(peak_session_set_adapters(s, &m.adapter_set));
    if (o.tools.given()) {
      check_status(peak_session_set_tool_call_callback(
          s, [](const peak_tool_call* call, size_t, void* self) { static_cast<Chat*>(self)->show_call(*call); }, this));
    }
  }

  // A message of the user, answered under --tool-choice. False when Ctrl-C
  // stopped it before the answer began (the turn is undone).
  bool answer(const std::string& text) {
    check_spelled(m_.model.get(), text, false, "chat", "the message");
    if (o_.dump_prompt) dump_prompt(text);
    set_tool_choice(o_.tools.choice);
    return generate([&](const peak_generate_params* gp, peak_generate_result* r) {
      return peak_session_chat(session_.get(), text.data(), text.size(), gp, r);
    });
  }

  // The calls of the last answer, when it made any (each waits for its result).
  std::vector<PendingCall> calls() const {
    std::vector<PendingCall> out;
    const size_t n = peak_session_n_tool_calls(session_.get());
    for (size_t i = 0; i < n; ++i) {
      peak_tool_call call{};
      call.struct_size = sizeof call;
      check_status(peak_session_get_tool_call(session_.get(), i, &call));
      out.push_back({std::string(call.id, call.id_length), std::string(call.name, call.name_length)});
    }
    return out;
  }

  // Encodes the picture file and attaches it to the next message (the image
  // encoder is made at the first).
  void attach_image(const std::string& path) {
    if (!projector_) {
      throw CommandError("/image needs the model's image encoder: start peak chat with --mmproj FILE");
    }
    if (!encoder_) encoder_ = create_image_encoder(projector_.get(), o_.gen.context.n_threads);
    const EncodedPicture picture = encode_image_file(encoder_.get(), path);
    check_status(peak_session_attach_picture(session_.get(), picture.rows.data(), picture.rows.size(), picture.width,
                                             picture.height));
    const size_t n = peak_session_n_attached_images(session_.get());
    std::printf("(%s attached: %zu image tokens; %s with your next message)\n", path.c_str(),
                picture.rows.size() / projector_info_.n_embd,
                n == 1 ? "it goes" : (std::to_string(n) + " images go").c_str());
  }

  void add_result(const PendingCall& call, const std::string& result) {
    check_status(peak_session_add_tool_result(session_.get(), call.id.c_str(), result.data(), result.size()));
  }

  // Whether tool results wait for their answer (the last message is one).
  bool results_waiting() const {
    const size_t n = peak_session_n_messages(session_.get());
    peak_session_message message{};
    message.struct_size = sizeof message;
    return n > 0 && peak_session_get_message(session_.get(), n - 1, &message) == PEAK_OK &&
           message.role == PEAK_ROLE_TOOL;
  }

  // The answer to the results: text, or calls again (never forced to call,
  // so that required does not loop). False when Ctrl-C stopped it before it
  // began (the results still wait).
  bool answer_results() {
    set_tool_choice(o_.tools.choice == PEAK_TOOL_CHOICE_NONE ? PEAK_TOOL_CHOICE_NONE : PEAK_TOOL_CHOICE_AUTO);
    return generate([&](const peak_generate_params* gp, peak_generate_result* r) {
      return peak_session_continue(session_.get(), gp, r);
    });
  }

 private:
  template <typename Turn>
  bool generate(Turn turn) {
    peak_generate_params gp = peak_generate_default_params();
    gp.max_tokens = o_.gen.n_predict;
    set_speculative(o_.gen, m_, gp);
    gp.abort_flag = &g_abort;
    gp.user_data = this;
    gp.on_kinded_text = [](const char* t, size_t n, peak_text_kind kind, void* self) {
      static_cast<Chat*>(self)->show(t, n, kind);
      return 1;
    };
    last_ = peak_generate_result{};
    last_.struct_size = sizeof last_;
    g_abort = 0;
    g_generating = 1;
    reasoning_open_ = false;
    line_open_ = false;
    const peak_status status = turn(&gp, &last_);
    g_generating = 0;
    end_reasoning();
    if (line_open_ || !shown_call_) std::printf("\n");
    shown_call_ = false;
    if (status == PEAK_ERR_CANCELLED) {  // Ctrl-C before the answer began: the turn is undone
      std::printf(results_waiting() ? "(stopped while the results were read; press Enter to have them answered)\n"
                                    : "(stopped while the message was read; it is not part of the conversation)\n");
      return false;
    }
    if (status != PEAK_OK) {
      throw CommandError(std::string(peak_last_error()) +
                         (status == PEAK_ERR_CONTEXT_FULL ? " (type /reset to start a new conversation)" : ""));
    }
    print_turn_stats();
    return true;
  }

  void set_tool_choice(peak_tool_choice choice) {
    if (!o_.tools.given()) return;
    const char* function = choice == PEAK_TOOL_CHOICE_FUNCTION ? o_.tools.function.c_str() : nullptr;
    check_status(peak_session_set_tool_choice(session_.get(), choice, function, o_.tools.parallel ? 1 : 0));
  }

 public:
  void reset() { check_status(peak_session_reset(session_.get())); }
  void save(const std::string& path) {
    check_status(peak_session_save(session_.get(), path.c_str(), 1));
    std::printf("(saved to %s)\n", path.c_str());
  }
  void load(const std::string& path) {
    check_status(peak_session_restore(session_.get(), path.c_str()));
    std::printf("(restored %s: %zu turns)\n", path.c_str(), stats().turns);
  }

  peak_session_stats stats() const {
    peak_session_stats s{};
    s.struct_size = sizeof s;
    check_status(peak_session_get_stats(session_.get(), &s));
    return s;
  }

  void print_stats() const {
    const peak_session_stats s = stats();
    // Names from the model file are shown escaped (text_format.h); answers are not.
    std::printf("model:     %s (%s, %zu layers, vocab %zu), chat template %s (%s)\n",
                shown({m_.info.name, m_.info.name_length}).c_str(), m_.info.architecture, m_.info.n_layer,
                m_.info.n_vocab,
                shown(o_.template_name.empty() ? m_.info.chat_template : o_.template_name.c_str()).c_str(),
                shown(o_.template_name.empty() ? m_.info.chat_template_source : "chosen by name").c_str());
    std::printf("memory:    mode %s, context %zu tokens: prefix %zu + summary %zu + recent %zu (%zu messages)\n",
                mode_name(o_.session.mode), s.n_ctx, s.prefix_tokens, s.summary_tokens, s.recent_tokens,
                s.recent_messages);
    std::printf("history:   %zu turns, %zu tokens dropped, %zu since the last summary, %zu summaries (%zu failed)%s\n",
                s.turns, s.dropped_total, s.dropped_since_summary, s.summaries, s.summary_failures,
                s.summary_running ? " (one being written)" : "");
    std::printf("time:      %.2f s writing summaries, %.2f s rebuilding caches on the worker, %.3f s putting them in "
                "place (last %.3f s), %.3f s moving the window\n",
                s.summary_seconds, s.worker_rebuild_seconds, s.rebuild_seconds, s.last_rebuild_seconds,
                s.window_shift_seconds);
    std::printf("kv cache:  %.1f MiB (main + summary)", static_cast<double>(s.kv_bytes) / 1048576.0);
    if (s.staging_kv_bytes > 0) {
      std::printf(", %.1f MiB more for a cache being rebuilt", static_cast<double>(s.staging_kv_bytes) / 1048576.0);
    }
    std::printf("\n");
    if (s.turns > 0) {
      std::printf("last turn: prompt %zu tokens (%.1f tokens/s), answer %zu tokens (%.1f tokens/s)\n",
                  last_.n_prompt_tokens, rate(last_.n_prompt_tokens, last_.prompt_seconds), last_.n_generated_tokens,
                  rate(last_.n_generated_tokens, last_.generate_seconds));
    }
  }

  void print_summary() const {
    const std::string text = fetch_text([this](char* buf, size_t capacity, size_t* n) {
      return peak_session_get_summary(session_.get(), buf, capacity, n);
    });
    // A session file may bring the summary: shown escaped.
    std::printf("%s\n", text.empty() ? "(no summary yet)" : escape_keeping_lines(text).c_str());
  }

 private:
  // Answers go to stdout; reasoning, when shown, dim on a terminal, else to
  // stderr so that a script's stdout holds only the answers.
  void show(const char* text, size_t n, peak_text_kind kind) {
    if (kind == PEAK_TEXT_REASONING) {
      if (!o_.show_thinking) return;
      FILE* out = tty_ ? stdout : stderr;
      if (!reasoning_open_ && tty_) std::fputs("\033[2m", out);
      reasoning_open_ = true;
      std::fwrite(text, 1, n, out);
      std::fflush(out);
      return;
    }
    end_reasoning();
    if (n > 0) line_open_ = text[n - 1] != '\n';
    std::fwrite(text, 1, n, stdout);
    std::fflush(stdout);
  }

  // A call as soon as it parsed, on a line of its own (dim at a terminal).
  void show_call(const peak_tool_call& call) {
    end_reasoning();
    if (line_open_) std::printf("\n");
    std::printf("%s%s%s\n", tty_ ? "\033[36m" : "", tool_call_line(call).c_str(), tty_ ? "\033[0m" : "");
    std::fflush(stdout);
    line_open_ = false;
    shown_call_ = true;
  }

  void end_reasoning() {
    if (!reasoning_open_) return;
    reasoning_open_ = false;
    std::fputs(tty_ ? "\033[0m\n\n" : "\n", tty_ ? stdout : stderr);
  }

  void dump_prompt(const std::string& text) const {
    const std::string prompt = fetch_text([&](char* buf, size_t capacity, size_t* n) {
      return peak_session_preview_prompt(session_.get(), text.data(), text.size(), buf, capacity, n);
    });
    std::fprintf(stderr, "[prompt]\n");
    const std::string escaped = escape_keeping_lines(prompt);  // the template's and the messages' text
    std::fwrite(escaped.data(), 1, escaped.size(), stderr);
    std::fprintf(stderr, "\n[/prompt]\n");
  }

  static double rate(size_t n, double seconds) { return seconds > 0 ? static_cast<double>(n) / seconds : 0.0; }

  void print_turn_stats() {
    if (last_.stop_reason == PEAK_STOP_CONTEXT_FULL) {
      std::fprintf(stderr, "peak chat: the answer stopped: the context is full (type /reset to start over)\n");
    }
    const peak_session_stats s = stats();
    const char* on = tty_ ? "\033[2m" : "";
    const char* off = tty_ ? "\033[0m" : "";
    std::string lookup;
    if (o_.gen.lookup_ngram > 0 || m_.draft) {
      lookup = std::string(o_.gen.lookup_ngram > 0 ? " | lookup " : " | draft ") +
               std::to_string(last_.n_accepted_tokens) + "/" + std::to_string(last_.n_drafted_tokens) + " accepted";
    }
    std::fprintf(
        tty_ ? stdout : stderr,
        "%s[prompt %zu tokens, %.1f tokens/s | answer %zu tokens, %.1f tokens/s%s | context %zu+%zu+%zu/%zu]%s\n", on,
        last_.n_prompt_tokens, rate(last_.n_prompt_tokens, last_.prompt_seconds), last_.n_generated_tokens,
        rate(last_.n_generated_tokens, last_.generate_seconds), lookup.c_str(), s.prefix_tokens, s.summary_tokens,
        s.recent_tokens, s.n_ctx, off);
    // The count starts over after /reset and /load.
    const bool failed_since = s.summary_failures > failures_told_;
    failures_told_ = s.summary_failures;
    if (failed_since) {
      const std::string why = fetch_text([this](char* buf, size_t capacity, size_t* n) {
        return peak_session_get_summary_error(session_.get(), buf, capacity, n);
      });
      std::fprintf(stderr, "peak chat: a summary failed: %s\n", why.c_str());
    }
  }

  LoadedModel& m_;
  const ChatOptions& o_;
  bool tty_;
  // Declared before the session, which must be freed first.
  std::unique_ptr<peak_projector, ProjectorDeleter> projector_;
  peak_projector_info projector_info_{};
  std::unique_ptr<peak_image_encoder, ImageEncoderDeleter> encoder_;
  std::unique_ptr<peak_session, SessionDeleter> session_;
  peak_generate_result last_{};
  bool reasoning_open_ = false;
  bool line_open_ = false;    // the answer's text shown so far does not end its line
  bool shown_call_ = false;   // this answer showed a call (which ended its line)
  size_t failures_told_ = 0;  // summary failures already reported
};

// The commands typed at the prompt. An argument is the rest of the line, so a
// file name may hold spaces.
struct ChatCommand {
  const char* name;
  const char* argument;       // as the list shows it; nullptr: takes none
  const char* argument_what;  // what a missing argument is called
  const char* help;
};

const ChatCommand kChatCommands[] = {
    {"/reset", nullptr, nullptr, "start a new conversation"},
    {"/stats", nullptr, nullptr, "memory, history and speed"},
    {"/summary", nullptr, nullptr, "the summary of the dropped history"},
    {"/image", "FILE", "a picture (PNG or JPEG)", "attach a picture to the next message (--mmproj)"},
    {"/save", "FILE", "a file name", "save the conversation"},
    {"/load", "FILE", "a file name", "continue a saved conversation"},
    {"/help", nullptr, nullptr, "this list"},
    {"/quit", nullptr, nullptr, "leave (or Ctrl-D)"},
};

void print_commands(bool line_editor) {
  for (const ChatCommand& c : kChatCommands) {
    const std::string usage = std::string(c.name) + (c.argument ? std::string(" ") + c.argument : "");
    std::printf("%-14s%s\n", usage.c_str(), c.help);
  }
  std::printf(line_editor ? "Ctrl-C stops an answer or clears the line; Ctrl-C twice or Ctrl-D leaves.\n"
                            "End a line with \\ to continue the message on the next; a paste is one message.\n"
                          : "Ctrl-C stops an answer; a second Ctrl-C leaves.\n");
}

// Runs the command on a line that starts with '/'. Returns false for /quit.
bool run_command(Chat& chat, const std::string& line, bool line_editor) {
  const size_t end = line.find_first_of(" \t\n");
  const std::string name = line.substr(0, end);
  const size_t arg_start = end == std::string::npos ? std::string::npos : line.find_first_not_of(" \t\n", end);
  std::string arg = arg_start == std::string::npos ? std::string() : line.substr(arg_start);
  arg.erase(arg.find_last_not_of(" \t\n") + 1);
  const ChatCommand* command = nullptr;
  for (const ChatCommand& c : kChatCommands) {
    if (name == c.name || (name == "/exit" && std::strcmp(c.name, "/quit") == 0)) command = &c;
  }
  if (!command) {
    std::printf("unknown command '%s'\n", name.c_str());
    print_commands(line_editor);
    return true;
  }
  if (command->argument && arg.empty()) {
    throw CommandError(std::string(command->name) + " needs " + command->argument_what + ": " + command->name + " " +
                       command->argument);
  }
  if (!command->argument && !arg.empty()) throw CommandError(std::string(command->name) + " takes no argument");
  const std::string c = command->name;
  if (c == "/quit") return false;
  if (c == "/reset") {
    chat.reset();
    std::printf("(new conversation)\n");
  } else if (c == "/stats") {
    chat.print_stats();
  } else if (c == "/summary") {
    chat.print_summary();
  } else if (c == "/image") {
    chat.attach_image(arg);
  } else if (c == "/save") {
    chat.save(arg);
  } else if (c == "/load") {
    chat.load(arg);
  } else if (c == "/help") {
    print_commands(line_editor);
  }
  return true;
}

// Reads the next line: at the line editor under `prompt`, else from stdin
// (showing the prompt when stdin is a terminal). False at the end of input.
bool read_line(TerminalLineReader* editor, bool tty_in, const char* prompt, std::string* line) {
  if (editor) {
    editor->set_prompt(Prompt(prompt));
    return editor->read_line(line);
  }
  if (tty_in) {
    std::printf("%s", prompt);
    std::fflush(stdout);
  }
  return static_cast<bool>(std::getline(std::cin, *line));
}

// After an answer: the result of each of its calls, typed by the user, then
// the answer to them, until an answer makes no call. False at the end of
// input.
bool give_tool_results(Chat& chat, TerminalLineReader* editor, bool tty_in, bool tty_out) {
  for (std::vector<PendingCall> calls = chat.calls(); !calls.empty(); calls = chat.calls()) {
    for (const PendingCall& call : calls) {
      const std::string prompt =
          (tty_out ? "\033[36mresult of " : "result of ") + call.name + (tty_out ? ">\033[0m " : "> ");
      std::string result;
      if (!read_line(editor, tty_in, prompt.c_str(), &result)) return false;
      chat.add_result(call, result);
    }
    if (!chat.answer_results()) return true;
  }
  return true;
}

}  // namespace

int run_chat(int argc, char** argv) {
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
    if (o.template_name.empty()) o.template_name = "raw";
    std::fprintf(stderr,
                 "peak chat: no model given (-m), so this is the bundled demo model stories260K: a tiny model that "
                 "writes children's stories, not an assistant. Start a story and it goes on.\n");
  }
  read_tools_file(o.tools);
  LoadedModel m = load_model(path, o.gen, /*with_context=*/false);
  if (o.template_name.empty() && m.info.chat_template_warning[0]) {
    std::fprintf(stderr, "peak chat: %s\n", shown(m.info.chat_template_warning).c_str());
  }
  struct sigaction sa {};
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);

  Chat chat(m, o, tty_out);
  if (!o.load_path.empty()) chat.load(o.load_path);
  const char* prompt = tty_out ? "\033[32m> \033[0m" : "> ";
  std::unique_ptr<TerminalLineReader> editor;
  if (line_editing_possible(STDIN_FILENO, STDOUT_FILENO)) {
    editor = std::make_unique<TerminalLineReader>(
        STDIN_FILENO, STDOUT_FILENO, Prompt(prompt), Prompt("\033[2m. \033[0m"),
        HistoryFile(HistoryFile::default_path(),
                    [](const std::string& why) { std::fprintf(stderr, "peak chat: %s\n", why.c_str()); }));
  }
  if (tty_in) {
    const std::string_view name(m.info.name, m.info.name_length);
    std::printf("%s: type a message, /help for commands\n", shown(name.empty() ? path : name).c_str());
  }
  std::string line;
  // Ctrl-D, Ctrl-C twice at the line editor, or the end of stdin: leave cleanly.
  while (read_line(editor.get(), tty_in, prompt, &line)) {
    try {
      bool answered = false;
      if (line.empty()) {
        if (!chat.results_waiting()) continue;  // Enter after a stopped answer to tool results: answer them
        answered = chat.answer_results();
      } else if (line[0] != '/') {
        answered = chat.answer(line);
      } else if (!run_command(chat, line, editor != nullptr)) {
        break;
      }
      if (answered && !give_tool_results(chat, editor.get(), tty_in, tty_out)) break;
    } catch (const CommandError& e) {
      std::fprintf(stderr, "peak chat: %s\n", e.what());
    }
  }
  if (tty_in && !editor) std::printf("\n");
  return 0;
}
