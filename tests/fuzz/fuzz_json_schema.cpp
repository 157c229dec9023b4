// libFuzzer target: any byte string, read as JSON by peak::json, converted by
// json_schema_to_gbnf. A schema is converted or refused with a JsonSchemaError
// ("at POINTER: ..."); a grammar it produces must compile (the converter's
// bounds keep it within the grammar engine's, and it refuses left recursion)
// and run over the input text itself. Anything else (a crash, a hang, a
// sanitizer report, another exception, a grammar the engine refuses) is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "json/json.h"
#include "sampling/grammar.h"
#include "sampling/grammar_matcher.h"
#include "sampling/json_schema.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace json = peak::json;
  namespace sampling = peak::sampling;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  json::Value schema;
  std::string error;
  if (!json::parse(text, &schema, &error)) return 0;
  std::string gbnf;
  try {
    gbnf = sampling::json_schema_to_gbnf(schema);
  } catch (const sampling::JsonSchemaError& e) {
    if (std::string_view(e.what()).rfind("at ", 0) != 0) std::abort();
    return 0;
  }
  try {
    const auto grammar = sampling::Grammar::parse(gbnf);
    sampling::grammar_verdict(grammar, text);
  } catch (const sampling::GrammarError&) {
    std::abort();
  }
  return 0;
}
