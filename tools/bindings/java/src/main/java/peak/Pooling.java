package peak;

/**
 * How an embedding model's last hidden states become a text's vector (peak_pooling), numbered as
 * llama.cpp numbers {@code <arch>.pooling_type}.
 */
public enum Pooling {
  /** The model's own ({@link ModelInfo#pooling()}); only as an {@link EmbedOptions} value. */
  MODEL(-1),
  /** No pooling: one vector per token ({@link Embedder#embedTokens}). */
  NONE(0),
  /** The mean of the tokens' vectors. */
  MEAN(1),
  /** The first token's ([CLS]). */
  CLS(2),
  /** The last token's. */
  LAST(3),
  /**
   * A reranker's: its classification head's score of a query and document ({@link
   * Embedder#rerank}); {@link Embedder#embed} refuses it.
   */
  RANK(4);

  final int code;

  Pooling(int code) {
    this.code = code;
  }

  /** The C API's value. */
  public int code() {
    return code;
  }

  static Pooling of(int code) {
    for (Pooling p : values()) {
      if (p.code == code) return p;
    }
    throw new IllegalArgumentException("no pooling has the peak_pooling value " + code);
  }
}
