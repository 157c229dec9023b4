package peak;

/**
 * Forward passes shared by several contexts and sessions of one model (peak_pass_group): members
 * made with {@link ContextParams#passGroup} or {@link SessionParams#passGroup} and used from their
 * own threads at the same time step together, each weight read once per step for all of them, each
 * sequence over its own KV cache. A member alone never waits. Members may run on any threads at
 * once; {@link #close()} refuses while one is open.
 */
public final class PassGroup extends NativeHandle {
  public PassGroup(Model model, PassGroupParams params) {
    super("PassGroup", model, model.createDependent(m -> Native.passGroupCreate(m, params)));
  }

  /** {@code [k - 1]}: the passes so far that took k sequences. */
  public long[] passesBySequences() {
    return Native.passGroupPassesBySequences(handle());
  }

  @Override
  String dependentsName() {
    return "members";
  }

  @Override
  void free(long handle) {
    Native.passGroupFree(handle);
  }
}
