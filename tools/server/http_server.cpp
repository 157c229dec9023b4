#include "http_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <list>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "http_parser.h"
#include "http_syntax.h"

namespace peak_server {
namespace {

using Clock = std::chrono::steady_clock;

// How long a connection that is being closed is still read (and what it sends
// dropped), so that the client receives the answer before our close would
// reset the connection over its unread bytes (RFC 9112 9.6).
constexpr int kLingerMs = 1000;
// Refused connections (503) waiting for their lingering close, at most.
constexpr size_t kMaxLingering = 64;

const char* reason_phrase(int status) {
  switch (status) {
    case 100: return "Continue";
    case 200: return "OK";
    case 201: return "Created";
    case 202: return "Accepted";
    case 204: return "No Content";
    case 301: return "Moved Permanently";
    case 302: return "Found";
    case 304: return "Not Modified";
    case 307: return "Temporary Redirect";
    case 308: return "Permanent Redirect";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 406: return "Not Acceptable";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 410: return "Gone";
    case 411: return "Length Required";
    case 413: return "Content Too Large";
    case 414: return "URI Too Long";
    case 415: return "Unsupported Media Type";
    case 417: return "Expectation Failed";
    case 422: return "Unprocessable Content";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    case 505: return "HTTP Version Not Supported";
    default: return status < 500 ? "Client Error" : "Server Error";
  }
}

void append_json_string(std::string* out, std::string_view s) {
  static const char hex[] = "0123456789abcdef";
  out->push_back('"');
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out->push_back('\\');
      out->push_back(c);
    } else if (u < 0x20) {
      *out += "\\u00";
      out->push_back(hex[u >> 4]);
      out->push_back(hex[u & 15]);
    } else {
      out->push_back(c);
    }
  }
  out->push_back('"');
}

// OpenAI's error shape.
std::string error_json(std::string_view message, std::string_view type) {
  std::string body = "{\"error\":{\"message\":";
  append_json_string(&body, message);
  body += ",\"type\":";
  append_json_string(&body, type);
  body += ",\"param\":null,\"code\":null}}";
  return body;
}

// RFC 9110 5.6.7 IMF-fixdate, e.g. "Sun, 06 Nov 1994 08:49:37 GMT", written
// without strftime, whose day and month names follow the locale.
std::string http_date() {
  static const char* const days[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  static const char* const months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                       "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[40];
  std::snprintf(text, sizeof text, "%s, %02d %s %04d %02d:%02d:%02d GMT", days[tm.tm_wday % 7], tm.tm_mday,
                months[tm.tm_mon % 12], tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec);
  return text;
}

// Rounded up, so that a poll() for it does not return before the deadline.
int milliseconds_until(Clock::time_point deadline) {
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left <= 0 ? 0 : static_cast<int>(std::min<long long>(left, 1 << 30));
}

Clock::time_point after_ms(int ms) { return Clock::now() + std::chrono::milliseconds(ms); }

enum class Wait { ready, timeout, stopped, failed };

// Waits until fd has `events` or the stop pipe is readable (stop wins).
Wait wait_for(int fd, short events, int stop_fd, Clock::time_point deadline) {
  for (;;) {
    pollfd fds[2] = {{fd, events, 0}, {stop_fd, POLLIN, 0}};
    const int r = poll(fds, 2, milliseconds_until(deadline));
    if (r < 0) {
      if (errno == EINTR) continue;
      return Wait::failed;
    }
    if (fds[1].revents != 0) return Wait::stopped;
    if (fds[0].revents != 0) return Wait::ready;
    if (Clock::now() >= deadline) return Wait::timeout;
  }
}

// Sends all of `data` on the non-blocking socket fd; false when the peer is
// gone, or has not taken a byte for timeout_ms, or (while it is not reading)
// a stop was requested.
bool send_all(int fd, int stop_fd, std::string_view data, int timeout_ms) {
  while (!data.empty()) {
    const ssize_t n = send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n > 0) {
      data.remove_prefix(static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd fds[2] = {{fd, POLLOUT, 0}, {stop_fd, POLLIN, 0}};
      const int r = poll(fds, 2, timeout_ms);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) return false;
      if ((fds[0].revents & POLLOUT) != 0) continue;
      return false;  // an error or hang-up on the socket, or a stop while the client does not read
    }
    return false;
  }
  return true;
}

// Ends the connection without losing what was sent: our side is shut down
// first, then what the client still sends is read and dropped until it closes
// (at most kLingerMs, cut short by a stop).
void close_gracefully(int fd, int stop_fd) {
  shutdown(fd, SHUT_WR);
  const Clock::time_point deadline = after_ms(kLingerMs);
  char scratch[4096];
  while (wait_for(fd, POLLIN, stop_fd, deadline) == Wait::ready) {
    const ssize_t n = recv(fd, scratch, sizeof scratch, 0);
    if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK)) break;
  }
  close(fd);
}

std::string peer_name(const sockaddr_storage& address, socklen_t length) {
  char host[NI_MAXHOST];
  char service[NI_MAXSERV];
  if (getnameinfo(reinterpret_cast<const sockaddr*>(&address), length, host, sizeof host, service, sizeof service,
                  NI_NUMERICHOST | NI_NUMERICSERV) != 0)
    return "?";
  if (address.ss_family == AF_INET6) return std::string("[") + host + "]:" + service;
  return std::string(host) + ":" + service;
}

// One connection's answer to one request, written on the connection's thread.
class ConnectionResponder final : public HttpResponder {
 public:
  ConnectionResponder(int fd, int stop_fd, const std::atomic<bool>& stop, const HttpLimits& limits,
                      const HttpRequest& request, int minor_version, bool keep_alive)
      : fd_(fd),
        stop_fd_(stop_fd),
        stop_(stop),
        write_timeout_ms_(limits.write_timeout_ms),
        minor_version_(minor_version),
        keep_alive_(keep_alive),
        head_only_(request.method == "HEAD") {}

  bool respond(int status, std::string_view content_type, std::string_view body,
               const std::vector<HttpHeader>& extra_headers) override {
    if (started_ || !valid_answer(status, content_type, extra_headers)) return false;
    started_ = true;
    answered_ = true;
    // 204 and 304 have no body (RFC 9110 6.4.1); HEAD gets the length a GET would.
    const bool no_body = status == 204 || status == 304;
    std::string message = head(status, content_type, extra_headers);
    if (!no_body) message += "Content-Length: " + std::to_string(body.size()) + "\r\n";
    message += connection_header();
    message += "\r\n";
    if (!no_body && !head_only_) message.append(body);
    return send(message);
  }

  bool start_stream(int status, std::string_view content_type,
                    const std::vector<HttpHeader>& extra_headers) override {
    if (started_ || !valid_answer(status, content_type, extra_headers)) return false;
    started_ = true;
    answered_ = true;
    streaming_ = true;
    // HTTP/1.0 has no chunked coding: the stream ends with the connection.
    chunked_ = minor_version_ == 1 && !head_only_;
    if (!chunked_) keep_alive_ = false;
    std::string message = head(status, content_type, extra_headers);
    if (chunked_) message += "Transfer-Encoding: chunked\r\n";
    message += connection_header();
    message += "\r\n";
    return send(message);
  }

  bool write(std::string_view bytes) override {
    if (!streaming_ || broken_) return false;
    if (bytes.empty() || head_only_) return !client_gone();
    if (!chunked_) return send(bytes);
    char size[24];
    std::snprintf(size, sizeof size, "%zx\r\n", bytes.size());
    std::string chunk = size;
    chunk.reserve(chunk.size() + bytes.size() + 2);
    chunk.append(bytes);
    chunk += "\r\n";
    return send(chunk);
  }

  bool client_gone() override {
    if (broken_ || stop_.load(std::memory_order_relaxed)) return true;
    short events = POLLIN;
#ifdef POLLRDHUP
    events = static_cast<short>(events | POLLRDHUP);
#endif
    pollfd p{fd_, events, 0};
    if (poll(&p, 1, 0) <= 0) return false;
    short gone = POLLHUP | POLLERR;
#ifdef POLLRDHUP
    gone = static_cast<short>(gone | POLLRDHUP);
#endif
    if ((p.revents & gone) != 0) return true;
    if ((p.revents & POLLIN) != 0) {
      // Readable: either bytes of a next request (still there) or the end of the stream.
      char c;
      const ssize_t n = recv(fd_, &c, 1, MSG_PEEK | MSG_DONTWAIT);
      if (n == 0) return true;
      if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return true;
    }
    return false;
  }

  // After the handler returned: ends a stream; false when the connection
  // cannot carry another request.
  bool finish() {
    if (streaming_ && chunked_ && !broken_) send("0\r\n\r\n");
    return !broken_ && keep_alive_ && !stop_.load(std::memory_order_relaxed);
  }

  bool answered() const { return answered_; }

  // The handler answered wrongly or threw: a 500 while nothing is sent yet.
  void fail_with_500(std::string_view message) {
    if (started_) {
      broken_ = true;  // a response is half sent: only closing ends it
      return;
    }
    keep_alive_ = false;
    respond(500, "application/json", error_json(message, "server_error"), {});
  }

 private:
  bool valid_answer(int status, std::string_view content_type, const std::vector<HttpHeader>& extra_headers) {
    bool valid = status >= 200 && status <= 599 && is_field_value(content_type);
    for (const HttpHeader& h : extra_headers) valid = valid && is_token(h.name) && is_field_value(h.value);
    if (!valid) fail_with_500("the request handler produced an invalid response");
    return valid;
  }

  std::string head(int status, std::string_view content_type, const std::vector<HttpHeader>& extra_headers) const {
    std::string text = "HTTP/1.1 " + std::to_string(status) + " " + reason_phrase(status) + "\r\n";
    text += "Date: " + http_date() + "\r\n";
    if (!content_type.empty()) {
      text += "Content-Type: ";
      text.append(content_type);
      text += "\r\n";
    }
    for (const HttpHeader& h : extra_headers) {
      // The framing and the connection's fate are the transport's.
      if (equals_ignoring_case(h.name, "content-length") || equals_ignoring_case(h.name, "transfer-encoding") ||
          equals_ignoring_case(h.name, "connection"))
        continue;
      text += h.name + ": " + h.value + "\r\n";
    }
    return text;
  }

  std::string connection_header() {
    if (stop_.load(std::memory_order_relaxed)) keep_alive_ = false;
    if (!keep_alive_) return "Connection: close\r\n";
    return minor_version_ == 0 ? "Connection: keep-alive\r\n" : "";
  }

  bool send(std::string_view bytes) {
    if (broken_) return false;
    if (!send_all(fd_, stop_fd_, bytes, write_timeout_ms_)) broken_ = true;
    return !broken_;
  }

  int fd_;
  int stop_fd_;
  const std::atomic<bool>& stop_;
  int write_timeout_ms_;
  int minor_version_;
  bool keep_alive_;
  bool head_only_;
  bool started_ = false;
  bool answered_ = false;
  bool streaming_ = false;
  bool chunked_ = false;
  bool broken_ = false;
};

class PosixHttpServer final : public HttpServer {
 public:
  PosixHttpServer(int listen_fd, int stop_read, int stop_write, int port, const HttpLimits& limits)
      : listen_fd_(listen_fd), stop_read_(stop_read), stop_write_(stop_write), port_(port), limits_(limits) {}

  ~PosixHttpServer() override {
    if (listen_fd_ >= 0) close(listen_fd_);
    close(stop_read_);
    close(stop_write_);
  }

  PosixHttpServer(const PosixHttpServer&) = delete;
  PosixHttpServer& operator=(const PosixHttpServer&) = delete;

  int port() const override { return port_; }

  void request_stop() override {
    static_assert(std::atomic<bool>::is_always_lock_free, "a stop from a signal handler needs a lock-free flag");
    stop_.store(true, std::memory_order_relaxed);
    const char byte = 1;
    const ssize_t written = ::write(stop_write_, &byte, 1);  // EAGAIN: the pipe already says stop
    (void)written;
  }

  void serve(const HttpHandler& handler) override;

 private:
  struct Connection {
    std::thread thread;
    std::atomic<bool> finished{false};
  };
  struct Lingering {
    int fd;
    Clock::time_point deadline;
  };

  void accept_one(const HttpHandler& handler, std::list<Connection>* connections, std::vector<Lingering>* lingering);
  void refuse(int fd, std::vector<Lingering>* lingering);
  void serve_connection(int fd, const std::string& peer, const HttpHandler& handler);
  void answer_error(int fd, int status, std::string_view message);

  int listen_fd_;
  int stop_read_;
  int stop_write_;
  int port_;
  HttpLimits limits_;
  std::atomic<bool> stop_{false};
  std::atomic<size_t> active_{0};
};

void PosixHttpServer::serve(const HttpHandler& handler) {
  std::list<Connection> connections;
  std::vector<Lingering> lingering;
  std::vector<pollfd> fds;
  while (!stop_.load(std::memory_order_relaxed)) {
    for (auto it = connections.begin(); it != connections.end();) {
      if (it->finished.load(std::memory_order_acquire)) {
        it->thread.join();
        it = connections.erase(it);
      } else {
        ++it;
      }
    }
    fds.assign({{listen_fd_, POLLIN, 0}, {stop_read_, POLLIN, 0}});
    Clock::time_point next_deadline = Clock::time_point::max();
    for (const Lingering& l : lingering) {
      fds.push_back({l.fd, POLLIN, 0});
      next_deadline = std::min(next_deadline, l.deadline);
    }
    const int timeout = lingering.empty() ? -1 : milliseconds_until(next_deadline);
    const int r = poll(fds.data(), fds.size(), timeout);
    if (r < 0 && errno != EINTR) {
      request_stop();  // cannot wait for connections any more: end the running ones too
      break;
    }
    if (r < 0) continue;
    // Refused connections: drained until they close or their time is up.
    const Clock::time_point now = Clock::now();
    for (size_t i = lingering.size(); i-- > 0;) {
      bool done = now >= lingering[i].deadline;
      if (!done && fds[2 + i].revents != 0) {
        char scratch[4096];
        const ssize_t n = recv(lingering[i].fd, scratch, sizeof scratch, 0);
        done = n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
      }
      if (done) {
        close(lingering[i].fd);
        lingering.erase(lingering.begin() + static_cast<std::ptrdiff_t>(i));
      }
    }
    if ((fds[0].revents & POLLIN) != 0) accept_one(handler, &connections, &lingering);
  }
  // Stop: no more connections; the running ones see the stop pipe (and their
  // handlers client_gone()) and end.
  close(listen_fd_);
  listen_fd_ = -1;
  for (const Lingering& l : lingering) close(l.fd);
  for (Connection& c : connections) c.thread.join();
}

void PosixHttpServer::accept_one(const HttpHandler& handler, std::list<Connection>* connections,
                                 std::vector<Lingering>* lingering) {
  sockaddr_storage address{};
  socklen_t length = sizeof address;
  const int fd = accept4(listen_fd_, reinterpret_cast<sockaddr*>(&address), &length, SOCK_NONBLOCK | SOCK_CLOEXEC);
  if (fd < 0) {
    // Out of descriptors: the pending connection stays in the backlog, so
    // wait a little rather than spin on it.
    if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
      wait_for(stop_read_, POLLIN, stop_read_, after_ms(100));
    return;
  }
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);  // streamed tokens go out at once
  if (active_.load() >= limits_.max_connections) {
    refuse(fd, lingering);
    return;
  }
  connections->emplace_back();
  Connection& connection = connections->back();
  active_.fetch_add(1);
  try {
    connection.thread = std::thread([this, fd, peer = peer_name(address, length), &handler, &connection] {
      serve_connection(fd, peer, handler);
      active_.fetch_sub(1);
      connection.finished.store(true, std::memory_order_release);
    });
  } catch (const std::system_error&) {
    active_.fetch_sub(1);
    connections->pop_back();
    refuse(fd, lingering);
  }
}

// Over max_connections: 503 now, on the accepting thread, then a lingering close there too.
void PosixHttpServer::refuse(int fd, std::vector<Lingering>* lingering) {
  const std::string body =
      error_json("the server is busy (" + std::to_string(limits_.max_connections) + " connections); try again later",
                 "server_error");
  const std::string message = "HTTP/1.1 503 Service Unavailable\r\nDate: " + http_date() +
                              "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
                              "\r\nRetry-After: 1\r\nConnection: close\r\n\r\n" + body;
  // A new socket's send buffer takes these few hundred bytes at once; what it
  // does not take is not waited for.
  const ssize_t sent = send(fd, message.data(), message.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  if (sent < 0 || lingering->size() >= kMaxLingering) {
    close(fd);
    return;
  }
  shutdown(fd, SHUT_WR);
  lingering->push_back({fd, after_ms(kLingerMs)});
}

void PosixHttpServer::answer_error(int fd, int status, std::string_view message) {
  const std::string body = error_json(message, "invalid_request_error");
  const std::string response = "HTTP/1.1 " + std::to_string(status) + " " + reason_phrase(status) +
                               "\r\nDate: " + http_date() +
                               "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
                               "\r\nConnection: close\r\n\r\n" + body;
  send_all(fd, stop_read_, response, limits_.write_timeout_ms);
}

void PosixHttpServer::serve_connection(int fd, const std::string& peer, const HttpHandler& handler) {
  try {
    HttpRequestParser parser(limits_.max_header_bytes, limits_.max_body_bytes);
    char buffer[16384];
    for (;;) {
      // Idle until the next request starts (a silent close when none does).
      if (!parser.has_buffered_bytes() &&
          wait_for(fd, POLLIN, stop_read_, after_ms(limits_.idle_timeout_ms)) != Wait::ready)
        break;
      Clock::time_point deadline = after_ms(limits_.header_timeout_ms);
      bool in_body = false;
      bool continued = false;
      HttpRequestParser::Status status = parser.feed({});
      bool closed = false;
      while (status == HttpRequestParser::Status::incomplete) {
        if (!in_body && parser.head_complete()) {
          in_body = true;
          deadline = after_ms(limits_.body_timeout_ms);
        }
        if (in_body && parser.expects_continue() && !continued) {
          continued = true;
          if (!send_all(fd, stop_read_, "HTTP/1.1 100 Continue\r\n\r\n", limits_.write_timeout_ms)) {
            closed = true;
            break;
          }
        }
        const Wait wait = wait_for(fd, POLLIN, stop_read_, deadline);
        if (wait == Wait::timeout) {
          answer_error(fd, 408,
                       in_body ? "the request body did not arrive in time" : "the request head did not arrive in time");
          close_gracefully(fd, stop_read_);
          return;
        }
        if (wait != Wait::ready) {
          closed = true;
          break;
        }
        const ssize_t n = recv(fd, buffer, sizeof buffer, 0);
        if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
        if (n <= 0) {
          closed = true;
          break;
        }
        status = parser.feed(std::string_view(buffer, static_cast<size_t>(n)));
      }
      if (closed) break;
      if (status == HttpRequestParser::Status::failed) {
        answer_error(fd, parser.error_status(), parser.error_message());
        close_gracefully(fd, stop_read_);
        return;
      }
      const int minor_version = parser.minor_version();
      const bool keep_alive = parser.keep_alive();
      HttpRequest request = parser.take_request();
      request.peer = peer;
      ConnectionResponder responder(fd, stop_read_, stop_, limits_, request, minor_version, keep_alive);
      bool keep = false;
      try {
        handler(request, responder);
        if (!responder.answered()) responder.fail_with_500("the request handler gave no response");
        keep = responder.finish();
      } catch (...) {
        responder.fail_with_500("the request handler failed");
      }
      if (!keep) {
        close_gracefully(fd, stop_read_);
        return;
      }
    }
  } catch (...) {
    // Out of memory for a request: the connection is dropped, the server goes on.
  }
  close(fd);
}

}  // namespace

std::unique_ptr<HttpServer> HttpServer::bind(const std::string& host, int port, const HttpLimits& limits,
                                             std::string* error) {
  auto failed = [&](const std::string& why) -> std::unique_ptr<HttpServer> {
    if (error) *error = why;
    return nullptr;
  };
  const std::string where = host + ":" + std::to_string(port);
  if (port < 0 || port > 65535) return failed("cannot listen on " + where + ": the port must be 0 to 65535");
  // "[::1]" is how an IPv6 address is written next to a port; getaddrinfo wants it bare.
  std::string name = host;
  if (name.size() >= 2 && name.front() == '[' && name.back() == ']') name = name.substr(1, name.size() - 2);
  if (name.empty()) return failed("cannot listen on " + where + ": no host given");
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* addresses = nullptr;
  const int resolved = getaddrinfo(name.c_str(), std::to_string(port).c_str(), &hints, &addresses);
  if (resolved != 0) return failed("cannot listen on " + where + ": " + gai_strerror(resolved));
  int listen_fd = -1;
  std::string reason = "no address";
  for (const addrinfo* a = addresses; a != nullptr && listen_fd < 0; a = a->ai_next) {
    const int fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) {
      reason = std::strerror(errno);
      continue;
    }
    const int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd, a->ai_addr, a->ai_addrlen) != 0 || listen(fd, SOMAXCONN) != 0) {
      reason = std::strerror(errno);
      close(fd);
      continue;
    }
    listen_fd = fd;
  }
  freeaddrinfo(addresses);
  if (listen_fd < 0) return failed("cannot listen on " + where + ": " + reason);
  sockaddr_storage bound{};
  socklen_t length = sizeof bound;
  int bound_port = port;
  if (getsockname(listen_fd, reinterpret_cast<sockaddr*>(&bound), &length) == 0) {
    if (bound.ss_family == AF_INET) bound_port = ntohs(reinterpret_cast<const sockaddr_in*>(&bound)->sin_port);
    if (bound.ss_family == AF_INET6) bound_port = ntohs(reinterpret_cast<const sockaddr_in6*>(&bound)->sin6_port);
  }
  int stop_pipe[2];
  if (pipe2(stop_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
    const std::string why = std::strerror(errno);
    close(listen_fd);
    return failed("cannot listen on " + where + ": " + why);
  }
  return std::make_unique<PosixHttpServer>(listen_fd, stop_pipe[0], stop_pipe[1], bound_port, limits);
}

}  // namespace peak_server
