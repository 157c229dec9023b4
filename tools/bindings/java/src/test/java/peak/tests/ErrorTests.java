package peak.tests;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.StandardCopyOption;
import peak.Context;
import peak.ContextParams;
import peak.Model;
import peak.Peak;
import peak.PeakException;
import peak.Sampler;
import peak.SamplerParams;
import peak.Session;
import peak.SessionParams;
import peak.Status;

/** Every failure is an exception: peak's status and message, or Java's own for misuse. */
public final class ErrorTests {
  @Test
  public void statusesMirrorTheCApi() {
    for (Status s : Status.values()) {
      String expected = s == Status.OK ? "PEAK_OK" : "PEAK_ERR_" + s.name();
      Check.equal(expected, Peak.statusName(s), "C name of " + s);
      Check.equal(s, Status.of(s.code()), "Status.of(" + s.code() + ")");
    }
    Check.isTrue(Peak.version().matches("[0-9]+\\.[0-9]+\\.[0-9]+"), "version " + Peak.version());
    Check.isTrue(Peak.defaultThreads() >= 1, "default threads");
    Check.contains(Peak.systemInfo(), "cpu paths:", "system info");
  }

  @Test
  public void modelFilesThatCannotBeLoaded() {
    Check.throwsPeak(Status.IO, "/nonexistent-dir/m.gguf", () -> Model.load("/nonexistent-dir/m.gguf"));
    String notGguf = new File(new File(Fixtures.stories()).getParentFile(), "SOURCES.md").getPath();
    Check.throwsPeak(Status.FORMAT, "not a GGUF file", () -> Model.load(notGguf));
    Check.throwsA(NullPointerException.class, () -> Model.load((String) null));
    Check.throwsPeak(Status.INVALID_ARGUMENT, "path holds a NUL character", () -> Model.load("m\u0000.gguf"));
  }

  @Test
  public void pathsAndMessagesKeepEveryCharacter() throws Exception {
    // Modified UTF-8 spells U+1F642 in 6 bytes and U+0000 in 2: a path passed so would name
    // another file, and a message read so would not decode.
    String dir = "/nonexistent-\uD83D\uDE42-caf\u00e9";
    PeakException e = Check.throwsPeak(Status.IO, dir + "/m.gguf", () -> Model.load(dir + "/m.gguf"));
    Check.contains(e.toString(), "PeakException(IO)", "toString");
    File copy = new File(Fixtures.scratch("errors"), "mod\u00e8le \uD83D\uDE42.gguf");
    Files.copy(new File(Fixtures.stories()).toPath(), copy.toPath(), StandardCopyOption.REPLACE_EXISTING);
    try (Model model = Model.load(copy.getPath())) {
      Check.equal(512, model.info().nVocab(), "the model under a name with a 4-byte character");
    }
  }

  @Test
  public void parametersPeakRefuses() {
    try (Model model = Model.load(Fixtures.stories())) {
      Check.throwsPeak(Status.INVALID_ARGUMENT, "top_p", () -> new Sampler(model, new SamplerParams().topP(3)));
      Check.throwsPeak(Status.INVALID_ARGUMENT, "top_k is -1; it must be at least 0",
          () -> new Sampler(model, new SamplerParams().topK(-1)));
      Check.throwsPeak(Status.INVALID_ARGUMENT, "n_ctx must be at least 1", () -> new Context(model, new ContextParams().nCtx(0)));
      Check.throwsPeak(Status.INVALID_ARGUMENT, "n_batch is -5; it must be at least 0",
          () -> new Context(model, new ContextParams().nBatch(-5)));
      Check.throwsPeak(Status.INVALID_ARGUMENT, "recent_max is 8; it must be at least 32",
          () -> new Session(model, new SessionParams().recentMax(8)));
      Check.throwsPeak(Status.INVALID_ARGUMENT, "klingon",
          () -> new Session(model, new SessionParams().chatTemplate("klingon")));
      Check.throwsPeak(Status.INVALID_ARGUMENT, "system_prompt holds a NUL character",
          () -> new Session(model, new SessionParams().systemPrompt("a\u0000b")));
      Check.throwsA(NullPointerException.class, () -> new Context(model, null));
      // Refused creations hold nothing: the model closes.
    }
  }

  @Test
  public void callsPeakRefuses() {
    try (Model model = Model.load(Fixtures.stories());
         Context context = new Context(model, new ContextParams().nCtx(8));
         Session session = new Session(model, new SessionParams().chatTemplate("raw").nThreads(1))) {
      Check.throwsPeak(Status.CONTEXT_FULL, "10 tokens cannot fit in a context of 8", () -> context.eval(new int[10]));
      Check.equal(0, context.nUsed(), "nothing evaluated");
      Check.throwsPeak(Status.INVALID_ARGUMENT, "token id 100000 at index 0 is outside the vocabulary of 512",
          () -> context.eval(new int[] {100000}));
      Check.throwsPeak(Status.FORMAT, "not a peak session file", () -> session.restore(Fixtures.stories()));
      Check.throwsPeak(Status.IO, "cannot write '/nonexistent-dir/s.pkss'", () -> session.save("/nonexistent-dir/s.pkss", false));
      Check.throwsPeak(Status.INVALID_ARGUMENT, "index 5 of a conversation of 0 messages", () -> session.message(5));
      Check.throwsPeak(Status.INVALID_ARGUMENT, "index is -1; it must be at least 0", () -> session.message(-1));
      Check.equal(0, session.messageCount(), "the session is as it was");
    }
  }

  @Test
  public void vocabularyOnlyModelsRefuseContexts() {
    try (Model vocab = Model.loadVocab(Fixtures.stories())) {
      Check.equal(512, vocab.info().nVocab(), "vocabulary");
      Check.isTrue(vocab.tokenize("Once upon a time", true, false).length == 5, "BOS and 4 tokens");
      Check.throwsPeak(Status.INVALID_ARGUMENT, "a tokenizer without weights", () -> new Context(vocab));
    }
  }

  @Test
  public void closedHandlesAndTheirOrder() {
    Model model = Model.load(Fixtures.stories());
    Context context = new Context(model);
    Session session = new Session(model, new SessionParams().chatTemplate("raw").nThreads(1));
    IllegalStateException open = Check.throwsA(IllegalStateException.class, model::close);
    Check.contains(open.getMessage(), "2 open", "model.close() with dependents");
    context.close();
    context.close();  // again: nothing
    Check.contains(Check.throwsA(IllegalStateException.class, context::nUsed).getMessage(), "Context is closed",
        "a closed context");
    session.close();
    model.close();
    Check.contains(Check.throwsA(IllegalStateException.class, model::info).getMessage(), "Model is closed",
        "a closed model");
    Check.throwsA(IllegalStateException.class, () -> new Context(model));
  }
}
