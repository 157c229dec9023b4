package peak;

import java.util.Objects;

/**
 * Turns texts into vectors with an embedding model ({@link ModelInfo#isEncoder()}: bert, such as
 * BGE or all-MiniLM), for search and retrieval. Each text is tokenized with the model's special
 * tokens ([CLS] ... [SEP]); many texts share each forward pass. A chat model is refused. On a
 * reranker (pooling {@link Pooling#RANK}, such as ms-marco-MiniLM), {@link #rerank} scores
 * documents against a query.
 *
 * <p>Calls on one embedder run one at a time: a second thread's call (or {@link #close()}) waits
 * for the first to end. To embed on several threads at once, give each its own embedder on the
 * same model.
 */
public final class Embedder extends NativeHandle {
  private final Pooling modelPooling;

  public Embedder(Model model) {
    this(model, new EmbedderParams());
  }

  public Embedder(Model model, EmbedderParams params) {
    this(model, params, model.info().pooling());
  }

  private Embedder(Model model, EmbedderParams params, Pooling modelPooling) {
    super("Embedder", model, model.createDependent(m -> Native.embedderCreate(m, params)));
    this.modelPooling = modelPooling;
  }

  /** Floats per vector (the model's n_embd). */
  public synchronized long nEmbd() {
    return Native.embedderNEmbd(handle());
  }

  /** {@link #embed(EmbedOptions, String...)} with the default options: the model's pooling, normalised. */
  public float[][] embed(String... texts) {
    return embed(new EmbedOptions(), texts);
  }

  /**
   * One vector per text: {@code result[i]} is {@code texts[i]}'s, {@link #nEmbd()} floats (or
   * {@link EmbedOptions#dimensions}). The pooling must make one vector of a text's tokens: {@link
   * Pooling#NONE} (or {@link Pooling#MODEL} on a model without pooling of its own) is refused with
   * IllegalArgumentException, as its vectors are {@link #embedTokens}'s, and so is {@link
   * Pooling#RANK} (a reranker's own: see {@link #rerank}). A null text throws NullPointerException
   * naming it ("texts[2]"); an empty text, one the vocabulary can spell none of, or (unless {@link
   * EmbedOptions#truncate}) one of more tokens than {@link EmbedderParams#nBatch} {@link
   * PeakException} ({@link Status#INVALID_ARGUMENT}) naming its index ("text 2"). Every text is
   * checked before any is embedded. No texts: an empty array.
   */
  public synchronized float[][] embed(EmbedOptions options, String... texts) {
    checkPooling(options, false, "embed", "embedTokens");
    return firstOfEach(Native.embed(handle(), texts, options));
  }

  /** {@link #embedTokens(EmbedOptions, String...)} with the default options, pooling {@link Pooling#NONE}. */
  public float[][][] embedTokens(String... texts) {
    return embedTokens(new EmbedOptions().pooling(Pooling.NONE), texts);
  }

  /**
   * Every token's vector, no pooling: {@code result[i][t]} is the vector of token {@code t} of
   * {@code texts[i]} ({@link #nEmbd()} floats, or {@link EmbedOptions#dimensions}), its tokens as
   * {@link Model#tokenize}{@code (text, true, false)} gives them: [CLS] first, [SEP] last (a text
   * cut by {@link EmbedOptions#truncate} has nBatch). {@code options.pooling()} must be {@link
   * Pooling#NONE} (or {@link Pooling#MODEL} on a model without pooling of its own), else
   * IllegalArgumentException; {@code normalize} scales each token's vector. Texts are checked as
   * by {@link #embed(EmbedOptions, String...)}.
   */
  public synchronized float[][][] embedTokens(EmbedOptions options, String... texts) {
    checkPooling(options, true, "embed", "embedTokens");
    return Native.embed(handle(), texts, options);
  }

  /** {@link #embedIds(EmbedOptions, int[][])} with the default options: the model's pooling, normalised. */
  public float[][] embedIds(int[]... ids) {
    return embedIds(new EmbedOptions(), ids);
  }

  /**
   * As {@link #embed(EmbedOptions, String...)}, for texts already tokenized (OpenAI's token-id
   * input): {@code result[i]} is the vector of the token ids {@code ids[i]}, embedded as they are,
   * nothing added: give [CLS] ... [SEP] as {@link Model#tokenize}{@code (text, true, false)} makes
   * them, and the vector is that text's. A null array or sequence throws NullPointerException
   * naming it ("ids[2]"); an empty sequence, an id outside the vocabulary (and its position), or
   * (unless {@link EmbedOptions#truncate}) more ids than {@link EmbedderParams#nBatch} {@link
   * PeakException} ({@link Status#INVALID_ARGUMENT}) naming the sequence's index ("sequence 2"),
   * before any is embedded.
   */
  public synchronized float[][] embedIds(EmbedOptions options, int[]... ids) {
    checkPooling(options, false, "embedIds", "embedIdsPerToken");
    return firstOfEach(Native.embedIds(handle(), ids, options));
  }

  /** {@link #embedIdsPerToken(EmbedOptions, int[][])} with the default options, pooling {@link Pooling#NONE}. */
  public float[][][] embedIdsPerToken(int[]... ids) {
    return embedIdsPerToken(new EmbedOptions().pooling(Pooling.NONE), ids);
  }

  /**
   * As {@link #embedTokens(EmbedOptions, String...)}, for token ids: {@code result[i][t]} is the
   * vector of {@code ids[i][t]} (the first nBatch when {@link EmbedOptions#truncate} cuts the
   * sequence). The pooling must be {@link Pooling#NONE}; ids are checked as by {@link
   * #embedIds(EmbedOptions, int[][])}.
   */
  public synchronized float[][][] embedIdsPerToken(EmbedOptions options, int[]... ids) {
    checkPooling(options, true, "embedIds", "embedIdsPerToken");
    return Native.embedIds(handle(), ids, options);
  }

  /**
   * {@link #rerank(RerankOptions, String, String...)} with the default options: a cross-encoder's
   * logits, Qwen3-Reranker's probabilities of "yes".
   */
  public float[] rerank(String query, String... documents) {
    return rerank(new RerankOptions(), query, documents);
  }

  /**
   * Scores documents against a query with a reranker (a model whose {@link ModelInfo#pooling()} is
   * {@link Pooling#RANK}): {@code result[i]} is {@code documents[i]}'s score, higher is more
   * relevant. A cross-encoder such as ms-marco-MiniLM scores [CLS] query [SEP] document [SEP], the
   * document as token type 1 (a logit); Qwen3-Reranker the two in its prompt (the probability of
   * "yes"). Many pairs share each forward pass. A model
   * that is not a reranker, an empty query, or a document that is empty, of which the vocabulary
   * can spell no character, or too long with the query for {@link EmbedderParams#nBatch} is
   * refused with {@link PeakException} ({@link Status#INVALID_ARGUMENT}) naming the document's
   * index ("document 2"), before any is scored; a null query, array or document throws
   * NullPointerException naming it ("documents[2]"). No documents: an empty array.
   */
  public synchronized float[] rerank(RerankOptions options, String query, String... documents) {
    return Native.rerank(handle(), query, documents, options);
  }

  /** Waits for a call running on another thread, then frees the embedder. */
  @Override
  public synchronized void close() {
    super.close();
  }

  @Override
  void free(long handle) {
    Native.embedderFree(handle);
  }

  /**
   * Refuses the pooling of {@code options} (with {@link Pooling#MODEL}, the model's own) where
   * {@code method} cannot use it: pooled methods need MEAN, CLS or LAST, per-token ones NONE, and
   * neither takes RANK. {@code pooled} and {@code perToken} name the pair of methods.
   */
  private void checkPooling(EmbedOptions options, boolean perTokenWanted, String pooled, String perToken) {
    Objects.requireNonNull(options, "options");
    Pooling pooling = options.pooling() == Pooling.MODEL ? modelPooling : options.pooling();
    String wanted = perTokenWanted ? perToken + "(...) needs NONE" : pooled + "(...) needs MEAN, CLS or LAST";
    if (pooling == Pooling.RANK) {
      throw new IllegalArgumentException(describe(options, pooling)
          + ", a reranker's score: rerank(query, documents...) gives those; " + wanted);
    }
    if (perTokenWanted != (pooling == Pooling.NONE)) {
      throw new IllegalArgumentException(describe(options, pooling)
          + (perTokenWanted ? ", one vector per text: " + pooled : ", a vector per token: " + perToken)
          + "(...) gives those; " + wanted);
    }
  }

  private static float[][] firstOfEach(float[][][] perInput) {
    float[][] vectors = new float[perInput.length][];
    for (int i = 0; i < perInput.length; ++i) vectors[i] = perInput[i][0];
    return vectors;
  }

  private static String describe(EmbedOptions options, Pooling pooling) {
    return options.pooling() == Pooling.MODEL ? "the model's own pooling (options.pooling MODEL) is " + pooling
                                              : "options.pooling is " + pooling;
  }
}
