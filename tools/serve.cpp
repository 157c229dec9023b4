// peak serve: an OpenAI-compatible HTTP server on one model (and, with
// --mmproj, its vision projector), with the chat page at /. The routes are
// tools/server/routes.h; the HTTP/1.1 transport tools/server/http_server.h.
// Loopback only unless --allow-remote.
#include <csignal>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include "cli_args.h"
#include "commands.h"
#include "http_server.h"
#include "image_prompt.h"
#include "model_session.h"
#include "routes.h"
#include "text_format.h"

namespace {

peak_server::HttpServer* g_server = nullptr;

// SIGINT / SIGTERM: stop accepting, let the running requests end (streams at
// their next token), exit 0. request_stop() is async-signal-safe.
void on_stop_signal(int) {
  if (g_server) g_server->request_stop();
}

struct ServeOptions : ChatSessionOptions {
  std::string host = "127.0.0.1";
  int port = 8080;
  bool allow_remote = false;
  std::string mmproj;  // --mmproj: the model's vision projector
  peak_server::ServerOptions server;
  peak_server::HttpLimits limits;
};

void print_help() {
  std::printf(
      "usage: peak serve -m MODEL [--host 127.0.0.1] [--port 8080] [--parallel N] [--api-key KEY] [options]\n"
      "  An OpenAI-compatible server: POST /v1/chat/completions, /v1/completions, /tokenize,\n"
      "  /detokenize; GET /v1/models, /health, /metrics; a chat page at /. With an embedding\n"
      "  model (bert: BGE, all-MiniLM ...): POST /v1/embeddings instead of chat and completions;\n"
      "  with a reranker (ms-marco-MiniLM, Qwen3-Reranker ...): POST /v1/rerank (documents by relevance\n"
      "  to a query).\n"
      "  --mmproj FILE             the chat model's vision projector (llama.cpp's mmproj-*.gguf): chat\n"
      "                            messages may then hold pictures (image_url parts: PNG or JPEG data\n"
      "                            URLs), each encoded once and kept (the latest 64 MiB)\n"
      "  --host ADDR               address to listen on (default 127.0.0.1); another than loopback\n"
      "                            needs --allow-remote\n"
      "  --allow-remote            let --host be a non-loopback address (use --api-key then)\n"
      "  --port N                  port (default 8080; 0: any free port, printed at start)\n"
      "  --parallel N              slots: requests answered at once, each with its own context\n"
      "                            (an embedding model or reranker: its own embedder) on the shared weights\n"
      "                            (default 1)\n"
      "  --queue N                 requests waiting for a slot; more are answered 503 (default 16)\n"
      "  -cb, --cont-batching      with several slots, their decoding steps share forward passes, each\n"
      "                            weight read once per step for all streams (the default)\n"
      "  -nocb, --no-cont-batching each slot evaluates alone\n"
      "  --prefill-chunk N         with shared passes: prompt tokens of one request per pass, beside\n"
      "                            the running streams' steps (default 128)\n"
      "  --api-key KEY             require 'Authorization: Bearer KEY' (all but / and /health)\n"
      "  --timeout S               a generation longer than S seconds ends, finish_reason \"length\"\n"
      "                            (default 600; 0: no limit)\n"
      "  --conversations N         server-side conversations kept (the 'conversation' field; default 64)\n"
      "  --chat-template NAME      chatml, llama2, llama3, mistral-v7, gemma, phi3, zephyr, ...\n"
      "  --think on|off            thinking models: reason before answering (default off); the\n"
      "                            reasoning is sent as reasoning_content\n"
      "  -c, --ctx-size N          per slot: sets --recent-max to N less the summary and headroom\n"
      "  -n, --n-predict N         max_tokens of a request that gives none (default 256); any is\n"
      "                            clamped to --headroom\n"
      "  --lookup N, --draft-model FILE, --draft-max N, --draft-p-min P\n"
      "                            speculative decoding in every generation, by prompt lookup or by a\n"
      "                            draft model (one context on it per slot; see peak run --help); each\n"
      "                            response's peak member gives drafted_tokens and accepted_tokens\n"
      "limits:\n"
      "  --max-body N              bytes of a request body (default 8388608; more: 413)\n"
      "  --max-header N            bytes of a request's head (default 16384; more: 431)\n"
      "  --max-connections N       connections at once (default 64; more: 503)\n"
      "  --header-timeout MS       the head must arrive within MS (default 10000; slow clients: 408)\n"
      "  --body-timeout MS         the body likewise (default 30000)\n"
      "  --idle-timeout MS         a keep-alive connection idle this long is closed (default 30000)\n"
      "%s%s%s",
      session_options_help(),
      model_options_help("q8_0; f16 when the model's\n"
                         "                            head size is not a multiple of 32")
          .c_str(),
      sampling_options_help("the seed of a request without \"seed\" (default: a random one for each)").c_str());
}

bool is_loopback(const std::string& host) {
  return host == "localhost" || host == "::1" || host == "[::1]" || host.rfind("127.", 0) == 0;
}

ServeOptions parse(int argc, char** argv, bool* help) {
  ServeOptions o;
  ArgCursor args(argc, argv);
  while (!args.done()) {
    const char* a = args.peek();
    if (parse_chat_session_option(args, o)) continue;
    args.next();
    if (!std::strcmp(a, "-h") || !std::strcmp(a, "--help")) {
      *help = true;
      return o;
    } else if (!std::strcmp(a, "--host")) {
      o.host = args.value(a);
    } else if (!std::strcmp(a, "--mmproj")) {
      o.mmproj = args.value(a);
    } else if (!std::strcmp(a, "--allow-remote")) {
      o.allow_remote = true;
    } else if (!std::strcmp(a, "--port")) {
      o.port = static_cast<int>(args.integer(a, 0, 65535));
    } else if (!std::strcmp(a, "--parallel") || !std::strcmp(a, "-np")) {
      o.server.parallel = static_cast<size_t>(args.integer(a, 1, 256));
    } else if (!std::strcmp(a, "--cont-batching") || !std::strcmp(a, "-cb")) {
      o.server.shared_passes = true;
    } else if (!std::strcmp(a, "--no-cont-batching") || !std::strcmp(a, "-nocb")) {
      o.server.shared_passes = false;
    } else if (!std::strcmp(a, "--prefill-chunk")) {
      o.server.prefill_chunk = static_cast<size_t>(args.integer(a, 1, 1 << 16));
    } else if (!std::strcmp(a, "--queue")) {
      o.server.max_queue = static_cast<size_t>(args.integer(a, 0, 1 << 20));
    } else if (!std::strcmp(a, "--api-key")) {
      o.server.api_key = args.value(a);
      if (o.server.api_key.empty()) throw UsageError("--api-key needs a non-empty key");
    } else if (!std::strcmp(a, "--timeout")) {
      o.server.request_timeout_ms = static_cast<int>(args.integer(a, 0, 86400) * 1000);
    } else if (!std::strcmp(a, "--conversations")) {
      o.server.max_conversations = static_cast<size_t>(args.integer(a, 1, 1 << 20));
    } else if (!std::strcmp(a, "--max-body")) {
      o.limits.max_body_bytes = static_cast<size_t>(args.integer(a, 1024, 1LL << 32));
    } else if (!std::strcmp(a, "--max-header")) {
      o.limits.max_header_bytes = static_cast<size_t>(args.integer(a, 1024, 1 << 24));
    } else if (!std::strcmp(a, "--max-connections")) {
      o.limits.max_connections = static_cast<size_t>(args.integer(a, 1, 1 << 16));
    } else if (!std::strcmp(a, "--header-timeout")) {
      o.limits.header_timeout_ms = static_cast<int>(args.integer(a, 100, 3600000));
    } else if (!std::strcmp(a, "--body-timeout")) {
      o.limits.body_timeout_ms = static_cast<int>(args.integer(a, 100, 3600000));
    } else if (!std::strcmp(a, "--idle-timeout")) {
      o.limits.idle_timeout_ms = static_cast<int>(args.integer(a, 100, 3600000));
    } else {
      throw UsageError(std::string("unknown option '") + a + "' (see peak serve --help)");
    }
  }
  if (!is_loopback(o.host) && !o.allow_remote) {
    throw UsageError("--host " + o.host + " is not a loopback address: add --allow-remote to listen on it");
  }
  return o;
}

std::string file_name(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

int run_serve(int argc, char** argv) {
  bool help = false;
  ServeOptions o = parse(argc, argv, &help);
  if (help) {
    print_help();
    return 0;
  }
  if (o.gen.model_path.empty()) throw UsageError("no model given (-m MODEL)");
  if (!is_loopback(o.host) && o.server.api_key.empty()) {
    std::fprintf(stderr, "peak serve: warning: listening on %s without --api-key: anyone who can reach it may use it\n",
                 o.host.c_str());
  }
  LoadedModel m = load_model(o.gen.model_path, o.gen, /*with_context=*/false);
  o.server.model_id = file_name(o.gen.model_path);
  // Freed after the server (declared before it), whose sessions and image encoder use it.
  std::unique_ptr<peak_projector, ProjectorDeleter> projector;
  if (!o.mmproj.empty()) {
    if (m.info.is_encoder) {
      const bool reranker = m.info.pooling == PEAK_POOLING_RANK;
      throw CommandError("--mmproj " + o.mmproj + ": " + o.server.model_id + " is " +
                         (reranker ? "a reranker" : "an embedding model") + " (" + m.info.architecture +
                         "), which reads no pictures: a vision projector goes beside a chat model");
    }
    projector = load_projector(o.mmproj, m.info);
  }

  peak_server::SlotSettings settings;
  settings.model = m.model.get();
  settings.session = chat_session_params(o);
  settings.session.projector = projector.get();
  settings.context = o.gen.context;
  settings.adapters = m.adapter_uses.empty() ? nullptr : &m.adapter_set;
  settings.draft_model = m.draft_file.get();
  m.draft.reset();  // each slot makes its own

  o.server.sampler = o.gen.sampler;
  o.server.random_seed = !o.gen.seed_given;
  o.server.default_max_tokens = o.gen.n_predict;
  o.server.lookup_ngram = o.gen.lookup_ngram;
  o.server.draft_max = o.gen.draft_max;
  o.server.draft_p_min = o.gen.draft_p_min;
  o.server.log_requests = true;
  peak_server::Server routes(settings, o.server);

  std::string error;
  std::unique_ptr<peak_server::HttpServer> http = peak_server::HttpServer::bind(o.host, o.port, o.limits, &error);
  if (!http) throw CommandError(error);
  g_server = http.get();
  for (const int sig : {SIGINT, SIGTERM}) {
    struct sigaction sa {};
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, nullptr);
  }
  const bool ipv6 = o.host.find(':') != std::string::npos && o.host[0] != '[';
  const std::string shown_host = ipv6 ? "[" + o.host + "]" : o.host;
  const bool batching = o.server.parallel > 1 && o.server.shared_passes && !routes.encoder();
  const std::string vision = projector ? ", pictures through " + shown(file_name(o.mmproj)) : "";
  std::fprintf(stderr, "peak serve: %s%s, %zu slot%s%s, listening on http://%s:%d\n",
               shown(o.server.model_id.c_str()).c_str(), vision.c_str(), o.server.parallel,
               o.server.parallel == 1 ? "" : "s", batching ? " (continuous batching)" : "", shown_host.c_str(),
               http->port());
  http->serve([&routes](const peak_server::HttpRequest& request, peak_server::HttpResponder& out) {
    routes.handle(request, out);
  });
  routes.stop();
  g_server = nullptr;
  std::fprintf(stderr, "peak serve: stopped\n");
  return 0;
}
