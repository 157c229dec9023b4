package peak;

/** How a new summary is put in place (peak_rebuild_strategy). */
public enum RebuildStrategy {
  /** Keep Prefix and Recent, prefill the new Summary, re-rotate Recent (approximate). */
  SHIFT,
  /** Clear and prefill Prefix + Summary + Recent on the next turn (exact). */
  REPREFILL,
  /** The summary worker prefills a second cache and the next turn swaps it in (exact; default). */
  BACKGROUND
}
