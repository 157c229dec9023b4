#include "http_parser.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>

#include "http_syntax.h"

namespace peak_server {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

bool is_space(char c) { return c == ' ' || c == '\t'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

// Calls f(element) for each non-empty element of a comma-separated list
// (RFC 9110 5.6.1), trimmed.
template <typename F>
void for_each_list_element(std::string_view list, F f) {
  while (!list.empty()) {
    const size_t comma = list.find(',');
    const std::string_view element = trim(list.substr(0, comma));
    if (!element.empty()) f(element);
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
}

// A decimal Content-Length: digits only, and no more than fits in size_t.
bool parse_content_length(std::string_view s, size_t* value) {
  if (s.empty()) return false;
  size_t v = 0;
  for (char c : s) {
    if (!is_digit(c)) return false;
    const auto digit = static_cast<size_t>(c - '0');
    if (v > (SIZE_MAX - digit) / 10) return false;
    v = v * 10 + digit;
  }
  *value = v;
  return true;
}

int hex_value(char c) {
  if (is_digit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

HttpRequestParser::HttpRequestParser(size_t max_header_bytes, size_t max_body_bytes)
    : max_header_bytes_(max_header_bytes), max_body_bytes_(max_body_bytes) {}

HttpRequestParser::Status HttpRequestParser::status() const {
  if (phase_ == Phase::complete) return Status::complete;
  if (phase_ == Phase::failed) return Status::failed;
  return Status::incomplete;
}

HttpRequestParser::Status HttpRequestParser::feed(std::string_view bytes) {
  if (phase_ == Phase::failed) return Status::failed;
  buffer_.append(bytes);
  for (;;) {
    const Phase before = phase_;
    const size_t pos_before = pos_;
    switch (phase_) {
      case Phase::head: parse_head(); break;
      case Phase::body: parse_body(); break;
      case Phase::chunk_size: parse_chunk_size(); break;
      case Phase::chunk_data: parse_chunk_data(); break;
      case Phase::chunk_data_end: parse_chunk_data_end(); break;
      case Phase::trailers: parse_trailers(); break;
      case Phase::complete:
      case Phase::failed: break;
    }
    if (phase_ == Phase::complete || phase_ == Phase::failed) break;
    if (phase_ == before && pos_ == pos_before) break;  // needs more bytes
  }
  // Drop what is parsed: what stays is part of a line, or the next request.
  buffer_.erase(0, pos_);
  scan_ -= pos_;
  pos_ = 0;
  return status();
}

HttpRequest HttpRequestParser::take_request() {
  HttpRequest request = std::move(request_);
  request_ = HttpRequest();
  phase_ = Phase::head;
  have_request_line_ = false;
  head_complete_ = false;
  expects_continue_ = false;
  keep_alive_ = false;
  minor_version_ = 1;
  head_bytes_ = 0;
  trailer_bytes_ = 0;
  remaining_ = 0;
  return request;
}

bool HttpRequestParser::fail(int status, std::string message) {
  phase_ = Phase::failed;
  error_status_ = status;
  error_message_ = std::move(message);
  return false;
}

// The next CRLF-terminated line, without its CRLF, if it takes no more than
// max_bytes (with its line end): too_long as soon as more than that has
// arrived without one, whether or not it has arrived whole, so that a request
// fails the same way however its bytes are split. A bare LF is refused (RFC
// 9112 2.2 lets a recipient accept it; two parties disagreeing about line ends
// is how requests are smuggled); a bare CR stays in the line, where the
// checks on its characters refuse it.
HttpRequestParser::Line HttpRequestParser::take_line(size_t max_bytes, std::string_view* line) {
  const size_t lf = buffer_.find('\n', scan_);
  if (lf == std::string::npos) {
    scan_ = buffer_.size();
    return buffer_.size() - pos_ > max_bytes ? Line::too_long : Line::incomplete;
  }
  if (lf + 1 - pos_ > max_bytes) return Line::too_long;
  if (lf == pos_ || buffer_[lf - 1] != '\r') {
    fail(400, "a line of the request ends with a bare LF instead of CRLF");
    return Line::bad;
  }
  *line = std::string_view(buffer_).substr(pos_, lf - 1 - pos_);
  pos_ = lf + 1;
  scan_ = pos_;
  return Line::found;
}

void HttpRequestParser::parse_head() {
  std::string_view line;
  const size_t start = pos_;
  const Line result = take_line(max_header_bytes_ - head_bytes_, &line);
  if (result == Line::too_long)
    fail(431, "the request line and header fields are larger than " + std::to_string(max_header_bytes_) + " bytes");
  if (result != Line::found) return;
  head_bytes_ += pos_ - start;
  if (!have_request_line_) {
    // RFC 9112 2.2: empty lines before the request line are ignored.
    if (!line.empty() && parse_request_line(line)) have_request_line_ = true;
    return;
  }
  if (line.empty()) {
    finish_head();
    return;
  }
  parse_header_line(line);
}

bool HttpRequestParser::parse_request_line(std::string_view line) {
  // method SP request-target SP HTTP-version, single spaces (RFC 9112 3).
  const size_t sp1 = line.find(' ');
  const size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos) return fail(400, "malformed request line");
  const std::string_view method = line.substr(0, sp1);
  const std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  const std::string_view version = line.substr(sp2 + 1);
  if (!is_token(method)) return fail(400, "malformed request method");
  if (version.size() != 8 || version.substr(0, 5) != "HTTP/" || !is_digit(version[5]) || version[6] != '.' ||
      !is_digit(version[7]))
    return fail(400, "malformed HTTP version");
  if (version[5] != '1' || (version[7] != '0' && version[7] != '1'))
    return fail(505, "HTTP version " + std::string(version.substr(5)) + " is not supported (1.0 and 1.1 are)");
  minor_version_ = version[7] - '0';
  if (target.empty()) return fail(400, "malformed request line");
  for (char c : target) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u >= 0x7f) return fail(400, "the request target holds a character that is not allowed");
  }
  // Only origin-form ("/path?query"): absolute-form is for proxies, '*' for
  // server-wide OPTIONS, authority-form for CONNECT; this server is none of them.
  if (target.front() != '/') return fail(400, "the request target must be a path starting with '/'");
  const size_t question = target.find('?');
  request_.method = std::string(method);
  request_.path = std::string(target.substr(0, question));
  request_.query = question == std::string_view::npos ? std::string() : std::string(target.substr(question + 1));
  return true;
}

bool HttpRequestParser::parse_header_line(std::string_view line) {
  // field-name ":" OWS field-value OWS (RFC 9112 5); obs-fold is refused (5.2).
  if (is_space(line.front())) return fail(400, "obsolete line folding in a header field");
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos) return fail(400, "a header line has no ':'");
  const std::string_view name = line.substr(0, colon);
  if (!name.empty() && is_space(name.back())) return fail(400, "whitespace between a header field name and its colon");
  if (!is_token(name)) return fail(400, "malformed header field name");
  const std::string_view value = trim(line.substr(colon + 1));
  if (!is_field_value(value)) return fail(400, "a header field value holds a control character");
  HttpHeader header;
  header.name.reserve(name.size());
  for (char c : name) header.name.push_back(ascii_lower(c));
  header.value = std::string(value);
  request_.headers.push_back(std::move(header));
  return true;
}

bool HttpRequestParser::finish_head() {
  size_t hosts = 0;
  bool have_length = false;
  size_t length = 0;
  bool have_transfer_encoding = false;
  size_t codings = 0;
  size_t chunked_codings = 0;
  bool chunked_last = false;
  bool close = false;
  bool keep_alive_token = false;
  const std::string* expect = nullptr;
  for (const HttpHeader& h : request_.headers) {
    if (h.name == "host") {
      ++hosts;
    } else if (h.name == "content-length") {
      size_t value = 0;
      if (!parse_content_length(h.value, &value)) return fail(400, "malformed Content-Length");
      if (have_length && value != length) return fail(400, "conflicting Content-Length header fields");
      have_length = true;
      length = value;
    } else if (h.name == "transfer-encoding") {
      have_transfer_encoding = true;
      for_each_list_element(h.value, [&](std::string_view coding) {
        chunked_last = equals_ignoring_case(coding, "chunked");
        chunked_codings += chunked_last ? 1 : 0;
        ++codings;
      });
    } else if (h.name == "connection") {
      for_each_list_element(h.value, [&](std::string_view option) {
        if (equals_ignoring_case(option, "close")) close = true;
        if (equals_ignoring_case(option, "keep-alive")) keep_alive_token = true;
      });
    } else if (h.name == "expect") {
      expect = &h.value;
    }
  }
  keep_alive_ = !close && (minor_version_ == 1 || keep_alive_token);
  // RFC 9112 3.2: an HTTP/1.1 request has exactly one Host.
  if (hosts > 1) return fail(400, "more than one Host header field");
  if (hosts == 0 && minor_version_ == 1) return fail(400, "an HTTP/1.1 request needs a Host header field");
  if (expect != nullptr) {
    if (!equals_ignoring_case(*expect, "100-continue"))
      return fail(417, "the only expectation understood is 100-continue");
    expects_continue_ = minor_version_ == 1;
  }
  head_complete_ = true;
  if (have_transfer_encoding) {
    // Both framings at once is the classic request smuggling (RFC 9112 6.1);
    // HTTP/1.0 has no transfer codings.
    if (have_length) return fail(400, "both Content-Length and Transfer-Encoding");
    if (minor_version_ == 0) return fail(400, "Transfer-Encoding in an HTTP/1.0 request");
    if (codings == 0) return fail(400, "empty Transfer-Encoding");
    // RFC 9112 6.3: chunked must be the final coding, and applied once.
    if (chunked_codings > 1 || (chunked_codings == 1 && !chunked_last))
      return fail(400, "chunked is not the final transfer coding, or is applied twice");
    if (codings > 1 || !chunked_last) return fail(501, "the only transfer coding supported is chunked");
    phase_ = Phase::chunk_size;
    return true;
  }
  if (length > max_body_bytes_)
    return fail(413, "the request body is larger than " + std::to_string(max_body_bytes_) + " bytes");
  // No reserve(length): a client announcing the largest body and sending
  // none would hold that much memory on every connection.
  remaining_ = length;
  phase_ = length > 0 ? Phase::body : Phase::complete;
  return true;
}

bool HttpRequestParser::take_body_bytes() {
  const size_t n = std::min(remaining_, buffer_.size() - pos_);
  request_.body.append(buffer_, pos_, n);
  pos_ += n;
  scan_ = pos_;
  remaining_ -= n;
  return remaining_ == 0;
}

void HttpRequestParser::parse_body() {
  if (take_body_bytes()) phase_ = Phase::complete;
}

void HttpRequestParser::parse_chunk_size() {
  // chunk-size [ chunk-ext ] CRLF; extensions are ignored (RFC 9112 7.1.1).
  std::string_view line;
  const Line result = take_line(max_header_bytes_, &line);
  if (result == Line::too_long) fail(400, "a chunk size line is too long");
  if (result != Line::found) return;
  size_t size = 0;
  size_t digits = 0;
  for (; digits < line.size(); ++digits) {
    const int v = hex_value(line[digits]);
    if (v < 0) break;
    if (size > (SIZE_MAX >> 4)) {
      fail(400, "a chunk size is out of range");
      return;
    }
    size = size * 16 + static_cast<size_t>(v);
  }
  const std::string_view extension = line.substr(digits);
  const std::string_view after_space = trim(extension);
  if (digits == 0 || (!after_space.empty() && after_space.front() != ';') ||
      (after_space.empty() && !extension.empty()) || !is_field_value(extension)) {
    fail(400, "malformed chunk size");
    return;
  }
  if (size > max_body_bytes_ - request_.body.size()) {
    fail(413, "the request body is larger than " + std::to_string(max_body_bytes_) + " bytes");
    return;
  }
  remaining_ = size;
  phase_ = size > 0 ? Phase::chunk_data : Phase::trailers;
}

void HttpRequestParser::parse_chunk_data() {
  if (take_body_bytes()) phase_ = Phase::chunk_data_end;
}

void HttpRequestParser::parse_chunk_data_end() {
  if (buffer_.size() - pos_ < 2) {
    if (buffer_.size() > pos_ && buffer_[pos_] != '\r') fail(400, "a chunk is longer than its size");
    return;
  }
  if (buffer_[pos_] != '\r' || buffer_[pos_ + 1] != '\n') {
    fail(400, "a chunk is longer than its size");
    return;
  }
  pos_ += 2;
  scan_ = pos_;
  phase_ = Phase::chunk_size;
}

void HttpRequestParser::parse_trailers() {
  // Trailer fields are read and dropped: nothing here needs them, and a
  // header field must not sneak in after the head.
  std::string_view line;
  const size_t start = pos_;
  const Line result = take_line(max_header_bytes_ - trailer_bytes_, &line);
  if (result == Line::too_long)
    fail(431, "the trailer fields are larger than " + std::to_string(max_header_bytes_) + " bytes");
  if (result != Line::found) return;
  trailer_bytes_ += pos_ - start;
  if (line.empty()) {
    phase_ = Phase::complete;
    return;
  }
  if (!is_field_value(line) || is_space(line.front()) || line.find(':') == std::string_view::npos)
    fail(400, "malformed trailer field");
}

}  // namespace peak_server
