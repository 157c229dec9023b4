package peak;

/** A session's segments, summaries and where its time went (peak_session_stats). */
public final class SessionStats {
  long nCtx;
  long prefixTokens;
  long summaryTokens;
  long recentTokens;
  long recentMessages;
  long droppedSinceSummary;
  long droppedTotal;
  long summaries;
  boolean summaryRunning;
  double summarySeconds;
  double rebuildSeconds;
  double lastRebuildSeconds;
  double windowShiftSeconds;
  double workerRebuildSeconds;
  long turns;
  long kvBytes;
  long stagingKvBytes;
  long summaryFailures;

  SessionStats() {}

  public long nCtx() {
    return nCtx;
  }

  public long prefixTokens() {
    return prefixTokens;
  }

  public long summaryTokens() {
    return summaryTokens;
  }

  public long recentTokens() {
    return recentTokens;
  }

  public long recentMessages() {
    return recentMessages;
  }

  /** Dropped tokens not yet in a summary or a running job. */
  public long droppedSinceSummary() {
    return droppedSinceSummary;
  }

  public long droppedTotal() {
    return droppedTotal;
  }

  /** Summaries put in place. */
  public long summaries() {
    return summaries;
  }

  /** The worker writes a summary or rebuilds a cache. */
  public boolean summaryRunning() {
    return summaryRunning;
  }

  public double summarySeconds() {
    return summarySeconds;
  }

  public double rebuildSeconds() {
    return rebuildSeconds;
  }

  public double lastRebuildSeconds() {
    return lastRebuildSeconds;
  }

  public double windowShiftSeconds() {
    return windowShiftSeconds;
  }

  public double workerRebuildSeconds() {
    return workerRebuildSeconds;
  }

  public long turns() {
    return turns;
  }

  /** Main and summary KV caches. */
  public long kvBytes() {
    return kvBytes;
  }

  public long stagingKvBytes() {
    return stagingKvBytes;
  }

  /** Summary jobs that failed ({@link Session#summaryError()} says why). */
  public long summaryFailures() {
    return summaryFailures;
  }
}
