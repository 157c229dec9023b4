package peak.tests;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import peak.GenerateOptions;
import peak.LogLevel;
import peak.Model;
import peak.Peak;
import peak.SamplerParams;
import peak.Session;
import peak.SessionParams;

/** Peak.setLogger: peak's messages reach Java, from the caller's thread and from peak's own. */
public final class LogTests {
  private static final class Entry {
    final LogLevel level;
    final String message;
    final String thread;

    Entry(LogLevel level, String message) {
      this.level = level;
      this.message = message;
      this.thread = Thread.currentThread().getName();
    }
  }

  @Test
  public void messagesOfTheCallersThread() {
    List<Entry> entries = Collections.synchronizedList(new ArrayList<>());
    Peak.setLogLevel(LogLevel.INFO);
    Peak.setLogger((level, message) -> entries.add(new Entry(level, message)));
    try (Model model = Model.load(Fixtures.stories())) {
      Check.equal(512, model.info().nVocab(), "the model");
      Check.isTrue(!entries.isEmpty(), "the load said what it did");
      Entry first = entries.get(0);
      Check.equal(LogLevel.INFO, first.level, "level");
      Check.contains(first.message, "stories260K.gguf: llama", "message");
      Check.equal(Thread.currentThread().getName(), first.thread, "the loading thread");
    } finally {
      Peak.setLogger(null);
      Peak.setLogLevel(LogLevel.WARN);
    }
    int seen = entries.size();
    Model.load(Fixtures.stories()).close();
    Check.equal(seen, entries.size(), "no message after the logger was removed");
  }

  @Test
  public void messagesOfPeaksOwnThreads() {
    // A summary job that fails (its context too small) says so from the summary worker.
    List<Entry> entries = Collections.synchronizedList(new ArrayList<>());
    Peak.setLogLevel(LogLevel.INFO);
    Peak.setLogger((level, message) -> entries.add(new Entry(level, message)));
    try (Model model = Model.load(Fixtures.stories());
         Session session = new Session(model, new SessionParams().chatTemplate("raw").recentMax(96).summaryMax(48)
             .triggerDiscard(40).headroom(32).summaryNCtx(64).summaryMaxNewTokens(16).nThreads(1)
             .sampler(SamplerParams.greedy()))) {
      for (int i = 0; i < 20; ++i) {
        session.chat("Sue and Max played until the sky was dark.", new GenerateOptions().maxTokens(16), null);
      }
      session.waitSummary();
    } finally {
      Peak.setLogger(null);
      Peak.setLogLevel(LogLevel.WARN);
    }
    Entry failed = null;
    synchronized (entries) {
      for (Entry e : entries) {
        if (e.message.contains("job failed on the summary worker")) failed = e;
      }
    }
    Check.isTrue(failed != null, "the failed job was reported");
    Check.equal("peak", failed.thread, "reported on the worker, attached to the JVM for the call");
  }

  @Test
  public void aThrowingLoggerIsDropped() {
    Peak.setLogLevel(LogLevel.INFO);
    Peak.setLogger((level, message) -> {
      throw new IllegalStateException("a logger that throws");
    });
    try (Model model = Model.load(Fixtures.stories())) {
      Check.equal(512, model.info().nVocab(), "the load went on");
    } finally {
      Peak.setLogger(null);
      Peak.setLogLevel(LogLevel.WARN);
    }
  }
}
