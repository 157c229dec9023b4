package peak;

/** An image encoder's threads (peak_image_encoder_params); starts from peak's defaults. */
public final class ImageEncoderParams {
  long nThreads;

  public ImageEncoderParams() {
    Native.fillDefaults(this);
  }

  /** 0 (default): {@link Peak#defaultThreads()}, the fast cores. */
  public ImageEncoderParams nThreads(long value) {
    nThreads = value;
    return this;
  }

  public long nThreads() {
    return nThreads;
  }
}
