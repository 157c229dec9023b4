package peak;

/** An embedder's batch and threads (peak_embedder_params); starts from peak's defaults. */
public final class EmbedderParams {
  long nBatch;
  long nThreads;

  public EmbedderParams() {
    Native.fillDefaults(this);
  }

  /**
   * Tokens per forward pass, hence the most tokens one text may have ([CLS] and [SEP] included);
   * 0 (default): the model's training context ({@link ModelInfo#nCtxTrain()}), its most.
   */
  public EmbedderParams nBatch(long value) {
    nBatch = value;
    return this;
  }

  public long nBatch() {
    return nBatch;
  }

  /** 0 (default): {@link Peak#defaultThreads()}, the fast cores. */
  public EmbedderParams nThreads(long value) {
    nThreads = value;
    return this;
  }

  public long nThreads() {
    return nThreads;
  }
}
