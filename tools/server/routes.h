// The request handlers of `peak serve`, OpenAI's dialect (as llama.cpp's
// server speaks it):
//   GET  /                     the chat page
//   GET  /health               {"status":"ok", slots, queue}            (no key needed)
//   GET  /metrics              request, token and picture totals, prompt reuse
//   GET  /v1/models            the model, in OpenAI's list shape, with "vision":
//                              whether chat messages may hold pictures
//   POST /v1/chat/completions  chat, streamed as server-sent events or whole
//   POST /v1/completions       a raw prompt continued
//   POST /v1/embeddings        vectors of texts or token ids (an embedding model)
//   POST /v1/rerank            documents by relevance to a query (a reranker), also
//                              /v1/reranking, as llama.cpp's server names it
//   POST /tokenize, /detokenize  llama.cpp's shapes
// (the /v1 routes also answer without the prefix). Errors are OpenAI's error
// object: 400 a bad body or field, 401 a missing or wrong API key, 404 an
// unknown route, 405 a known route with another method, 503 every slot busy
// and the queue full (Retry-After) or the server stopping, 500 only for bugs.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "chat_slot.h"
#include "conversation_store.h"
#include "http_message.h"
#include "image_cache.h"
#include "json/json.h"
#include "slot_pool.h"

namespace peak_server {

struct Generation;  // a generation's text on its way to the client (generation.h)

struct ServerOptions {
  std::string model_id;          // what /v1/models lists and responses name: the model file's name
  std::string api_key;           // "": no key needed
  size_t parallel = 1;           // slots
  size_t max_queue = 16;         // requests waiting for a slot; more: 503
  size_t default_max_tokens = 256;  // a request without max_tokens
  int request_timeout_ms = 600000;  // a generation running longer ends with finish_reason "length"; 0: no limit
  size_t max_conversations = 64;    // `conversation` sessions kept; more evict the least recently used
  std::string conversation_dir;     // where evicted conversations are saved; "": a private temporary directory
  peak_sampler_params sampler = peak_sampler_default_params();  // requests change it per field
  bool random_seed = true;          // a request without "seed" draws one; false: it uses sampler.seed
  bool log_requests = false;        // one line per request on stderr
  // Speculative decoding in every generation (peak_generate_params): by
  // prompt lookup, or by the draft model of SlotSettings::draft_model; the
  // slots' contexts and sessions hand out draft_max + 1 rows of logits.
  int lookup_ngram = 0;
  int draft_max = 4;
  float draft_p_min = 0.75f;
  // Continuous batching: with several slots, their steps run in shared
  // forward passes (peak_pass_group), a new prompt in chunks of
  // prefill_chunk tokens beside the running streams' steps.
  bool shared_passes = true;
  size_t prefill_chunk = 128;
};

// Totals since the start (GET /metrics).
struct ServerCounters {
  uint64_t requests = 0;
  uint64_t prompt_tokens = 0;            // the prompts' sizes, as `usage` reports them
  uint64_t prompt_tokens_evaluated = 0;  // what was actually prefilled (the rest was reused)
  uint64_t completion_tokens = 0;
  uint64_t drafted_tokens = 0;           // proposed by prompt lookup or the draft model
  uint64_t accepted_tokens = 0;          // of them, those sampled
  uint64_t rejected_busy = 0;            // 503s for a full queue
  uint64_t cancelled = 0;                // clients gone before the end
  uint64_t images_encoded = 0;           // chat pictures encoded (a vision projector)
  uint64_t images_cached = 0;            // chat pictures taken from the image cache instead
};

// The server runs a chat model (chat and completions, a ChatSlot per slot),
// an embedding model (embeddings) or a reranker (rerank: a bert encoder with
// rank pooling), the last two with a peak_embedder per slot; each answers the
// others' routes with a 400 saying which model it runs. All
// share the SlotPool: a peak_embedder is used by one thread at a time, so a
// request holds its slot's embedder while it embeds, and --parallel N
// embedders embed N requests at once.
//
// With a vision projector (SlotSettings::session.projector, a chat model),
// chat requests may hold pictures: each is encoded before the request takes a
// slot, by one image encoder shared by all requests, and kept in an
// ImageCache (image_cache.h), so that a history resent with its pictures
// encodes none of them again.
class Server {
 public:
  // Creates the slots and, with a projector, the image encoder (throws
  // PeakError when a session, an embedder or the encoder cannot be created).
  Server(const SlotSettings& settings, const ServerOptions& options);
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // The HttpHandler: any thread, several at once.
  void handle(const HttpRequest& request, HttpResponder& out);
  // Waiting requests get 503 from now on; running ones finish (the transport
  // makes client_gone() true to cut streams short).
  void stop();

  ServerCounters counters() const;
  size_t busy_slots() const { return pool_.busy(); }
  bool encoder() const { return info_.is_encoder; }
  size_t queued() const { return pool_.queued(); }

 private:
  class Lease;

  void route(const HttpRequest& request, HttpResponder& out);
  void chat(const HttpRequest& request, HttpResponder& out);
  void completion(const HttpRequest& request, HttpResponder& out);
  void tokenize(const HttpRequest& request, HttpResponder& out);
  void detokenize(const HttpRequest& request, HttpResponder& out);
  void embeddings(const HttpRequest& request, HttpResponder& out);
  void rerank(const HttpRequest& request, HttpResponder& out);
  // Throw the 400 of a request the model does not serve, naming the model and the routes it does serve.
  void require_chat_model() const;
  void require_embedding_model() const;
  void require_reranker() const;
  // Whether chat requests may hold pictures (image_url parts): with a vision
  // projector beside the model.
  bool vision() const { return images_ != nullptr; }
  // Throws the 400 of a chat request holding a picture the server cannot see.
  void require_vision(const ChatRequest& r) const;
  // Fills each message's `encoded` pictures from the image cache, counting
  // (here and in the server's totals) those encoded now and those taken from
  // the cache; a picture the decoder refuses is a RequestError naming its field.
  void encode_images(ChatRequest& r, size_t* encoded, size_t* cached);
  bool reranker() const { return info_.is_encoder && info_.pooling == PEAK_POOLING_RANK; }
  // "a chat model (llama)", "an embedding model (bert)" or "a reranker (bert)".
  std::string model_kind() const;
  // The tokens of a text (with the special tokens the model adds, or none), not
  // parsing special-token text, as peak_embed and peak_rerank read it; a text
  // the vocabulary cannot spell is a 400 naming `field`.
  std::vector<int32_t> tokens_of(const std::string& text, bool add_special, const std::string& field) const;
  void health(HttpResponder& out);
  void metrics(HttpResponder& out);
  // The shared passes of continuous batching (/metrics "passes"): their
  // count, tokens, mean sequences and count by sequences; null without.
  peak::json::Value passes_metrics() const;
  void models(HttpResponder& out);

  // After a generation that succeeded: sends what the stop strings held back,
  // counts the tokens, then ends the answer (the stream's last events, or the
  // whole response with `extension` as its `peak` member), unless the client is gone.
  // The generation parameters of a request: max_tokens, the server's prompt lookup.
  peak_generate_params generate_params(Generation& g, size_t max_tokens, ChatSlot& slot) const;
  void conclude(Generation& g, const peak_generate_result& result, size_t prompt_tokens, size_t evaluated,
                peak::json::Value extension);
  // Waits for a slot; answers 503 itself when none can be had. false: no slot.
  bool acquire(const SlotPool::Score& score, HttpResponder& out, size_t* slot);
  // The seed of a request that gives none.
  uint64_t next_seed();
  // A response's id, or a saved conversation's file name: never the same twice
  // in a run, whatever the seeds.
  std::string new_id(const char* prefix);

  const peak_model* model_;
  peak_model_info info_;  // is_encoder: an embedding model or, with pooling PEAK_POOLING_RANK, a reranker
  ServerOptions options_;
  size_t headroom_;
  // The slots' shared passes (null: each slot alone); freed after the slots.
  std::unique_ptr<peak_pass_group, void (*)(peak_pass_group*)> pass_group_{nullptr, peak_pass_group_free};
  // The slots' draft models step in passes of their own (continuous batching with a draft model).
  std::unique_ptr<peak_pass_group, void (*)(peak_pass_group*)> draft_pass_group_{nullptr, peak_pass_group_free};
  bool speculative_ = false;  // prompt lookup or a draft model: responses report drafted and accepted tokens
  std::vector<std::unique_ptr<ChatSlot>> slots_;                                     // a chat model's
  std::vector<std::unique_ptr<peak_embedder, void (*)(peak_embedder*)>> embedders_;  // an encoder's
  SlotPool pool_;
  std::unique_ptr<ImageCache> images_;  // with a vision projector: its encoder and the pictures encoded

  ConversationStore conversations_;  // its lock is taken inside the pool's (Score): conversation_store.h

  std::atomic<uint64_t> requests_{0}, prompt_tokens_{0}, prompt_evaluated_{0}, completion_tokens_{0};
  std::atomic<uint64_t> drafted_tokens_{0}, accepted_tokens_{0};
  std::atomic<uint64_t> rejected_busy_{0}, cancelled_{0};
  std::atomic<uint64_t> images_encoded_{0}, images_cached_{0};
  std::atomic<uint64_t> seed_counter_, id_counter_;  // each started at random: see distinct_value()
};

}  // namespace peak_server
