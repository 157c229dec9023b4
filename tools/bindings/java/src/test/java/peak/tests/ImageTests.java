package peak.tests;

import java.io.File;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicReference;
import peak.Context;
import peak.ContextParams;
import peak.Image;
import peak.ImageEncoder;
import peak.ImageEncoderParams;
import peak.MemoryEstimate;
import peak.Model;
import peak.ModelParams;
import peak.Projector;
import peak.ProjectorInfo;
import peak.Status;

/**
 * Pictures and image encoders on tests/runtime's tiny Gemma 3 encoder, beside the naive reference's
 * embeddings of the test photo (as test_capi_image.c checks them from C): the photo's PNG decoded
 * and resized by peak, and PIL's resized pixels given as RGB and as padded RGBA rows, in arrays and
 * in buffers, all encode to the reference's embeddings; the projector describes itself and loads
 * from a region of a larger file; bad files and pixels are refused, naming why. Then embedding rows
 * evaluated in a stories260K context, and a picture's embeddings inside a story.
 */
public final class ImageTests {
  private static final int SIDE = 32;  // the tiny encoder's picture side, and the resized pixels'
  private static final String PPM_HEADER = "P6\n32 32\n255\n";

  private static byte[] photo() throws IOException {
    return Files.readAllBytes(Fixtures.testData("images/png/photo_256x192.png").toPath());
  }

  /** The photo as PIL resizes it for the encoder: 32 x 32 RGB pixels, rows without padding. */
  private static byte[] resizedRgb() throws IOException {
    byte[] ppm = Files.readAllBytes(Fixtures.testData("images/vision/gemma3_32.ppm").toPath());
    byte[] header = PPM_HEADER.getBytes(StandardCharsets.US_ASCII);
    Check.equal(header.length + SIDE * SIDE * 3, ppm.length, "the PPM's size");
    Check.isTrue(Arrays.equals(header, Arrays.copyOf(ppm, header.length)), "the PPM's header");
    return Arrays.copyOfRange(ppm, header.length, ppm.length);
  }

  /** The same pixels as RGBA rows {@code stride} bytes apart, alpha varying (the encoder drops it). */
  private static byte[] rgba(byte[] rgb, int stride) {
    byte[] out = new byte[SIDE * stride];
    for (int y = 0; y < SIDE; ++y) {
      for (int x = 0; x < SIDE; ++x) {
        System.arraycopy(rgb, (y * SIDE + x) * 3, out, y * stride + x * 4, 3);
        out[y * stride + x * 4 + 3] = (byte) (x * 7 + y);
      }
      for (int pad = SIDE * 4; pad < stride; ++pad) out[y * stride + pad] = (byte) 0xA5;
    }
    return out;
  }

  private static float[] reference() throws IOException {
    String[] words = new String(Files.readAllBytes(new File(Fixtures.imageReference()).toPath()),
        StandardCharsets.US_ASCII).trim().split("\\s+");
    int n = Integer.parseInt(words[0]);
    Check.equal(n + 1, words.length, "the reference's floats");
    float[] floats = new float[n];
    for (int i = 0; i < n; ++i) floats[i] = Float.parseFloat(words[i + 1]);
    return floats;
  }

  /** The largest difference from the reference, relative to its largest value (at least 1). */
  private static void likeTheReference(float[] reference, float[] got, String what) {
    Check.equal(reference.length, got.length, what + ": floats");
    double diff = 0;
    double largest = 1;
    for (int i = 0; i < got.length; ++i) {
      diff = Math.max(diff, Math.abs((double) got[i] - reference[i]));
      largest = Math.max(largest, Math.abs((double) reference[i]));
    }
    Check.isTrue(diff / largest < 1e-4, what + ": differs from the reference by " + diff / largest);
  }

  private static ByteBuffer direct(byte[] bytes, int before) {
    ByteBuffer buffer = ByteBuffer.allocateDirect(before + bytes.length);
    buffer.position(before);
    buffer.put(bytes);
    buffer.position(before);
    return buffer;
  }

  private static void checkSize(Image image, int width, int height, int channels, String what) {
    Check.equal(width, image.width(), what + ": width");
    Check.equal(height, image.height(), what + ": height");
    Check.equal(channels, image.channels(), what + ": channels");
  }

  @Test
  public void decodesThePhotoFromArraysAndBuffers() throws Exception {
    byte[] png = photo();
    try (Image image = Image.decode(png)) {
      checkSize(image, 256, 192, 3, "the photo");
    }
    byte[] padded = new byte[png.length + 10];
    System.arraycopy(png, 0, padded, 7, png.length);
    try (Image image = Image.decode(padded, 7, png.length)) {
      checkSize(image, 256, 192, 3, "the photo inside a larger array");
    }
    ByteBuffer buffer = direct(png, 5);
    try (Image image = Image.decode(buffer)) {
      checkSize(image, 256, 192, 3, "the photo in a direct buffer");
    }
    Check.equal(5, buffer.position(), "the direct buffer's position, unchanged");
    ByteBuffer heap = ByteBuffer.wrap(padded, 7, png.length);
    try (Image image = Image.decode(heap.slice()); Image readOnly = Image.decode(heap.asReadOnlyBuffer())) {
      checkSize(image, 256, 192, 3, "the photo in a heap buffer's slice");
      checkSize(readOnly, 256, 192, 3, "the photo in a read-only heap buffer");
    }
    Check.equal(7, heap.position(), "the heap buffer's position, unchanged");
  }

  @Test
  public void refusesWhatIsNoPicture() throws Exception {
    Check.throwsPeak(Status.FORMAT, "not a PNG or JPEG file",
        () -> Image.decode("GIF89a".getBytes(StandardCharsets.US_ASCII)));
    Check.throwsPeak(Status.FORMAT, "not a PNG or JPEG file",
        () -> Image.decode(direct("not a picture".getBytes(StandardCharsets.US_ASCII), 3)));
    Check.throwsPeak(Status.FORMAT, "the file is empty", () -> Image.decode(new byte[0]));
    byte[] png = photo();
    Check.throwsPeak(Status.FORMAT, "PNG: ", () -> Image.decode(png, 0, png.length / 2));
    Check.throwsA(IndexOutOfBoundsException.class, () -> Image.decode(png, 5, png.length));
    Check.throwsA(IndexOutOfBoundsException.class, () -> Image.decode(png, -1, 10));
    Check.throwsA(NullPointerException.class, () -> Image.decode((byte[]) null));
    Check.throwsA(NullPointerException.class, () -> Image.decode((ByteBuffer) null));
  }

  @Test
  public void refusesBadPixels() throws Exception {
    byte[] rgb = resizedRgb();
    Check.throwsPeak(Status.INVALID_ARGUMENT, "channels is 2", () -> Image.fromPixels(rgb, SIDE, SIDE, 2, 0));
    Check.throwsPeak(Status.INVALID_ARGUMENT, "stride 90 is shorter than a row of 96 bytes",
        () -> Image.fromPixels(rgb, SIDE, SIDE, 3, 90));
    Check.throwsPeak(Status.INVALID_ARGUMENT, "0 x 32 pixels", () -> Image.fromPixels(rgb, 0, SIDE, 3, 0));
    Check.throwsPeak(Status.INVALID_ARGUMENT, "width is -1; it must be at least 0",
        () -> Image.fromPixels(rgb, -1, SIDE, 3, 0));
    // More rows than the pixels hold: refused before peak reads past them.
    Check.throwsPeak(Status.INVALID_ARGUMENT,
        "pixels holds 3072 bytes; 33 rows of 32 x 3 bytes, 96 bytes apart, need 3168",
        () -> Image.fromPixels(rgb, SIDE, SIDE + 1, 3, 0));
    Check.throwsPeak(Status.INVALID_ARGUMENT,
        "pixels holds 3072 bytes; 32 rows of 32 x 3 bytes, 100 bytes apart, need 3196",
        () -> Image.fromPixels(rgb, SIDE, SIDE, 3, 100));
    ByteBuffer buffer = direct(rgb, 1);
    Check.throwsPeak(Status.INVALID_ARGUMENT, "pixels holds 3072 bytes; 32 rows of 32 x 4 bytes",
        () -> Image.fromRgba(buffer, SIDE, SIDE, 0));
    Check.throwsA(NullPointerException.class, () -> Image.fromPixels((byte[]) null, SIDE, SIDE, 3, 0));
  }

  @Test
  public void projectorDescribesItself() {
    try (Projector projector = Projector.load(Fixtures.imageProjector())) {
      ProjectorInfo info = projector.info();
      Check.equal("gemma3", info.projectorType(), "projector type");
      Check.equal(32, info.imageSize(), "image size");
      Check.equal(4, info.patchSize(), "patch size");
      Check.equal(4, info.nImageTokens(), "image tokens");
      Check.equal(48, info.nEmbd(), "n_embd");
      Check.isTrue(info.nParams() > 0, "parameters");
      Check.isTrue(info.sizeBytes() >= 4 * info.nParams(), "F32 weights: 4 bytes a parameter at least");
      Check.equal("\n\n<start_of_image>", info.imagePrefix(), "image prefix");
      Check.equal("<end_of_image>\n\n", info.imageSuffix(), "image suffix");
      Check.isTrue(info.bidirectional(), "Gemma 3's image tokens attend both ways");
      Check.equal(0, new ImageEncoderParams().nThreads(), "n_threads: the fast cores");
      try (ImageEncoder encoder = new ImageEncoder(projector, new ImageEncoderParams().nThreads(1))) {
        Check.equal(4, encoder.nImageTokens(), "the encoder's image tokens");
        Check.equal(48, encoder.nEmbd(), "the encoder's n_embd");
        // The estimate from the file's metadata: what the load and this encoder hold.
        MemoryEstimate estimate =
            Projector.estimateMemory(Fixtures.imageProjector(), null, new ImageEncoderParams().nThreads(1));
        Check.equal(info.sizeBytes(), estimate.weightBytes(), "estimated weight bytes");
        Check.equal(0L, estimate.kvBytes(), "an encoder has no KV cache");
        Check.isTrue(encoder.computeBytes() > 0, "the encoder's buffers");
        Check.equal(encoder.computeBytes() + 4L * 48 * 4, estimate.computeBytes(),
                    "estimated compute: the encoder's buffers and one picture's rows");
        Check.equal(estimate.weightBytes() + estimate.repackedBytes() + estimate.computeBytes(),
                    estimate.totalBytes(), "the total");
      }
    }
  }

  @Test
  public void encodesThePhotoAsTheReference() throws Exception {
    float[] reference = reference();
    Check.equal(4 * 48, reference.length, "the reference: 4 tokens of 48 floats");
    try (Projector projector = Projector.load(Fixtures.imageProjector());
         ImageEncoder encoder = new ImageEncoder(projector);
         Image photo = Image.decode(photo())) {
      float[] embeddings = encoder.encode(photo);
      likeTheReference(reference, embeddings, "the decoded photo");
      Check.isTrue(Arrays.equals(embeddings, encoder.encode(photo)), "encoding again gives the same floats");
    }
  }

  @Test
  public void resizedPixelsAsRgbAndPaddedRgba() throws Exception {
    float[] reference = reference();
    byte[] rgb = resizedRgb();
    final int stride = SIDE * 4 + 4;
    byte[] rgba = rgba(rgb, stride);
    try (Projector projector = Projector.load(Fixtures.imageProjector());
         ImageEncoder encoder = new ImageEncoder(projector, new ImageEncoderParams().nThreads(2))) {
      float[] fromRgb;
      try (Image image = Image.fromPixels(rgb, SIDE, SIDE, 3, 0)) {
        checkSize(image, SIDE, SIDE, 3, "RGB pixels");
        fromRgb = encoder.encode(image);
      }
      likeTheReference(reference, fromRgb, "the resized RGB pixels");
      try (Image image = Image.fromPixels(rgba, SIDE, SIDE, 4, stride)) {
        checkSize(image, SIDE, SIDE, 4, "RGBA pixels");
        Check.isTrue(Arrays.equals(fromRgb, encoder.encode(image)), "RGBA rows 132 bytes apart: the RGB floats");
      }
      // A Bitmap's pixels, as copyPixelsToBuffer writes them: RGBA rows of getRowBytes().
      ByteBuffer bitmap = direct(rgba, 12);
      try (Image image = Image.fromRgba(bitmap, SIDE, SIDE, stride)) {
        Check.isTrue(Arrays.equals(fromRgb, encoder.encode(image)), "RGBA in a direct buffer: the RGB floats");
      }
      Check.equal(12, bitmap.position(), "the buffer's position, unchanged");
      ByteBuffer heap = ByteBuffer.wrap(rgba);
      try (Image image = Image.fromRgba(heap, SIDE, SIDE, stride)) {
        Check.isTrue(Arrays.equals(fromRgb, encoder.encode(image)), "RGBA in a heap buffer: the RGB floats");
      }
      try (Image image = Image.fromPixels(direct(rgb, 0), SIDE, SIDE, 3, SIDE * 3)) {
        Check.isTrue(Arrays.equals(fromRgb, encoder.encode(image)), "RGB in a direct buffer, stride given");
      }
    }
  }

  @Test
  public void encodersOnTwoThreadsShareAnImage() throws Exception {
    try (Projector projector = Projector.load(Fixtures.imageProjector());
         ImageEncoder first = new ImageEncoder(projector, new ImageEncoderParams().nThreads(1));
         ImageEncoder second = new ImageEncoder(projector, new ImageEncoderParams().nThreads(1));
         Image photo = Image.decode(photo())) {
      float[] expected = first.encode(photo);
      AtomicReference<Throwable> failure = new AtomicReference<>();
      Thread other = new Thread(() -> {
        try {
          for (int i = 0; i < 4; ++i) Check.isTrue(Arrays.equals(expected, second.encode(photo)), "the other thread's");
        } catch (Throwable t) {
          failure.set(t);
        }
      });
      other.start();
      for (int i = 0; i < 4; ++i) Check.isTrue(Arrays.equals(expected, first.encode(photo)), "this thread's");
      other.join();
      if (failure.get() != null) throw new AssertionError("the other thread failed", failure.get());
    }
  }

  @Test
  public void projectorFromADescriptor() throws Exception {
    final int prefix = 4100;  // a multiple of 4, as zipalign aligns entries
    byte[] projectorBytes = Files.readAllBytes(new File(Fixtures.imageProjector()).toPath());
    byte[] all = new byte[prefix + projectorBytes.length + 999];
    for (int i = 0; i < all.length; ++i) all[i] = (byte) (i * 31 + 7);
    System.arraycopy(projectorBytes, 0, all, prefix, projectorBytes.length);
    File file = new File(Fixtures.scratch("image"), "projector-container.bin");
    Files.write(file.toPath(), all);
    Projector byFd;
    try (RandomAccessFile in = new RandomAccessFile(file, "r")) {
      Check.throwsPeak(Status.FORMAT, "not a GGUF file",
          () -> Projector.load(file.getPath(), new ModelParams()));
      byFd = Projector.load(in.getFD(), prefix, projectorBytes.length, new ModelParams());
    }
    // peak keeps no reference to the descriptor: the projector works on after it was closed.
    try (Projector fromFd = byFd;
         Projector byPath = Projector.load(Fixtures.imageProjector(), new ModelParams().useMmap(false));
         ImageEncoder a = new ImageEncoder(fromFd);
         ImageEncoder b = new ImageEncoder(byPath);
         Image photo = Image.decode(photo())) {
      Check.equal(byPath.info().nParams(), fromFd.info().nParams(), "parameters");
      Check.equal(byPath.info().sizeBytes(), fromFd.info().sizeBytes(), "tensor bytes");
      Check.isTrue(Arrays.equals(b.encode(photo), a.encode(photo)), "the embeddings, bit for bit");
    }
  }

  @Test
  public void filesWhereTheOtherBelongs() {
    Check.throwsPeak(Status.FORMAT, "not a vision projector", () -> Projector.load(Fixtures.stories()));
    Check.throwsPeak(Status.FORMAT, "a vision projector", () -> Model.load(Fixtures.imageProjector()));
    Check.throwsA(NullPointerException.class, () -> Projector.load((String) null));
  }

  @Test
  public void closingOrder() throws Exception {
    Projector projector = Projector.load(Fixtures.imageProjector());
    ImageEncoder encoder = new ImageEncoder(projector);
    IllegalStateException refused = Check.throwsA(IllegalStateException.class, projector::close);
    Check.contains(refused.getMessage(), "still has 1 open image encoders", "closing a projector in use");
    Image image = Image.decode(photo());
    image.close();
    image.close();  // again: nothing
    Check.throwsA(IllegalStateException.class, () -> encoder.encode(image));
    Check.equal(256, image.width(), "a closed image's width, kept");
    encoder.close();
    Check.throwsA(IllegalStateException.class, () -> encoder.encode(image));
    projector.close();
    Check.throwsA(IllegalStateException.class, projector::info);
    Check.throwsA(IllegalStateException.class, () -> new ImageEncoder(projector));
  }

  /** Rows of stories260K's width whose values vary by row and column. */
  private static float[] varied(int nRows, int nEmbd) {
    float[] rows = new float[nRows * nEmbd];
    for (int i = 0; i < rows.length; ++i) rows[i] = (float) (0.5 * Math.sin(0.37 * i + 1));
    return rows;
  }

  @Test
  public void evaluatesEmbeddingRows() {
    try (Model model = Model.load(Fixtures.stories());
         Context context = new Context(model, new ContextParams().nCtx(16).nBatch(4).nThreads(1))) {
      int nEmbd = (int) model.info().nEmbd();
      Check.equal(64, nEmbd, "stories260K's n_embd");
      context.eval(new int[] {model.info().bosToken()});
      Check.equal(1, context.nUsed(), "cells after BOS");
      float[] rows = new float[3 * nEmbd];
      Arrays.fill(rows, 0.25f);
      context.evalEmbeddings(rows, 3, false);
      Check.equal(4, context.nUsed(), "cells after 3 rows");
      float[] logits = context.logits();
      Check.equal(model.info().nVocab(), logits.length, "logits");
      for (float v : logits) Check.isTrue(Float.isFinite(v), "finite logits");
      context.evalEmbeddings(new float[2 * nEmbd], true);  // all of the array: 2 rows of zeros
      Check.equal(6, context.nUsed(), "cells after 2 rows more");

      float[] withNan = rows.clone();
      withNan[nEmbd + 2] = Float.NaN;
      Check.throwsPeak(Status.INVALID_ARGUMENT, "row 1 holds nan at 2",
          () -> context.evalEmbeddings(withNan, 3, false));
      Check.throwsPeak(Status.INVALID_ARGUMENT, "n_rows is 0", () -> context.evalEmbeddings(rows, 0, false));
      Check.throwsPeak(Status.INVALID_ARGUMENT, "n_rows is -1", () -> context.evalEmbeddings(rows, -1, false));
      Check.throwsPeak(Status.INVALID_ARGUMENT, "rows holds 192 floats; 4 rows of n_embd 64 need 256",
          () -> context.evalEmbeddings(rows, 4, false));
      Check.throwsPeak(Status.INVALID_ARGUMENT, "must fit one batch of n_batch 4",
          () -> context.evalEmbeddings(new float[5 * nEmbd], 5, true));
      Check.throwsPeak(Status.CONTEXT_FULL, "11 rows do not fit",
          () -> context.evalEmbeddings(new float[11 * nEmbd], 11, false));
      Check.throwsA(IllegalArgumentException.class, () -> context.evalEmbeddings(new float[100], false));
      Check.throwsA(NullPointerException.class, () -> context.evalEmbeddings(null, 1, false));
      Check.equal(6, context.nUsed(), "cells after the refusals");
      Check.isTrue(Arrays.equals(context.logits(), context.logits()), "logits kept");
    }
  }

  @Test
  public void rowsAttendingBothWaysReadDifferently() {
    try (Model model = Model.load(Fixtures.stories())) {
      int nEmbd = (int) model.info().nEmbd();
      float[] rows = varied(4, nEmbd);
      float[][] logits = new float[3][];
      boolean[] ways = {false, false, true};
      for (int i = 0; i < 3; ++i) {
        try (Context context = new Context(model, new ContextParams().nCtx(16).nBatch(4).nThreads(1))) {
          context.eval(new int[] {model.info().bosToken()});
          context.evalEmbeddings(rows, ways[i]);
          Check.equal(5, context.nUsed(), "cells");
          logits[i] = context.logits();
        }
      }
      Check.isTrue(Arrays.equals(logits[0], logits[1]), "causal rows: the same logits again");
      double diff = 0;
      for (int v = 0; v < logits[0].length; ++v) diff = Math.max(diff, Math.abs(logits[0][v] - logits[2][v]));
      Check.isTrue(diff > 1e-3, "rows attending both ways change the last row's logits (by " + diff + ")");
    }
  }

  @Test
  public void aPictureInsideAStory() throws Exception {
    try (Model model = Model.load(Fixtures.stories());
         Projector projector = Projector.load(Fixtures.imageProjector64());
         ImageEncoder encoder = new ImageEncoder(projector);
         Image photo = Image.decode(photo());
         Context withPicture = new Context(model, new ContextParams().nCtx(64).nThreads(1));
         Context without = new Context(model, new ContextParams().nCtx(64).nThreads(1))) {
      ProjectorInfo info = projector.info();
      Check.equal(model.info().nEmbd(), info.nEmbd(), "the projector's width: the model's");
      withPicture.eval(model.tokenize("Once upon", true, false));
      without.eval(model.tokenize("Once upon", true, false));
      float[] embeddings = encoder.encode(photo);
      Check.equal(info.nImageTokens() * info.nEmbd(), embeddings.length, "the picture's floats");
      long before = withPicture.nUsed();
      withPicture.evalEmbeddings(embeddings, info.bidirectional());
      Check.equal(before + info.nImageTokens(), withPicture.nUsed(), "a cell per image token");
      int[] after = model.tokenize(" a time", false, false);
      withPicture.eval(after);
      without.eval(after);
      Check.isTrue(!Arrays.equals(without.logits(), withPicture.logits()), "the picture changes what follows");
    }
  }
}
