package peak;

import java.nio.ByteBuffer;
import java.util.Objects;
import java.util.function.LongFunction;

/**
 * A picture in memory (peak_image), for an {@link ImageEncoder}: 8-bit RGB, or RGBA when it carries
 * transparency. Made from a PNG or JPEG file's bytes, which peak decodes itself (PNG of every colour
 * type and depth, interlaced or not; baseline and progressive JPEG, turned upright by its EXIF
 * orientation), or from pixels: an Android Bitmap's with {@link #fromRgba}. peak keeps a copy:
 * the bytes given may change or go once this returns.
 *
 * <p>Immutable: encoders on any threads may read one image at once. {@link #close()} waits for
 * the encodings reading it to end.
 */
public final class Image extends NativeHandle {
  private final int width;
  private final int height;
  private final int channels;
  private int readers;  // encodings reading the picture now: close() waits for them

  private Image(long handle) {
    super("Image", null, handle);
    int[] size;
    try {
      size = Native.imageSize(handle);
    } catch (RuntimeException | Error e) {
      Native.imageFree(handle);
      throw e;
    }
    width = size[0];
    height = size[1];
    channels = size[2];
  }

  /**
   * Decodes a PNG or JPEG file's bytes. A file peak cannot read is refused with {@link
   * PeakException} ({@link Status#FORMAT}) naming the format and the reason ("PNG: bad CRC in chunk
   * IHDR", "JPEG: truncated file (in scan 2)"), as is another format ("not a PNG or JPEG file");
   * pictures past 16384 pixels a side or 64 Mi pixels are refused before anything is allocated.
   */
  public static Image decode(byte[] bytes) {
    Objects.requireNonNull(bytes, "bytes");
    return decode(bytes, 0, bytes.length);
  }

  /**
   * As {@link #decode(byte[])}, for the file's bytes [offset, offset + length) of {@code bytes};
   * a range outside the array throws IndexOutOfBoundsException.
   */
  public static Image decode(byte[] bytes, int offset, int length) {
    return new Image(Native.imageDecode(bytes, offset, length));
  }

  /**
   * As {@link #decode(byte[])}, for the file's bytes from {@code bytes}'s position to its limit (a
   * direct buffer, such as a mapped file or an asset read into one, is read in place). The buffer's
   * position is left as it was.
   */
  public static Image decode(ByteBuffer bytes) {
    Objects.requireNonNull(bytes, "bytes");
    int position = bytes.position();
    int length = bytes.remaining();
    if (bytes.isDirect()) return new Image(Native.imageDecodeDirect(bytes, position, length));
    if (bytes.hasArray()) return decode(bytes.array(), bytes.arrayOffset() + position, length);
    return decode(copyOf(bytes));
  }

  /**
   * A picture of {@code height} rows of {@code width} pixels of {@code channels} bytes (3: RGB, 4:
   * RGBA, straight alpha), the first row at {@code pixels[0]}, each row {@code stride} bytes after
   * the one before (0: {@code width * channels}, rows without padding). Sizes past the decoder's
   * limits, a stride shorter than a row, another channel count and a negative number are refused
   * with {@link PeakException} ({@link Status#INVALID_ARGUMENT}), as is an array too short for the
   * rows.
   */
  public static Image fromPixels(byte[] pixels, int width, int height, int channels, int stride) {
    Objects.requireNonNull(pixels, "pixels");
    return new Image(Native.imageFromPixels(pixels, 0, pixels.length, width, height, channels, stride));
  }

  /**
   * As {@link #fromPixels(byte[], int, int, int, int)}, the first row at {@code pixels}'s position
   * (a direct buffer is read in place). The buffer's position is left as it was.
   */
  public static Image fromPixels(ByteBuffer pixels, int width, int height, int channels, int stride) {
    Objects.requireNonNull(pixels, "pixels");
    int position = pixels.position();
    int length = pixels.remaining();
    if (pixels.isDirect()) {
      return new Image(Native.imageFromPixelsDirect(pixels, position, length, width, height, channels, stride));
    }
    if (pixels.hasArray()) {
      return new Image(Native.imageFromPixels(pixels.array(), pixels.arrayOffset() + position, length, width,
          height, channels, stride));
    }
    return fromPixels(copyOf(pixels), width, height, channels, stride);
  }

  /**
   * RGBA pixels, rows {@code rowBytes} apart: an Android Bitmap's of config ARGB_8888, whose bytes
   * are R, G, B, A in memory (convert another config, or a HARDWARE bitmap, with {@code
   * bitmap.copy(Bitmap.Config.ARGB_8888, false)}):
   *
   * <pre>{@code
   * ByteBuffer pixels = ByteBuffer.allocateDirect(bitmap.getByteCount());
   * bitmap.copyPixelsToBuffer(pixels);
   * pixels.rewind();  // copyPixelsToBuffer leaves the position after the pixels
   * Image image = Image.fromRgba(pixels, bitmap.getWidth(), bitmap.getHeight(), bitmap.getRowBytes());
   * }</pre>
   *
   * The encoders drop transparency. A Bitmap's colours are premultiplied by its alpha (unless
   * decoded with {@code BitmapFactory.Options.inPremultiplied = false}): the same for an opaque
   * picture such as a photo, darker for translucent pixels. Decoding the file's bytes with {@link
   * #decode(ByteBuffer)} instead gives the colours as the file holds them, as the model's own
   * processor reads them.
   */
  public static Image fromRgba(ByteBuffer pixels, int width, int height, int rowBytes) {
    return fromPixels(pixels, width, height, 4, rowBytes);
  }

  /** Pixels per row. */
  public int width() {
    return width;
  }

  /** Rows. */
  public int height() {
    return height;
  }

  /** 3 (RGB) or 4 (RGBA, when the picture carries transparency). */
  public int channels() {
    return channels;
  }

  /**
   * Runs {@code body} on the handle; {@link #close()} waits until it returns. Several run at once
   * (the picture is only read).
   */
  <T> T read(LongFunction<T> body) {
    long h;
    synchronized (this) {
      h = handle();
      ++readers;
    }
    try {
      return body.apply(h);
    } finally {
      synchronized (this) {
        if (--readers == 0) notifyAll();
      }
    }
  }

  /** Waits for the encodings reading the picture on other threads, then frees it. */
  @Override
  public void close() {
    synchronized (this) {
      boolean interrupted = false;
      while (readers > 0) {
        try {
          wait();
        } catch (InterruptedException e) {
          interrupted = true;  // an encoding still reads the picture: wait on, and keep the interrupt
        }
      }
      super.close();
      if (interrupted) Thread.currentThread().interrupt();
    }
  }

  @Override
  void free(long handle) {
    Native.imageFree(handle);
  }

  /** The bytes from position to limit of a buffer neither direct nor backed by an accessible array. */
  private static byte[] copyOf(ByteBuffer buffer) {
    byte[] bytes = new byte[buffer.remaining()];
    buffer.duplicate().get(bytes);
    return bytes;
  }
}
