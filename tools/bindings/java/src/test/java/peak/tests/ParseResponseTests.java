package peak.tests;

import peak.ParsedResponse;
import peak.Peak;
import peak.Status;
import peak.ToolCall;
import peak.ToolParseParams;

/**
 * Answers read back into OpenAI's assistant message (peak_chat_parse_response), without a model:
 * the formats named, and the shapes peak.h documents for content, reasoning and calls.
 */
public final class ParseResponseTests {
  private static ParsedResponse parse(String text, ToolParseParams params) {
    return Peak.parseResponse(null, text, params);
  }

  private static ToolParseParams hermes() {
    return new ToolParseParams().formatName("hermes");
  }

  private static void checkCall(ParsedResponse r, String id, String name, String arguments, String what) {
    Check.equal(1, r.toolCalls().size(), what + ": calls");
    ToolCall call = r.toolCalls().get(0);
    Check.equal(id, call.id(), what + ": id");
    Check.equal(name, call.name(), what + ": name");
    Check.equal(arguments, Texts.compactJson(call.arguments()), what + ": arguments");
  }

  @Test
  public void paramsStartFromPeaksDefaults() {
    ToolParseParams p = new ToolParseParams();
    Check.equal(null, p.formatName(), "format name");
    Check.equal(null, p.templateSource(), "template source");
    Check.equal(null, p.tools(), "tools");
    Check.equal(null, p.idPrefix(), "id prefix");
    Check.isTrue(p.parseReasoning(), "parse reasoning");
    Check.isTrue(!p.reasoningOpened(), "reasoning opened");
    Check.equal(null, p.reasoningOpen(), "reasoning open");
    Check.equal(null, p.reasoningClose(), "reasoning close");
  }

  @Test
  public void aHermesCall() {
    String text = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>";
    ParsedResponse r = parse(text, hermes());
    checkCall(r, "call_0", "get_weather", "{\"city\":\"Paris\"}", "hermes");
    Check.equal(null, r.content(), "the content of an answer that only calls");
    Check.equal(null, r.reasoningContent(), "reasoning");
    // Ids are "call_" + the prefix + the call's index; text before a call is the content.
    r = parse("Let me look.\n" + text, hermes().idPrefix("a1"));
    checkCall(r, "call_a10", "get_weather", "{\"city\":\"Paris\"}", "hermes with text");
    Check.equal("Let me look.", r.content(), "the text before the call");
    Check.throwsA(UnsupportedOperationException.class, () -> parse(text, hermes()).toolCalls().clear());
  }

  @Test
  public void aCallThatDoesNotParseStaysInTheContent() {
    String text = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Par";
    ParsedResponse r = parse(text, hermes());
    Check.equal(text, r.content(), "a truncated call");
    Check.equal(0, r.toolCalls().size(), "calls");
  }

  @Test
  public void reasoningComesApart() {
    ParsedResponse r = parse("<think>r</think>x", new ToolParseParams());
    Check.equal("r", r.reasoningContent(), "reasoning");
    Check.equal("x", r.content(), "content");
    Check.equal(0, r.toolCalls().size(), "calls");
    r = parse("<think>r</think>x", new ToolParseParams().parseReasoning(false));
    Check.equal(null, r.reasoningContent(), "reasoning left in the content");
    Check.equal("<think>r</think>x", r.content(), "content with its reasoning");
    r = parse("r</think>x", new ToolParseParams().reasoningOpened(true));
    Check.equal("r", r.reasoningContent(), "reasoning the prompt opened");
    Check.equal("x", r.content(), "content after it");
    r = parse("[r]x", new ToolParseParams().reasoningOpen("[").reasoningClose("]"));
    Check.equal("r", r.reasoningContent(), "reasoning between markers of one's own");
    Check.equal("x", r.content(), "content after them");
  }

  @Test
  public void withoutAModelTheFormatIsGeneric() {
    // peak.h: the answer is {"tool_calls": [{"name": ..., "arguments": {...}}]} or {"response": "..."}.
    String city = "Z\u00fcrich \uD83D\uDE42";
    ParsedResponse r = Peak.parseResponse(null,
        "{\"tool_calls\": [{\"name\": \"get_weather\", \"arguments\": {\"city\": \"" + city + "\"}}]}");
    checkCall(r, "call_0", "get_weather", "{\"city\":\"" + city + "\"}", "generic");
    r = Peak.parseResponse(null, "{\"response\": \"Blue, \u65e5\u672c.\"}");
    Check.equal("Blue, \u65e5\u672c.", r.content(), "a generic answer of text");
    Check.equal(0, r.toolCalls().size(), "its calls");
  }

  @Test
  public void argumentsPeakRefuses() {
    Check.throwsPeak(Status.INVALID_ARGUMENT, "klingon", () -> parse("x", new ToolParseParams().formatName("klingon")));
    Check.throwsPeak(Status.INVALID_ARGUMENT, "tools_json", () -> parse("x", hermes().tools("{}")));
    Check.throwsPeak(Status.INVALID_ARGUMENT, "format_name holds a NUL character",
        () -> parse("x", new ToolParseParams().formatName("hermes\u0000")));
    Check.throwsPeak(Status.INVALID_ARGUMENT, "reasoning_open and reasoning_close may not be empty",
        () -> parse("x", new ToolParseParams().reasoningOpen("")));
    Check.throwsA(NullPointerException.class, () -> parse(null, hermes()));
    Check.throwsA(NullPointerException.class, () -> parse("x", null));
  }
}
