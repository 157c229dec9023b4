package peak;

/** A context's size and threads (peak_context_params); starts from peak's defaults. */
public final class ContextParams {
  long nCtx;
  long nBatch;
  long nThreads;
  int typeK;
  int typeV;
  boolean logitsAll;
  long maxLogitRows;
  PassGroup passGroup;

  public ContextParams() {
    Native.fillDefaults(this);
  }

  /** KV cache cells (default 4096). */
  public ContextParams nCtx(long value) {
    nCtx = value;
    return this;
  }

  public long nCtx() {
    return nCtx;
  }

  /** Tokens per forward pass when prefilling (default 512). */
  public ContextParams nBatch(long value) {
    nBatch = value;
    return this;
  }

  public long nBatch() {
    return nBatch;
  }

  /** 0 (default): {@link Peak#defaultThreads()}, the fast cores. */
  public ContextParams nThreads(long value) {
    nThreads = value;
    return this;
  }

  public long nThreads() {
    return nThreads;
  }

  /** The KV cache's types (default F16). */
  public ContextParams cacheType(CacheType k, CacheType v) {
    typeK = k.ggmlType;
    typeV = v.ggmlType;
    return this;
  }

  public CacheType typeK() {
    return CacheType.of(typeK);
  }

  public CacheType typeV() {
    return CacheType.of(typeV);
  }

  /** Reserve room for every token's logits (peak_context_eval_all_logits). */
  public ContextParams logitsAll(boolean value) {
    logitsAll = value;
    return this;
  }

  public boolean logitsAll() {
    return logitsAll;
  }

  /**
   * Rows of logits one forward pass may hand out (default 1): prompt lookup ({@link
   * GenerateOptions#lookupNgram(int)}) verifies a token and its draft in one pass and needs
   * draftMax + 1.
   */
  public ContextParams maxLogitRows(long value) {
    maxLogitRows = value;
    return this;
  }

  public long maxLogitRows() {
    return maxLogitRows;
  }

  /** Evaluate in passes shared with the group's other members (default null: alone). */
  public ContextParams passGroup(PassGroup value) {
    passGroup = value;
    return this;
  }

  public PassGroup passGroup() {
    return passGroup;
  }
}
