package peak;

/** Why a generation stopped (peak_stop_reason). */
public enum StopReason {
  /** An end-of-generation token. */
  END_OF_GENERATION,
  MAX_TOKENS,
  CONTEXT_FULL,
  /** The C callback asked to stop (here: a {@link TextCallback} threw, and the call rethrew it). */
  CALLBACK,
  /** A {@link CancellationToken} was cancelled after the prompt was evaluated. */
  ABORTED
}
