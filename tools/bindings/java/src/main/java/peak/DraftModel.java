package peak;

/**
 * A draft model for speculative decoding (peak_draft_model): a smaller model of the target's
 * vocabulary proposes the next tokens, and the target verifies a token and the draft in one pass
 * ({@link GenerateOptions#draftModel(DraftModel)}). It has a context of its own, made with
 * {@code params} (its {@code passGroup} is not used), and remembers what that context holds, so
 * each generation evaluates there only what is new. One generation uses it at a time.
 */
public final class DraftModel extends NativeHandle {
  public DraftModel(Model model, ContextParams params) {
    super("DraftModel", model, model.createDependent(m -> Native.draftModelCreate(m, params)));
  }

  @Override
  void free(long handle) {
    Native.draftModelFree(handle);
  }
}
