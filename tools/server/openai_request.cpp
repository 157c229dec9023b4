#include "openai_request.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

#include "base64.h"

namespace peak_server {

namespace {

using peak::json::Type;
using peak::json::Value;

const Value& require_object(const Value& body) {
  if (!body.is_object())
    throw RequestError(std::string("the body must be a JSON object, not ") + peak::json::type_name(body.type()), "");
  return body;
}

[[noreturn]] void wrong_type(const std::string& field, const char* wanted, const Value& v) {
  throw RequestError("'" + field + "' must be " + wanted + ", not " + peak::json::type_name(v.type()), field);
}

// A member that is absent or null counts as not given (OpenAI's clients send null for unset fields).
const Value* member(const Value& body, const char* name) {
  const Value* v = body.find(name);
  return v && !v->is_null() ? v : nullptr;
}

std::optional<double> number(const Value& body, const char* name, double min, double max) {
  const Value* v = member(body, name);
  if (!v) return std::nullopt;
  if (!v->is_number()) wrong_type(name, "a number", *v);
  const double d = v->as_double();
  if (!(d >= min && d <= max)) {
    throw RequestError("'" + std::string(name) + "' must be between " + peak::json::write(Value(min)) + " and " +
                           peak::json::write(Value(max)) + ", not " + peak::json::write(*v),
                       name);
  }
  return d;
}

std::optional<int64_t> integer(const Value& body, const char* name, int64_t min, int64_t max) {
  const Value* v = member(body, name);
  if (!v) return std::nullopt;
  if (!v->is_integer()) wrong_type(name, "an integer", *v);
  if (v->as_int() < min || v->as_int() > max) {
    throw RequestError("'" + std::string(name) + "' must be between " + std::to_string(min) + " and " +
                           std::to_string(max) + ", not " + std::to_string(v->as_int()),
                       name);
  }
  return v->as_int();
}

bool boolean(const Value& body, const char* name, bool fallback) {
  const Value* v = member(body, name);
  if (!v) return fallback;
  if (!v->is_bool()) wrong_type(name, "a boolean", *v);
  return v->as_bool();
}

const Value* required(const Value& object, const char* name, const std::string& field) {
  const Value* v = member(object, name);
  if (!v) throw RequestError("'" + field + "' is required", field);
  return v;
}

// OpenAI's rule for a response format's or a function's name: 1 to 64 of a-z, A-Z, 0-9, '_' and '-'.
void check_name(const Value& name, const std::string& field) {
  if (!name.is_string()) wrong_type(field, "a string", name);
  const std::string& s = name.as_string();
  const bool valid = !s.empty() && s.size() <= 64 && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
  });
  if (!valid) throw RequestError("'" + field + "' must be 1 to 64 letters, digits, '_' or '-'", field);
}

// OpenAI's response_format: "text" (no constraint), "json_object" (any JSON
// object) or "json_schema" with {"name", "schema", "strict"} (the schema is
// always held strictly).
std::optional<TextConstraint> response_format(const Value& body) {
  const Value* format = member(body, "response_format");
  if (!format) return std::nullopt;
  if (!format->is_object()) wrong_type("response_format", "an object", *format);
  const Value* type = required(*format, "type", "response_format.type");
  if (!type->is_string()) wrong_type("response_format.type", "a string", *type);
  const std::string& kind = type->as_string();
  if (kind == "text") return std::nullopt;
  if (kind == "json_object") return TextConstraint{"response_format", true, R"({"type": "object"})"};
  if (kind != "json_schema") {
    throw RequestError(
        "'response_format.type' must be \"text\", \"json_object\" or \"json_schema\", not \"" + kind + "\"",
        "response_format.type");
  }
  const Value* spec = required(*format, "json_schema", "response_format.json_schema");
  if (!spec->is_object()) wrong_type("response_format.json_schema", "an object", *spec);
  check_name(*required(*spec, "name", "response_format.json_schema.name"), "response_format.json_schema.name");
  if (const Value* strict = member(*spec, "strict"); strict && !strict->is_bool()) {
    wrong_type("response_format.json_schema.strict", "a boolean", *strict);
  }
  const std::string field = "response_format.json_schema.schema";
  const Value* schema = required(*spec, "schema", field);
  if (!schema->is_object()) wrong_type(field, "an object", *schema);
  return TextConstraint{field, true, peak::json::write(*schema)};
}

// A list of `n` items may hold at most `most` (`noun`: what they are).
void check_count(size_t n, size_t most, const char* field, const char* noun) {
  if (n <= most) return;
  throw RequestError("'" + std::string(field) + "' has " + std::to_string(n) + " " + noun + "; at most " +
                         std::to_string(most) + " go in one request",
                     field);
}

// An array of token ids, each checked against the vocabulary; `field` names it.
std::vector<int32_t> token_ids(const Value& list, const std::string& field, size_t n_vocab) {
  std::vector<int32_t> ids;
  ids.reserve(list.items().size());
  for (size_t i = 0; i < list.items().size(); ++i) {
    const Value& t = list.items()[i];
    const std::string at = field + "[" + std::to_string(i) + "]";
    if (!t.is_integer()) wrong_type(at, "an integer (a token id)", t);
    if (t.as_int() < 0 || static_cast<uint64_t>(t.as_int()) >= n_vocab) {
      throw RequestError("'" + at + "' is " + std::to_string(t.as_int()) + ", not a token id (0 to " +
                             std::to_string(n_vocab - 1) + ")",
                         at);
    }
    ids.push_back(static_cast<int32_t>(t.as_int()));
  }
  return ids;
}

// llama.cpp's `grammar` (GBNF; "" is none, as there) and `json_schema`.
std::vector<TextConstraint> llama_constraints(const Value& body) {
  std::vector<TextConstraint> found;
  if (const Value* grammar = member(body, "grammar")) {
    if (!grammar->is_string()) wrong_type("grammar", "a string (GBNF)", *grammar);
    if (!grammar->as_string().empty()) found.push_back({"grammar", false, grammar->as_string()});
  }
  if (const Value* schema = member(body, "json_schema")) {
    if (!schema->is_object()) wrong_type("json_schema", "an object (a JSON Schema)", *schema);
    found.push_back({"json_schema", true, peak::json::write(*schema)});
  }
  return found;
}

// The request field a constraint came from ("response_format" for its members).
std::string top_field(const TextConstraint& c) { return c.field.substr(0, c.field.find('.')); }

// Refuses a grammar or schema the C API cannot use with its message, before
// the request takes a slot.
void check_compiles(const TextConstraint& c) {
  peak_grammar* grammar = nullptr;
  const peak_status status = c.json_schema ? peak_grammar_from_json_schema(c.text.c_str(), &grammar)
                                           : peak_grammar_create(c.text.c_str(), nullptr, &grammar);
  peak_grammar_free(grammar);
  if (status == PEAK_OK) return;
  throw RequestError("'" + c.field + "' is not " + (c.json_schema ? "a usable JSON Schema: " : "a usable grammar: ") +
                         peak_last_error(),
                     c.field);
}

std::optional<TextConstraint> text_constraint(const Value& body) {
  std::vector<TextConstraint> found = llama_constraints(body);
  if (std::optional<TextConstraint> format = response_format(body)) found.insert(found.begin(), std::move(*format));
  if (found.empty()) return std::nullopt;
  if (found.size() > 1) {
    throw RequestError("'" + top_field(found[0]) + "' and '" + top_field(found[1]) +
                           "' do not go together: give one grammar or schema",
                       top_field(found[1]));
  }
  check_compiles(found[0]);
  return std::move(found[0]);
}

void parse_generation(const Value& body, GenerationRequest& r) {
  r.temperature = number(body, "temperature", 0, 100);
  r.top_p = number(body, "top_p", 0, 1);
  if (r.top_p && *r.top_p <= 0) throw RequestError("'top_p' must be above 0 (1 turns it off)", "top_p");
  r.min_p = number(body, "min_p", 0, 1);
  r.presence_penalty = number(body, "presence_penalty", -2, 2);
  r.frequency_penalty = number(body, "frequency_penalty", -2, 2);
  r.repeat_penalty = number(body, "repeat_penalty", 0, 100);
  r.top_k = integer(body, "top_k", 0, INT32_MAX);
  r.seed = integer(body, "seed", INT64_MIN, INT64_MAX);
  r.max_tokens = integer(body, "max_tokens", 1, INT32_MAX);
  if (const auto m = integer(body, "max_completion_tokens", 1, INT32_MAX)) r.max_tokens = m;
  integer(body, "n", 1, 1);  // one choice per request
  if (const Value* stop = member(body, "stop")) {
    if (stop->is_string()) {
      r.stop.push_back(stop->as_string());
    } else if (stop->is_array()) {
      if (stop->items().size() > kMaxStops) {
        throw RequestError("'stop' holds at most " + std::to_string(kMaxStops) + " strings", "stop");
      }
      for (size_t i = 0; i < stop->items().size(); ++i) {
        const Value& s = stop->items()[i];
        if (!s.is_string()) wrong_type("stop[" + std::to_string(i) + "]", "a string", s);
        r.stop.push_back(s.as_string());
      }
    } else {
      wrong_type("stop", "a string or an array of strings", *stop);
    }
    for (const std::string& s : r.stop)
      if (s.empty()) throw RequestError("'stop' strings must not be empty", "stop");
  }
  r.stream = boolean(body, "stream", false);
  if (const Value* options = member(body, "stream_options")) {
    if (!options->is_object()) wrong_type("stream_options", "an object", *options);
    r.include_usage = boolean(*options, "include_usage", false);
  }
  r.constraint = text_constraint(body);
}

// Where a message's pictures go: its list (null: its role takes none) and
// the bytes of the request's pictures so far.
struct ImageSink {
  std::vector<std::string>* images = nullptr;
  std::vector<std::string>* fields = nullptr;  // each picture's URL field
  size_t* request_bytes = nullptr;
};

std::string lowercase(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// A URL's scheme ("https"), or "" when it has none.
std::string url_scheme(const std::string& url) {
  const size_t colon = url.find(':');
  if (colon == std::string::npos || colon == 0 || !std::isalpha(static_cast<unsigned char>(url[0]))) return "";
  const bool valid = std::all_of(url.begin(), url.begin() + static_cast<std::ptrdiff_t>(colon), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '-' || c == '.';
  });
  return valid ? lowercase(url.substr(0, colon)) : "";
}

// The first bytes of a file, in hex, for a message.
std::string leading_bytes(const std::string& bytes) {
  std::string out;
  for (size_t i = 0; i < bytes.size() && i < 8; ++i) {
    char buf[4];
    std::snprintf(buf, sizeof buf, "%s%02X", i ? " " : "", static_cast<unsigned char>(bytes[i]));
    out += buf;
  }
  return out;
}

// The picture of a data URL (RFC 2397: data:<type>[;parameter...];base64,
// <data>), a PNG or JPEG file. The type must be one of them, but the file is
// told by its first bytes (as the library's decoder tells it), which only are
// checked here. `field` names the URL.
std::string data_url_image(const std::string& url, const std::string& field, size_t* request_bytes) {
  const std::string scheme = url_scheme(url);
  if (scheme != "data") {
    throw RequestError("'" + field + "' is not a data URL" +
                           (scheme.empty() ? std::string() : " (its scheme is " + scheme.substr(0, 32) + ")") +
                           "; this server never fetches URLs: send the picture itself as a data URL "
                           "(data:image/png;base64,...)",
                       field);
  }
  const size_t comma = url.find(',');
  if (comma == std::string::npos)
    throw RequestError("'" + field + "' is a data URL without a ',' before its data", field);
  const std::string head = url.substr(5, comma - 5);  // after "data:"
  const std::string type = lowercase(head.substr(0, head.find(';')));
  if (type != "image/png" && type != "image/jpeg" && type != "image/jpg") {
    const std::string shown = type.empty() ? "no media type" : "\"" + type.substr(0, 64) + "\"";
    throw RequestError(
        "'" + field + "' is a data URL of " + shown + "; the supported images are image/png and image/jpeg", field);
  }
  const size_t last = head.rfind(';');
  if (last == std::string::npos || lowercase(head.substr(last + 1)) != "base64") {
    throw RequestError("'" + field + "' is a data URL without ';base64': send the picture's bytes in base64 (data:" +
                           type + ";base64,...)",
                       field);
  }
  const std::string_view payload = std::string_view(url).substr(comma + 1);
  // The bounds hold before anything is decoded.
  const size_t size = base64_decoded_size(payload);
  if (size > kMaxImageBytes) {
    throw RequestError("'" + field + "' holds a picture of " + std::to_string(size) + " bytes; at most " +
                           std::to_string(kMaxImageBytes) + " (" + std::to_string(kMaxImageBytes >> 20) +
                           " MiB) go in one picture",
                       field);
  }
  if (size > kMaxRequestImageBytes - *request_bytes) {
    throw RequestError("'" + field + "' brings the request's pictures to " + std::to_string(*request_bytes + size) +
                           " bytes; at most " + std::to_string(kMaxRequestImageBytes) + " (" +
                           std::to_string(kMaxRequestImageBytes >> 20) + " MiB) go in one request",
                       field);
  }
  std::string bytes, error;
  if (!base64_decode(payload, &bytes, &error)) {
    throw RequestError("'" + field + "' is not valid base64 after its ',': " + error, field);
  }
  static const char kPng[] = "\x89PNG\r\n\x1a\n";
  static const char kJpeg[] = "\xFF\xD8\xFF";  // SOI, then the next marker's first byte
  const auto begins = [&bytes](const char* magic, size_t n) { return bytes.compare(0, n, magic, n) == 0; };
  if (!begins(kPng, sizeof kPng - 1) && !begins(kJpeg, sizeof kJpeg - 1)) {
    throw RequestError(
        "'" + field + "' holds neither a PNG nor a JPEG file (" +
            (bytes.empty() ? std::string("its data is empty") : "its bytes begin " + leading_bytes(bytes)) +
            "; a PNG's begin 89 50 4E 47 0D 0A 1A 0A, a JPEG's FF D8 FF)",
        field);
  }
  *request_bytes += bytes.size();
  return bytes;
}

// OpenAI's image part: {"type": "image_url", "image_url": {"url", "detail"?}},
// or the URL as a string (as some clients send it). `detail` is checked and
// ignored: the image encoder sees every picture at its one size. *url_field:
// the field of the URL.
std::string image_part(const Value& part, const std::string& field, size_t* request_bytes, std::string* url_field) {
  const Value* image = required(part, "image_url", field + ".image_url");
  if (image->is_string()) {
    *url_field = field + ".image_url";
    return data_url_image(image->as_string(), *url_field, request_bytes);
  }
  if (!image->is_object()) wrong_type(field + ".image_url", "an object (or the URL as a string)", *image);
  if (const Value* detail = member(*image, "detail")) {
    const std::string at = field + ".image_url.detail";
    if (!detail->is_string()) wrong_type(at, "a string", *detail);
    const std::string& d = detail->as_string();
    if (d != "auto" && d != "low" && d != "high")
      throw RequestError("'" + at + "' must be \"auto\", \"low\" or \"high\", not \"" + d + "\"", at);
  }
  *url_field = field + ".image_url.url";
  const Value* url = required(*image, "url", *url_field);
  if (!url->is_string()) wrong_type(*url_field, "a string", *url);
  return data_url_image(url->as_string(), *url_field, request_bytes);
}

// A message's text may not hold the image marker itself: it would be read as
// the place of an image.
const std::string& checked_text(const std::string& text, const std::string& field) {
  if (text.find(kImageMarker) != std::string::npos) {
    throw RequestError("'" + field + "' holds the text " + kImageMarker +
                           ", which marks an image's place: send pictures as image_url parts",
                       field);
  }
  return text;
}

// A message's text: a string, or an array of parts joined, or null (an
// assistant message that only called tools). The parts are {"type": "text",
// "text"}, and where `sink` takes them (a user message) {"type":
// "image_url", ...}: each picture into the sink and a kImageMarker into the
// text in its place.
std::string content_text(const Value& v, const std::string& field, const ImageSink& sink = {}) {
  if (v.is_null()) return "";
  if (v.is_string()) return checked_text(v.as_string(), field);
  if (!v.is_array()) wrong_type(field, "a string or an array of content parts", v);
  std::string text;
  for (size_t i = 0; i < v.items().size(); ++i) {
    const std::string part_field = field + "[" + std::to_string(i) + "]";
    const Value& part = v.items()[i];
    if (!part.is_object()) wrong_type(part_field, "an object", part);
    const Value* type = part.find("type");
    if (!type || !type->is_string() || (type->as_string() != "text" && type->as_string() != "image_url")) {
      throw RequestError("'" + part_field + ".type' must be \"text\" or \"image_url\"" +
                             (type && type->is_string() ? ", not \"" + type->as_string() + "\"" : std::string()),
                         part_field + ".type");
    }
    if (type->as_string() == "image_url") {
      if (!sink.images) {
        throw RequestError("'" + part_field + "' is an image; images go in user messages only", part_field);
      }
      std::string url_field;
      sink.images->push_back(image_part(part, part_field, sink.request_bytes, &url_field));
      sink.fields->push_back(std::move(url_field));
      text += kImageMarker;
      continue;
    }
    const Value* t = part.find("text");
    if (!t || !t->is_string()) throw RequestError("'" + part_field + ".text' must be a string", part_field + ".text");
    text += checked_text(t->as_string(), part_field + ".text");
  }
  return text;
}

const Value& object_at(const Value& parent, const char* name, const std::string& field) {
  const Value* v = required(parent, name, field);
  if (!v->is_object()) wrong_type(field, "an object", *v);
  return *v;
}

const std::string& string_at(const Value& parent, const char* name, const std::string& field) {
  const Value* v = required(parent, name, field);
  if (!v->is_string()) wrong_type(field, "a string", *v);
  return v->as_string();
}

// OpenAI's tools: [{"type": "function", "function": {"name", "description"?,
// "parameters"?}}]. The names, for tool_choice to name one of them.
std::vector<std::string> tool_names(const Value& tools) {
  if (!tools.is_array()) wrong_type("tools", "an array", tools);
  std::vector<std::string> names;
  for (size_t i = 0; i < tools.items().size(); ++i) {
    const std::string field = "tools[" + std::to_string(i) + "]";
    const Value& tool = tools.items()[i];
    if (!tool.is_object()) wrong_type(field, "an object", tool);
    if (string_at(tool, "type", field + ".type") != "function") {
      throw RequestError("'" + field + ".type' must be \"function\"", field + ".type");
    }
    const Value& function = object_at(tool, "function", field + ".function");
    const Value* name = required(function, "name", field + ".function.name");
    check_name(*name, field + ".function.name");
    if (std::find(names.begin(), names.end(), name->as_string()) != names.end()) {
      throw RequestError("'" + field + ".function.name' names a function given before", field + ".function.name");
    }
    names.push_back(name->as_string());
    if (const Value* d = member(function, "description"); d && !d->is_string()) {
      wrong_type(field + ".function.description", "a string", *d);
    }
    if (const Value* p = member(function, "parameters"); p && !p->is_object()) {
      wrong_type(field + ".function.parameters", "an object (a JSON Schema)", *p);
    }
  }
  return names;
}

void parse_tool_choice(const Value& body, const std::vector<std::string>& names, ChatTools& tools) {
  const Value* choice = member(body, "tool_choice");
  if (!choice) return;
  if (choice->is_string()) {
    const std::string& c = choice->as_string();
    if (c == "none") {
      tools.choice = PEAK_TOOL_CHOICE_NONE;
    } else if (c == "auto") {
      tools.choice = PEAK_TOOL_CHOICE_AUTO;
    } else if (c == "required") {
      tools.choice = PEAK_TOOL_CHOICE_REQUIRED;
    } else {
      throw RequestError("'tool_choice' must be \"none\", \"auto\", \"required\" or a function, not \"" + c + "\"",
                         "tool_choice");
    }
  } else if (choice->is_object()) {
    if (string_at(*choice, "type", "tool_choice.type") != "function") {
      throw RequestError("'tool_choice.type' must be \"function\"", "tool_choice.type");
    }
    const std::string& name =
        string_at(object_at(*choice, "function", "tool_choice.function"), "name", "tool_choice.function.name");
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      throw RequestError("'tool_choice' names the function '" + name + "', which is not among the tools",
                         "tool_choice");
    }
    tools.choice = PEAK_TOOL_CHOICE_FUNCTION;
    tools.function = name;
  } else {
    wrong_type("tool_choice", "a string or an object", *choice);
  }
  if (names.empty() && tools.choice != PEAK_TOOL_CHOICE_NONE && tools.choice != PEAK_TOOL_CHOICE_AUTO) {
    throw RequestError("'tool_choice' asks for a call, but the request gives no tools", "tool_choice");
  }
}

ChatTools parse_tools(const Value& body, const std::optional<TextConstraint>& constraint) {
  ChatTools tools;
  std::vector<std::string> names;
  if (const Value* list = member(body, "tools")) {
    names = tool_names(*list);
    if (!names.empty()) tools.json = peak::json::write(*list);
  }
  parse_tool_choice(body, names, tools);
  tools.parallel = boolean(body, "parallel_tool_calls", true);
  if (!names.empty() && constraint) {
    // The calls have a grammar of their own (the tools' schemas).
    throw RequestError("'tools' and '" + top_field(*constraint) +
                           "' do not go together: the calls follow the tools' "
                           "schemas",
                       top_field(*constraint));
  }
  return tools;
}

// messages[i].tool_calls: [{"id", "type": "function", "function": {"name", "arguments"}}].
std::vector<ChatToolCall> message_tool_calls(const Value& calls, const std::string& field) {
  if (!calls.is_array()) wrong_type(field, "an array", calls);
  std::vector<ChatToolCall> out;
  for (size_t j = 0; j < calls.items().size(); ++j) {
    const std::string at = field + "[" + std::to_string(j) + "]";
    const Value& call = calls.items()[j];
    if (!call.is_object()) wrong_type(at, "an object", call);
    if (const Value* type = member(call, "type"); type && (!type->is_string() || type->as_string() != "function")) {
      throw RequestError("'" + at + ".type' must be \"function\"", at + ".type");
    }
    ChatToolCall c;
    c.id = string_at(call, "id", at + ".id");
    if (c.id.empty()) throw RequestError("'" + at + ".id' must not be empty", at + ".id");
    for (const ChatToolCall& before : out) {
      if (before.id == c.id) throw RequestError("'" + at + ".id' repeats the id of a call before it", at + ".id");
    }
    const Value& function = object_at(call, "function", at + ".function");
    c.name = string_at(function, "name", at + ".function.name");
    if (c.name.empty()) throw RequestError("'" + at + ".function.name' must not be empty", at + ".function.name");
    c.arguments = string_at(function, "arguments", at + ".function.arguments");
    out.push_back(std::move(c));
  }
  return out;
}

// What may come after `before` (the message before; nullptr: none): user
// first, then user and assistant alternating, an assistant's calls answered by
// tool results naming them, and after the results more of them or the answer.
void check_order(const std::vector<ChatMessage>& messages, const ChatMessage& m, const std::string& field) {
  const ChatMessage* before = messages.empty() ? nullptr : &messages.back();
  const bool after_calls = before && (before->role == PEAK_ROLE_TOOL || !before->tool_calls.empty());
  if (m.role == PEAK_ROLE_TOOL) {
    if (!after_calls)
      throw RequestError("a tool message follows an assistant message with tool_calls", field + ".role");
    auto answer = messages.rbegin();
    while (answer->role == PEAK_ROLE_TOOL) ++answer;
    const auto& calls = answer->tool_calls;
    const bool known =
        std::any_of(calls.begin(), calls.end(), [&](const ChatToolCall& c) { return c.id == m.tool_call_id; });
    if (!known) {
      throw RequestError("'" + field + ".tool_call_id' is '" + m.tool_call_id +
                             "', not the id of a call of the assistant message before it",
                         field + ".tool_call_id");
    }
    for (auto r = messages.rbegin(); r != answer; ++r) {
      if (r->tool_call_id == m.tool_call_id) {
        throw RequestError("'" + field + ".tool_call_id' answers a call answered before", field + ".tool_call_id");
      }
    }
    return;
  }
  if (before && before->role == PEAK_ROLE_ASSISTANT && after_calls) {
    throw RequestError("the assistant message before called tools: tool messages with their results come next",
                       field + ".role");
  }
  const bool answers = before && (before->role == PEAK_ROLE_USER || before->role == PEAK_ROLE_TOOL);
  if ((m.role == PEAK_ROLE_ASSISTANT) != answers) {
    throw RequestError("user and assistant messages must alternate, starting with a user message", field + ".role");
  }
}

ChatMessage chat_message(const Value& m, const std::string& field, const std::string& role, size_t* image_bytes) {
  ChatMessage message;
  const Value* content = m.find("content");
  if (role == "user") {
    message.role = PEAK_ROLE_USER;
  } else if (role == "assistant") {
    message.role = PEAK_ROLE_ASSISTANT;
    if (const Value* calls = member(m, "tool_calls"))
      message.tool_calls = message_tool_calls(*calls, field + ".tool_calls");
  } else if (role == "tool") {
    message.role = PEAK_ROLE_TOOL;
    message.tool_call_id = string_at(m, "tool_call_id", field + ".tool_call_id");
  } else {
    throw RequestError("unsupported role '" + role + "' (system, user, assistant and tool are)", field + ".role");
  }
  if (!content && message.tool_calls.empty()) {
    throw RequestError("'" + field + ".content' is required", field + ".content");
  }
  if (content) {
    const ImageSink sink =
        message.role == PEAK_ROLE_USER ? ImageSink{&message.images, &message.image_fields, image_bytes} : ImageSink{};
    message.content = content_text(*content, field + ".content", sink);
  }
  return message;
}

}  // namespace

peak_sampler_params GenerationRequest::sampler(const peak_sampler_params& defaults) const {
  peak_sampler_params p = defaults;
  if (temperature) p.temperature = static_cast<float>(*temperature);
  if (top_p) p.top_p = static_cast<float>(*top_p);
  if (min_p) p.min_p = static_cast<float>(*min_p);
  if (top_k) p.top_k = static_cast<size_t>(*top_k);
  if (presence_penalty) p.presence_penalty = static_cast<float>(*presence_penalty);
  if (frequency_penalty) p.frequency_penalty = static_cast<float>(*frequency_penalty);
  if (repeat_penalty) p.repeat_penalty = static_cast<float>(*repeat_penalty);
  if (seed) p.seed = static_cast<uint64_t>(*seed);
  if (constraint) {
    p.grammar = p.grammar_root = p.json_schema = nullptr;
    (constraint->json_schema ? p.json_schema : p.grammar) = constraint->text.c_str();
  }
  return p;
}

ChatRequest parse_chat_request(const Value& body) {
  require_object(body);
  ChatRequest r;
  parse_generation(body, r);
  r.tools = parse_tools(body, r.constraint);
  const Value* messages = body.find("messages");
  if (!messages) throw RequestError("'messages' is required", "messages");
  if (!messages->is_array()) wrong_type("messages", "an array", *messages);
  if (messages->items().empty()) throw RequestError("'messages' must not be empty", "messages");
  const Value* last_role = messages->items().back().find("role");
  if (last_role && last_role->is_string() && last_role->as_string() != "user" && last_role->as_string() != "tool") {
    throw RequestError("the last message must be a user message (or tool results)", "messages");
  }
  size_t image_bytes = 0;  // the pictures' so far
  for (size_t i = 0; i < messages->items().size(); ++i) {
    const std::string field = "messages[" + std::to_string(i) + "]";
    const Value& m = messages->items()[i];
    if (!m.is_object()) wrong_type(field, "an object", m);
    const Value* role = m.find("role");
    if (!role) throw RequestError("'" + field + ".role' is required", field + ".role");
    if (!role->is_string()) wrong_type(field + ".role", "a string", *role);
    const std::string& name = role->as_string();
    if (name == "system" || name == "developer") {
      const Value* content = m.find("content");
      if (!content) throw RequestError("'" + field + ".content' is required", field + ".content");
      const std::string text = content_text(*content, field + ".content");
      if (i != 0) throw RequestError("a system message may only come first", field + ".role");
      r.system = text;
      continue;
    }
    ChatMessage message = chat_message(m, field, name, &image_bytes);
    check_order(r.messages, message, field);
    r.messages.push_back(std::move(message));
  }
  if (r.messages.empty() || (r.messages.back().role != PEAK_ROLE_USER && r.messages.back().role != PEAK_ROLE_TOOL)) {
    throw RequestError("the last message must be a user message (or tool results)", "messages");
  }
  if (const Value* c = member(body, "conversation")) {
    if (!c->is_string()) wrong_type("conversation", "a string", *c);
    if (c->as_string().empty() || c->as_string().size() > kMaxConversationIdBytes) {
      throw RequestError("'conversation' must be 1 to " + std::to_string(kMaxConversationIdBytes) + " bytes",
                         "conversation");
    }
    r.conversation = c->as_string();
  }
  return r;
}

CompletionRequest parse_completion_request(const Value& body) {
  require_object(body);
  CompletionRequest r;
  parse_generation(body, r);
  const Value* prompt = body.find("prompt");
  if (!prompt) throw RequestError("'prompt' is required", "prompt");
  if (prompt->is_array() && prompt->items().size() == 1 && prompt->items()[0].is_string()) {
    r.prompt = prompt->items()[0].as_string();  // a batch of one
  } else if (prompt->is_string()) {
    r.prompt = prompt->as_string();
  } else {
    wrong_type("prompt", "a string (or an array of one string)", *prompt);
  }
  return r;
}

TokenizeRequest parse_tokenize_request(const Value& body) {
  require_object(body);
  TokenizeRequest r;
  const Value* content = body.find("content");
  if (!content) throw RequestError("'content' is required", "content");
  if (!content->is_string()) wrong_type("content", "a string", *content);
  r.content = content->as_string();
  r.add_special = boolean(body, "add_special", false);
  r.with_pieces = boolean(body, "with_pieces", false);
  return r;
}

std::vector<int32_t> parse_detokenize_request(const Value& body, size_t n_vocab) {
  require_object(body);
  const Value* tokens = body.find("tokens");
  if (!tokens) throw RequestError("'tokens' is required", "tokens");
  if (!tokens->is_array()) wrong_type("tokens", "an array", *tokens);
  return token_ids(*tokens, "tokens", n_vocab);
}

EmbeddingRequest parse_embedding_request(const Value& body, size_t n_vocab, size_t n_embd) {
  require_object(body);
  EmbeddingRequest r;
  const Value* input = required(body, "input", "input");
  if (input->is_string()) {
    if (input->as_string().empty()) throw RequestError("'input' is an empty string", "input");
    r.texts.push_back(input->as_string());
    r.single = true;
  } else if (!input->is_array()) {
    wrong_type("input", "a string, a list of strings, a list of token ids or a list of token-id lists", *input);
  } else {
    const std::vector<Value>& items = input->items();
    if (items.empty()) throw RequestError("'input' is an empty list", "input");
    check_count(items.size(), kMaxEmbeddingInputs, "input", "inputs");
    // The first item tells which list it is; every other must be alike.
    if (items[0].is_integer()) {
      r.token_lists.push_back(token_ids(*input, "input", n_vocab));
      r.single = true;
    } else {
      for (size_t i = 0; i < items.size(); ++i) {
        const std::string field = "input[" + std::to_string(i) + "]";
        const Value& item = items[i];
        if (items[0].is_string()) {
          if (!item.is_string()) wrong_type(field, "a string (as input[0] is)", item);
          if (item.as_string().empty()) throw RequestError("'" + field + "' is an empty string", field);
          r.texts.push_back(item.as_string());
        } else if (items[0].is_array()) {
          if (!item.is_array()) wrong_type(field, "a list of token ids (as input[0] is)", item);
          if (item.items().empty()) throw RequestError("'" + field + "' is an empty list", field);
          r.token_lists.push_back(token_ids(item, field, n_vocab));
        } else {
          wrong_type(field, "a string, a token id or a list of token ids", item);
        }
      }
    }
  }
  if (const Value* format = member(body, "encoding_format")) {
    if (!format->is_string()) wrong_type("encoding_format", "a string", *format);
    if (format->as_string() != "float" && format->as_string() != "base64") {
      throw RequestError("'encoding_format' must be \"float\" or \"base64\", not \"" + format->as_string() + "\"",
                         "encoding_format");
    }
    r.base64 = format->as_string() == "base64";
  }
  if (const std::optional<int64_t> d = integer(body, "dimensions", 1, static_cast<int64_t>(n_embd))) {
    r.dimensions = static_cast<size_t>(*d);
  }
  return r;
}

RerankRequest parse_rerank_request(const Value& body) {
  require_object(body);
  RerankRequest r;
  const Value* query = required(body, "query", "query");
  if (!query->is_string()) wrong_type("query", "a string", *query);
  if (query->as_string().empty()) throw RequestError("'query' is an empty string", "query");
  r.query = query->as_string();
  const Value* documents = required(body, "documents", "documents");
  if (!documents->is_array()) wrong_type("documents", "a list of strings", *documents);
  const std::vector<Value>& items = documents->items();
  if (items.empty()) throw RequestError("'documents' is an empty list", "documents");
  check_count(items.size(), kMaxRerankDocuments, "documents", "documents");
  for (size_t i = 0; i < items.size(); ++i) {
    const std::string field = "documents[" + std::to_string(i) + "]";
    const Value* text = &items[i];
    std::string at = field;
    // Cohere's and Jina's other form of a document: {"text": "..."}.
    if (text->is_object()) {
      at = field + ".text";
      text = required(*text, "text", at);
    }
    if (!text->is_string()) wrong_type(at, "a string (or an object with a string \"text\")", *text);
    if (text->as_string().empty()) throw RequestError("'" + at + "' is an empty string", at);
    r.documents.push_back(text->as_string());
  }
  // More than there are documents returns them all, as llama.cpp's server does.
  if (const std::optional<int64_t> top_n = integer(body, "top_n", 1, INT32_MAX)) {
    r.top_n = static_cast<size_t>(*top_n);
  }
  r.return_documents = boolean(body, "return_documents", true);
  return r;
}

}  // namespace peak_server
