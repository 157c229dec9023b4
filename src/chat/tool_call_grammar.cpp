#include "chat/tool_call_grammar.h"

#include <stdexcept>
#include <string_view>
#include <utility>
#include <vector>

#include "sampling/gbnf_text.h"
#include "sampling/json_schema.h"

namespace peak::chat {
namespace {

using sampling::Grammar;
using GrammarPtr = std::shared_ptr<const Grammar>;

GrammarPtr literal(std::string_view text) { return Grammar::parse("root ::= " + sampling::gbnf_literal(text)); }

GrammarPtr json_grammar(const json::Value& schema) { return Grammar::parse(sampling::json_schema_to_gbnf(schema)); }

GrammarPtr sequence(const std::vector<GrammarPtr>& parts) {
  GrammarPtr joined = parts.front();
  for (size_t i = 1; i < parts.size(); ++i) joined = Grammar::then(*joined, *parts[i]);
  return joined;
}

GrammarPtr any_of(const std::vector<GrammarPtr>& choices) {
  GrammarPtr joined = choices.front();
  for (size_t i = 1; i < choices.size(); ++i) joined = Grammar::either(*joined, *choices[i]);
  return joined;
}

struct Tool {
  size_t index;  // in the tools array
  std::string name;
  json::Value parameters;
};

std::string tool_names(const json::Value& tools) {
  std::string names;
  for (const json::Value& tool : tools.items()) {
    const json::Value* function = tool.find("function");
    const json::Value* name = function ? function->find("name") : nullptr;
    if (name && name->is_string()) names += (names.empty() ? "" : ", ") + name->as_string();
  }
  return names;
}

// The tools the answer may call, each with the schema of its arguments.
std::vector<Tool> callable_tools(const json::Value& tools, const ToolChoice& choice) {
  if (!tools.is_array() || tools.items().empty()) throw std::invalid_argument("tool calls need at least one tool");
  std::vector<Tool> callable;
  for (size_t i = 0; i < tools.items().size(); ++i) {
    const json::Value* function = tools.items()[i].find("function");
    const json::Value* name = function ? function->find("name") : nullptr;
    if (!name || !name->is_string()) {
      throw std::invalid_argument("tools[" + std::to_string(i) + "].function.name: expected a string");
    }
    if (!choice.function.empty() && name->as_string() != choice.function) continue;
    const json::Value* parameters = function->find("parameters");
    callable.push_back({i, name->as_string(), parameters ? *parameters : json::Value::object().set("type", "object")});
  }
  if (callable.empty()) {
    throw std::invalid_argument("tool_choice names the function '" + choice.function +
                                "', which is not among the tools (" + tool_names(tools) + ")");
  }
  return callable;
}

json::Value string_array(std::initializer_list<const char*> names) {
  json::Value list = json::Value::array();
  for (const char* name : names) list.push(name);
  return list;
}

// The JSON Schema of one call object: its name, then its arguments (then the
// id the model writes, in formats that have one).
json::Value call_schema(const ToolCallFormat& format, const Tool& tool) {
  json::Value properties = json::Value::object();
  properties.set("name", json::Value::object().set("const", tool.name));
  properties.set(format.arguments_key, tool.parameters);
  json::Value required = json::Value::array();
  required.push("name").push(format.arguments_key);
  if (format.model_ids) {
    // Mistral's ids: nine letters and digits.
    properties.set("id", json::Value::object().set("type", "string").set("pattern", "^[a-zA-Z0-9]{9}$"));
    required.push("id");
  }
  return json::Value::object()
      .set("type", "object")
      .set("properties", std::move(properties))
      .set("required", std::move(required))
      .set("additionalProperties", false);
}

json::Value calls_schema(const ToolCallFormat& format, const std::vector<Tool>& tools) {
  if (tools.size() == 1) return call_schema(format, tools.front());
  json::Value choices = json::Value::array();
  for (const Tool& tool : tools) choices.push(call_schema(format, tool));
  return json::Value::object().set("anyOf", std::move(choices));
}

// How many calls an answer may hold: 0 for any number.
size_t call_bound(const ToolChoice& choice) { return choice.parallel ? choice.max_calls : 1; }

json::Value array_schema(json::Value items, const ToolChoice& choice) {
  json::Value schema = json::Value::object().set("type", "array").set("items", std::move(items)).set("minItems", 1);
  if (call_bound(choice) > 0) schema.set("maxItems", static_cast<int64_t>(call_bound(choice)));
  return schema;
}

// `call (separator call)*`, as many rounds as the choice allows: a bounded
// list nests `call (separator list)?`, which holds one copy of the call per round.
GrammarPtr repeated(const GrammarPtr& call, const ToolChoice& choice, std::string_view separator) {
  const GrammarPtr between = literal(separator);
  const size_t bound = call_bound(choice);
  if (bound == 0) return Grammar::one_or_more(*call, *between);
  GrammarPtr list = call;
  for (size_t n = 1; n < bound; ++n)
    list = Grammar::either(*call, *Grammar::then(*call, *Grammar::then(*between, *list)));
  return list;
}

GrammarPtr deepseek_calls(const ToolCallFormat& format, const std::vector<Tool>& tools, const ToolChoice& choice) {
  std::vector<GrammarPtr> calls;
  for (const Tool& tool : tools) {
    calls.push_back(
        sequence({literal(std::string(format.call.open) + tool.name + std::string(format.call.name_end) + "```json\n"),
                  json_grammar(tool.parameters), literal("\n```" + std::string(format.call.close))}));
  }
  return sequence({literal(format.open), repeated(any_of(calls), choice, "\n"), literal(format.close)});
}

// Llama 3 under "auto": one call, or text that does not open with '{'.
GrammarPtr call_or_text(const GrammarPtr& call) {
  return Grammar::either(*Grammar::then(*Grammar::parse("root ::= [ \\t\\n\\r]*"), *call),
                         *Grammar::parse("root ::= [ \\t\\n\\r]* ([^{ \\t\\n\\r] .*)?"));
}

json::Value envelope_schema(const ToolCallFormat& format, const std::vector<Tool>& tools, const ToolChoice& choice) {
  json::Value calls =
      json::Value::object()
          .set("type", "object")
          .set("properties", json::Value::object().set("tool_calls", array_schema(calls_schema(format, tools), choice)))
          .set("required", string_array({"tool_calls"}))
          .set("additionalProperties", false);
  if (choice.mode == ToolChoice::Mode::Required || !choice.function.empty()) return calls;
  json::Value response =
      json::Value::object()
          .set("type", "object")
          .set("properties", json::Value::object().set("response", json::Value::object().set("type", "string")))
          .set("required", string_array({"response"}))
          .set("additionalProperties", false);
  return json::Value::object().set("anyOf", json::Value::array().push(std::move(calls)).push(std::move(response)));
}

// The error of the tools' calls as a JSON Schema: the first tool whose
// parameters are refused alone, named (converted again only now that one is).
std::invalid_argument schema_error(const std::vector<Tool>& tools, const sampling::JsonSchemaError& error) {
  for (const Tool& tool : tools) {
    try {
      sampling::json_schema_to_gbnf(tool.parameters);
    } catch (const sampling::JsonSchemaError& e) {
      return std::invalid_argument("tools[" + std::to_string(tool.index) + "].function.parameters (tool '" + tool.name +
                                   "'): " + e.what());
    }
  }
  return std::invalid_argument(std::string("the tools' calls as a JSON Schema: ") + error.what());
}

}  // namespace

ToolCallGrammar tool_call_grammar(const ToolCallFormat& format, const json::Value& tools, const ToolChoice& choice) {
  if (choice.max_calls > kMaxBoundedCalls) {
    throw std::invalid_argument("at most " + std::to_string(kMaxBoundedCalls) + " calls can be a bound, not " +
                                std::to_string(choice.max_calls));
  }
  const std::vector<Tool> callable = callable_tools(tools, choice);
  const bool required = choice.mode == ToolChoice::Mode::Required || !choice.function.empty();
  ToolCallGrammar result;
  try {
    switch (format.shape) {
      case CallShape::JsonObject: {
        const GrammarPtr call = json_grammar(calls_schema(format, callable));
        if (format.answer_is_json) {  // Llama 3: one call, the whole answer
          result.grammar = required ? call : call_or_text(call);
          break;
        }
        const GrammarPtr section =
            sequence({literal(std::string(format.open) + "\n"), call, literal("\n" + std::string(format.close))});
        result.grammar = repeated(section, choice, "\n");
        if (!required) result.trigger = std::string(format.open);
        break;
      }
      case CallShape::JsonArray:
        result.grammar =
            sequence({literal(format.open), json_grammar(array_schema(calls_schema(format, callable), choice))});
        if (!format.close.empty()) result.grammar = Grammar::then(*result.grammar, *literal(format.close));
        if (!required) result.trigger = std::string(format.open);
        break;
      case CallShape::DeepSeekCalls:
        result.grammar = deepseek_calls(format, callable, choice);
        if (!required) result.trigger = std::string(format.open);
        break;
      case CallShape::Envelope: result.grammar = json_grammar(envelope_schema(format, callable, choice)); break;
      case CallShape::XmlCalls:
      case CallShape::PythonCalls:
        throw std::invalid_argument("tool calls in the format '" + std::string(format.name) +
                                    "' are read from the answer but have no grammar to constrain them");
    }
  } catch (const sampling::JsonSchemaError& e) {
    throw schema_error(callable, e);
  } catch (const sampling::GrammarError& e) {
    throw std::invalid_argument(std::string("the tools' calls as a grammar: ") + e.what());
  } catch (const std::length_error& e) {
    throw std::invalid_argument(std::string("the tools' calls as a grammar: ") + e.what());
  }
  return result;
}

}  // namespace peak::chat
