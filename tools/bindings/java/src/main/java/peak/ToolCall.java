package peak;

import java.util.Objects;

/**
 * One tool call of an answer (peak_tool_call): its id, the tool's name and the arguments as the
 * text of a JSON object. Immutable. peak makes them for the calls a model writes ({@link
 * Session#toolCalls()}, {@link ToolCallListener}, {@link ParsedResponse}); an app makes them to
 * replay a conversation ({@link Session#appendToolCalls}).
 */
public final class ToolCall {
  private final String id;
  private final String name;
  private final String arguments;

  /** {@code arguments}: a JSON object's text, e.g. {@code {"city": "Paris"}}. */
  public ToolCall(String id, String name, String arguments) {
    this.id = Objects.requireNonNull(id, "id");
    this.name = Objects.requireNonNull(name, "name");
    this.arguments = Objects.requireNonNull(arguments, "arguments");
  }

  /**
   * Names the call for its result ({@link Session#addToolResult}). A session's are unique within it:
   * "call_t&lt;n&gt;c&lt;i&gt;" for the i-th call of the n-th answer read for calls, or the id the
   * model wrote in formats that have one.
   */
  public String id() {
    return id;
  }

  /** The tool called: one of the session's tools. */
  public String name() {
    return name;
  }

  /** The arguments as the text of a JSON object. */
  public String arguments() {
    return arguments;
  }

  @Override
  public boolean equals(Object other) {
    if (!(other instanceof ToolCall)) return false;
    ToolCall o = (ToolCall) other;
    return id.equals(o.id) && name.equals(o.name) && arguments.equals(o.arguments);
  }

  @Override
  public int hashCode() {
    return Objects.hash(id, name, arguments);
  }

  @Override
  public String toString() {
    return "ToolCall{" + id + ": " + name + " " + arguments + "}";
  }
}
