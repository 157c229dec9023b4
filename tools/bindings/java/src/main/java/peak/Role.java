package peak;

/** Who wrote a message (peak_role). */
public enum Role {
  SYSTEM,
  USER,
  ASSISTANT,
  /** A tool's result ({@link Session#addToolResult}). */
  TOOL
}
