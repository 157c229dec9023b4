package peak;

/**
 * One generation's or chat turn's options (peak_generate_params); starts from peak's defaults. The
 * text itself goes to the {@link TextCallback} given with the call.
 */
public final class GenerateOptions {
  /** {@link #maxTokens(long)}: no limit. */
  public static final long UNLIMITED = Long.MAX_VALUE;

  long maxTokens;
  boolean addSpecial;
  boolean parseSpecial;
  int lookupNgram;
  int draftMax;
  DraftModel draftModel;
  float draftPMin;
  CancellationToken cancellation;
  TextCallback onReasoning;

  public GenerateOptions() {
    Native.fillDefaults(this);
  }

  /** Tokens to generate at most (default 256; {@link #UNLIMITED}). A session caps it by its headroom. */
  public GenerateOptions maxTokens(long value) {
    maxTokens = value;
    return this;
  }

  public long maxTokens() {
    return maxTokens;
  }

  /** Start an empty context with BOS as the model asks (default true). Sessions ignore it. */
  public GenerateOptions addSpecial(boolean value) {
    addSpecial = value;
    return this;
  }

  public boolean addSpecial() {
    return addSpecial;
  }

  /**
   * Recognise control tokens ("&lt;|im_end|&gt;") written in the prompt (default true, for text you
   * render yourself); set false for a user's text. Sessions never parse them in a message.
   */
  public GenerateOptions parseSpecial(boolean value) {
    parseSpecial = value;
    return this;
  }

  public boolean parseSpecial() {
    return parseSpecial;
  }

  /**
   * Speculative decoding by prompt lookup (a {@link Context}, or a {@link Session} created with
   * {@link SessionParams#maxLogitRows(long)}, which also searches its conversation): after each token, the longest n-gram of {@code n} down to 2 tokens that ends the text and occurred
   * before proposes what followed it, verified in one pass. The same text as without, faster where
   * it repeats the prompt. 0 (default): off. The context needs {@link
   * ContextParams#maxLogitRows(long)} of draftMax + 1 (a session, its own).
   */
  public GenerateOptions lookupNgram(int n) {
    lookupNgram = n;
    return this;
  }

  public int lookupNgram() {
    return lookupNgram;
  }

  /**
   * Speculative decoding with a draft model of the same vocabulary (null, the default: none; not
   * with {@link #lookupNgram(int)}): after each token it drafts up to draftMax tokens while its
   * probability of its choice is at least {@link #draftPMin(float)}, verified in one pass. Greedy:
   * the same text as without; sampled: the same distribution (speculative sampling). The context
   * needs {@link ContextParams#maxLogitRows(long)} of draftMax + 1 (a session, its own).
   */
  public GenerateOptions draftModel(DraftModel value) {
    draftModel = value;
    return this;
  }

  public DraftModel draftModel() {
    return draftModel;
  }

  /** A draft model drafts while its probability of its choice is at least this (default 0.75). */
  public GenerateOptions draftPMin(float value) {
    draftPMin = value;
    return this;
  }

  public float draftPMin() {
    return draftPMin;
  }

  /** The most tokens prompt lookup or a draft model drafts after a token (default 4). */
  public GenerateOptions draftMax(int value) {
    draftMax = value;
    return this;
  }

  public int draftMax() {
    return draftMax;
  }

  /** The token that can stop this call; null (default): none. */
  public GenerateOptions cancellation(CancellationToken token) {
    cancellation = token;
    return this;
  }

  public CancellationToken cancellation() {
    return cancellation;
  }

  /**
   * Receives a thinking model's reasoning (sessions with thinking on), apart from the answer; null
   * (default): the reasoning is not passed on.
   */
  public GenerateOptions onReasoning(TextCallback callback) {
    onReasoning = callback;
    return this;
  }

  public TextCallback onReasoning() {
    return onReasoning;
  }
}
