package peak;

import java.util.Objects;

/**
 * Turns pictures into the embeddings of their image tokens with a {@link Projector}: what a
 * vision-language model reads in a picture's place. Its compute buffers are allocated when it is
 * created. A context on the projector's language model then reads them in the picture's place,
 * between the texts the projector names (here in a Gemma 3 turn):
 *
 * <pre>{@code
 * ProjectorInfo info = projector.info();
 * context.eval(model.tokenize("<start_of_turn>user\n" + info.imagePrefix(), true, true));
 * context.evalEmbeddings(encoder.encode(image), info.bidirectional());
 * context.generate(sampler, info.imageSuffix() + "What is in this picture?<end_of_turn>\n<start_of_turn>model\n",
 *     new GenerateOptions().parseSpecial(true), onText);
 * }</pre>
 *
 * <p>Calls on one encoder run one at a time: a second thread's call (or {@link #close()}) waits for
 * the first to end. To encode on several threads at once, give each its own encoder on the same
 * projector. Close it before its projector.
 */
public final class ImageEncoder extends NativeHandle {
  private final ProjectorInfo info;

  public ImageEncoder(Projector projector) {
    this(projector, new ImageEncoderParams());
  }

  public ImageEncoder(Projector projector, ImageEncoderParams params) {
    this(projector, params, projector.info());
  }

  private ImageEncoder(Projector projector, ImageEncoderParams params, ProjectorInfo info) {
    super("ImageEncoder", projector, projector.createDependent(p -> Native.imageEncoderCreate(p, params)));
    this.info = info;
  }

  /**
   * Embeddings per frame (the projector's {@link ProjectorInfo#nImageTokens()}); a picture is one
   * frame or several ({@link Projector#pictureLayout}).
   */
  public long nImageTokens() {
    return info.nImageTokens();
  }

  /** Floats per embedding: the language model's width (the projector's {@link ProjectorInfo#nEmbd()}). */
  public long nEmbd() {
    return info.nEmbd();
  }

  /** The bytes of its compute and work buffers, reserved at creation (peak_image_encoder_compute_bytes). */
  public synchronized long computeBytes() {
    return Native.imageEncoderComputeBytes(handle());
  }

  /**
   * Encodes a picture of any size, resized as the model's own processor does (Gemma 3: bilinear to
   * its {@link ProjectorInfo#imageSize()}; SmolVLM: Lanczos, cut into tiles; transparency dropped):
   * the embeddings of every frame's image tokens ({@link Projector#pictureLayout}), {@link #nEmbd()}
   * floats each, token by token and frame after frame, for {@link Context#evalEmbeddings(float[],
   * boolean)} (a frame at a time) or {@link Session#attachImage(float[], int, int)}.
   * A closed image throws IllegalStateException.
   */
  public synchronized float[] encode(Image image) {
    Objects.requireNonNull(image, "image");
    long encoder = handle();
    long nFloats = info.nImageTokens() * info.nEmbd();
    return image.read(i -> Native.imageEncode(encoder, i, nFloats));
  }

  /** Waits for a call running on another thread, then frees the encoder. */
  @Override
  public synchronized void close() {
    super.close();
  }

  @Override
  void free(long handle) {
    Native.imageEncoderFree(handle);
  }
}
