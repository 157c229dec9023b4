// The HTTP/1.1 transport of `peak serve` (tools/server/http_server.h) over
// real loopback sockets, read by a small client written here that decodes
// responses on its own (status line, headers, Content-Length and chunked).
#include "http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <future>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace peak_server {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// Upper bounds for what should take milliseconds: generous, so that a loaded
// machine or a sanitizer build does not fail them.
constexpr int kPatienceMs = 10000;

struct Response {
  int status = 0;
  std::vector<HttpHeader> headers;  // names lower-cased
  std::string body;
  std::vector<std::string> chunks;  // of a chunked body, in order
  bool chunked = false;

  // The value of the first header called `name` ("" when there is none; see has()).
  std::string header(const std::string& name) const {
    for (const HttpHeader& h : headers)
      if (h.name == name) return h.value;
    return "";
  }
  bool has(const std::string& name) const {
    for (const HttpHeader& h : headers)
      if (h.name == name) return true;
    return false;
  }
};

class Client {
 public:
  explicit Client(int port, const char* host = "127.0.0.1", int family = AF_INET) {
    fd_ = socket(family, SOCK_STREAM, 0);
    timeval tv{kPatienceMs / 1000, 0};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    sockaddr_storage address{};
    socklen_t length = 0;
    if (family == AF_INET) {
      auto* a = reinterpret_cast<sockaddr_in*>(&address);
      a->sin_family = AF_INET;
      a->sin_port = htons(static_cast<uint16_t>(port));
      inet_pton(AF_INET, host, &a->sin_addr);
      length = sizeof *a;
    } else {
      auto* a = reinterpret_cast<sockaddr_in6*>(&address);
      a->sin6_family = AF_INET6;
      a->sin6_port = htons(static_cast<uint16_t>(port));
      inet_pton(AF_INET6, host, &a->sin6_addr);
      length = sizeof *a;
    }
    connected_ = connect(fd_, reinterpret_cast<sockaddr*>(&address), length) == 0;
  }
  ~Client() { close(); }
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  bool connected() const { return connected_; }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

  bool send(const std::string& bytes) {
    size_t at = 0;
    while (at < bytes.size()) {
      const ssize_t n = ::send(fd_, bytes.data() + at, bytes.size() - at, MSG_NOSIGNAL);
      if (n <= 0) return false;
      at += static_cast<size_t>(n);
    }
    return true;
  }

  // Reads one response (to a HEAD request: no body); status 0 when the
  // connection ended before one was whole.
  Response read_response(bool to_head = false) {
    Response r;
    std::string line;
    if (!read_line(&line) || line.compare(0, 9, "HTTP/1.1 ") != 0 || line.size() < 12) return r;
    const int status = std::atoi(line.substr(9, 3).c_str());
    while (read_line(&line) && !line.empty()) {
      const size_t colon = line.find(':');
      HttpHeader h;
      for (char c : line.substr(0, colon)) h.name.push_back(static_cast<char>(std::tolower(c)));
      h.value = line.substr(line.find_first_not_of(' ', colon + 1));
      r.headers.push_back(h);
    }
    if (!line.empty()) return r;
    if (to_head || status == 100 || status == 204 || status == 304) {
      r.status = status;
      return r;
    }
    if (r.has("transfer-encoding")) {
      if (r.header("transfer-encoding") != "chunked") return r;
      r.chunked = true;
      for (;;) {
        if (!read_line(&line)) return r;
        const size_t size = std::stoul(line, nullptr, 16);
        if (size == 0) break;
        std::string chunk;
        if (!read_bytes(size + 2, &chunk) || chunk.substr(size) != "\r\n") return r;
        chunk.resize(size);
        r.chunks.push_back(chunk);
        r.body += chunk;
      }
      if (!read_line(&line) || !line.empty()) return r;
    } else if (r.has("content-length")) {
      if (!read_bytes(std::stoul(r.header("content-length")), &r.body)) return r;
    } else {
      while (read_more()) {
      }
      r.body = buffered_;
      buffered_.clear();
    }
    r.status = status;
    return r;
  }

  // Reads until `text` has arrived.
  bool read_until(const std::string& text) {
    while (buffered_.find(text) == std::string::npos)
      if (!read_more()) return false;
    return true;
  }

  // Whether a byte (or the end) is there to read now.
  bool readable() {
    pollfd p{fd_, POLLIN, 0};
    return !buffered_.empty() || poll(&p, 1, 0) > 0;
  }

  // Whether the server closes the connection within kPatienceMs, sending nothing more.
  bool closed_by_server() {
    if (!buffered_.empty()) return false;
    char c;
    const ssize_t n = recv(fd_, &c, 1, 0);
    return n == 0 || (n < 0 && errno == ECONNRESET);
  }

 private:
  bool read_more() {
    char buffer[4096];
    const ssize_t n = recv(fd_, buffer, sizeof buffer, 0);
    if (n <= 0) return false;
    buffered_.append(buffer, static_cast<size_t>(n));
    return true;
  }
  bool read_line(std::string* line) {
    size_t end;
    while ((end = buffered_.find("\r\n")) == std::string::npos)
      if (!read_more()) return false;
    *line = buffered_.substr(0, end);
    buffered_.erase(0, end + 2);
    return true;
  }
  bool read_bytes(size_t n, std::string* out) {
    while (buffered_.size() < n)
      if (!read_more()) return false;
    out->append(buffered_, 0, n);
    buffered_.erase(0, n);
    return true;
  }

  int fd_ = -1;
  bool connected_ = false;
  std::string buffered_;
};

std::string post(const std::string& path, const std::string& body, const std::string& extra = "") {
  return "POST " + path + " HTTP/1.1\r\nHost: localhost\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\n" + extra + "\r\n" + body;
}

// A flag one thread raises and another waits for, with a bound.
class Signal {
 public:
  void raise() {
    std::lock_guard<std::mutex> lock(mutex_);
    raised_ = true;
    cv_.notify_all();
  }
  bool wait(int ms = kPatienceMs) {
    std::unique_lock<std::mutex> lock(mutex_);
    return cv_.wait_for(lock, milliseconds(ms), [&] { return raised_; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool raised_ = false;
};

class HttpServerTest : public ::testing::Test {
 protected:
  void start(const HttpHandler& handler, HttpLimits limits = HttpLimits()) {
    std::string error;
    server_ = HttpServer::bind("127.0.0.1", 0, limits, &error);
    ASSERT_NE(server_, nullptr) << error;
    ASSERT_GT(server_->port(), 0);
    handler_ = handler;
    serving_ = std::async(std::launch::async, [this] { server_->serve(handler_); });
  }
  void TearDown() override {
    if (!server_) return;
    server_->request_stop();
    ASSERT_EQ(serving_.wait_for(milliseconds(kPatienceMs)), std::future_status::ready);
  }
  int port() const { return server_->port(); }

  std::unique_ptr<HttpServer> server_;
  HttpHandler handler_;
  std::future<void> serving_;
};

void echo(const HttpRequest& request, HttpResponder& out) {
  out.respond(200, "text/plain", request.method + " " + request.path + "?" + request.query + " " + request.body,
              {{"X-Peer", request.peer}});
}

TEST_F(HttpServerTest, KeepAliveServesTwoRequestsOnOneConnection) {
  start(echo);
  Client client(port());
  ASSERT_TRUE(client.connected());
  ASSERT_TRUE(client.send(post("/first?a=1", "hello")));
  const Response first = client.read_response();
  EXPECT_EQ(first.status, 200);
  EXPECT_EQ(first.body, "POST /first?a=1 hello");
  EXPECT_EQ(first.header("content-type"), "text/plain");
  EXPECT_FALSE(first.has("connection"));
  ASSERT_TRUE(first.has("x-peer"));
  EXPECT_EQ(first.header("x-peer").rfind("127.0.0.1:", 0), 0u);
  ASSERT_TRUE(client.send("GET /second HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"));
  const Response second = client.read_response();
  EXPECT_EQ(second.status, 200);
  EXPECT_EQ(second.body, "GET /second? ");
  EXPECT_EQ(second.header("x-peer"), first.header("x-peer"));  // the same connection
  EXPECT_EQ(second.header("connection"), "close");
  EXPECT_TRUE(client.closed_by_server());
}

TEST_F(HttpServerTest, PipelinedRequestsAreAnsweredInOrder) {
  start(echo);
  Client client(port());
  ASSERT_TRUE(client.send(post("/a", "1") + post("/b", "22") + post("/c", "333")));
  EXPECT_EQ(client.read_response().body, "POST /a? 1");
  EXPECT_EQ(client.read_response().body, "POST /b? 22");
  EXPECT_EQ(client.read_response().body, "POST /c? 333");
}

TEST_F(HttpServerTest, Http10ClosesUnlessKeepAlive) {
  start(echo);
  Client client(port());
  ASSERT_TRUE(client.send("GET /x HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"));
  Response r = client.read_response();
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.header("connection"), "keep-alive");
  ASSERT_TRUE(client.send("GET /y HTTP/1.0\r\n\r\n"));
  r = client.read_response();
  EXPECT_EQ(r.body, "GET /y? ");
  EXPECT_EQ(r.header("connection"), "close");
  EXPECT_TRUE(client.closed_by_server());
}

TEST_F(HttpServerTest, StreamedResponseArrivesAsChunks) {
  start([](const HttpRequest&, HttpResponder& out) {
    ASSERT_TRUE(out.start_stream(200, "text/event-stream", {{"Cache-Control", "no-cache"}}));
    EXPECT_TRUE(out.write("data: {\"a\":1}\n\n"));
    EXPECT_TRUE(out.write(""));  // nothing to send, and not the end of the stream
    EXPECT_TRUE(out.write("data: [DONE]\n\n"));
    EXPECT_FALSE(out.respond(200, "text/plain", "too late"));
  });
  Client client(port());
  ASSERT_TRUE(client.send(post("/v1/chat/completions", "{}")));
  Response r = client.read_response();
  EXPECT_EQ(r.status, 200);
  EXPECT_TRUE(r.chunked);
  EXPECT_EQ(r.header("content-type"), "text/event-stream");
  EXPECT_EQ(r.header("cache-control"), "no-cache");
  EXPECT_FALSE(r.has("content-length"));
  EXPECT_EQ(r.chunks, (std::vector<std::string>{"data: {\"a\":1}\n\n", "data: [DONE]\n\n"}));
  // The connection goes on after the stream.
  ASSERT_TRUE(client.send(post("/v1/chat/completions", "{}")));
  r = client.read_response();
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.chunks.size(), 2u);
}

TEST_F(HttpServerTest, StreamToHttp10EndsWithTheConnection) {
  start([](const HttpRequest&, HttpResponder& out) {
    out.start_stream(200, "text/event-stream");
    out.write("one ");
    out.write("two");
  });
  Client client(port());
  ASSERT_TRUE(client.send("GET /s HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"));
  const Response r = client.read_response();
  EXPECT_EQ(r.status, 200);
  EXPECT_FALSE(r.chunked);
  EXPECT_EQ(r.header("connection"), "close");
  EXPECT_EQ(r.body, "one two");
}

TEST_F(HttpServerTest, HugeContentLengthIs413WithoutTheBody) {
  HttpLimits limits;
  limits.max_body_bytes = 1000;
  std::atomic<int> calls{0};
  start([&](const HttpRequest& request, HttpResponder& out) {
    ++calls;
    echo(request, out);
  }, limits);
  Client client(port());
  ASSERT_TRUE(client.send("POST /v1/completions HTTP/1.1\r\nHost: h\r\nContent-Length: 1000000000000\r\n\r\n"));
  const Response r = client.read_response();
  EXPECT_EQ(r.status, 413);
  EXPECT_EQ(r.header("content-type"), "application/json");
  EXPECT_EQ(r.header("connection"), "close");
  EXPECT_EQ(r.body,
            "{\"error\":{\"message\":\"the request body is larger than 1000 bytes\","
            "\"type\":\"invalid_request_error\",\"param\":null,\"code\":null}}");
  EXPECT_TRUE(client.closed_by_server());
  EXPECT_EQ(calls.load(), 0);
}

TEST_F(HttpServerTest, ExpectContinueGetsContinueOr413) {
  HttpLimits limits;
  limits.max_body_bytes = 10;
  start(echo, limits);
  Client client(port());
  ASSERT_TRUE(client.send("POST /e HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n"));
  const Response go_on = client.read_response();
  EXPECT_EQ(go_on.status, 100);
  ASSERT_TRUE(client.send("hello"));
  EXPECT_EQ(client.read_response().body, "POST /e? hello");
  ASSERT_TRUE(client.send("POST /e HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 11\r\n\r\n"));
  EXPECT_EQ(client.read_response().status, 413);
}

TEST_F(HttpServerTest, OversizedHeadIs431) {
  HttpLimits limits;
  limits.max_header_bytes = 1024;
  start(echo, limits);
  Client client(port());
  ASSERT_TRUE(client.send("GET / HTTP/1.1\r\nHost: h\r\nX-Big: " + std::string(2000, 'x') + "\r\n\r\n"));
  const Response r = client.read_response();
  EXPECT_EQ(r.status, 431);
  EXPECT_NE(r.body.find("\"type\":\"invalid_request_error\""), std::string::npos);
  EXPECT_TRUE(client.closed_by_server());
}

TEST_F(HttpServerTest, MalformedRequestIs400AndCloses) {
  start(echo);
  Client client(port());
  ASSERT_TRUE(client.send("GET http://example.com/ HTTP/1.1\r\nHost: h\r\n\r\n"));
  const Response r = client.read_response();
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.find("\"message\":\"the request target must be a path starting with '/'\""), std::string::npos);
  EXPECT_TRUE(client.closed_by_server());
  Client version(port());
  ASSERT_TRUE(version.send("GET / HTTP/2.0\r\n\r\n"));
  EXPECT_EQ(version.read_response().status, 505);
}

TEST_F(HttpServerTest, SlowLorisGets408WithinTheHeaderTimeout) {
  HttpLimits limits;
  limits.header_timeout_ms = 300;
  start(echo, limits);
  Client client(port());
  const std::string head = "GET / HTTP/1.1\r\nHost: h\r\nX-Slow: " + std::string(1000, 's') + "\r\n\r\n";
  const auto started = Clock::now();
  // One byte every 100 ms, until the server answers.
  for (char c : head) {
    if (client.readable() || !client.send(std::string(1, c))) break;
    std::this_thread::sleep_for(milliseconds(100));
    ASSERT_LT(Clock::now() - started, milliseconds(kPatienceMs));
  }
  const Response r = client.read_response();
  EXPECT_EQ(r.status, 408);
  EXPECT_TRUE(client.closed_by_server());
  EXPECT_GE(Clock::now() - started, milliseconds(300));  // the head's time counts from its first byte
  EXPECT_LT(Clock::now() - started, milliseconds(kPatienceMs));
}

TEST_F(HttpServerTest, BodyNotArrivingIs408) {
  HttpLimits limits;
  limits.body_timeout_ms = 300;
  start(echo, limits);
  Client client(port());
  const auto started = Clock::now();
  ASSERT_TRUE(client.send("POST /b HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\nhalf"));
  const Response r = client.read_response();
  EXPECT_EQ(r.status, 408);
  EXPECT_NE(r.body.find("the request body did not arrive in time"), std::string::npos);
  EXPECT_GE(Clock::now() - started, milliseconds(300));
  EXPECT_TRUE(client.closed_by_server());
}

TEST_F(HttpServerTest, ChunkedRequestBodyReachesTheHandlerWhole) {
  start(echo);
  Client client(port());
  ASSERT_TRUE(client.send("POST /c HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc"));
  std::this_thread::sleep_for(milliseconds(20));
  ASSERT_TRUE(client.send("\r\n2;x=y\r\nde\r\n0\r\nX-Trailer: 1\r\n\r\n"));
  EXPECT_EQ(client.read_response().body, "POST /c? abcde");
}

TEST_F(HttpServerTest, IdleKeepAliveConnectionClosesSilently) {
  HttpLimits limits;
  limits.idle_timeout_ms = 200;
  start(echo, limits);
  Client client(port());
  ASSERT_TRUE(client.send(post("/a", "")));
  EXPECT_EQ(client.read_response().status, 200);
  const auto started = Clock::now();
  EXPECT_TRUE(client.closed_by_server());
  EXPECT_GE(Clock::now() - started, milliseconds(150));
}

TEST_F(HttpServerTest, BeyondMaxConnectionsIs503) {
  HttpLimits limits;
  limits.max_connections = 2;
  start(echo, limits);
  Client a(port());
  Client b(port());
  // Both are being served (a request answered on each) before the third comes.
  ASSERT_TRUE(a.send(post("/a", "")));
  ASSERT_TRUE(b.send(post("/b", "")));
  EXPECT_EQ(a.read_response().status, 200);
  EXPECT_EQ(b.read_response().status, 200);
  Client c(port());
  ASSERT_TRUE(c.send(post("/c", "")));
  const Response r = c.read_response();
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(r.header("connection"), "close");
  EXPECT_NE(r.body.find("\"type\":\"server_error\""), std::string::npos);
  EXPECT_TRUE(c.closed_by_server());
  // Once one closes, a new connection is served.
  a.close();
  int status = 0;
  for (const auto started = Clock::now(); status != 200 && Clock::now() - started < milliseconds(kPatienceMs);) {
    Client d(port());
    if (d.send(post("/d", ""))) status = d.read_response().status;
    if (status != 200) std::this_thread::sleep_for(milliseconds(20));
  }
  EXPECT_EQ(status, 200);
}

TEST_F(HttpServerTest, ClientGoneTurnsTrueWhenTheClientClosesMidStream) {
  Signal gone;
  start([&](const HttpRequest&, HttpResponder& out) {
    ASSERT_TRUE(out.start_stream(200, "text/event-stream"));
    EXPECT_FALSE(out.client_gone());
    ASSERT_TRUE(out.write("data: first\n\n"));
    for (const auto started = Clock::now(); Clock::now() - started < milliseconds(kPatienceMs);) {
      if (out.client_gone()) {
        gone.raise();
        return;
      }
      std::this_thread::sleep_for(milliseconds(2));
    }
  });
  Client client(port());
  ASSERT_TRUE(client.send(post("/v1/chat/completions", "{}")));
  ASSERT_TRUE(client.read_until("data: first"));  // the head and the first chunk, then away
  client.close();
  EXPECT_TRUE(gone.wait());
}

TEST_F(HttpServerTest, RequestStopEndsStreamsAndServe) {
  Signal streaming;
  std::atomic<bool> saw_gone{false};
  start([&](const HttpRequest&, HttpResponder& out) {
    out.start_stream(200, "text/event-stream");
    for (const auto started = Clock::now(); Clock::now() - started < milliseconds(kPatienceMs);) {
      out.write("data: token\n\n");
      streaming.raise();
      if (out.client_gone()) {
        saw_gone = true;
        return;
      }
      std::this_thread::sleep_for(milliseconds(5));
    }
  });
  Client client(port());
  Client idle(port());  // a connection waiting for its first request must not hold serve() up
  ASSERT_TRUE(client.send(post("/v1/chat/completions", "{}")));
  ASSERT_TRUE(streaming.wait());
  std::thread stopper([this] { server_->request_stop(); });
  stopper.join();
  ASSERT_EQ(serving_.wait_for(milliseconds(kPatienceMs)), std::future_status::ready);
  EXPECT_TRUE(saw_gone.load());
  // The stream was ended properly and the connection closed.
  const Response r = client.read_response();
  EXPECT_EQ(r.status, 200);
  EXPECT_FALSE(r.chunks.empty());
  EXPECT_EQ(r.header("transfer-encoding"), "chunked");
  EXPECT_TRUE(client.closed_by_server());
  EXPECT_TRUE(idle.closed_by_server());
}

TEST_F(HttpServerTest, HandlerWithoutAnswerOrThrowingGets500) {
  start([](const HttpRequest& request, HttpResponder& out) {
    if (request.path == "/throw") throw std::runtime_error("handler bug");
    if (request.path == "/bad-header") out.respond(200, "text/plain", "x", {{"X-Split", "a\r\nSet-Cookie: b"}});
  });
  for (const char* path : {"/silent", "/throw", "/bad-header"}) {
    Client client(port());
    ASSERT_TRUE(client.send(post(path, "")));
    const Response r = client.read_response();
    EXPECT_EQ(r.status, 500) << path;
    EXPECT_FALSE(r.has("set-cookie")) << path;
    EXPECT_NE(r.body.find("\"type\":\"server_error\""), std::string::npos) << path;
  }
}

TEST_F(HttpServerTest, HeadGetsNoBody) {
  start(echo);
  Client client(port());
  ASSERT_TRUE(client.send("HEAD /h HTTP/1.1\r\nHost: h\r\n\r\n" + post("/after", "x")));
  // The HEAD's Content-Length is the GET's, and no body follows it: the
  // next bytes are the next response.
  const Response head = client.read_response(true);
  EXPECT_EQ(head.status, 200);
  EXPECT_EQ(head.header("content-length"), "9");
  EXPECT_EQ(client.read_response().body, "POST /after? x");
}

TEST(HttpServerBind, ReportsBadAddressesAndTakenPorts) {
  std::string error;
  EXPECT_EQ(HttpServer::bind("not a host name", 0, HttpLimits(), &error), nullptr);
  EXPECT_NE(error.find("cannot listen on not a host name:0"), std::string::npos) << error;
  EXPECT_EQ(HttpServer::bind("127.0.0.1", 70000, HttpLimits(), &error), nullptr);
  EXPECT_NE(error.find("port"), std::string::npos) << error;
  std::unique_ptr<HttpServer> first = HttpServer::bind("127.0.0.1", 0, HttpLimits(), &error);
  ASSERT_NE(first, nullptr) << error;
  EXPECT_EQ(HttpServer::bind("127.0.0.1", first->port(), HttpLimits(), &error), nullptr);
  EXPECT_NE(error.find("Address already in use"), std::string::npos) << error;
}

TEST(HttpServerBind, ServesIpv6Loopback) {
  std::string error;
  std::unique_ptr<HttpServer> server = HttpServer::bind("[::1]", 0, HttpLimits(), &error);
  if (!server) GTEST_SKIP() << "no IPv6 loopback here: " << error;
  std::future<void> serving = std::async(std::launch::async, [&] { server->serve(echo); });
  {
    Client client(server->port(), "::1", AF_INET6);
    ASSERT_TRUE(client.connected());
    ASSERT_TRUE(client.send(post("/six", "")));
    const Response r = client.read_response();
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.header("x-peer").rfind("[::1]:", 0), 0u);
  }
  server->request_stop();
  EXPECT_EQ(serving.wait_for(milliseconds(kPatienceMs)), std::future_status::ready);
}

}  // namespace
}  // namespace peak_server
