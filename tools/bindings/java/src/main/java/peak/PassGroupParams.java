package peak;

/**
 * How a {@link PassGroup} plans its shared passes (peak_pass_group_params); starts from peak's
 * defaults. The group's members need its cache types.
 */
public final class PassGroupParams {
  long nCtx;
  long maxSequences;
  long prefillChunk;
  long maxLogitRows;
  long nThreads;
  int typeK;
  int typeV;
  long gatherWaitUs;

  public PassGroupParams() {
    Native.fillDefaults(this);
  }

  /** KV cells of the largest member (default 4096); a larger member grows the plan as it joins. */
  public PassGroupParams nCtx(long value) {
    nCtx = value;
    return this;
  }

  /** Sequences in one pass, 1 to 64 (default 4). */
  public PassGroupParams maxSequences(long value) {
    maxSequences = value;
    return this;
  }

  /** Prompt tokens of one member in one pass (default 128). */
  public PassGroupParams prefillChunk(long value) {
    prefillChunk = value;
    return this;
  }

  /** Rows of logits one sequence takes from a pass: 1 (default), draftMax + 1 for prompt lookup. */
  public PassGroupParams maxLogitRows(long value) {
    maxLogitRows = value;
    return this;
  }

  /** 0 (default): {@link Peak#defaultThreads()}. */
  public PassGroupParams nThreads(long value) {
    nThreads = value;
    return this;
  }

  /** The members' KV cache types (default Q8_0, a session's default). */
  public PassGroupParams cacheType(CacheType k, CacheType v) {
    typeK = k.ggmlType;
    typeV = v.ggmlType;
    return this;
  }

  /** How long a pass waits for the last pass's members to come back (default 3000 µs). */
  public PassGroupParams gatherWaitUs(long value) {
    gatherWaitUs = value;
    return this;
  }
}
