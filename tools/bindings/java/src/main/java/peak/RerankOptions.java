package peak;

/** How {@link Embedder#rerank} scores documents (peak_rerank_params); starts from peak's defaults. */
public final class RerankOptions {
  boolean sigmoid;

  public RerankOptions() {
    Native.fillDefaults(this);
  }

  /**
   * false (default): each score as the model gives it, as llama.cpp's /rerank does (a
   * cross-encoder's logit, Qwen3-Reranker's probability); true: a logit becomes {@code 1 / (1 +
   * e^-logit)}, in (0, 1), and a probability stays as it is.
   */
  public RerankOptions sigmoid(boolean value) {
    sigmoid = value;
    return this;
  }

  public boolean sigmoid() {
    return sigmoid;
  }
}
