package peak;

/**
 * A chat session's settings (peak_session_params): the cache's segments, the summary context, the
 * threads, the answers' sampling, the tools they may call and the pictures the messages may show.
 * Starts from peak's defaults; peak.h documents each value.
 */
public final class SessionParams {
  int mode;
  String systemPrompt;
  String chatTemplate;
  boolean enableThinking;
  long recentMax;
  long summaryMax;
  long triggerDiscard;
  long headroom;
  int typeK;
  int typeV;
  int summaryTypeKv;
  long summaryNCtx;
  long summaryMaxNewTokens;
  int rebuild;
  boolean waitForSummary;
  boolean backgroundSummary;
  long nThreads;
  long nBatch;
  SamplerParams sampler = new SamplerParams();
  String tools;
  int toolChoice;
  String toolFunction;
  boolean parallelToolCalls;
  String toolCallFormat;
  long verifyKvCells;
  long maxLogitRows;
  PassGroup passGroup;
  Projector projector;

  public SessionParams() {
    Native.fillDefaults(this);
  }

  public SessionParams mode(MemoryMode value) {
    mode = value.ordinal();
    return this;
  }

  public MemoryMode mode() {
    return MemoryMode.values()[mode];
  }

  /** null (default): none. */
  public SessionParams systemPrompt(String value) {
    systemPrompt = value;
    return this;
  }

  public String systemPrompt() {
    return systemPrompt;
  }

  /** null (default): the model's; a built-in family ("chatml" ...); or "raw" (no template). */
  public SessionParams chatTemplate(String value) {
    chatTemplate = value;
    return this;
  }

  public String chatTemplate() {
    return chatTemplate;
  }

  /** Let a thinking model reason before it answers (default false). */
  public SessionParams enableThinking(boolean value) {
    enableThinking = value;
    return this;
  }

  public boolean enableThinking() {
    return enableThinking;
  }

  /** Tokens of the latest messages kept (default 4096). */
  public SessionParams recentMax(long value) {
    recentMax = value;
    return this;
  }

  public long recentMax() {
    return recentMax;
  }

  /** Tokens of the summary at most (default 256). */
  public SessionParams summaryMax(long value) {
    summaryMax = value;
    return this;
  }

  public long summaryMax() {
    return summaryMax;
  }

  /** Dropped tokens that start a summary job (default 2048). */
  public SessionParams triggerDiscard(long value) {
    triggerDiscard = value;
    return this;
  }

  public long triggerDiscard() {
    return triggerDiscard;
  }

  /** Room for the answer, its length limit (default 512). */
  public SessionParams headroom(long value) {
    headroom = value;
    return this;
  }

  public long headroom() {
    return headroom;
  }

  /** The main KV cache's types (default Q8_0; F16 when the head size is not a multiple of 32). */
  public SessionParams cacheType(CacheType k, CacheType v) {
    typeK = k.ggmlType;
    typeV = v.ggmlType;
    return this;
  }

  public CacheType typeK() {
    return CacheType.of(typeK);
  }

  public CacheType typeV() {
    return CacheType.of(typeV);
  }

  /** The summary context's KV cache type (default Q4_0; likewise). */
  public SessionParams summaryCacheType(CacheType value) {
    summaryTypeKv = value.ggmlType;
    return this;
  }

  public CacheType summaryCacheType() {
    return CacheType.of(summaryTypeKv);
  }

  /** The summary context's size (default 2048). */
  public SessionParams summaryNCtx(long value) {
    summaryNCtx = value;
    return this;
  }

  public long summaryNCtx() {
    return summaryNCtx;
  }

  /** A summary's generation length (default 256). */
  public SessionParams summaryMaxNewTokens(long value) {
    summaryMaxNewTokens = value;
    return this;
  }

  public long summaryMaxNewTokens() {
    return summaryMaxNewTokens;
  }

  public SessionParams rebuild(RebuildStrategy value) {
    rebuild = value.ordinal();
    return this;
  }

  public RebuildStrategy rebuild() {
    return RebuildStrategy.values()[rebuild];
  }

  /** true: a turn arriving during a summary waits for it; false (default): uses the old one. */
  public SessionParams waitForSummary(boolean value) {
    waitForSummary = value;
    return this;
  }

  public boolean waitForSummary() {
    return waitForSummary;
  }

  /** true (default): summarize on a worker thread; false: before the turn returns. */
  public SessionParams backgroundSummary(boolean value) {
    backgroundSummary = value;
    return this;
  }

  public boolean backgroundSummary() {
    return backgroundSummary;
  }

  /** 0 (default): {@link Peak#defaultThreads()}, the fast cores, as for a context. */
  public SessionParams nThreads(long value) {
    nThreads = value;
    return this;
  }

  public long nThreads() {
    return nThreads;
  }

  /** Tokens per forward pass when prefilling (default 512). */
  public SessionParams nBatch(long value) {
    nBatch = value;
    return this;
  }

  public long nBatch() {
    return nBatch;
  }

  /**
   * The answers' sampling. A grammar or JSON Schema holds each answer from its start; with thinking
   * the reasoning is free and the grammar starts after it.
   */
  public SessionParams sampler(SamplerParams value) {
    if (value == null) throw new NullPointerException("sampler");
    sampler = value;
    return this;
  }

  public SamplerParams sampler() {
    return sampler;
  }

  /**
   * The tools the answers may call: OpenAI's tools array as JSON text ({@code [{"type": "function",
   * "function": {"name": ..., "description": ..., "parameters": JSON Schema}}]}); null (default):
   * none. The model's own chat template writes them before the conversation, so they stay for the
   * session's life. Under a {@link #toolChoice} other than NONE an answer's calls are held by a
   * grammar to the tools' parameters schemas (so a sampler grammar or JSON Schema cannot be given
   * beside them), their markup never reaches the {@link TextCallback}, and {@link
   * Session#toolCalls()} gives them. Creating the session throws PeakException (INVALID_ARGUMENT)
   * naming the JSON path ("tools[0].function.name: ...") for JSON of another shape, and for a
   * template that cannot hold tools there (or chatTemplate "raw").
   */
  public SessionParams tools(String json) {
    tools = json;
    return this;
  }

  public String tools() {
    return tools;
  }

  /**
   * {@link ToolChoice#AUTO} (default) lets the model choose; its calls' grammar starts where the
   * format's opening marker appears in the answer. REQUIRED and FUNCTION hold the whole answer
   * (after any reasoning) to calls.
   */
  public SessionParams toolChoice(ToolChoice value) {
    toolChoice = value.ordinal();
    return this;
  }

  public ToolChoice toolChoice() {
    return ToolChoice.values()[toolChoice];
  }

  /** With {@link ToolChoice#FUNCTION}: the name of the one tool the answers call; else null (default). */
  public SessionParams toolFunction(String name) {
    toolFunction = name;
    return this;
  }

  public String toolFunction() {
    return toolFunction;
  }

  /** true (default): an answer may make several calls; false: one at most. */
  public SessionParams parallelToolCalls(boolean value) {
    parallelToolCalls = value;
    return this;
  }

  public boolean parallelToolCalls() {
    return parallelToolCalls;
  }

  /**
   * The format the model writes calls in, by name (those of {@link ToolParseParams#formatName});
   * null (default): the one the model's template writes past calls in, or "generic" for a named
   * built-in template.
   */
  public SessionParams toolCallFormat(String name) {
    toolCallFormat = name;
    return this;
  }

  public String toolCallFormat() {
    return toolCallFormat;
  }

  /**
   * {@link Session#restore} of a file with KV cells: how many of the first cells to prefill again
   * and compare with the saved ones before using them; 0 (default): they are used as read. Cells
   * that differ are not used: the conversation is prefilled instead (nothing of it is lost) and a
   * warning names the file and the first differing cell. Costs a prefill of that many tokens.
   */
  public SessionParams verifyKvCells(long value) {
    verifyKvCells = value;
    return this;
  }

  public long verifyKvCells() {
    return verifyKvCells;
  }

  /**
   * Rows of logits the session's context hands out in one pass (default 1): a turn with {@link
   * GenerateOptions#lookupNgram(int)} needs draftMax + 1.
   */
  public SessionParams maxLogitRows(long value) {
    maxLogitRows = value;
    return this;
  }

  public long maxLogitRows() {
    return maxLogitRows;
  }

  /**
   * The conversation's context evaluates in passes shared with the group's other members (default
   * null: alone); its cache types must be the group's.
   */
  public SessionParams passGroup(PassGroup value) {
    passGroup = value;
    return this;
  }

  public PassGroup passGroup() {
    return passGroup;
  }

  /**
   * The model's vision projector (its mmproj file): the session then takes pictures ({@link
   * Session#attachImage(float[])}), framed as the model's processor frames them (Gemma 3's). Its
   * embeddings must have the model's width: creating the session throws PeakException
   * (INVALID_ARGUMENT) naming both otherwise. The session counts as one of the projector's
   * dependents while it is open ({@link Projector#close()} refuses until it is closed). null
   * (default): text only.
   */
  public SessionParams projector(Projector value) {
    projector = value;
    return this;
  }

  public Projector projector() {
    return projector;
  }
}
