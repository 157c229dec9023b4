package peak;

import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * A model running on one sequence: its KV cache and buffers, all allocated when it is created, so
 * evaluating allocates nothing. Used by one thread at a time.
 */
public final class Context extends NativeHandle {
  private final long nVocab;
  private final long nEmbd;
  private final PassGroup group;  // null: alone

  public Context(Model model) {
    this(model, new ContextParams());
  }

  public Context(Model model, ContextParams params) {
    this(model, params, model.info());
  }

  private Context(Model model, ContextParams params, ModelInfo info) {
    super("Context", model, model.createDependent(m -> create(m, params)));
    group = params.passGroup;
    nVocab = info.nVocab();
    nEmbd = info.nEmbd();
  }

  /** The memory (bytes) a context with these parameters would take, without creating it. */
  public static long memoryNeeded(Model model, ContextParams params) {
    return Native.contextMemoryNeeded(model.handle(), params);
  }

  /** KV cache cells. */
  public long nCtx() {
    return Native.contextNCtx(handle());
  }

  /** Tokens in the KV cache. */
  public long nUsed() {
    return Native.contextNUsed(handle());
  }

  /** Threads for the next evaluations (0: {@link Peak#defaultThreads()}), at most as many as it was created with. */
  public void setThreads(long nThreads) {
    Native.contextSetThreads(handle(), nThreads);
  }

  /**
   * Appends tokens to the sequence and runs the model over them; then {@link #logits()} are the last
   * token's. {@link Status#CONTEXT_FULL} when they do not fit (nothing is evaluated then).
   */
  public void eval(int[] tokens) {
    Native.contextEval(handle(), tokens);
  }

  /**
   * {@link #evalEmbeddings(float[], int, boolean)} of all of {@code rows}: whole rows of the
   * model's {@link ModelInfo#nEmbd()} floats, such as {@link ImageEncoder#encode}'s embeddings (a
   * length that is not a multiple of n_embd throws IllegalArgumentException).
   */
  public void evalEmbeddings(float[] rows, boolean bidirectional) {
    Objects.requireNonNull(rows, "rows");
    if (nEmbd == 0 || rows.length % nEmbd != 0) {
      throw new IllegalArgumentException("rows holds " + rows.length + " floats, not whole rows of the model's n_embd "
          + nEmbd);
    }
    evalEmbeddings(rows, (int) (rows.length / nEmbd), bidirectional);
  }

  /**
   * Appends {@code nRows} embedding rows (the first {@code nRows} x {@link ModelInfo#nEmbd()}
   * floats of {@code rows}, row by row: a picture's tokens from {@link ImageEncoder#encode}) to the
   * sequence as {@link #eval} appends tokens: they enter the model's layers as they are, each taking
   * a cell. With {@code bidirectional} (Gemma 3's image tokens: {@link
   * ProjectorInfo#bidirectional()}) they also attend to each other both ways, which needs them in
   * one batch ({@link ContextParams#nBatch} rows at most). Then {@link #logits()} are the last row's.
   * Refused with {@link PeakException}: {@link Status#CONTEXT_FULL} when they do not fit; {@link
   * Status#INVALID_ARGUMENT} for no rows, an array shorter than the rows, too many rows for one
   * bidirectional batch, or a value that is not finite (naming its row: "row 1 holds nan at 2").
   * On failure the sequence and the logits are as they were.
   */
  public void evalEmbeddings(float[] rows, int nRows, boolean bidirectional) {
    Native.contextEvalEmbeddings(handle(), rows, nRows, nEmbd, bidirectional);
  }

  /**
   * Appends a picture's frame of {@code nRows} image tokens (the first {@code nRows} x {@link
   * ModelInfo#nEmbd()} floats of {@code rows}), {@code tokenCols} across, row by row ({@link
   * PictureLayout#tokenCols()}; {@code nRows} whole rows of it), as the language model places
   * them: a model with multimodal rotary positions (qwen2vl: Qwen2-VL, Qwen2.5-VL) gives them one
   * position, each turned by its row and column, and the next token comes one past the frame's
   * larger side; other models take them one after another, as {@link #evalEmbeddings(float[],
   * int, boolean)} causally. Refused as evalEmbeddings is, and for rows that are not whole rows.
   */
  public void evalPicture(float[] rows, int nRows, int tokenCols) {
    Native.contextEvalPicture(handle(), rows, nRows, nEmbd, tokenCols);
  }

  /** The last evaluated token's logits (n_vocab values), a copy. */
  public float[] logits() {
    return Native.contextLogits(handle(), nVocab);
  }

  /** Forgets the sequence. */
  public void clear() {
    Native.contextKvClear(handle());
  }

  /**
   * Runs the model with these adapters from the next evaluation on (none: the model as it is);
   * what the cache holds stays as computed. Several LoRA adapters add their deltas, several control
   * vectors add up, over every layer.
   */
  public void setAdapters(Adapter.Use... uses) {
    setAdapters(Arrays.asList(uses), 0, Long.MAX_VALUE);
  }

  /** As {@link #setAdapters(Adapter.Use...)}, control vectors acting after layers first..last (0-based). */
  public void setAdapters(List<Adapter.Use> uses, long controlFirstLayer, long controlLastLayer) {
    Native.contextSetAdapters(handle(), Adapter.handles(uses), Adapter.scales(uses), controlFirstLayer,
        controlLastLayer);
  }

  /** {@link #generate(Sampler, String, GenerateOptions, TextCallback)} with the default options. */
  public GenerateResult generate(Sampler sampler, String prompt, TextCallback onText) {
    return generate(sampler, prompt, new GenerateOptions(), onText);
  }

  /**
   * Appends {@code prompt} to the sequence and generates after it, streaming the text to {@code
   * onText} (may be null). The prompt and the generated tokens stay in the context, so the next call
   * continues the sequence (BOS only starts an empty context). An empty prompt continues from the
   * last logits.
   */
  public GenerateResult generate(Sampler sampler, String prompt, GenerateOptions options, TextCallback onText) {
    return Native.generate(handle(), sampler.handle(), prompt, options, onText);
  }

  @Override
  void free(long handle) {
    Native.contextFree(handle);
    if (group != null) group.release();
  }

  private static long create(long model, ContextParams params) {
    PassGroup g = params.passGroup;
    return g == null ? Native.contextCreate(model, params, 0) : g.createDependent(h -> Native.contextCreate(model, params, h));
  }
}
