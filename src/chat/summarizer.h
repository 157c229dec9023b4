// The cold path of SSSKV-lite: an independent summary context on the same model
// (weights shared, never copied) with its own small KV cache (Q4_0 by default),
// batch and greedy sampler, that rewrites "old summary + dropped history" into
// a new summary, on a background worker while the app waits for the user.
#pragma once

#include <atomic>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "model/model.h"
#include "sampling/sampler_chain.h"
#include "chat/chat_template.h"
#include "runtime/context.h"

namespace peak::chat {

struct SummarizerSettings {
  int64_t n_ctx = 2048;             // the summary context's cells
  kernels::GgmlType kv_type = kernels::GgmlType::Q4_0;  // F16 when its blocks do not divide the head size
  int32_t max_new_tokens = 256;     // generation length of one summary
  int64_t summary_max = 256;        // the result is clipped to this many tokens of the main tokenizer
  int n_threads = 0;
  int64_t n_batch = 512;
  bool raw = false;                 // no chat template: a plain-text prompt
  // The session's foreground, which a background job's passes wait for
  // (runtime::ForegroundActivity; it outlives the summarizer), or null.
  runtime::ForegroundActivity* activity = nullptr;
};

struct SummaryResult {
  std::string text;          // clipped to summary_max tokens at a sentence (or token) boundary
  int64_t input_tokens = 0;  // old summary + dropped text, before thinning
  int64_t kept_tokens = 0;   // after the sparse sampler
  double seconds = 0;        // prompt + generation
  // What the work after the summary (AfterSummary, continue_job) threw, when
  // it did; the summary itself is good.
  std::string work_error;
};

// Throws std::invalid_argument when the summary context cannot write a summary of
// the asked length; the message names the session's fields (summary_n_ctx,
// summary_max_new_tokens) as peak_session_params spells them.
void validate_summarizer(const SummarizerSettings& settings);

class Summarizer {
 public:
  // `chat` renders the instruction prompt; ignored when settings.raw. Throws what
  // validate_summarizer(settings) throws.
  Summarizer(const model::Model& model, const ChatTemplate& chat, const SummarizerSettings& settings);
  ~Summarizer();  // cancels and joins a running job
  Summarizer(const Summarizer&) = delete;
  Summarizer& operator=(const Summarizer&) = delete;

  // What the job does after writing the summary, given its text and the job's
  // cancel flag (rebuilding the main cache around it). It runs where the
  // summary ran, so the job runs until it returns; what it throws ends up in
  // SummaryResult::work_error.
  using AfterSummary = std::function<void(const std::string& summary, const std::atomic<int>& cancel)>;

  // Starts a job; with `background` on a worker thread, else before returning.
  // Only one job at a time: throws std::logic_error while one is running.
  void start(const std::string& old_summary, const std::string& dropped_text, bool background,
             AfterSummary after = nullptr);
  // More work of the same job, given its cancel flag: it runs where the summary
  // ran, after it, take() waits for it, and what it throws ends up in
  // SummaryResult::work_error. Waits for the job's earlier work first, so call
  // it when that has ended or is ending. Returns false, running nothing, when
  // the job or its work failed or was cancelled; throws std::logic_error
  // without a job.
  using Work = std::function<void(const std::atomic<int>& cancel)>;
  bool continue_job(Work work);
  // Whether the worker is busy with the job (its summary or what follows it).
  bool running() const { return worker_.joinable() && !done_.load(); }
  bool has_job() const { return has_job_; }
  // Waits for the job and returns its result; rethrows what writing the summary threw.
  SummaryResult take();
  // Asks a running job to stop, waits for the worker and forgets the job.
  void cancel();
  // Requested while a background job's passes need not wait for the
  // foreground's (runtime::ContextParams::background): once it is cancelled,
  // or once take() waits for it. Lives as long as the summarizer.
  const core::Cancellation* stop_waiting() const { return &stop_waiting_; }

  // The prompt tokens for `content`, thinned to fit the context (exposed for tests).
  std::vector<int32_t> build_prompt(const std::string& content, int64_t* input_tokens) const;
  const runtime::Context& context() const { return ctx_; }
  size_t kv_bytes() const { return ctx_.kv().bytes(); }
  // `text` trimmed and cut to summary_max tokens, backing off to its last
  // sentence end in the second half (what a job does to its summary; a
  // restored summary written for a larger summary_max gets the same). Reads
  // only what construction set: any thread.
  std::string clip(const std::string& text) const;
  // The adapters summaries are written with (runtime::Context::set_adapters);
  // only while no job runs.
  void set_adapters(const runtime::Adapters& adapters) { ctx_.set_adapters(adapters); }

 private:
  void run(std::string content);
  void run_work(const Work& work);
  // Tells the log (info) that a job failed, unless it was cancelled.
  void log_failure(const char* job, const std::string& why) const;

  const model::Model& model_;
  ChatTemplate chat_;
  SummarizerSettings settings_;
  runtime::Context ctx_;
  sampling::SamplerChain sampler_;
  std::thread worker_;
  std::atomic<bool> done_{false};
  std::atomic<int> cancel_{0};  // set by the caller's thread, read by the worker
  std::atomic<bool> awaited_{false};  // take() waits for the job
  const core::Cancellation stop_waiting_;
  AfterSummary after_;
  bool has_job_ = false;
  bool background_ = false;  // the job's work runs on worker_
  SummaryResult result_;
  std::exception_ptr error_;
};

}  // namespace peak::chat
