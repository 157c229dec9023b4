// Python's str semantics over UTF-8 bytes: templates index, slice, strip, split
// and case-map strings by code point, as Python does. Bytes that are not valid
// UTF-8 decode to one code point each (U+DC80..U+DCFF, Python's surrogateescape)
// and encode back to the same byte, so no operation can lose or invent bytes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace peak::jinja::text {

std::vector<char32_t> decode(std::string_view s);
std::string encode(const std::vector<char32_t>& cps, size_t begin, size_t end);
void append_utf8(std::string& out, char32_t cp);
size_t length(std::string_view s);  // in code points

bool is_ascii(std::string_view s);
bool is_space(char32_t cp);  // str.isspace: ASCII and Unicode white space
bool is_alpha(char32_t cp);  // letters of the scripts to_upper/to_lower know, and CJK
bool is_digit(char32_t cp);  // ASCII digits
// Simple case mapping for ASCII, Latin-1, Latin Extended-A, Greek and Cyrillic;
// other code points map to themselves (Python maps a few to several letters,
// e.g. "ß".upper() == "SS", which this does not).
char32_t to_upper(char32_t cp);
char32_t to_lower(char32_t cp);

enum class Case { Upper, Lower, Title, Capitalize };
std::string change_case(std::string_view s, Case to);

// str.strip / lstrip / rstrip: `chars` null strips white space.
std::string strip(std::string_view s, const std::string* chars, bool left, bool right);
// str.split / rsplit: `sep` null splits on runs of white space; maxsplit < 0 is unlimited.
std::vector<std::string> split(std::string_view s, const std::string* sep, int64_t maxsplit, bool from_right);
// str.splitlines() without the line ends.
std::vector<std::string> split_lines(std::string_view s);
// str.replace with count < 0 meaning all; "" as `from` inserts between code points.
std::string replace(std::string_view s, std::string_view from, std::string_view to, int64_t count);

// Python's repr(float): the shortest text that reads back as the same double,
// in fixed notation for exponents -4..15 and with ".0" on integral values.
std::string float_repr(double v);
// Python's repr(str): single quotes unless the text holds ' and no ".
std::string string_repr(std::string_view s);

}  // namespace peak::jinja::text
