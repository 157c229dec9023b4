package peak;

import java.util.Arrays;
import java.util.List;

/**
 * A model running on one sequence: its KV cache and buffers, all allocated when it is created, so
 * evaluating allocates nothing. Used by one thread at a time.
 */
public final class Context extends NativeHandle {
  private final long nVocab;
  private final PassGroup group;  // null: alone

  public Context(Model model) {
    this(model, new ContextParams());
  }

  public Context(Model model, ContextParams params) {
    super("Context", model, model.createDependent(m -> create(m, params)));
    group = params.passGroup;
    nVocab = model.info().nVocab();
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
