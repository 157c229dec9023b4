package peak;

/** How {@link Embedder#rerank} scores documents (peak_rerank_params); starts from peak's defaults. */
public final class RerankOptions {
  boolean sigmoid;

  public RerankOptions() {
    Native.fillDefaults(this);
  }

  /**
   * false (default): each score is the classification head's logit, as llama.cpp's /rerank gives
   * it; true: {@code 1 / (1 + e^-logit)}, in (0, 1).
   */
  public RerankOptions sigmoid(boolean value) {
    sigmoid = value;
    return this;
  }

  public boolean sigmoid() {
    return sigmoid;
  }
}
