// The public entry of the Jinja layer: a template parsed once from a model's
// `tokenizer.chat_template` and rendered with a context, exactly as Hugging Face
// apply_chat_template renders it with Jinja2 3.1 (sandboxed, trim_blocks,
// lstrip_blocks, loop controls, raise_exception, tojson keeping non-ASCII text,
// strftime_now).
//
//   Template t = Template::parse(source);
//   Value messages = Value::list();
//   messages.push_back(Value::dict().set("role", "user").set("content", "Hello"));
//   std::string prompt = t.render(Value::dict().set("messages", messages).set("add_generation_prompt", true));
//
// Templates are untrusted: Limits bound the output, the nesting and the work of
// a render, so a hostile template ends with TemplateError instead of exhausting
// memory, stack or time; there is no file or system access.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "jinja/ast.h"
#include "jinja/error.h"
#include "jinja/json.h"
#include "jinja/value.h"

namespace peak::jinja {

struct Limits {
  size_t max_output_bytes = size_t{4} << 20;  // also the longest string a render may build
  int max_depth = 200;                        // nesting of blocks, expressions and macro calls
  // Loop iterations + expression evaluations; building a string or list also
  // counts one step per 64 bytes, so every step does bounded work.
  uint64_t max_steps = 2'000'000;
};

struct RenderOptions {
  Limits limits;
  // What strftime_now(format) returns; empty: the local time through strftime.
  std::function<std::string(const std::string& format)> strftime_now;
};

class Template {
 public:
  // Throws TemplateError naming the line (and column) of a syntax error or of
  // a construct outside the supported subset.
  static Template parse(std::string_view source, const Limits& limits = {});

  // `context`: a dict of the template's variables (messages, add_generation_prompt,
  // bos_token, ...). Throws TemplateError, or TemplateRaised for raise_exception.
  std::string render(const Value& context, const RenderOptions& options = {}) const;

 private:
  explicit Template(std::shared_ptr<const Body> body) : body_(std::move(body)) {}
  std::shared_ptr<const Body> body_;
};

}  // namespace peak::jinja
