package peak.tests;

import java.util.Arrays;
import java.util.Objects;
import peak.PeakException;
import peak.Status;

/** Assertions: each failure throws AssertionError naming what differed. */
final class Check {
  private Check() {}

  static void isTrue(boolean condition, String what) {
    if (!condition) throw new AssertionError(what);
  }

  static void equal(Object expected, Object actual, String what) {
    if (!Objects.equals(expected, actual)) {
      throw new AssertionError(what + ": expected <" + expected + "> but was <" + actual + ">");
    }
  }

  static void equal(long expected, long actual, String what) {
    if (expected != actual) throw new AssertionError(what + ": expected " + expected + " but was " + actual);
  }

  static void equal(int[] expected, int[] actual, String what) {
    if (!Arrays.equals(expected, actual)) {
      throw new AssertionError(what + ": expected " + Arrays.toString(expected) + " but was " + Arrays.toString(actual));
    }
  }

  static void contains(String text, String part, String what) {
    if (text == null || !text.contains(part)) {
      throw new AssertionError(what + ": <" + text + "> does not contain <" + part + ">");
    }
  }

  /** Runs {@code body}, which must throw PeakException with {@code status} and a message containing {@code part}. */
  static PeakException throwsPeak(Status status, String part, Runnable body) {
    try {
      body.run();
    } catch (PeakException e) {
      equal(status, e.status(), "status of \"" + e.getMessage() + "\"");
      contains(e.getMessage(), part, "message");
      return e;
    }
    throw new AssertionError("expected PeakException(" + status + ") containing <" + part + ">, nothing was thrown");
  }

  /** Runs {@code body}, which must throw {@code type}; returns it. */
  static <T extends Throwable> T throwsA(Class<T> type, Runnable body) {
    try {
      body.run();
    } catch (Throwable t) {
      if (type.isInstance(t)) return type.cast(t);
      throw new AssertionError("expected " + type.getSimpleName() + ", got " + t, t);
    }
    throw new AssertionError("expected " + type.getSimpleName() + ", nothing was thrown");
  }
}
