package peak;

/** How a session keeps a long conversation in its fixed cache (peak_memory_mode). */
public enum MemoryMode {
  /** Prefix + Summary + Recent (default). */
  SSSKV,
  /** Prefix + Recent: a sliding window, no summaries. */
  WINDOW,
  /** Grow until full, then {@link Status#CONTEXT_FULL}. */
  NONE
}
