/* peak_chat_apply_template with tools (tools_json) and a conversation in OpenAI's
   JSON (messages_json): Qwen3's own template must render it as Jinja2 3.1.6
   rendered conversation 0 of tests/data/jinja_tool_renders.json with Hugging
   Face's settings; the struct of the first version (without those fields) still
   works; and JSON that is not valid, both forms of messages, a bad tool or a
   built-in family asked for tools give PEAK_ERR_INVALID_ARGUMENT naming what is
   wrong. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "capi_test.h"
#include "peak/peak.h"

/* Conversation 0 as OpenAI's API writes it: the arguments are JSON text, here
   written compactly; the template writes the object they hold as Python's
   json.dumps does. */
static const char* kMessagesJson =
    "[{\"role\": \"system\", \"content\": \"You are helpful.\"}, {\"role\": \"user\", \"content\": \"Weat"
    "her? \346\227\245\346\234\254\"}, {\"role\": \"assistant\", \"content\": \"<think>\\nhm\\n</think>\\"
    "n\\nLet me check.\", \"tool_calls\": [{\"type\": \"function\", \"id\": \"call12345\", \"function\": "
    "{\"name\": \"get_weather\", \"arguments\": \"{\\\"city\\\":\\\"Z\303\274rich\\\",\\\"n\\\":2}\"}}"
    "]}, {\"role\": \"tool\", \"content\": \"{\\\"temp\\\": 21}\", \"tool_call_id\": \"call12345\"}, {\"r"
    "ole\": \"assistant\", \"content\": \"It is 21 degrees.\"}, {\"role\": \"user\", \"content\": \"Thank"
    "s\"}]";
static const char* kToolsJson =
    "[{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", \"description\": \"Weather\", \""
    "parameters\": {\"type\": \"object\", \"properties\": {\"city\": {\"type\": \"string\"}}, \"required\""
    ": [\"city\"]}}}]";
static const char* kQwen3Render =
    "<|im_start|>system\n"
    "You are helpful.\n"
    "\n"
    "# Tools\n"
    "\n"
    "You may call one or more functions to assist with the user query.\n"
    "\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n"
    "<tools>\n"
    "{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", \"description\": \"Weather\", \"p"
    "arameters\": {\"type\": \"object\", \"properties\": {\"city\": {\"type\": \"string\"}}, \"required\""
    ": [\"city\"]}}}\n"
    "</tools>\n"
    "\n"
    "For each function call, return a json object with function name and arguments within <tool_call></to"
    "ol_call> XML tags:\n"
    "<tool_call>\n"
    "{\"name\": <function-name>, \"arguments\": <args-json-object>}\n"
    "</tool_call><|im_end|>\n"
    "<|im_start|>user\n"
    "Weather? \346\227\245\346\234\254<|im_end|>\n"
    "<|im_start|>assistant\n"
    "Let me check.\n"
    "<tool_call>\n"
    "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Z\303\274rich\", \"n\": 2}}\n"
    "</tool_call><|im_end|>\n"
    "<|im_start|>user\n"
    "<tool_response>\n"
    "{\"temp\": 21}\n"
    "</tool_response><|im_end|>\n"
    "<|im_start|>assistant\n"
    "It is 21 degrees.<|im_end|>\n"
    "<|im_start|>user\n"
    "Thanks<|im_end|>\n"
    "<|im_start|>assistant\n"
    "<think>\n"
    "\n"
    "</think>\n"
    "\n";

static char qwen3[8192];
static char buf[4096];

static peak_chat_template_params qwen3_params(void) {
  peak_chat_template_params p = peak_chat_template_default_params();
  p.template_source = qwen3;
  p.bos_token = "<s>";
  p.eos_token = "</s>";
  return p;
}

static void test_renders_as_jinja2(void) {
  peak_chat_template_params p = qwen3_params();
  p.tools_json = kToolsJson;
  p.messages_json = kMessagesJson;
  size_t len = 0;
  CHECK(peak_chat_apply_template(NULL, &p, NULL, 0, buf, sizeof buf, &len) == PEAK_OK);
  CHECK(len == strlen(kQwen3Render) && strcmp(buf, kQwen3Render) == 0);
}

/* A caller built against the first version passes its smaller struct: the later
   fields, which it does not have, are not read (here they hold text that would
   be refused). */
static void test_first_version_struct(void) {
  const peak_chat_message msgs[2] = {{"user", "Weather?"}, {"tool", "sunny"}};
  peak_chat_template_params p = peak_chat_template_default_params();
  p.template_name = "chatml";
  p.tools_json = "not json";
  p.messages_json = "not json";
  p.struct_size = offsetof(peak_chat_template_params, tools_json);
  size_t len = 0;
  CHECK(peak_chat_apply_template(NULL, &p, msgs, 2, buf, sizeof buf, &len) == PEAK_OK);
  /* llama.cpp's ChatML writes a tool result as a turn of role "tool". */
  const char* chatml =
      "<|im_start|>user\nWeather?<|im_end|>\n<|im_start|>tool\nsunny<|im_end|>\n<|im_start|>assistant\n";
  CHECK(len == strlen(chatml) && strcmp(buf, chatml) == 0);
  p.struct_size = offsetof(peak_chat_template_params, messages_json);
  CHECK_ERROR(peak_chat_apply_template(NULL, &p, msgs, 2, buf, sizeof buf, &len), PEAK_ERR_INVALID_ARGUMENT,
              "struct_size");
}

static void test_errors(void) {
  const peak_chat_message msgs[1] = {{"user", "Hi"}};
  peak_chat_template_params p = qwen3_params();
  size_t len = 0;
  p.messages_json = kMessagesJson;
  CHECK_ERROR(peak_chat_apply_template(NULL, &p, msgs, 1, buf, sizeof buf, &len), PEAK_ERR_INVALID_ARGUMENT,
              "not both");
  p.messages_json = "[{\"role\": \"user\", \"content\": \"Hi\"";
  CHECK_ERROR(peak_chat_apply_template(NULL, &p, NULL, 0, buf, sizeof buf, &len), PEAK_ERR_INVALID_ARGUMENT,
              "peak_chat_apply_template: messages: at byte");
  p.messages_json =
      "[{\"role\": \"user\", \"content\": \"Hi\"}, {\"role\": \"assistant\", \"content\": null, \"tool_calls\": "
      "[{\"type\": \"function\", \"function\": {\"name\": 7, \"arguments\": \"{}\"}}]}]";
  CHECK_ERROR(peak_chat_apply_template(NULL, &p, NULL, 0, buf, sizeof buf, &len), PEAK_ERR_INVALID_ARGUMENT,
              "messages[1].tool_calls[0].function.name: expected a string, not a number");
  p.messages_json = NULL;
  p.tools_json = "[{\"type\": \"function\", \"function\": {\"description\": \"Weather\"}}]";
  CHECK_ERROR(peak_chat_apply_template(NULL, &p, msgs, 1, buf, sizeof buf, &len), PEAK_ERR_INVALID_ARGUMENT,
              "tools[0].function.name: missing");
  p.tools_json = "{";
  CHECK_ERROR(peak_chat_apply_template(NULL, &p, msgs, 1, buf, sizeof buf, &len), PEAK_ERR_INVALID_ARGUMENT,
              "tools: at byte");
  p = peak_chat_template_default_params();
  p.template_name = "llama3";
  p.tools_json = kToolsJson;
  CHECK_ERROR(peak_chat_apply_template(NULL, &p, msgs, 1, buf, sizeof buf, &len), PEAK_ERR_INVALID_ARGUMENT,
              "use the model's own chat template");
  p.struct_size = sizeof p + 8;
  CHECK_ERROR(peak_chat_apply_template(NULL, &p, msgs, 1, buf, sizeof buf, &len), PEAK_ERR_INVALID_ARGUMENT,
              "struct_size");
}

int main(void) {
  CHECK(read_fixture_text(PEAK_SHARED_DIR "/fixtures/templates/Qwen-Qwen3-0.6B.jinja", qwen3, sizeof qwen3));
  test_renders_as_jinja2();
  test_first_version_struct();
  test_errors();
  return capi_test_summary("capi_chat_tools_test");
}
