// Grammars (peak.Grammar): compiled from GBNF or a JSON Schema, checking texts.
#include <jni.h>

#include <string>

#include <peak/peak.h>

#include "jni_exports.h"
#include "jni_support.h"

using namespace peak_jni;

// Grammar.Verdict's ordinals are peak_grammar_verdict's values.
static_assert(PEAK_GRAMMAR_COMPLETE == 0 && PEAK_GRAMMAR_PREFIX == 1 && PEAK_GRAMMAR_REJECTED == 2,
              "Grammar.Verdict mirrors peak_grammar_verdict");

extern "C" {

JNIEXPORT jlong JNICALL Java_peak_Native_grammarCreate(JNIEnv* env, jclass, jstring gbnf, jstring root) {
  return guarded(env, jlong{0}, [&]() -> jlong {
    std::string c_gbnf;
    std::string c_root;
    if (!c_string_from_java(env, gbnf, "gbnf", &c_gbnf) || (root && !c_string_from_java(env, root, "root", &c_root))) {
      return 0;
    }
    peak_grammar* grammar = nullptr;
    if (!check(env, peak_grammar_create(c_gbnf.c_str(), root ? c_root.c_str() : nullptr, &grammar))) return 0;
    return to_handle(grammar);
  });
}

JNIEXPORT jlong JNICALL Java_peak_Native_grammarFromJsonSchema(JNIEnv* env, jclass, jstring schema) {
  return guarded(env, jlong{0}, [&]() -> jlong {
    std::string c_schema;
    if (!c_string_from_java(env, schema, "schema", &c_schema)) return 0;
    peak_grammar* grammar = nullptr;
    if (!check(env, peak_grammar_from_json_schema(c_schema.c_str(), &grammar))) return 0;
    return to_handle(grammar);
  });
}

JNIEXPORT void JNICALL Java_peak_Native_grammarFree(JNIEnv*, jclass, jlong grammar) {
  peak_grammar_free(from_handle<peak_grammar>(grammar));
}

JNIEXPORT jint JNICALL Java_peak_Native_grammarCheck(JNIEnv* env, jclass, jlong grammar, jstring text) {
  return guarded(env, jint{0}, [&]() -> jint {
    std::string c_text;  // may hold NUL: the length counts
    if (!utf8_from_java(env, text, "text", &c_text)) return 0;
    peak_grammar_verdict verdict = PEAK_GRAMMAR_REJECTED;
    if (!check(env, peak_grammar_check(from_handle<peak_grammar>(grammar), c_text.data(), c_text.size(), &verdict))) {
      return 0;
    }
    return static_cast<jint>(verdict);
  });
}

}  // extern "C"
