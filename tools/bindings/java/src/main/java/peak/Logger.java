package peak;

/**
 * Receives peak's messages: warnings, what a model load did, a session's summary job that failed
 * (see {@link Peak#setLogger}). Never a call's error: that is a {@link PeakException}.
 *
 * <p>Called from whichever thread writes the message (the caller's, a session's summary worker, a
 * model's background repacking), possibly several at once: it must be thread-safe. It must not
 * throw: an exception it throws is printed to stderr and dropped.
 */
@FunctionalInterface
public interface Logger {
  void log(LogLevel level, String message);
}
