package peak.tests;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import peak.CancellationToken;
import peak.Context;
import peak.DraftModel;
import peak.ContextParams;
import peak.GenerateOptions;
import peak.GenerateResult;
import peak.MemoryEstimate;
import peak.Model;
import peak.ModelInfo;
import peak.Sampler;
import peak.SamplerParams;
import peak.Session;
import peak.SessionParams;
import peak.StopReason;

/** Models, contexts and streamed generation on the real stories260K model. */
public final class GenerationTests {
  private static final String PROMPT = "Once upon a time";
  private static final int N_TOKENS = 48;

  /** Streams a greedy completion, as `peak run --temp 0` writes it (the prompt not echoed). */
  private static String streamGreedy(Model model, String prompt, int nTokens) {
    try (Context context = new Context(model, new ContextParams().nCtx(512).nThreads(2));
         Sampler sampler = new Sampler(model, SamplerParams.greedy())) {
      StringBuilder text = new StringBuilder();
      GenerateResult r = context.generate(sampler, prompt,
          new GenerateOptions().maxTokens(nTokens).parseSpecial(false), text::append);
      Check.isTrue(r.nPromptTokens() > 0, "prompt tokens counted");
      return text.toString();
    }
  }

  @Test
  public void modelInfoIsThatOfTheFile() {
    // stories260K as `peak inspect` lists it: 48 tensors, 292800 parameters, blk.0..4,
    // ffn_down [172, 64], output [64, 512].
    try (Model model = Model.load(Fixtures.stories())) {
      ModelInfo info = model.info();
      Check.equal("llama", info.architecture(), "architecture");
      Check.equal(292800, info.nParams(), "parameters");
      Check.equal(292800L * 4, info.weightBytes(), "F32 weight bytes");
      Check.equal(512, info.nVocab(), "vocabulary");
      Check.equal(5, info.nLayer(), "layers");
      Check.equal(64, info.nEmbd(), "embedding");
      Check.equal(172, info.nFf(), "feed-forward");
      Check.equal(1, info.bosToken(), "BOS");
      Check.equal(2, info.eosToken(), "EOS");
    }
  }

  @Test
  public void modelNameKeepsWhatFollowsANul() {
    String path = Fixtures.oddNameModel();
    if (path == null) return;
    try (Model model = Model.load(path)) {
      Check.equal("Stories\0\u001b[2J260K", model.info().name(), "general.name");
    }
  }

  @Test
  public void greedyStreamEqualsPeakRun() throws Exception {
    String cli = Fixtures.cli();
    if (cli == null) {
      System.out.println("(no peak tool in this build: compared with the argmax decoding only)");
      return;
    }
    File stderr = new File(Fixtures.scratch("generation"), "peak-run.stderr");
    Process run = new ProcessBuilder(cli, "run", "-m", Fixtures.stories(), "-p", PROMPT, "-n",
        Integer.toString(N_TOKENS), "--temp", "0", "-t", "2", "-c", "512", "--no-echo")
        .redirectError(stderr)
        .start();
    run.getOutputStream().close();
    String stdout = new String(Texts.readAll(run.getInputStream()), StandardCharsets.UTF_8);
    Check.equal(0, run.waitFor(), "peak run's exit status");

    try (Model model = Model.load(Fixtures.stories())) {
      String streamed = streamGreedy(model, PROMPT, N_TOKENS);
      Check.isTrue(streamed.length() > 20, "a completion was streamed: <" + streamed + ">");
      // peak run ends the completion's line with a newline of its own.
      String expected = streamed.isEmpty() || streamed.endsWith("\n") ? streamed : streamed + "\n";
      Check.equal(stdout, expected, "peak run --temp 0 against the Java stream");
    }
  }

  @Test
  public void greedyFromBosMatchesTheReferenceIds() throws Exception {
    // ../shared/models/stories260K.greedy-ids.txt: the 300 ids a float64 reference implementation
    // decodes greedily after BOS (SOURCES.md); an empty prompt on an empty context is BOS alone.
    String[] fields = new String(Files.readAllBytes(
        new File(new File(Fixtures.stories()).getParentFile(), "stories260K.greedy-ids.txt").toPath()),
        StandardCharsets.UTF_8).trim().split("\\s+");
    Check.equal(300, fields.length, "reference ids");
    try (Model model = Model.load(Fixtures.stories());
         Context context = new Context(model, new ContextParams().nCtx(512));
         Sampler sampler = new Sampler(model, SamplerParams.greedy())) {
      ByteArrayOutputStream expected = new ByteArrayOutputStream();
      for (String field : fields) {
        byte[] piece = model.tokenPiece(Integer.parseInt(field), false);
        expected.write(piece, 0, piece.length);
      }
      StringBuilder streamed = new StringBuilder();
      GenerateResult r = context.generate(sampler, "", new GenerateOptions().maxTokens(300), streamed::append);
      Check.equal(300, r.nGeneratedTokens(), "tokens generated");
      Check.equal(new String(expected.toByteArray(), StandardCharsets.UTF_8), streamed.toString(),
          "the greedy text against the reference ids'");
      // The stream begins with the first piece's SentencePiece space.
      Check.isTrue(streamed.toString().startsWith(" Once upon a time, there was a little girl named Lily."),
          "llama2.c's documented sample: " + streamed);
    }
  }

  /**
   * 300 greedy tokens from nothing on a context handing out 5 rows of logits, with `drafting`'s
   * drafts: the text must be the one written without them. Returns the drafted generation's result.
   */
  private static GenerateResult draftedLikePlain(Model model, GenerateOptions drafting, String what) {
    try (Context plain = new Context(model, new ContextParams().nCtx(512));
         Context context = new Context(model, new ContextParams().nCtx(512).maxLogitRows(5));
         Sampler first = new Sampler(model, SamplerParams.greedy());
         Sampler second = new Sampler(model, SamplerParams.greedy())) {
      StringBuilder expected = new StringBuilder();
      StringBuilder drafted = new StringBuilder();
      plain.generate(first, "", new GenerateOptions().maxTokens(300), expected::append);
      GenerateResult r = context.generate(second, "", drafting.maxTokens(300), drafted::append);
      Check.equal(expected.toString(), drafted.toString(), what);
      Check.isTrue(r.nAcceptedTokens() > 0 && r.nAcceptedTokens() <= r.nDraftedTokens(),
          "drafted " + r.nDraftedTokens() + ", accepted " + r.nAcceptedTokens());
      return r;
    }
  }

  @Test
  public void promptLookupWritesTheSameText() {
    // Drafts from the text so far, verified in one pass: the text is the one written without them.
    try (Model model = Model.load(Fixtures.stories())) {
      draftedLikePlain(model, new GenerateOptions().lookupNgram(3).draftMax(4), "the text with prompt lookup");
    }
  }

  @Test
  public void aDraftModelWritesTheSameGreedyText() {
    // The target drafting for itself: the same vocabulary; greedy, the text written without drafts.
    try (Model model = Model.load(Fixtures.stories());
         Context context = new Context(model, new ContextParams().nCtx(512).maxLogitRows(5));
         Sampler sampler = new Sampler(model, SamplerParams.greedy())) {
      DraftModel closed;
      try (DraftModel draft = new DraftModel(model, new ContextParams().nCtx(512))) {
        draftedLikePlain(model, new GenerateOptions().draftModel(draft).draftPMin(0.0f), "the text with a draft model");
        closed = draft;
      }
      Check.contains(Check.throwsA(IllegalStateException.class,
          () -> context.generate(sampler, "", new GenerateOptions().draftModel(closed), s -> {})).getMessage(),
          "closed", "a closed draft model");
    }
  }

  @Test
  public void promptLookupInASessionWritesTheSameAnswers() {
    String story = "Lily saw a big red ball in the park. She ran to the ball and kicked it.";
    String[] answers = new String[2];
    long accepted = 0;
    try (Model model = Model.load(Fixtures.stories())) {
      for (int lookup = 0; lookup < 2; ++lookup) {
        SessionParams params = new SessionParams().sampler(SamplerParams.greedy()).maxLogitRows(5);
        StringBuilder text = new StringBuilder();
        try (Session session = new Session(model, params)) {
          GenerateOptions options = new GenerateOptions().maxTokens(40).lookupNgram(lookup * 3);
          session.chat(story + " " + story, options, text::append);
          accepted += session.chat(story, options, text::append).nAcceptedTokens();
        }
        answers[lookup] = text.toString();
      }
    }
    Check.equal(answers[0], answers[1], "the answers with prompt lookup");
    Check.isTrue(accepted > 0, "drafts accepted in the second turn: " + accepted);
  }

  @Test
  public void greedyStreamEqualsArgmaxOfLogits() {
    try (Model model = Model.load(Fixtures.stories());
         Context context = new Context(model, new ContextParams().nCtx(512))) {
      String reference = Texts.greedyByArgmax(model, context, PROMPT, N_TOKENS);
      Check.isTrue(reference.length() > 20, "the reference decoded text");
      Check.equal(reference, streamGreedy(model, PROMPT, N_TOKENS), "greedy stream against argmax of the logits");
    }
  }

  @Test
  public void callbackExceptionStopsAndIsRethrown() {
    try (Model model = Model.load(Fixtures.stories());
         Context context = new Context(model, new ContextParams().nCtx(512));
         Sampler sampler = new Sampler(model, SamplerParams.greedy())) {
      RuntimeException boom = new IllegalStateException("enough");
      AtomicInteger pieces = new AtomicInteger();
      RuntimeException thrown = Check.throwsA(IllegalStateException.class,
          () -> context.generate(sampler, PROMPT, new GenerateOptions().maxTokens(40), text -> {
            if (pieces.incrementAndGet() == 3) throw boom;
          }));
      Check.isTrue(thrown == boom, "the callback's own exception is rethrown");
      Check.equal(3, pieces.get(), "no piece after the exception");
      // The context goes on: the prompt (BOS + 4 tokens) and the 3 tokens streamed are in it,
      // the third not yet evaluated; a continuation works.
      Check.isTrue(context.nUsed() >= 7 && context.nUsed() <= 8, "tokens kept: " + context.nUsed());
      StringBuilder more = new StringBuilder();
      context.generate(sampler, "", new GenerateOptions().maxTokens(4), more::append);
      Check.isTrue(more.length() > 0, "generation continues after a callback's exception");
    }
  }

  @Test
  public void cancelInsideTheCallbackStopsAtTheNextToken() {
    try (Model model = Model.load(Fixtures.stories());
         Context context = new Context(model, new ContextParams().nCtx(512));
         Sampler sampler = new Sampler(model, SamplerParams.greedy())) {
      CancellationToken token = new CancellationToken();
      List<String> pieces = new ArrayList<>();
      GenerateResult r = context.generate(sampler, PROMPT, new GenerateOptions().maxTokens(40).cancellation(token),
          text -> {
            pieces.add(text);
            if (pieces.size() == 5) token.cancel();
          });
      Check.equal(StopReason.ABORTED, r.stopReason(), "stop reason");
      Check.equal(5, pieces.size(), "pieces");
      Check.equal(5, r.nGeneratedTokens(), "generated tokens");
    }
  }

  @Test
  public void longStreamHoldsNoReferencePerPiece() {
    // Every piece is a Java string made in one native frame; -Xcheck:jni reports a frame that
    // keeps more local references than it reserved, which fails the test (CMakeLists.txt).
    try (Model model = Model.load(Fixtures.stories());
         Context context = new Context(model, new ContextParams().nCtx(512));
         Sampler sampler = new Sampler(model, new SamplerParams().seed(42))) {
      AtomicInteger pieces = new AtomicInteger();
      GenerateResult r = context.generate(sampler, PROMPT, new GenerateOptions().maxTokens(400),
          text -> pieces.incrementAndGet());
      Check.isTrue(r.nGeneratedTokens() >= 100, "tokens generated: " + r.nGeneratedTokens());
      Check.isTrue(pieces.get() >= 100, "pieces: " + pieces.get());
    }
  }

  @Test
  public void oneModelServesContextsOnSeveralThreads() throws Exception {
    try (Model model = Model.load(Fixtures.stories())) {
      String expected = streamGreedy(model, PROMPT, 32);
      String[] results = new String[3];
      Throwable[] errors = new Throwable[3];
      Thread[] threads = new Thread[3];
      for (int i = 0; i < threads.length; ++i) {
        final int slot = i;
        threads[i] = new Thread(() -> {
          try {
            results[slot] = streamGreedy(model, PROMPT, 32);
          } catch (Throwable t) {
            errors[slot] = t;
          }
        });
        threads[i].start();
      }
      for (int i = 0; i < threads.length; ++i) {
        threads[i].join();
        if (errors[i] != null) throw new AssertionError("thread " + i, errors[i]);
        Check.equal(expected, results[i], "thread " + i + "'s completion");
      }
    }
  }

  @Test
  public void tokensRoundTripThroughUtf8() {
    // Byte-fallback tokens spell characters the 512-token vocabulary lacks, 4-byte ones included.
    String text = "Lily saw a caf\u00e9, \u65e5\u672c and a smile \uD83D\uDE42 \uD834\uDD1E.";
    try (Model model = Model.load(Fixtures.stories())) {
      int[] tokens = model.tokenize(text, false, false);
      Check.isTrue(tokens.length > 10, "tokens");
      java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
      for (int t : tokens) {
        byte[] piece = model.tokenPiece(t, false);
        bytes.write(piece, 0, piece.length);
      }
      String pieces = new String(bytes.toByteArray(), StandardCharsets.UTF_8);
      // SentencePiece writes a space before the text (add_space_prefix); detokenize takes it
      // away again, as llama.cpp's does.
      Check.equal(" " + text, pieces, "the pieces' bytes");
      Check.equal(text, model.detokenize(tokens, false, false), "detokenize");
    }
  }

  @Test
  public void memoryEstimateAddsUp() {
    ContextParams params = new ContextParams().nCtx(256);
    MemoryEstimate e = Model.estimateMemory(Fixtures.stories(), null, params);
    try (Model model = Model.load(Fixtures.stories())) {
      ModelInfo info = model.info();
      Check.equal(info.weightBytes(), e.weightBytes(), "weights (mapped: the tensor data)");
      Check.equal(0, e.repackedBytes(), "F32 has no repacked layout");
      // K and V, F16 (2 bytes): one row of n_head_kv x head_dim per cell and layer; and an
      // int32 position per cell.
      long kv = 2L * 2 * info.nLayer() * 256 * info.nHeadKv() * info.headDim() + 4L * 256;
      Check.equal(kv, e.kvBytes(), "KV cache bytes");
      Check.equal(e.weightBytes() + e.repackedBytes() + e.kvBytes() + e.computeBytes(), e.totalBytes(), "total");
      Check.equal(e.kvBytes() + e.computeBytes(), Context.memoryNeeded(model, params), "Context.memoryNeeded");
    }
  }
}
