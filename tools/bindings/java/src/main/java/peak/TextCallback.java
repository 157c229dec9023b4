package peak;

/**
 * Receives generated text as it is written: whole characters, never part of one. Called on the
 * generating thread, during the call. An exception it throws stops the generation, and the call
 * that generated rethrows it (a session keeps the answer written up to there, as when a token
 * cancels it). To stop without an exception, cancel the call's {@link CancellationToken}.
 */
@FunctionalInterface
public interface TextCallback {
  void onText(String text);
}
