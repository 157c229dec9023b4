// peak_grammar_*: grammars an application checks texts against, and the
// compilation of the grammars the sampler parameters give.
#include <memory>
#include <string>

#include "capi/capi_guard.h"
#include "capi/capi_handles.h"
#include "sampling/grammar.h"
#include "sampling/grammar_matcher.h"
#include "sampling/json_schema.h"

struct peak_grammar {
  std::shared_ptr<const peak::sampling::Grammar> grammar;
};

namespace peak::capi {

std::shared_ptr<const sampling::Grammar> compile_gbnf(const char* gbnf, const char* root, const std::string& what) {
  try {
    return sampling::Grammar::parse(gbnf, root ? root : "root");
  } catch (const sampling::GrammarError& e) {
    throw std::invalid_argument(what + ": " + e.what());
  }
}

std::shared_ptr<const sampling::Grammar> compile_json_schema(const char* json_schema, const std::string& what) {
  std::string gbnf;
  try {
    gbnf = sampling::json_schema_to_gbnf(json_schema);
  } catch (const sampling::JsonSchemaError& e) {
    throw std::invalid_argument(what + ": " + e.what());
  }
  return compile_gbnf(gbnf.c_str(), "root", what + " (its grammar)");
}

std::shared_ptr<const sampling::Grammar> sampler_grammar(const peak_sampler_params& p) {
  if (p.json_schema && (p.grammar || p.grammar_root)) {
    throw std::invalid_argument(std::string("peak_sampler_params: ") + (p.grammar ? "grammar" : "grammar_root") +
                                " and json_schema are both set; give a grammar or a JSON Schema");
  }
  if (p.json_schema) return compile_json_schema(p.json_schema, "peak_sampler_params.json_schema");
  if (p.grammar) return compile_gbnf(p.grammar, p.grammar_root, "peak_sampler_params.grammar");
  return nullptr;
}

}  // namespace peak::capi

namespace {

using peak::capi::fail;
using peak::capi::guarded;

// Makes the handle for the grammar `compile` returns.
template <typename Compile>
peak_status create_grammar(peak_grammar** out, Compile&& compile) {
  return guarded([&] {
    auto g = std::make_unique<peak_grammar>();
    g->grammar = compile();
    *out = g.release();
    return PEAK_OK;
  });
}

}  // namespace

extern "C" {

peak_status peak_grammar_create(const char* gbnf, const char* root, peak_grammar** out) {
  PEAK_CHECK_ARG(out, "peak_grammar_create: out");
  *out = nullptr;
  PEAK_CHECK_ARG(gbnf, "peak_grammar_create: gbnf");
  return create_grammar(out, [&] { return peak::capi::compile_gbnf(gbnf, root, "peak_grammar_create"); });
}

peak_status peak_grammar_from_json_schema(const char* json_schema, peak_grammar** out) {
  PEAK_CHECK_ARG(out, "peak_grammar_from_json_schema: out");
  *out = nullptr;
  PEAK_CHECK_ARG(json_schema, "peak_grammar_from_json_schema: json_schema");
  return create_grammar(out,
                        [&] { return peak::capi::compile_json_schema(json_schema, "peak_grammar_from_json_schema"); });
}

void peak_grammar_free(peak_grammar* grammar) { delete grammar; }

peak_status peak_grammar_check(const peak_grammar* grammar, const char* text, size_t length,
                               peak_grammar_verdict* verdict) {
  PEAK_CHECK_ARG(grammar, "peak_grammar_check: grammar");
  PEAK_CHECK_ARG(verdict, "peak_grammar_check: verdict");
  if (!text && length > 0) return fail(PEAK_ERR_INVALID_ARGUMENT, "peak_grammar_check: text is NULL");
  return guarded([&] {
    switch (peak::sampling::grammar_verdict(grammar->grammar, std::string_view(text ? text : "", length))) {
      case peak::sampling::GrammarVerdict::kComplete: *verdict = PEAK_GRAMMAR_COMPLETE; break;
      case peak::sampling::GrammarVerdict::kPrefix: *verdict = PEAK_GRAMMAR_PREFIX; break;
      case peak::sampling::GrammarVerdict::kRejected: *verdict = PEAK_GRAMMAR_REJECTED; break;
      case peak::sampling::GrammarVerdict::kOverLimit:
        return fail(PEAK_ERR_UNSUPPORTED,
                    "peak_grammar_check: the grammar is too ambiguous: following every parse of the text took more "
                    "than the matcher's " +
                        std::to_string(peak::sampling::kGrammarMaxStacks) + " stacks, " +
                        std::to_string(peak::sampling::kGrammarMaxStackCells) + " positions or " +
                        std::to_string(peak::sampling::kGrammarMaxExpansionSteps) + " steps per character");
    }
    return PEAK_OK;
  });
}

}  // extern "C"
