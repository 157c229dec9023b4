// JSON in and out. parse_json turns JSON text (e.g. tool arguments) into Values;
// to_json writes a Value as Python's json.dumps does, which is what the tojson
// filter of Hugging Face's chat templates calls.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "jinja/value.h"

namespace peak::jinja {

constexpr int kMaxJsonDepth = 128;

// Strict JSON (RFC 8259), UTF-8, at most kMaxJsonDepth nested arrays and
// objects. Integers that fit int64 become Int, other numbers Float; a repeated
// key keeps its first place and its last value, as Python's json module does.
// Throws JsonError naming the byte offset.
//
// Not peak::json's parser (src/json), because templates see what Python's
// json.loads gives: "1.0" and "1e3" are floats (tojson writes them back as 1.0
// and 1000.0), where peak::json's numbers do not say how they were written (1.0
// is an integer there); and the offsets are json.loads's ("\"abc" fails at 0,
// where the string starts; "1." at 1, where the extra text starts), where
// peak::json names the byte at fault.
Value parse_json(std::string_view text);

// The arguments of json.dumps that tojson passes on.
struct JsonFormat {
  bool ensure_ascii = false;          // escape every non-ASCII character as \uXXXX
  std::optional<std::string> indent;  // none: one line; else a newline and this per level
  std::optional<std::string> item_separator;  // default ", " on one line, "," with indent
  std::string key_separator = ": ";
  bool sort_keys = false;
};

// Throws TemplateError for values JSON cannot hold (undefined, objects,
// functions), as json.dumps raises TypeError; NaN and infinities are written as
// Python writes them (NaN, Infinity, -Infinity). `max_bytes` bounds the text.
std::string to_json(const Value& v, const JsonFormat& format = {}, size_t max_bytes = SIZE_MAX);

}  // namespace peak::jinja
