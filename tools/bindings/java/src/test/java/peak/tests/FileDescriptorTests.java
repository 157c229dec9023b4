package peak.tests;

import java.io.File;
import java.io.FileDescriptor;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.util.Arrays;
import peak.Context;
import peak.ContextParams;
import peak.MemoryEstimate;
import peak.Model;
import peak.ModelInfo;
import peak.ModelParams;
import peak.Status;

/**
 * A model stored inside a larger file, as an uncompressed asset inside an APK: loaded from the
 * file's descriptor with an offset and a length, it computes what the same model loaded by path
 * does.
 */
public final class FileDescriptorTests {
  private static final int PREFIX = 4100;  // a multiple of 4, as zipalign aligns entries
  private static final int SUFFIX = 999;

  /** junk(PREFIX + extra) + the model + junk(SUFFIX), written by this test. */
  private static File container(int extra) throws IOException {
    byte[] model = Files.readAllBytes(new File(Fixtures.stories()).toPath());
    byte[] all = new byte[PREFIX + extra + model.length + SUFFIX];
    for (int i = 0; i < all.length; ++i) all[i] = (byte) (i * 31 + 7);
    System.arraycopy(model, 0, all, PREFIX + extra, model.length);
    File file = new File(Fixtures.scratch("fd"), "container-" + extra + ".bin");
    Files.write(file.toPath(), all);
    return file;
  }

  private static long modelLength() {
    return new File(Fixtures.stories()).length();
  }

  /** The last logits after `text`, and the greedy continuation's token ids. */
  private static float[] logitsAfter(Model model, String text) {
    try (Context context = new Context(model, new ContextParams().nCtx(128).nThreads(1))) {
      context.eval(model.tokenize(text, true, false));
      return context.logits();
    }
  }

  private static void checkSameModel(Model byPath, Model byFd) {
    ModelInfo a = byPath.info();
    ModelInfo b = byFd.info();
    Check.equal(a.nParams(), b.nParams(), "parameters");
    Check.equal(a.weightBytes(), b.weightBytes(), "weight bytes");
    Check.equal(a.nVocab(), b.nVocab(), "vocabulary");
    String text = "Once upon a time, Lily";
    Check.equal(byPath.tokenize(text, true, false), byFd.tokenize(text, true, false), "tokens");
    float[] expected = logitsAfter(byPath, text);
    Check.isTrue(Arrays.equals(expected, logitsAfter(byFd, text)), "the logits, bit for bit");
    try (Context c1 = new Context(byPath, new ContextParams().nCtx(128));
         Context c2 = new Context(byFd, new ContextParams().nCtx(128))) {
      Check.equal(Texts.greedyByArgmax(byPath, c1, text, 24), Texts.greedyByArgmax(byFd, c2, text, 24),
          "greedy continuation");
    }
  }

  @Test
  public void embeddedModelMatchesTheFile() throws Exception {
    File file = container(0);
    Model loaded;
    try (RandomAccessFile in = new RandomAccessFile(file, "r")) {
      loaded = Model.load(in.getFD(), PREFIX, modelLength(), new ModelParams());
    }
    // peak keeps no reference to the descriptor: the model works on after it was closed.
    try (Model byFd = loaded; Model byPath = Model.load(Fixtures.stories())) {
      checkSameModel(byPath, byFd);
    }
  }

  @Test
  public void unalignedOffsetNeedsReading() throws Exception {
    File file = container(1);
    try (RandomAccessFile in = new RandomAccessFile(file, "r"); Model byPath = Model.load(Fixtures.stories())) {
      FileDescriptor fd = in.getFD();
      Check.throwsPeak(Status.INVALID_ARGUMENT, "multiple of 4",
          () -> Model.load(fd, PREFIX + 1, modelLength(), new ModelParams()));
      try (Model read = Model.load(fd, PREFIX + 1, modelLength(), new ModelParams().useMmap(false))) {
        checkSameModel(byPath, read);
      }
    }
  }

  @Test
  public void estimatesAndVocabularyFromADescriptor() throws Exception {
    File file = container(0);
    try (RandomAccessFile in = new RandomAccessFile(file, "r")) {
      ContextParams params = new ContextParams().nCtx(256);
      MemoryEstimate byPath = Model.estimateMemory(Fixtures.stories(), null, params);
      MemoryEstimate byFd = Model.estimateMemory(in.getFD(), PREFIX, modelLength(), null, params);
      Check.equal(byPath.totalBytes(), byFd.totalBytes(), "total");
      Check.equal(byPath.kvBytes(), byFd.kvBytes(), "KV cache");
      try (Model vocab = Model.loadVocab(in.getFD(), PREFIX, modelLength());
           Model full = Model.load(Fixtures.stories())) {
        String text = "Tom and Sue \uD83D\uDE42";
        Check.equal(full.tokenize(text, true, false), vocab.tokenize(text, true, false), "tokens");
      }
    }
  }

  @Test
  public void regionsThatCannotBeRead() throws Exception {
    File file = container(0);
    long length = modelLength();
    try (RandomAccessFile in = new RandomAccessFile(file, "r")) {
      FileDescriptor fd = in.getFD();
      long fileLength = file.length();
      Check.throwsPeak(Status.INVALID_ARGUMENT, "beyond the end of the file (" + fileLength + " bytes)",
          () -> Model.load(fd, PREFIX, fileLength, new ModelParams()));
      Check.throwsPeak(Status.INVALID_ARGUMENT, "offset is -1; it must be at least 0",
          () -> Model.load(fd, -1, length, new ModelParams()));
      Check.throwsPeak(Status.INVALID_ARGUMENT, "the region is empty", () -> Model.load(fd, PREFIX, 0, new ModelParams()));
      // The model's bytes from 4 bytes too late: not a GGUF there.
      Check.throwsPeak(Status.FORMAT, "not a GGUF file", () -> Model.load(fd, PREFIX + 4, length - 4, new ModelParams()));
    }
    Check.throwsPeak(Status.INVALID_ARGUMENT, "fd is -1, not an open file descriptor",
        () -> Model.load(new FileDescriptor(), 0, 100, new ModelParams()));
    Check.throwsPeak(Status.IO, "Bad file descriptor", () -> Model.load(1000000, 0, 100, new ModelParams()));
    Check.throwsA(NullPointerException.class, () -> Model.load((FileDescriptor) null, 0, 100, new ModelParams()));
  }
}
