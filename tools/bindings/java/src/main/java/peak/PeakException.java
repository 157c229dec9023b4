package peak;

/**
 * A call into peak failed: {@link #status()} is the C API's status and the message is
 * peak_last_error()'s, naming what was wrong (fields as peak.h spells them, e.g. "top_p").
 * Unchecked, as misuse and bad input are not something a caller can usually recover from locally.
 */
public class PeakException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final int code;

  /** Thrown by the native glue. */
  PeakException(int code, String message) {
    super(message);
    this.code = code;
  }

  public Status status() {
    return Status.of(code);
  }

  /** The C API's status value (as {@link #status()}, also for a value this binding does not know). */
  public int code() {
    return code;
  }

  @Override
  public String toString() {
    return "PeakException(" + status() + "): " + getMessage();
  }
}
