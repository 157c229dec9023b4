#include "chat/chat_session.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>

#include "io/checksum.h"
#include "runtime/kv_cache.h"
#include "runtime/kv_journal.h"
#include "runtime/kv_verify.h"
#include "runtime/stopwatch.h"
#include "chat/session_file.h"
#include "log/log.h"

namespace peak::chat {
namespace {

// The highest n of the ids "call_t<n>c<i>" generated for the log's calls, so
// that the ids of a restored conversation's next calls are new.
uint64_t last_call_answer(const std::vector<LoggedMessage>& log) {
  uint64_t last = 0;
  for (const LoggedMessage& m : log) {
    for (const ToolCall& call : m.tool_calls) {
      const std::string id = call.id.value_or("");
      if (id.rfind("call_t", 0) != 0) continue;
      uint64_t n = 0;
      size_t at = 6;
      while (at < id.size() && id[at] >= '0' && id[at] <= '9' && n < UINT64_MAX / 10)
        n = n * 10 + static_cast<uint64_t>(id[at++] - '0');
      last = std::max(last, n);
    }
  }
  return last;
}

std::string call_ids(const std::vector<ToolCall>& calls) {
  std::string ids;
  for (const ToolCall& call : calls) ids += (ids.empty() ? "" : ", ") + call.id.value_or("");
  return ids;
}

size_t common_prefix(const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
  size_t n = 0;
  while (n < a.size() && n < b.size() && a[n] == b[n]) ++n;
  return n;
}

}  // namespace

// A grammar reads the model's vocabulary, and the answer alone.
sampling::SamplerChain ChatSession::make_sampler(const sampling::SamplerParams& params,
                                                 const SessionTools& tools) const {
  sampling::SamplerParams p = params;
  if (!p.grammar) p.grammar = tools.grammar;
  std::vector<int32_t> preserved = p.preserved_tokens;
  preserved.insert(preserved.end(), tools.preserved_tokens.begin(), tools.preserved_tokens.end());
  std::sort(preserved.begin(), preserved.end());
  preserved.erase(std::unique(preserved.begin(), preserved.end()), preserved.end());
  p.preserved_tokens = std::move(preserved);
  const bool reads_vocabulary = p.grammar || !p.preserved_tokens.empty();
  sampling::SamplerChain chain(static_cast<int32_t>(model_.hparams().n_vocab), p,
                               reads_vocabulary ? model_.grammar_vocabulary() : nullptr);
  if (p.grammar) {
    chain.set_reasoning_grammars(*reasoning_opening_grammar(ReasoningMarkers{}), *reasoning_separator_grammar());
  }
  return chain;
}

ChatSession::ChatSession(const model::Model& model, const SessionSettings& settings)
    : model_(model),
      settings_(settings),
      tools_(session_tools(model, settings)),
      encoder_(std::make_shared<const TurnEncoder>(model, settings.template_name, settings.enable_thinking,
                                                   tools_.rendered,
                                                   tools_.format && tools_.format->shape == CallShape::Envelope)),
      sampler_(make_sampler(settings.sampler, tools_)) {
  validate_session_settings(settings_);
  prefix_ = encoder_->prefix(settings_.system_prompt);
  const int64_t summary_cells = settings_.mode == MemoryMode::Ssskv ? settings_.summary_max : 0;
  runtime::ContextParams cp;
  cp.n_ctx = static_cast<int64_t>(prefix_.size()) + summary_cells + settings_.recent_max + settings_.headroom;
  cp.n_batch = settings_.n_batch;
  cp.n_threads = settings_.n_threads;
  cp.max_logit_rows = settings_.max_logit_rows;
  cp.pass_group = settings_.pass_group;
  cp.activity = &own_activity_;  // the pass group's when there is one (runtime::Context::activity)
  cp.type_k = runtime::kv_type_fitting(model.hparams(), settings_.type_k);
  cp.type_v = runtime::kv_type_fitting(model.hparams(), settings_.type_v);
  ctx_ = std::make_unique<runtime::Context>(model, cp);
  ctx_->eval(prefix_.data(), static_cast<int64_t>(prefix_.size()));

  if (settings_.mode == MemoryMode::Ssskv)
    summary_jobs_ = std::make_unique<SummaryJobs>(model, encoder_, settings_, ctx_->activity());
  state_.stats.n_ctx = cp.n_ctx;
}

// The summary worker stops before its job goes (~SummaryJobs).
ChatSession::~ChatSession() = default;

int64_t ChatSession::make_room(int64_t incoming, TurnResult& turn, TurnUndo& undo) {
  if (settings_.mode == MemoryMode::None) {
    if (ctx_->kv().used() + incoming + settings_.headroom > ctx_->n_ctx()) {
      throw runtime::ContextFull("the conversation fills the context (" + std::to_string(ctx_->kv().used()) + " of " +
                        std::to_string(ctx_->n_ctx()) + " tokens used, " + std::to_string(incoming) +
                        " more for this message): mode none never drops history");
    }
    return -1;
  }
  // Drop whole messages from the left of Recent until the new one fits in
  // recent_max; the answer then goes into the headroom after it.
  const int64_t before = state_.recent_cells();
  int64_t recent = before;
  while (!state_.recent.empty() && recent + incoming > settings_.recent_max) {
    recent -= state_.drop_front();
    ++turn.dropped_messages;
    // A call's results leave with it: Recent never opens with a result whose call is gone.
    while (!state_.recent.empty() && state_.recent.front().role == "tool") {
      recent -= state_.drop_front();
      ++turn.dropped_messages;
    }
  }
  const int64_t dropped = before - recent;
  if (dropped == 0) return -1;
  // Remove their cells (the journal keeps them, to put back if the turn
  // fails). The rest of Recent moves down in cells but keeps its positions
  // for this turn: the turn's tokens follow it, and only relative positions
  // matter within them. Re-rotating keys is undone only up to rounding, so it
  // waits for finish_room(), after the answer.
  const runtime::Stopwatch stopwatch;
  const int64_t first = first_recent_cell();
  runtime::ContextCells cells(*ctx_);
  undo.cells.remove(cells, first, dropped);
  turn.times.window_shift = stopwatch.seconds();
  return first;
}

void ChatSession::finish_room(int64_t gap_at, TurnResult& turn, TurnUndo& undo) {
  const runtime::KvCache& kv = ctx_->kv();
  if (gap_at < 0 || gap_at >= kv.used()) return;
  // Recent and this turn move down over the removed cells, so positions stay
  // compact (StreamingLLM with the Prefix as attention sink). When all of
  // Recent left, the turn's tokens followed the Summary directly: no gap.
  const int32_t gap = kv.gap_before(gap_at);
  if (gap == 0) return;
  const runtime::Stopwatch stopwatch;
  runtime::ContextCells cells(*ctx_);
  undo.cells.shift(cells, gap_at, kv.used() - gap_at, -gap);
  turn.times.window_shift += stopwatch.seconds();
  state_.stats.window_shift_seconds += turn.times.window_shift;
}

std::vector<int32_t> ChatSession::cached_tokens() const { return state_.cached_tokens(prefix_); }

std::string ChatSession::preview_prompt(const std::string& user_text) const {
  std::vector<int32_t> tokens = cached_tokens();
  const LoggedMessage message = user_message(user_text);
  const std::vector<int32_t> segment = encoder_->user_segment(message.content, message.images);
  tokens.insert(tokens.end(), segment.begin(), segment.end());
  // Each image's run as one line naming its size.
  std::string text;
  std::vector<int32_t> run;
  const auto flush = [&] {
    text += model_.tokenizer().detokenize(run, /*remove_special=*/false, /*render_special=*/true);
    run.clear();
  };
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (!is_image_token(tokens[i])) {
      run.push_back(tokens[i]);
      continue;
    }
    size_t end = i + 1;
    while (end < tokens.size() && is_image_token(tokens[end]) && image_of(tokens[end]) == image_of(tokens[i])) ++end;
    flush();
    text += "[image " + std::to_string(image_of(tokens[i])) + ": " + std::to_string(end - i) + " tokens]";
    i = end - 1;
  }
  flush();
  return text;
}

void ChatSession::prefill_all() {
  const std::vector<int32_t> all = cached_tokens();
  ctx_->kv().clear();
  unsettled_ = 0;
  evaluate_cells(*ctx_, all.data(), static_cast<int64_t>(all.size()), state_.recent_images());
}

void ChatSession::settle() {
  if (unsettled_ == 0) return;
  const std::vector<int32_t> all = cached_tokens();
  evaluate_cells(*ctx_, all.data() + all.size() - static_cast<size_t>(unsettled_), unsettled_, state_.recent_images());
  unsettled_ = 0;
}

void ChatSession::maybe_start_summary() {
  if (summary_jobs_) summary_jobs_->maybe_start(state_, *ctx_, static_cast<int64_t>(prefix_.size()), next_serial_);
}

void ChatSession::cancel_summary() {
  if (summary_jobs_) summary_jobs_->cancel();
}

void ChatSession::wait_for_summary() { apply_pending_summary(/*wait=*/true); }

bool ChatSession::apply_pending_summary(bool wait) {
  TurnTimes times;
  return put_pending_summary_in_place(wait, times);
}

bool ChatSession::put_pending_summary_in_place(bool wait, TurnTimes& times) {
  if (!summary_jobs_ || !summary_jobs_->ready(wait)) return false;
  settle();  // a shift moves Recent's cells, all of them
  // Whatever the job brings, the last turn's undo no longer holds its dropped
  // text (or, once the summary is in place, its cells).
  last_turn_.reset();
  return summary_jobs_->put_in_place(ctx_, prefix_, state_, times.catch_up);
}

void ChatSession::settle_turn(int64_t turn_first_cell, const std::vector<int32_t>& prompt_tokens, size_t prompt_cut,
                              const TurnPrompt& prompt, const LoggedMessage& answer,
                              const std::vector<int32_t>& generated) {
  // The cells of this turn hold the prompt's segment and what was generated
  // after it (the end-of-generation token is sampled, not evaluated). Keep
  // what agrees with the turn as the template renders it in history (the
  // answer without reasoning, then the closing marker) and evaluate the rest.
  runtime::KvCache& kv = ctx_->kv();
  std::vector<ChatMessage> turn = chat_messages(prompt.messages);
  turn.push_back(chat_message(answer));
  std::vector<int32_t> canonical =
      prompt.continuation() ? encoder_->history_after(prompt.context, turn) : encoder_->history_tokens(turn);
  // A message longer than the window lost its first prompt_cut tokens.
  canonical.erase(canonical.begin(),
                  canonical.begin() + static_cast<std::ptrdiff_t>(std::min(prompt_cut, canonical.size())));
  std::vector<int32_t> cells = prompt_tokens;
  const int64_t answer_cells = kv.used() - turn_first_cell - static_cast<int64_t>(prompt_tokens.size());
  cells.insert(cells.end(), generated.begin(), generated.begin() + answer_cells);
  const size_t same = common_prefix(cells, canonical);
  kv.remove(turn_first_cell + static_cast<int64_t>(same), static_cast<int64_t>(cells.size() - same));
  // Without room for all of it (an answer cut by the context's end), what
  // fits; evaluated by settle(), after Recent has moved down.
  const int64_t missing = std::min<int64_t>(static_cast<int64_t>(canonical.size() - same), kv.free_cells());
  unsettled_ = std::max<int64_t>(missing, 0);

  const size_t kept = same + static_cast<size_t>(std::max<int64_t>(missing, 0));
  const size_t prompt_part = std::min(prompt_tokens.size(), same);
  // Tool results share the prompt's tokens where each one's render ends.
  size_t from = 0;
  for (size_t i = 0; i < prompt.messages.size(); ++i) {
    size_t to = prompt_part;
    if (i + 1 < prompt.messages.size()) {
      const std::vector<ChatMessage> first(turn.begin(), turn.begin() + static_cast<std::ptrdiff_t>(i + 1));
      to = std::max(from,
                    std::min(prompt_part, common_prefix(encoder_->history_after(prompt.context, first), canonical)));
    }
    const LoggedMessage& m = prompt.messages[i];
    push_recent(m.role, summary_text(m),
                std::vector<int32_t>(canonical.begin() + static_cast<std::ptrdiff_t>(from),
                                     canonical.begin() + static_cast<std::ptrdiff_t>(to)),
                m.images);
    from = to;
  }
  push_recent("assistant", summary_text(answer),
              std::vector<int32_t>(canonical.begin() + static_cast<std::ptrdiff_t>(prompt_part),
                                   canonical.begin() + static_cast<std::ptrdiff_t>(kept)));
}

void ChatSession::push_recent(const std::string& role, const std::string& text, std::vector<int32_t> tokens,
                              ImageList images) {
  state_.recent.push_back(RecentMessage{role, text, std::move(tokens), next_serial_++, std::move(images)});
}

ChatSession::TurnUndo::TurnUndo(const ChatSession& s)
    : recent(s.state_.recent),
      dropped_text(s.state_.dropped_text),
      stats(s.state_.stats),
      sampler(s.sampler_),
      log_size(s.state_.log.size()),
      unsent(s.state_.unsent),
      unsettled(s.unsettled_),
      rebuild_taken_back_from(s.summary_jobs_ ? s.summary_jobs_->taken_back_from() : CacheRebuild::kNoneTakenBack),
      cells(s.ctx_->kv()) {}

void ChatSession::start_turn(TurnResult& turn) {
  // The last answer's cells first, then a finished summary (or, when so set,
  // a running one) goes in place.
  if (unsettled_ > 0) {
    const runtime::Stopwatch settle_stopwatch;
    settle();
    turn.times.settle = settle_stopwatch.seconds();
  }
  const runtime::Stopwatch rebuild_stopwatch;
  turn.rebuilt = put_pending_summary_in_place(settings_.wait_for_summary, turn.times);
  turn.times.rebuild = rebuild_stopwatch.seconds() - turn.times.catch_up;
}

void ChatSession::finish_turn(TurnResult& turn, TurnUndo undo, bool generated) {
  if (summary_jobs_) {
    summary_jobs_->after_turn(state_.recent, next_serial_);
    const bool had_job = summary_jobs_->has_job();
    maybe_start_summary();
    turn.summary_started = !had_job && summary_jobs_->has_job();
  }
  if (generated) {
    undo.started_job = turn.summary_started;
    last_turn_ = std::move(undo);
    last_turn_times_ = turn.times;
  } else {
    // An appended message is answered again by taking it back as it stands.
    last_turn_.reset();
  }
}

LoggedMessage ChatSession::user_message(const std::string& text) const {
  LoggedMessage m{"user", text};
  if (attached_.empty()) return m;
  const size_t marked = count_image_markers(text);
  if (marked == 0) {
    // Unmarked, the pictures come first (as Gemma 3's processor shows them).
    std::string markers;
    for (size_t i = 0; i < attached_.size(); ++i) markers += kImageMarker;
    m.content = markers + text;
  } else if (marked != attached_.size()) {
    throw std::invalid_argument("the message marks " + std::to_string(marked) + " places for images (" + kImageMarker +
                                ") but " + std::to_string(attached_.size()) +
                                " are attached: mark each, or none (they then go before the text)");
  }
  m.images = attached_;
  return m;
}

ChatSession::TurnPrompt ChatSession::user_prompt(LoggedMessage message) { return TurnPrompt{{}, {std::move(message)}}; }

size_t ChatSession::tool_results_before(size_t end) const {
  size_t n = 0;
  while (n < end && state_.log[end - 1 - n].role == "tool") ++n;
  return n;
}

ChatSession::TurnPrompt ChatSession::tool_results_prompt(size_t end) const {
  const size_t results = end - tool_results_before(end);
  TurnPrompt prompt;
  for (size_t i = exchange_start(state_.log, results); i < results; ++i)
    prompt.context.push_back(chat_message(state_.log[i]));
  prompt.messages.assign(state_.log.begin() + static_cast<std::ptrdiff_t>(results),
                         state_.log.begin() + static_cast<std::ptrdiff_t>(end));
  return prompt;
}

std::vector<int32_t> ChatSession::prompt_segment(const TurnPrompt& prompt) const {
  if (!prompt.continuation()) {
    return encoder_->user_segment(prompt.messages.front().content, prompt.messages.front().images);
  }
  return encoder_->prompt_after(prompt.context, chat_messages(prompt.messages));
}

void ChatSession::refuse_while_tools_pending(const std::string& action) const {
  if (state_.unsent > 0) {
    throw std::invalid_argument("tool results wait for their answer: continue_turn answers them before " + action);
  }
  if (!state_.log.empty() && !state_.log.back().tool_calls.empty()) {
    throw std::invalid_argument("the last answer called tools (" + call_ids(state_.log.back().tool_calls) +
                                "): append_tool_result gives their results and continue_turn answers them before " +
                                action);
  }
}

TurnResult ChatSession::chat(const std::string& user_text, const runtime::GenerateOptions& options,
                             const std::function<bool(const std::string&)>& on_reasoning) {
  if (awaiting_answer()) {
    throw std::invalid_argument(
        "the conversation ends with a user message that has no answer yet (appended): regenerate answers it, "
        "append adds its answer");
  }
  refuse_while_tools_pending("a new user message");
  TurnResult turn = answer(user_prompt(user_message(user_text)), options, on_reasoning);
  attached_.clear();
  return turn;
}

TurnResult ChatSession::answer(const TurnPrompt& prompt, const runtime::GenerateOptions& options,
                               const std::function<bool(const std::string&)>& on_reasoning) {
  TurnResult turn;
  start_turn(turn);
  std::vector<int32_t> segment = prompt_segment(prompt);

  // From here on the turn changes the session; if it throws, all of it goes back.
  TurnUndo undo(*this);
  try {
    run_turn(prompt, std::move(segment), options, on_reasoning, turn, undo);
  } catch (...) {
    roll_back(undo);
    throw;
  }
  finish_turn(turn, std::move(undo), /*generated=*/true);
  return turn;
}

TurnResult ChatSession::continue_turn(const runtime::GenerateOptions& options,
                                      const std::function<bool(const std::string&)>& on_reasoning) {
  if (state_.unsent == 0) {
    throw std::invalid_argument(!state_.log.empty() && !state_.log.back().tool_calls.empty()
                                    ? "the last answer's tool calls have no results yet: append_tool_result gives them"
                                    : "no tool result waits for an answer: continue_turn follows append_tool_result");
  }
  return answer(tool_results_prompt(state_.log.size()), options, on_reasoning);
}

void ChatSession::append_tool_result(const std::string& tool_call_id, const std::string& content) {
  const size_t answer_at = state_.log.size() - state_.unsent;
  if (answer_at == 0 || state_.log[answer_at - 1].role != "assistant") {
    throw std::invalid_argument("a tool result follows an answer that called tools, and the conversation ends with " +
                                std::string(state_.log.empty() ? "no message" : "a user message"));
  }
  const LoggedMessage& answer = state_.log[answer_at - 1];
  if (answer.tool_calls.empty()) throw std::invalid_argument("the last answer called no tool, so no result can follow");
  const auto call = std::find_if(answer.tool_calls.begin(), answer.tool_calls.end(),
                                 [&](const ToolCall& c) { return c.id == tool_call_id; });
  if (call == answer.tool_calls.end()) {
    throw std::invalid_argument("the last answer made no call with the id '" + tool_call_id +
                                "' (its calls: " + call_ids(answer.tool_calls) + ")");
  }
  for (size_t i = answer_at; i < state_.log.size(); ++i) {
    if (state_.log[i].tool_call_id == tool_call_id) {
      throw std::invalid_argument("the call '" + tool_call_id + "' has its result already");
    }
  }
  LoggedMessage result{"tool", content};
  result.tool_call_id = tool_call_id;
  result.name = call->name;
  state_.log.push_back(std::move(result));
  ++state_.unsent;
  // Taking the last turn back exactly would now lose the result.
  last_turn_.reset();
}

void ChatSession::set_tool_choice(ToolChoiceMode choice, const std::string& function, bool parallel_tool_calls) {
  SessionSettings s = settings_;
  s.tool_choice = choice;
  s.tool_function = function;
  s.parallel_tool_calls = parallel_tool_calls;
  SessionTools tools = session_tools(model_, s, tools_.rendered.has_value());
  sampling::SamplerChain chain = make_sampler(settings_.sampler, tools);
  chain.take_penalty_window(sampler_);
  sampler_ = std::move(chain);
  tools_ = std::move(tools);
  settings_ = std::move(s);
}

void ChatSession::run_turn(const TurnPrompt& prompt, std::vector<int32_t> segment,
                           const runtime::GenerateOptions& options,
                           const std::function<bool(const std::string&)>& on_reasoning, TurnResult& turn,
                           TurnUndo& undo, const LoggedMessage* given) {
  // One message alone exceeds the window: only then is a message cut, keeping its end.
  std::string prompt_text;
  for (const LoggedMessage& m : prompt.messages) prompt_text += summary_text(m);
  const size_t prompt_cut = settings_.mode == MemoryMode::None
                                ? 0
                                : state_.cut_long_segment(segment, settings_.recent_max, prompt_text, segment.size(),
                                                          "", prompt.messages.front().role);
  const int64_t gap_at = make_room(static_cast<int64_t>(segment.size()), turn, undo);
  const int64_t turn_first_cell = ctx_->kv().used();
  if (given) {
    evaluate_cells(*ctx_, segment.data(), static_cast<int64_t>(segment.size()), prompt_images(prompt));
    accept_text(segment.begin(), segment.end());
  } else {
    generate_answer(segment, prompt_images(prompt), options, on_reasoning, turn);
  }
  LoggedMessage answer = given ? *given : LoggedMessage{"assistant", turn.answer, turn.tool_calls};
  settle_turn(turn_first_cell, segment, prompt_cut, prompt, answer, turn.generation.tokens);
  finish_room(gap_at, turn, undo);
  if (prompt.continuation()) {
    state_.unsent = 0;
  } else {
    state_.log.push_back(prompt.messages.front());
  }
  state_.log.push_back(std::move(answer));
  ++state_.stats.turns;
}

void ChatSession::generate_answer(const std::vector<int32_t>& segment, const ImageList& images,
                                  const runtime::GenerateOptions& options,
                                  const std::function<bool(const std::string&)>& on_reasoning, TurnResult& turn) {
  runtime::GenerateOptions o = options;
  // Prompt lookup searches the conversation the model reads, this turn's
  // prompt after it; a draft model follows it.
  std::vector<int32_t> history;
  if (o.lookup_ngram > 0 || o.draft_model) {
    history = text_tokens(cached_tokens());  // a draft model reads no images
    o.history = &history;
  }
  const int64_t budget = settings_.headroom - kClosingReserve;
  o.max_tokens = options.max_tokens < 0 ? static_cast<int32_t>(budget)
                                        : static_cast<int32_t>(std::min<int64_t>(options.max_tokens, budget));
  // Calls are read from the answer's text; with tool_choice auto their
  // grammar waits for the format's opening marker there.
  std::optional<ToolCallStreamParser> calls;
  if (tools_.format) {
    ToolParseOptions po;
    po.parse_reasoning = false;  // the splitter below takes the reasoning off
    po.id_prefix = "t" + std::to_string(++answers_read_for_calls_) + "c";
    po.tools = tools_.tools;
    calls.emplace(*tools_.format, po);
  }
  const bool waits_for_trigger = tools_.grammar && !tools_.trigger.empty();
  TriggerWatch trigger(waits_for_trigger ? tools_.trigger : std::string());
  ParsedResponse parsed;
  bool stopped = false;
  const ToolParseEventFn on_event = [&](const ToolParseEvent& event) {
    apply_event(parsed, event);
    if (event.kind == ToolParseEvent::Kind::CallEnd && on_tool_call_) {
      on_tool_call_(parsed.tool_calls.back(), parsed.tool_calls.size() - 1);
    }
    if (event.kind == ToolParseEvent::Kind::Content && options.on_text && !stopped)
      stopped = !options.on_text(event.text);
  };
  ReasoningSplitter splitter({}, encoder_->generation_opens_reasoning());
  const KindedTextFn route = [&](TextKind kind, const std::string& text) {
    if (kind == TextKind::Reasoning) return !on_reasoning || on_reasoning(text);
    if (waits_for_trigger) start_calls_at_trigger(trigger, text);
    if (!calls) return !options.on_text || options.on_text(text);
    calls->feed(text, on_event);
    return !stopped;
  };
  o.on_text = [&](const std::string& text) {
    const bool go_on = splitter.feed(text, route);
    if (!waits_for_trigger) follow_reasoning(splitter);
    return go_on;
  };
  // Each answer is a text of its own. A thinking model's reasoning is free:
  // the grammar starts where the answer does (or, waiting for a trigger, holds
  // until it appears).
  sampler_.enter_grammar_phase(waits_for_trigger || encoder_->generation_opens_reasoning()
                                   ? sampling::GrammarPhase::Held
                               : settings_.enable_thinking ? sampling::GrammarPhase::AnswerOrReasoning
                                                           : sampling::GrammarPhase::Answer);
  // The prompt up to its last image's rows goes in first; generate() takes the
  // text after them (at least the header that opens the answer).
  const auto last_image = std::find_if(segment.rbegin(), segment.rend(), is_image_token);
  const size_t lead = static_cast<size_t>(segment.rend() - last_image);
  const runtime::Stopwatch lead_stopwatch;
  if (lead > 0) {
    if (lead == segment.size())
      throw std::invalid_argument("a prompt ends with an image: the answer's header must follow it");
    const core::Cancellation cancel = options.cancellation();  // a stop asked while the pictures are read
    evaluate_cells(*ctx_, segment.data(), static_cast<int64_t>(lead), images, &cancel);
    accept_text(segment.begin(), segment.begin() + static_cast<std::ptrdiff_t>(lead));
  }
  const double lead_seconds = lead_stopwatch.seconds();
  const std::vector<int32_t> rest(segment.begin() + static_cast<std::ptrdiff_t>(lead), segment.end());
  turn.generation = runtime::generate(*ctx_, sampler_, lead > 0 ? rest : segment, o);
  turn.generation.prompt_seconds += lead_seconds;
  turn.generation.n_prompt += static_cast<int32_t>(lead);
  splitter.finish(route);
  turn.reasoning = splitter.reasoning();
  if (calls) {
    calls->finish(on_event);
    turn.answer = std::move(parsed.content);
    turn.tool_calls = std::move(parsed.tool_calls);
  } else {
    turn.answer = splitter.answer();
  }
  turn.times.prefill = turn.generation.prompt_seconds;
  turn.times.generation = turn.generation.generate_seconds;
}

// tool_choice auto: once the answer's text shows the trigger, the calls'
// grammar starts, reading first the trigger and what came after it in the
// same piece (sampled while the grammar held).
void ChatSession::start_calls_at_trigger(TriggerWatch& trigger, const std::string& text) {
  const size_t end = trigger.feed(text);
  if (end == std::string::npos) return;
  const std::string lead = trigger.trigger() + text.substr(end);
  sampler_.enter_grammar_phase(sampling::GrammarPhase::Answer);
  try {
    sampler_.accept_grammar_text(lead);
  } catch (const std::invalid_argument&) {
    throw std::invalid_argument("the tool calls' grammar does not allow '" + lead +
                                "', which came in one token with the marker that opens a call");
  }
}

// The output's text so far told whether it reasons: the grammar moves on to
// the answer (where it begins) or holds while the reasoning is written.
void ChatSession::follow_reasoning(const ReasoningSplitter& splitter) {
  using sampling::GrammarPhase;
  const GrammarPhase phase = sampler_.grammar_phase();
  if (phase != GrammarPhase::AnswerOrReasoning && phase != GrammarPhase::Held) return;
  if (splitter.in_reasoning()) {
    if (phase == GrammarPhase::AnswerOrReasoning) sampler_.enter_grammar_phase(GrammarPhase::Held);
    return;
  }
  if (splitter.before_answer()) return;
  sampler_.enter_grammar_phase(phase == GrammarPhase::Held ? GrammarPhase::AnswerAfterReasoning : GrammarPhase::Answer);
  const std::string& lead = splitter.answer_lead();
  try {
    sampler_.accept_grammar_text(lead);
  } catch (const std::invalid_argument&) {
    throw std::invalid_argument("the grammar does not allow the answer's start '" + lead +
                                "', which came in one token with the end of the model's reasoning");
  }
}

void ChatSession::append(const std::string& role, const std::string& text, const std::vector<ToolCall>& calls) {
  if (role != "user" && role != "assistant") {
    throw std::invalid_argument("a message's role is '" + role +
                                "'; append takes user or assistant (the system prompt is the session's setting)");
  }
  const bool user = role == "user";
  if (user && !calls.empty()) throw std::invalid_argument("only an assistant message makes tool calls");
  check_history_calls(calls);
  if (!user && state_.unsent > 0) {
    throw std::invalid_argument(
        "tool results wait for their answer: continue_turn writes it (or append_results_answer "
        "appends it)");
  }
  const LoggedMessage answer{"assistant", text, calls};
  if (user && !awaiting_answer()) refuse_while_tools_pending("a new user message");
  if (user && awaiting_answer()) {
    throw std::invalid_argument(
        "the conversation already ends with a user message: roles alternate (a user message is rendered with "
        "the header that opens its answer), so append its answer first");
  }
  if (!user && !awaiting_answer()) {
    throw std::invalid_argument(state_.log.empty()
                                    ? "an assistant message cannot open the conversation: roles alternate from a "
                                      "user's message"
                                    : "the conversation already ends with an assistant message: roles alternate, so "
                                      "append a user message first");
  }
  if (!user && (state_.recent.empty() || state_.recent.back().role != "user")) {
    throw std::invalid_argument("the user message this answers is no longer in the context");
  }
  if (!user && !attached_.empty()) {
    throw std::invalid_argument("images are attached: they go with a user message, not an assistant's");
  }
  // Rendered before anything changes: a template that refuses the text leaves
  // the session as it was.
  const LoggedMessage message = user ? user_message(text) : LoggedMessage{};
  std::vector<int32_t> segment =
      user ? encoder_->user_segment(message.content, message.images) : std::vector<int32_t>();
  TurnResult turn;
  start_turn(turn);
  TurnUndo undo(*this);
  try {
    if (user) {
      append_user(message, std::move(segment), turn, undo);
    } else {
      append_answer(answer, turn, undo);
    }
  } catch (...) {
    roll_back(undo);
    throw;
  }
  finish_turn(turn, std::move(undo), /*generated=*/false);
  if (user) attached_.clear();
  answers_read_for_calls_ = std::max(answers_read_for_calls_, last_call_answer({answer}));
}

void ChatSession::check_history_calls(const std::vector<ToolCall>& calls) {
  for (const ToolCall& call : calls) {
    if (call.id.value_or("").empty()) throw std::invalid_argument("a tool call of the history has no id");
    if (call.name.empty()) throw std::invalid_argument("the tool call '" + *call.id + "' has no name");
  }
}

void ChatSession::append_results_answer(const std::string& text, const std::vector<ToolCall>& calls) {
  if (state_.unsent == 0) throw std::invalid_argument("no tool result waits for an answer");
  check_history_calls(calls);
  const LoggedMessage answer{"assistant", text, calls};
  const TurnPrompt prompt = tool_results_prompt(state_.log.size());
  TurnResult turn;
  start_turn(turn);
  std::vector<int32_t> segment = prompt_segment(prompt);
  TurnUndo undo(*this);
  try {
    run_turn(prompt, std::move(segment), {}, nullptr, turn, undo, &answer);
  } catch (...) {
    roll_back(undo);
    throw;
  }
  finish_turn(turn, std::move(undo), /*generated=*/false);
  answers_read_for_calls_ = std::max(answers_read_for_calls_, last_call_answer({answer}));
}

void ChatSession::append_user(const LoggedMessage& message, std::vector<int32_t> segment, TurnResult& turn,
                              TurnUndo& undo) {
  // As run_turn() before it generates: the cells then hold the message and
  // the header that opens its answer.
  if (settings_.mode != MemoryMode::None) {
    state_.cut_long_segment(segment, settings_.recent_max, message.content, segment.size(), "");
  }
  const int64_t gap_at = make_room(static_cast<int64_t>(segment.size()), turn, undo);
  evaluate_cells(*ctx_, segment.data(), static_cast<int64_t>(segment.size()), message.images);
  accept_text(segment.begin(), segment.end());
  push_recent("user", message.content, std::move(segment), message.images);
  state_.log.push_back(message);
  finish_room(gap_at, turn, undo);  // last: moving Recent down is undone only up to rounding
}

void ChatSession::append_answer(const LoggedMessage& answer, TurnResult& turn, TurnUndo& undo) {
  runtime::KvCache& kv = ctx_->kv();
  const RecentMessage user = state_.recent.back();
  // The user message's cells are its segment less what a cut took from its
  // start (already counted as dropped); the pair as later prompts show it
  // loses the same.
  const std::vector<int32_t> segment = encoder_->user_segment(user.text, user.images);
  const bool cut_tail = user.tokens.size() <= segment.size() &&
                        std::equal(user.tokens.begin(), user.tokens.end(), segment.end() - static_cast<std::ptrdiff_t>(user.tokens.size()));
  const size_t user_cut = cut_tail ? segment.size() - user.tokens.size() : 0;
  ChatMessage user_turn{"user", user.text};
  user_turn.images = user.images;
  const std::vector<int32_t> whole = encoder_->history_tokens({user_turn, chat_message(answer)});
  const size_t user_part = std::min(segment.size(), common_prefix(segment, whole));
  std::vector<int32_t> pair(whole.begin() + static_cast<std::ptrdiff_t>(std::min(user_cut, whole.size())), whole.end());
  const size_t pair_user_part = user_part > user_cut ? user_part - user_cut : 0;

  // As settle_turn() leaves a turn: the user's cells that agree with the pair
  // stay, the rest of the pair follows them.
  const size_t same = common_prefix(user.tokens, pair);
  const auto replaced = static_cast<int64_t>(user.tokens.size() - same);
  const auto added = static_cast<int64_t>(pair.size() - same);
  const bool fits = settings_.mode == MemoryMode::None
                        ? added <= kv.free_cells() + replaced
                        : state_.recent_cells() - replaced + added <= settings_.recent_max + settings_.headroom;
  // Either way the user message leaves Recent and joins it again: a rebuild on
  // the worker may hold its cells as they were.
  if (summary_jobs_) summary_jobs_->take_back_from(user.serial);
  state_.recent.pop_back();
  if (cut_tail && fits) {
    take_back_tail_cells(replaced, undo);
    evaluate_cells(*ctx_, pair.data() + same, added, user.images);
    accept_text(pair.begin() + static_cast<std::ptrdiff_t>(same), pair.end());
    const auto split = pair.begin() + static_cast<std::ptrdiff_t>(same);
    push_recent("user", user.text, std::vector<int32_t>(pair.begin(), split), user.images);
    push_recent("assistant", summary_text(answer), std::vector<int32_t>(split, pair.end()));
    state_.log.push_back(answer);
    ++state_.stats.turns;
    return;
  }
  // An answer longer than the headroom: the user message leaves the cache and
  // comes back with its answer after room was made for both (the pair cut
  // further when it exceeds recent_max + headroom, as a long message is).
  take_back_tail_cells(static_cast<int64_t>(user.tokens.size()), undo);
  const size_t cut = settings_.mode == MemoryMode::None
                         ? 0
                         : state_.cut_long_segment(pair, settings_.recent_max + settings_.headroom, user.text,
                                                   pair_user_part, summary_text(answer));
  const int64_t gap_at =
      make_room(std::max<int64_t>(0, static_cast<int64_t>(pair.size()) - settings_.headroom), turn, undo);
  evaluate_cells(*ctx_, pair.data(), static_cast<int64_t>(pair.size()), user.images);
  const size_t kept_user = pair_user_part > cut ? pair_user_part - cut : 0;
  accept_text(pair.begin() + static_cast<std::ptrdiff_t>(kept_user), pair.end());
  const auto split = pair.begin() + static_cast<std::ptrdiff_t>(kept_user);
  if (kept_user > 0) push_recent("user", user.text, std::vector<int32_t>(pair.begin(), split), user.images);
  push_recent("assistant", summary_text(answer), std::vector<int32_t>(split, pair.end()));
  state_.log.push_back(answer);
  ++state_.stats.turns;
  finish_room(gap_at, turn, undo);  // last: moving Recent down is undone only up to rounding
}

void ChatSession::take_back_tail_cells(int64_t n, TurnUndo& undo) {
  runtime::ContextCells cells(*ctx_);
  undo.cells.drop_last(cells, n);
}

TurnResult ChatSession::regenerate(const runtime::GenerateOptions& options,
                                   const std::function<bool(const std::string&)>& on_reasoning) {
  return answer_again(nullptr, options, on_reasoning);
}

TurnResult ChatSession::edit_last(const std::string& user_text, const runtime::GenerateOptions& options,
                                  const std::function<bool(const std::string&)>& on_reasoning) {
  return answer_again(&user_text, options, on_reasoning);
}

TurnResult ChatSession::answer_again(const std::string* user_text, const runtime::GenerateOptions& options,
                                     const std::function<bool(const std::string&)>& on_reasoning) {
  // Roles alternate: the last user message is the last message, or the one before it.
  if (state_.log.empty()) throw std::invalid_argument("the conversation has no user message to answer again");
  const size_t results = state_.unsent > 0 ? 0 : tool_results_before(state_.log.size() - 1);
  if ((state_.unsent > 0 || results > 0) && user_text) {
    throw std::invalid_argument(
        "the last answer is to tool results, not to a user message: regenerate answers them again");
  }
  if (state_.unsent > 0) return continue_turn(options, on_reasoning);
  if (results > 0) {
    if (state_.recent.size() < results + 1) {
      throw std::invalid_argument(
          "the tool results of the last answer are no longer in the context (dropped to make room), so they cannot "
          "be answered again");
    }
    const TurnPrompt prompt = tool_results_prompt(state_.log.size() - 1);
    return answer_taken_back(prompt, prompt_segment(prompt), results + 1, 1, options, on_reasoning);
  }
  const size_t taken = awaiting_answer() ? 1 : 2;
  if (state_.recent.size() < taken) {
    throw std::invalid_argument(
        "the last user message is no longer in the context (dropped to make room), so it cannot be answered again");
  }
  const TurnPrompt prompt = user_prompt(user_text ? user_message(*user_text) : state_.log[state_.log.size() - taken]);
  // A template that refuses it changes nothing.
  TurnResult turn = answer_taken_back(prompt, prompt_segment(prompt), taken, taken, options, on_reasoning);
  if (user_text) attached_.clear();
  return turn;
}

TurnResult ChatSession::answer_taken_back(const TurnPrompt& prompt, std::vector<int32_t> segment,
                                          size_t recent_messages, size_t log_messages,
                                          const runtime::GenerateOptions& options,
                                          const std::function<bool(const std::string&)>& on_reasoning) {
  TurnResult turn;
  std::optional<TurnUndo> record = std::move(last_turn_);
  last_turn_.reset();
  if (record) {
    // The job (started by that turn, or running since an earlier one) has seen
    // the turn: cancelled, its text waits for the next job, and that is what
    // the turn's undo must give back too.
    if (summary_jobs_ && summary_jobs_->has_job()) {
      if (!record->started_job) summary_jobs_->give_back_text(record->dropped_text, record->stats);
      summary_jobs_->cancel_keeping_text(state_);
    }
  } else {
    start_turn(turn);
  }
  // Failing, the new turn goes back, then the turn taken back comes back.
  TurnUndo taken_back(*this);
  try {
    if (record) {
      take_back_exactly(*record, taken_back);
    } else {
      take_back_messages(recent_messages, log_messages, taken_back);
    }
  } catch (...) {
    roll_back(taken_back);
    last_turn_ = std::move(record);
    throw;
  }
  TurnUndo undo(*this);
  try {
    run_turn(prompt, std::move(segment), options, on_reasoning, turn, undo);
  } catch (...) {
    roll_back(undo);
    roll_back(taken_back);
    last_turn_ = std::move(record);
    throw;
  }
  finish_turn(turn, std::move(undo), /*generated=*/true);
  return turn;
}

void ChatSession::take_back_exactly(const TurnUndo& record, TurnUndo& undo) {
  // Backwards through the turn's journal: Recent moved back up, the turn's
  // cells off the end, the cells making room removed put back.
  runtime::ContextCells cells(*ctx_);
  record.cells.undo(cells, &undo.cells);
  undo.log_tail.assign(state_.log.begin() + static_cast<std::ptrdiff_t>(record.log_size), state_.log.end());
  state_.log.resize(record.log_size);
  state_.unsent = record.unsent;
  unsettled_ = record.unsettled;
  state_.recent = record.recent;
  state_.dropped_text = record.dropped_text;
  state_.stats = record.stats;
  restore_penalty_window(&record.sampler);
}

void ChatSession::take_back_messages(size_t n, size_t log_n, TurnUndo& undo) {
  int64_t cells = 0;
  for (size_t i = state_.recent.size() - n; i < state_.recent.size(); ++i) {
    cells += static_cast<int64_t>(state_.recent[i].tokens.size());
  }
  take_back_tail_cells(cells, undo);
  if (summary_jobs_) summary_jobs_->take_back_from(state_.recent[state_.recent.size() - n].serial);
  state_.recent.resize(state_.recent.size() - n);
  if (state_.log.back().role == "assistant") --state_.stats.turns;  // it was answered
  undo.log_tail.assign(state_.log.end() - static_cast<std::ptrdiff_t>(log_n), state_.log.end());
  state_.log.resize(state_.log.size() - log_n);
  state_.unsent = n - log_n;  // tool results wait again
  restore_penalty_window(nullptr);
}

void ChatSession::restore_penalty_window(const sampling::SamplerChain* earlier) {
  if (earlier && earlier->params().penalty_last_n == sampler_.params().penalty_last_n) {
    sampler_.take_penalty_window(*earlier);
    return;
  }
  sampling::SamplerChain window(sampler_.n_vocab(), sampler_.params(), sampler_.grammar_vocabulary());
  accept_recent(window);
  sampler_.take_penalty_window(window);
}

void ChatSession::accept_recent(sampling::SamplerChain& chain) const {
  for (const RecentMessage& m : state_.recent) {
    for (const int32_t t : m.tokens) {
      if (!is_image_token(t)) chain.accept_prompt(t);
    }
  }
}

void ChatSession::accept_text(std::vector<int32_t>::const_iterator begin, std::vector<int32_t>::const_iterator end) {
  for (auto t = begin; t != end; ++t) {
    if (!is_image_token(*t)) sampler_.accept_prompt(*t);
  }
}

ImageList ChatSession::prompt_images(const TurnPrompt& prompt) {
  ImageList images;
  for (const LoggedMessage& m : prompt.messages) add_images(images, m.images);
  return images;
}

void ChatSession::attach_image(const float* rows, int64_t n_tokens, int64_t grid_rows, int64_t grid_cols,
                               int64_t token_cols) {
  if (!settings_.images) {
    throw std::invalid_argument(
        "this session takes no images: create it with the model's vision projector (an mmproj file)");
  }
  const int64_t n_embd = model_.hparams().n_embd;
  if (!rows || n_tokens < 1) throw std::invalid_argument("an image needs at least one row of embeddings");
  if (n_tokens >= kMaxImageTokens) {
    throw std::invalid_argument("an image of " + std::to_string(n_tokens) + " tokens; at most " +
                                std::to_string(kMaxImageTokens - 1) + " are taken");
  }
  if (n_tokens > settings_.recent_max) {
    throw std::invalid_argument("an image of " + std::to_string(n_tokens) + " tokens does not fit recent_max " +
                                std::to_string(settings_.recent_max));
  }
  SessionImage framed = frame_image(*settings_.images, n_tokens, grid_rows, grid_cols, settings_.n_batch, token_cols);
  const size_t n = static_cast<size_t>(n_tokens * n_embd);
  for (size_t i = 0; i < n; ++i) {
    if (!std::isfinite(rows[i])) {
      throw std::invalid_argument("an image's row " + std::to_string(i / static_cast<size_t>(n_embd)) +
                                  " holds a value that is not finite");
    }
  }
  const uint64_t hash = io::fnv1a(rows, n * sizeof(float));
  // The same picture again (attached twice, or in an earlier message) is one image.
  ImageList known = attached_;
  for (const LoggedMessage& m : state_.log) add_images(known, m.images);
  for (const ImagePtr& image : known) {
    if (image->hash == hash && image->n_tokens == n_tokens && image->texts == framed.texts &&
        image->token_cols == framed.token_cols && std::equal(rows, rows + n, image->rows.begin())) {
      attached_.push_back(image);
      return;
    }
  }
  if (next_image_id_ >= kMaxImages) {
    throw std::invalid_argument("a session holds at most " + std::to_string(kMaxImages) + " different images");
  }
  framed.id = next_image_id_++;
  framed.hash = hash;
  framed.n_embd = n_embd;
  framed.rows.assign(rows, rows + n);
  attached_.push_back(std::make_shared<const SessionImage>(std::move(framed)));
}

void ChatSession::set_sampler(const sampling::SamplerParams& params) {
  SessionSettings s = settings_;
  s.sampler = params;
  validate_tool_settings(s);
  sampling::SamplerChain chain = make_sampler(params, tools_);  // checks params
  if (params.penalty_last_n == sampler_.params().penalty_last_n) {
    chain.take_penalty_window(sampler_);
  } else {
    accept_recent(chain);
  }
  sampler_ = std::move(chain);
  settings_.sampler = params;
}

void ChatSession::roll_back(TurnUndo& undo) {
  runtime::ContextCells cells(*ctx_);
  undo.cells.undo(cells);
  state_.recent = std::move(undo.recent);
  state_.dropped_text = std::move(undo.dropped_text);
  state_.stats = undo.stats;
  // Copy-assigned: the chain's buffer keeps its storage, so what points into it stays valid.
  sampler_ = undo.sampler;
  state_.log.resize(undo.log_size - undo.log_tail.size());
  state_.log.insert(state_.log.end(), undo.log_tail.begin(), undo.log_tail.end());
  state_.unsent = undo.unsent;
  unsettled_ = undo.unsettled;
  if (summary_jobs_) summary_jobs_->restore_taken_back_from(undo.rebuild_taken_back_from);
}

void ChatSession::reset() {
  cancel_summary();
  const int64_t n_ctx = state_.stats.n_ctx;
  state_ = SessionState{};
  state_.stats.n_ctx = n_ctx;
  last_turn_.reset();
  last_turn_times_ = TurnTimes{};
  attached_.clear();
  sampler_.reset();
  ctx_->kv().clear();
  unsettled_ = 0;
  ctx_->eval(prefix_.data(), static_cast<int64_t>(prefix_.size()));
}

void ChatSession::set_adapters(const runtime::Adapters& adapters) {
  wait_for_summary();  // the worker is idle from here on
  const runtime::Adapters previous = ctx_->adapters();
  const auto apply = [this](const runtime::Adapters& a) {
    ctx_->set_adapters(a);
    if (summary_jobs_) summary_jobs_->set_adapters(a);
    prefill_all();
  };
  try {
    apply(adapters);
  } catch (...) {
    apply(previous);
    throw;
  }
}

const std::string& ChatSession::last_summary_error() const {
  static const std::string kNone;
  return summary_jobs_ ? summary_jobs_->last_error() : kNone;
}

SessionStats ChatSession::stats() const {
  SessionStats s = state_.stats;
  s.prefix_tokens = static_cast<int64_t>(prefix_.size());
  s.summary_tokens = static_cast<int64_t>(state_.summary_tokens.size());
  s.recent_tokens = state_.recent_cells();
  s.recent_messages = static_cast<int64_t>(state_.recent.size());
  s.summary_running = summary_jobs_ && summary_jobs_->running();
  s.kv_bytes = ctx_->kv().bytes() + (summary_jobs_ ? summary_jobs_->kv_bytes() : 0);
  s.staging_kv_bytes = summary_jobs_ ? summary_jobs_->staging_kv_bytes() : 0;
  return s;
}

size_t ChatSession::n_messages() const { return (settings_.system_prompt.empty() ? 0 : 1) + state_.log.size(); }

MessageView ChatSession::message(size_t index) const {
  static const std::string kSystem = "system";
  if (index >= n_messages()) {
    throw std::out_of_range("message " + std::to_string(index) + " of a conversation of " +
                            std::to_string(n_messages()));
  }
  if (!settings_.system_prompt.empty()) {
    if (index == 0) return {kSystem, settings_.system_prompt, MessageState::InContext};
    --index;
  }
  const LoggedMessage& m = state_.log[index];
  return {m.role, m.content, state_.where(index), m.images.size()};
}

void ChatSession::save(const std::string& path, bool include_kv) {
  // A running summary (and its rebuild) belongs to the state: let it finish,
  // then put it in place (swapping a rebuilt cache in).
  apply_pending_summary(/*wait=*/true);
  if (include_kv) settle();
  write_session_file(path, model_, saved_settings(settings_, prefix_), state_, include_kv ? &ctx_->kv() : nullptr);
}

int64_t ChatSession::reproducible_cells(const FittedSession& fitted) const {
  // A cell's K and V depend only on the tokens up to it, so prefilling the
  // first cells' tokens gives them again, for cells computed where they are:
  // the Prefix and the Summary always (a summary is put in place by
  // evaluating it right after the Prefix, or in a cache rebuilt from
  // scratch); Recent's only while no message ever left it, since a message
  // leaving moves Recent down over its cells (window, `shift`, the fit
  // dropping saved messages), values computed with it in view.
  const int64_t segments = first_recent_cell();
  if (fitted.dropped_cells > 0 || state_.stats.dropped_total > 0) return segments;
  return segments + state_.recent_cells();
}

void ChatSession::load_checked_cells(const FittedSession& fitted, const std::string& path) {
  // Only the first cells are computed again: a prefill of them all would cost
  // what loading them saves. Later cells are trusted unchecked; the first ones
  // are what every later cell was computed from.
  const int64_t checked = std::min(settings_.verify_kv_cells, reproducible_cells(fitted));
  std::vector<uint8_t> recomputed;
  if (checked > 0) {
    const std::vector<int32_t> tokens = cached_tokens();
    ctx_->kv().clear();
    evaluate_cells(*ctx_, tokens.data(), checked, state_.recent_images());
    recomputed = ctx_->kv().snapshot_first(checked);
  }
  load_saved_cells(*ctx_, fitted, first_recent_cell());
  if (checked == 0) return;
  const std::optional<runtime::KvRowDifference> d = runtime::first_kv_difference(ctx_->kv(), recomputed, checked);
  if (!d) return;
  // The conversation passed every other check: only the cells are not
  // trusted, and a prefill computes them from its tokens.
  log::warn(path + ": its KV cache differs from the cells computed again (layer " + std::to_string(d->layer) + " " +
            (d->value ? "V" : "K") + ", cell " + std::to_string(d->cell) + ", head " + std::to_string(d->head) +
            ": by " + std::to_string(d->difference) + ", allowed " + std::to_string(d->allowed) +
            "); the conversation is prefilled instead");
  prefill_all();
}

void ChatSession::restore(const std::string& path) {
  const RestoringSession target{model_,      settings_,  prefix_,
                                *encoder_,   ctx_->kv(), summary_jobs_ ? &summary_jobs_->summarizer() : nullptr,
                                state_.stats};
  FittedSession fitted = fit_session_file(read_session_file(path, target), target, path);
  // The file has passed every check and fits: from here on nothing refuses it.
  cancel_summary();
  last_turn_.reset();
  state_ = std::move(fitted.state);
  unsettled_ = 0;  // the cells are loaded or prefilled below
  for (RecentMessage& m : state_.recent) m.serial = next_serial_++;
  // The file's pictures keep their ids (its tokens carry them); new ones follow.
  attached_.clear();
  for (const LoggedMessage& m : state_.log) {
    for (const ImagePtr& image : m.images) next_image_id_ = std::max(next_image_id_, image->id + 1);
  }
  answers_read_for_calls_ = std::max(answers_read_for_calls_, last_call_answer(state_.log));
  try {
    if (fitted.cells) {
      load_checked_cells(fitted, path);
    } else {
      prefill_all();
    }
  } catch (...) {
    // The model failed on the saved conversation (not the file): a session
    // with no conversation rather than one whose cells disagree with it.
    reset();
    throw;
  }
  // The penalty window sees the recent conversation again.
  sampler_.reset();
  accept_recent(sampler_);
  maybe_start_summary();
}

}  // namespace peak::chat
