#include "routes.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <random>

#include "generation.h"
#include "openai_response.h"
#include "web_page.h"

namespace peak_server {

namespace {

using Clock = std::chrono::steady_clock;
using peak::json::Value;

// Records the status a handler answered with, for the log line.
class StatusRecorder : public HttpResponder {
 public:
  explicit StatusRecorder(HttpResponder& inner) : inner_(inner) {}
  bool respond(int status, std::string_view content_type, std::string_view body,
               const std::vector<HttpHeader>& extra_headers) override {
    status_ = status;
    return inner_.respond(status, content_type, body, extra_headers);
  }
  bool start_stream(int status, std::string_view content_type, const std::vector<HttpHeader>& extra_headers) override {
    status_ = status;
    streaming_ = true;
    return inner_.start_stream(status, content_type, extra_headers);
  }
  bool write(std::string_view bytes) override { return inner_.write(bytes); }
  bool client_gone() override { return inner_.client_gone(); }
  int status() const { return status_; }
  bool streaming() const { return streaming_; }

 private:
  HttpResponder& inner_;
  int status_ = 0;  // 0: nothing sent (the client left first)
  bool streaming_ = false;
};

void send_json(HttpResponder& out, int status, const Value& body, const std::vector<HttpHeader>& headers = {}) {
  out.respond(status, "application/json", peak::json::write(body), headers);
}

void send_error(HttpResponder& out, int status, const std::string& message, const std::string& param = "",
                const std::vector<HttpHeader>& headers = {}) {
  out.respond(status, "application/json", error_body(status, message, param), headers);
}

// Whether `given` is `expected` (not empty), in a time that depends on the
// length of `given` only, not on where the two differ.
bool same_secret(std::string_view given, std::string_view expected) {
  unsigned diff = given.size() == expected.size() ? 0u : 1u;
  for (size_t i = 0; i < given.size(); ++i) {
    diff |= static_cast<unsigned char>(given[i]) ^ static_cast<unsigned char>(expected[i % expected.size()]);
  }
  return diff == 0;
}

bool parse_body(const HttpRequest& request, HttpResponder& out, Value* body) {
  std::string error;
  if (!peak::json::parse(request.body, body, &error)) {
    send_error(out, 400, "the body is not valid JSON: " + error);
    return false;
  }
  return true;
}

// The next of a sequence of 64-bit values, distinct until `counter` wraps
// (splitmix64: a bijection of the counter), drawn without a lock.
uint64_t distinct_value(std::atomic<uint64_t>& counter) {
  uint64_t z = counter.fetch_add(0x9E3779B97F4A7C15ull) + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint64_t random_start() {
  std::random_device device;
  return (static_cast<uint64_t>(device()) << 32) ^ device();
}

int64_t unix_time() { return static_cast<int64_t>(std::time(nullptr)); }

peak_model_info model_info(const peak_model* model) {
  peak_model_info info{};
  info.struct_size = sizeof info;
  check(peak_model_get_info(model, &info));
  return info;
}

int status_for(peak_status status) {
  switch (status) {
    case PEAK_ERR_INVALID_ARGUMENT:
    case PEAK_ERR_TEMPLATE:
    case PEAK_ERR_CONTEXT_FULL: return 400;
    default: return 500;
  }
}

// The error as the answer, or as the stream's last event when the stream had
// begun (no status can follow then).
void send_error_or_event(HttpResponder& out, bool streamed, int http_status, const std::string& message,
                         const std::string& param = "") {
  if (!streamed) return send_error(out, http_status, message, param);
  out.write(error_event(http_status, message, param));
  out.write(kDoneEvent);
}

// A generation that failed.
void send_failure(HttpResponder& out, bool streamed, peak_status status, const std::string& message) {
  send_error_or_event(out, streamed, status_for(status), message);
}

// The session refuses tools it cannot use (a parameters schema it cannot
// compile ...) with the JSON path first ("tools[0].function.parameters (tool
// 'f'): ..."): a 400 naming that field. Other failures stay as they are.
[[noreturn]] void throw_tools_error(const PeakError& e) {
  const std::string message = e.what();
  if (e.status == PEAK_ERR_INVALID_ARGUMENT && message.rfind("tools[", 0) == 0) {
    throw RequestError(message, message.substr(0, message.find_first_of(" :")));
  }
  throw e;
}

}  // namespace

// A slot held by one request, released when it goes out of scope.
class Server::Lease {
 public:
  Lease(SlotPool& pool, size_t slot) : pool_(pool), slot_(slot) {}
  ~Lease() { pool_.release(slot_); }
  Lease(const Lease&) = delete;
  Lease& operator=(const Lease&) = delete;

 private:
  SlotPool& pool_;
  size_t slot_;
};

Server::Server(const SlotSettings& settings, const ServerOptions& options)
    : model_(settings.model),
      info_(model_info(settings.model)),
      options_(options),
      headroom_(settings.session.headroom),
      pool_(options.parallel, options.max_queue),
      conversations_(options.parallel, options.max_conversations, options.conversation_dir,
                     [this] { return new_id("conversation"); }),
      seed_counter_(random_start()),
      id_counter_(random_start()) {
  SlotSettings slot_settings = settings;
  if (!info_.is_encoder && options.parallel > 1 && options.shared_passes) {
    const peak_session_params& session = settings.session;
    peak_pass_group_params gp = peak_pass_group_default_params();
    // The sessions' caches, less their system prompts: the first larger one grows it.
    gp.n_ctx = session.recent_max + session.summary_max + session.headroom;
    gp.max_sequences = std::min<size_t>(options.parallel, PEAK_PASS_GROUP_MAX_SEQUENCES);
    gp.prefill_chunk = options.prefill_chunk;
    gp.max_logit_rows = session.max_logit_rows;
    gp.n_threads = session.n_threads;
    gp.type_k = session.type_k;
    gp.type_v = session.type_v;
    gp.adapters = settings.adapters;
    peak_pass_group* group = nullptr;
    check(peak_pass_group_create(model_, &gp, &group));
    pass_group_.reset(group);
    slot_settings.session.pass_group = group;
    // /v1/completions' contexts join when their caches are of the sessions' types.
    if (settings.context.type_k == session.type_k && settings.context.type_v == session.type_v) {
      slot_settings.context.pass_group = group;
    }
    if (settings.draft_model) {
      gp.max_logit_rows = 1;
      gp.adapters = nullptr;
      peak_pass_group* draft_group = nullptr;
      check(peak_pass_group_create(settings.draft_model, &gp, &draft_group));
      draft_pass_group_.reset(draft_group);
      slot_settings.draft_pass_group = draft_group;
    }
  }
  if (settings.session.projector && !info_.is_encoder) {
    images_ = std::make_unique<ImageCache>(settings.session.projector, settings.session.n_threads);
  }
  speculative_ = options.lookup_ngram > 0 || settings.draft_model;
  for (size_t i = 0; i < options.parallel; ++i) {
    if (!info_.is_encoder) {
      slots_.push_back(std::make_unique<ChatSlot>(slot_settings));
      continue;
    }
    peak_embedder_params ep = peak_embedder_default_params();
    ep.n_threads = settings.context.n_threads;
    peak_embedder* embedder = nullptr;
    check(peak_embedder_create(model_, &ep, &embedder));
    embedders_.emplace_back(embedder, peak_embedder_free);
  }
}

void Server::stop() { pool_.stop(); }

ServerCounters Server::counters() const {
  ServerCounters c;
  c.requests = requests_.load();
  c.prompt_tokens = prompt_tokens_.load();
  c.prompt_tokens_evaluated = prompt_evaluated_.load();
  c.completion_tokens = completion_tokens_.load();
  c.drafted_tokens = drafted_tokens_.load();
  c.accepted_tokens = accepted_tokens_.load();
  c.rejected_busy = rejected_busy_.load();
  c.cancelled = cancelled_.load();
  c.images_encoded = images_encoded_.load();
  c.images_cached = images_cached_.load();
  return c;
}

uint64_t Server::next_seed() { return options_.random_seed ? distinct_value(seed_counter_) : options_.sampler.seed; }

std::string Server::new_id(const char* prefix) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%s-%016llx", prefix, static_cast<unsigned long long>(distinct_value(id_counter_)));
  return buf;
}

void Server::handle(const HttpRequest& request, HttpResponder& out) {
  const Clock::time_point start = Clock::now();
  StatusRecorder recorder(out);
  requests_.fetch_add(1);
  try {
    route(request, recorder);
  } catch (const RequestError& e) {
    send_error_or_event(recorder, recorder.streaming(), 400, e.what(), e.param);
  } catch (const PeakError& e) {
    send_error_or_event(recorder, recorder.streaming(), status_for(e.status), e.what());
  } catch (const std::exception& e) {
    send_error_or_event(recorder, recorder.streaming(), 500, std::string("internal error: ") + e.what());
  }
  if (options_.log_requests) {
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    // 499 (nginx's "client closed request"): the client left before an answer.
    std::fprintf(stderr, "%s %s %d %.0f ms\n", request.method.c_str(), request.path.c_str(),
                 recorder.status() ? recorder.status() : 499, ms);
  }
}

void Server::route(const HttpRequest& request, HttpResponder& out) {
  std::string_view path = request.path;
  const bool get = request.method == "GET" || request.method == "HEAD";
  const bool post = request.method == "POST";
  if (path == "/" || path == "/index.html") {
    if (!get) return send_error(out, 405, "use GET for " + request.path);
    out.respond(200, "text/html; charset=utf-8", web_page_html());
    return;
  }
  if (path == "/health") {
    if (!get) return send_error(out, 405, "use GET for " + request.path);
    return health(out);
  }
  if (!options_.api_key.empty()) {
    const std::string* auth = request.header("authorization");
    const std::string expected = "Bearer " + options_.api_key;
    if (!auth || !same_secret(*auth, expected)) {
      return send_error(out, 401, auth ? "invalid API key" : "an API key is needed (Authorization: Bearer KEY)", "",
                        {{"WWW-Authenticate", "Bearer"}});
    }
  }
  if (path.rfind("/v1/", 0) == 0) path.remove_prefix(3);
  struct Route {
    const char* path;
    bool post;
    void (Server::*post_handler)(const HttpRequest&, HttpResponder&);
    void (Server::*get_handler)(HttpResponder&);
  };
  static const Route kRoutes[] = {
      {"/chat/completions", true, &Server::chat, nullptr}, {"/completions", true, &Server::completion, nullptr},
      {"/tokenize", true, &Server::tokenize, nullptr},     {"/detokenize", true, &Server::detokenize, nullptr},
      {"/embeddings", true, &Server::embeddings, nullptr}, {"/rerank", true, &Server::rerank, nullptr},
      {"/reranking", true, &Server::rerank, nullptr},      {"/models", false, nullptr, &Server::models},
      {"/metrics", false, nullptr, &Server::metrics},
  };
  for (const Route& r : kRoutes) {
    if (path != r.path) continue;
    if (r.post != post || (!r.post && !get)) {
      return send_error(out, 405, std::string("use ") + (r.post ? "POST" : "GET") + " for " + request.path);
    }
    if (r.post) return (this->*r.post_handler)(request, out);
    return (this->*r.get_handler)(out);
  }
  send_error(out, 404, "no route " + request.method + " " + request.path);
}

void Server::health(HttpResponder& out) {
  const size_t busy = pool_.busy();
  send_json(out, 200,
            Value::object()
                .set("status", "ok")
                .set("slots_idle", pool_.n_slots() - busy)
                .set("slots_processing", busy)
                .set("queued", pool_.queued()));
}

Value Server::passes_metrics() const {
  if (!pass_group_) return Value();
  peak_pass_group_stats s{};
  s.struct_size = sizeof s;
  check(peak_pass_group_get_stats(pass_group_.get(), &s));
  Value by_sequences = Value::array();
  const size_t shown = std::min<size_t>(options_.parallel, PEAK_PASS_GROUP_MAX_SEQUENCES);
  for (size_t k = 0; k < shown; ++k) by_sequences.push(s.passes_by_sequences[k]);
  return Value::object()
      .set("count", s.passes)
      .set("tokens", s.tokens)
      .set("mean_sequences", s.passes > 0 ? static_cast<double>(s.sequences) / static_cast<double>(s.passes) : 0.0)
      .set("by_sequences", by_sequences);
}

void Server::metrics(HttpResponder& out) {
  const ServerCounters c = counters();
  send_json(out, 200,
            Value::object()
                .set("requests", c.requests)
                .set("prompt_tokens", c.prompt_tokens)
                .set("prompt_tokens_evaluated", c.prompt_tokens_evaluated)
                .set("completion_tokens", c.completion_tokens)
                .set("drafted_tokens", c.drafted_tokens)
                .set("accepted_tokens", c.accepted_tokens)
                .set("rejected_busy", c.rejected_busy)
                .set("cancelled", c.cancelled)
                .set("images_encoded", c.images_encoded)
                .set("images_cached", c.images_cached)
                .set("passes", passes_metrics())
                .set("slots", pool_.n_slots())
                .set("slots_processing", pool_.busy())
                .set("queued", pool_.queued()));
}

void Server::models(HttpResponder& out) {
  send_json(out, 200,
            Value::object()
                .set("object", "list")
                .set("data", Value::array().push(Value::object()
                                                     .set("id", options_.model_id)
                                                     .set("object", "model")
                                                     .set("created", unix_time())
                                                     .set("owned_by", "peak")
                                                     .set("vision", vision()))));
}

peak_generate_params Server::generate_params(Generation& g, size_t max_tokens, ChatSlot& slot) const {
  peak_generate_params p = g.params(max_tokens);
  p.lookup_ngram = options_.lookup_ngram;
  p.draft_max = options_.draft_max;
  p.draft_model = slot.draft();
  p.draft_p_min = options_.draft_p_min;
  return p;
}

void Server::conclude(Generation& g, const peak_generate_result& result, size_t prompt_tokens, size_t evaluated,
                      Value extension) {
  g.finish();
  if (speculative_) {
    extension.set("drafted_tokens", result.n_drafted_tokens).set("accepted_tokens", result.n_accepted_tokens);
  }
  prompt_tokens_.fetch_add(prompt_tokens);
  prompt_evaluated_.fetch_add(evaluated);
  completion_tokens_.fetch_add(result.n_generated_tokens);
  drafted_tokens_.fetch_add(result.n_drafted_tokens);
  accepted_tokens_.fetch_add(result.n_accepted_tokens);
  if (g.gone) {
    cancelled_.fetch_add(1);
    return;
  }
  g.answer(result, prompt_tokens, std::move(extension));
}

bool Server::acquire(const SlotPool::Score& score, HttpResponder& out, size_t* slot) {
  switch (pool_.acquire(score, [&out] { return out.client_gone(); }, slot)) {
    case SlotPool::Outcome::Acquired: return true;
    case SlotPool::Outcome::QueueFull:
      rejected_busy_.fetch_add(1);
      send_error(out, 503, "every slot is busy and the queue is full; try again shortly", "", {{"Retry-After", "1"}});
      return false;
    case SlotPool::Outcome::Gone: cancelled_.fetch_add(1); return false;
    case SlotPool::Outcome::Stopping: send_error(out, 503, "the server is shutting down"); return false;
  }
  return false;
}

std::string Server::model_kind() const {
  const char* kind = !info_.is_encoder ? "a chat model" : reranker() ? "a reranker" : "an embedding model";
  return std::string(kind) + " (" + info_.architecture + ")";
}

void Server::require_chat_model() const {
  if (!info_.is_encoder) return;
  throw RequestError("this server runs " + model_kind() + ", which generates no text: use POST " +
                         (reranker() ? "/v1/rerank" : "/v1/embeddings") + ", or start peak serve with a chat model",
                     "model");
}

void Server::require_embedding_model() const {
  if (info_.is_encoder && !reranker()) return;
  throw RequestError("this server runs " + model_kind() +
                         ", which makes no embeddings: " + (reranker() ? "use POST /v1/rerank, or " : "") +
                         "start peak serve with an embedding model (bert: BGE, all-MiniLM ...) for /v1/embeddings",
                     "model");
}

void Server::require_reranker() const {
  if (reranker()) return;
  throw RequestError("this server runs " + model_kind() +
                         ", which ranks no documents: start peak serve with a reranker (a bert cross-encoder with "
                         "rank pooling: ms-marco-MiniLM, ms-marco-TinyBERT ...) for /v1/rerank",
                     "model");
}

void Server::require_vision(const ChatRequest& r) const {
  if (vision()) return;
  for (size_t i = 0; i < r.messages.size(); ++i) {
    if (r.messages[i].images.empty()) continue;
    // The request's index: a system message comes first when there is one.
    const std::string field = "messages[" + std::to_string(i + (r.system ? 1 : 0)) + "].content";
    throw RequestError("'" + field +
                           "' holds an image, and this server has no vision projector: start peak serve with "
                           "--mmproj FILE beside the model",
                       field);
  }
}

void Server::encode_images(ChatRequest& r, size_t* encoded, size_t* cached) {
  for (ChatMessage& m : r.messages) {
    for (size_t i = 0; i < m.images.size(); ++i) {
      bool hit = false;
      m.encoded.push_back(images_->get(m.images[i], m.image_fields[i], &hit));
      ++*(hit ? cached : encoded);
      (hit ? images_cached_ : images_encoded_).fetch_add(1);
    }
  }
}

std::vector<int32_t> Server::tokens_of(const std::string& text, bool add_special, const std::string& field) const {
  size_t n = 0;
  std::vector<int32_t> tokens;
  peak_status status = peak_tokenize(model_, text.data(), text.size(), add_special ? 1 : 0, 0, nullptr, 0, &n);
  if (status == PEAK_ERR_BUFFER_TOO_SMALL) {
    tokens.resize(n);
    status = peak_tokenize(model_, text.data(), text.size(), add_special ? 1 : 0, 0, tokens.data(), n, &n);
  }
  if (status != PEAK_OK) throw RequestError("'" + field + "': " + peak_last_error(), field);
  tokens.resize(n);
  return tokens;
}

void Server::chat(const HttpRequest& request, HttpResponder& out) {
  require_chat_model();
  Value body;
  if (!parse_body(request, out, &body)) return;
  ChatRequest r = parse_chat_request(body);
  require_vision(r);
  if (!r.conversation.empty() && !r.tools.json.empty()) {
    throw RequestError("'tools' and 'conversation' do not go together: a saved conversation keeps no tools", "tools");
  }
  // Before a slot: chat_reuse compares the pictures too, and no slot waits
  // while another request's pictures are encoded.
  size_t images_encoded = 0, images_cached = 0;
  if (vision()) encode_images(r, &images_encoded, &images_cached);
  // The message to answer: a user's, or else the tool results that end the
  // history (peak_session_continue answers them).
  std::optional<ChatMessage> user;
  if (r.messages.back().role == PEAK_ROLE_USER) {
    user = std::move(r.messages.back());
    r.messages.pop_back();
  }
  const std::string& conversation = r.conversation;

  // Scores: a slot holding the conversation wins (and only it may run it
  // while it holds it); else the longest held prefix of the history, a slot
  // holding some conversation last (it would be saved away first).
  const SlotPool::Score score = [&](size_t s) -> long long {
    switch (conversations_.claim(s, conversation)) {
      case ConversationStore::Claim::HoldsIt: return 1LL << 40;
      case ConversationStore::Claim::HeldElsewhere: return -1;  // held by a busy slot: wait for it
      case ConversationStore::Claim::HoldsAnother: return 0;
      case ConversationStore::Claim::HoldsNothing: break;
    }
    return conversation.empty() ? 1 + std::max(0LL, slots_[s]->chat_reuse(r.system, r.tools.json, r.messages)) : 1;
  };
  size_t s = 0;
  if (!acquire(score, out, &s)) return;
  Lease lease(pool_, s);
  ChatSlot& slot = *slots_[s];

  size_t evaluated = 0;
  if (!conversation.empty()) {
    if (slot.conversation() != conversation) {
      conversations_.evict(s, slot);
      conversations_.load(s, slot, conversation, r.system);
    }
    evaluated += slot.append(r.messages);
  } else {
    conversations_.evict(s, slot);
    try {
      evaluated += slot.prepare_chat(r.system, r.tools.json, r.messages);
    } catch (const PeakError& e) {
      throw_tools_error(e);
    }
  }

  const size_t history_tokens = slot.cached_tokens();
  peak_sampler_params sp = r.sampler(options_.sampler);
  if (!r.seed) sp.seed = next_seed();
  check(peak_session_set_sampler(slot.session(), &sp));
  if (!r.tools.json.empty()) {
    check(peak_session_set_tool_choice(slot.session(), r.tools.choice,
                                       r.tools.function.empty() ? nullptr : r.tools.function.c_str(),
                                       r.tools.parallel ? 1 : 0));
  }

  Generation g(out, r, options_.request_timeout_ms,
               {Endpoint::Chat, new_id("chatcmpl"), unix_time(), options_.model_id});
  if (!g.open()) return;

  // max_tokens beyond the session's headroom (the room kept for an answer) is clamped to it.
  const peak_generate_params gp = generate_params(
      g, std::min<size_t>(r.max_tokens ? static_cast<size_t>(*r.max_tokens) : options_.default_max_tokens, headroom_),
      slot);
  peak_generate_result result{};
  result.struct_size = sizeof result;
  if (user) slot.attach_images(*user);
  check(peak_session_set_tool_call_callback(slot.session(), Generation::on_tool_call, &g));
  const peak_status status =
      user ? peak_session_chat(slot.session(), user->content.data(), user->content.size(), &gp, &result)
           : peak_session_continue(slot.session(), &gp, &result);
  peak_session_set_tool_call_callback(slot.session(), nullptr, nullptr);
  if (status != PEAK_OK) {
    const std::string message = peak_last_error();
    slot.clear_images();  // a failed turn leaves them attached
    return send_failure(out, r.stream, status, message);
  }
  slot.note_answer(user ? &*user : nullptr);
  g.tool_calls = slot.answer_calls();
  evaluated += result.n_prompt_tokens;
  // What the model read before answering: the history held, then the new message.
  const size_t prompt_tokens = history_tokens + result.n_prompt_tokens;
  Value extension = Value::object()
                        .set("slot", s)
                        .set("prompt_tokens_evaluated", evaluated)
                        .set("summarized_messages", slot.summarized_messages())
                        .set("summary_tokens", slot.summary_tokens());
  if (!conversation.empty()) extension.set("conversation", conversation);
  if (vision()) extension.set("images_encoded", images_encoded).set("images_cached", images_cached);
  conclude(g, result, prompt_tokens, evaluated, std::move(extension));
}

void Server::completion(const HttpRequest& request, HttpResponder& out) {
  require_chat_model();
  Value body;
  if (!parse_body(request, out, &body)) return;
  const CompletionRequest r = parse_completion_request(body);
  std::vector<int32_t> tokens;
  size_t n = 0;
  peak_tokenize(model_, r.prompt.data(), r.prompt.size(), 1, 1, nullptr, 0, &n);
  tokens.resize(n);
  check(peak_tokenize(model_, r.prompt.data(), r.prompt.size(), 1, 1, tokens.data(), tokens.size(), &n));
  if (tokens.empty()) throw RequestError("'prompt' is empty and the model adds no BOS token to start from", "prompt");
  const size_t n_ctx = slots_[0]->n_ctx();
  if (tokens.size() >= n_ctx) {
    throw RequestError("the prompt is " + std::to_string(tokens.size()) + " tokens; the context holds " +
                           std::to_string(n_ctx) + " (with room for at least one generated token)",
                       "prompt");
  }

  const SlotPool::Score score = [&](size_t s) -> long long {
    return static_cast<long long>(slots_[s]->completion_reuse(tokens));
  };
  size_t s = 0;
  if (!acquire(score, out, &s)) return;
  Lease lease(pool_, s);
  ChatSlot& slot = *slots_[s];
  const size_t evaluated = slot.prepare_completion(tokens);

  peak_sampler_params sp = r.sampler(options_.sampler);
  if (!r.seed) sp.seed = next_seed();
  peak_sampler* sampler = nullptr;
  check(peak_sampler_create(model_, &sp, &sampler));
  std::unique_ptr<peak_sampler, void (*)(peak_sampler*)> sampler_owner(sampler, peak_sampler_free);
  // The penalties look back over the prompt too, as llama.cpp's do.
  for (const int32_t t : tokens) check(peak_sampler_accept_prompt(sampler, t));

  Generation g(out, r, options_.request_timeout_ms,
               {Endpoint::Completion, new_id("cmpl"), unix_time(), options_.model_id});
  if (!g.open()) {
    slot.trim_to_prompt();
    return;
  }
  // max_tokens beyond the room the context has left is clamped to it.
  peak_generate_params gp =
      generate_params(g,
                      std::min<size_t>(r.max_tokens ? static_cast<size_t>(*r.max_tokens) : options_.default_max_tokens,
                                       n_ctx - tokens.size()),
                      slot);
  gp.add_special = 0;
  peak_generate_result result{};
  result.struct_size = sizeof result;
  const peak_status status = peak_generate(slot.context(), sampler, "", 0, &gp, &result);
  const std::string message = status == PEAK_OK ? "" : peak_last_error();
  slot.trim_to_prompt();
  if (status != PEAK_OK) return send_failure(out, r.stream, status, message);
  conclude(g, result, tokens.size(), evaluated,
           Value::object().set("slot", s).set("prompt_tokens_evaluated", evaluated));
}

void Server::tokenize(const HttpRequest& request, HttpResponder& out) {
  Value body;
  if (!parse_body(request, out, &body)) return;
  const TokenizeRequest r = parse_tokenize_request(body);
  size_t n = 0;
  peak_tokenize(model_, r.content.data(), r.content.size(), r.add_special, 1, nullptr, 0, &n);
  std::vector<int32_t> tokens(n);
  check(peak_tokenize(model_, r.content.data(), r.content.size(), r.add_special, 1, tokens.data(), n, &n));
  Value list = Value::array();
  for (const int32_t t : tokens) {
    if (!r.with_pieces) {
      list.push(t);
      continue;
    }
    size_t length = 0;
    peak_token_to_piece(model_, t, 1, nullptr, 0, &length);
    std::string piece(length + 1, '\0');
    check(peak_token_to_piece(model_, t, 1, piece.data(), piece.size(), &length));
    piece.resize(length);
    // llama.cpp's shape: the piece as text when it is valid UTF-8, else its bytes.
    Value p;
    if (peak::json::valid_utf8(piece)) {
      p = Value(piece);
    } else {
      p = Value::array();
      for (const char c : piece) p.push(static_cast<int>(static_cast<unsigned char>(c)));
    }
    list.push(Value::object().set("id", t).set("piece", p));
  }
  send_json(out, 200, Value::object().set("tokens", list));
}

void Server::detokenize(const HttpRequest& request, HttpResponder& out) {
  Value body;
  if (!parse_body(request, out, &body)) return;
  const std::vector<int32_t> tokens = parse_detokenize_request(body, info_.n_vocab);
  size_t length = 0;
  peak_detokenize(model_, tokens.data(), tokens.size(), 0, 0, nullptr, 0, &length);
  std::string text(length + 1, '\0');
  check(peak_detokenize(model_, tokens.data(), tokens.size(), 0, 0, text.data(), text.size(), &length));
  text.resize(length);
  send_json(out, 200, Value::object().set("content", text));
}

void Server::embeddings(const HttpRequest& request, HttpResponder& out) {
  require_embedding_model();
  Value body;
  if (!parse_body(request, out, &body)) return;
  EmbeddingRequest r = parse_embedding_request(body, info_.n_vocab, info_.n_embd);
  const auto field_of = [&r](size_t i) { return r.single ? std::string("input") : "input[" + std::to_string(i) + "]"; };
  // Texts are tokenized here as peak_embed would ([CLS] ... [SEP]), to
  // count them for `usage` and to name a text too long by its field.
  std::vector<std::vector<int32_t>>& inputs = r.token_lists;
  for (size_t i = 0; i < r.texts.size(); ++i) inputs.push_back(tokens_of(r.texts[i], true, field_of(i)));
  size_t prompt_tokens = 0;
  std::vector<const int32_t*> lists;
  std::vector<size_t> counts;
  for (size_t i = 0; i < inputs.size(); ++i) {
    // The embedders' n_batch is the model's context (peak_embedder_params' default).
    if (inputs[i].size() > info_.n_ctx_train) {
      throw RequestError("'" + field_of(i) + "' is " + std::to_string(inputs[i].size()) +
                             " tokens; the embedding model takes at most " + std::to_string(info_.n_ctx_train),
                         field_of(i));
    }
    prompt_tokens += inputs[i].size();
    lists.push_back(inputs[i].data());
    counts.push_back(inputs[i].size());
  }

  size_t s = 0;
  if (!acquire([](size_t) { return 0LL; }, out, &s)) return;
  Lease lease(pool_, s);
  peak_embed_params params = peak_embed_default_params();
  params.dimensions = r.dimensions;
  const size_t dimensions = r.dimensions > 0 ? r.dimensions : info_.n_embd;
  std::vector<float> floats(inputs.size() * dimensions);
  size_t n_floats = 0;
  check(peak_embed_tokens(embedders_[s].get(), lists.data(), counts.data(), lists.size(), &params, floats.data(),
                          floats.size(), &n_floats, nullptr));
  prompt_tokens_.fetch_add(prompt_tokens);
  out.respond(200, "application/json", embeddings_body(options_.model_id, floats, dimensions, r.base64, prompt_tokens));
}

void Server::rerank(const HttpRequest& request, HttpResponder& out) {
  require_reranker();
  Value body;
  if (!parse_body(request, out, &body)) return;
  const RerankRequest r = parse_rerank_request(body);
  // Each text must give tokens; then each pair is counted as peak_rerank
  // reads it (the joined pair, or a prompted reranker's prompt): for `usage`
  // (llama.cpp counts the same tokens) and to name a document too long by its
  // field. The embedders' n_batch is the model's context (peak_embedder_params'
  // default).
  if (tokens_of(r.query, false, "query").empty()) throw RequestError("'query' gives no tokens", "query");
  std::vector<const char*> texts;
  std::vector<size_t> lengths;
  for (size_t i = 0; i < r.documents.size(); ++i) {
    const std::string field = "documents[" + std::to_string(i) + "]";
    if (tokens_of(r.documents[i], false, field).empty()) throw RequestError("'" + field + "' gives no tokens", field);
    texts.push_back(r.documents[i].data());
    lengths.push_back(r.documents[i].size());
  }
  size_t s = 0;
  if (!acquire([](size_t) { return 0LL; }, out, &s)) return;
  Lease lease(pool_, s);
  std::vector<size_t> pair_tokens(texts.size());
  check(peak_rerank_pair_tokens(embedders_[s].get(), r.query.data(), r.query.size(), texts.data(), lengths.data(),
                                texts.size(), pair_tokens.data()));
  size_t prompt_tokens = 0;
  for (size_t i = 0; i < pair_tokens.size(); ++i) {
    if (pair_tokens[i] > info_.n_ctx_train) {
      const std::string field = "documents[" + std::to_string(i) + "]";
      throw RequestError("'" + field + "' with the query is " + std::to_string(pair_tokens[i]) +
                             " tokens as the model reads them; the reranker takes at most " +
                             std::to_string(info_.n_ctx_train),
                         field);
    }
    prompt_tokens += pair_tokens[i];
  }
  // The scores as the model gives them (a cross-encoder's logit, a prompted
  // reranker's probability of "yes"), as llama.cpp's /v1/rerank does.
  const peak_rerank_params params = peak_rerank_default_params();
  std::vector<float> scores(texts.size());
  check(peak_rerank(embedders_[s].get(), r.query.data(), r.query.size(), texts.data(), lengths.data(), texts.size(),
                    &params, scores.data()));
  prompt_tokens_.fetch_add(prompt_tokens);
  out.respond(200, "application/json", rerank_body(options_.model_id, r, scores, prompt_tokens));
}

}  // namespace peak_server
