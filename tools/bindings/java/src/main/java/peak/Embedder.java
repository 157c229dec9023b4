package peak;

import java.util.Objects;

/**
 * Turns texts into vectors with an embedding model ({@link ModelInfo#isEncoder()}: bert, such as
 * BGE or all-MiniLM), for search and retrieval. Each text is tokenized with the model's special
 * tokens ([CLS] ... [SEP]); many texts share each forward pass. A chat model is refused.
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
   * One vector per text: {@code result[i]} is {@code texts[i]}'s, {@link #nEmbd()} floats. The
   * pooling must make one vector of a text's tokens: {@link Pooling#NONE} (or {@link Pooling#MODEL}
   * on a model without pooling of its own) is refused with IllegalArgumentException, as its vectors
   * are {@link #embedTokens}'s. A null text throws NullPointerException naming it ("texts[2]");
   * an empty text, one the vocabulary can spell none of, or one of more tokens than {@link
   * EmbedderParams#nBatch} {@link PeakException} ({@link Status#INVALID_ARGUMENT}) naming its index
   * ("text 2"). Every text is checked before any is embedded. No texts: an empty array.
   */
  public synchronized float[][] embed(EmbedOptions options, String... texts) {
    Pooling pooling = effectivePooling(options);
    if (pooling == Pooling.NONE) {
      throw new IllegalArgumentException(describe(options, pooling)
          + ", a vector per token: embedTokens(...) gives those; embed(...) needs MEAN, CLS or LAST");
    }
    float[][][] perText = Native.embed(handle(), texts, options);
    float[][] vectors = new float[perText.length][];
    for (int i = 0; i < perText.length; ++i) vectors[i] = perText[i][0];
    return vectors;
  }

  /** {@link #embedTokens(EmbedOptions, String...)} with the default options, pooling {@link Pooling#NONE}. */
  public float[][][] embedTokens(String... texts) {
    return embedTokens(new EmbedOptions().pooling(Pooling.NONE), texts);
  }

  /**
   * Every token's vector, no pooling: {@code result[i][t]} is the vector of token {@code t} of
   * {@code texts[i]} ({@link #nEmbd()} floats), its tokens as {@link Model#tokenize}{@code (text,
   * true, false)} gives them: [CLS] first, [SEP] last. {@code options.pooling()} must be {@link
   * Pooling#NONE} (or {@link Pooling#MODEL} on a model without pooling of its own), else
   * IllegalArgumentException; {@code normalize} scales each token's vector. Texts are checked as
   * by {@link #embed(EmbedOptions, String...)}.
   */
  public synchronized float[][][] embedTokens(EmbedOptions options, String... texts) {
    Pooling pooling = effectivePooling(options);
    if (pooling != Pooling.NONE) {
      throw new IllegalArgumentException(describe(options, pooling)
          + ", one vector per text: embed(...) gives those; embedTokens(...) needs NONE");
    }
    return Native.embed(handle(), texts, options);
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

  private Pooling effectivePooling(EmbedOptions options) {
    Objects.requireNonNull(options, "options");
    Pooling pooling = options.pooling();
    return pooling == Pooling.MODEL ? modelPooling : pooling;
  }

  private static String describe(EmbedOptions options, Pooling pooling) {
    return options.pooling() == Pooling.MODEL ? "the model's own pooling (options.pooling MODEL) is " + pooling
                                              : "options.pooling is " + pooling;
  }
}
