package peak;

/**
 * Library-wide settings and facts. The first class of this package that calls into peak loads
 * libpeak_jni ({@code System.loadLibrary("peak_jni")}).
 *
 * <p>Thread safety, as in peak.h: a {@link Model} is immutable once loaded and may be used by any
 * number of threads, and shared by any number of contexts and sessions. A {@link Context}, {@link
 * Sampler} or {@link Session} is used by one thread at a time (or with your own locking); {@link
 * CancellationToken#cancel()} is the one call meant for another thread. Close a handle only when no
 * other thread uses it. The functions of this class may be called from any thread at any time.
 */
public final class Peak {
  static {
    Native.load();
  }

  private static volatile Logger logger;

  private Peak() {}

  /** The library's version, "MAJOR.MINOR.PATCH". */
  public static String version() {
    return Native.version();
  }

  /** The kernel paths this CPU can run and those in use, one per line (peak_system_info). */
  public static String systemInfo() {
    return Native.systemInfo();
  }

  /**
   * The threads a context or session uses when asked for 0: the fast cores this process may run on
   * (on a phone, the big cores without the little ones, whose speed would hold them back).
   */
  public static int defaultThreads() {
    return (int) Native.defaultThreads();
  }

  /**
   * Sends peak's messages at the log level or above to {@code logger}; {@code null} restores the
   * default: stderr as "peak: message", or logcat (tag "peak") on Android. Process-wide.
   */
  public static synchronized void setLogger(Logger logger) {
    Peak.logger = logger;
    Native.useJavaLogger(logger != null);
  }

  /** Drops messages more detailed than {@code level}; the default is {@link LogLevel#WARN}. */
  public static void setLogLevel(LogLevel level) {
    Native.setLogLevel(level.ordinal());
  }

  /** The C API's name of a status code, e.g. "PEAK_ERR_FORMAT". */
  public static String statusName(Status status) {
    return Native.statusName(status.code());
  }

  /** {@link #parseResponse(Model, String, ToolParseParams)} with the default parameters. */
  public static ParsedResponse parseResponse(Model model, String text) {
    return parseResponse(model, text, new ToolParseParams());
  }

  /**
   * Reads a generated answer back into OpenAI's assistant message: its text, its reasoning and its
   * tool calls, in the format {@code params} name or, else, the one {@code model}'s template writes
   * calls in ({@code model} may be null: the format is then "generic" unless params name one or give
   * a template). A vocabulary-only model has no template and is refused unless params name one.
   * Takes time linear in the text's length, and changes no handle.
   */
  public static ParsedResponse parseResponse(Model model, String text, ToolParseParams params) {
    return Native.parseResponse(model == null ? 0 : model.handle(), text, params);
  }

  /** Called by the glue for each message while a logger is set. */
  static void dispatchLog(int level, String message) {
    Logger current = logger;
    if (current == null) {
      System.err.println("peak: " + message);  // the logger was removed while this message was written
      return;
    }
    current.log(LogLevel.of(level), message);
  }
}
