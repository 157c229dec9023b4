// An incremental HTTP/1.1 request parser (RFC 9112) with no sockets: bytes go
// in as they arrive, in pieces of any size; a whole request, or the status
// code of what is wrong with it, comes out. Bytes after a complete request (a
// pipelined next one) stay buffered for it.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "http_message.h"

namespace peak_server {

class HttpRequestParser {
 public:
  enum class Status {
    incomplete,  // more bytes are needed
    complete,    // a request is ready: take_request()
    failed,      // the request is malformed or over a limit: error_status(), error_message()
  };

  // Heads (request line + header fields + the empty line) of more than
  // max_header_bytes are refused with 431, bodies of more than max_body_bytes
  // with 413; both limits are inclusive.
  HttpRequestParser(size_t max_header_bytes, size_t max_body_bytes);

  // Appends `bytes` and parses as far as they go. Once complete, nothing more
  // is parsed until take_request(); once failed, the parser stays failed.
  Status feed(std::string_view bytes);
  Status status() const;

  // The head of the current request has been parsed; its body may still be arriving.
  bool head_complete() const { return head_complete_; }
  // The head asked for `100 Continue` before the client sends the body (HTTP/1.1 only).
  bool expects_continue() const { return expects_continue_; }
  // Whether the connection stays open after the current request (after its
  // head is parsed): HTTP/1.1 unless `Connection: close`, HTTP/1.0 with `Connection: keep-alive`.
  bool keep_alive() const { return keep_alive_; }
  // The minor version of the current request's HTTP/1.x (after its head is parsed).
  int minor_version() const { return minor_version_; }
  // Bytes received but not yet part of a parsed request (the start of the next one).
  bool has_buffered_bytes() const { return pos_ < buffer_.size(); }

  // Moves the complete request out and starts on the next one; call feed({})
  // to parse what is already buffered of it. peer is left empty.
  HttpRequest take_request();

  // After failed: 400, 413, 417, 431, 501 or 505, and why, for the answer.
  int error_status() const { return error_status_; }
  const std::string& error_message() const { return error_message_; }

 private:
  enum class Phase { head, body, chunk_size, chunk_data, chunk_data_end, trailers, complete, failed };
  enum class Line { found, incomplete, too_long, bad };

  Line take_line(size_t max_bytes, std::string_view* line);
  void parse_head();
  bool parse_request_line(std::string_view line);
  bool parse_header_line(std::string_view line);
  bool finish_head();
  bool take_body_bytes();  // of the remaining_; true when they are all in
  void parse_body();
  void parse_chunk_size();
  void parse_chunk_data();
  void parse_chunk_data_end();
  void parse_trailers();
  bool fail(int status, std::string message);

  size_t max_header_bytes_;
  size_t max_body_bytes_;
  std::string buffer_;  // received bytes; [0, pos_) are parsed
  size_t pos_ = 0;
  size_t scan_ = 0;  // where the search for the next '\n' resumes (>= pos_)
  Phase phase_ = Phase::head;
  HttpRequest request_;
  bool have_request_line_ = false;
  bool head_complete_ = false;
  bool expects_continue_ = false;
  bool keep_alive_ = false;
  int minor_version_ = 1;
  size_t head_bytes_ = 0;     // of the head, counting its line ends
  size_t trailer_bytes_ = 0;  // of a chunked body's trailer section
  size_t remaining_ = 0;      // bytes left of the Content-Length body or of the current chunk
  int error_status_ = 0;
  std::string error_message_;
};

}  // namespace peak_server
