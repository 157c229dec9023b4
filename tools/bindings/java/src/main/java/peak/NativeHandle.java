package peak;

import java.util.function.LongUnaryOperator;

/**
 * An open C API handle. {@link #close()} frees it (again: nothing); a method called after that
 * throws IllegalStateException instead of reaching freed memory. A handle made from another (a
 * context from its model, an image encoder from its projector) counts as one of its dependents until
 * it is closed.
 */
abstract class NativeHandle implements AutoCloseable {
  private final String what;
  private final NativeHandle owner;
  private long handle;
  private int dependents;  // open handles made from this one (a model's contexts, a group's members)

  /** {@code owner}: the handle it was made from (a model, a projector), or null. */
  NativeHandle(String what, NativeHandle owner, long handle) {
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

  /** What the handles made from this one are, for close()'s refusal ("contexts, sessions"). */
  String dependentsName() {
    return "dependents";
  }

  /** Creates a handle that depends on this one from its handle, counting it while it is open. */
  final long createDependent(LongUnaryOperator create) {
    long h;
    synchronized (this) {
      h = handle();
      ++dependents;
    }
    try {
      return create.applyAsLong(h);
    } catch (RuntimeException | Error e) {
      release();
      throw e;
    }
  }

  /** A dependent was closed. */
  final synchronized void release() {
    --dependents;
  }

  /** Frees the handle; refuses with IllegalStateException while a dependent is open. */
  @Override
  public void close() {
    long h;
    synchronized (this) {
      if (dependents > 0) {
        throw new IllegalStateException(what + " still has " + dependents + " open " + dependentsName()
            + ": close them first");
      }
      h = handle;
      handle = 0;
    }
    if (h == 0) return;
    free(h);
    if (owner != null) owner.release();
  }
}
