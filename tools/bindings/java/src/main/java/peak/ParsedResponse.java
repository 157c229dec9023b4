package peak;

import java.util.Arrays;
import java.util.Collections;
import java.util.List;

/**
 * A generated answer read back into OpenAI's assistant message ({@link Peak#parseResponse}): its
 * text, its reasoning and its tool calls. Immutable.
 */
public final class ParsedResponse {
  private final String content;
  private final String reasoningContent;
  private final List<ToolCall> toolCalls;

  /** Made by the glue. */
  ParsedResponse(String content, String reasoningContent, ToolCall[] toolCalls) {
    this.content = content;
    this.reasoningContent = reasoningContent;
    this.toolCalls = Collections.unmodifiableList(Arrays.asList(toolCalls));
  }

  /**
   * The answer's text without its calls and reasoning; null when that is empty and the answer made
   * calls. A call that does not have its format's shape (JSON that does not parse, a missing closing
   * marker, a truncated answer) stays here as written.
   */
  public String content() {
    return content;
  }

  /** The reasoning, or null when there is none. Calls written inside the reasoning stay in it. */
  public String reasoningContent() {
    return reasoningContent;
  }

  /** The calls in the answer's order; empty when it made none. */
  public List<ToolCall> toolCalls() {
    return toolCalls;
  }

  @Override
  public String toString() {
    return "ParsedResponse{content " + content + ", reasoning " + reasoningContent + ", calls " + toolCalls + "}";
  }
}
