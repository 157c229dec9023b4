#include "chat/chat_session.h"

#include <algorithm>
#include <stdexcept>

#include "runtime/kv_cache.h"
#include "runtime/stopwatch.h"
#include "chat/model_chat_template.h"

namespace peak::chat {
namespace {

constexpr const char* kSummaryLead = "Summary of the earlier conversation: ";
constexpr int64_t kClosingReserve = 16;  // cells kept after the answer for the turn's closing marker
constexpr int64_t kMinSummaryText = 8;   // tokens of summary text, at least, besides its framing

std::string trimmed(const std::string& text) {
  const size_t begin = text.find_first_not_of(" \t\n\r");
  if (begin == std::string::npos) return std::string();
  return text.substr(begin, text.find_last_not_of(" \t\n\r") + 1 - begin);
}

// Whether a generation prompt ends by opening the reasoning block (DeepSeek-R1
// writes "<think>\n"), so the output starts inside it.
bool opens_reasoning_block(std::string prompt) {
  while (!prompt.empty() && (prompt.back() == '\n' || prompt.back() == ' ')) prompt.pop_back();
  const std::string open = ReasoningMarkers{}.open;
  return prompt.size() >= open.size() && prompt.compare(prompt.size() - open.size(), open.size(), open) == 0;
}

// Refuses `value` of the field `name` (as peak_session_params spells it) below `min`.
void require_at_least(const char* name, int64_t value, int64_t min) {
  if (value < min) {
    throw std::invalid_argument(std::string(name) + " is " + std::to_string(value) + "; it must be at least " +
                                std::to_string(min));
  }
}

// Checked before anything is allocated.
void validate(const SessionSettings& s) {
  require_at_least("headroom", s.headroom, kClosingReserve + 8);
  require_at_least("recent_max", s.recent_max, 32);
  require_at_least("trigger_discard", s.trigger_discard, 1);
  require_at_least("n_batch", s.n_batch, 1);
  if (s.mode == MemoryMode::Ssskv) {
    require_at_least("summary_max", s.summary_max, 16);
    validate_summarizer(s.summarizer);
  }
}

}  // namespace

ChatSession::ChatSession(const model::Model& model, const SessionSettings& settings)
    : model_(model),
      settings_(settings),
      chat_(settings.template_name == "raw" ? ChatTemplate(ChatTemplateFamily::ChatML)
                                            : chat_template_for(model, settings.template_name).chat_template),
      raw_(settings.template_name == "raw"),
      sampler_(static_cast<int32_t>(model.hparams().n_vocab), settings.sampler) {
  validate(settings_);
  const tokenizer::Tokenizer& tok = model.tokenizer();
  std::string system_text;
  if (raw_) {
    if (!settings_.system_prompt.empty()) system_text = settings_.system_prompt + "\n";
  } else {
    // What every render starts with (BOS text, Llama 3.1's dated system block):
    // the Prefix holds it once and the turns' texts leave it out. Some
    // templates cannot render no messages at all (they read messages[0]).
    try {
      render_base_ = chat_.format({}, false, format_options());
    } catch (const std::exception&) {
      render_base_.clear();
    }
    // A template without a system role (Gemma) renders nothing for a system
    // message alone: system texts (the prompt, the summary) then become user
    // turns of their own, so they stay where the session puts them.
    const std::string probe = "\x01";
    system_role_ = chat_.format({{"system", probe}}, false, format_options()).find(probe) != std::string::npos
                       ? "system"
                       : "user";
    system_text = settings_.system_prompt.empty()
                      ? render_base_
                      : chat_.format({{system_role_, settings_.system_prompt}}, false, format_options());
    system_text = without_added_bos(model, system_text);
    generation_opens_reasoning_ = opens_reasoning_block(format_turn({{"user", ""}}, true));
  }
  prefix_ = tok.encode(system_text, /*add_special=*/true, /*parse_special=*/!raw_);
  const int64_t summary_cells = settings_.mode == MemoryMode::Ssskv ? settings_.summary_max : 0;
  runtime::ContextParams cp;
  cp.n_ctx = static_cast<int64_t>(prefix_.size()) + summary_cells + settings_.recent_max + settings_.headroom;
  cp.n_batch = settings_.n_batch;
  cp.n_threads = settings_.n_threads;
  cp.type_k = runtime::kv_type_fitting(model.hparams(), settings_.type_k);
  cp.type_v = runtime::kv_type_fitting(model.hparams(), settings_.type_v);
  ctx_ = std::make_unique<runtime::Context>(model, cp);
  ctx_->eval(prefix_.data(), static_cast<int64_t>(prefix_.size()));

  if (settings_.mode == MemoryMode::Ssskv) {
    SummarizerSettings ss = settings_.summarizer;
    ss.raw = raw_;
    ss.n_threads = settings_.n_threads;
    // The summary text gets what the segment's own framing leaves of summary_max.
    const int64_t framing = static_cast<int64_t>(summary_segment("").size());
    ss.summary_max = settings_.summary_max - framing;
    if (ss.summary_max < kMinSummaryText) {
      throw std::invalid_argument("summary_max is " + std::to_string(settings_.summary_max) +
                                  "; with this chat template it must be at least " +
                                  std::to_string(framing + kMinSummaryText) + " (the summary's framing takes " +
                                  std::to_string(framing) + " tokens)");
    }
    summarizer_ = std::make_unique<Summarizer>(model, chat_, ss);
  }
  stats_.n_ctx = cp.n_ctx;
}

// The worker may be rebuilding the cache with this session's template and
// settings: it stops before they go.
ChatSession::~ChatSession() { cancel_summary(); }

FormatOptions ChatSession::format_options() const {
  FormatOptions o;
  o.enable_thinking = settings_.enable_thinking;
  o.fold_system = true;
  return o;
}

std::string ChatSession::format_turn(const std::vector<ChatMessage>& turn, bool add_generation_prompt) const {
  const std::string text = chat_.format(turn, add_generation_prompt, format_options());
  // Leave out what every render starts with (it is in the Prefix), or at least
  // the BOS text the tokenizer adds.
  if (!render_base_.empty() && text.compare(0, render_base_.size(), render_base_) == 0) {
    return text.substr(render_base_.size());
  }
  return without_added_bos(model_, text);
}

std::vector<int32_t> ChatSession::encode_turn(const std::vector<ChatMessage>& turn, bool add_generation_prompt) const {
  const tokenizer::Tokenizer& tok = model_.tokenizer();
  if (raw_) {
    std::string text;
    for (const ChatMessage& m : turn) text += m.content;
    return tok.encode(text, false, false);
  }
  // Control tokens come from the template only: the messages' texts are not
  // parsed for them (a message cannot forge a turn boundary). The turn is
  // rendered once with a marker in place of each text, which shows the
  // template's own pieces, and once for real, which shows each text as the
  // template wrote it (trimmed or not).
  std::vector<ChatMessage> marked = turn;
  for (size_t i = 0; i < marked.size(); ++i) marked[i].content = std::string(1, static_cast<char>(1 + i));
  const std::string framed = format_turn(marked, add_generation_prompt);
  std::vector<std::string> pieces(1);
  for (const char c : framed) {
    if (c >= 1 && c <= static_cast<char>(marked.size())) {
      pieces.emplace_back();
    } else {
      pieces.back() += c;
    }
  }
  if (pieces.size() != turn.size() + 1) {
    throw std::runtime_error("the chat template does not write each message exactly once");
  }
  const std::string real = format_turn(turn, add_generation_prompt);
  std::vector<int32_t> out;
  size_t at = 0;
  const auto append = [&](const std::string& text, bool special) {
    const std::vector<int32_t> ids = tok.encode(text, false, special);
    out.insert(out.end(), ids.begin(), ids.end());
  };
  for (size_t i = 0; i < turn.size(); ++i) {
    append(pieces[i], true);
    if (real.compare(at, pieces[i].size(), pieces[i]) == 0) at += pieces[i].size();
    // The text as written: as given, or trimmed when the template trims it.
    std::string text = turn[i].content;
    const std::string& next = pieces[i + 1];
    for (const std::string& candidate : {turn[i].content, trimmed(turn[i].content)}) {
      if (real.compare(at, candidate.size(), candidate) == 0 &&
          real.compare(at + candidate.size(), next.size(), next) == 0) {
        text = candidate;
        break;
      }
    }
    at += text.size();
    append(text, false);
  }
  append(pieces.back(), true);
  return out;
}

std::vector<int32_t> ChatSession::user_segment(const std::string& text) const {
  return encode_turn({{"user", text}}, true);
}

std::vector<int32_t> ChatSession::history_tokens(const std::string& user_text, const std::string& answer) const {
  const std::vector<ChatMessage> turn = {{"user", user_text}, {"assistant", answer}};
  if (raw_) return encode_turn(turn, false);
  // Templates render the last answer differently from earlier ones (Qwen3 gives
  // only the last an empty reasoning block): the turn as every later prompt
  // shows it is its render followed by another user message, less that message.
  std::vector<ChatMessage> followed = turn;
  followed.push_back({"user", "."});
  std::vector<int32_t> tokens = encode_turn(followed, false);
  const std::vector<int32_t> next = encode_turn({followed.back()}, false);
  if (tokens.size() > next.size() && std::equal(next.rbegin(), next.rend(), tokens.rbegin())) {
    tokens.resize(tokens.size() - next.size());
    return tokens;
  }
  return encode_turn(turn, false);
}

std::vector<int32_t> ChatSession::summary_segment(const std::string& summary) const {
  const tokenizer::Tokenizer& tok = model_.tokenizer();
  if (raw_) return tok.encode(std::string(kSummaryLead) + summary + "\n", false, false);
  return encode_turn({{system_role_, std::string(kSummaryLead) + summary}}, false);
}

// Thread safety (the summary worker calls this): the tokenizer is immutable, a
// template renders without changing itself (a Jinja template's body is shared
// and const), and settings_, raw_, system_role_ and render_base_ never change
// after construction.
std::vector<int32_t> ChatSession::summary_cells(const std::string& summary) const {
  std::vector<int32_t> segment = summary_segment(summary);
  if (static_cast<int64_t>(segment.size()) > settings_.summary_max) segment.resize(static_cast<size_t>(settings_.summary_max));
  return segment;
}

int64_t ChatSession::recent_cells() const {
  int64_t n = 0;
  for (const Message& m : recent_) n += static_cast<int64_t>(m.tokens.size());
  return n;
}

void ChatSession::drop_front() {
  const Message& m = recent_.front();
  dropped_text_ += (m.role == "user" ? "User: " : "Assistant: ") + m.text + "\n";
  const auto n = static_cast<int64_t>(m.tokens.size());
  stats_.dropped_since_summary += n;
  stats_.dropped_total += n;
  recent_.pop_front();
}

void ChatSession::make_room(int64_t incoming, TurnResult& turn, TurnUndo& undo) {
  if (settings_.mode == MemoryMode::None) {
    if (ctx_->kv().used() + incoming + settings_.headroom > ctx_->n_ctx()) {
      throw runtime::ContextFull("the conversation fills the context (" + std::to_string(ctx_->kv().used()) + " of " +
                        std::to_string(ctx_->n_ctx()) + " tokens used, " + std::to_string(incoming) +
                        " more for this message): mode none never drops history");
    }
    return;
  }
  // Drop whole messages from the left of Recent until the new one fits in
  // recent_max; the answer then goes into the headroom after it.
  const int64_t before = recent_cells();
  int64_t cells = before;
  while (!recent_.empty() && cells + incoming > settings_.recent_max) {
    cells -= static_cast<int64_t>(recent_.front().tokens.size());
    drop_front();
    ++turn.dropped_messages;
  }
  const int64_t dropped = before - cells;
  if (dropped == 0) return;
  // Remove their cells, keeping a copy to put back if the turn fails. The rest
  // of Recent moves down in cells but keeps its positions for this turn: the
  // turn's tokens follow it, and only relative positions matter within them.
  // Re-rotating keys cannot be undone exactly, so it waits for finish_room(),
  // after the answer, instead of a copy of the whole cache here.
  const runtime::Stopwatch stopwatch;
  runtime::KvCache& kv = ctx_->kv();
  const int64_t first = first_recent_cell();
  undo.removed_cells = kv.snapshot_cells(first, dropped);
  undo.removed_positions.assign(kv.positions().begin() + first, kv.positions().begin() + first + dropped);
  undo.removed_at = first;
  kv.remove(first, dropped);
  turn.times.window_shift = stopwatch.seconds();
}

void ChatSession::finish_room(TurnResult& turn, const TurnUndo& undo) {
  const auto removed = static_cast<int32_t>(undo.removed_positions.size());
  if (removed == 0) return;
  // Recent and this turn move down over the removed cells, so positions stay
  // compact (StreamingLLM with the Prefix as attention sink). This throws
  // only from its checks, before any key is rotated: the undo still holds.
  const runtime::Stopwatch stopwatch;
  ctx_->shift_positions(undo.removed_at, ctx_->kv().used() - undo.removed_at, -removed);
  turn.times.window_shift += stopwatch.seconds();
  stats_.window_shift_seconds += turn.times.window_shift;
}

std::vector<int32_t> ChatSession::cached_tokens() const {
  std::vector<int32_t> all = prefix_;
  all.insert(all.end(), summary_tokens_.begin(), summary_tokens_.end());
  for (const Message& m : recent_) all.insert(all.end(), m.tokens.begin(), m.tokens.end());
  return all;
}

std::string ChatSession::preview_prompt(const std::string& user_text) const {
  std::vector<int32_t> tokens = cached_tokens();
  const std::vector<int32_t> segment = user_segment(user_text);
  tokens.insert(tokens.end(), segment.begin(), segment.end());
  return model_.tokenizer().detokenize(tokens, /*remove_special=*/false, /*render_special=*/true);
}

void ChatSession::prefill_all() {
  const std::vector<int32_t> all = cached_tokens();
  ctx_->kv().clear();
  ctx_->eval(all.data(), static_cast<int64_t>(all.size()));
}

void ChatSession::put_summary_in_place(const std::string& summary) {
  const runtime::Stopwatch stopwatch;
  const std::vector<int32_t> segment = summary_cells(summary);
  if (settings_.rebuild == RebuildStrategy::Reprefill) {
    summary_tokens_ = segment;
    prefill_all();
  } else {
    // Keep Prefix and Recent; replace the Summary cells and move Recent after them.
    const auto p = static_cast<int64_t>(prefix_.size());
    const auto old_s = static_cast<int64_t>(summary_tokens_.size());
    const auto new_s = static_cast<int64_t>(segment.size());
    const int64_t recent = recent_cells();
    runtime::KvCache& kv = ctx_->kv();
    kv.remove(p, old_s);
    kv.insert(p, new_s, static_cast<int32_t>(p));
    ctx_->eval_into(p, segment.data(), new_s);
    ctx_->shift_positions(p + new_s, recent, static_cast<int32_t>(new_s - old_s));
    summary_tokens_ = segment;
  }
  summary_text_ = summary;
  stats_.last_rebuild_seconds = stopwatch.seconds();
  stats_.rebuild_seconds += stats_.last_rebuild_seconds;
  ++stats_.summaries;
}

bool ChatSession::send_rebuild_update(CacheRebuild& rebuild) {
  std::vector<CacheRebuild::Message> added;
  for (const Message& m : recent_) {
    if (m.serial >= rebuild_next_serial_) added.push_back({m.serial, m.tokens});
  }
  rebuild_next_serial_ = next_serial_;
  return rebuild.update(recent_.empty() ? next_serial_ : recent_.front().serial, std::move(added));
}

void ChatSession::swap_in_rebuilt_cache(CacheRebuild& rebuild, const std::string& summary, TurnTimes& times) {
  const runtime::Stopwatch stopwatch;
  // Nothing is left to apply: every turn since the job started sent its
  // update as it ended (chat()), and the worker applied each before it let the
  // job end (take() waited for it, and for a continuation the last one needed).
  const std::vector<int32_t> segment = rebuild.summary_segment();
  ctx_ = rebuild.take();  // the old main cache is freed here
  // Its threads were started on the low-priority worker: the turns need them at ours.
  ctx_->restart_threads();
  summary_tokens_ = segment;
  summary_text_ = summary;
  times.catch_up = stopwatch.seconds();
  stats_.last_rebuild_seconds = times.catch_up;
  stats_.rebuild_seconds += times.catch_up;
  ++stats_.summaries;
}

void ChatSession::maybe_start_summary() {
  if (!summarizer_ || summarizer_->has_job() || stats_.dropped_since_summary < settings_.trigger_discard) return;
  Summarizer::AfterSummary rebuild;
  if (settings_.rebuild == RebuildStrategy::Background) {
    CacheRebuild::Start start;
    const runtime::KvCache& kv = ctx_->kv();
    start.params.n_ctx = ctx_->n_ctx();
    start.params.n_batch = ctx_->n_batch();
    start.params.n_threads = ctx_->n_threads();
    start.params.type_k = kv.type_k();
    start.params.type_v = kv.type_v();
    start.params.adapters = ctx_->adapters();
    const auto p = static_cast<int64_t>(prefix_.size());
    start.prefix_cells = kv.snapshot_first(p);
    start.prefix_positions.assign(kv.positions().begin(), kv.positions().begin() + p);
    for (const Message& m : recent_) start.recent.push_back({m.serial, m.tokens});
    rebuild_next_serial_ = next_serial_;
    rebuild_ = std::make_unique<CacheRebuild>(model_, std::move(start));
    rebuild = [this, job = rebuild_.get()](const std::string& summary, const std::atomic<int>& cancel) {
      job->run(summary_cells(summary), cancel);
    };
  }
  summarizer_->start(summary_text_, dropped_text_, settings_.background_summary, std::move(rebuild));
  job_dropped_text_ = std::move(dropped_text_);  // now in the job
  job_dropped_tokens_ = stats_.dropped_since_summary;
  dropped_text_.clear();
  stats_.dropped_since_summary = 0;
}

void ChatSession::cancel_summary() {
  if (summarizer_) summarizer_->cancel();
  rebuild_.reset();
}

void ChatSession::wait_for_summary() { apply_pending_summary(/*wait=*/true); }

bool ChatSession::apply_pending_summary(bool wait) {
  TurnTimes times;
  return put_pending_summary_in_place(wait, times);
}

bool ChatSession::put_pending_summary_in_place(bool wait, TurnTimes& times) {
  if (!summarizer_ || !summarizer_->has_job() || (summarizer_->running() && !wait)) return false;
  // The worker is done with the job (or take() waits for it) and its rebuild.
  const std::unique_ptr<CacheRebuild> rebuild = std::move(rebuild_);
  SummaryResult r;
  try {
    r = summarizer_->take();
  } catch (const std::exception& e) {
    // A failed summary must not fail the user's turn nor lose what it was to
    // summarize: the old summary stays, and the job's dropped text goes back
    // in front of what was dropped since, for the next job.
    dropped_text_ = job_dropped_text_ + dropped_text_;
    stats_.dropped_since_summary += job_dropped_tokens_;
    ++stats_.summary_failures;
    last_summary_error_ = e.what();
    return false;
  }
  stats_.summary_seconds += r.seconds;
  if (rebuild) stats_.worker_rebuild_seconds += rebuild->seconds();
  if (!r.work_error.empty()) {
    ++stats_.summary_failures;
    last_summary_error_ = "rebuilding the cache: " + r.work_error + " (the summary was put in place by a shift)";
  }
  if (rebuild && rebuild->ready() && r.work_error.empty()) {
    swap_in_rebuilt_cache(*rebuild, r.text, times);
  } else {
    put_summary_in_place(r.text);  // a shift, unless the strategy is reprefill
  }
  return true;
}

void ChatSession::settle_turn(int64_t turn_first_cell, const std::vector<int32_t>& user_tokens, size_t user_cut,
                              const std::string& user_text, const std::string& answer,
                              const std::vector<int32_t>& generated) {
  // The cells of this turn hold the user segment and what was generated after
  // it (the end-of-generation token is sampled, not evaluated). Keep what
  // agrees with the turn as the template renders it in history (the answer
  // without reasoning, then the closing marker) and evaluate the rest.
  runtime::KvCache& kv = ctx_->kv();
  std::vector<int32_t> canonical = history_tokens(user_text, answer);
  // A message longer than the window lost its first user_cut tokens.
  canonical.erase(canonical.begin(), canonical.begin() + static_cast<std::ptrdiff_t>(std::min(user_cut, canonical.size())));
  std::vector<int32_t> cells = user_tokens;
  const int64_t answer_cells = kv.used() - turn_first_cell - static_cast<int64_t>(user_tokens.size());
  cells.insert(cells.end(), generated.begin(), generated.begin() + answer_cells);
  size_t same = 0;
  while (same < cells.size() && same < canonical.size() && cells[same] == canonical[same]) ++same;
  kv.remove(turn_first_cell + static_cast<int64_t>(same), static_cast<int64_t>(cells.size() - same));
  // Without room for all of it (an answer cut by the context's end), what fits.
  const int64_t missing = std::min<int64_t>(static_cast<int64_t>(canonical.size() - same), kv.free_cells());
  if (missing > 0) ctx_->eval(canonical.data() + same, missing);

  const size_t kept = same + static_cast<size_t>(std::max<int64_t>(missing, 0));
  const size_t user_part = std::min(user_tokens.size(), same);
  push_recent("user", user_text, std::vector<int32_t>(canonical.begin(), canonical.begin() + user_part));
  push_recent("assistant", answer, std::vector<int32_t>(canonical.begin() + user_part, canonical.begin() + kept));
}

void ChatSession::push_recent(const std::string& role, const std::string& text, std::vector<int32_t> tokens) {
  recent_.push_back(Message{role, text, std::move(tokens), next_serial_++});
}

ChatSession::TurnUndo::TurnUndo(const ChatSession& s)
    : recent(s.recent_),
      dropped_text(s.dropped_text_),
      stats(s.stats_),
      sampler(s.sampler_),
      log_size(s.log_.size()),
      kv_used(s.ctx_->kv().used()) {}

TurnResult ChatSession::chat(const std::string& user_text, const runtime::GenerateOptions& options,
                             const std::function<bool(const std::string&)>& on_reasoning) {
  TurnResult turn;
  // A finished summary (or, when so set, a running one) goes in place first.
  const runtime::Stopwatch rebuild_stopwatch;
  turn.rebuilt = put_pending_summary_in_place(settings_.wait_for_summary, turn.times);
  turn.times.rebuild = rebuild_stopwatch.seconds() - turn.times.catch_up;
  std::vector<int32_t> segment = user_segment(user_text);

  // From here on the turn changes the session; if it throws, all of it goes back.
  TurnUndo undo(*this);
  try {
    run_turn(user_text, std::move(segment), options, on_reasoning, turn, undo);
  } catch (...) {
    roll_back(undo);
    throw;
  }
  if (rebuild_ && !send_rebuild_update(*rebuild_)) {
    // The worker is done: it applies this turn while the user reads.
    summarizer_->continue_job([job = rebuild_.get()](const std::atomic<int>& cancel) { job->drain(cancel); });
  }
  if (settings_.mode == MemoryMode::Ssskv) {
    const bool had_job = summarizer_->has_job();
    maybe_start_summary();
    turn.summary_started = !had_job && summarizer_->has_job();
  }
  last_turn_times_ = turn.times;
  return turn;
}

void ChatSession::run_turn(const std::string& user_text, std::vector<int32_t> segment,
                           const runtime::GenerateOptions& options,
                           const std::function<bool(const std::string&)>& on_reasoning, TurnResult& turn,
                           TurnUndo& undo) {
  const int64_t window = settings_.recent_max;
  size_t user_cut = 0;
  if (settings_.mode != MemoryMode::None && static_cast<int64_t>(segment.size()) > window) {
    // One message alone exceeds the window: only then is a message cut, keeping its end.
    const int64_t cut = static_cast<int64_t>(segment.size()) - window;
    user_cut = static_cast<size_t>(cut);
    dropped_text_ += "User (start of a long message): " + user_text.substr(0, user_text.size() / 2) + "\n";
    stats_.dropped_since_summary += cut;
    stats_.dropped_total += cut;
    segment.erase(segment.begin(), segment.begin() + cut);
  }
  make_room(static_cast<int64_t>(segment.size()), turn, undo);

  runtime::GenerateOptions o = options;
  const int64_t budget = settings_.headroom - kClosingReserve;
  o.max_tokens = options.max_tokens < 0 ? static_cast<int32_t>(budget)
                                        : static_cast<int32_t>(std::min<int64_t>(options.max_tokens, budget));
  ReasoningSplitter splitter({}, generation_opens_reasoning_);
  const KindedTextFn route = [&](TextKind kind, const std::string& text) {
    if (kind == TextKind::Reasoning) return !on_reasoning || on_reasoning(text);
    return !options.on_text || options.on_text(text);
  };
  o.on_text = [&](const std::string& text) { return splitter.feed(text, route); };
  const int64_t turn_first_cell = ctx_->kv().used();
  turn.generation = runtime::generate(*ctx_, sampler_, segment, o);
  splitter.finish(route);
  turn.answer = splitter.answer();
  turn.reasoning = splitter.reasoning();
  turn.times.prefill = turn.generation.prompt_seconds;
  turn.times.generation = turn.generation.generate_seconds;
  const runtime::Stopwatch settle_stopwatch;
  settle_turn(turn_first_cell, segment, user_cut, user_text, turn.answer, turn.generation.tokens);
  turn.times.settle = settle_stopwatch.seconds();
  finish_room(turn, undo);
  log_.push_back({"user", user_text});
  log_.push_back({"assistant", turn.answer});
  ++stats_.turns;
}

void ChatSession::roll_back(TurnUndo& undo) {
  runtime::KvCache& kv = ctx_->kv();
  // The turn's cells, then the cells making room removed (Recent kept its positions).
  const auto removed = static_cast<int64_t>(undo.removed_positions.size());
  kv.drop_last(kv.used() - (undo.kv_used - removed));
  if (removed > 0) kv.put_back(undo.removed_at, undo.removed_cells, undo.removed_positions);
  recent_ = std::move(undo.recent);
  dropped_text_ = std::move(undo.dropped_text);
  stats_ = undo.stats;
  // Copy-assigned: the chain's buffer keeps its storage, so what points into it stays valid.
  sampler_ = undo.sampler;
  log_.resize(undo.log_size);
}

void ChatSession::reset() {
  cancel_summary();
  summary_text_.clear();
  summary_tokens_.clear();
  recent_.clear();
  dropped_text_.clear();
  log_.clear();
  const int64_t n_ctx = stats_.n_ctx;
  stats_ = SessionStats{};
  stats_.n_ctx = n_ctx;
  last_turn_times_ = TurnTimes{};
  sampler_.reset();
  ctx_->kv().clear();
  ctx_->eval(prefix_.data(), static_cast<int64_t>(prefix_.size()));
}

void ChatSession::set_adapters(const runtime::Adapters& adapters) {
  wait_for_summary();  // the worker is idle from here on
  const runtime::Adapters previous = ctx_->adapters();
  const auto apply = [this](const runtime::Adapters& a) {
    ctx_->set_adapters(a);
    if (summarizer_) summarizer_->set_adapters(a);
    prefill_all();
  };
  try {
    apply(adapters);
  } catch (...) {
    apply(previous);
    throw;
  }
}

SessionStats ChatSession::stats() const {
  SessionStats s = stats_;
  s.prefix_tokens = static_cast<int64_t>(prefix_.size());
  s.summary_tokens = static_cast<int64_t>(summary_tokens_.size());
  s.recent_tokens = recent_cells();
  s.recent_messages = static_cast<int64_t>(recent_.size());
  s.summary_running = summarizer_ && summarizer_->running();
  s.kv_bytes = ctx_->kv().bytes() + (summarizer_ ? summarizer_->kv_bytes() : 0);
  s.staging_kv_bytes = rebuild_ ? rebuild_->staging_kv_bytes() : 0;
  return s;
}

}  // namespace peak::chat
