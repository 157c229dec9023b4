package peak;

/** What loading a model and creating a context on it would take, in bytes (peak_memory_estimate). */
public final class MemoryEstimate {
  long weightBytes;
  long repackedBytes;
  long kvBytes;
  long computeBytes;
  long totalBytes;

  MemoryEstimate() {}

  /** The weights: file pages when mapped (the system may drop and read them again), heap when not. */
  public long weightBytes() {
    return weightBytes;
  }

  /** New memory for matrices repacked to the kernels' layout. */
  public long repackedBytes() {
    return repackedBytes;
  }

  /** The context's KV cache. */
  public long kvBytes() {
    return kvBytes;
  }

  /** Its compute, work and logits buffers. */
  public long computeBytes() {
    return computeBytes;
  }

  /**
   * The sum: an upper bound on what the model and the context hold (but for the tokenizer's tables,
   * a few MB for a large vocabulary). Compare it with what ActivityManager.MemoryInfo leaves.
   */
  public long totalBytes() {
    return totalBytes;
  }
}
