/* Sessions under a grammar, from C on stories260K: each answer is a string of
   the grammar (checked here against the grammar's few strings, written out),
   however often it is written again, and peak_session_set_sampler swaps it. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "capi_test.h"
#include "peak/peak.h"

static int one_of(const char* text, const char* const* strings, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (strcmp(text, strings[i]) == 0) return 1;
  }
  fprintf(stderr, "  '%s' is none of the grammar's strings\n", text);
  return 0;
}

static const char* const kAnimals[] = {"Tom ran.", "Tom sat.", " Tom ran.", " Tom sat."};
static const char* const kColours[] = {"red", "blue"};

enum turn_kind { TURN_CHAT, TURN_REGENERATE, TURN_EDIT };

/* One turn; its streamed text must be one of `strings` and it stops where the grammar ends. */
static void check_turn(peak_session* s, enum turn_kind kind, const char* const* strings, size_t n) {
  struct text_buf answer;
  answer.length = 0;
  answer.text[0] = '\0';
  peak_generate_params gp = peak_generate_default_params();
  gp.max_tokens = 24;
  gp.on_text = collect_text;
  gp.user_data = &answer;
  peak_generate_result r;
  memset(&r, 0, sizeof r);
  r.struct_size = sizeof r;
  const char* line = "Once upon a time there was a dog named Max.";
  peak_status status = PEAK_OK;
  switch (kind) {
    case TURN_CHAT: status = peak_session_chat(s, line, strlen(line), &gp, &r); break;
    case TURN_REGENERATE: status = peak_session_regenerate(s, &gp, &r); break;
    case TURN_EDIT: status = peak_session_edit_last(s, "Lily had a cat.", strlen("Lily had a cat."), &gp, &r); break;
  }
  CHECK(status == PEAK_OK);
  CHECK(one_of(answer.text, strings, n));
  CHECK(r.stop_reason == PEAK_STOP_EOG);
}

int main(void) {
  peak_model* m = NULL;
  CHECK(peak_model_load(PEAK_SHARED_DIR "/models/stories260K.gguf", NULL, &m) == PEAK_OK);

  peak_session_params p = peak_session_default_params();
  p.chat_template = "raw";
  p.mode = PEAK_MEMORY_WINDOW;
  p.recent_max = 256;
  p.headroom = 32;
  p.n_threads = 1;
  p.sampler.temperature = 0.8f;
  p.sampler.seed = 7;
  p.sampler.grammar = "root ::= \" \"? \"Tom \" (\"ran\" | \"sat\") \".\"\n";
  peak_session* s = NULL;
  CHECK(peak_session_create(m, &p, &s) == PEAK_OK);
  if (!s) return capi_test_summary("test_capi_session_grammar");

  check_turn(s, TURN_CHAT, kAnimals, 4);
  check_turn(s, TURN_CHAT, kAnimals, 4); /* the grammar starts again with each answer */
  check_turn(s, TURN_REGENERATE, kAnimals, 4);
  check_turn(s, TURN_EDIT, kAnimals, 4);
  peak_session_message answer;
  memset(&answer, 0, sizeof answer);
  answer.struct_size = sizeof answer;
  CHECK(peak_session_get_message(s, 3, &answer) == PEAK_OK);
  CHECK(answer.role == PEAK_ROLE_ASSISTANT && one_of(answer.text, kAnimals, 4));

  /* Another grammar from the next answer on; one that does not compile changes nothing. */
  peak_sampler_params colours = p.sampler;
  colours.grammar = "answer ::= \"red\" | \"blue\"\n";
  colours.grammar_root = "answer";
  CHECK(peak_session_set_sampler(s, &colours) == PEAK_OK);
  check_turn(s, TURN_REGENERATE, kColours, 2);
  check_turn(s, TURN_CHAT, kColours, 2);
  peak_sampler_params broken = p.sampler;
  broken.grammar = "root ::= \"unclosed\n";
  CHECK_ERROR(peak_session_set_sampler(s, &broken), PEAK_ERR_INVALID_ARGUMENT, "peak_sampler_params.grammar");
  check_turn(s, TURN_CHAT, kColours, 2);

  peak_session_free(s);
  peak_model_free(m);
  return capi_test_summary("test_capi_session_grammar");
}
