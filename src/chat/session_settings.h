// The settings of a ChatSession (chat_session.h describes what they shape).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "kernels/ggml_type.h"
#include "sampling/sampler_chain.h"
#include "chat/conversation_images.h"
#include "chat/summarizer.h"
#include "runtime/pass_group.h"

namespace peak::chat {

enum class MemoryMode { Ssskv, Window, None };
enum class RebuildStrategy { Shift, Reprefill, Background };
// OpenAI's tool_choice: whether an answer may, must or must not call tools.
enum class ToolChoiceMode {
  None,      // the tools are not in the prompt and calls are not read: answers are text
  Auto,      // text, calls, or text then calls; the format's opening marker starts the grammar of calls
  Required,  // one call or more (parallel_tool_calls) from the answer's start
  Function,  // calls of tool_function only, from the answer's start
};

struct SessionSettings {
  MemoryMode mode = MemoryMode::Ssskv;
  std::string system_prompt;
  std::string template_name;  // "" the model's own, "raw" no template
  // Thinking models: let the model reason before it answers. Off (the default),
  // the template asks it not to; either way the reasoning is streamed apart and
  // never kept in the conversation, and the summarizer never thinks.
  bool enable_thinking = false;
  int64_t recent_max = 4096;                           // tokens of the Recent segment
  int64_t summary_max = 256;                           // tokens of the Summary segment
  int64_t trigger_discard = 2048;                      // dropped tokens that trigger a new summary
  int64_t headroom = 512;                              // overflow cells for the answer: its length limit
  kernels::GgmlType type_k = kernels::GgmlType::Q8_0;  // main KV cache; F16 when its blocks do not divide the head size
  kernels::GgmlType type_v = kernels::GgmlType::Q8_0;
  RebuildStrategy rebuild = RebuildStrategy::Background;
  // Restoring a file's KV cells: how many of the first cells to compute again
  // and compare before trusting them (ChatSession::restore); 0 (the default)
  // trusts them as read. Costs a prefill of that many tokens.
  int64_t verify_kv_cells = 0;
  bool wait_for_summary = false;   // a turn arriving while a summary runs waits for it
  bool background_summary = true;  // false: summarize before the turn returns (deterministic tests)
  SummarizerSettings summarizer;   // its n_ctx, KV type, generation length
  int n_threads = 0;
  int64_t n_batch = 512;
  // Rows of logits the main context hands out in one pass (ContextParams::
  // max_logit_rows): prompt lookup (GenerateOptions::lookup_ngram) needs
  // draft_max + 1.
  int64_t max_logit_rows = 1;
  // The main context evaluates in passes shared with the group's other
  // members (ContextParams::pass_group), null: alone.
  runtime::PassGroup* pass_group = nullptr;
  sampling::SamplerParams sampler;
  // Tools: OpenAI's `tools` array as JSON text ("" none), written into the
  // Prefix by the chat template (so fixed for the session's life). Under
  // tool_choice other than None, each answer is read for calls in
  // tool_call_format ("" the one the model's chat template renders, see
  // detect_tool_call_format; a built-in family: generic) and the calls are
  // held to the tools' schemas by a grammar (tool_call_grammar.h), which
  // excludes a grammar of the sampler's own.
  std::string tools;
  ToolChoiceMode tool_choice = ToolChoiceMode::Auto;
  std::string tool_function;  // ToolChoiceMode::Function: the function's name
  bool parallel_tool_calls = true;
  std::string tool_call_format;
  // Pictures (ChatSession::attach_image): the row of the model's projector
  // (model::Projector::hparams().arch), which frames them; unset, the
  // session takes none.
  std::optional<model::Arch> images;
};

// Cells of the headroom kept after an answer for its turn's closing marker.
constexpr int64_t kClosingReserve = 16;

// Throws std::invalid_argument naming the first field (as peak_session_params
// spells it) out of range; checked before a session allocates anything.
void validate_session_settings(const SessionSettings& settings);
// The tool settings alone (validate_session_settings checks them too): the
// tools' JSON (tools_from_json's error, prefixed "tools: "), a format name, a
// named function, a sampler grammar beside calls.
void validate_tool_settings(const SessionSettings& settings);

}  // namespace peak::chat
