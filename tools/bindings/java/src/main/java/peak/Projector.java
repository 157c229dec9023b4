package peak;

import java.io.FileDescriptor;

/**
 * A vision-language model's image encoder weights: its projector file (llama.cpp's
 * mmproj-*.gguf, general.architecture "clip"; projector types: gemma3, idefics3), the vision tower and the
 * projector that turn a picture into the embeddings of its image tokens in the language model's
 * width. Immutable: any number of {@link ImageEncoder}s, on any threads, may share it, as may the
 * sessions that take pictures ({@link SessionParams#projector}). Close it after them: {@link
 * #close()} refuses while one is open.
 */
public final class Projector extends NativeHandle {

  private Projector(long handle) {
    super("Projector", null, handle);
  }

  /** Loads the projector file at {@code path} with the default parameters. */
  public static Projector load(String path) {
    return load(path, new ModelParams());
  }

  /**
   * Of the params, {@link ModelParams#useMmap}, {@link ModelParams#useMlock} and {@link
   * ModelParams#checkTensors} apply. A language model's file ("not a vision projector"), an unknown
   * projector type, a missing tensor or a wrong shape is refused with {@link PeakException} ({@link
   * Status#FORMAT}) naming it.
   */
  public static Projector load(String path, ModelParams params) {
    return new Projector(Native.projectorLoad(path, params));
  }

  /**
   * Loads the projector held in bytes [offset, offset + length) of an open file, as {@link
   * Model#load(int, long, long, ModelParams)} does a model: an uncompressed asset of an APK, from
   * {@code AssetFileDescriptor}'s {@code getParcelFileDescriptor().getFd()}, {@code
   * getStartOffset()} and {@code getLength()}. Mapped (the default), {@code offset} must be a
   * multiple of 4. peak keeps no reference to the descriptor: close it when this returns.
   */
  public static Projector load(int fd, long offset, long length, ModelParams params) {
    return new Projector(Native.projectorLoadFd(fd, offset, length, params));
  }

  /**
   * As {@link #load(int, long, long, ModelParams)}, with a FileDescriptor (a RandomAccessFile's
   * getFD()). Its number is a private field of FileDescriptor: on Android, prefer the int form.
   */
  public static Projector load(FileDescriptor fd, long offset, long length, ModelParams params) {
    return load(Native.fdOf(fd), offset, length, params);
  }

  /**
   * What {@link #load(String, ModelParams)} and then an {@link ImageEncoder} with {@code encoder}
   * would take, from the file's metadata alone (peak_projector_estimate_memory): {@link
   * MemoryEstimate#weightBytes} the file's tensors, {@link MemoryEstimate#repackedBytes} the
   * projector matrix turned to the product's layout, {@link MemoryEstimate#computeBytes} the
   * encoder's buffers and the image tokens of a picture of the most frames (which a session
   * attached to keeps per picture), kvBytes 0. Either params may be null for the defaults.
   */
  public static MemoryEstimate estimateMemory(String path, ModelParams model, ImageEncoderParams encoder) {
    return Native.projectorEstimateMemory(path, orDefault(model), orDefault(encoder));
  }

  /** The same for the projector in bytes [offset, offset + length) of an open file. */
  public static MemoryEstimate estimateMemory(int fd, long offset, long length, ModelParams model,
                                              ImageEncoderParams encoder) {
    return Native.projectorEstimateMemoryFd(fd, offset, length, orDefault(model), orDefault(encoder));
  }

  private static ModelParams orDefault(ModelParams p) {
    return p != null ? p : new ModelParams();
  }

  private static ImageEncoderParams orDefault(ImageEncoderParams p) {
    return p != null ? p : new ImageEncoderParams();
  }

  public ProjectorInfo info() {
    return Native.projectorInfo(handle());
  }

  /**
   * How a picture of {@code width} x {@code height} pixels (each at least 1) enters the language
   * model: its frames and the texts around them (peak_projector_picture_layout and
   * peak_projector_frame_text).
   */
  public PictureLayout pictureLayout(int width, int height) {
    long projector = handle();
    int[] layout = Native.projectorPictureLayout(projector, width, height);
    java.util.List<String> texts = new java.util.ArrayList<>(layout[0] + 1);
    for (int i = 0; i <= layout[0]; ++i) texts.add(Native.projectorFrameText(projector, width, height, i));
    return new PictureLayout(layout[1], layout[2], layout[3], layout[4], texts);
  }

  @Override
  String dependentsName() {
    return "image encoders or sessions";
  }

  @Override
  void free(long handle) {
    Native.projectorFree(handle);
  }
}
