package peak;

/** Where a message is for the model (peak_message_state). */
public enum MessageState {
  /** The model reads it: the system prompt, or a message in Recent. */
  IN_CONTEXT,
  /** Dropped from Recent; the summary in place covers it. */
  SUMMARIZED,
  /** Dropped from Recent and in no summary (yet, or ever in {@link MemoryMode#WINDOW}). */
  DROPPED
}
