// SSSKV-lite: a long conversation in a fixed-size KV cache.
//
// The main context holds three contiguous segments:
//
//   [ Prefix ][ Summary ][ Recent ...................... ][ headroom ]
//     BOS +     <= summary_max   <= recent_max tokens:      overflow room
//     system    tokens: rolling  the latest messages,       for the answer
//     prompt    summary of the   dropped from the left      being written
//     (fixed)   dropped history  at message boundaries      (<= headroom)
//
// Dropped messages are kept as text. Once trigger_discard tokens were dropped
// since the last summary, the Summarizer (its own small context on the same
// model) rewrites "old summary + dropped text" into a new summary on a
// background worker after the answer, while the app waits for the user. The
// next turn puts the new summary in place, by one of three strategies:
// - `background` (the default): the same worker then builds the new cache
//   exactly (cache_rebuild.h): the Prefix's cells, copied when the job starts,
//   plus the new Summary and the Recent tokens of that moment, prefilled in a
//   staging context, and keeps it up to date with the turns sent meanwhile
//   (messages dropped from Recent's front are removed and the rest shifted, as
//   exact as `shift`; messages added are evaluated). The next turn swaps it in:
//   the hot path only catches up what the worker has not yet applied (nothing,
//   when the user took longer to write than the worker). The staging context exists from
//   the worker's allocation to the swap, a second main cache: for qwen3-0.6b
//   (28 layers, 8 KV heads of 128) with Q8_0 KV at recent_max 4096, summary_max
//   256 and headroom 512, KvCache::bytes_needed gives 60,932 bytes a cell, so
//   282.6 MiB plus 59.5 KiB per Prefix token (296,373,248 + 60,932 x Prefix
//   bytes): 282.7 MiB without a system prompt (`peak chat` on that model shows
//   kv_bytes 345.7 MiB, this cache's size plus the summary context's 63.0 MiB).
// - `shift` keeps the Prefix's and the Recent segment's keys and values,
//   prefills only the new Summary and moves Recent to its new positions by
//   re-rotating its keys: cheap, but with more than one layer Recent's deeper
//   keys and values still saw the old summary and dropped text (not a fresh prefill).
// - `reprefill` clears the cache and prefills Prefix + Summary + Recent again:
//   exact, but the user waits for it.
//
// Modes: `ssskv` (the above), `window` (drop without summarizing: StreamingLLM
// with the Prefix as attention sink) and `none` (never drop; a clear error when
// the context is full).
//
// The conversation is kept as text, every message, dropped or not (messages()):
// what an app shows, while the model reads the Prefix, the Summary and Recent.
// It alternates user and assistant messages, a user's first. Besides a turn,
// append() adds a message without generating (an imported history), and
// regenerate() / edit_last() take the last turn back and answer again: right
// after that turn, exactly as the cache was before it (its cells, the messages
// it dropped put back, the sampler's penalty window; a summary job that turn
// or an earlier one started, not yet in place, is cancelled and its text waits
// for the next job); once a summary was put in place since, the messages the
// turn dropped stay dropped and only its own messages are taken back.
//
// A session is used by one thread at a time. Its summary worker reads none of
// the session's members (it works on copies and on the immutable TurnEncoder
// the session shares with it), so reading the messages, the summary or the
// statistics while a summary is being written needs no waiting.
//
// In parts: a TurnEncoder (turn_encoder.h) writes messages as tokens, a
// SessionState (session_state.h) keeps the segments, the messages and the
// statistics, SummaryJobs (summary_jobs.h) runs the summaries and puts them in
// place, a runtime::KvJournal per operation takes back what it did to the
// cells, and session files (session_file.h) hold the state.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "model/model.h"
#include "sampling/sampler_chain.h"
#include "chat/chat_template.h"
#include "chat/reasoning.h"
#include "runtime/context.h"
#include "runtime/generator.h"
#include "runtime/kv_journal.h"
#include "chat/cache_rebuild.h"
#include "chat/session_settings.h"
#include "chat/session_state.h"
#include "chat/session_tools.h"
#include "chat/summary_jobs.h"
#include "chat/summarizer.h"
#include "chat/turn_encoder.h"

namespace peak::chat {

// A session file refused because it was saved with another model or in a
// memory mode this session cannot continue; the message names the setting and
// both values. Other refused files throw std::runtime_error.
class SessionMismatch : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct FittedSession;  // session_file.h: a file's conversation fitted to a session

struct MessageView {
  const std::string& role;  // "system", "user", "assistant" or "tool"
  const std::string& text;
  MessageState state;
  size_t n_images = 0;  // the pictures at its text's markers
};

// Where a turn's time went on the caller's thread, in seconds.
struct TurnTimes {
  double rebuild = 0;       // putting a new summary in place first (waiting for it included, catch_up not)
  double catch_up = 0;      // bringing a cache rebuilt on the worker up to date and swapping it in
  double window_shift = 0;  // dropping messages from Recent, and after the answer moving the rest down
  double prefill = 0;       // evaluating the user's message
  double generation = 0;    // sampling and evaluating the answer
  double settle = 0;        // evaluating the previous answer as later prompts show it (see settle())
};

struct TurnResult {
  runtime::GenerateResult generation;
  std::string answer;                 // what the conversation keeps: the text, without calls
  std::string reasoning;              // a thinking model's reasoning, without its markers
  std::vector<ToolCall> tool_calls;   // the calls the answer made (SessionSettings::tools), with their ids
  int64_t dropped_messages = 0;
  bool rebuilt = false;               // a new summary was put in place first
  bool summary_started = false;       // a summary job started after the answer
  TurnTimes times;
};

class ChatSession {
 public:
  // Throws std::invalid_argument for inconsistent settings.
  ChatSession(const model::Model& model, const SessionSettings& settings);
  ~ChatSession();

  // One user turn: makes room, evaluates the message, generates and streams the
  // answer through options.on_text and a thinking model's reasoning through
  // on_reasoning (dropped when empty). Afterwards the cache holds the turn as the
  // template renders it in history: the reasoning is removed and what followed
  // it evaluated again, by the next operation that reads the cells (settle()).
  // Throws runtime::ContextFull in mode `none` when the
  // conversation no longer fits. A turn that throws (a callback's exception, a
  // failed evaluation or sampling) leaves the session as it was before the turn:
  // its cells, segments, statistics and sampler; only a finished summary it put
  // in place first stays, as wait_for_summary() would have put it.
  // Throws std::invalid_argument, changing nothing, while the conversation
  // ends with a user message without an answer (append()).
  //
  // Under a grammar (settings.sampler.grammar) the answer is a text of it, and
  // the turn stops once it is whole and nothing can follow (GrammarEnd). When
  // the model may think (enable_thinking, or a prompt that opens the block) the
  // reasoning is free: the grammar starts right after the closing marker (the
  // blank lines there are its text, though the answer drops them), or, when
  // the output opens no block, reads it from its start. Text sampled before the
  // grammar could hold it (the answer's start in the token that closes the
  // reasoning, or that shows none opens) is read then; refused, the turn
  // throws std::invalid_argument.
  TurnResult chat(const std::string& user_text, const runtime::GenerateOptions& options,
                  const std::function<bool(const std::string&)>& on_reasoning = nullptr);
  // Adds a message without generating: `role` "user" or "assistant", roles
  // alternating from a user's first (a user message is rendered with the
  // header that opens its answer, and templates such as Gemma's refuse other
  // orders), else std::invalid_argument changing nothing. Evaluated into the
  // cache now, making room as a turn does: a user message as a turn's message
  // before its answer; an assistant message completes the user message before
  // it, as a turn would have left it had the model written that answer (an
  // answer longer than the headroom first drops more, and one longer than
  // recent_max + headroom loses its start, as a long message does). The
  // answer is evaluated once Recent has moved down, where a turn evaluates it
  // before: after a drop its values differ from a turn's by what moving
  // Recent changes (the `shift` approximation), its tokens do not. A user
  // message without an answer yet is answered by regenerate(), or given one by
  // append(); chat() refuses it. Failing, it leaves the session as it was.
  // An assistant message may carry `calls` (each with its id: the results that
  // follow it name them). A history with tools is replayed so: user (append),
  // assistant with calls (append), a result for each call
  // (append_tool_result), the answer to them (append_results_answer), ...
  void append(const std::string& role, const std::string& text, const std::vector<ToolCall>& calls = {});
  // Appends the answer (`text`, and `calls` as append() takes them) to the
  // tool results waiting, without generating: completes them as
  // continue_turn() would have, had the model written it. std::invalid_argument,
  // changing nothing, when no result waits.
  void append_results_answer(const std::string& text, const std::vector<ToolCall>& calls = {});
  // Answers the last user message again: takes its turn back (see the top of
  // this file), then runs it as chat() would, with the sampling set now (a
  // sampled answer draws new numbers; greedy gives the same answer from the
  // same cache). Also answers a user message appended without one. Throws
  // std::invalid_argument without a user message, or when it is no longer in
  // Recent. Failing, it leaves the session as it was.
  TurnResult regenerate(const runtime::GenerateOptions& options,
                        const std::function<bool(const std::string&)>& on_reasoning = nullptr);
  // The same with `user_text` in place of the last user message.
  // regenerate() of an answer to tool results answers them again, and
  // answers tool results waiting for continue_turn(); edit_last() refuses both.
  TurnResult edit_last(const std::string& user_text, const runtime::GenerateOptions& options,
                       const std::function<bool(const std::string&)>& on_reasoning = nullptr);

  // Pictures (settings.images; conversation_images.h). Attaches an image's
  // tokens, `n_tokens` rows of the model's n_embd floats (runtime::
  // ImageEncoder's output, copied), to the next user message: chat(),
  // append() of a user message, edit_last(). The message's text shows where
  // each attached image goes by kImageMarker, in the order attached; a text
  // without markers gets them at its start. The message consumes them once it
  // is in the conversation; a call that fails leaves them attached. The same
  // rows again (attached before, or in an earlier message) are one image.
  // A picture the encoder cut into grid_rows x grid_cols tiles
  // (model::PictureLayout) holds their rows then the overview's; 0 x 0, one
  // frame. Each image is evaluated where its marker is, framed as the
  // projector frames it (model::frame_texts: the text before each frame, its
  // rows, the text after); the log keeps the marker in the text and the rows
  // beside it; a message dropped from Recent reaches the summarizer with
  // kImageInSummary in the marker's place, so a summary keeps what the
  // answers said of it. std::invalid_argument, attaching nothing, without
  // settings.images, for no rows, rows that are not finite, an image longer
  // than recent_max (or, attending both ways, a frame longer than n_batch), a
  // grid the projector does not cut or whose frames the rows do not divide
  // into, past kMaxImages images. A projector that sizes each picture
  // (Qwen2.5-VL's) needs token_cols, its tokens across (PictureLayout::token_cols),
  // which a language model with multimodal rotary positions places them by.
  void attach_image(const float* rows, int64_t n_tokens, int64_t grid_rows = 0, int64_t grid_cols = 0,
                    int64_t token_cols = 0);
  size_t attached_images() const { return attached_.size(); }
  void clear_attached_images() { attached_.clear(); }

  // Tools (SessionSettings::tools). Under tool_choice other than none an
  // answer may call them: its text streams through on_text without the calls'
  // markup, and TurnResult::tool_calls holds the calls, each with an id unique
  // within the session ("call_t<n>c<i>": the n-th answer read for calls, its
  // i-th call). The conversation then goes user, assistant with calls, a tool
  // result for each call (append_tool_result), the next answer (continue_turn),
  // which may call tools again. While an answer's calls wait for results,
  // chat() and append() refuse a new user message.
  //
  // The result of the call `tool_call_id` of the last answer, kept in the log
  // (role "tool", with the call's name) and read by continue_turn().
  // std::invalid_argument, changing nothing, when the last answer made no such
  // call, or its result was given already.
  void append_tool_result(const std::string& tool_call_id, const std::string& content);
  // Answers the tool results appended since the last answer, as chat()
  // answers a user message (the same reasoning, grammar, parsing, undo):
  // usually once every call has its result. std::invalid_argument, changing
  // nothing, when no tool result waits.
  TurnResult continue_turn(const runtime::GenerateOptions& options,
                           const std::function<bool(const std::string&)>& on_reasoning = nullptr);
  // Whether tool results wait for continue_turn().
  bool tool_results_waiting() const { return state_.unsent > 0; }
  // tool_choice, tool_function and parallel_tool_calls from the next answer
  // on. The tools stay as the Prefix holds them: a session started with
  // tool_choice none has none in its prompt and refuses any other choice; one
  // started with another choice may move to none (no grammar, no calls read,
  // as OpenAI's none with tools). std::invalid_argument, changing nothing,
  // for settings validate_tool_settings() refuses.
  void set_tool_choice(ToolChoiceMode choice, const std::string& function, bool parallel_tool_calls);
  // Receives each call of an answer once it parsed, while the answer is
  // generated (`index`: its place among the answer's calls), for streaming;
  // TurnResult::tool_calls holds the same calls after the turn. Empty: none.
  using ToolCallFn = std::function<void(const ToolCall& call, size_t index)>;
  void set_on_tool_call(ToolCallFn on_call) { on_tool_call_ = std::move(on_call); }
  // Sampling from the next answer on (regenerate() included). The penalty
  // window keeps the tokens accepted so far when penalty_last_n is unchanged,
  // else sees Recent's tokens again; the random sequence restarts from
  // params.seed. Throws std::invalid_argument for invalid params, changing nothing.
  void set_sampler(const sampling::SamplerParams& params);
  // Forgets the conversation (keeps the Prefix) and the images attached;
  // cancels a running summary or rebuild.
  void reset();
  // Runs every context of the session with `adapters` (runtime/adapters.h):
  // puts a running summary in place first, then evaluates the cached
  // conversation again, so the cache is what the new adapters compute. Throws
  // std::invalid_argument for adapters the context refuses, and whatever the
  // evaluation throws, leaving the session with its old adapters.
  void set_adapters(const runtime::Adapters& adapters);
  // Blocks until a running summary (and its rebuild) is done and puts it in
  // place: what an app does between turns so the next one starts with nothing
  // left to rebuild.
  void wait_for_summary();
  // Puts a finished summary in place now (every turn starts with this); with
  // `wait`, waits for a running one (and its rebuild) first. Returns whether one
  // was put in place. A turn sent while the worker runs and not waiting goes on
  // with the old summary and cache; a later turn swaps the rebuilt one in.
  bool apply_pending_summary(bool wait);
  // A turn ends once its answer is generated: the cells then hold the answer
  // as it was generated up to where it differs from the answer as later
  // prompts show it (a thinking model's reasoning left out), and the rest of
  // that, the last unsettled_tokens() of cached_tokens(), has no cells yet.
  // settle() evaluates it; every operation that reads or changes the cells
  // does so first (the next turn, an appended message, put_in_place of a
  // summary, save with the KV cache), and one that replaces them (reset,
  // restore, set_adapters, a turn taken back) has nothing to evaluate. A
  // conversation that is not continued never pays for it, and the answer
  // reaches the app without waiting for it (as a server's cached prompt, the
  // next prompt evaluates from where the cells differ).
  void settle();
  int64_t unsettled_tokens() const { return unsettled_; }

  SessionStats stats() const;
  // The times of the last turn that succeeded (zero before the first).
  const TurnTimes& last_turn_times() const { return last_turn_times_; }
  const std::string& summary() const { return state_.summary_text; }
  // Why the last failed summary job failed ("" before any failed). A failed
  // summary keeps the old one and its dropped text waits for the next job; a
  // failed background rebuild puts the new summary in place by a shift.
  const std::string& last_summary_error() const;
  // Dropped messages not yet handed to the summarizer, as it will read them.
  const std::string& dropped_text() const { return state_.dropped_text; }
  const SessionSettings& settings() const { return settings_; }
  const runtime::Context& context() const { return *ctx_; }
  const ChatTemplate& chat_template() const { return encoder_->chat_template(); }
  // The conversation as it happened (every message, dropped or not).
  const std::vector<LoggedMessage>& log() const { return state_.log; }
  // The conversation as an app shows it: the system prompt when there is one,
  // then every message of log() in order, with where it is for the model. The
  // references stay valid until a non-const call.
  size_t n_messages() const;
  MessageView message(size_t index) const;  // std::out_of_range past n_messages()
  // Whether the conversation ends with a user message that has no answer yet.
  bool awaiting_answer() const { return !state_.log.empty() && state_.log.back().role == "user"; }
  // The tokens of the conversation as the model reads it, in order: Prefix,
  // Summary, Recent; the main context's cells hold all but the last
  // unsettled_tokens() of them.
  std::vector<int32_t> cached_tokens() const;
  // What the model would read if `user_text` came next, as things stand (before
  // the turn makes room): the cells' text and the framed message, control
  // tokens written out.
  std::string preview_prompt(const std::string& user_text) const;

  // Save / restore: settings, segments and messages, and optionally the KV
  // cache, in a versioned file with a checksum (format 4 for a conversation
  // with pictures, which it holds the rows of, so a restore needs no picture
  // file; format 3 for one with tool calls or results; else format 2; formats
  // 1 to 3 are read too). A file with pictures is restored only into a
  // session that takes them (SessionMismatch); restoring drops the images
  // attached and not yet sent.
  // A conversation with tool calls is restored only into a session that
  // renders it as it was saved (the same template and Prefix, tools included). Saving first waits for a running summary
  // (and its rebuild) and puts it in place; restoring cancels one. (session_file.h)
  //
  // Restoring re-fits the saved conversation to this session's settings: only
  // another model (SessionMismatch naming what differs: architecture,
  // parameters, vocabulary, layers, weight bytes) or a mode that cannot
  // continue it (SessionMismatch: ssskv into window or none, whose cache has no
  // Summary; window into none, which promises every message in context) is
  // refused. Recent holding more than recent_max + headroom drops its oldest
  // messages as a turn would (to the summary path in ssskv; mode none refuses,
  // naming recent_max); a summary longer than summary_max allows is cut at a
  // sentence end; another system prompt, template or thinking setting renders
  // every message again; rendered as saved, each message's tokens must be its
  // text's render (the part a cut keeps), else the file is refused. The saved
  // KV cache is used when the cells it holds are
  // still the ones the session needs (same segments and KV types), else the
  // segments are prefilled. Restoring a bad file throws std::runtime_error and
  // leaves the session as it was.
  //
  // The file's checks cannot tell finite but wrong cells (values overwritten,
  // rows of another layout) from right ones. With settings.verify_kv_cells N,
  // the first N cells whose values a prefill of their tokens gives again (the
  // Prefix and the Summary; Recent too while no message ever left it, since
  // leaving moves Recent over the dropped cells) are prefilled first and the
  // saved ones compared with them within the KV type's allowance
  // (runtime/kv_verify.h). A difference is written as a warning (log::warn:
  // the file, the first differing layer, K or V, cell and head) and the whole
  // conversation is prefilled instead, as from a file without cells: its
  // tokens passed the file's other checks, so nothing of it is lost and the
  // cells are exactly what the model computes. The check costs a prefill of N
  // tokens; cells after the first N are used unchecked. Off (0, the default),
  // the cells are used as read.
  void save(const std::string& path, bool include_kv);
  void restore(const std::string& path);

 private:
  // What a turn answers: a user message, or the tool results since the last
  // answer (`context`: the exchange before them, from its user message on).
  struct TurnPrompt {
    std::vector<ChatMessage> context;
    std::vector<LoggedMessage> messages;
    bool continuation() const { return !messages.empty() && messages.front().role == "tool"; }
  };
  // A user message of `text` with the images attached (marked at its start
  // when its text marks none); std::invalid_argument when it marks another number.
  LoggedMessage user_message(const std::string& text) const;
  static TurnPrompt user_prompt(LoggedMessage message);
  static ImageList prompt_images(const TurnPrompt& prompt);
  // Tokens of a prompt into the sampler's penalty window, images left out.
  void accept_text(std::vector<int32_t>::const_iterator begin, std::vector<int32_t>::const_iterator end);
  // A new turn for `prompt`: chat() and continue_turn().
  TurnResult answer(const TurnPrompt& prompt, const runtime::GenerateOptions& options,
                    const std::function<bool(const std::string&)>& on_reasoning);
  // The tool results that end the log's first `end` messages, after their exchange.
  TurnPrompt tool_results_prompt(size_t end) const;
  std::vector<int32_t> prompt_segment(const TurnPrompt& prompt) const;
  // How many tool results come right before the log's message `end` (the
  // prompt of the answer at `end`, or of the next one when `end` is the log's size).
  size_t tool_results_before(size_t end) const;
  // Throws std::invalid_argument when the last answer's calls wait for their
  // results, or results wait for their answer (`action` names what is refused).
  void refuse_while_tools_pending(const std::string& action) const;
  void settle_turn(int64_t turn_first_cell, const std::vector<int32_t>& prompt_tokens, size_t prompt_cut,
                   const TurnPrompt& prompt, const LoggedMessage& answer, const std::vector<int32_t>& generated);
  // The turn's answer (turn.answer, turn.tool_calls) generated into the cells.
  void generate_answer(const std::vector<int32_t>& segment, const ImageList& images,
                       const runtime::GenerateOptions& options,
                       const std::function<bool(const std::string&)>& on_reasoning, TurnResult& turn);
  void start_calls_at_trigger(TriggerWatch& trigger, const std::string& text);
  int64_t first_recent_cell() const { return static_cast<int64_t>(prefix_.size() + state_.summary_tokens.size()); }
  // What an operation changes, kept until it has succeeded (see chat()). The
  // last turn's is kept after it (last_turn_): how regenerate() and
  // edit_last() take that turn back exactly, undoing its journal.
  struct TurnUndo {
    explicit TurnUndo(const ChatSession& s);
    std::deque<RecentMessage> recent;
    std::string dropped_text;
    SessionStats stats;
    sampling::SamplerChain sampler;
    size_t log_size;
    size_t unsent;                     // SessionState::unsent
    int64_t unsettled;                 // unsettled_tokens()
    uint64_t rebuild_taken_back_from;  // SummaryJobs::taken_back_from()
    // What it did to the main cache's cells: the messages making room
    // removed, Recent moved down after them, cells taken off the end (a turn
    // taken back, a user message given its answer) or put back (a turn taken
    // back exactly). The cells a turn evaluates follow those steps.
    runtime::KvJournal cells;
    std::vector<LoggedMessage> log_tail;  // the messages it took off the log
    bool started_job = false;  // the turn started the summary job that followed it
  };
  // `given`: the answer, evaluated as the prompt's history instead of generated (append); else generated.
  void run_turn(const TurnPrompt& prompt, std::vector<int32_t> segment, const runtime::GenerateOptions& options,
                const std::function<bool(const std::string&)>& on_reasoning, TurnResult& turn, TurnUndo& undo,
                const LoggedMessage* given = nullptr);
  // Undoes what `undo` recorded: its journal, backwards, and the session's state.
  void roll_back(TurnUndo& undo);
  // Moves the sampler's grammar to the phase the output has reached
  // (sampling::GrammarPhase): the answer's grammar reads first the answer's
  // text that came before the output could tell where the answer starts.
  void follow_reasoning(const ReasoningSplitter& splitter);
  // What every turn (and append) starts and ends with: a finished summary put
  // in place first; the rebuild told, a summary job started when due, and the
  // turn kept as the last one, after it.
  void start_turn(TurnResult& turn);
  void finish_turn(TurnResult& turn, TurnUndo undo, bool generated);
  // regenerate() and edit_last(): the last turn taken back, `user_text` answered.
  TurnResult answer_again(const std::string* user_text, const runtime::GenerateOptions& options,
                          const std::function<bool(const std::string&)>& on_reasoning);
  // Runs `prompt`'s turn with `segment` after taking back the last turn
  // (`recent_messages` of Recent, `log_messages` of the log).
  TurnResult answer_taken_back(const TurnPrompt& prompt, std::vector<int32_t> segment, size_t recent_messages,
                               size_t log_messages, const runtime::GenerateOptions& options,
                               const std::function<bool(const std::string&)>& on_reasoning);
  // Takes the last turn back exactly, as `record` (its TurnUndo) says, filling
  // `undo` so that roll_back(undo) puts it back.
  void take_back_exactly(const TurnUndo& record, TurnUndo& undo);
  // Takes the last `n` messages of Recent (the last turn's prompt and its
  // answer) off Recent and the cache's end, and the last `log_n` off the log
  // (tool results stay there, waiting again).
  void take_back_messages(size_t n, size_t log_n, TurnUndo& undo);
  void take_back_tail_cells(int64_t n, TurnUndo& undo);
  void append_user(const LoggedMessage& message, std::vector<int32_t> segment, TurnResult& turn, TurnUndo& undo);
  void append_answer(const LoggedMessage& answer, TurnResult& turn, TurnUndo& undo);
  // Calls of a history's answer: each with an id and a name, else std::invalid_argument.
  static void check_history_calls(const std::vector<ToolCall>& calls);
  // The sampler's penalty window as `earlier`'s when there is one of the same
  // length, else as Recent's tokens give it; the random sequence goes on.
  void restore_penalty_window(const sampling::SamplerChain* earlier);
  // Recent's tokens into `chain`'s penalty window, oldest first.
  void accept_recent(sampling::SamplerChain& chain) const;
  // Drops messages from Recent's front until `incoming` more cells fit;
  // returns the first cell after those it removed (-1: none), where Recent
  // keeps a gap in positions until finish_room() moves it down.
  int64_t make_room(int64_t incoming, TurnResult& turn, TurnUndo& undo);
  void finish_room(int64_t gap_at, TurnResult& turn, TurnUndo& undo);
  bool put_pending_summary_in_place(bool wait, TurnTimes& times);
  void prefill_all();
  // restore(): how many of the first cells a prefill of their tokens gives
  // again, once `fitted` is the state; and the fitted cells put in place,
  // checked against a prefill of the first settings_.verify_kv_cells of
  // those (a difference: the warning and prefill_all()).
  int64_t reproducible_cells(const FittedSession& fitted) const;
  void load_checked_cells(const FittedSession& fitted, const std::string& path);
  void maybe_start_summary();
  void cancel_summary();
  void push_recent(const std::string& role, const std::string& text, std::vector<int32_t> tokens,
                   ImageList images = {});
  // sampler params with the tools' grammar when they have one.
  sampling::SamplerChain make_sampler(const sampling::SamplerParams& params, const SessionTools& tools) const;

  const model::Model& model_;
  SessionSettings settings_;
  SessionTools tools_;
  uint64_t answers_read_for_calls_ = 0;  // numbers the ids of generated calls (never taken back)
  ToolCallFn on_tool_call_;
  // Shared with the summary worker, which encodes the new Summary segment with it.
  std::shared_ptr<const TurnEncoder> encoder_;
  // The main context's passes, which the summary worker's wait for (declared
  // before both: it outlives them); in a pass group, the group's instead.
  runtime::ForegroundActivity own_activity_;
  std::unique_ptr<runtime::Context> ctx_;
  sampling::SamplerChain sampler_;
  std::unique_ptr<SummaryJobs> summary_jobs_;  // ssskv only
  uint64_t next_serial_ = 1;

  std::vector<int32_t> prefix_;  // BOS + system prompt segment
  SessionState state_;           // the Summary and Recent segments, the messages, the statistics
  int64_t unsettled_ = 0;        // Recent's last tokens without cells (settle())
  // The last turn's undo while it can still be taken back exactly: until
  // anything but a turn changes the session, or a summary job is taken.
  std::optional<TurnUndo> last_turn_;
  TurnTimes last_turn_times_;
  ImageList attached_;          // for the next user message
  uint32_t next_image_id_ = 0;  // ids are never used twice (SessionImage::id)
};

}  // namespace peak::chat
