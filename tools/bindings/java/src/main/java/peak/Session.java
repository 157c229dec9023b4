package peak;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.function.LongUnaryOperator;

/**
 * A conversation in a fixed-size KV cache (SSSKV-lite): Prefix (the system prompt) + Summary (of
 * dropped history, written by a background worker) + Recent (the latest messages). It keeps the
 * text of every message, dropped or not. Used by one thread at a time: no two calls on one session
 * may overlap. A call that fails (throws) leaves the session as it was before it.
 */
public final class Session extends NativeHandle {
  /**
   * Where a picture attached with {@link #attachImage(float[])} goes in the next user message's
   * text (PEAK_IMAGE_MARKER): one per picture, in the order attached.
   */
  public static final String IMAGE_MARKER = "<__media__>";

  private final PassGroup group;  // null: alone
  private final Projector projector;  // null: text only

  public Session(Model model) {
    this(model, new SessionParams());
  }

  public Session(Model model, SessionParams params) {
    this(model, params, params.passGroup, params.projector);
  }

  private Session(Model model, SessionParams params, PassGroup group, Projector projector) {
    super("Session", model, model.createDependent(m -> create(m, params, group, projector)));
    this.group = group;
    this.projector = projector;
  }

  /** {@link #chat(String, GenerateOptions, TextCallback)} with the default options. */
  public GenerateResult chat(String userText, TextCallback onText) {
    return chat(userText, new GenerateOptions(), onText);
  }

  /**
   * One user turn: streams the answer to {@code onText} (may be null). The message is the user's
   * text: control tokens in it stay text. {@link Status#INVALID_ARGUMENT} while the conversation ends
   * with a user message appended without an answer (answer it with {@link #regenerate}).
   */
  public GenerateResult chat(String userText, GenerateOptions options, TextCallback onText) {
    return Native.sessionChat(handle(), userText, options, onText);
  }

  /**
   * Answers the last user message again with the sampling set now, taking back its previous answer
   * (see peak_session_regenerate).
   */
  public GenerateResult regenerate(GenerateOptions options, TextCallback onText) {
    return Native.sessionRegenerate(handle(), options, onText);
  }

  /** As {@link #regenerate}, with {@code userText} in place of the last user message. */
  public GenerateResult editLast(String userText, GenerateOptions options, TextCallback onText) {
    return Native.sessionEditLast(handle(), userText, options, onText);
  }

  /**
   * Adds a message without generating, e.g. a history imported from elsewhere: {@link Role#USER} or
   * {@link Role#ASSISTANT}, alternating from a user's message. An answer with tool calls, or the
   * answer to tool results, is {@link #appendToolCalls}.
   */
  public void append(Role role, String text) {
    Native.sessionAppend(handle(), role.ordinal(), text);
  }

  /**
   * Attaches a picture to the next user message ({@link #chat}, {@link #append} of a {@link
   * Role#USER} message, {@link #editLast}), which takes every picture attached, in order: its image
   * tokens as {@link ImageEncoder#encode} gives them (tokens x the model's width floats, copied).
   * The message's text shows where each goes by {@link #IMAGE_MARKER}, one per picture in the order
   * attached; a text without the marker gets them all at its start. Another number of markers fails
   * the turn with PeakException (INVALID_ARGUMENT), and a message that fails leaves the pictures
   * attached: {@link #clearImages()} or {@link #reset()} drops them. The same picture attached again,
   * or sent in an earlier message, is kept once. PeakException (INVALID_ARGUMENT), attaching nothing,
   * for a session created without {@link SessionParams#projector} ("takes no images"), a length that
   * is not a whole number of rows of the model's width, a value that is not finite, or a picture too
   * long for {@link SessionParams#recentMax} or (its tokens attending to each other) {@link
   * SessionParams#nBatch}.
   */
  public void attachImage(float[] embeddings) {
    Objects.requireNonNull(embeddings, "embeddings");
    Native.sessionAttachImage(handle(), embeddings);
  }

  /**
   * Attaches a picture of {@code width} x {@code height} pixels whose embeddings {@link
   * ImageEncoder#encode} gave, as {@link #attachImage(float[])} does, framing each of its frames as
   * the projector's processor does (peak_session_attach_picture; {@link Projector#pictureLayout}):
   * needed for projectors that cut pictures into tiles (SmolVLM). PeakException
   * (INVALID_ARGUMENT) as {@link #attachImage(float[])}, and for embeddings of another length than
   * such a picture's.
   */
  public void attachImage(float[] embeddings, int width, int height) {
    Objects.requireNonNull(embeddings, "embeddings");
    Native.sessionAttachPicture(handle(), embeddings, width, height);
  }

  /**
   * Encodes {@code image} with {@code encoder} (on the session's model's projector, or one like it)
   * and attaches its embeddings as {@link #attachImage(float[], int, int)} does.
   */
  public void attachImage(ImageEncoder encoder, Image image) {
    Objects.requireNonNull(encoder, "encoder");
    Objects.requireNonNull(image, "image");
    attachImage(encoder.encode(image), image.width(), image.height());
  }

  /** The pictures waiting for the next user message. */
  public int attachedImages() {
    return (int) Native.sessionNAttachedImages(handle());
  }

  /** Drops the pictures attached. */
  public void clearImages() {
    Native.sessionClearImages(handle());
  }

  /** The number of messages: the system prompt (when there is one) and every user, assistant and tool message. */
  public int messageCount() {
    return (int) Native.sessionNMessages(handle());
  }

  public Message message(int index) {
    return Native.sessionMessage(handle(), index);
  }

  /**
   * The conversation as an app shows it, those dropped into the summary included: a tool's result is
   * a {@link Role#TOOL} message; an answer that only called tools has an empty text.
   */
  public List<Message> messages() {
    long h = handle();
    int n = (int) Native.sessionNMessages(h);
    List<Message> all = new ArrayList<>(n);
    for (int i = 0; i < n; ++i) all.add(Native.sessionMessage(h, i));
    return all;
  }

  /**
   * The tool calls of the conversation's last answer (results added after it or not); empty when it
   * made none. See {@link SessionParams#tools(String)}.
   */
  public List<ToolCall> toolCalls() {
    long h = handle();
    int n = (int) Native.sessionNToolCalls(h);
    List<ToolCall> calls = new ArrayList<>(n);
    for (int i = 0; i < n; ++i) calls.add(Native.sessionToolCall(h, i));
    return calls;
  }

  /**
   * The result of the last answer's call {@code toolCallId}, kept as a {@link Role#TOOL} message for
   * {@link #continueTurn} to answer. While an answer's calls wait for their results, or results for
   * their answer, {@link #chat} and {@link #append} refuse a user message. PeakException
   * (INVALID_ARGUMENT), changing nothing, when the last answer made no such call or its result was
   * given already.
   */
  public void addToolResult(String toolCallId, String content) {
    Native.sessionAddToolResult(handle(), toolCallId, content);
  }

  /** {@link #continueTurn(GenerateOptions, TextCallback)} with the default options. */
  public GenerateResult continueTurn(TextCallback onText) {
    return continueTurn(new GenerateOptions(), onText);
  }

  /**
   * The answer to the tool results added since the last answer (usually once every call has its
   * result), streamed to {@code onText} (may be null) and kept as {@link #chat} does; it may call
   * tools again. PeakException (INVALID_ARGUMENT), changing nothing, when no result waits.
   */
  public GenerateResult continueTurn(GenerateOptions options, TextCallback onText) {
    return Native.sessionContinue(handle(), options, onText);
  }

  /**
   * Replays an assistant message with tool calls without generating, e.g. from OpenAI's messages:
   * {@code content} (null or "" for none) and {@code calls}, whose ids are unique (the results that
   * follow name them). After a user message it is that message's answer, as {@link #append} adds
   * one; after tool results ({@link #addToolResult}) it is their answer, as {@link #continueTurn}
   * would have had the model written it ({@code calls} empty: an answer of text alone).
   * PeakException (INVALID_ARGUMENT), changing nothing, for a call with an empty id or name, or a
   * message out of order.
   */
  public void appendToolCalls(String content, List<ToolCall> calls) {
    Objects.requireNonNull(calls, "calls");
    int n = calls.size();
    String[] ids = new String[n];
    String[] names = new String[n];
    String[] arguments = new String[n];
    for (int i = 0; i < n; ++i) {
      ToolCall call = calls.get(i);
      if (call == null) throw new NullPointerException("calls[" + i + "]");
      ids[i] = call.id();
      names[i] = call.name();
      arguments[i] = call.arguments();
    }
    Native.sessionAppendToolCalls(handle(), content, ids, names, arguments);
  }

  /**
   * Sets {@link SessionParams#toolChoice}, {@link SessionParams#toolFunction} (the tool for {@link
   * ToolChoice#FUNCTION}, else null) and {@link SessionParams#parallelToolCalls} from the next answer
   * on. The tools stay in the prompt as the session was created: one created with {@link
   * ToolChoice#NONE} has none there and refuses another choice; another may move to NONE (no grammar,
   * no calls read). PeakException (INVALID_ARGUMENT), changing nothing, for a function not among the
   * tools, or a sampler grammar beside a choice other than NONE.
   */
  public void setToolChoice(ToolChoice choice, String function, boolean parallelToolCalls) {
    Objects.requireNonNull(choice, "choice");
    Native.sessionSetToolChoice(handle(), choice.ordinal(), function, parallelToolCalls);
  }

  /**
   * Receives each tool call of the answers from now on ({@link #chat}, {@link #continueTurn}, {@link
   * #regenerate}, {@link #editLast}) as soon as it parsed, on the generating thread during the call;
   * after it {@link #toolCalls()} gives the same calls (a turn that fails takes back those it
   * reported). null: none (the default). The session holds the listener until another replaces it
   * or the session is closed. An exception the listener throws is rethrown by the call once peak
   * returns, the listener hearing no more calls of that turn; the generation stops at the next piece
   * of text it would stream, and the session keeps the answer as when a {@link TextCallback} throws.
   */
  public void setToolCallListener(ToolCallListener listener) {
    Native.sessionSetToolCallListener(handle(), listener);
  }

  /**
   * Sampling from the next answer on (regenerate and edit included). Not saved with the session. A
   * grammar that does not compile is refused and changes nothing.
   */
  public void setSampler(SamplerParams params) {
    Native.sessionSetSampler(handle(), params);
  }

  /**
   * Saves settings, segments and messages (and the KV cache when {@code includeKv}) to a versioned
   * file with a checksum, written through a temporary file beside it.
   */
  public void save(String path, boolean includeKv) {
    Native.sessionSave(handle(), path, includeKv);
  }

  /**
   * Restores a saved session into this one (made with the same model), fitted to this session's
   * settings; a file of another model, or a damaged one, is refused and leaves the session as it was.
   * Its KV cells are used as read unless {@link SessionParams#verifyKvCells} asks for a check.
   */
  public void restore(String path) {
    Native.sessionRestore(handle(), path);
  }

  /**
   * Sets the adapters of every context of the session (see {@link Context#setAdapters}): waits for
   * a running summary, then evaluates the cached conversation again, so its cache is what they
   * compute. Between turns.
   */
  public void setAdapters(Adapter.Use... uses) {
    setAdapters(Arrays.asList(uses), 0, Long.MAX_VALUE);
  }

  public void setAdapters(List<Adapter.Use> uses, long controlFirstLayer, long controlLastLayer) {
    Native.sessionSetAdapters(handle(), Adapter.handles(uses), Adapter.scales(uses), controlFirstLayer,
        controlLastLayer);
  }

  /** Forgets the conversation (keeps the system prompt) and drops the pictures attached. */
  public void reset() {
    Native.sessionReset(handle());
  }

  /**
   * Blocks until a running summary and its rebuild are done and puts them in place: call it while
   * waiting for the user, so the next turn has nothing to rebuild.
   */
  public void waitSummary() {
    Native.sessionWaitSummary(handle());
  }

  public SessionStats stats() {
    return Native.sessionStats(handle());
  }

  /** The current summary ("" before the first). */
  public String summary() {
    return Native.sessionSummary(handle());
  }

  /** Why the last failed summary job failed ("" before any failed). */
  public String summaryError() {
    return Native.sessionSummaryError(handle());
  }

  /** The text the model would read if {@code userText} were the next message, control tokens written out. */
  public String previewPrompt(String userText) {
    return Native.sessionPreviewPrompt(handle(), userText);
  }

  @Override
  void free(long handle) {
    Native.sessionFree(handle);
    if (group != null) group.release();
    if (projector != null) projector.release();
  }

  /** Counts the session among the group's and the projector's dependents while it is open. */
  private static long create(long model, SessionParams params, PassGroup group, Projector projector) {
    LongUnaryOperator inGroup = p -> group == null ? Native.sessionCreate(model, params, 0, p)
        : group.createDependent(g -> Native.sessionCreate(model, params, g, p));
    return projector == null ? inGroup.applyAsLong(0) : projector.createDependent(inGroup);
  }
}
