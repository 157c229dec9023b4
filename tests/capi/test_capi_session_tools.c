/* Sessions with tools from C, on the scripted Qwen3 model (tests/chat/
   scripted_qwen3.h: it answers "Blue.", or opens a tool call in its place, and
   Qwen3's template renders tools, Hermes calls and tool results): a required
   call, its result, the answer that follows it, a call the model opens under
   tool_choice auto, and the errors. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "capi_test.h"
#include "peak/peak.h"

static const char* const kTools =
    "[{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", \"parameters\": {\"type\": \"object\", "
    "\"properties\": {\"city\": {\"type\": \"string\", \"enum\": [\"Paris\", \"Oslo\"]}}, \"required\": [\"city\"], "
    "\"additionalProperties\": false}}}]";

static peak_generate_params collecting(struct text_buf* text) {
  text->length = 0;
  text->text[0] = '\0';
  peak_generate_params gp = peak_generate_default_params();
  gp.max_tokens = 200;
  gp.on_text = collect_text;
  gp.user_data = text;
  return gp;
}

static peak_session_params tool_params(peak_tool_choice choice) {
  peak_session_params p = peak_session_default_params();
  p.mode = PEAK_MEMORY_WINDOW;
  p.recent_max = 1024;
  p.headroom = 256;
  p.n_threads = 1;
  p.sampler.temperature = 0.0f;
  p.tools_json = kTools;
  p.tool_choice = choice;
  return p;
}

static void check_preview(const peak_session* s, const char* fragment, int present) {
  static char prompt[16384];
  size_t length = 0;
  CHECK(peak_session_preview_prompt(s, "x", 1, prompt, sizeof prompt, &length) == PEAK_OK);
  CHECK((strstr(prompt, fragment) != NULL) == present);
}

/* The conversation `live` had (question, a call, its result "Sunny", the
   answer "Blue.") replayed into a new session without generating: its prompt
   and the next answer are those of the live one, and the calls and results
   keep the order rules. */
static void check_replay(const peak_model* m, const peak_session_params* p, const peak_session* live,
                         const char* question, const char* id, const char* arguments) {
  static char live_prompt[16384], replayed_prompt[16384];
  size_t length = 0;
  CHECK(peak_session_preview_prompt(live, "x", 1, live_prompt, sizeof live_prompt, &length) == PEAK_OK);
  peak_session* r = NULL;
  CHECK(peak_session_create(m, p, &r) == PEAK_OK);
  if (!r) return;
  peak_tool_call call;
  memset(&call, 0, sizeof call);
  call.struct_size = sizeof call;
  call.id = id;
  call.id_length = strlen(id);
  call.name = "get_weather";
  call.name_length = strlen(call.name);
  call.arguments = arguments;
  call.arguments_length = strlen(arguments);
  CHECK_ERROR(peak_session_append_tool_calls(r, NULL, 0, &call, 1), PEAK_ERR_INVALID_ARGUMENT, "roles alternate");
  CHECK(peak_session_append(r, PEAK_ROLE_USER, question, strlen(question)) == PEAK_OK);
  peak_tool_call nameless = call;
  nameless.name_length = 0;
  CHECK_ERROR(peak_session_append_tool_calls(r, NULL, 0, &nameless, 1), PEAK_ERR_INVALID_ARGUMENT, "calls[0].name");
  CHECK(peak_session_append_tool_calls(r, NULL, 0, &call, 1) == PEAK_OK);
  CHECK(peak_session_n_tool_calls(r) == 1);
  CHECK_ERROR(peak_session_append(r, PEAK_ROLE_USER, "Hi", 2), PEAK_ERR_INVALID_ARGUMENT, "append_tool_result");
  CHECK(peak_session_add_tool_result(r, id, "Sunny", 5) == PEAK_OK);
  CHECK_ERROR(peak_session_append(r, PEAK_ROLE_ASSISTANT, "Blue.", 5), PEAK_ERR_INVALID_ARGUMENT, "continue");
  CHECK(peak_session_append_tool_calls(r, "Blue.", 5, NULL, 0) == PEAK_OK);
  CHECK(peak_session_n_messages(r) == 4);
  CHECK(peak_session_preview_prompt(r, "x", 1, replayed_prompt, sizeof replayed_prompt, &length) == PEAK_OK);
  CHECK(strcmp(live_prompt, replayed_prompt) == 0);
  peak_session_stats live_stats, replayed_stats;
  memset(&live_stats, 0, sizeof live_stats);
  memset(&replayed_stats, 0, sizeof replayed_stats);
  live_stats.struct_size = replayed_stats.struct_size = sizeof live_stats;
  CHECK(peak_session_get_stats(live, &live_stats) == PEAK_OK);
  CHECK(peak_session_get_stats(r, &replayed_stats) == PEAK_OK);
  CHECK(live_stats.recent_tokens == replayed_stats.recent_tokens);
  /* The next user turn reads the replayed history: the model answers as it did live. */
  struct text_buf text;
  peak_generate_params gp = collecting(&text);
  CHECK(peak_session_set_tool_choice(r, PEAK_TOOL_CHOICE_NONE, NULL, 1) == PEAK_OK);
  CHECK(peak_session_chat(r, "And Oslo?", 9, &gp, NULL) == PEAK_OK);
  CHECK(strcmp(text.text, "Blue.") == 0);
  peak_session_free(r);
}

/* What the call receiver saw: how many calls, the last one's index, id and name. */
struct seen_calls {
  size_t count, last_index;
  char id[64], name[64];
};

static void see_call(const peak_tool_call* call, size_t index, void* user_data) {
  struct seen_calls* seen = (struct seen_calls*)user_data;
  ++seen->count;
  seen->last_index = index;
  snprintf(seen->id, sizeof seen->id, "%.*s", (int)call->id_length, call->id);
  snprintf(seen->name, sizeof seen->name, "%.*s", (int)call->name_length, call->name);
}

int main(void) {
  peak_model* m = NULL;
  CHECK(peak_model_load(PEAK_SCRIPTED_QWEN3, NULL, &m) == PEAK_OK);
  if (!m) return capi_test_summary("test_capi_session_tools");

  peak_session_params p = tool_params(PEAK_TOOL_CHOICE_REQUIRED);
  p.parallel_tool_calls = 0;
  peak_session* s = NULL;
  CHECK(peak_session_create(m, &p, &s) == PEAK_OK);
  if (!s) return capi_test_summary("test_capi_session_tools");
  check_preview(s, "\"name\": \"get_weather\"", 1); /* the template wrote the tools */

  /* Required: a call, though the model would answer "Blue."; no markup streams. */
  struct text_buf text;
  peak_generate_params gp = collecting(&text);
  const char* question = "Weather in Paris?";
  CHECK(peak_session_chat(s, question, strlen(question), &gp, NULL) == PEAK_OK);
  CHECK(text.length == 0);
  CHECK(peak_session_n_tool_calls(s) == 1);
  peak_tool_call call;
  memset(&call, 0, sizeof call);
  call.struct_size = sizeof call;
  CHECK(peak_session_get_tool_call(s, 0, &call) == PEAK_OK);
  CHECK(strcmp(call.name, "get_weather") == 0 && call.name_length == strlen("get_weather"));
  CHECK(strstr(call.arguments, "\"city\"") != NULL);
  CHECK(strstr(call.arguments, "Paris") != NULL || strstr(call.arguments, "Oslo") != NULL);
  CHECK(call.id_length > 0 && strncmp(call.id, "call_", 5) == 0);
  CHECK_ERROR(peak_session_get_tool_call(s, 1, &call), PEAK_ERR_INVALID_ARGUMENT, "index 1");
  char id[64];
  snprintf(id, sizeof id, "%s", call.id);
  char arguments[256];
  snprintf(arguments, sizeof arguments, "%s", call.arguments);

  /* The result, then the answer to it (auto: the model writes text). */
  CHECK_ERROR(peak_session_chat(s, "Hi", 2, &gp, NULL), PEAK_ERR_INVALID_ARGUMENT, "append_tool_result");
  CHECK_ERROR(peak_session_add_tool_result(s, "call_none", "x", 1), PEAK_ERR_INVALID_ARGUMENT, "call_none");
  CHECK_ERROR(peak_session_continue(s, &gp, NULL), PEAK_ERR_INVALID_ARGUMENT, "no results yet");
  CHECK(peak_session_add_tool_result(s, id, "Sunny", 5) == PEAK_OK);
  CHECK_ERROR(peak_session_add_tool_result(s, id, "Sunny", 5), PEAK_ERR_INVALID_ARGUMENT, "already");
  peak_session_message message;
  memset(&message, 0, sizeof message);
  message.struct_size = sizeof message;
  CHECK(peak_session_get_message(s, 2, &message) == PEAK_OK);
  CHECK(message.role == PEAK_ROLE_TOOL && strcmp(message.text, "Sunny") == 0);
  CHECK(peak_session_n_tool_calls(s) == 1); /* the last answer's, results after it or not */
  CHECK_ERROR(peak_session_set_tool_choice(s, (peak_tool_choice)7, NULL, 1), PEAK_ERR_INVALID_ARGUMENT, "tool_choice");
  CHECK(peak_session_set_tool_choice(s, PEAK_TOOL_CHOICE_AUTO, NULL, 1) == PEAK_OK);
  peak_generate_result r;
  memset(&r, 0, sizeof r);
  r.struct_size = sizeof r;
  CHECK(peak_session_continue(s, &gp, &r) == PEAK_OK);
  CHECK(strcmp(text.text, "Blue.") == 0);
  CHECK(peak_session_n_tool_calls(s) == 0);
  CHECK(peak_session_n_messages(s) == 4);
  /* The result is in the prompt as Qwen3's template writes it. */
  check_preview(s, "<|im_start|>user\n<tool_response>\nSunny\n</tool_response><|im_end|>", 1);
  check_replay(m, &p, s, question, id, arguments);
  peak_session_free(s);

  /* Errors at creation, naming what is wrong. */
  p = tool_params(PEAK_TOOL_CHOICE_AUTO);
  p.tools_json = "[{\"type\": \"function\"}]";
  CHECK_ERROR(peak_session_create(m, &p, &s), PEAK_ERR_INVALID_ARGUMENT, "tools[0]");
  p = tool_params(PEAK_TOOL_CHOICE_AUTO);
  p.sampler.grammar = "root ::= \"x\"\n";
  CHECK_ERROR(peak_session_create(m, &p, &s), PEAK_ERR_INVALID_ARGUMENT, "grammar");
  p = tool_params(PEAK_TOOL_CHOICE_FUNCTION);
  p.tool_function = "get_news";
  CHECK_ERROR(peak_session_create(m, &p, &s), PEAK_ERR_INVALID_ARGUMENT, "get_news");
  p = tool_params((peak_tool_choice)9);
  CHECK_ERROR(peak_session_create(m, &p, &s), PEAK_ERR_INVALID_ARGUMENT, "tool_choice is 9");

  /* A caller built before the tool fields and the preserved tokens: its struct
     ends with the first version of the sampler's, and the session has no tools. */
  p = tool_params(PEAK_TOOL_CHOICE_REQUIRED);
  p.struct_size = offsetof(peak_session_params, sampler) + offsetof(peak_sampler_params, preserved_tokens);
  p.sampler.struct_size = offsetof(peak_sampler_params, preserved_tokens);
  CHECK(peak_session_create(m, &p, &s) == PEAK_OK);
  if (s) {
    check_preview(s, "get_weather", 0);
    gp = collecting(&text);
    CHECK(peak_session_chat(s, question, strlen(question), &gp, NULL) == PEAK_OK);
    CHECK(strcmp(text.text, "Blue.") == 0);
    peak_session_free(s);
  }
  peak_model_free(m);

  /* Auto: the model opens a call; the grammar holds the rest of it. */
  CHECK(peak_model_load(PEAK_SCRIPTED_QWEN3_CALL, NULL, &m) == PEAK_OK);
  if (!m) return capi_test_summary("test_capi_session_tools");
  p = tool_params(PEAK_TOOL_CHOICE_AUTO);
  CHECK(peak_session_create(m, &p, &s) == PEAK_OK);
  if (s) {
    gp = collecting(&text);
    /* The call reaches the receiver during the turn: the one the turn then gives. */
    struct seen_calls seen;
    memset(&seen, 0, sizeof seen);
    CHECK(peak_session_set_tool_call_callback(s, see_call, &seen) == PEAK_OK);
    CHECK(peak_session_chat(s, question, strlen(question), &gp, NULL) == PEAK_OK);
    CHECK(text.length == 0);
    CHECK(peak_session_n_tool_calls(s) == 1);
    CHECK(peak_session_get_tool_call(s, 0, &call) == PEAK_OK);
    CHECK(strcmp(call.name, "get_weather") == 0);
    CHECK(seen.count == 1 && seen.last_index == 0);
    CHECK(strcmp(seen.name, "get_weather") == 0 && strcmp(seen.id, call.id) == 0);
    CHECK(peak_session_set_tool_call_callback(s, NULL, NULL) == PEAK_OK);
    peak_session_free(s);
  }
  peak_model_free(m);
  return capi_test_summary("test_capi_session_tools");
}
