// What the HTTP transport of `peak serve` (http_server.cpp) hands to the
// request handlers (the routes) and what they answer with: a whole parsed
// request in; a whole response, or a streamed one (server-sent events), out.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace peak_server {

struct HttpHeader {
  std::string name;   // lower-cased in a request; as written in a response
  std::string value;  // without the surrounding spaces
};

struct HttpRequest {
  std::string method;               // "GET", "POST", ... (case-sensitive, as sent)
  std::string path;                 // the target up to '?', e.g. "/v1/chat/completions"
  std::string query;                // what follows '?', without it ("" when none)
  std::vector<HttpHeader> headers;  // in the order received
  std::string body;                 // the whole body, de-chunked
  std::string peer;                 // "127.0.0.1:53412", for logs

  // The first header named `lower_name` (lower case), or nullptr.
  const std::string* header(std::string_view lower_name) const {
    for (const HttpHeader& h : headers)
      if (h.name == lower_name) return &h.value;
    return nullptr;
  }
};

// Where a handler writes its answer, on the thread that called it: either
// respond() once, or start_stream() once and then write() as often as it
// likes; the stream ends when the handler returns. A handler that returns
// without either gets a 500.
class HttpResponder {
 public:
  virtual ~HttpResponder() = default;
  // A whole response; Content-Length and the connection headers are added.
  // false when the client is gone (the handler just returns).
  virtual bool respond(int status, std::string_view content_type, std::string_view body,
                       const std::vector<HttpHeader>& extra_headers = {}) = 0;
  // Starts a streamed response (the transport frames it); false when the client is gone.
  virtual bool start_stream(int status, std::string_view content_type,
                            const std::vector<HttpHeader>& extra_headers = {}) = 0;
  // Sends `bytes` of a streamed response now. false once the client has gone
  // or stopped reading for longer than the write timeout: stop generating.
  virtual bool write(std::string_view bytes) = 0;
  // Whether the client has closed or reset the connection, without blocking:
  // a handler generating between writes polls it once per token.
  virtual bool client_gone() = 0;
};

// Called once per request on a connection's thread; several run at once, one
// per connection. It must not throw.
using HttpHandler = std::function<void(const HttpRequest&, HttpResponder&)>;

}  // namespace peak_server
