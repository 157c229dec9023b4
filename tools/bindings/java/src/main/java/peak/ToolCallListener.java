package peak;

/**
 * Receives each tool call of an answer as soon as it parsed, whole, while the answer's text streams
 * ({@link Session#setToolCallListener}). Called on the generating thread, during the call.
 */
@FunctionalInterface
public interface ToolCallListener {
  /** {@code index}: the call's place among the answer's calls (0, 1, ...). */
  void onToolCall(ToolCall call, int index);
}
