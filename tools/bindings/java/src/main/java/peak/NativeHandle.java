package peak;

/**
 * An open C API handle. {@link #close()} frees it (again: nothing); a method called after that
 * throws IllegalStateException instead of reaching freed memory. A handle made from a model counts
 * as one of its dependents until it is closed.
 */
abstract class NativeHandle implements AutoCloseable {
  private final String what;
  private final Model owner;
  private long handle;

  /** {@code owner}: the model it was made from, or null. */
  NativeHandle(String what, Model owner, long handle) {
    this.what = what;
    this.owner = owner;
    this.handle = handle;
  }

  /** The handle, for a native call. */
  final synchronized long handle() {
    if (handle == 0) throw new IllegalStateException(what + " is closed");
    return handle;
  }

  final synchronized boolean isClosed() {
    return handle == 0;
  }

  /** Frees the handle. */
  abstract void free(long handle);

  @Override
  public void close() {
    long h;
    synchronized (this) {
      h = handle;
      handle = 0;
    }
    if (h == 0) return;
    free(h);
    if (owner != null) owner.release();
  }
}
