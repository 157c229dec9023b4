// The HTTP/1.1 transport of `peak serve`: a listening socket, one thread per
// connection (at most max_connections), keep-alive, limits and timeouts
// against slow or hostile clients, and a graceful stop.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "http_message.h"

namespace peak_server {

struct HttpLimits {
  size_t max_header_bytes = 16 * 1024;        // request line + headers; more: 431
  size_t max_body_bytes = 8 * 1024 * 1024;    // more: 413
  size_t max_connections = 64;                // more are answered 503 and closed
  int header_timeout_ms = 10000;              // the whole head must arrive within this (from its first byte): 408
  int body_timeout_ms = 30000;                // the whole body must arrive within this (after the head): 408
  int idle_timeout_ms = 30000;                // wait for a request's first byte (also the first request's)
  int write_timeout_ms = 30000;               // a client not reading for this long is dropped
};

class HttpServer {
 public:
  // Binds host:port (port 0: any free port; see port()). nullptr with a
  // readable reason in *error when the address is bad or taken.
  static std::unique_ptr<HttpServer> bind(const std::string& host, int port, const HttpLimits& limits,
                                          std::string* error);
  virtual ~HttpServer() = default;

  // The bound port.
  virtual int port() const = 0;
  // Accepts and serves connections, calling `handler` per request, until
  // request_stop(); then stops accepting, lets the running handlers finish
  // (their client_gone() turns true, so streams end at their next token),
  // closes every connection and returns.
  virtual void serve(const HttpHandler& handler) = 0;
  // Async-signal-safe: may be called from a SIGINT/SIGTERM handler or any thread.
  virtual void request_stop() = 0;
};

}  // namespace peak_server
