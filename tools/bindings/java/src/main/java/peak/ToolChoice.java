package peak;

/** Which tools a session's answers may call, as OpenAI's tool_choice (peak_tool_choice). */
public enum ToolChoice {
  /** The tools stay out of the prompt and no call is read: every answer is text. */
  NONE,
  /** The model writes text, calls, or text then calls, as it chooses (default). */
  AUTO,
  /** The answer is one call or more from its start. */
  REQUIRED,
  /** The answer calls only {@link SessionParams#toolFunction(String)}, from its start. */
  FUNCTION
}
