package peak;

import java.util.List;

/**
 * A LoRA adapter or a control vector loaded for one model (as llama.cpp's tools write them),
 * applied at run time without changing the model: {@link Context#setAdapters} and {@link
 * Session#setAdapters}. Immutable: contexts and sessions on any threads may share it. Closing it
 * while a context or session uses it is safe (they keep it until they stop using it); close it
 * before its model.
 */
public final class Adapter extends NativeHandle {
  private Adapter(Model model, String path, boolean useMmap) {
    super("Adapter", model, model.createDependent(m -> Native.adapterLoad(m, path, useMmap)));
  }

  /**
   * Loads the adapter or control vector at {@code path} for {@code model}, checked against it
   * (architecture, every tensor's name, shape and type); a refusal names the key or tensor.
   */
  public static Adapter load(Model model, String path) {
    return new Adapter(model, path, true);
  }

  /** {@code useMmap}: LoRA: true (default) maps the file, false reads it into memory. */
  public static Adapter load(Model model, String path, boolean useMmap) {
    return new Adapter(model, path, useMmap);
  }

  public AdapterInfo info() {
    return Native.adapterInfo(handle());
  }

  /**
   * This adapter with a scale (LoRA: s = scale·alpha/rank) or strength (control vector), for
   * setAdapters. Scale 0 leaves the model's results exactly as without it.
   */
  public Use use(float scale) {
    return new Use(this, scale);
  }

  @Override
  void free(long handle) {
    Native.adapterFree(handle);
  }

  /** An adapter in use with its scale or strength. */
  public static final class Use {
    final Adapter adapter;
    final float scale;

    Use(Adapter adapter, float scale) {
      this.adapter = adapter;
      this.scale = scale;
    }

    public Adapter adapter() {
      return adapter;
    }

    public float scale() {
      return scale;
    }
  }

  /** The handles and scales of {@code uses}, as the glue takes them. */
  static long[] handles(List<Use> uses) {
    long[] handles = new long[uses.size()];
    for (int i = 0; i < handles.length; ++i) handles[i] = uses.get(i).adapter.handle();
    return handles;
  }

  static float[] scales(List<Use> uses) {
    float[] scales = new float[uses.size()];
    for (int i = 0; i < scales.length; ++i) scales[i] = uses.get(i).scale;
    return scales;
  }
}
