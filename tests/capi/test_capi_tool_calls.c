/* peak_chat_parse_response from C: answers as Qwen (the hermes format, its
   chat template in ../shared/fixtures/templates) and Mistral Nemo (its template
   there renders past calls as [TOOL_CALLS][{..., "id": "call12345"}]) write
   them, parsed into OpenAI's assistant message; the expected JSON texts are
   written by hand. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capi_test.h"
#include "peak/peak.h"

static char* read_text_file(const char* path) {
  FILE* f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  const long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  char* text = (char*)malloc((size_t)size + 1);
  const size_t n = fread(text, 1, (size_t)size, f);
  text[n] = '\0';
  fclose(f);
  return text;
}

/* Parses `text` and checks the message against `expected`. */
static void check_parse(const peak_model* model, const peak_tool_parse_params* params, const char* text,
                        const char* expected) {
  char buf[2048];
  size_t length = 0;
  const peak_status status = peak_chat_parse_response(model, params, text, strlen(text), buf, sizeof buf, &length);
  CHECK(status == PEAK_OK);
  if (status != PEAK_OK) {
    fprintf(stderr, "  %s\n", peak_last_error());
    return;
  }
  CHECK(length == strlen(expected));
  CHECK(strcmp(buf, expected) == 0);
  if (strcmp(buf, expected) != 0) fprintf(stderr, "  got:      %s\n  expected: %s\n", buf, expected);
}

static void test_formats(void) {
  peak_tool_parse_params params = peak_tool_parse_default_params();
  CHECK(params.struct_size == sizeof(peak_tool_parse_params));
  CHECK(params.parse_reasoning == 1 && params.reasoning_opened == 0);
  CHECK(params.format_name == NULL && params.template_source == NULL && params.id_prefix == NULL);

  params.format_name = "hermes";
  check_parse(NULL, &params,
              "<think>\nThe user wants the weather.\n</think>\n\nLet me check.\n<tool_call>\n"
              "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Z\xc3\xbcrich\", \"n\": 2}}\n</tool_call>",
              "{\"role\":\"assistant\",\"content\":\"Let me check.\",\"reasoning_content\":\"The user wants the "
              "weather.\",\"tool_calls\":[{\"id\":\"call_0\",\"type\":\"function\",\"function\":{\"name\":"
              "\"get_weather\",\"arguments\":\"{\\\"city\\\":\\\"Z\xc3\xbcrich\\\",\\\"n\\\":2}\"}}]}");

  /* Generated ids take the prefix; no call: content only. */
  params.id_prefix = "r42x";
  check_parse(NULL, &params, "<tool_call>\n{\"name\": \"now\", \"arguments\": {}}\n</tool_call>",
              "{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"call_r42x0\",\"type\":\"function\","
              "\"function\":{\"name\":\"now\",\"arguments\":\"{}\"}}]}");
  check_parse(NULL, &params, "It is 21 degrees.", "{\"role\":\"assistant\",\"content\":\"It is 21 degrees.\"}");
  /* Malformed JSON stays content, as written. */
  check_parse(NULL, &params, "<tool_call>\n{\"name\": \"now\"\n</tool_call>",
              "{\"role\":\"assistant\",\"content\":\"<tool_call>\\n{\\\"name\\\": \\\"now\\\"\\n</tool_call>\"}");

  /* Reasoning left in the content. */
  params.parse_reasoning = 0;
  check_parse(NULL, &params, "<think>\nhm\n</think>\n\nHi.",
              "{\"role\":\"assistant\",\"content\":\"<think>\\nhm\\n</think>\\n\\nHi.\"}");

  /* The format Mistral Nemo's template renders calls in, ids from the model. */
  char* mistral = read_text_file(PEAK_SHARED_DIR "/fixtures/templates/mistralai-Mistral-Nemo-Instruct-2407.jinja");
  CHECK(mistral != NULL);
  peak_tool_parse_params from_template = peak_tool_parse_default_params();
  from_template.template_source = mistral;
  check_parse(NULL, &from_template,
              "[TOOL_CALLS][{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}, \"id\": \"call12345\"}]",
              "{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"call12345\",\"type\":\"function\","
              "\"function\":{\"name\":\"get_weather\",\"arguments\":\"{\\\"city\\\":\\\"Paris\\\"}\"}}]}");
  free(mistral);

  /* The XML formats read values by the tools' schemas. */
  peak_tool_parse_params xml = peak_tool_parse_default_params();
  xml.format_name = "minicpm-xml";
  xml.tools_json =
      "[{\"type\": \"function\", \"function\": {\"name\": \"zip\", \"parameters\": {\"type\": \"object\", "
      "\"properties\": {\"code\": {\"type\": \"string\"}}}}}]";
  check_parse(NULL, &xml, "<function name=\"zip\"><param name=\"code\">8001</param></function>",
              "{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"call_0\",\"type\":\"function\","
              "\"function\":{\"name\":\"zip\",\"arguments\":\"{\\\"code\\\":\\\"8001\\\"}\"}}]}");

  /* No model and no format: the generic JSON shape. */
  check_parse(NULL, NULL, "{\"response\": \"Hi.\"}", "{\"role\":\"assistant\",\"content\":\"Hi.\"}");
}

static void test_text_with_nul_bytes(void) {
  peak_tool_parse_params params = peak_tool_parse_default_params();
  params.format_name = "hermes";
  char buf[256];
  size_t length = 0;
  CHECK(peak_chat_parse_response(NULL, &params, "a\0b", 3, buf, sizeof buf, &length) == PEAK_OK);
  CHECK(strcmp(buf, "{\"role\":\"assistant\",\"content\":\"a\\u0000b\"}") == 0);
  CHECK(peak_chat_parse_response(NULL, &params, NULL, 0, buf, sizeof buf, &length) == PEAK_OK);
  CHECK(strcmp(buf, "{\"role\":\"assistant\",\"content\":\"\"}") == 0);
}

static void test_buffers(void) {
  const char* expected = "{\"role\":\"assistant\",\"content\":\"Hi.\"}";
  char buf[64];
  memset(buf, 'x', sizeof buf);
  size_t length = 0;
  /* Asking for the length, then a buffer one byte short: left untouched. */
  CHECK_ERROR(peak_chat_parse_response(NULL, NULL, "Hi.", 3, NULL, 0, &length), PEAK_ERR_BUFFER_TOO_SMALL, "bytes");
  CHECK(length == strlen(expected));
  CHECK_ERROR(peak_chat_parse_response(NULL, NULL, "Hi.", 3, buf, strlen(expected), &length), PEAK_ERR_BUFFER_TOO_SMALL,
              "message needs");
  CHECK(length == strlen(expected));
  CHECK(buf[0] == 'x');
  CHECK(peak_chat_parse_response(NULL, NULL, "Hi.", 3, buf, strlen(expected) + 1, &length) == PEAK_OK);
  CHECK(strcmp(buf, expected) == 0);
}

static void test_refusals(void) {
  char buf[64];
  size_t length = 0;
  peak_tool_parse_params params = peak_tool_parse_default_params();
  CHECK_ERROR(peak_chat_parse_response(NULL, &params, "x", 1, buf, sizeof buf, NULL), PEAK_ERR_INVALID_ARGUMENT,
              "length is NULL");
  CHECK_ERROR(peak_chat_parse_response(NULL, &params, NULL, 1, buf, sizeof buf, &length), PEAK_ERR_INVALID_ARGUMENT,
              "text is NULL");
  CHECK_ERROR(peak_chat_parse_response(NULL, &params, "x", 1, NULL, 8, &length), PEAK_ERR_INVALID_ARGUMENT,
              "buf is NULL");
  params.format_name = "hermes2";
  CHECK_ERROR(peak_chat_parse_response(NULL, &params, "x", 1, buf, sizeof buf, &length), PEAK_ERR_INVALID_ARGUMENT,
              "known: hermes, llama3-json");
  params = peak_tool_parse_default_params();
  params.tools_json = "{\"type\": \"function\"}";
  CHECK_ERROR(peak_chat_parse_response(NULL, &params, "x", 1, buf, sizeof buf, &length), PEAK_ERR_INVALID_ARGUMENT,
              "tools_json");
  params.tools_json = "[{";
  CHECK_ERROR(peak_chat_parse_response(NULL, &params, "x", 1, buf, sizeof buf, &length), PEAK_ERR_INVALID_ARGUMENT,
              "tools_json: at byte");
  params = peak_tool_parse_default_params();
  params.parse_reasoning = 2;
  CHECK_ERROR(peak_chat_parse_response(NULL, &params, "x", 1, buf, sizeof buf, &length), PEAK_ERR_INVALID_ARGUMENT,
              "parse_reasoning");
  params = peak_tool_parse_default_params();
  params.reasoning_close = "";
  CHECK_ERROR(peak_chat_parse_response(NULL, &params, "x", 1, buf, sizeof buf, &length), PEAK_ERR_INVALID_ARGUMENT,
              "reasoning_close");
  params = peak_tool_parse_default_params();
  params.struct_size = sizeof params - 1;
  CHECK_ERROR(peak_chat_parse_response(NULL, &params, "x", 1, buf, sizeof buf, &length), PEAK_ERR_INVALID_ARGUMENT,
              "peak_tool_parse_params.struct_size");
}

/* A model without a chat template (stories260K): the generic format. */
static void test_model_without_template(void) {
  peak_model* model = NULL;
  CHECK(peak_model_load(PEAK_SHARED_DIR "/models/stories260K.gguf", NULL, &model) == PEAK_OK);
  if (!model) return;
  check_parse(model, NULL, "{\"tool_calls\": [{\"name\": \"f\", \"arguments\": {\"a\": 1}}]}",
              "{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"call_0\",\"type\":\"function\","
              "\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"a\\\":1}\"}}]}");
  peak_model_free(model);
}

int main(void) {
  test_formats();
  test_text_with_nul_bytes();
  test_buffers();
  test_refusals();
  test_model_without_template();
  return capi_test_summary("test_capi_tool_calls");
}
