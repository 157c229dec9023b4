package peak.tests;

import java.io.File;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import peak.EmbedOptions;
import peak.Embedder;
import peak.EmbedderParams;
import peak.Model;
import peak.ModelInfo;
import peak.Pooling;
import peak.RerankOptions;
import peak.Status;

/**
 * Embeddings on a random bge-small-en-v1.5 (12 bert layers, 384 floats, [CLS] pooling) with BGE's
 * WordPiece vocabulary, which `peak synth` writes: the vectors are those `peak embed` prints for the
 * same texts (read back from its JSON), and they agree with each other as pooling defines them
 * (CLS is the first token's vector, LAST the last one's, MEAN their mean; normalised vectors have
 * length 1; texts embedded together are the texts embedded alone).
 */
public final class EmbeddingTests {
  private static final String[] TEXTS = {
    "what is the capital of france?",
    "Paris is the capital of France.",
    "bananas",
    "caf\u00e9 na\u00efve \uD83D\uDE42 \u4e2d\u6587",  // é, ï, a 4-byte character, CJK
  };
  private static final int N_EMBD = 384;

  @Test
  public void modelInfoTellsAnEncoderAndItsPooling() {
    try (Model bge = Model.load(Fixtures.bge()); Model stories = Model.load(Fixtures.stories())) {
      ModelInfo info = bge.info();
      Check.equal("bert", info.architecture(), "architecture");
      Check.isTrue(info.isEncoder(), "bge is an encoder");
      Check.equal(Pooling.CLS, info.pooling(), "bge's pooling");
      Check.equal(N_EMBD, info.nEmbd(), "n_embd");
      Check.isTrue(!stories.info().isEncoder(), "stories260K is a decoder");
      Check.equal(Pooling.NONE, stories.info().pooling(), "a decoder's pooling");
      try (Embedder embedder = new Embedder(bge)) {
        Check.equal(N_EMBD, embedder.nEmbd(), "the embedder's n_embd");
      }
    }
  }

  @Test
  public void parametersStartFromPeaksDefaults() {
    EmbedderParams params = new EmbedderParams();
    Check.equal(0, params.nBatch(), "n_batch: the model's training context");
    Check.equal(0, params.nThreads(), "n_threads: automatic");
    EmbedOptions options = new EmbedOptions();
    Check.equal(Pooling.MODEL, options.pooling(), "pooling");
    Check.isTrue(options.normalize(), "normalize");
    Check.equal(0, options.dimensions(), "dimensions: all");
    Check.isTrue(!options.truncate(), "truncate");
    Check.isTrue(!new RerankOptions().sigmoid(), "sigmoid");
    for (Pooling p : Pooling.values()) Check.equal(p, new EmbedOptions().pooling(p).pooling(), "pooling " + p);
  }

  @Test
  public void vectorsAreThosePeakEmbedPrints() throws Exception {
    try (Model model = Model.load(Fixtures.bge());
         Embedder embedder = new Embedder(model, new EmbedderParams().nThreads(2))) {
      same(peakEmbed(), embedder.embed(TEXTS), "the model's pooling, normalised");
      same(peakEmbed("--pooling", "mean", "--no-normalize"),
          embedder.embed(new EmbedOptions().pooling(Pooling.MEAN).normalize(false), TEXTS), "mean, not normalised");
      same(peakEmbed("--pooling", "last"), embedder.embed(new EmbedOptions().pooling(Pooling.LAST), TEXTS), "last");
      float[][][] tokens = embedder.embedTokens(TEXTS);
      float[][][] printed = peakEmbedTokens();
      Check.equal(printed.length, tokens.length, "texts with token vectors");
      for (int i = 0; i < TEXTS.length; ++i) {
        Check.equal(model.tokenize(TEXTS[i], true, false).length, tokens[i].length, "token vectors of text " + i);
        same(printed[i], tokens[i], "text " + i + "'s token vectors");
      }
    }
  }

  @Test
  public void dimensionsAreThosePeakEmbedPrints() throws Exception {
    try (Model model = Model.load(Fixtures.bge());
         Embedder embedder = new Embedder(model, new EmbedderParams().nThreads(2))) {
      float[][] cut = embedder.embed(new EmbedOptions().dimensions(128), TEXTS);
      same(peakEmbed("--dimensions", "128"), cut, 128, "dimensions 128");
      float[][][] cutTokens = embedder.embedTokens(new EmbedOptions().pooling(Pooling.NONE).dimensions(64), TEXTS);
      float[][][] printed = peakEmbedTokens("--dimensions", "64");
      Check.equal(printed.length, cutTokens.length, "texts with token vectors of 64 floats");
      for (int i = 0; i < TEXTS.length; ++i) same(printed[i], cutTokens[i], 64, "text " + i + "'s tokens, 64 floats");
      // Matryoshka: the whole vector's first floats, normalised after the cut (or not at all).
      float[][] whole = embedder.embed(raw(Pooling.CLS), TEXTS);
      float[][] rawCut = embedder.embed(raw(Pooling.CLS).dimensions(128), TEXTS);
      for (int i = 0; i < TEXTS.length; ++i) {
        float[] first = Arrays.copyOf(whole[i], 128);
        close(scaled(first), cut[i], 1e-5, "text " + i + ": the first 128 floats, normalised");
        close(first, rawCut[i], 1e-6, "text " + i + ": the first 128 floats, not normalised");
      }
      same(embedder.embed(TEXTS), embedder.embed(new EmbedOptions().dimensions(N_EMBD), TEXTS), "dimensions n_embd");
    }
  }

  @Test
  public void truncationIsPeakEmbedTruncate() throws Exception {
    final int nBatch = 6;
    try (Model model = Model.load(Fixtures.bge());
         Embedder embedder = new Embedder(model, new EmbedderParams().nBatch(nBatch).nThreads(2))) {
      float[][] cut = embedder.embed(new EmbedOptions().truncate(true), TEXTS);
      same(peakEmbed("--truncate", "-b", String.valueOf(nBatch)), cut, "truncated to 6 tokens");
      float[][][] cutTokens = embedder.embedTokens(new EmbedOptions().pooling(Pooling.NONE).truncate(true), TEXTS);
      float[][][] printed = peakEmbedTokens("--truncate", "-b", String.valueOf(nBatch));
      for (int i = 0; i < TEXTS.length; ++i) same(printed[i], cutTokens[i], "text " + i + "'s tokens, truncated");
      // What truncation means: a longer text's first nBatch - 1 tokens, then the [SEP] it ends with.
      int longer = 0;
      for (int i = 0; i < TEXTS.length; ++i) {
        int[] ids = model.tokenize(TEXTS[i], true, false);
        int[] kept = Arrays.copyOf(ids, Math.min(ids.length, nBatch));
        kept[kept.length - 1] = ids[ids.length - 1];
        if (ids.length > nBatch) ++longer;
        Check.equal(kept.length, cutTokens[i].length, "token vectors of truncated text " + i);
        close(embedder.embedIds(kept)[0], cut[i], 1e-5, "text " + i + " truncated, as its kept ids");
      }
      Check.isTrue(longer >= 2 && longer < TEXTS.length, "texts longer than 6 tokens, and one shorter: " + longer);
      int n = model.tokenize(TEXTS[0], true, false).length;
      Check.throwsPeak(Status.INVALID_ARGUMENT, "text 0 has " + n + " tokens, more than the embedder's n_batch of 6",
          () -> embedder.embed(TEXTS));
    }
  }

  @Test
  public void idsAreTheirTexts() {
    try (Model model = Model.load(Fixtures.bge()); Embedder embedder = new Embedder(model)) {
      int[][] ids = new int[TEXTS.length][];
      for (int i = 0; i < TEXTS.length; ++i) ids[i] = model.tokenize(TEXTS[i], true, false);
      same(embedder.embed(TEXTS), embedder.embedIds(ids), "the texts' ids, the model's pooling");
      EmbedOptions mean = raw(Pooling.MEAN).dimensions(100);
      same(embedder.embed(mean, TEXTS), embedder.embedIds(mean, ids), 100, "the texts' ids, mean of 100 floats");
      float[][][] tokens = embedder.embedTokens(TEXTS);
      float[][][] idTokens = embedder.embedIdsPerToken(ids);
      Check.equal(TEXTS.length, idTokens.length, "sequences with token vectors");
      for (int i = 0; i < TEXTS.length; ++i) same(tokens[i], idTokens[i], "text " + i + "'s ids, per token");
      Check.equal(0, embedder.embedIds().length, "no sequences");
      Check.equal(0, embedder.embedIdsPerToken().length, "no sequences, per token");
    }
  }

  @Test
  public void badIdsAndOptionsAreRefusedNamingThem() {
    try (Model model = Model.load(Fixtures.bge());
         Embedder embedder = new Embedder(model, new EmbedderParams().nBatch(12))) {
      int[] a = model.tokenize("a", true, false);
      long nVocab = model.info().nVocab();
      Check.contains(Check.throwsA(NullPointerException.class, () -> embedder.embedIds((int[][]) null)).getMessage(),
          "ids", "null ids");
      Check.contains(Check.throwsA(NullPointerException.class, () -> embedder.embedIds(a, null)).getMessage(),
          "ids[1]", "a null sequence");
      Check.throwsPeak(Status.INVALID_ARGUMENT, "sequence 1 is empty", () -> embedder.embedIds(a, new int[0]));
      Check.throwsPeak(Status.INVALID_ARGUMENT,
          "sequence 1: token id " + nVocab + " at index 1 is outside the vocabulary of " + nVocab,
          () -> embedder.embedIds(a, new int[] {a[0], (int) nVocab, a[0]}));
      Check.throwsPeak(Status.INVALID_ARGUMENT, "sequence 0: token id -1 at index 0",
          () -> embedder.embedIdsPerToken(new int[] {-1}));
      int[] thirteen = new int[13];
      Arrays.fill(thirteen, a[1]);
      Check.throwsPeak(Status.INVALID_ARGUMENT, "sequence 0 has 13 tokens, more than the embedder's n_batch of 12",
          () -> embedder.embedIds(thirteen));
      Check.equal(N_EMBD, embedder.embedIds(new EmbedOptions().truncate(true), thirteen)[0].length, "13 ids, truncated");
      Check.throwsPeak(Status.INVALID_ARGUMENT, "dimensions 385 is more than the model's n_embd of 384",
          () -> embedder.embed(new EmbedOptions().dimensions(N_EMBD + 1), "a"));
      Check.throwsPeak(Status.INVALID_ARGUMENT, "dimensions is -1; it must be at least 0",
          () -> embedder.embedIds(new EmbedOptions().dimensions(-1), a));
      Check.contains(Check.throwsA(IllegalArgumentException.class,
          () -> embedder.embedIds(new EmbedOptions().pooling(Pooling.NONE), a)).getMessage(),
          "options.pooling is NONE, a vector per token: embedIdsPerToken(...) gives those; embedIds(...) needs MEAN",
          "embedIds without pooling");
      Check.contains(Check.throwsA(IllegalArgumentException.class,
          () -> embedder.embedIdsPerToken(new EmbedOptions(), a)).getMessage(),
          "the model's own pooling (options.pooling MODEL) is CLS, one vector per text: embedIds(...) gives those",
          "embedIdsPerToken with pooling");
      Check.contains(Check.throwsA(IllegalArgumentException.class,
          () -> embedder.embed(new EmbedOptions().pooling(Pooling.RANK), "a")).getMessage(),
          "options.pooling is RANK, a reranker's score: rerank(query, documents...) gives those", "embed with RANK");
      Check.throwsA(NullPointerException.class, () -> embedder.embedIds((EmbedOptions) null, a));
      Check.equal(2, embedder.embedIds(a, a).length, "after the refusals");
    }
  }

  @Test
  public void poolingsAgreeWithTheTokenVectors() {
    try (Model model = Model.load(Fixtures.bge()); Embedder embedder = new Embedder(model)) {
      float[][][] tokens = embedder.embedTokens(raw(Pooling.NONE), TEXTS);
      float[][] cls = embedder.embed(raw(Pooling.CLS), TEXTS);
      float[][] last = embedder.embed(raw(Pooling.LAST), TEXTS);
      float[][] mean = embedder.embed(raw(Pooling.MEAN), TEXTS);
      float[][] normalised = embedder.embed(TEXTS);  // the model's own: CLS
      for (int i = 0; i < TEXTS.length; ++i) {
        float[][] rows = tokens[i];
        Check.isTrue(rows.length >= 3, "[CLS], a token, [SEP] in text " + i);
        close(rows[0], cls[i], 1e-5, "CLS of text " + i + " is its first token's vector");
        close(rows[rows.length - 1], last[i], 1e-5, "LAST of text " + i + " is its last token's vector");
        double[] sum = new double[N_EMBD];
        for (float[] row : rows) {
          for (int j = 0; j < N_EMBD; ++j) sum[j] += row[j];
        }
        float[] average = new float[N_EMBD];
        for (int j = 0; j < N_EMBD; ++j) average[j] = (float) (sum[j] / rows.length);
        close(average, mean[i], 1e-4, "MEAN of text " + i + " is the mean of its tokens' vectors");
        Check.isTrue(Math.abs(length(cls[i]) - 1) > 1e-3, "the raw CLS vector of text " + i + " is not of length 1");
        close(scaled(cls[i]), normalised[i], 1e-5, "normalised CLS of text " + i);
        Check.isTrue(Math.abs(length(normalised[i]) - 1) < 1e-5, "length of normalised text " + i);
      }
      for (float[] row : embedder.embedTokens(TEXTS)[0]) {
        Check.isTrue(Math.abs(length(row) - 1) < 1e-5, "a normalised token vector's length");
      }
    }
  }

  @Test
  public void textsTogetherAreTextsAlone() {
    try (Model model = Model.load(Fixtures.bge()); Embedder embedder = new Embedder(model)) {
      float[][] together = embedder.embed(TEXTS);
      for (int i = 0; i < TEXTS.length; ++i) {
        close(embedder.embed(TEXTS[i])[0], together[i], 1e-5, "text " + i + " alone");
      }
      float[][] twice = embedder.embed(TEXTS[2], TEXTS[0], TEXTS[2]);
      close(twice[0], twice[2], 1e-6, "one text twice in a batch");
      close(together[0], twice[1], 1e-5, "text 0 between others");
      Check.isTrue(!Arrays.equals(together[0], together[1]), "different texts give different vectors");
      Check.equal(0, embedder.embed().length, "no texts");
      Check.equal(0, embedder.embedTokens().length, "no texts, per token");
    }
  }

  @Test
  public void badInputIsRefusedNamingTheText() {
    try (Model model = Model.load(Fixtures.bge());
         Embedder embedder = new Embedder(model, new EmbedderParams().nBatch(12))) {
      Check.contains(Check.throwsA(NullPointerException.class, () -> embedder.embed((String[]) null)).getMessage(),
          "texts", "null texts");
      Check.contains(Check.throwsA(NullPointerException.class, () -> embedder.embed("a", "b", null)).getMessage(),
          "texts[2]", "a null text");
      Check.throwsPeak(Status.INVALID_ARGUMENT, "text 1 is empty", () -> embedder.embed("a", ""));
      Check.throwsPeak(Status.INVALID_ARGUMENT, "text 1 is empty", () -> embedder.embedTokens("a", ""));
      String[] tooLong = {"short", "a text of more than twelve tokens, which is what this embedder's batch holds"};
      int n = model.tokenize(tooLong[1], true, false).length;
      Check.isTrue(n > 12, "the long text's tokens");
      Check.throwsPeak(Status.INVALID_ARGUMENT, "text 1 has " + n + " tokens, more than the embedder's n_batch of 12",
          () -> embedder.embed(tooLong));
      Check.contains(Check.throwsA(IllegalArgumentException.class,
          () -> embedder.embed(new EmbedOptions().pooling(Pooling.NONE), "a")).getMessage(),
          "options.pooling is NONE, a vector per token: embedTokens(...)", "embed without pooling");
      Check.contains(Check.throwsA(IllegalArgumentException.class,
          () -> embedder.embedTokens(new EmbedOptions(), "a")).getMessage(),
          "the model's own pooling (options.pooling MODEL) is CLS, one vector per text", "embedTokens with pooling");
      Check.throwsA(NullPointerException.class, () -> embedder.embed((EmbedOptions) null, "a"));
      // Nothing was embedded, and the embedder works as before.
      Check.equal(2, embedder.embed("a", "b").length, "after the refusals");
      Check.throwsPeak(Status.INVALID_ARGUMENT, "n_batch is -1; it must be at least 0",
          () -> new Embedder(model, new EmbedderParams().nBatch(-1)));
    }
  }

  @Test
  public void chatModelsAndClosedEmbeddersAreRefused() {
    try (Model stories = Model.load(Fixtures.stories())) {
      Check.throwsPeak(Status.INVALID_ARGUMENT, "a llama model is a decoder, not an encoder", () -> new Embedder(stories));
    }  // the refused embedder holds nothing: the model closes
    try (Model vocab = Model.loadVocab(Fixtures.bge())) {
      Check.throwsPeak(Status.INVALID_ARGUMENT, "a tokenizer without weights", () -> new Embedder(vocab));
    }
    Model model = Model.load(Fixtures.bge());
    Embedder embedder = new Embedder(model);
    Check.contains(Check.throwsA(IllegalStateException.class, model::close).getMessage(), "1 open",
        "closing the model under an embedder");
    embedder.close();
    embedder.close();  // again: nothing
    Check.contains(Check.throwsA(IllegalStateException.class, () -> embedder.embed("a")).getMessage(),
        "Embedder is closed", "a closed embedder");
    Check.throwsA(IllegalStateException.class, embedder::nEmbd);
    model.close();
    Check.throwsA(IllegalStateException.class, () -> new Embedder(model));
  }

  @Test
  public void callsFromSeveralThreadsTakeTurns() throws Exception {
    try (Model model = Model.load(Fixtures.bge());
         Embedder embedder = new Embedder(model, new EmbedderParams().nThreads(1))) {
      float[][] expected = embedder.embed(TEXTS);
      AtomicReference<Throwable> failure = new AtomicReference<>();
      List<Thread> threads = new ArrayList<>();
      for (int t = 0; t < 3; ++t) {
        Thread thread = new Thread(() -> {
          try {
            for (int k = 0; k < 4; ++k) {
              float[][] got = embedder.embed(TEXTS);
              for (int i = 0; i < TEXTS.length; ++i) close(expected[i], got[i], 1e-6, "text " + i + " on a thread");
            }
          } catch (Throwable e) {
            failure.compareAndSet(null, e);
          }
        });
        threads.add(thread);
        thread.start();
      }
      for (Thread thread : threads) thread.join();
      if (failure.get() != null) throw new AssertionError("a thread failed", failure.get());
    }
  }

  // ---- `peak embed`, run on the same texts (from a file: the command line's encoding depends on the locale)

  private static float[][] peakEmbed(String... options) throws Exception {
    List<?> texts = (List<?>) runPeakEmbed(options);
    float[][] vectors = new float[texts.size()][];
    for (int i = 0; i < vectors.length; ++i) vectors[i] = floats(texts.get(i));
    return vectors;
  }

  private static float[][][] peakEmbedTokens(String... options) throws Exception {
    List<String> withNone = new ArrayList<>(Arrays.asList("--pooling", "none"));
    withNone.addAll(Arrays.asList(options));
    List<?> texts = (List<?>) runPeakEmbed(withNone.toArray(new String[0]));
    float[][][] vectors = new float[texts.size()][][];
    for (int i = 0; i < vectors.length; ++i) {
      List<?> rows = (List<?>) texts.get(i);
      vectors[i] = new float[rows.size()][];
      for (int t = 0; t < rows.size(); ++t) vectors[i][t] = floats(rows.get(t));
    }
    return vectors;
  }

  private static Object runPeakEmbed(String... options) throws Exception {
    File dir = Fixtures.scratch("embedding");
    List<String> args = new ArrayList<>(Arrays.asList("embed", "-m", Fixtures.bge(), "-f",
        Texts.linesFile(dir, "texts.txt", TEXTS).getPath(), "-t", "2"));
    args.addAll(Arrays.asList(options));
    return new NumberArrays(Texts.peakOutput(dir, args.toArray(new String[0]))).parse();
  }

  private static float[] floats(Object array) {
    List<?> numbers = (List<?>) array;
    float[] out = new float[numbers.size()];
    for (int j = 0; j < out.length; ++j) out[j] = (Float) numbers.get(j);
    return out;
  }

  /** JSON nested arrays of numbers, as `peak embed` prints them: lists of lists ... of Floats. */
  private static final class NumberArrays {
    private final String text;
    private int at;

    NumberArrays(String text) {
      this.text = text;
    }

    Object parse() {
      Object value = value();
      skipSpace();
      Check.equal(text.length(), at, "the end of peak embed's JSON");
      return value;
    }

    private Object value() {
      skipSpace();
      if (text.charAt(at) != '[') {
        int start = at;
        while (at < text.length() && "+-.0123456789eE".indexOf(text.charAt(at)) >= 0) ++at;
        return Float.parseFloat(text.substring(start, at));  // 9 significant digits: the float itself
      }
      ++at;
      List<Object> items = new ArrayList<>();
      skipSpace();
      if (text.charAt(at) == ']') {
        ++at;
        return items;
      }
      while (true) {
        items.add(value());
        skipSpace();
        char c = text.charAt(at++);
        if (c == ']') return items;
        Check.equal(",", String.valueOf(c), "a separator in peak embed's JSON at " + (at - 1));
      }
    }

    private void skipSpace() {
      while (at < text.length() && Character.isWhitespace(text.charAt(at))) ++at;
    }
  }

  // ---- vectors

  private static EmbedOptions raw(Pooling pooling) {
    return new EmbedOptions().pooling(pooling).normalize(false);
  }

  /** The same floats, bit for bit: the same C API calls on the same texts and threads. */
  private static void same(float[][] expected, float[][] actual, String what) {
    same(expected, actual, N_EMBD, what);
  }

  /** The same, for vectors of {@code dimensions} floats. */
  private static void same(float[][] expected, float[][] actual, int dimensions, String what) {
    Check.equal(expected.length, actual.length, what + ": vectors");
    for (int i = 0; i < expected.length; ++i) {
      Check.equal(dimensions, expected[i].length, what + ": floats of expected vector " + i);
      Check.equal(dimensions, actual[i].length, what + ": floats of vector " + i);
      if (!Arrays.equals(expected[i], actual[i])) {
        int j = 0;
        while (Float.compare(expected[i][j], actual[i][j]) == 0) ++j;
        throw new AssertionError(what + ": vector " + i + " float " + j + ": peak embed printed " + expected[i][j]
            + ", the binding gave " + actual[i][j]);
      }
    }
  }

  private static void close(float[] expected, float[] actual, double tolerance, String what) {
    Check.equal(expected.length, actual.length, what + ": floats");
    for (int j = 0; j < expected.length; ++j) {
      if (!(Math.abs(expected[j] - actual[j]) <= tolerance * Math.max(1, Math.abs(expected[j])))) {
        throw new AssertionError(what + ": float " + j + ": expected " + expected[j] + " but was " + actual[j]);
      }
    }
  }

  private static double length(float[] v) {
    double sum = 0;
    for (float x : v) sum += (double) x * x;
    return Math.sqrt(sum);
  }

  private static float[] scaled(float[] v) {
    double n = length(v);
    float[] out = new float[v.length];
    for (int j = 0; j < v.length; ++j) out[j] = (float) (v[j] / n);
    return out;
  }
}
