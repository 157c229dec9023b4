package peak.tests;

import java.io.File;
import java.util.Arrays;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import peak.EmbedOptions;
import peak.Embedder;
import peak.EmbedderParams;
import peak.Model;
import peak.ModelInfo;
import peak.Pooling;
import peak.RerankOptions;
import peak.Status;

/**
 * Reranking on a random ms-marco-MiniLM-L6-v2 (a 6-layer bert cross-encoder with its classification
 * head) with BGE's WordPiece vocabulary, which `peak synth` writes: the scores are those `peak
 * rerank` prints for the same query and documents (read back from its JSON), their sigmoids are
 * 1 / (1 + e^-logit), and documents scored together are the documents scored alone.
 */
public final class RerankTests {
  // ASCII: `peak rerank` takes the query on its command line, whose encoding depends on the locale.
  private static final String QUERY = "what is the capital of france?";
  private static final String[] DOCUMENTS = {
    "Paris is the capital of France.",
    "bananas are yellow",
    "caf\u00e9 na\u00efve \uD83D\uDE42 \u4e2d\u6587",  // é, ï, a 4-byte character, CJK
    "The capital of Germany is Berlin, and the capital of France is Paris.",
  };

  @Test
  public void modelInfoTellsAReranker() {
    try (Model model = Model.load(Fixtures.msmarco())) {
      ModelInfo info = model.info();
      Check.equal("bert", info.architecture(), "architecture");
      Check.isTrue(info.isEncoder(), "a reranker is an encoder");
      Check.equal(Pooling.RANK, info.pooling(), "a reranker's pooling");
      Check.equal(4, Pooling.RANK.code(), "PEAK_POOLING_RANK");
    }
  }

  @Test
  public void scoresAreThosePeakRerankPrints() throws Exception {
    try (Model model = Model.load(Fixtures.msmarco());
         Embedder embedder = new Embedder(model, new EmbedderParams().nThreads(2))) {
      float[] logits = embedder.rerank(QUERY, DOCUMENTS);
      same(peakRerank(), logits, "logits");
      float[] sigmoids = embedder.rerank(new RerankOptions().sigmoid(true), QUERY, DOCUMENTS);
      same(peakRerank("--sigmoid"), sigmoids, "sigmoids");
      for (int i = 0; i < DOCUMENTS.length; ++i) {
        double expected = 1 / (1 + Math.exp(-(double) logits[i]));
        Check.isTrue(Math.abs(sigmoids[i] - expected) <= Math.ulp((float) expected),
            "document " + i + ": sigmoid " + sigmoids[i] + " of logit " + logits[i] + ", expected " + expected);
      }
      float lowest = logits[0];
      float highest = logits[0];
      for (float logit : logits) {
        lowest = Math.min(lowest, logit);
        highest = Math.max(highest, logit);
      }
      Check.isTrue(lowest < highest, "different documents score differently: " + Arrays.toString(logits));
    }
  }

  @Test
  public void documentsTogetherAreDocumentsAlone() {
    try (Model model = Model.load(Fixtures.msmarco()); Embedder embedder = new Embedder(model)) {
      float[] together = embedder.rerank(QUERY, DOCUMENTS);
      for (int i = 0; i < DOCUMENTS.length; ++i) {
        float[] alone = embedder.rerank(QUERY, DOCUMENTS[i]);
        Check.equal(1, alone.length, "scores of one document");
        close(together[i], alone[0], "document " + i + " alone");
      }
      float[] reversed = embedder.rerank(QUERY, DOCUMENTS[3], DOCUMENTS[2], DOCUMENTS[1], DOCUMENTS[0]);
      for (int i = 0; i < DOCUMENTS.length; ++i) close(together[i], reversed[3 - i], "document " + i + ", reversed");
      Check.equal(0, embedder.rerank(QUERY).length, "no documents");
    }
  }

  @Test
  public void badInputIsRefusedNamingTheDocument() {
    try (Model model = Model.load(Fixtures.msmarco());
         Embedder embedder = new Embedder(model, new EmbedderParams().nBatch(16))) {
      Check.contains(Check.throwsA(NullPointerException.class, () -> embedder.rerank((String) null, "a")).getMessage(),
          "query", "a null query");
      Check.contains(Check.throwsA(NullPointerException.class, () -> embedder.rerank("q", (String[]) null))
          .getMessage(), "documents", "null documents");
      Check.contains(Check.throwsA(NullPointerException.class, () -> embedder.rerank("q", "a", null)).getMessage(),
          "documents[1]", "a null document");
      Check.throwsA(NullPointerException.class, () -> embedder.rerank((RerankOptions) null, "q", "a"));
      Check.throwsPeak(Status.INVALID_ARGUMENT, "the query is empty", () -> embedder.rerank("", "a"));
      Check.throwsPeak(Status.INVALID_ARGUMENT, "document 1 is empty", () -> embedder.rerank("q", "a", ""));
      String[] documents = {"short", "a document of more tokens than this reranker's batch of sixteen holds"};
      // [CLS] query [SEP] document [SEP]
      int n = model.tokenize(QUERY, false, false).length + model.tokenize(documents[1], false, false).length + 3;
      Check.isTrue(n > 16 && model.tokenize(QUERY, false, false).length + 4 <= 16, "a pair too long, one short");
      Check.throwsPeak(Status.INVALID_ARGUMENT,
          "document 1 with the query makes " + n + " tokens with [CLS] and [SEP]s; at most 16 fit",
          () -> embedder.rerank(QUERY, documents));
      Check.contains(Check.throwsA(IllegalArgumentException.class, () -> embedder.embed("a")).getMessage(),
          "the model's own pooling (options.pooling MODEL) is RANK, a reranker's score: rerank(query, documents...)",
          "embed on a reranker");
      Check.contains(Check.throwsA(IllegalArgumentException.class, () -> embedder.embedIds(new int[] {1})).getMessage(),
          "is RANK, a reranker's score", "embedIds on a reranker");
      Check.throwsA(IllegalArgumentException.class,
          () -> embedder.embedTokens(new EmbedOptions().pooling(Pooling.MODEL), "a"));
      // Nothing was scored, and the embedder works as before.
      Check.equal(1, embedder.rerank(QUERY, documents[0]).length, "after the refusals");
    }
  }

  @Test
  public void anEmbeddingModelIsNotAReranker() {
    try (Model model = Model.load(Fixtures.bge()); Embedder embedder = new Embedder(model)) {
      Check.throwsPeak(Status.INVALID_ARGUMENT, "the model is not a reranker: its pooling is cls",
          () -> embedder.rerank(QUERY, DOCUMENTS));
      Check.equal(1, embedder.embed("a").length, "the embedder after the refusal");
    }
  }

  // ---- `peak rerank`, run on the same query and documents (these from a file)

  private static final Pattern RESULT = Pattern.compile("\\{\"index\": (\\d+), \"relevance_score\": ([^,]+),");

  /** The scores `peak rerank` prints, in the documents' order (it prints them best first). */
  private static float[] peakRerank(String... options) throws Exception {
    File dir = Fixtures.scratch("rerank");
    String[] args = {"rerank", "-m", Fixtures.msmarco(), "--query", QUERY, "-f",
        Texts.linesFile(dir, "documents.txt", DOCUMENTS).getPath(), "-t", "2"};
    String[] withOptions = Arrays.copyOf(args, args.length + options.length);
    System.arraycopy(options, 0, withOptions, args.length, options.length);
    String json = Texts.peakOutput(dir, withOptions);
    float[] scores = new float[DOCUMENTS.length];
    boolean[] seen = new boolean[DOCUMENTS.length];
    int results = 0;
    for (Matcher m = RESULT.matcher(json); m.find(); ++results) {
      int index = Integer.parseInt(m.group(1));
      Check.isTrue(index < DOCUMENTS.length && !seen[index], "index " + index + " once in peak rerank's JSON");
      seen[index] = true;
      scores[index] = Float.parseFloat(m.group(2));  // 10 significant digits: the float itself
    }
    Check.equal(DOCUMENTS.length, results, "results in peak rerank's JSON: " + json);
    return scores;
  }

  /** The same floats, bit for bit: the same C API call on the same query, documents and threads. */
  private static void same(float[] expected, float[] actual, String what) {
    Check.equal(expected.length, actual.length, what + ": scores");
    for (int i = 0; i < expected.length; ++i) {
      if (Float.compare(expected[i], actual[i]) != 0) {
        throw new AssertionError(what + ": document " + i + ": peak rerank printed " + expected[i]
            + ", the binding gave " + actual[i]);
      }
    }
  }

  private static void close(float expected, float actual, String what) {
    if (!(Math.abs(expected - actual) <= 1e-5 * Math.max(1, Math.abs(expected)))) {
      throw new AssertionError(what + ": expected " + expected + " but was " + actual);
    }
  }
}
