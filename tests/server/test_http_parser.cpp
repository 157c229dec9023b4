// The HTTP/1.1 request parser of `peak serve` (tools/server/http_parser.h),
// against the rules of RFC 9110 and RFC 9112, fed in pieces of every size.
#include "http_parser.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace peak_server {
namespace {

using Status = HttpRequestParser::Status;

struct Parsed {
  std::vector<HttpRequest> requests;
  std::vector<bool> keep_alive;
  Status status = Status::incomplete;  // after the last piece
  int error = 0;
};

// Feeds `input` in pieces of `piece` bytes, taking every request that completes.
Parsed parse(const std::string& input, size_t max_header = 1024, size_t max_body = 1024, size_t piece = 0) {
  HttpRequestParser parser(max_header, max_body);
  Parsed out;
  if (piece == 0) piece = input.size() + 1;
  for (size_t at = 0; at < input.size() || at == 0; at += piece) {
    Status s = parser.feed(std::string_view(input).substr(at, piece));
    while (s == Status::complete) {
      out.keep_alive.push_back(parser.keep_alive());
      out.requests.push_back(parser.take_request());
      s = parser.feed({});
    }
    out.status = s;
    if (s == Status::failed) break;
  }
  out.error = parser.error_status();
  return out;
}

// The status a single malformed request is refused with (0: it parsed).
int error_of(const std::string& input) {
  const Parsed p = parse(input);
  if (p.status == Status::failed) return p.error;
  return p.requests.size() == 1 ? 0 : -1;
}

std::string get(const std::string& request_line, const std::string& headers = "Host: h\r\n") {
  return request_line + "\r\n" + headers + "\r\n";
}

TEST(HttpParser, ParsesARequestLineAndHeaders) {
  const Parsed p = parse(
      "POST /v1/chat/completions?stream=1&x=a?b HTTP/1.1\r\nHost: localhost:8080\r\n"
      "Content-Type:application/json  \r\nX-Empty:\r\nX-Tab:\t a\tb \t\r\nContent-Length: 2\r\n\r\n{}");
  ASSERT_EQ(p.requests.size(), 1u);
  const HttpRequest& r = p.requests[0];
  EXPECT_EQ(r.method, "POST");
  EXPECT_EQ(r.path, "/v1/chat/completions");
  EXPECT_EQ(r.query, "stream=1&x=a?b");
  ASSERT_EQ(r.headers.size(), 5u);
  EXPECT_EQ(r.headers[0].name, "host");
  EXPECT_EQ(r.headers[1].name, "content-type");
  EXPECT_EQ(*r.header("content-type"), "application/json");
  EXPECT_EQ(*r.header("x-empty"), "");
  EXPECT_EQ(*r.header("x-tab"), "a\tb");
  EXPECT_EQ(r.body, "{}");
  EXPECT_EQ(p.status, Status::incomplete);
}

TEST(HttpParser, MethodIsCaseSensitiveAndAnyToken) {
  const Parsed p = parse(get("get /a? HTTP/1.1") + get("M-SEARCH / HTTP/1.1"));
  ASSERT_EQ(p.requests.size(), 2u);
  EXPECT_EQ(p.requests[0].method, "get");
  EXPECT_EQ(p.requests[0].path, "/a");
  EXPECT_EQ(p.requests[0].query, "");
  EXPECT_EQ(p.requests[1].method, "M-SEARCH");
}

TEST(HttpParser, IgnoresEmptyLinesBeforeTheRequestLine) {
  const Parsed p = parse("\r\n\r\n" + get("GET / HTTP/1.1"));
  ASSERT_EQ(p.requests.size(), 1u);
  EXPECT_EQ(p.requests[0].path, "/");
}

TEST(HttpParser, RefusesMalformedRequestLines) {
  EXPECT_EQ(error_of(get("GET http://example.com/ HTTP/1.1")), 400);  // absolute-form
  EXPECT_EQ(error_of(get("OPTIONS * HTTP/1.1")), 400);                // asterisk-form
  EXPECT_EQ(error_of(get("CONNECT example.com:443 HTTP/1.1")), 400);  // authority-form
  EXPECT_EQ(error_of(get("GET /")), 400);                             // HTTP/0.9
  EXPECT_EQ(error_of(get("GET  / HTTP/1.1")), 400);
  EXPECT_EQ(error_of(get("GET / HTTP/1.1 ")), 400);
  EXPECT_EQ(error_of(get("GET /a b HTTP/1.1")), 400);
  EXPECT_EQ(error_of(get(" GET / HTTP/1.1")), 400);
  EXPECT_EQ(error_of(get("G(T / HTTP/1.1")), 400);
  EXPECT_EQ(error_of(get("GET\t/ HTTP/1.1")), 400);
  EXPECT_EQ(error_of(get("GET /\x7f HTTP/1.1")), 400);
  EXPECT_EQ(error_of(get("GET /\xc3\xa9 HTTP/1.1")), 400);
  EXPECT_EQ(error_of(get(std::string("GET /\0 HTTP/1.1", 16))), 400);
  EXPECT_EQ(error_of(get("GET / http/1.1")), 400);
  EXPECT_EQ(error_of(get("GET / HTTP/1.10")), 400);
  EXPECT_EQ(error_of(get("GET / HTTP/1")), 400);
  EXPECT_EQ(error_of(get("GET / HTTP/2.0")), 505);
  EXPECT_EQ(error_of(get("GET / HTTP/1.2")), 505);
  EXPECT_EQ(error_of(get("GET / HTTP/0.9")), 505);
}

TEST(HttpParser, RefusesMalformedHeaderFields) {
  EXPECT_EQ(error_of(get("GET / HTTP/1.1", "Host: h\r\nX-A: a\r\n b\r\n")), 400);  // obs-fold
  EXPECT_EQ(error_of(get("GET / HTTP/1.1", "Host: h\r\n\tX-A: a\r\n")), 400);
  EXPECT_EQ(error_of(get("GET / HTTP/1.1", "Host : h\r\n")), 400);  // space before the colon
  EXPECT_EQ(error_of(get("GET / HTTP/1.1", "Host\t: h\r\n")), 400);
  EXPECT_EQ(error_of(get("GET / HTTP/1.1", "Host: h\r\nX-A a\r\n")), 400);
  EXPECT_EQ(error_of(get("GET / HTTP/1.1", "Host: h\r\n: a\r\n")), 400);
  EXPECT_EQ(error_of(get("GET / HTTP/1.1", "Host: h\r\nX[A]: a\r\n")), 400);
  EXPECT_EQ(error_of(get("GET / HTTP/1.1", "Host: h\r\nX-A: a\x01z\r\n")), 400);
  EXPECT_EQ(error_of(get("GET / HTTP/1.1", "Host: h\r\nX-A: a\x7fz\r\n")), 400);
  EXPECT_EQ(error_of(get("GET / HTTP/1.1", std::string("Host: h\r\nX-A: a\0z\r\n", 20))), 400);
  EXPECT_EQ(error_of(get("GET / HTTP/1.1", "Host: h\r\nX-A: a\rz\r\n")), 400);  // bare CR
  EXPECT_EQ(error_of("GET / HTTP/1.1\nHost: h\r\n\r\n"), 400);                   // bare LF
  EXPECT_EQ(error_of("GET / HTTP/1.1\r\nHost: h\r\n\n"), 400);
  EXPECT_EQ(error_of("\n" + get("GET / HTTP/1.1")), 400);
  // obs-text in a value is allowed (RFC 9110 5.5).
  EXPECT_EQ(error_of(get("GET / HTTP/1.1", "Host: h\r\nX-A: caf\xc3\xa9\r\n")), 0);
}

TEST(HttpParser, Http11NeedsExactlyOneHost) {
  EXPECT_EQ(error_of(get("GET / HTTP/1.1", "")), 400);
  EXPECT_EQ(error_of(get("GET / HTTP/1.1", "Host: a\r\nHost: b\r\n")), 400);
  EXPECT_EQ(error_of(get("GET / HTTP/1.0", "")), 0);
}

TEST(HttpParser, ContentLength) {
  const std::string head = "POST /x HTTP/1.1\r\nHost: h\r\n";
  Parsed p = parse(head + "Content-Length: 5\r\n\r\nhello");
  ASSERT_EQ(p.requests.size(), 1u);
  EXPECT_EQ(p.requests[0].body, "hello");
  p = parse(head + "Content-Length: 0005\r\nContent-Length: 5\r\n\r\nhello");
  ASSERT_EQ(p.requests.size(), 1u);
  EXPECT_EQ(p.requests[0].body, "hello");
  for (const char* bad : {"+5", "-1", "0x5", "5 5", "5,5", "", "5.0", "99999999999999999999999"})
    EXPECT_EQ(error_of(head + "Content-Length: " + bad + "\r\n\r\nhello"), 400) << bad;
  EXPECT_EQ(error_of(head + "Content-Length: 5\r\nContent-Length: 6\r\n\r\nhello!"), 400);
}

TEST(HttpParser, NoBodyFraming) {
  Parsed p = parse("POST /x HTTP/1.1\r\nHost: h\r\n\r\n");
  ASSERT_EQ(p.requests.size(), 1u);
  EXPECT_EQ(p.requests[0].body, "");
  p = parse(get("GET / HTTP/1.1"));
  ASSERT_EQ(p.requests.size(), 1u);
  EXPECT_EQ(p.requests[0].body, "");
}

TEST(HttpParser, RefusesAmbiguousFramingAsSmuggling) {
  const std::string head = "POST /x HTTP/1.1\r\nHost: h\r\n";
  const std::string chunked = "5\r\nhello\r\n0\r\n\r\n";
  EXPECT_EQ(error_of(head + "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked), 400);
  EXPECT_EQ(error_of(head + "Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n" + chunked), 400);
  EXPECT_EQ(error_of(head + "Transfer-Encoding: chunked, chunked\r\n\r\n" + chunked), 400);
  EXPECT_EQ(error_of(head + "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked), 400);
  EXPECT_EQ(error_of(head + "Transfer-Encoding: chunked, gzip\r\n\r\n" + chunked), 400);
  EXPECT_EQ(error_of(head + "Transfer-Encoding: ,\r\n\r\n" + chunked), 400);
  EXPECT_EQ(error_of("POST /x HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked), 400);
  EXPECT_EQ(error_of(head + "Transfer-Encoding: gzip\r\n\r\n"), 501);
  EXPECT_EQ(error_of(head + "Transfer-Encoding: gzip, chunked\r\n\r\n" + chunked), 501);
  EXPECT_EQ(error_of(head + "Transfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked), 501);
  EXPECT_EQ(error_of(head + "Transfer-Encoding: xchunked\r\n\r\n" + chunked), 501);
  EXPECT_EQ(error_of(head + "Transfer-Encoding:  Chunked \r\n\r\n" + chunked), 0);
}

const std::string kChunkedRequest =
    "POST /v1/completions HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
    "4\r\nWiki\r\n"
    "6;name=value;flag\r\npedia \r\n"
    "E ; ext\r\nin \r\n\r\nchunks.\r\n"
    "0\r\nExpires: never\r\nX-Trailer: dropped\r\n\r\n";
const std::string kChunkedBody = "Wikipedia in \r\n\r\nchunks.";

TEST(HttpParser, ChunkedBodyAtEverySplit) {
  const Parsed whole = parse(kChunkedRequest);
  ASSERT_EQ(whole.requests.size(), 1u);
  EXPECT_EQ(whole.requests[0].body, kChunkedBody);
  EXPECT_EQ(whole.requests[0].header("expires"), nullptr);  // trailers are dropped
  for (size_t split = 0; split <= kChunkedRequest.size(); ++split) {
    HttpRequestParser parser(1024, 1024);
    EXPECT_EQ(parser.feed(kChunkedRequest.substr(0, split)), split == kChunkedRequest.size() ? Status::complete
                                                                                             : Status::incomplete)
        << split;
    ASSERT_EQ(parser.feed(kChunkedRequest.substr(split)), Status::complete) << split;
    const HttpRequest r = parser.take_request();
    EXPECT_EQ(r.body, kChunkedBody) << split;
    EXPECT_EQ(r.headers.size(), 2u) << split;
  }
  for (size_t piece : {1, 2, 3, 7}) {
    const Parsed p = parse(kChunkedRequest, 1024, 1024, piece);
    ASSERT_EQ(p.requests.size(), 1u) << piece;
    EXPECT_EQ(p.requests[0].body, kChunkedBody) << piece;
  }
}

TEST(HttpParser, RefusesMalformedChunks) {
  const std::string head = "POST /x HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n";
  EXPECT_EQ(error_of(head + "5\r\nhelloX\r\n0\r\n\r\n"), 400);  // data longer than its size
  EXPECT_EQ(error_of(head + "5\r\nhello\n0\r\n\r\n"), 400);
  EXPECT_EQ(error_of(head + "g\r\nhello\r\n0\r\n\r\n"), 400);
  EXPECT_EQ(error_of(head + "\r\nhello\r\n0\r\n\r\n"), 400);
  EXPECT_EQ(error_of(head + "-5\r\nhello\r\n0\r\n\r\n"), 400);
  EXPECT_EQ(error_of(head + "0x5\r\nhello\r\n0\r\n\r\n"), 400);
  EXPECT_EQ(error_of(head + "5 x\r\nhello\r\n0\r\n\r\n"), 400);
  EXPECT_EQ(error_of(head + "5 \r\nhello\r\n0\r\n\r\n"), 400);
  EXPECT_EQ(error_of(head + "5\nhello\r\n0\r\n\r\n"), 400);
  EXPECT_EQ(error_of(head + "5;a\x01\r\nhello\r\n0\r\n\r\n"), 400);
  EXPECT_EQ(error_of(head + "0\r\n folded\r\n\r\n"), 400);
  EXPECT_EQ(error_of(head + "0\r\nno colon\r\n\r\n"), 400);
  // 2^64 + 5 would wrap to 5 in 64-bit arithmetic.
  EXPECT_EQ(error_of(head + "10000000000000005\r\nhello\r\n0\r\n\r\n"), 400);
  EXPECT_EQ(error_of(head + "00000000000000000000000005\r\nhello\r\n0\r\n\r\n"), 0);  // leading zeros are fine
}

// A head of exactly `size` bytes.
std::string head_of_size(size_t size) {
  std::string head = "GET / HTTP/1.1\r\nHost: h\r\nX-Pad: \r\n\r\n";
  head.insert(head.size() - 4, size - head.size(), 'p');
  return head;
}

TEST(HttpParser, HeadLimitIsInclusive) {
  EXPECT_EQ(parse(head_of_size(200), 200).requests.size(), 1u);
  Parsed p = parse(head_of_size(201), 200);
  EXPECT_EQ(p.status, Status::failed);
  EXPECT_EQ(p.error, 431);
  // Known as soon as the bytes pass the limit, without waiting for the end.
  HttpRequestParser parser(200, 1024);
  EXPECT_EQ(parser.feed(head_of_size(300).substr(0, 200)), Status::incomplete);
  EXPECT_EQ(parser.feed("p"), Status::failed);
  EXPECT_EQ(parser.error_status(), 431);
  // Empty lines before the request line count too.
  HttpRequestParser blank(200, 1024);
  std::string blanks;
  for (int i = 0; i < 101; ++i) blanks += "\r\n";
  EXPECT_EQ(blank.feed(blanks), Status::failed);
  EXPECT_EQ(blank.error_status(), 431);
}

TEST(HttpParser, BodyLimitIsInclusive) {
  const std::string head = "POST /x HTTP/1.1\r\nHost: h\r\n";
  Parsed p = parse(head + "Content-Length: 100\r\n\r\n" + std::string(100, 'b'), 1024, 100);
  ASSERT_EQ(p.requests.size(), 1u);
  EXPECT_EQ(p.requests[0].body.size(), 100u);
  // Known from Content-Length alone, before any of the body.
  HttpRequestParser parser(1024, 100);
  EXPECT_EQ(parser.feed(head + "Content-Length: 101\r\n\r\n"), Status::failed);
  EXPECT_EQ(parser.error_status(), 413);
  EXPECT_TRUE(parser.head_complete());

  const std::string chunked = head + "Transfer-Encoding: chunked\r\n\r\n";
  p = parse(chunked + "32\r\n" + std::string(50, 'a') + "\r\n32\r\n" + std::string(50, 'b') + "\r\n0\r\n\r\n", 1024, 100);
  ASSERT_EQ(p.requests.size(), 1u);
  EXPECT_EQ(p.requests[0].body, std::string(50, 'a') + std::string(50, 'b'));
  // One byte over: refused at the chunk size that passes the limit, before its data.
  HttpRequestParser over(1024, 100);
  EXPECT_EQ(over.feed(chunked + "32\r\n" + std::string(50, 'a') + "\r\n"), Status::incomplete);
  EXPECT_EQ(over.feed("33\r\n"), Status::failed);
  EXPECT_EQ(over.error_status(), 413);
  HttpRequestParser huge(1024, 100);
  EXPECT_EQ(huge.feed(chunked + "ffffffffffffffff\r\n"), Status::failed);
  EXPECT_EQ(huge.error_status(), 413);
}

TEST(HttpParser, TrailersCountAgainstTheHeadLimit) {
  const std::string chunked = "POST /x HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n";
  Parsed p = parse(chunked + "X-T: " + std::string(500, 't') + "\r\n\r\n", 200);
  EXPECT_EQ(p.status, Status::failed);
  EXPECT_EQ(p.error, 431);
}

TEST(HttpParser, PipelinedRequestsStayForTheNext) {
  const std::string first = "POST /a HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabc";
  const std::string second = "POST /b HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nde\r\n0\r\n\r\n";
  const std::string third = get("GET /c HTTP/1.1");
  HttpRequestParser parser(1024, 1024);
  ASSERT_EQ(parser.feed(first + second + third.substr(0, 10)), Status::complete);
  EXPECT_TRUE(parser.has_buffered_bytes());
  HttpRequest r = parser.take_request();
  EXPECT_EQ(r.path, "/a");
  EXPECT_EQ(r.body, "abc");
  ASSERT_EQ(parser.feed({}), Status::complete);
  r = parser.take_request();
  EXPECT_EQ(r.path, "/b");
  EXPECT_EQ(r.body, "de");
  EXPECT_EQ(parser.feed({}), Status::incomplete);
  EXPECT_TRUE(parser.has_buffered_bytes());
  ASSERT_EQ(parser.feed(third.substr(10)), Status::complete);
  r = parser.take_request();
  EXPECT_EQ(r.path, "/c");
  EXPECT_EQ(r.body, "");
  EXPECT_FALSE(parser.has_buffered_bytes());
  // Each piece size gives the same three requests.
  for (size_t piece = 1; piece < 20; ++piece) {
    const Parsed p = parse(first + second + third, 1024, 1024, piece);
    ASSERT_EQ(p.requests.size(), 3u) << piece;
    EXPECT_EQ(p.requests[1].body, "de") << piece;
  }
}

TEST(HttpParser, KeepAliveByVersion) {
  auto keep_alive = [](const std::string& request) {
    const Parsed p = parse(request);
    EXPECT_EQ(p.keep_alive.size(), 1u) << request;
    return !p.keep_alive.empty() && p.keep_alive[0];
  };
  EXPECT_TRUE(keep_alive(get("GET / HTTP/1.1")));
  EXPECT_FALSE(keep_alive(get("GET / HTTP/1.1", "Host: h\r\nConnection: close\r\n")));
  EXPECT_FALSE(keep_alive(get("GET / HTTP/1.1", "Host: h\r\nConnection: Upgrade, CLOSE\r\n")));
  EXPECT_FALSE(keep_alive(get("GET / HTTP/1.1", "Host: h\r\nConnection: keep-alive\r\nConnection: close\r\n")));
  EXPECT_TRUE(keep_alive(get("GET / HTTP/1.1", "Host: h\r\nConnection: keep-alive\r\n")));
  EXPECT_TRUE(keep_alive(get("GET / HTTP/1.1", "Host: h\r\nConnection: closed\r\n")));
  EXPECT_FALSE(keep_alive(get("GET / HTTP/1.0", "")));
  EXPECT_TRUE(keep_alive(get("GET / HTTP/1.0", "Connection: Keep-Alive\r\n")));
  EXPECT_FALSE(keep_alive(get("GET / HTTP/1.0", "Connection: keep-alive, close\r\n")));
}

TEST(HttpParser, ExpectContinue) {
  const std::string head = "POST /x HTTP/1.1\r\nHost: h\r\nExpect: 100-Continue\r\nContent-Length: 5\r\n\r\n";
  HttpRequestParser parser(1024, 1024);
  EXPECT_EQ(parser.feed(head.substr(0, head.size() - 1)), Status::incomplete);
  EXPECT_FALSE(parser.head_complete());
  EXPECT_EQ(parser.feed("\n"), Status::incomplete);
  EXPECT_TRUE(parser.head_complete());
  EXPECT_TRUE(parser.expects_continue());
  EXPECT_EQ(parser.feed("hello"), Status::complete);
  EXPECT_EQ(parser.take_request().body, "hello");
  EXPECT_FALSE(parser.expects_continue());
  // Too large: refused before the client sends the body.
  HttpRequestParser small(1024, 4);
  EXPECT_EQ(small.feed(head), Status::failed);
  EXPECT_EQ(small.error_status(), 413);
  // HTTP/1.0 has no 100 Continue; other expectations are refused.
  HttpRequestParser old(1024, 1024);
  EXPECT_EQ(old.feed("POST /x HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n"), Status::incomplete);
  EXPECT_TRUE(old.head_complete());
  EXPECT_FALSE(old.expects_continue());
  EXPECT_EQ(error_of(get("GET / HTTP/1.1", "Host: h\r\nExpect: 200-ok\r\n")), 417);
}

TEST(HttpParser, StaysFailed) {
  HttpRequestParser parser(1024, 1024);
  EXPECT_EQ(parser.feed("GET / HTTP/9.9\r\n"), Status::failed);
  EXPECT_EQ(parser.error_status(), 505);
  EXPECT_FALSE(parser.error_message().empty());
  EXPECT_EQ(parser.feed(get("GET / HTTP/1.1")), Status::failed);
  EXPECT_EQ(parser.status(), Status::failed);
  EXPECT_EQ(parser.error_status(), 505);
}

}  // namespace
}  // namespace peak_server
