#include "chat/summarizer.h"

#include <stdexcept>

#include "core/thread_pool.h"
#include "log/log.h"
#include "runtime/generator.h"
#include "runtime/kv_cache.h"
#include "runtime/stopwatch.h"
#include "chat/model_chat_template.h"
#include "chat/reasoning.h"
#include "chat/sparse_sampler.h"

namespace peak::chat {
namespace {

constexpr const char* kInstruction =
    "Summarize the conversation below in a few sentences. Keep every name, number and decision, and the "
    "user's stated preferences and constraints. Write only the summary.";

// Checked first: a context of n_ctx 0 would silently take the model's default size.
runtime::ContextParams summary_context_params(const model::Model& model, const SummarizerSettings& s) {
  validate_summarizer(s);
  runtime::ContextParams p;
  p.n_ctx = s.n_ctx;
  p.n_batch = s.n_batch;
  p.n_threads = s.n_threads;
  p.type_k = runtime::kv_type_fitting(model.hparams(), s.kv_type);
  p.type_v = p.type_k;
  p.activity = s.activity;
  return p;
}

sampling::SamplerParams greedy() {
  sampling::SamplerParams p;
  p.temperature = 0.0f;
  p.repeat_penalty = 1.1f;  // a summary that loops on itself is useless
  return p;
}

bool ends_sentence(char c) { return c == '.' || c == '!' || c == '?' || c == '\n'; }

}  // namespace

void validate_summarizer(const SummarizerSettings& settings) {
  if (settings.max_new_tokens < 1) {
    throw std::invalid_argument("summary_max_new_tokens is " + std::to_string(settings.max_new_tokens) +
                                "; it must be at least 1");
  }
  // Room for the instruction and the (thinned) conversation besides the summary.
  const int64_t min_n_ctx = 4 * static_cast<int64_t>(settings.max_new_tokens);
  if (settings.n_ctx < min_n_ctx) {
    throw std::invalid_argument("summary_n_ctx is " + std::to_string(settings.n_ctx) +
                                "; it must be at least 4 x summary_max_new_tokens (" +
                                std::to_string(settings.max_new_tokens) + "), " + std::to_string(min_n_ctx));
  }
  if (settings.summary_max < 1) throw std::invalid_argument("summary_max leaves no room for a summary");
}

Summarizer::Summarizer(const model::Model& model, const ChatTemplate& chat, const SummarizerSettings& settings)
    : model_(model),
      chat_(chat),
      settings_(settings),
      ctx_(model, summary_context_params(model, settings)),
      sampler_(static_cast<int32_t>(model.hparams().n_vocab), greedy()),
      stop_waiting_(
          [](const void* self) {
            const auto* s = static_cast<const Summarizer*>(self);
            return s->cancel_.load() != 0 || s->awaited_.load();
          },
          this) {}

Summarizer::~Summarizer() { cancel(); }

std::vector<int32_t> Summarizer::build_prompt(const std::string& content, int64_t* input_tokens) const {
  const tokenizer::Tokenizer& tok = model_.tokenizer();
  // The prompt is head + content + tail; only the content is thinned.
  std::string head, tail;
  if (settings_.raw) {
    head = std::string(kInstruction) + "\n\n";
    tail = "\n\nSummary:";
  } else {
    const std::string marker = "\x01";  // a byte no template emits, to split around the content
    FormatOptions options;
    options.fold_system = true;  // enable_thinking stays off: a summary needs no reasoning
    const std::string full = chat_.format({{"system", kInstruction}, {"user", marker}}, true, options);
    const size_t at = full.find(marker);
    if (at == std::string::npos) throw std::runtime_error("the chat template drops the summary request");
    head = without_added_bos(model_, full.substr(0, at));
    tail = full.substr(at + marker.size());
  }
  std::vector<int32_t> prompt = tok.encode(head, /*add_special=*/true, /*parse_special=*/!settings_.raw);
  const std::vector<int32_t> body = tok.encode(content, false, false);
  const std::vector<int32_t> end = tok.encode(tail, false, !settings_.raw);
  *input_tokens = static_cast<int64_t>(body.size());
  const int64_t budget = settings_.n_ctx - static_cast<int64_t>(prompt.size() + end.size()) - settings_.max_new_tokens;
  if (budget <= 0) {
    throw std::invalid_argument("summary_n_ctx is " + std::to_string(settings_.n_ctx) + ", too small for the " +
                                std::to_string(prompt.size() + end.size()) +
                                " tokens of the summary instruction and summary_max_new_tokens (" +
                                std::to_string(settings_.max_new_tokens) + ")");
  }
  for (int64_t i : sparse_sample(static_cast<int64_t>(body.size()), budget)) prompt.push_back(body[static_cast<size_t>(i)]);
  prompt.insert(prompt.end(), end.begin(), end.end());
  return prompt;
}

std::string Summarizer::clip(const std::string& text) const {
  // Trim, then cut to summary_max tokens, backing off to the last sentence end.
  const size_t begin = text.find_first_not_of(" \n\t");
  if (begin == std::string::npos) return std::string();
  std::string s = text.substr(begin, text.find_last_not_of(" \n\t") + 1 - begin);
  const tokenizer::Tokenizer& tok = model_.tokenizer();
  std::vector<int32_t> ids = tok.encode(s, false, false);
  if (static_cast<int64_t>(ids.size()) <= settings_.summary_max) return s;
  ids.resize(static_cast<size_t>(settings_.summary_max));
  std::string cut = tok.detokenize(ids, false, false);
  for (size_t i = cut.size(); i > cut.size() / 2; --i) {
    if (ends_sentence(cut[i - 1])) return cut.substr(0, i);
  }
  return cut;
}

void Summarizer::run(std::string content) {
  try {
    const runtime::Stopwatch stopwatch;
    int64_t input_tokens = 0;
    const std::vector<int32_t> prompt = build_prompt(content, &input_tokens);
    ctx_.kv().clear();
    sampler_.reset();
    runtime::GenerateOptions options;
    options.max_tokens = settings_.max_new_tokens;
    options.cancel = &cancel_;
    // A thinking model may reason anyway: only its answer is the summary.
    ReasoningSplitter splitter;
    options.on_text = [&splitter](const std::string& piece) { return splitter.feed(piece, nullptr); };
    runtime::generate(ctx_, sampler_, prompt, options);
    splitter.finish(nullptr);
    result_.text = clip(splitter.answer());
    result_.input_tokens = input_tokens;
    result_.kept_tokens = static_cast<int64_t>(prompt.size());
    result_.seconds = stopwatch.seconds();
  } catch (const std::exception& e) {
    log_failure("summary", e.what());
    error_ = std::current_exception();
    done_ = true;
    return;
  } catch (...) {
    log_failure("summary", "unknown error");
    error_ = std::current_exception();
    done_ = true;
    return;
  }
  if (after_ && cancel_.load() == 0) run_work([this](const std::atomic<int>& cancel) { after_(result_.text, cancel); });
  done_ = true;
}

void Summarizer::run_work(const Work& work) {
  try {
    work(cancel_);
  } catch (const std::exception& e) {
    result_.work_error = e.what();
  } catch (...) {
    result_.work_error = "unknown error";
  }
  if (!result_.work_error.empty()) log_failure("cache rebuild", result_.work_error);
}

void Summarizer::log_failure(const char* job, const std::string& why) const {
  // A job stopped by cancel() is not a failure; the session reports real ones
  // (last_summary_error), so this is only information.
  if (cancel_.load() == 0) log::info(std::string("the ") + job + " job failed on the summary worker: " + why);
}

void Summarizer::start(const std::string& old_summary, const std::string& dropped_text, bool background,
                       AfterSummary after) {
  if (running()) throw std::logic_error("a summary is already being written");
  if (worker_.joinable()) worker_.join();
  std::string content = old_summary.empty() ? dropped_text : "Earlier summary: " + old_summary + "\n\n" + dropped_text;
  result_ = SummaryResult{};
  error_ = nullptr;
  cancel_ = 0;
  awaited_ = false;
  after_ = std::move(after);
  done_ = false;
  has_job_ = true;
  background_ = background;
  ctx_.set_background(background ? &stop_waiting_ : nullptr);
  if (background) {
    // The turns the user sends meanwhile come first: the worker's passes wait
    // for the session's to be quiet (runtime::ForegroundActivity), and its
    // threads, its summary context's and those of the contexts it creates (a
    // cache rebuild) run at the lowest priority.
    worker_ = std::thread([this, content = std::move(content)]() mutable {
      ctx_.lower_thread_priority();
      run(std::move(content));
    });
  } else {
    run(std::move(content));
  }
}

bool Summarizer::continue_job(Work work) {
  if (!has_job_) throw std::logic_error("no summary job to continue");
  if (worker_.joinable()) worker_.join();
  if (error_ || !result_.work_error.empty() || cancel_.load() != 0) return false;
  done_ = false;
  auto task = [this, work = std::move(work)] {
    run_work(work);
    done_ = true;
  };
  if (background_) {
    worker_ = std::thread([task = std::move(task)] {
      core::lower_current_thread_priority();
      task();
    });
  } else {
    task();
  }
  return true;
}

SummaryResult Summarizer::take() {
  if (!has_job_) throw std::logic_error("no summary job to take");
  awaited_ = true;  // the caller waits: its turns are not running
  if (worker_.joinable()) worker_.join();
  has_job_ = false;
  if (error_) std::rethrow_exception(error_);
  return result_;
}

void Summarizer::cancel() {
  cancel_ = 1;
  if (worker_.joinable()) worker_.join();
  has_job_ = false;
}

}  // namespace peak::chat
