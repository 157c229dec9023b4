// libFuzzer target: any byte string, read by the JSON parser of src/json,
// must parse or be refused with a positioned message; what parses must write
// as valid JSON that parses back to an equal value (parse -> write -> parse),
// and writing that value again must give the same text. Anything else (a
// crash, a hang, a sanitizer report, a broken round trip) is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "json/json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace json = peak::json;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  json::Value value;
  std::string error;
  if (!json::parse(text, &value, &error)) {
    if (error.rfind("at byte ", 0) != 0) std::abort();
    return 0;
  }
  const std::string written = json::write(value);
  json::Value again;
  if (!json::parse(written, &again, &error)) std::abort();
  if (again != value) std::abort();
  if (json::write(again) != written) std::abort();
  // Any bytes as a string value write as JSON that parses back to valid UTF-8.
  std::string literal;
  json::write_string(literal, text);
  if (!json::parse(literal, &again, &error) || !again.is_string()) std::abort();
  return 0;
}
