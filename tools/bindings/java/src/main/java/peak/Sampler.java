package peak;

/** The sampler chain with its penalty window and random sequence. Used by one thread at a time. */
public final class Sampler extends NativeHandle {
  public Sampler(Model model, SamplerParams params) {
    super("Sampler", model, model.createDependent(m -> Native.samplerCreate(m, params)));
  }

  /** Picks a token from the context's last logits (does not accept it). */
  public int sample(Context context) {
    return Native.samplerSample(handle(), context.handle());
  }

  /**
   * Records a token as said: for the penalties, and the grammar reads its bytes (a token the grammar
   * does not allow here is refused, INVALID_ARGUMENT, recording nothing).
   */
  public void accept(int token) {
    Native.samplerAccept(handle(), token);
  }

  /** Forgets accepted tokens, restarts the random sequence from the seed and the grammar from its start. */
  public void reset() {
    Native.samplerReset(handle());
  }

  @Override
  void free(long handle) {
    Native.samplerFree(handle);
  }
}
