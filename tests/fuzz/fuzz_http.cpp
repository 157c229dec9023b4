// libFuzzer target: the HTTP/1.1 request parser of `peak serve`
// (tools/server/http_parser.h) on any byte string, fed in pieces whose sizes
// the first bytes of the input choose, with small limits. It must never
// crash, and:
//   - what it parses is well-formed: a method token, an origin-form path, no
//     control character in a header value, a body within the limit;
//   - a failure carries one of the status codes the parser documents;
//   - the result does not depend on how the bytes are split: the same
//     requests and the same final state as when they come all at once.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "http_parser.h"

namespace {

using peak_server::HttpRequest;
using peak_server::HttpRequestParser;

constexpr size_t kMaxHeaderBytes = 512;
constexpr size_t kMaxBodyBytes = 1024;

void check(bool condition) {
  if (!condition) std::abort();
}

bool is_lower_token(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c <= ' ' || c >= 0x7f || c == ':' || (c >= 'A' && c <= 'Z')) return false;
  return true;
}

void check_request(const HttpRequest& r) {
  check(!r.method.empty());
  check(!r.path.empty() && r.path[0] == '/');
  check(r.path.find('?') == std::string::npos);
  size_t head_bytes = r.method.size() + r.path.size() + r.query.size();
  for (const auto& h : r.headers) {
    check(is_lower_token(h.name));
    for (char c : h.value) check(c == '\t' || static_cast<unsigned char>(c) >= 0x20);
    check(h.value.empty() || (h.value.front() != ' ' && h.value.back() != ' '));
    head_bytes += h.name.size() + h.value.size();
  }
  check(head_bytes <= kMaxHeaderBytes);
  check(r.body.size() <= kMaxBodyBytes);
}

struct Outcome {
  std::vector<HttpRequest> requests;
  HttpRequestParser::Status status = HttpRequestParser::Status::incomplete;
  int error_status = 0;
  std::string error_message;
  bool keep_alive_of_last = false;
};

bool same_request(const HttpRequest& a, const HttpRequest& b) {
  if (a.method != b.method || a.path != b.path || a.query != b.query || a.body != b.body) return false;
  if (a.headers.size() != b.headers.size()) return false;
  for (size_t i = 0; i < a.headers.size(); ++i)
    if (a.headers[i].name != b.headers[i].name || a.headers[i].value != b.headers[i].value) return false;
  return true;
}

Outcome parse(std::string_view input, const std::vector<size_t>& pieces) {
  HttpRequestParser parser(kMaxHeaderBytes, kMaxBodyBytes);
  Outcome out;
  size_t at = 0;
  for (size_t i = 0; at < input.size() || i == 0; ++i) {
    const size_t n = pieces.empty() ? input.size() : pieces[i % pieces.size()];
    HttpRequestParser::Status s = parser.feed(input.substr(at, n));
    at += n;
    while (s == HttpRequestParser::Status::complete) {
      out.keep_alive_of_last = parser.keep_alive();
      out.requests.push_back(parser.take_request());
      check_request(out.requests.back());
      s = parser.feed({});
    }
    out.status = s;
    if (s == HttpRequestParser::Status::failed) {
      out.error_status = parser.error_status();
      out.error_message = parser.error_message();
      const int e = out.error_status;
      check(e == 400 || e == 413 || e == 417 || e == 431 || e == 501 || e == 505);
      check(!out.error_message.empty());
      check(parser.feed("GET / HTTP/1.1\r\nHost: h\r\n\r\n") == HttpRequestParser::Status::failed);
      break;
    }
    if (at >= input.size()) break;
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Byte 0: how many piece sizes follow (0 to 7); then the sizes (1 to 256 each).
  if (size == 0) return 0;
  const size_t count = data[0] % 8;
  if (size < 1 + count) return 0;
  std::vector<size_t> pieces;
  for (size_t i = 0; i < count; ++i) pieces.push_back(size_t{data[1 + i]} + 1);
  const std::string_view input(reinterpret_cast<const char*>(data) + 1 + count, size - 1 - count);

  const Outcome split = parse(input, pieces);
  const Outcome whole = parse(input, {});
  check(split.status == whole.status);
  check(split.error_status == whole.error_status);
  check(split.error_message == whole.error_message);
  check(split.requests.size() == whole.requests.size());
  for (size_t i = 0; i < split.requests.size(); ++i) check(same_request(split.requests[i], whole.requests[i]));
  check(split.keep_alive_of_last == whole.keep_alive_of_last);
  return 0;
}
