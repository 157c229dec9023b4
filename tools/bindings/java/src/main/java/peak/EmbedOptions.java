package peak;

/** How {@link Embedder} makes its vectors (peak_embed_params); starts from peak's defaults. */
public final class EmbedOptions {
  int pooling;
  boolean normalize;

  public EmbedOptions() {
    Native.fillDefaults(this);
  }

  /**
   * {@link Pooling#MODEL} (default): the model's own. {@link Pooling#NONE} (a vector per token) is
   * for {@link Embedder#embedTokens}; the other values for {@link Embedder#embed}.
   */
  public EmbedOptions pooling(Pooling value) {
    pooling = value.code;
    return this;
  }

  public Pooling pooling() {
    return Pooling.of(pooling);
  }

  /** true (default): scale each vector to Euclidean length 1 (a zero vector stays zero). */
  public EmbedOptions normalize(boolean value) {
    normalize = value;
    return this;
  }

  public boolean normalize() {
    return normalize;
  }
}
