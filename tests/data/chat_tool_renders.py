# Writes chat_tool_renders.json: the 13 chat templates of ../shared/fixtures/templates
# rendered by Jinja2 for conversations given as OpenAI's chat API writes them
# (content null, tool_calls with JSON text arguments, tool messages with
# tool_call_id and name). Each conversation reaches Jinja2 as Hugging Face's
# apply_chat_template receives it from a caller that turns OpenAI's messages into
# its dicts: content null is None; arguments that are a JSON object are that
# dict (json.loads), any other text stays the string.
#
#   python3 tests/data/chat_tool_renders.py ../shared/fixtures/templates > tests/data/chat_tool_renders.json
import json
import os
import sys

import jinja2
from jinja2.ext import loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment

TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "description": "Weather",
    "parameters": {"type": "object",
                   "properties": {"city": {"type": "string"}, "days": {"type": "number", "minimum": 0.5, "default": 1.0}},
                   "required": ["city"]}}}]

CONVERSATIONS = [
    {"messages": [
        {"role": "system", "content": "You are helpful."},
        {"role": "user", "content": "Weather in Z\u00fcrich?"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call12345", "type": "function",
             "function": {"name": "get_weather", "arguments": "{\"city\": \"Z\u00fcrich\", \"days\": 1.0}"}}]},
        {"role": "tool", "content": "{\"temp\": 21}", "tool_call_id": "call12345", "name": "get_weather"},
        {"role": "assistant", "content": "It is 21 degrees."},
        {"role": "user", "content": "Thanks"}],
     "tools": TOOLS, "add_generation_prompt": True, "enable_thinking": False},
    {"messages": [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": "Checking.", "tool_calls": [
            {"id": "call67890", "type": "function", "function": {"name": "get_weather", "arguments": "Bern"}}]},
        {"role": "tool", "content": "sunny", "tool_call_id": "call67890"}],
     "add_generation_prompt": True},
]


def raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def environment():
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = lambda fmt: "22 Nov 2026"
    return env


def hf_arguments(text):
    try:
        value = json.loads(text)
    except ValueError:
        return text
    return value if isinstance(value, dict) else text


def hf_messages(messages):
    out = []
    for m in messages:
        m = dict(m)
        if "tool_calls" in m:
            m["tool_calls"] = [dict(c, function=dict(c["function"], arguments=hf_arguments(c["function"]["arguments"])))
                               for c in m["tool_calls"]]
        out.append(m)
    return out


def render(source, conversation):
    context = dict(conversation, messages=hf_messages(conversation["messages"]), bos_token="<s>", eos_token="</s>")
    try:
        return {"output": environment().from_string(source).render(**context), "error": None}
    except Exception as e:  # raise_exception, or Python's own error (TypeError, ...)
        return {"output": None, "error": str(e)}


def main(template_dir):
    names = sorted(f[:-len(".jinja")] for f in os.listdir(template_dir) if f.endswith(".jinja"))
    results = []
    for name in names:
        with open(os.path.join(template_dir, name + ".jinja"), encoding="utf-8") as f:
            source = f.read()
        for i, conversation in enumerate(CONVERSATIONS):
            results.append(dict(template=name, conversation=i, **render(source, conversation)))
    json.dump({"renderer": "jinja2 " + jinja2.__version__ + ", ImmutableSandboxedEnvironment(trim_blocks, lstrip_blocks, "
               "loopcontrols), tojson = json.dumps(ensure_ascii=False, ...), raise_exception, strftime_now returning "
               "'22 Nov 2026', bos_token <s>, eos_token </s>",
               "conversations": CONVERSATIONS, "results": results}, sys.stdout, ensure_ascii=False, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main(sys.argv[1])
