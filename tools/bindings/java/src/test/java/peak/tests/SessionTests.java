package peak.tests;

import java.io.File;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import peak.CacheType;
import peak.GenerateOptions;
import peak.GenerateResult;
import peak.Message;
import peak.LogLevel;
import peak.MessageState;
import peak.Model;
import peak.Peak;
import peak.Role;
import peak.SamplerParams;
import peak.Session;
import peak.SessionParams;
import peak.SessionStats;
import peak.Status;

/** Chat sessions: summaries, messages, saving and restoring, editing. */
public final class SessionTests {
  private static final String SYSTEM = "Lily and Tom play in the park.";

  /** A cache so small that a few turns drop messages and summarize them. */
  private static SessionParams smallParams() {
    return new SessionParams()
        .chatTemplate("raw")
        .systemPrompt(SYSTEM)
        .recentMax(96)
        .summaryMax(48)
        .triggerDiscard(40)
        .headroom(32)
        .summaryNCtx(256)
        .summaryMaxNewTokens(32)
        .nThreads(1)
        .sampler(SamplerParams.greedy());
  }

  private static String chat(Session session, String text) {
    StringBuilder answer = new StringBuilder();
    GenerateResult r = session.chat(text, new GenerateOptions().maxTokens(16), answer::append);
    Check.isTrue(r.nPromptTokens() > 0, "prompt tokens");
    return answer.toString();
  }

  private static void checkSameMessages(List<Message> expected, List<Message> actual, String what) {
    Check.equal(expected.size(), actual.size(), what + ": messages");
    for (int i = 0; i < expected.size(); ++i) {
      Check.equal(expected.get(i).role(), actual.get(i).role(), what + ": role of " + i);
      Check.equal(expected.get(i).state(), actual.get(i).state(), what + ": state of " + i);
      Check.equal(expected.get(i).text(), actual.get(i).text(), what + ": text of " + i);
    }
  }

  @Test
  public void summarizedConversationSurvivesSaveAndRestore() {
    File file = new File(Fixtures.scratch("session"), "summarized.pkss");
    String[] turns = new String[8];
    String[] answers = new String[turns.length];
    try (Model model = Model.load(Fixtures.stories());
         Session session = new Session(model, smallParams())) {
      for (int i = 0; i < turns.length; ++i) {
        turns[i] = "Tom found a red ball number " + (i + 1) + " under the big tree.";
        answers[i] = chat(session, turns[i]);
      }
      session.waitSummary();
      SessionStats stats = session.stats();
      Check.isTrue(stats.summaries() >= 1, "a summary was put in place: " + stats.summaries());
      Check.isTrue(stats.droppedTotal() > 0, "messages were dropped");
      Check.equal(8, stats.turns(), "turns");
      Check.isTrue(!session.summary().isEmpty(), "the summary's text");

      // The system prompt, then each turn's message and answer, dropped ones included.
      List<Message> messages = session.messages();
      Check.equal(1 + 2 * turns.length, messages.size(), "messages");
      Check.equal(Role.SYSTEM, messages.get(0).role(), "message 0's role");
      Check.equal(SYSTEM, messages.get(0).text(), "the system prompt");
      boolean summarized = false;
      for (int i = 0; i < turns.length; ++i) {
        Message user = messages.get(1 + 2 * i);
        Message assistant = messages.get(2 + 2 * i);
        Check.equal(Role.USER, user.role(), "role of user message " + i);
        Check.equal(turns[i], user.text(), "user message " + i);
        Check.equal(Role.ASSISTANT, assistant.role(), "role of answer " + i);
        Check.equal(answers[i], assistant.text(), "answer " + i + " as streamed");
        summarized |= user.state() == MessageState.SUMMARIZED;
      }
      Check.isTrue(summarized, "a message is covered by the summary");
      Check.equal(MessageState.IN_CONTEXT, messages.get(messages.size() - 1).state(), "the last answer's state");

      session.save(file.getPath(), true);
      try (Session restored = new Session(model, smallParams())) {
        restored.restore(file.getPath());
        checkSameMessages(messages, restored.messages(), "restored");
        Check.equal(session.summary(), restored.summary(), "restored summary");
        // Both go on alike: the restored cache is the saved one.
        String next = "Then it rained.";
        Check.equal(chat(session, next), chat(restored, next), "the next greedy answer");
      }
    }
  }

  @Test
  public void appendRegenerateAndEditLast() {
    try (Model model = Model.load(Fixtures.stories());
         Session session = new Session(model, smallParams().recentMax(512).headroom(64))) {
      session.append(Role.USER, "Tell me about the cat.");
      session.append(Role.ASSISTANT, "The cat was big and soft.");
      session.append(Role.USER, "What did the cat do?");
      Check.throwsPeak(Status.INVALID_ARGUMENT, "ends with a user message that has no answer", () -> chat(session, "Hello?"));

      StringBuilder first = new StringBuilder();
      session.regenerate(new GenerateOptions().maxTokens(12), first::append);
      StringBuilder again = new StringBuilder();
      session.regenerate(new GenerateOptions().maxTokens(12), again::append);
      Check.equal(first.toString(), again.toString(), "a greedy regeneration");
      Check.equal(5, session.messageCount(), "messages after regenerating");

      StringBuilder edited = new StringBuilder();
      session.editLast("Where did the cat go?", new GenerateOptions().maxTokens(12), edited::append);
      Check.equal("Where did the cat go?", session.message(3).text(), "the edited message");
      Check.equal(edited.toString(), session.message(4).text(), "the edited message's answer");

      session.setSampler(new SamplerParams().temperature(0.8f).seed(7));
      Check.throwsPeak(Status.INVALID_ARGUMENT, "top_p", () -> session.setSampler(new SamplerParams().topP(3)));
      Check.equal(5, session.messageCount(), "a refused sampler changes nothing");
      Check.contains(session.previewPrompt("And then?"), "And then?", "the preview");
      session.reset();
      Check.equal(1, session.messageCount(), "after a reset: the system prompt");
    }
  }

  /**
   * Sets the floats of the file's last cell's last V (stories260K: 8 heads of 8, the file's last
   * 256 bytes before its checksum) to 1.0 and makes the checksum, the FNV-1a of the payload after
   * the 16-byte header, right again.
   */
  private static void rewriteLastCell(File file) throws IOException {
    try (RandomAccessFile f = new RandomAccessFile(file, "rw")) {
      byte[] bytes = new byte[(int) f.length()];
      f.readFully(bytes);
      int end = bytes.length - 8;
      for (int at = end - 256; at < end; at += 4) {
        int one = Float.floatToIntBits(1.0f);
        for (int b = 0; b < 4; ++b) bytes[at + b] = (byte) (one >>> (8 * b));
      }
      long sum = 0xcbf29ce484222325L;
      for (int i = 16; i < end; ++i) sum = (sum ^ (bytes[i] & 0xff)) * 0x100000001b3L;
      for (int b = 0; b < 8; ++b) bytes[end + b] = (byte) (sum >>> (8 * b));
      f.seek(0);
      f.write(bytes);
    }
  }

  @Test
  public void verifiedRestoreDoesNotUseWrongCells() throws IOException {
    Check.equal(0L, new SessionParams().verifyKvCells(), "verifyKvCells by default");
    File file = new File(Fixtures.scratch("session"), "wrong cells.pkss");
    File plain = new File(Fixtures.scratch("session"), "no cells.pkss");
    SessionParams params = smallParams().cacheType(CacheType.F32, CacheType.F32);
    List<String> warnings = Collections.synchronizedList(new ArrayList<>());
    try (Model model = Model.load(Fixtures.stories())) {
      try (Session session = new Session(model, params)) {
        for (int i = 0; i < 3; ++i) chat(session, "Max liked to run in the sun.");
        session.save(file.getPath(), true);
        session.save(plain.getPath(), false);
      }
      rewriteLastCell(file);
      try (Session prefilled = new Session(model, params);
           Session checked = new Session(model, smallParams().cacheType(CacheType.F32, CacheType.F32).verifyKvCells(100000))) {
        prefilled.restore(plain.getPath());
        Peak.setLogger((level, message) -> {
          if (level == LogLevel.WARN) warnings.add(message);
        });
        try {
          checked.restore(file.getPath());
        } finally {
          Peak.setLogger(null);
        }
        Check.equal(1, warnings.size(), "warnings");
        Check.contains(warnings.get(0), "wrong cells.pkss: its KV cache differs from the cells computed again (layer 4 V",
                       "the warning");
        String next = "Then it rained.";
        Check.equal(chat(prefilled, next), chat(checked, next), "the next greedy answer");
      }
    }
  }

  @Test
  public void messagesKeepEveryUtf8Character() {
    // 2-, 3- and 4-byte characters, which modified UTF-8 would spell differently.
    String user = "Caf\u00e9 \u65e5\u672c \uD83D\uDE42 \uD834\uDD1E?";
    String answer = "Oui \u2014 \uD83C\uDF89!";
    File file = new File(Fixtures.scratch("session"), "utf8 \uD83D\uDE42.pkss");
    try (Model model = Model.load(Fixtures.stories());
         Session session = new Session(model, smallParams().recentMax(512).headroom(64))) {
      session.append(Role.USER, user);
      session.append(Role.ASSISTANT, answer);
      Check.equal(user, session.message(1).text(), "user message");
      Check.equal(answer, session.message(2).text(), "assistant message");
      session.save(file.getPath(), false);
      Check.isTrue(file.isFile(), "saved under a name with a 4-byte character");
      try (Session restored = new Session(model, smallParams().recentMax(512).headroom(64))) {
        restored.restore(file.getPath());
        Check.equal(user, restored.message(1).text(), "restored user message");
        Check.equal(answer, restored.message(2).text(), "restored assistant message");
      }
    }
  }

  @Test
  public void failedSummaryJobsAreCountedAndExplained() {
    try (Model model = Model.load(Fixtures.stories());
         Session session = new Session(model, smallParams().summaryNCtx(64).summaryMaxNewTokens(16))) {
      for (int i = 0; i < 20; ++i) chat(session, "Sue and Max played until the sky was dark.");
      session.waitSummary();
      SessionStats stats = session.stats();
      Check.isTrue(stats.summaryFailures() >= 1, "failed summary jobs: " + stats.summaryFailures());
      Check.equal(0, stats.summaries(), "summaries");
      Check.contains(session.summaryError(), "summary_n_ctx is 64, too small", "summary error");
    }
  }
}
