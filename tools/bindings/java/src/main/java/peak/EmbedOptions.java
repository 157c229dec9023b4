package peak;

/** How {@link Embedder} makes its vectors (peak_embed_params); starts from peak's defaults. */
public final class EmbedOptions {
  int pooling;
  boolean normalize;
  long dimensions;
  boolean truncate;

  public EmbedOptions() {
    Native.fillDefaults(this);
  }

  /**
   * {@link Pooling#MODEL} (default): the model's own. {@link Pooling#NONE} (a vector per token) is
   * for {@link Embedder#embedTokens} and {@link Embedder#embedIdsPerToken}; MEAN, CLS and LAST for
   * {@link Embedder#embed} and {@link Embedder#embedIds}. {@link Pooling#RANK} is refused: a
   * reranker's scores come from {@link Embedder#rerank}.
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

  /**
   * Matryoshka embeddings (OpenAI's {@code dimensions}): each vector keeps its first {@code value}
   * floats, then is normalised when {@link #normalize()}. 0 (default): all {@link Embedder#nEmbd()}.
   * More than nEmbd is refused when embedding ({@link PeakException}, {@link Status#INVALID_ARGUMENT}),
   * negative too.
   */
  public EmbedOptions dimensions(long value) {
    dimensions = value;
    return this;
  }

  public long dimensions() {
    return dimensions;
  }

  /**
   * false (default): a text (or id sequence) of more tokens than {@link EmbedderParams#nBatch} is
   * refused. true: it is cut to its first nBatch tokens; when it ends with the token the tokenizer
   * appends ([SEP] for a WordPiece vocabulary), that token stays last, after the first nBatch - 1
   * (as sentence-transformers truncates).
   */
  public EmbedOptions truncate(boolean value) {
    truncate = value;
    return this;
  }

  public boolean truncate() {
    return truncate;
  }
}
