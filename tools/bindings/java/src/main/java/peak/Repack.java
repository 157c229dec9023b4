package peak;

/** Whether and when matrices are stored in the CPU kernels' faster layout (peak_repack). */
public enum Repack {
  /** Keep the file's layout. */
  NONE,
  /** After the load returns, on threads of the lowest priority (the default). */
  BACKGROUND,
  /** Before the load returns. */
  AT_LOAD
}
