package peak;

/**
 * How {@link Peak#parseResponse} reads an answer (peak_tool_parse_params); starts from peak's
 * defaults.
 */
public final class ToolParseParams {
  String formatName;
  String templateSource;
  String tools;
  String idPrefix;
  boolean parseReasoning;
  boolean reasoningOpened;
  String reasoningOpen;
  String reasoningClose;

  public ToolParseParams() {
    Native.fillDefaults(this);
  }

  /**
   * The format calls are written in, by name: "hermes" (Qwen2.5, Qwen3, SmolLM3), "llama3-json",
   * "mistral", "phi4", "granite", "deepseek-r1", "qwen3-xml", "minicpm-xml", "lfm2" or "generic" (the
   * answer is {@code {"tool_calls": [...]}} or {@code {"response": "..."}}); peak.h shows each.
   * null (default): the one {@link #templateSource} renders past calls in, else the model's
   * template's, else "generic". An unknown name throws PeakException (INVALID_ARGUMENT).
   */
  public ToolParseParams formatName(String value) {
    formatName = value;
    return this;
  }

  public String formatName() {
    return formatName;
  }

  /**
   * A Jinja chat template (e.g. a model's tokenizer.chat_template) whose way of writing past calls
   * tells the format; null (default): none.
   */
  public ToolParseParams templateSource(String value) {
    templateSource = value;
    return this;
  }

  public String templateSource() {
    return templateSource;
  }

  /**
   * The request's tools, as OpenAI's tools array in JSON text, or null (default): the XML formats
   * then keep the values of parameters typed "string" as strings and read the others as JSON.
   * Text that is not a JSON array throws PeakException (INVALID_ARGUMENT).
   */
  public ToolParseParams tools(String json) {
    tools = json;
    return this;
  }

  public String tools() {
    return tools;
  }

  /**
   * Calls whose format has no ids (all but "mistral") get "call_" + this prefix + their index in the
   * answer (0, 1, ...): the same text gives the same ids, so give each answer a prefix of its own
   * (letters and digits) to keep them unique in a conversation. null (default): "".
   */
  public ToolParseParams idPrefix(String value) {
    idPrefix = value;
    return this;
  }

  public String idPrefix() {
    return idPrefix;
  }

  /**
   * true (default): the reasoning between {@link #reasoningOpen} and {@link #reasoningClose} at the
   * text's start is {@link ParsedResponse#reasoningContent()}; false: it stays in the content.
   */
  public ToolParseParams parseReasoning(boolean value) {
    parseReasoning = value;
    return this;
  }

  public boolean parseReasoning() {
    return parseReasoning;
  }

  /** true: the prompt opened the reasoning, so the text starts inside it (default false). */
  public ToolParseParams reasoningOpened(boolean value) {
    reasoningOpened = value;
    return this;
  }

  public boolean reasoningOpened() {
    return reasoningOpened;
  }

  /** The marker that opens the reasoning; null (default): "&lt;think&gt;". */
  public ToolParseParams reasoningOpen(String value) {
    reasoningOpen = value;
    return this;
  }

  public String reasoningOpen() {
    return reasoningOpen;
  }

  /** The marker that closes it; null (default): "&lt;/think&gt;". */
  public ToolParseParams reasoningClose(String value) {
    reasoningClose = value;
    return this;
  }

  public String reasoningClose() {
    return reasoningClose;
  }
}
