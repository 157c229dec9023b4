package peak;

import java.io.FileDescriptor;
import java.nio.ByteBuffer;

/**
 * Every native method of the binding, implemented by libpeak_jni (bindings/java/jni). Handles are
 * the C API's pointers as longs; 0 is none. A failing call throws {@link PeakException} with peak's
 * status and message. Text crosses as Java strings, converted to and from UTF-8 by the glue (never
 * as modified UTF-8). The public classes check that a handle is open before passing it here.
 */
final class Native {
  static {
    System.loadLibrary("peak_jni");
  }

  private Native() {}

  /** Loads the library (this class's initialisation) before another class's first call. */
  static void load() {}

  // ---- library
  static native String version();
  static native String systemInfo();
  static native String statusName(int status);
  static native long defaultThreads();
  static native void setLogLevel(int level);
  /** true: messages go to {@link Peak#dispatchLog}; false: the default (stderr, logcat on Android). */
  static native void useJavaLogger(boolean enabled);

  /**
   * Writes peak_*_default_params() into a ModelParams, ContextParams, SamplerParams, GenerateOptions,
   * SessionParams, ToolParseParams, EmbedderParams, EmbedOptions, RerankOptions or ImageEncoderParams.
   */
  static native void fillDefaults(Object params);
  /** peak_chat_parse_response; {@code model} 0: none. */
  static native ParsedResponse parseResponse(long model, String text, ToolParseParams params);

  // ---- abort flags: a direct buffer of one int, stored and loaded atomically
  static native void flagStore(ByteBuffer flag, int value);
  static native int flagLoad(ByteBuffer flag);

  // ---- models
  static native long modelLoad(String path, ModelParams params);
  static native long modelLoadFd(int fd, long offset, long length, ModelParams params);
  static native long modelLoadVocab(String path);
  static native long modelLoadVocabFd(int fd, long offset, long length);
  static native void modelFree(long model);
  static native ModelInfo modelInfo(long model);
  static native MemoryEstimate estimateMemory(String path, ModelParams model, ContextParams context);
  static native MemoryEstimate estimateMemoryFd(int fd, long offset, long length, ModelParams model,
                                                ContextParams context);
  /** The descriptor's number (-1 when it is not valid). */
  static native int fdOf(FileDescriptor fd);
  static native int[] tokenize(long model, String text, boolean addSpecial, boolean parseSpecial);
  static native byte[] tokenPiece(long model, int token, boolean renderSpecial);
  static native String detokenize(long model, int[] tokens, boolean removeSpecial, boolean renderSpecial);
  static native boolean tokenIsEog(long model, int token);

  // ---- adapters
  static native long adapterLoad(long model, String path, boolean useMmap);
  static native void adapterFree(long adapter);
  static native AdapterInfo adapterInfo(long adapter);

  // ---- contexts
  /** {@code group} 0: none. */
  static native long contextCreate(long model, ContextParams params, long group);
  static native void contextFree(long context);
  static native long contextMemoryNeeded(long model, ContextParams params);
  static native long contextNCtx(long context);
  static native long contextNUsed(long context);
  static native void contextSetThreads(long context, long nThreads);
  static native void contextEval(long context, int[] tokens);
  /**
   * peak_context_eval_embeddings of the first {@code nRows} rows of {@code nEmbd} floats (the
   * model's n_embd) of {@code rows}, which must hold them.
   */
  static native void contextEvalEmbeddings(long context, float[] rows, long nRows, long nEmbd, boolean bidirectional);

  static native void contextEvalPicture(long context, float[] rows, long nRows, long nEmbd, int tokenCols);
  static native float[] contextLogits(long context, long nVocab);
  static native void contextKvClear(long context);
  /** Adapters and scales pairwise; control vectors act after layers controlFirstLayer..controlLastLayer. */
  static native void contextSetAdapters(long context, long[] adapters, float[] scales, long controlFirstLayer,
                                        long controlLastLayer);
  static native GenerateResult generate(long context, long sampler, String prompt, GenerateOptions options,
                                        TextCallback onText);

  // ---- embedders
  static native long embedderCreate(long model, EmbedderParams params);
  static native void embedderFree(long embedder);
  static native long embedderNEmbd(long embedder);
  /**
   * peak_embed: per text, its vectors ({@code result[i][v]}, n_embd floats each): one when pooled,
   * one per token with PEAK_POOLING_NONE.
   */
  static native float[][][] embed(long embedder, String[] texts, EmbedOptions options);
  /** peak_embed_tokens: as {@link #embed}, for sequences of token ids. */
  static native float[][][] embedIds(long embedder, int[][] ids, EmbedOptions options);
  /** peak_rerank: one score per document, in their order. */
  static native float[] rerank(long embedder, String query, String[] documents, RerankOptions options);

  // ---- images: the bytes or pixels [offset, offset + length) of an array or of a direct buffer
  static native long imageDecode(byte[] bytes, int offset, int length);
  static native long imageDecodeDirect(ByteBuffer bytes, int offset, int length);
  static native long imageFromPixels(byte[] pixels, int offset, int length, int width, int height, int channels,
                                     int stride);
  static native long imageFromPixelsDirect(ByteBuffer pixels, int offset, int length, int width, int height,
                                           int channels, int stride);
  /** {width, height, channels}. */
  static native int[] imageSize(long image);
  static native void imageFree(long image);
  static native long projectorLoad(String path, ModelParams params);
  static native long projectorLoadFd(int fd, long offset, long length, ModelParams params);
  static native MemoryEstimate projectorEstimateMemory(String path, ModelParams model, ImageEncoderParams encoder);
  static native MemoryEstimate projectorEstimateMemoryFd(int fd, long offset, long length, ModelParams model,
                                                         ImageEncoderParams encoder);
  static native long imageEncoderComputeBytes(long encoder);
  static native void projectorFree(long projector);
  static native ProjectorInfo projectorInfo(long projector);
  /** peak_projector_picture_layout: {n_frames, tokens_per_frame, grid_rows, grid_cols}. */
  static native int[] projectorPictureLayout(long projector, int width, int height);
  static native String projectorFrameText(long projector, int width, int height, int index);
  static native long imageEncoderCreate(long projector, ImageEncoderParams params);
  static native void imageEncoderFree(long encoder);
  /**
   * peak_image_encode, into {@code nFloats} floats at first (a guess: n_image_tokens x n_embd), more
   * when the picture has more frames.
   */
  static native float[] imageEncode(long encoder, long image, long nFloats);

  // ---- samplers
  static native long samplerCreate(long model, SamplerParams params);
  static native void samplerFree(long sampler);
  static native int samplerSample(long sampler, long context);
  static native void samplerAccept(long sampler, int token);
  static native void samplerReset(long sampler);

  // ---- grammars
  /** {@code root} may be null ("root"). */
  static native long grammarCreate(String gbnf, String root);
  static native long grammarFromJsonSchema(String schema);
  static native void grammarFree(long grammar);
  /** peak_grammar_verdict: the ordinal of {@link Grammar.Verdict}. */
  static native int grammarCheck(long grammar, String text);

  // ---- sessions
  /** {@code group} and {@code projector} 0: none. */
  static native long sessionCreate(long model, SessionParams params, long group, long projector);
  static native long passGroupCreate(long model, PassGroupParams params);
  static native long draftModelCreate(long model, ContextParams params);
  static native void draftModelFree(long draft);
  static native void passGroupFree(long group);
  static native long[] passGroupPassesBySequences(long group);
  static native void sessionFree(long session);
  static native GenerateResult sessionChat(long session, String text, GenerateOptions options, TextCallback onText);
  static native GenerateResult sessionRegenerate(long session, GenerateOptions options, TextCallback onText);
  static native GenerateResult sessionEditLast(long session, String text, GenerateOptions options,
                                               TextCallback onText);
  static native void sessionAppend(long session, int role, String text);
  /** peak_session_attach_image of all of {@code embeddings}. */
  static native void sessionAttachImage(long session, float[] embeddings);
  /** peak_session_attach_picture of all of {@code embeddings}. */
  static native void sessionAttachPicture(long session, float[] embeddings, int width, int height);
  static native long sessionNAttachedImages(long session);
  static native void sessionClearImages(long session);
  static native long sessionNMessages(long session);
  static native Message sessionMessage(long session, long index);
  static native void sessionSetSampler(long session, SamplerParams params);
  static native void sessionSave(long session, String path, boolean includeKv);
  static native void sessionRestore(long session, String path);
  static native void sessionReset(long session);
  static native void sessionWaitSummary(long session);
  static native SessionStats sessionStats(long session);
  static native String sessionSummary(long session);
  static native String sessionSummaryError(long session);
  static native String sessionPreviewPrompt(long session, String text);
  static native void sessionSetAdapters(long session, long[] adapters, float[] scales, long controlFirstLayer,
                                        long controlLastLayer);
  static native long sessionNToolCalls(long session);
  static native ToolCall sessionToolCall(long session, long index);
  static native void sessionAddToolResult(long session, String toolCallId, String content);
  static native GenerateResult sessionContinue(long session, GenerateOptions options, TextCallback onText);
  /** The calls' fields pairwise; {@code content} may be null. */
  static native void sessionAppendToolCalls(long session, String content, String[] ids, String[] names,
                                            String[] arguments);
  /** {@code choice}: the ordinal of {@link ToolChoice}; {@code function} may be null. */
  static native void sessionSetToolChoice(long session, int choice, String function, boolean parallelToolCalls);
  /** The session's native side keeps a global reference to {@code listener} (null: none) until replaced or freed. */
  static native void sessionSetToolCallListener(long session, ToolCallListener listener);
}
